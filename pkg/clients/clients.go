package clients

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/flowcontrol"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	clientset "deployobject.dev/controller/pkg/generated/clientset/versioned"
	"deployobject.dev/controller/pkg/options"
)

// Set is the controller's clients of the API server.
type Set struct {
	// Kube reads and writes the built-in kinds, in the content type of
	// --kube-api-content-type.
	Kube kubernetes.Interface
	// DeployObjects reads DeployObjects and writes their status, in JSON:
	// the API server has no protobuf form of a custom resource.
	DeployObjects clientset.Interface
	// Gateway reads and writes HTTPRoutes, in JSON likewise.
	Gateway gatewayclient.Interface
	// Dynamic reads and writes prometheus-operator's ServiceMonitors and
	// PodMonitors as unstructured objects, in JSON likewise.
	Dynamic dynamic.Interface
	// Lease renews the leader lease, with a rate limit and a timeout of
	// its own, so that a busy reconcile loop cannot delay a renewal.
	Lease kubernetes.Interface
}

// New builds the controller's clients from cfg: the built-in kinds' speak
// contentType, and the lease's gives up a request after half of
// renewDeadline.
func New(cfg *rest.Config, contentType string, renewDeadline time.Duration) (*Set, error) {
	kube, err := kubernetes.NewForConfig(BuiltIn(cfg, contentType))
	if err != nil {
		return nil, fmt.Errorf("creating Kubernetes client: %w", err)
	}
	dobj, err := clientset.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating DeployObject client: %w", err)
	}
	gateway, err := gatewayclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating Gateway API client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the dynamic client: %w", err)
	}
	lease, err := kubernetes.NewForConfig(BuiltIn(LeaderElection(cfg, renewDeadline), contentType))
	if err != nil {
		return nil, fmt.Errorf("creating the leader election client: %w", err)
	}
	return &Set{Kube: kube, DeployObjects: dobj, Gateway: gateway, Dynamic: dyn, Lease: lease}, nil
}

// BuiltIn is cfg for clients of built-in kinds, which speak
// contentType. The content type is set even when it is protobuf, which
// client-go's generated clients would pick by themselves: an explicit
// JSON would otherwise be the only way the flag showed, and the choice
// would depend on client-go's version. Protobuf answers still fall back to
// JSON for a kind that has no protobuf form.
func BuiltIn(cfg *rest.Config, contentType string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.ContentType = contentType
	if contentType == options.ContentTypeProtobuf {
		c.AcceptContentTypes = options.ContentTypeProtobuf + "," + options.ContentTypeJSON
	}
	return c
}

// Dedicated is cfg for a client of its own: requests of the
// controller's clients never hold it back, and each of its requests gives
// up after timeout.
func Dedicated(cfg *rest.Config, name string, timeout time.Duration) *rest.Config {
	c := rest.CopyConfig(cfg)
	// client-go's default limits are plenty for a few requests per second.
	c.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(rest.DefaultQPS, rest.DefaultBurst)
	c.Timeout = timeout
	return rest.AddUserAgent(c, name)
}

// LeaderElection is the configuration of the lease's client. A request
// gives up after half the renew deadline, so that one request stuck on a
// dead connection leaves time to retry before the lease is given up.
func LeaderElection(cfg *rest.Config, renewDeadline time.Duration) *rest.Config {
	return Dedicated(cfg, "leader-election", renewDeadline/2)
}

// Config finds the cluster as controller-runtime does: the
// kubeconfig at kubeconfig; else those $KUBECONFIG lists; else, in a pod,
// the in-cluster configuration; else ~/.kube/config. master, when set,
// overrides the server of a kubeconfig. inCluster reports that the
// in-cluster configuration was taken.
func Config(kubeconfig, master string) (cfg *rest.Config, inCluster bool, err error) {
	return config(kubeconfig, master, os.Getenv(clientcmd.RecommendedConfigPathEnvVar), rest.InClusterConfig, clientcmd.RecommendedHomeFile)
}

func config(kubeconfig, master, envPaths string, inClusterConfig func() (*rest.Config, error), home string) (*rest.Config, bool, error) {
	load := func(rules *clientcmd.ClientConfigLoadingRules) (*rest.Config, bool, error) {
		overrides := &clientcmd.ConfigOverrides{ClusterInfo: clientcmdapi.Cluster{Server: master}}
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
		if err != nil {
			return nil, false, fmt.Errorf("building client configuration: %w", err)
		}
		return cfg, false, nil
	}
	switch {
	case kubeconfig != "":
		return load(&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig})
	case envPaths != "":
		return load(&clientcmd.ClientConfigLoadingRules{Precedence: filepath.SplitList(envPaths)})
	case master == "":
		// In a pod; the in-cluster configuration is read directly, which
		// clientcmd would do too, with a warning on every start.
		cfg, err := inClusterConfig()
		if err == nil {
			return cfg, true, nil
		}
		if !errors.Is(err, rest.ErrNotInCluster) {
			return nil, false, fmt.Errorf("reading the in-cluster configuration: %w", err)
		}
	}
	if _, err := os.Stat(home); err != nil && master == "" {
		return nil, false, fmt.Errorf("no cluster to connect to: give --kubeconfig, set $%s, run in a pod, or write %s", clientcmd.RecommendedConfigPathEnvVar, home)
	}
	return load(&clientcmd.ClientConfigLoadingRules{Precedence: []string{home}})
}
