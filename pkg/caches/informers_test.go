package caches

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/generated/clientset/versioned/fake"
	"deployobject.dev/controller/pkg/identity"
	"deployobject.dev/controller/pkg/metrics"
	"deployobject.dev/controller/pkg/testobjects"
)

// TestInformerFactories: the typed accessors return the informers
// NewInformers registers, which list DeployObjects by the scope's label
// selector and children by the managed-by label (so the children of others
// are not cached) and ReplicaSets by the canary label too (so those of
// Deployments are not cached), cache trimmed objects, keep no
// indexes but the ControllerIndex of ServiceAccounts and ReplicaSets, and report
// client-go's informer metrics under their name.
func TestInformerFactories(t *testing.T) {
	dobj := testobjects.NewDeployObject(testobjects.WithBudget, testobjects.WithAutoscaling, testobjects.WithIngress, testobjects.WithNetworkPolicy, testobjects.WithServiceAccount)
	dobj.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	dep := testobjects.LiveDeployment(dobj)
	dep.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}}
	theirs := metav1.ObjectMeta{Name: "theirs", Namespace: dobj.Namespace}
	pdb, hpa := testobjects.LivePDB(dobj), testobjects.LiveHPA(dobj)
	pdb.ManagedFields = dep.ManagedFields
	hpa.ManagedFields = dep.ManagedFields
	ing := testobjects.LiveIngress(dobj)
	ing.ManagedFields = dep.ManagedFields
	policy := testobjects.LiveNetworkPolicy(dobj)
	policy.ManagedFields = dep.ManagedFields
	account := testobjects.LiveServiceAccount(dobj)
	account.ManagedFields = dep.ManagedFields
	route := testobjects.LiveHTTPRoute(testobjects.NewDeployObject(testobjects.WithHTTPRoute))
	route.ManagedFields = dep.ManagedFields
	canary := testobjects.LiveCanaryReplicaSet(dobj, "5d8f7c9b6d-1")
	canary.ManagedFields = dep.ManagedFields
	// The Deployment controller's ReplicaSet carries the managed-by label
	// (copied from the pod template) but not the canary label; another
	// tool's the canary label but not managed-by.
	theirCanary := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "theirs-canary", Namespace: dobj.Namespace, Labels: map[string]string{appv1.LabelCanary: "x"}}}
	kubeClient := k8sfake.NewClientset(dep, testobjects.LiveService(dobj), pdb, hpa, ing, policy, account,
		canary, testobjects.LiveReplicaSet(dobj, 1), theirCanary, &appsv1.ReplicaSet{ObjectMeta: theirs},
		&appsv1.Deployment{ObjectMeta: theirs}, &corev1.Service{ObjectMeta: theirs},
		&policyv1.PodDisruptionBudget{ObjectMeta: theirs}, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: theirs},
		&networkingv1.Ingress{ObjectMeta: theirs}, &networkingv1.NetworkPolicy{ObjectMeta: theirs},
		&corev1.ServiceAccount{ObjectMeta: theirs})
	dobj.Labels = map[string]string{"shard": "a"}
	client := fake.NewSimpleClientset(dobj, &appv1.DeployObject{ObjectMeta: metav1.ObjectMeta{Name: "other-shard", Namespace: dobj.Namespace, Labels: map[string]string{"shard": "b"}}})
	gatewayClient := gatewayfake.NewClientset(route, &gatewayv1.HTTPRoute{ObjectMeta: theirs})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	name, err := cache.NewInformerName("test-informer-factories")
	if err != nil {
		t.Fatal(err)
	}
	defer name.Release()
	reg := prometheus.NewRegistry()
	id := NamedInformers{name, metrics.NewInformerMetrics(reg)}
	inf, err := NewInformers(kubeClient, client, Scope{LabelSelector: "shard=a"}, time.Hour, id)
	if err != nil {
		t.Fatal(err)
	}
	dobjFactory, childFactory := inf.DeployObjectFactory, inf.ChildFactory
	informers := map[string]cache.SharedIndexInformer{
		"deployobjects":            dobjFactory.App().V1().DeployObjects().Informer(),
		"deployments":              childFactory.Apps().V1().Deployments().Informer(),
		"services":                 childFactory.Core().V1().Services().Informer(),
		"poddisruptionbudgets":     childFactory.Policy().V1().PodDisruptionBudgets().Informer(),
		"horizontalpodautoscalers": childFactory.Autoscaling().V2().HorizontalPodAutoscalers().Informer(),
		"ingresses":                childFactory.Networking().V1().Ingresses().Informer(),
		"networkpolicies":          childFactory.Networking().V1().NetworkPolicies().Informer(),
		"serviceaccounts":          childFactory.Core().V1().ServiceAccounts().Informer(),
		"replicasets":              childFactory.Apps().V1().ReplicaSets().Informer(),
	}
	// The HTTPRoute informer is started on its own, once the cluster
	// serves HTTPRoutes.
	routes, err := NewHTTPRouteInformer(gatewayClient, metav1.NamespaceAll, id)
	if err != nil {
		t.Fatal(err)
	}
	informers["httproutes"] = routes
	go routes.RunWithContext(ctx)
	dobjFactory.Start(ctx.Done())
	childFactory.Start(ctx.Done())
	defer dobjFactory.Shutdown()
	defer childFactory.Shutdown()
	defer cancel() // before the Shutdowns, which wait for the informers to stop
	for name, inf := range informers {
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			t.Fatalf("%s did not sync", name)
		}
		// The one index is that of the children a sync cannot name.
		var want []string
		if name == "serviceaccounts" || name == "replicasets" {
			want = []string{ControllerIndex}
		}
		if idx := slices.Sorted(maps.Keys(inf.GetIndexer().GetIndexers())); !slices.Equal(idx, want) {
			t.Errorf("%s keeps indexes %v, want %v", name, idx, want)
		}
		objs := inf.GetStore().List()
		if len(objs) != 1 {
			t.Fatalf("%s holds %d objects, want 1", name, len(objs))
		}
		if m, err := meta.Accessor(objs[0]); err != nil || m.GetManagedFields() != nil {
			t.Errorf("%s: the cached object is not trimmed", name)
		}
	}

	// Each informer reports client-go's informer metrics under its name.
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]bool{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if l["name"] == "test-informer-factories" {
				series[f.GetName()+" "+l["resource"]] = true
			}
		}
	}
	for resource := range informers {
		for _, metric := range []string{"informer_queued_items", "informer_processing_latency_seconds", "informer_store_resource_version"} {
			if !series[metric+" "+resource] {
				t.Errorf("no %s for %s; have %v", metric, resource, series)
			}
		}
	}

	managed := labels.Set{identity.ManagedByLabel: identity.ManagedByValue}.AsSelector().String()
	for _, want := range []struct {
		actions  []k8stesting.Action
		resource string
		selector string
	}{
		{kubeClient.Actions(), "deployments", managed},
		{kubeClient.Actions(), "services", managed},
		{kubeClient.Actions(), "poddisruptionbudgets", managed},
		{kubeClient.Actions(), "horizontalpodautoscalers", managed},
		{kubeClient.Actions(), "ingresses", managed},
		{kubeClient.Actions(), "networkpolicies", managed},
		{kubeClient.Actions(), "replicasets", "app.deployobject.dev/canary," + managed},
		{gatewayClient.Actions(), "httproutes", managed},
		{client.Actions(), "deployobjects", "shard=a"},
	} {
		found := false
		for _, a := range want.actions {
			if l, ok := a.(k8stesting.ListAction); ok && a.GetResource().Resource == want.resource {
				found = true
				if got := l.GetListRestrictions().Labels.String(); got != want.selector {
					t.Errorf("%s listed with selector %q, want %q", want.resource, got, want.selector)
				}
			}
		}
		if !found {
			t.Errorf("%s were never listed", want.resource)
		}
	}
}
