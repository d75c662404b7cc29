package caches

import (
	"reflect"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/testobjects"
)

// TestPackedCacheReadsBackTheTrimmedObject: for every packed kind, a read
// from the cache returns exactly what the kind's trim kept, as a fresh
// object that the reader may change without changing the cache.
func TestPackedCacheReadsBackTheTrimmedObject(t *testing.T) {
	dobj := testobjects.NewDeployObject(testobjects.WithEveryPodField, testobjects.WithBudget, testobjects.WithAutoscaling, testobjects.WithIngress, testobjects.WithNetworkPolicy, testobjects.WithServiceAccount)
	withManagedFields := func(m *metav1.ObjectMeta) {
		m.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}}
		m.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"}
	}
	d := testobjects.LiveDeployment(dobj)
	withManagedFields(&d.ObjectMeta)
	s := testobjects.LiveService(dobj)
	withManagedFields(&s.ObjectMeta)
	s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.1", IPMode: ptr.To(corev1.LoadBalancerIPModeVIP)}}

	// Protobuf carries the kind outside the object, so objects read back
	// have none, as objects decoded from a watch have none.
	check := func(name string, got, want runtime.Object) {
		t.Helper()
		want.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
		if !testobjects.EqualObjects(got, want) {
			t.Errorf("%s: read back differently (-want +got):\n%s", name, diff.Diff(want, got))
		}
	}
	check("Deployment", throughCache(t, d.DeepCopy(), appsv1.Resource("deployments"), NewPackedLister[appsv1.Deployment]), children.SlimDeployment(d.DeepCopy()))
	check("Service", throughCache(t, s.DeepCopy(), corev1.Resource("services"), NewPackedLister[corev1.Service]), children.SlimService(s.DeepCopy()))
	check("PodDisruptionBudget", throughCache(t, testobjects.LivePDB(dobj), policyv1.Resource("poddisruptionbudgets"), NewPackedLister[policyv1.PodDisruptionBudget]), children.SlimPDB(testobjects.LivePDB(dobj)))
	check("HorizontalPodAutoscaler", throughCache(t, testobjects.LiveHPA(dobj), autoscalingv2.Resource("horizontalpodautoscalers"), NewPackedLister[autoscalingv2.HorizontalPodAutoscaler]), children.SlimHPA(testobjects.LiveHPA(dobj)))
	check("Ingress", throughCache(t, testobjects.LiveIngress(dobj), networkingv1.Resource("ingresses"), NewPackedLister[networkingv1.Ingress]), children.SlimIngress(testobjects.LiveIngress(dobj)))
	check("NetworkPolicy", throughCache(t, testobjects.LiveNetworkPolicy(dobj), networkingv1.Resource("networkpolicies"), NewPackedLister[networkingv1.NetworkPolicy]), children.SlimNetworkPolicy(testobjects.LiveNetworkPolicy(dobj)))
	rs := testobjects.LiveCanaryReplicaSet(dobj, "5d8f7c9b6d-1")
	withManagedFields(&rs.ObjectMeta)
	check("canary ReplicaSet", throughCache(t, rs.DeepCopy(), appsv1.Resource("replicasets"), NewPackedLister[appsv1.ReplicaSet]), children.SlimCanaryReplicaSet(rs.DeepCopy()))

	sa := testobjects.LiveServiceAccount(dobj)
	sa.Secrets = []corev1.ObjectReference{{Name: "web-token"}}
	check("ServiceAccount", throughCache(t, sa.DeepCopy(), corev1.Resource("serviceaccounts"), NewPackedLister[corev1.ServiceAccount]), children.SlimServiceAccount(sa.DeepCopy()))

	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	mustAdd(t, indexer, d.DeepCopy())
	read := NewPackedLister[appsv1.Deployment](indexer, appsv1.Resource("deployments")).In(d.Namespace)
	first, err := read(d.Name)
	if err != nil {
		t.Fatal(err)
	}
	first.Spec.Template.Spec.Containers[0].Image = "changed"
	first.Labels["changed"] = "yes"
	if second, _ := read(d.Name); second.Spec.Template.Spec.Containers[0].Image == "changed" || second.Labels["changed"] != "" {
		t.Error("changing an object read from the cache changed the cache")
	}
	if _, err := read("absent"); !apierrors.IsNotFound(err) {
		t.Errorf("reading an absent object: %v, want NotFound", err)
	}
}

