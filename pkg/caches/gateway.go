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

// Run waits until the cluster serves HTTPRoutes, asking every
// GatewayAPIRecheck, then starts the HTTPRoute informer with handler, and
// once it has synced makes its lister available and calls synced. It
// returns when ctx ends.
func (g *GatewayRoutes) Run(ctx context.Context, handler cache.ResourceEventHandler, synced func()) {
	logger := klog.FromContext(ctx)
	reported := false
	err := wait.PollUntilContextCancel(ctx, g.Recheck, true, func(context.Context) (bool, error) {
		ok, err := g.served()
		if err != nil {
			logger.V(2).Info("Could not discover the Gateway API; asking again", "err", err, "in", g.Recheck)
			return false, nil
		}
		if !ok && !reported {
			logger.Info("The cluster does not serve Gateway API HTTPRoutes; routes with parentRefs wait for them", "groupVersion", children.GatewayAPIGroupVersion, "recheck", g.Recheck)
			reported = true
			g.decided.Store(true)
		}
		return ok, nil
	})
	if err != nil {
		return
	}
	inf, err := g.Informer()
	if err != nil {
		logger.Error(err, "Building the HTTPRoute informer")
		return
	}
	if _, err := inf.AddEventHandlerWithOptions(handler, cache.HandlerOptions{Logger: &logger}); err != nil {
		logger.Error(err, "Adding the HTTPRoute event handler")
		return
	}
	go inf.RunWithContext(ctx)
	if !cache.WaitForNamedCacheSyncWithContext(ctx, inf.HasSynced) {
		return
	}
	g.mu.Lock()
	g.Lister = gatewaylisters.NewHTTPRouteLister(inf.GetIndexer())
	g.mu.Unlock()
	g.decided.Store(true)
	logger.Info("Watching Gateway API HTTPRoutes", "groupVersion", children.GatewayAPIGroupVersion)
	synced()
}
