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
// cluster serves HTTPRoutes, until it does: one small GET, for clusters
// where the Gateway API CRDs are installed after the controller started.
// Tests set GatewayRoutes.recheck instead.
const GatewayAPIRecheck = 20 * time.Second

// GatewayRoutes is the HTTPRoute cache, which exists only once the cluster
// serves HTTPRoutes. Without the Gateway API CRDs, an informer for them
// could never sync and would hold back every other sync; instead the
// controller starts it when discovery first shows the CRDs, without a
// restart.
type GatewayRoutes struct {
	Client    gatewayclient.Interface
	Discovery discovery.DiscoveryInterface
	// informer builds the HTTPRoute informer, with its transform.
	Informer func() (cache.SharedIndexInformer, error)
	// recheck is GatewayAPIRecheck, or shorter in tests.
	Recheck time.Duration

	mu     sync.RWMutex
	Lister gatewaylisters.HTTPRouteLister
	// listedVersion is the informer's LastSyncResourceVersion, and lostAt
	// its value when the lister was withdrawn.
	listedVersion func() string
	lostAt        string
	// decided: discovery has answered that HTTPRoutes are not served, or
	// they are and their cache has synced. Until then syncs wait (see
	// hasSynced): a DeployObject synced before the cache of a cluster that
	// serves HTTPRoutes would be reported GatewayAPIUnavailable for a
	// moment at every restart.
	decided atomic.Bool
}

// HasSynced reports whether syncs may start: whether the cluster serves
// HTTPRoutes is known, and if it does, their cache has synced.
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

// served asks discovery whether the cluster serves HTTPRoutes.
func (g *GatewayRoutes) served() (bool, error) {
	list, err := g.Discovery.ServerResourcesForGroupVersion(children.GatewayAPIGroupVersion.String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("discovering %s: %w", children.GatewayAPIGroupVersion, err)
	}
	for _, r := range list.APIResources {
		if r.Name == "httproutes" {
			return true, nil
		}
	}
	return false, nil
}

// Run follows whether the cluster serves HTTPRoutes, asking discovery
// every Recheck, until ctx ends. Once it does, Run starts the HTTPRoute
// informer with handler, makes its lister available once it has synced,
// and calls changed. Once it no longer does (the Gateway API CRDs removed,
// or Lost reports a write answered as if), the lister is withdrawn and
// changed called again; the informer keeps running, its lists failing
// until the CRDs are back, and the lister returns once discovery shows
// HTTPRoutes again and the informer has listed them anew.
func (g *GatewayRoutes) Run(ctx context.Context, handler cache.ResourceEventHandler, changed func()) {
	logger := klog.FromContext(ctx)
	var inf cache.SharedIndexInformer
	reported := false
	_ = wait.PollUntilContextCancel(ctx, g.Recheck, true, func(context.Context) (bool, error) {
		ok, err := g.served()
		if err != nil {
			logger.V(2).Info("Could not discover the Gateway API; asking again", "err", err, "in", g.Recheck)
			return false, nil
		}
		switch {
		case !ok && g.Routes() != nil:
			g.withdraw(inf)
			logger.Info("The cluster no longer serves Gateway API HTTPRoutes; routes with parentRefs wait for them again", "groupVersion", children.GatewayAPIGroupVersion)
			changed()
		case !ok && !reported:
			logger.Info("The cluster does not serve Gateway API HTTPRoutes; routes with parentRefs wait for them", "groupVersion", children.GatewayAPIGroupVersion, "recheck", g.Recheck)
			reported = true
			g.decided.Store(true)
		case ok && inf == nil:
			if inf, err = g.start(ctx, handler); err != nil {
				logger.Error(err, "Starting the HTTPRoute informer")
				return true, nil
			}
			if !cache.WaitForNamedCacheSyncWithContext(ctx, inf.HasSynced) {
				return true, nil
			}
			g.offer(inf)
			logger.Info("Watching Gateway API HTTPRoutes", "groupVersion", children.GatewayAPIGroupVersion)
			changed()
		case ok && g.Routes() == nil && g.relisted(inf):
			g.offer(inf)
			reported = false
			logger.Info("Watching Gateway API HTTPRoutes again", "groupVersion", children.GatewayAPIGroupVersion)
			changed()
		}
		return false, nil
	})
}

// start builds the HTTPRoute informer with handler and runs it until ctx
// ends.
func (g *GatewayRoutes) start(ctx context.Context, handler cache.ResourceEventHandler) (cache.SharedIndexInformer, error) {
	inf, err := g.Informer()
	if err != nil {
		return nil, err
	}
	logger := klog.FromContext(ctx)
	if _, err := inf.AddEventHandlerWithOptions(handler, cache.HandlerOptions{Logger: &logger}); err != nil {
		return nil, fmt.Errorf("adding the HTTPRoute event handler: %w", err)
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
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.Lister != nil && g.listedVersion != nil {
		g.lostAt = g.listedVersion()
	}
	g.Lister = nil
}

// withdraw takes the lister away, noting the version inf had listed.
func (g *GatewayRoutes) withdraw(inf cache.SharedIndexInformer) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.Lister = nil
	g.lostAt = inf.LastSyncResourceVersion()
}

// offer makes inf's lister the one syncs read.
func (g *GatewayRoutes) offer(inf cache.SharedIndexInformer) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.Lister = gatewaylisters.NewHTTPRouteLister(inf.GetIndexer())
	g.listedVersion = inf.LastSyncResourceVersion
	g.lostAt = ""
	g.decided.Store(true)
}

// relisted reports whether inf has listed HTTPRoutes since the lister was
// withdrawn, so that its cache no longer holds those the CRDs took with
// them.
func (g *GatewayRoutes) relisted(inf cache.SharedIndexInformer) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.lostAt == "" || inf.LastSyncResourceVersion() != g.lostAt
}
