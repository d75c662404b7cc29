package main

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// footprintObjects is how many objects BenchmarkCachedConfigFootprint
// caches per measurement: the 10,000 unrelated ConfigMaps (or
// Secrets).
const footprintObjects = 10000

// BenchmarkCachedConfigFootprint measures what one unrelated ConfigMap or
// Secret costs in the controller's cache: the heap after GC with
// footprintObjects of them in a cache.Store, less the heap before, per
// object. Each object is decoded from protobuf, as the informer decodes
// it, with what the API server sends besides the data (labels, a
// last-applied annotation, managedFields), then put through the cache's
// transform:
//
//	go test -run '^$' -bench BenchmarkCachedConfigFootprint -benchtime 3x .
//
// "whole" caches the decoded object untransformed, for comparison.
func BenchmarkCachedConfigFootprint(b *testing.B) {
	configMapOf := func(keys, size int) func(i int) protoObject {
		return func(i int) protoObject {
			return &corev1.ConfigMap{ObjectMeta: footprintMeta(i), Data: footprintData(keys, size, func(v []byte) string { return string(v) })}
		}
	}
	secretOf := func(keys, size int) func(i int) protoObject {
		return func(i int) protoObject {
			return &corev1.Secret{ObjectMeta: footprintMeta(i), Type: corev1.SecretTypeOpaque, Data: footprintData(keys, size, func(v []byte) []byte { return v })}
		}
	}
	for _, shape := range []struct {
		name  string
		obj   func(i int) protoObject
		empty func() protoObject
	}{
		{"ConfigMap/1x16B", configMapOf(1, 16), func() protoObject { return &corev1.ConfigMap{} }},
		{"ConfigMap/3x512B", configMapOf(3, 512), func() protoObject { return &corev1.ConfigMap{} }},
		{"ConfigMap/10x4KiB", configMapOf(10, 4096), func() protoObject { return &corev1.ConfigMap{} }},
		{"Secret/1x16B", secretOf(1, 16), func() protoObject { return &corev1.Secret{} }},
		{"Secret/10x4KiB", secretOf(10, 4096), func() protoObject { return &corev1.Secret{} }},
	} {
		for _, cached := range []struct {
			name      string
			transform func(any) (any, error)
		}{
			{"whole", func(obj any) (any, error) { return obj, nil }},
			{"cached", transformObject},
		} {
			b.Run(shape.name+"/"+cached.name, func(b *testing.B) {
				var alloc, inuse float64
				for b.Loop() {
					alloc, inuse = cacheFootprint(b, shape.obj, shape.empty, cached.transform)
				}
				b.ReportMetric(alloc, "heap-alloc-B/object")
				b.ReportMetric(inuse, "heap-inuse-B/object")
			})
		}
	}
}

// cacheFootprint is the heap allocated and in use per object, after GC,
// for footprintObjects objects made by obj, each encoded as protobuf,
// decoded into an object from empty, transformed and added to a store.
func cacheFootprint(b *testing.B, obj func(i int) protoObject, empty func() protoObject, transform func(any) (any, error)) (alloc, inuse float64) {
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	before := heapAfterGC()
	for i := range footprintObjects {
		data, err := obj(i).Marshal()
		if err != nil {
			b.Fatal(err)
		}
		decoded := empty()
		if err := decoded.Unmarshal(data); err != nil {
			b.Fatal(err)
		}
		cached, err := transform(decoded)
		if err != nil {
			b.Fatal(err)
		}
		if err := store.Add(cached); err != nil {
			b.Fatal(err)
		}
	}
	after := heapAfterGC()
	runtime.KeepAlive(store)
	return float64(after.HeapAlloc-before.HeapAlloc) / footprintObjects, float64(after.HeapInuse-before.HeapInuse) / footprintObjects
}

func heapAfterGC() runtime.MemStats {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}

// footprintMeta is the metadata of the i-th object as the API server sends
// it: generated name, UID and resourceVersion, labels, kubectl's
// last-applied annotation (about 600 bytes) and managedFields.
func footprintMeta(i int) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:              fmt.Sprintf("app-config-%05d", i),
		Namespace:         "team-a",
		UID:               types.UID(fmt.Sprintf("6f1c2a4e-%04x-4a5b-9c3d-%012x", i%0x10000, i)),
		ResourceVersion:   fmt.Sprint(1000000 + i),
		CreationTimestamp: metav1.Unix(1700000000, 0),
		Labels:            map[string]string{"app.kubernetes.io/name": "app", "app.kubernetes.io/part-of": "shop"},
		Annotations: map[string]string{
			"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"labels":{"app.kubernetes.io/name":"app"},"name":"app-config","namespace":"team-a"},"data":{` + strings.Repeat(`"key":"value",`, 35) + `}}`,
		},
		ManagedFields: []metav1.ManagedFieldsEntry{{
			Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
			Time: &metav1.Time{}, FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{".":{},"f:key":{}},"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{".":{},"f:app.kubernetes.io/name":{}}}}`)},
		}},
	}
}

// footprintData is keys keys with values of size bytes each.
func footprintData[V any](keys, size int, value func([]byte) V) map[string]V {
	data := make(map[string]V, keys)
	for k := range keys {
		data[fmt.Sprintf("key-%d.conf", k)] = value([]byte(strings.Repeat(string(rune('a'+k)), size)))
	}
	return data
}
