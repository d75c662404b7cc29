package status

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	listers "deployobject.dev/controller/pkg/generated/listers/app/v1"
)

func TestWrittenStatusesRecord(t *testing.T) {
	key := cache.ObjectName{Namespace: "apps", Name: "web"}
	written := &appv1.DeployObject{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "11"}, Status: appv1.DeployObjectStatus{ObservedGeneration: 2}}
	// cachedAt is a DeployObject cache holding key at version v, or empty.
	cachedAt := func(v string, ok bool) listers.DeployObjectLister {
		indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
		if ok {
			if err := indexer.Add(&appv1.DeployObject{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, ResourceVersion: v}}); err != nil {
				t.Fatal(err)
			}
		}
		return listers.NewDeployObjectLister(indexer)
	}
	tests := []struct {
		name   string
		cached listers.DeployObjectLister
		// observed is a version the cache reports after the write; "" for none.
		observed string
		kept     bool
	}{
		{"cache still at the version written over", cachedAt("10", true), "", true},
		{"an event of the version written over", cachedAt("10", true), "10", true},
		{"the watch delivers the write", cachedAt("10", true), "11", false},
		{"the watch delivered the write before record", cachedAt("11", true), "", false},
		{"deleted meanwhile", cachedAt("", false), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWrittenStatuses(tt.cached)
			w.Record(key, "10", written)
			if tt.observed != "" {
				w.Observe(key, tt.observed)
			}
			if _, kept := w.m[key]; kept != tt.kept {
				t.Fatalf("entry kept = %v, want %v", kept, tt.kept)
			}
			got, ok := w.NewerThanCache(key, "10")
			if ok != tt.kept || (ok && (got.Status.ObservedGeneration != 2 || got.ResourceVersion != "11")) {
				t.Errorf("newerThanCache = %+v, %v; want the written status and version: %v", got, ok, tt.kept)
			}
		})
	}
}
