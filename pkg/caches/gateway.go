package caches

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/cache"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gatewaylisters "sigs.k8s.io/gateway-api/pkg/client/listers/apis/v1"

	"deployobject.dev/controller/pkg/children"
)

// GatewayAPIRecheck is how often the controller asks discovery whether the
// cluster serves HTTPRoutes and GRPCRoutes, until it does: one small GET,
// for clusters where the Gateway API CRDs are installed after the
// controller started. Tests set GatewayRoutes.Recheck instead.
const GatewayAPIRecheck = 20 * time.Second

// GatewayRoutes are the HTTPRoute and GRPCRoute caches, each of which
// exists only once the cluster serves its kind (see discovered).
type GatewayRoutes struct {
	Client    gatewayclient.Interface
	Discovery discovery.DiscoveryInterface
	// Informer builds the HTTPRoute informer, GRPCInformer the GRPCRoute
	// one, each with its transform.
	Informer     func() (cache.SharedIndexInformer, error)
	GRPCInformer func() (cache.SharedIndexInformer, error)
	// Recheck is GatewayAPIRecheck, or shorter in tests.
	Recheck time.Duration

	// Lister and GRPCLister are read and set with d.mu held, except by
	// tests that set them before any sync.
	Lister     gatewaylisters.HTTPRouteLister
	GRPCLister gatewaylisters.GRPCRouteLister
	// http and grpc follow the two informers; made by kinds.
	http, grpc *discoveredKind
	once       sync.Once
	d          discovered
}

// kinds are the two route kinds, made once, with the discovery that
// follows them.
func (g *GatewayRoutes) kinds() (*discoveredKind, *discoveredKind) {
	g.once.Do(func() {
		g.http = &discoveredKind{resource: "httproutes", kind: children.KindHTTPRoute, build: g.Informer,
			set: func(i cache.Indexer) {
				g.Lister = nil
				if i != nil {
					g.Lister = gatewaylisters.NewHTTPRouteLister(i)
				}
			},
			listed: func() bool { return g.Lister != nil }}
		g.grpc = &discoveredKind{resource: "grpcroutes", kind: children.KindGRPCRoute, build: g.GRPCInformer,
			set: func(i cache.Indexer) {
				g.GRPCLister = nil
				if i != nil {
					g.GRPCLister = gatewaylisters.NewGRPCRouteLister(i)
				}
			},
			listed: func() bool { return g.GRPCLister != nil }}
		g.d.groupVersion, g.d.discovery, g.d.recheck = children.GatewayAPIGroupVersion, g.Discovery, g.Recheck
		g.d.kinds = []*discoveredKind{g.http, g.grpc}
	})
	return g.http, g.grpc
}

// HasSynced reports whether syncs may start: whether the cluster serves
// HTTPRoutes and GRPCRoutes is known, and the caches of those it serves
// have synced.
func (g *GatewayRoutes) HasSynced() bool {
	return g == nil || g.d.hasSynced()
}

// Routes is the HTTPRoute lister, or nil while the cluster does not serve
// HTTPRoutes or the cache has not synced yet.
func (g *GatewayRoutes) Routes() gatewaylisters.HTTPRouteLister {
	if g == nil {
		return nil
	}
	g.d.mu.RLock()
	defer g.d.mu.RUnlock()
	return g.Lister
}

// GRPCRoutes is the GRPCRoute lister, or nil while the cluster does not
// serve GRPCRoutes or the cache has not synced yet.
func (g *GatewayRoutes) GRPCRoutes() gatewaylisters.GRPCRouteLister {
	if g == nil {
		return nil
	}
	g.d.mu.RLock()
	defer g.d.mu.RUnlock()
	return g.GRPCLister
}

// served asks discovery which of the route resources the cluster serves.
func (g *GatewayRoutes) served() (map[string]bool, error) {
	g.kinds()
	return g.d.served()
}

// Run follows whether the cluster serves HTTPRoutes and GRPCRoutes, asking
// discovery every Recheck, until ctx ends, starting and withdrawing their
// caches (see discovered.run).
func (g *GatewayRoutes) Run(ctx context.Context, handler cache.ResourceEventHandler, changed func()) {
	g.kinds()
	g.d.run(ctx, handler, changed)
}

// Lost reports that a write of an HTTPRoute was answered as if the cluster
// did not serve them (404 for the resource: the Gateway API CRDs removed).
// The lister is withdrawn at once, so that syncs report
// GatewayAPIUnavailable rather than fail against a stale cache; Run offers
// it again once discovery shows HTTPRoutes and the informer has listed
// them anew.
func (g *GatewayRoutes) Lost() {
	if g != nil {
		k, _ := g.kinds()
		g.d.lose(k)
	}
}

// LostGRPC is Lost for GRPCRoutes.
func (g *GatewayRoutes) LostGRPC() {
	if g != nil {
		_, k := g.kinds()
		g.d.lose(k)
	}
}
