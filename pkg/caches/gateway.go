package caches

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
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
// exists only once the cluster serves its kind. Without the Gateway API
// CRDs, an informer for them could never sync and would hold back every
// other sync; instead the controller starts it when discovery first shows
// the CRDs, without a restart.
type GatewayRoutes struct {
	Client    gatewayclient.Interface
	Discovery discovery.DiscoveryInterface
	// Informer builds the HTTPRoute informer, GRPCInformer the GRPCRoute
	// one, each with its transform.
	Informer     func() (cache.SharedIndexInformer, error)
	GRPCInformer func() (cache.SharedIndexInformer, error)
	// Recheck is GatewayAPIRecheck, or shorter in tests.
	Recheck time.Duration

	mu         sync.RWMutex
	Lister     gatewaylisters.HTTPRouteLister
	GRPCLister gatewaylisters.GRPCRouteLister
	// http and grpc follow the two informers; made by kinds.
	http, grpc *routeKind
	once       sync.Once
	// decided: discovery has answered, and the cache of every kind the
	// cluster serves has synced. Until then syncs wait (see HasSynced): a
	// DeployObject synced before the cache of a cluster that serves its
	// route would be reported GatewayAPIUnavailable for a moment at every
	// restart.
	decided atomic.Bool
}

// routeKind is what GatewayRoutes follows of one kind of route.
type routeKind struct {
	resource, kind string
	build          func() (cache.SharedIndexInformer, error)
	// set makes the kind's lister read indexer, or takes it away (nil);
	// with mu held.
	set    func(indexer cache.Indexer)
	listed func() bool
	inf    cache.SharedIndexInformer
	// listedVersion is the informer's LastSyncResourceVersion, and lostAt
	// its value when the lister was withdrawn.
	listedVersion func() string
	lostAt        string
	reported      bool
}

// kinds are the two route kinds, made once.
func (g *GatewayRoutes) kinds() (*routeKind, *routeKind) {
	g.once.Do(func() {
		g.http = &routeKind{resource: "httproutes", kind: children.KindHTTPRoute, build: g.Informer,
			set: func(i cache.Indexer) {
				g.Lister = nil
				if i != nil {
					g.Lister = gatewaylisters.NewHTTPRouteLister(i)
				}
			},
			listed: func() bool { return g.Lister != nil }}
		g.grpc = &routeKind{resource: "grpcroutes", kind: children.KindGRPCRoute, build: g.GRPCInformer,
			set: func(i cache.Indexer) {
				g.GRPCLister = nil
				if i != nil {
					g.GRPCLister = gatewaylisters.NewGRPCRouteLister(i)
				}
			},
			listed: func() bool { return g.GRPCLister != nil }}
	})
	return g.http, g.grpc
}

// HasSynced reports whether syncs may start: whether the cluster serves
// HTTPRoutes and GRPCRoutes is known, and the caches of those it serves
// have synced.
func (g *GatewayRoutes) HasSynced() bool {
	return g == nil || g.decided.Load()
}

