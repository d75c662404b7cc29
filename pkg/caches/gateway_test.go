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

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/metrics"
	"deployobject.dev/controller/pkg/testobjects"
)

func TestGatewayAPIServed(t *testing.T) {
	for _, tc := range []struct {
		name       string
		resources  []*metav1.APIResourceList
		http, grpc bool
	}{
		{"no Gateway API", nil, false, false},
		{"Gateway API without routes", []*metav1.APIResourceList{{GroupVersion: "gateway.networking.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "gateways"}}}}, false, false},
		{"HTTPRoutes served", []*metav1.APIResourceList{{GroupVersion: "gateway.networking.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "gateways"}, {Name: "httproutes"}}}}, true, false},
		{"both served", []*metav1.APIResourceList{{GroupVersion: "gateway.networking.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "grpcroutes"}, {Name: "httproutes"}}}}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &GatewayRoutes{Discovery: &discoveryfake.FakeDiscovery{Fake: &core.Fake{Resources: tc.resources}}}
			got, err := g.served()
			if err != nil || got["httproutes"] != tc.http || got["grpcroutes"] != tc.grpc {
				t.Errorf("served() = %v, %v; want httproutes %v, grpcroutes %v", got, err, tc.http, tc.grpc)
			}
		})
	}
}

// switchableDiscovery serves HTTPRoutes and GRPCRoutes (or resources, when
// set) once served is set, as a cluster does once the CRDs are installed.
type switchableDiscovery struct {
	discovery.DiscoveryInterface
	served    atomic.Bool
	resources []string
}

func (d *switchableDiscovery) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	if !d.served.Load() {
		return nil, apierrors.NewNotFound(schema.GroupResource{}, gv)
	}
	names := d.resources
	if names == nil {
		names = []string{"httproutes", "grpcroutes"}
	}
	list := &metav1.APIResourceList{GroupVersion: gv}
	for _, n := range names {
		list.APIResources = append(list.APIResources, metav1.APIResource{Name: n})
	}
	return list, nil
}

// testGatewayRoutes is a GatewayRoutes over client and disc that asks
// discovery every 10 ms.
func testGatewayRoutes(t *testing.T, informerName string, client *gatewayfake.Clientset, disc discovery.DiscoveryInterface) *GatewayRoutes {
	t.Helper()
	name, err := cache.NewInformerName(informerName)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(name.Release)
	id := NamedInformers{name, metrics.NewInformerMetrics(prometheus.NewRegistry())}
	return &GatewayRoutes{Client: client, Discovery: disc, Recheck: 10 * time.Millisecond,
		Informer: func() (cache.SharedIndexInformer, error) {
			return NewHTTPRouteInformer(client, metav1.NamespaceAll, id)
		},
		GRPCInformer: func() (cache.SharedIndexInformer, error) {
			return NewGRPCRouteInformer(client, metav1.NamespaceAll, id)
		},
	}
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
	grpcRoute := testobjects.LiveGRPCRoute(testobjects.NewDeployObject(testobjects.WithGRPCRoute, func(d *appv1.DeployObject) { d.Name = "rpc" }))
	client := gatewayfake.NewClientset(route, grpcRoute)
	g := testGatewayRoutes(t, "test-gateway-routes", client, disc)
	synced := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		once := false
		g.Run(ctx, cache.ResourceEventHandlerFuncs{}, func() {
			if !once {
				once = true
				close(synced)
			}
		})
	}()
	defer func() { cancel(); <-done }()

	if err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) { return g.HasSynced(), nil }); err != nil {
		t.Fatal("syncs never allowed without the Gateway API")
	}
	if g.Routes() != nil || g.GRPCRoutes() != nil {
		t.Fatal("a route cache without the Gateway API")
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
	gotGRPC, err := g.GRPCRoutes().GRPCRoutes(grpcRoute.Namespace).Get(grpcRoute.Name)
	if err != nil || gotGRPC.UID != grpcRoute.UID {
		t.Errorf("cached GRPCRoute = %v, %v", gotGRPC, err)
	}
}

// TestGatewayRoutesFollowRemoval: removing the Gateway API CRDs while the
// controller runs withdraws the HTTPRoute cache, so that syncs report
// GatewayAPIUnavailable instead of writing against a cache of routes that
// no longer exist; installing them again brings it back. A write answered
// with 404 (Lost) withdraws it at once.
func TestGatewayRoutesFollowRemoval(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	disc := &switchableDiscovery{}
	disc.served.Store(true)
	client := gatewayfake.NewClientset(testobjects.LiveHTTPRoute(testobjects.NewDeployObject(testobjects.WithHTTPRoute)))
	g := testGatewayRoutes(t, "test-gateway-removal", client, disc)
	var changes atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.Run(ctx, cache.ResourceEventHandlerFuncs{}, func() { changes.Add(1) })
	}()
	defer func() { cancel(); <-done }()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) { return cond(), nil }); err != nil {
			t.Fatalf("%s: not within 5s", what)
		}
	}
	waitFor("the caches offered", func() bool { return g.Routes() != nil && g.GRPCRoutes() != nil && changes.Load() == 1 })
	if !g.HasSynced() {
		t.Fatal("a cluster serving HTTPRoutes from the start holds back the syncs after their cache synced")
	}

	disc.served.Store(false)
	waitFor("the caches withdrawn once discovery no longer shows the routes", func() bool { return g.Routes() == nil && g.GRPCRoutes() == nil && changes.Load() == 2 })
	// Back: the informer lists them again (a new resourceVersion) before its
	// cache is offered.
	disc.served.Store(true)
	if _, err := client.GatewayV1().HTTPRoutes("apps").Create(ctx, testobjects.LiveHTTPRoute(testobjects.NewDeployObject(func(d *appv1.DeployObject) {
		testobjects.WithHTTPRoute(d)
		d.Name = "second"
	})), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.GatewayV1().GRPCRoutes("apps").Create(ctx, testobjects.LiveGRPCRoute(testobjects.NewDeployObject(testobjects.WithGRPCRoute)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Each kind comes back once its informer has listed anew, in the same
	// poll or in two: changed is called once or twice.
	waitFor("the caches offered again", func() bool { return g.Routes() != nil && g.GRPCRoutes() != nil && changes.Load() >= 3 })

	g.Lost()
	if g.Routes() != nil || g.GRPCRoutes() == nil {
		t.Error("after an HTTPRoute write was answered 404, the HTTPRoute cache is still offered, or the GRPCRoute one is not")
	}
	g.LostGRPC()
	if g.GRPCRoutes() != nil {
		t.Error("the GRPCRoute cache still offered after a write was answered 404")
	}
}
