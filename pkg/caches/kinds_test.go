package caches

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/generated/clientset/versioned/fake"
	"deployobject.dev/controller/pkg/identity"
	"deployobject.dev/controller/pkg/testobjects"
)

// TestChildCaches: NewInformers derives the child informers from
// ChildKinds, one per row, each the one the factory's typed accessor
// returns (the same cache), with the ControllerIndex where the row asks for it; the
// caches-synced check names each by its resource, and the ConfigMaps are
// listed whole (a DeployObject may use any).
func TestChildCaches(t *testing.T) {
	kubeClient := k8sfake.NewClientset()
	inf, err := NewInformers(kubeClient, fake.NewSimpleClientset(), Scope{}, 0, NamedInformers{})
	if err != nil {
		t.Fatal(err)
	}
	f := inf.ChildFactory
	for _, want := range []struct {
		resource string
		obj      any
		accessor cache.SharedIndexInformer
		indexes  []string
	}{
		{"deployments", &appsv1.Deployment{}, f.Apps().V1().Deployments().Informer(), nil},
		{"services", &corev1.Service{}, f.Core().V1().Services().Informer(), nil},
		{"serviceaccounts", &corev1.ServiceAccount{}, f.Core().V1().ServiceAccounts().Informer(), []string{ControllerIndex}},
		{"configmaps", &corev1.ConfigMap{}, f.Core().V1().ConfigMaps().Informer(), []string{ControllerIndex}},
		{"poddisruptionbudgets", &policyv1.PodDisruptionBudget{}, f.Policy().V1().PodDisruptionBudgets().Informer(), nil},
		{"horizontalpodautoscalers", &autoscalingv2.HorizontalPodAutoscaler{}, f.Autoscaling().V2().HorizontalPodAutoscalers().Informer(), nil},
		{"ingresses", &networkingv1.Ingress{}, f.Networking().V1().Ingresses().Informer(), nil},
		{"networkpolicies", &networkingv1.NetworkPolicy{}, f.Networking().V1().NetworkPolicies().Informer(), nil},
		{"replicasets", &appsv1.ReplicaSet{}, f.Apps().V1().ReplicaSets().Informer(), []string{ControllerIndex}},
	} {
		got, ok := inf.Children.InformerFor(want.obj)
		if !ok || got.GetIndexer() != want.accessor.GetIndexer() {
			t.Errorf("%s: the cache of its row is not that of the factory's informer", want.resource)
			continue
		}
		if idx := slices.Sorted(maps.Keys(got.GetIndexer().GetIndexers())); !slices.Equal(idx, want.indexes) {
			t.Errorf("%s keeps indexes %v, want %v", want.resource, idx, want.indexes)
		}
	}
	if got, want := len(inf.Children.Informers()), len(ChildKinds()); got != want {
		t.Errorf("%d informers for %d kinds", got, want)
	}
	if got, want := slices.Sorted(maps.Keys(inf.Children.Synced())), []string{"configmaps", "deployments", "horizontalpodautoscalers", "ingresses", "networkpolicies", "poddisruptionbudgets", "replicasets", "serviceaccounts", "services"}; !slices.Equal(got, want) {
		t.Errorf("synced checks of %v, want %v", got, want)
	}
	if _, ok := inf.Children.InformerFor(&corev1.Secret{}); ok {
		t.Error("a Secret has a child cache")
	}

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	f.Start(ctx.Done())
	defer f.Shutdown()
	defer cancel() // before the Shutdown, which waits for the informers to stop
	if !cache.WaitForCacheSync(ctx.Done(), inf.Children.Informers()[0].HasSynced, InformerOf[corev1.ConfigMap](inf.Children).HasSynced) {
		t.Fatal("caches did not sync")
	}
	managed := labels.Set{identity.ManagedByLabel: identity.ManagedByValue}.AsSelector().String()
	selectors := map[string]string{}
	for _, a := range kubeClient.Actions() {
		if l, ok := a.(k8stesting.ListAction); ok {
			selectors[a.GetResource().Resource] = l.GetListRestrictions().Labels.String()
		}
	}
	if got := selectors["configmaps"]; got != "" {
		t.Errorf("configmaps listed with selector %q, want none", got)
	}
	if got := selectors["serviceaccounts"]; got != managed {
		t.Errorf("serviceaccounts listed with selector %q, want %q", got, managed)
	}
	if got, want := selectors["replicasets"], "app.deployobject.dev/canary,app.kubernetes.io/managed-by=deployobject-controller"; got != want {
		t.Errorf("replicasets listed with selector %q, want %q", got, want)
	}
}

// TestListerOfKindWithoutCache: reading a kind the caches lack fails, and
// not as NotFound, which a sync would take for a child to create.
func TestListerOfKindWithoutCache(t *testing.T) {
	inf, err := NewInformers(k8sfake.NewClientset(), fake.NewSimpleClientset(), Scope{}, 0, NamedInformers{})
	if err != nil {
		t.Fatal(err)
	}
	secrets := ListerOf[corev1.Secret](inf.Children)
	if _, err := secrets.In("ns")("x"); err == nil || apierrors.IsNotFound(err) {
		t.Errorf("In: %v, want an error that is not NotFound", err)
	}
	if _, err := secrets.List(); err == nil {
		t.Error("List of a kind without a cache did not fail")
	}
	if _, err := secrets.ControlledBy("ns", "x"); err == nil {
		t.Error("ControlledBy of a kind without a cache did not fail")
	}
	if _, err := ListerOf[appsv1.Deployment](inf.Children).In("ns")("x"); !apierrors.IsNotFound(err) {
		t.Errorf("In of a cached kind: %v, want NotFound", err)
	}
}

// TestKindsTransform: an object of a row goes through that row's trim (the
// packed objects are packed), anything else through Transform; a row's
// transform given another type fails rather than panicking.
func TestKindsTransform(t *testing.T) {
	dobj := testobjects.NewDeployObject()
	kinds := ChildKinds()
	for _, obj := range []any{testobjects.LiveDeployment(dobj), testobjects.LiveService(dobj), testobjects.LiveCanaryReplicaSet(dobj, "5d8f7c9b6d-1"), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"k": "v"}}, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}} {
		got, err := kinds.Transform(obj)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := got.(*Packed); !ok {
			t.Errorf("%T cached as %T, want packed", obj, got)
		}
	}
	got, err := kinds.Transform(dobj.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := got.(*appv1.DeployObject); !ok || d.ManagedFields != nil {
		t.Errorf("a DeployObject cached as %T", got)
	}
	if _, err := kinds[0].transform(&corev1.Service{}); err == nil {
		t.Error("the Deployment row's transform took a Service")
	}
}