// Routes is the HTTPRoute lister, or nil while the cluster does not serve
// HTTPRoutes or the cache has not synced yet.
func (g *GatewayRoutes) Routes() gatewaylisters.HTTPRouteLister {
	if g == nil {
		return nil
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.Lister
}

// GRPCRoutes is the GRPCRoute lister, or nil while the cluster does not
// serve GRPCRoutes or the cache has not synced yet.
func (g *GatewayRoutes) GRPCRoutes() gatewaylisters.GRPCRouteLister {
	if g == nil {
		return nil
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.GRPCLister
}

// served asks discovery which of the route resources the cluster serves.
func (g *GatewayRoutes) served() (map[string]bool, error) {
	list, err := g.Discovery.ServerResourcesForGroupVersion(children.GatewayAPIGroupVersion.String())
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discovering %s: %w", children.GatewayAPIGroupVersion, err)
	}
	served := map[string]bool{}
	for _, r := range list.APIResources {
		served[r.Name] = true
	}
	return served, nil
}

// Run follows whether the cluster serves HTTPRoutes and GRPCRoutes, asking
// discovery every Recheck, until ctx ends. Once it serves a kind, Run
// starts its informer with handler, makes its lister available once it
// has synced, and calls changed. Once it no longer does (the Gateway API
// CRDs removed, or Lost reports a write answered as if), the lister is
// withdrawn and changed called again; the informer keeps running, its
// lists failing until the CRDs are back, and the lister returns once
// discovery shows the kind again and the informer has listed anew.
func (g *GatewayRoutes) Run(ctx context.Context, handler cache.ResourceEventHandler, changed func()) {
	logger := klog.FromContext(ctx)
	httpRoutes, grpcRoutes := g.kinds()
	_ = wait.PollUntilContextCancel(ctx, g.Recheck, true, func(context.Context) (bool, error) {
		served, err := g.served()
		if err != nil {
			logger.V(2).Info("Could not discover the Gateway API; asking again", "err", err, "in", g.Recheck)
			return false, nil
		}
		anyChange := false
		for _, k := range []*routeKind{httpRoutes, grpcRoutes} {
			change, err := g.step(ctx, k, served[k.resource], handler)
			if err != nil {
				logger.Error(err, "Starting a Gateway API route informer", "kind", k.kind)
				return true, nil
			}
			if ctx.Err() != nil {
				return true, nil
			}
			anyChange = anyChange || change
		}
		g.decided.Store(true)
		if anyChange {
			changed()
		}
		return false, nil
	})
}

// step brings k in line with whether the cluster serves it, and reports
// whether its lister came or went.
func (g *GatewayRoutes) step(ctx context.Context, k *routeKind, served bool, handler cache.ResourceEventHandler) (bool, error) {
	logger := klog.FromContext(ctx).WithValues("kind", k.kind, "groupVersion", children.GatewayAPIGroupVersion)
	// A kind without an informer to build is followed as if not served.
	served = served && k.build != nil
	listed := g.listed(k)
	switch {
	case !served && listed:
		g.withdraw(k)
		logger.Info("The cluster no longer serves this Gateway API route; routes with parentRefs wait for it again")
		return true, nil
	case !served && !k.reported:
		logger.Info("The cluster does not serve this Gateway API route; routes with parentRefs wait for it", "recheck", g.Recheck)
		k.reported = true
	case served && k.inf == nil:
		inf, err := g.start(ctx, k, handler)
		if err != nil {
			return false, err
		}
		k.inf = inf
		if !cache.WaitForNamedCacheSyncWithContext(ctx, inf.HasSynced) {
			return false, nil
		}
		g.offer(k)
		logger.Info("Watching this Gateway API route")
		return true, nil
	case served && !listed && g.relisted(k):
		g.offer(k)
		k.reported = false
		logger.Info("Watching this Gateway API route again")
		return true, nil
	}
	return false, nil
}

// start builds k's informer with handler and runs it until ctx ends.
func (g *GatewayRoutes) start(ctx context.Context, k *routeKind, handler cache.ResourceEventHandler) (cache.SharedIndexInformer, error) {
	inf, err := k.build()
	if err != nil {
		return nil, err
	}
	logger := klog.FromContext(ctx)
	if _, err := inf.AddEventHandlerWithOptions(handler, cache.HandlerOptions{Logger: &logger}); err != nil {
		return nil, fmt.Errorf("adding the %s event handler: %w", k.kind, err)
	}
	go inf.RunWithContext(ctx)
	return inf, nil
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
		g.lose(k)
	}
}

// LostGRPC is Lost for GRPCRoutes.
func (g *GatewayRoutes) LostGRPC() {
	if g != nil {
		_, k := g.kinds()
		g.lose(k)
	}
}

func (g *GatewayRoutes) lose(k *routeKind) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if k.listed() && k.listedVersion != nil {
		k.lostAt = k.listedVersion()
	}
	k.set(nil)
}

// listed reports whether k's lister is offered.
func (g *GatewayRoutes) listed(k *routeKind) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return k.listed()
}

// withdraw takes k's lister away, noting the version its informer had
// listed.
func (g *GatewayRoutes) withdraw(k *routeKind) {
	g.mu.Lock()
	defer g.mu.Unlock()
	k.set(nil)
	k.lostAt = k.inf.LastSyncResourceVersion()
}

// offer makes k's informer's lister the one syncs read.
func (g *GatewayRoutes) offer(k *routeKind) {
	g.mu.Lock()
	defer g.mu.Unlock()
	k.set(k.inf.GetIndexer())
	k.listedVersion = k.inf.LastSyncResourceVersion
	k.lostAt = ""
}

// relisted reports whether k's informer has listed since the lister was
// withdrawn, so that its cache no longer holds the routes the CRDs took
// with them.
func (g *GatewayRoutes) relisted(k *routeKind) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return k.lostAt == "" || k.inf.LastSyncResourceVersion() != k.lostAt
}
