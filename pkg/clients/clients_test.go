package clients

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/flowcontrol"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/options"
)

// TestLeaderElectionClientIsItsOwn: the lease's client has its own rate
// limiter, so that the controller's requests never delay a renewal, and a
// request timeout shorter than the renew deadline, so that a stuck request
// leaves time to retry. The base configuration carries a rate limiter of
// its own: a client built from a configuration without one gets a fresh
// limiter whatever New does, which would prove nothing.
func TestLeaderElectionClientIsItsOwn(t *testing.T) {
	shared := flowcontrol.NewTokenBucketRateLimiter(200, 400)
	base := &rest.Config{Host: "https://api.example:6443", RateLimiter: shared, UserAgent: "deployobject-controller/test"}
	const renewDeadline = 10 * time.Second
	set, err := New(base, options.ContentTypeProtobuf, renewDeadline)
	if err != nil {
		t.Fatal(err)
	}
	if base.Timeout != 0 || base.RateLimiter != shared {
		t.Errorf("the controller's configuration was modified: timeout %s, rate limiter %v", base.Timeout, base.RateLimiter)
	}
	if got := set.Kube.CoordinationV1().RESTClient().GetRateLimiter(); got != shared {
		t.Errorf("the controller's client has rate limiter %v, want the configuration's", got)
	}
	if set.Lease.CoordinationV1().RESTClient().GetRateLimiter() == shared {
		t.Error("the lease's client shares the controller's rate limiter")
	}
	cfg := LeaderElection(base, renewDeadline)
	if cfg.Timeout <= 0 || cfg.Timeout >= renewDeadline {
		t.Errorf("request timeout %s, want more than 0 and less than the renew deadline %s", cfg.Timeout, renewDeadline)
	}
	if !strings.HasSuffix(cfg.UserAgent, "/leader-election") {
		t.Errorf("user agent %q does not name the leader election client", cfg.UserAgent)
	}
}

// TestContentTypes: the clients New builds, which main uses, ask for and
// send for the built-in kinds what --kube-api-content-type says, and for
// DeployObjects and HTTPRoutes JSON, which is all the API server serves
// for a custom resource.
func TestContentTypes(t *testing.T) {
	for _, contentType := range []string{options.ContentTypeProtobuf, options.ContentTypeJSON} {
		t.Run(contentType, func(t *testing.T) {
			accepts := map[string]string{}
			var mu sync.Mutex
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				accepts[r.URL.Path] = r.Header.Get("Accept") + " | " + r.Header.Get("Content-Type")
				mu.Unlock()
				http.Error(w, "{}", http.StatusTeapot)
			}))
			defer srv.Close()
			set, err := New(&rest.Config{Host: srv.URL}, contentType, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			_, _ = set.Kube.AppsV1().Deployments("ns").Create(ctx, &appsv1.Deployment{}, metav1.CreateOptions{})
			_, _ = set.Lease.CoordinationV1().Leases("ns").Create(ctx, &coordinationv1.Lease{}, metav1.CreateOptions{})
			_, _ = set.DeployObjects.AppV1().DeployObjects("ns").UpdateStatus(ctx, &appv1.DeployObject{ObjectMeta: metav1.ObjectMeta{Name: "web"}}, metav1.UpdateOptions{})
			_, _ = set.Gateway.GatewayV1().HTTPRoutes("ns").Create(ctx, &gatewayv1.HTTPRoute{}, metav1.CreateOptions{})

			wantAccept := options.ContentTypeJSON + ", */*"
			if contentType == options.ContentTypeProtobuf {
				wantAccept = options.ContentTypeProtobuf + "," + options.ContentTypeJSON
			}
			want := map[string]string{
				"/apis/apps/v1/namespaces/ns/deployments":                              wantAccept + " | " + contentType,
				"/apis/coordination.k8s.io/v1/namespaces/ns/leases":                    wantAccept + " | " + contentType,
				"/apis/app.deployobject.dev/v1/namespaces/ns/deployobjects/web/status": "application/json, */* | application/json",
				"/apis/gateway.networking.k8s.io/v1/namespaces/ns/httproutes":          "application/json, */* | application/json",
			}
			mu.Lock()
			defer mu.Unlock()
			if !maps.Equal(want, accepts) {
				t.Errorf("Accept | Content-Type by path:\n got %q\nwant %q", accepts, want)
			}
		})
	}
}

// TestConfigFindsTheClusterAsControllerRuntimeDoes: --kubeconfig, then the
// kubeconfigs $KUBECONFIG lists, then the in-cluster configuration, then
// ~/.kube/config; --master overrides a kubeconfig's server.
func TestConfigFindsTheClusterAsControllerRuntimeDoes(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := func(name, server string) string {
		path := filepath.Join(dir, name)
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: server}
		cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
		cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
		cfg.CurrentContext = "c"
		if err := clientcmd.WriteToFile(*cfg, path); err != nil {
			t.Fatal(err)
		}
		return path
	}
	flag, env, home := kubeconfig("flag", "https://flag"), kubeconfig("env", "https://env"), kubeconfig("home", "https://home")
	inPod := func() (*rest.Config, error) { return &rest.Config{Host: "https://in-cluster"}, nil }
	notInPod := func() (*rest.Config, error) { return nil, rest.ErrNotInCluster }
	for _, tc := range []struct {
		name                   string
		kubeconfig, master     string
		envPaths, home         string
		inCluster              func() (*rest.Config, error)
		wantHost               string
		wantInCluster, wantErr bool
	}{
		{name: "--kubeconfig first", kubeconfig: flag, envPaths: env, home: home, inCluster: inPod, wantHost: "https://flag"},
		{name: "then $KUBECONFIG", envPaths: filepath.Join(dir, "missing") + string(filepath.ListSeparator) + env, home: home, inCluster: inPod, wantHost: "https://env"},
		{name: "then in a pod", home: home, inCluster: inPod, wantHost: "https://in-cluster", wantInCluster: true},
		{name: "then ~/.kube/config", home: home, inCluster: notInPod, wantHost: "https://home"},
		{name: "nothing", home: filepath.Join(dir, "missing"), inCluster: notInPod, wantErr: true},
		{name: "--master overrides the server", kubeconfig: flag, master: "https://master", inCluster: inPod, wantHost: "https://master"},
		{name: "--master alone", master: "https://master", home: filepath.Join(dir, "missing"), inCluster: inPod, wantHost: "https://master"},
		{name: "a broken pod", home: home, inCluster: func() (*rest.Config, error) { return nil, errors.New("no token") }, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, inCluster, err := config(tc.kubeconfig, tc.master, tc.envPaths, tc.inCluster, tc.home)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("config took %s, want an error", cfg.Host)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != tc.wantHost || inCluster != tc.wantInCluster {
				t.Errorf("config = %s (in cluster: %v), want %s (%v)", cfg.Host, inCluster, tc.wantHost, tc.wantInCluster)
			}
		})
	}
}
