package caches

import (
	"context"
	"testing"

	"k8s.io/client-go/tools/cache"
)

// listingInformer is an informer that has last listed at version, and whose
// cache is indexer; nothing else of it is used.
type listingInformer struct {
	cache.SharedIndexInformer
	version string
	indexer cache.Indexer
}

func (i *listingInformer) LastSyncResourceVersion() string { return i.version }
func (i *listingInformer) GetIndexer() cache.Indexer       { return i.indexer }

// TestDiscoveredComesBackAfterARelist: a cache withdrawn because its CRD
// went (discovery stopped showing the kind, or a write was answered 404)
// holds the objects the CRD took with it until its informer has listed
// again. Discovery showing the kind again is not enough: the cache comes
// back only once the informer's last list is a newer one than when it was
// withdrawn.
func TestDiscoveredComesBackAfterARelist(t *testing.T) {
	ctx := context.Background()
	inf := &listingInformer{version: "10", indexer: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})}
	var offered cache.Indexer
	k := &discoveredKind{resource: "httproutes", kind: "HTTPRoute", inf: inf,
		build:  func() (cache.SharedIndexInformer, error) { return inf, nil },
		set:    func(i cache.Indexer) { offered = i },
		listed: func() bool { return offered != nil }}
	d := &discovered{kinds: []*discoveredKind{k}}
	step := func(served bool, wantChange, wantOffered bool, when string) {
		t.Helper()
		change, err := d.step(ctx, k, served, cache.ResourceEventHandlerFuncs{})
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if change != wantChange || (offered != nil) != wantOffered {
			t.Fatalf("%s: changed %v, offered %v; want %v, %v", when, change, offered != nil, wantChange, wantOffered)
		}
		if wantOffered && offered != inf.indexer {
			t.Fatalf("%s: another cache than the informer's offered", when)
		}
	}

	d.offer(k)
	step(true, false, true, "served and listed")
	step(false, true, false, "the CRD removed")
	step(true, false, false, "served again, the informer not listed since")
	inf.version = "11"
	step(true, true, true, "served again, the informer listed anew")

	// A write answered 404 withdraws it at once; it comes back the same way.
	d.lose(k)
	if offered != nil {
		t.Fatal("the cache still offered after a write was answered 404")
	}
	step(true, false, false, "lost, the informer not listed since")
	inf.version = "12"
	step(true, true, true, "lost, the informer listed anew")
}

// TestDiscoveredHasSynced: for the route caches and the monitor caches
// alike, syncs may start at once when the controller follows no such kind
// (nil), and otherwise only once discovery has answered.
func TestDiscoveredHasSynced(t *testing.T) {
	answeredRoutes, answeredMonitors := &GatewayRoutes{}, &Monitors{}
	answeredRoutes.d.decided.Store(true)
	answeredMonitors.d.decided.Store(true)
	for _, tc := range []struct {
		name   string
		caches interface{ HasSynced() bool }
		want   bool
	}{
		{"no route caches", (*GatewayRoutes)(nil), true},
		{"routes, discovery not answered yet", &GatewayRoutes{}, false},
		{"routes, discovery answered", answeredRoutes, true},
		{"no monitor caches", (*Monitors)(nil), true},
		{"monitors, discovery not answered yet", &Monitors{}, false},
		{"monitors, discovery answered", answeredMonitors, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.caches.HasSynced(); got != tc.want {
				t.Errorf("HasSynced() = %v, want %v", got, tc.want)
			}
		})
	}
}
