package caches

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	discoveryfake "k8s.io/client-go/discovery/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"deployobject.dev/controller/pkg/metrics"
	"deployobject.dev/controller/pkg/testobjects"
)

func TestGatewayAPIServed(t *testing.T) {
	for _, tc := range []struct {
		name      string
		resources []*metav1.APIResourceList
		want      bool
	}{
		{"no Gateway API", nil, false},
		{"Gateway API without HTTPRoutes", []*metav1.APIResourceList{{GroupVersion: "gateway.networking.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "gateways"}}}}, false},
		{"HTTPRoutes served", []*metav1.APIResourceList{{GroupVersion: "gateway.networking.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "gateways"}, {Name: "httproutes"}}}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &GatewayRoutes{Discovery: &discoveryfake.FakeDiscovery{Fake: &core.Fake{Resources: tc.resources}}}
			got, err := g.served()
			if err != nil || got != tc.want {
				t.Errorf("served() = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// switchableDiscovery serves HTTPRoutes once served is set, as a cluster
// does once the Gateway API CRDs are installed.
type switchableDiscovery struct {
	discovery.DiscoveryInterface
	served atomic.Bool
}

func (d *switchableDiscovery) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	if !d.served.Load() {
		return nil, apierrors.NewNotFound(schema.GroupResource{}, gv)
	}
	return &metav1.APIResourceList{GroupVersion: gv, APIResources: []metav1.APIResource{{Name: "httproutes"}}}, nil
}

// TestGatewayRoutesStartWhenServed: the controller may start syncing as
// soon as discovery says there are no HTTPRoutes; once they are served,
// without a restart, their cache is started and filled, and the
// DeployObjects that wait for it are synced.
func TestGatewayRoutesStartWhenServed(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	disc := &switchableDiscovery{}
	route := testobjects.LiveHTTPRoute(testobjects.NewDeployObject(testobjects.WithHTTPRoute))
	client := gatewayfake.NewClientset(route)
	name, err := cache.NewInformerName("test-gateway-routes")
	if err != nil {
		t.Fatal(err)
	}
	defer name.Release()
	g := &GatewayRoutes{Client: client, Discovery: disc, Recheck: 10 * time.Millisecond, Informer: func() (cache.SharedIndexInformer, error) {
		return NewHTTPRouteInformer(client, metav1.NamespaceAll, NamedInformers{name, metrics.NewInformerMetrics(prometheus.NewRegistry())})
	}}
	synced := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.Run(ctx, cache.ResourceEventHandlerFuncs{}, func() { close(synced) })
	}()
	defer func() { cancel(); <-done }()

	if err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) { return g.HasSynced(), nil }); err != nil {
		t.Fatal("syncs never allowed without the Gateway API")
	}
	if g.Routes() != nil {
		t.Fatal("an HTTPRoute cache without the Gateway API")
	}
	disc.served.Store(true)
	select {
	case <-synced:
	case <-time.After(5 * time.Second):
		t.Fatal("the HTTPRoute cache was not started once HTTPRoutes are served")
	}
	got, err := g.Routes().HTTPRoutes(route.Namespace).Get(route.Name)
	if err != nil || got.UID != route.UID {
		t.Errorf("cached HTTPRoute = %v, %v", got, err)
	}
}
