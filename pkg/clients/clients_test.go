package clients

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	clientset "deployobject.dev/controller/pkg/generated/clientset/versioned"
	"deployobject.dev/controller/pkg/options"
)

// TestLeaderElectionClientIsItsOwn: the lease's client has its own rate
// limiter, so that the controller's requests never delay a renewal, and a
// request timeout shorter than the renew deadline, so that a stuck request
// leaves time to retry.
func TestLeaderElectionClientIsItsOwn(t *testing.T) {
	base := &rest.Config{Host: "https://api.example:6443", QPS: 200, Burst: 400, UserAgent: "deployobject-controller/test"}
	const renewDeadline = 10 * time.Second
	cfg := LeaderElection(base, renewDeadline)
	if cfg.Timeout <= 0 || cfg.Timeout >= renewDeadline {
		t.Errorf("request timeout %s, want more than 0 and less than the renew deadline %s", cfg.Timeout, renewDeadline)
	}
	if base.Timeout != 0 || base.RateLimiter != nil {
		t.Errorf("the controller's configuration was modified: timeout %s, rate limiter %v", base.Timeout, base.RateLimiter)
	}
	controllerClient, err := kubernetes.NewForConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	leaseClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if controllerClient.CoordinationV1().RESTClient().GetRateLimiter() == leaseClient.CoordinationV1().RESTClient().GetRateLimiter() {
		t.Error("the lease's client shares the controller's rate limiter")
	}
	if !strings.HasSuffix(cfg.UserAgent, "/leader-election") {
		t.Errorf("user agent %q does not name the leader election client", cfg.UserAgent)
	}
}

// TestContentTypes: clients of built-in kinds ask for and send what
// --kube-api-content-type says, and the DeployObject client JSON, which is
// all the API server serves for a custom resource.
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
			cfg := &rest.Config{Host: srv.URL}
			kube, err := kubernetes.NewForConfig(BuiltIn(cfg, contentType))
			if err != nil {
				t.Fatal(err)
			}
			client, err := clientset.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			_, _ = kube.AppsV1().Deployments("ns").Create(ctx, &appsv1.Deployment{}, metav1.CreateOptions{})
			_, _ = client.AppV1().DeployObjects("ns").UpdateStatus(ctx, &appv1.DeployObject{ObjectMeta: metav1.ObjectMeta{Name: "web"}}, metav1.UpdateOptions{})

			wantAccept := options.ContentTypeJSON + ", */*"
			if contentType == options.ContentTypeProtobuf {
				wantAccept = options.ContentTypeProtobuf + "," + options.ContentTypeJSON
			}
			want := map[string]string{
				"/apis/apps/v1/namespaces/ns/deployments":                              wantAccept + " | " + contentType,
				"/apis/app.deployobject.dev/v1/namespaces/ns/deployobjects/web/status": "application/json, */* | application/json",
			}
			mu.Lock()
			defer mu.Unlock()
			if !maps.Equal(want, accepts) {
				t.Errorf("Accept | Content-Type by path:\n got %q\nwant %q", accepts, want)
			}
		})
	}
}
