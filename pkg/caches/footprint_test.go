package caches

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/identity"
	"deployobject.dev/controller/pkg/testobjects"
)

// footprintObjects is how many objects BenchmarkCachedFootprint caches
// per measurement: issue 12's 10,000 unrelated ConfigMaps (or Secrets), and
// the benchmark's 10,000 DeployObjects' children.
const footprintObjects = 10000

// BenchmarkCachedFootprint measures what one object costs in the
// controller's caches: a Deployment and a Service as the benchmark's mem
// step makes them, and an unrelated ConfigMap or Secret. It is the heap
// after GC with footprintObjects of them in a cache.Store, less the heap
// before, per object. Each object is decoded from protobuf, as the
// informer decodes it, with what the API server sends besides (labels, a
// last-applied annotation or the status, managedFields), then put through
// the cache's transform:
//
//	go test -run '^$' -bench BenchmarkCachedFootprint -benchtime 3x .
//
// "whole" caches the decoded object untransformed, for comparison.
func BenchmarkCachedFootprint(b *testing.B) {
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
		{"Deployment", footprintDeployment, func() protoObject { return &appsv1.Deployment{} }},
		{"Service", footprintService, func() protoObject { return &corev1.Service{} }},
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
			{"cached", ChildKinds().Transform},
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
			FieldsV1: metav1.NewFieldsV1(`{"f:data":{".":{},"f:key":{}},"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{".":{},"f:app.kubernetes.io/name":{}}}}`),
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

// footprintDeployment is the Deployment of the i-th DeployObject of the
// benchmark's mem step (replicas 0) as the API server sends it once rolled
// out: with the defaults it fills in, two managers' managedFields and the
// Deployment controller's conditions.
func footprintDeployment(i int) protoObject {
	dobj := footprintDeployObject(i)
	d := testobjects.LiveDeployment(dobj)
	d.TypeMeta = metav1.TypeMeta{}
	d.UID = types.UID(fmt.Sprintf("6f1c2a4e-%04x-4a5b-9c3d-%012x", i%0x10000, i))
	d.Annotations["deployment.kubernetes.io/revision"] = "1"
	d.ManagedFields = footprintManagers("apps/v1", 900)
	rolling := intstr.FromString("25%")
	d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: &rolling, MaxUnavailable: &rolling}
	d.Spec.ProgressDeadlineSeconds = ptr.To[int32](600)
	pod := &d.Spec.Template.Spec
	pod.SchedulerName = corev1.DefaultSchedulerName
	pod.SecurityContext = &corev1.PodSecurityContext{}
	pod.TerminationGracePeriodSeconds = ptr.To[int64](30)
	d.Status.Conditions = []appsv1.DeploymentCondition{
		{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable", Message: "Deployment has minimum availability."},
		{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable", Message: fmt.Sprintf("ReplicaSet %q has successfully progressed.", dobj.Name+"-5d8f7c9b6d")},
	}
	return d
}

// footprintService is the Service of the i-th DeployObject of the mem step
// as the API server sends it.
func footprintService(i int) protoObject {
	s := testobjects.LiveService(footprintDeployObject(i))
	s.UID = types.UID(fmt.Sprintf("7a2d3b5f-%04x-4a5b-9c3d-%012x", i%0x10000, i))
	s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	s.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicySingleStack)
	s.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyCluster)
	s.ManagedFields = footprintManagers("v1", 400)
	return s
}

func footprintDeployObject(i int) *appv1.DeployObject {
	return testobjects.NewDeployObject(func(d *appv1.DeployObject) {
		d.Name = fmt.Sprintf("bench-%05d", i)
		d.Spec.Replicas = ptr.To[int32](0)
	})
}

// footprintManagers are the controller's managedFields entry, of about
// size bytes, and a status writer's, as a create and a status update leave
// them.
func footprintManagers(apiVersion string, size int) []metav1.ManagedFieldsEntry {
	return []metav1.ManagedFieldsEntry{
		{Manager: identity.FieldManager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: apiVersion, Time: &metav1.Time{}, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{` + strings.Repeat(" ", size) + `}}`)},
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: apiVersion, Time: &metav1.Time{}, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:status":{` + strings.Repeat(" ", size/2) + `}}`), Subresource: "status"},
	}
}