// TestPackedListerControlledBy: the objects a DeployObject controls are
// found by the controller index, whatever their names; those of another
// DeployObject, of another kind of owner or of none are not.
func TestPackedListerControlledBy(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, ControllerIndexers())
	add := func(owner *appv1.DeployObject, name string, mutate func(*corev1.ServiceAccount)) {
		sa := testobjects.LiveServiceAccount(owner)
		sa.Name = name
		if mutate != nil {
			mutate(sa)
		}
		mustAdd(t, indexer, sa)
	}
	web := testobjects.NewDeployObject(testobjects.WithServiceAccount)
	other := testobjects.NewDeployObject(testobjects.WithServiceAccount)
	other.Name, other.UID = "other", "uid-other"
	add(web, "web", nil)
	add(web, "web-v1", nil)
	add(other, "other", nil)
	add(web, "not-a-controller", func(sa *corev1.ServiceAccount) { sa.OwnerReferences[0].Controller = nil })
	add(web, "a-replicaset-of-the-same-name", func(sa *corev1.ServiceAccount) { sa.OwnerReferences[0].Kind = "ReplicaSet" })
	add(web, "elsewhere", func(sa *corev1.ServiceAccount) { sa.Namespace = "elsewhere" })

	got, err := NewPackedLister[corev1.ServiceAccount](indexer, corev1.Resource("serviceaccounts")).ControlledBy(web.Namespace, web.Name)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, sa := range got {
		names = append(names, sa.Name)
	}
	slices.Sort(names)
	if want := []string{"web", "web-v1"}; !slices.Equal(names, want) {
		t.Errorf("ControlledBy = %v, want %v", names, want)
	}
}

// TestPackedObjectsPassTheTransformUnchanged: client-go may hand objects
// already in the cache to the transform again; they must come out as they
// went in.
func TestPackedObjectsPassTheTransformUnchanged(t *testing.T) {
	p, err := ChildKinds().Transform(testobjects.LiveDeployment(testobjects.NewDeployObject()))
	if err != nil {
		t.Fatal(err)
	}
	again, err := ChildKinds().Transform(p)
	if err != nil || again != p {
		t.Errorf("transform of a packed object: %v, %v", again, err)
	}
}

// TestPackedDeepCopyIsIndependent: client-go's cache mutation detector
// compares the cache with deep copies taken when objects entered it.
func TestPackedDeepCopyIsIndependent(t *testing.T) {
	obj, err := ChildKinds().Transform(testobjects.LiveDeployment(testobjects.NewDeployObject()))
	if err != nil {
		t.Fatal(err)
	}
	p := obj.(*Packed)
	c := p.DeepCopyObject().(*Packed)
	if !testobjects.EqualObjects(c, p) {
		t.Fatal("the copy differs")
	}
	c.Protobuf[0]++
	c.OwnerReferences[0].Name = "other"
	if testobjects.EqualObjects(c, p) {
		t.Error("changing the copy changed the original")
	}
	if c.GetObjectKind().GroupVersionKind() != (schema.GroupVersionKind{}) {
		t.Error("a packed object has a kind")
	}
}

// TestPackedMetadataAsClientGoReadsIt: client-go reads a packed object's
// metadata through meta.Accessor, for the store's key and for the
// watch-list consistency detector, which compares what it returns for
// cached and listed objects and so must see their encodings differ.
func TestPackedMetadataAsClientGoReadsIt(t *testing.T) {
	obj, err := ChildKinds().Transform(testobjects.LiveDeployment(testobjects.NewDeployObject()))
	if err != nil {
		t.Fatal(err)
	}
	p := obj.(*Packed)
	if key, err := cache.MetaNamespaceKeyFunc(p); err != nil || key != "apps/web" {
		t.Errorf("key %q, %v; want apps/web", key, err)
	}
	m, err := meta.Accessor(p)
	if err != nil {
		t.Fatal(err)
	}
	if m.GetUID() != p.UID || m.GetResourceVersion() != p.ResourceVersion || len(m.GetOwnerReferences()) != 1 {
		t.Errorf("metadata read back as %+v", m)
	}
	other := p.DeepCopyObject().(*Packed)
	other.Protobuf[len(other.Protobuf)-1]++
	o, _ := meta.Accessor(other)
	if reflect.DeepEqual(m, o) {
		t.Error("objects whose encodings differ look the same to the consistency detector")
	}
}
