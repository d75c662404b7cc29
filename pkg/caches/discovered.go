package caches

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// discovered follows which kinds of one group-version of custom resources
// the cluster serves, and keeps a cache of each served kind. Without the
// CRDs, an informer could never sync and would hold back every other
// sync; instead a kind's informer is started when discovery first shows
// it, without a restart, and its cache is withdrawn while the CRD is gone.
// GatewayRoutes (the Gateway API's routes) and Monitors
// (prometheus-operator's monitors) are built on it.
type discovered struct {
	groupVersion schema.GroupVersion
	discovery    discovery.DiscoveryInterface
	// recheck is how often discovery is asked again.
	recheck time.Duration
	kinds   []*discoveredKind

	// mu guards what the kinds' set changes: the caches syncs read.
	mu sync.RWMutex
	// decided: discovery has answered, and the cache of every kind the
	// cluster serves has synced. Until then syncs wait (see hasSynced): a
	// DeployObject synced before the cache of a kind the cluster serves
	// would be reported as unserved for a moment at every restart.
	decided atomic.Bool
}

// discoveredKind is what discovered follows of one kind.
type discoveredKind struct {
	resource, kind string
	build          func() (cache.SharedIndexInformer, error)
	// set makes the kind's cache read indexer, or takes it away (nil);
	// with mu held.
	set    func(indexer cache.Indexer)
	listed func() bool
	inf    cache.SharedIndexInformer
	// listedVersion is the informer's LastSyncResourceVersion, and lostAt
	// its value when the cache was withdrawn.
	listedVersion func() string
	lostAt        string
	reported      bool
}

// hasSynced reports whether syncs may start: whether the cluster serves
// the kinds is known, and the caches of those it serves have synced.
func (d *discovered) hasSynced() bool {
	return d.decided.Load()
}

// served asks discovery which resources of the group-version the cluster
// serves; none when it does not serve the group-version at all.
func (d *discovered) served() (map[string]bool, error) {
	list, err := d.discovery.ServerResourcesForGroupVersion(d.groupVersion.String())
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discovering %s: %w", d.groupVersion, err)
	}
	served := map[string]bool{}
	for _, r := range list.APIResources {
		served[r.Name] = true
	}
	return served, nil
}

// run follows whether the cluster serves each kind, asking discovery every
// recheck, until ctx ends. Once it serves a kind, run starts its informer
// with handler, makes its cache available once it has synced, and calls
// changed. Once it no longer does (the CRD removed, or lose called after a
// write answered as if), the cache is withdrawn and changed called again;
// the informer keeps running, its lists failing until the CRD is back, and
// the cache returns once discovery shows the kind again and the informer
// has listed anew.
func (d *discovered) run(ctx context.Context, handler cache.ResourceEventHandler, changed func()) {
	logger := klog.FromContext(ctx).WithValues("groupVersion", d.groupVersion)
	_ = wait.PollUntilContextCancel(ctx, d.recheck, true, func(context.Context) (bool, error) {
		served, err := d.served()
		if err != nil {
			logger.V(2).Info("Could not discover the API group; asking again", "err", err, "in", d.recheck)
			return false, nil
		}
		anyChange := false
		for _, k := range d.kinds {
			change, err := d.step(ctx, k, served[k.resource], handler)
			if err != nil {
				logger.Error(err, "Starting an informer for a discovered kind", "kind", k.kind)
				return true, nil
			}
			if ctx.Err() != nil {
				return true, nil
			}
			anyChange = anyChange || change
		}
		d.decided.Store(true)
		if anyChange {
			changed()
		}
		return false, nil
	})
}

// step brings k in line with whether the cluster serves it, and reports
// whether its cache came or went.
func (d *discovered) step(ctx context.Context, k *discoveredKind, served bool, handler cache.ResourceEventHandler) (bool, error) {
	logger := klog.FromContext(ctx).WithValues("kind", k.kind, "groupVersion", d.groupVersion)
	// A kind without an informer to build is followed as if not served.
	served = served && k.build != nil
	listed := d.listed(k)
	switch {
	case !served && listed:
		d.withdraw(k)
		logger.Info("The cluster no longer serves this kind; the DeployObjects that ask for it wait for it again")
		return true, nil
	case !served && !k.reported:
		logger.Info("The cluster does not serve this kind; the DeployObjects that ask for it wait for it", "recheck", d.recheck)
		k.reported = true
	case served && k.inf == nil:
		inf, err := d.start(ctx, k, handler)
		if err != nil {
			return false, err
		}
		k.inf = inf
		if !cache.WaitForNamedCacheSyncWithContext(ctx, inf.HasSynced) {
			return false, nil
		}
		d.offer(k)
		logger.Info("Watching this kind")
		return true, nil
	case served && !listed && d.relisted(k):
		d.offer(k)
		k.reported = false
		logger.Info("Watching this kind again")
		return true, nil
	}
	return false, nil
}

// start builds k's informer with handler and runs it until ctx ends.
func (d *discovered) start(ctx context.Context, k *discoveredKind, handler cache.ResourceEventHandler) (cache.SharedIndexInformer, error) {
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

// lose withdraws k's cache at once, after a write of k was answered as if
// the cluster did not serve it (404 for the resource: the CRD removed), so
// that syncs report the kind unserved rather than fail against a stale
// cache; run offers it again once discovery shows k and the informer has
// listed anew.
func (d *discovered) lose(k *discoveredKind) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if k.listed() && k.listedVersion != nil {
		k.lostAt = k.listedVersion()
	}
	k.set(nil)
}

// listed reports whether k's cache is offered.
func (d *discovered) listed(k *discoveredKind) bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return k.listed()
}

// withdraw takes k's cache away, noting the version its informer had
// listed.
func (d *discovered) withdraw(k *discoveredKind) {
	d.mu.Lock()
	defer d.mu.Unlock()
	k.set(nil)
	k.lostAt = k.inf.LastSyncResourceVersion()
}

// offer makes k's informer's cache the one syncs read.
func (d *discovered) offer(k *discoveredKind) {
	d.mu.Lock()
	defer d.mu.Unlock()
	k.set(k.inf.GetIndexer())
	k.listedVersion = k.inf.LastSyncResourceVersion
	k.lostAt = ""
}

// relisted reports whether k's informer has listed since its cache was
// withdrawn, so that the cache no longer holds the objects the CRD took
// with it.
func (d *discovered) relisted(k *discoveredKind) bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return k.lostAt == "" || k.inf.LastSyncResourceVersion() != k.lostAt
}
