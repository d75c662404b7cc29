package reconcile

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"
	gatewaylisters "sigs.k8s.io/gateway-api/pkg/client/listers/apis/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/caches"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/configrollout"
	"deployobject.dev/controller/pkg/generated/clientset/versioned/fake"
	"deployobject.dev/controller/pkg/status"
	"deployobject.dev/controller/pkg/testobjects"
)

// fixture is the cluster a sync of one DeployObject sees: fake API
// servers, and the caches holding the children as the informers would.
type fixture struct {
	t *testing.T

	// cached are children in the API servers and in the caches: of the
	// kinds of caches.ChildKinds, HTTPRoutes and GRPCRoutes, and monitors
	// (unstructured). unlisted are in the API servers only, as children
	// without the managed-by label are.
	cached, unlisted []runtime.Object
	// gatewayAPI: the cluster serves HTTPRoutes and GRPCRoutes, and their
	// caches have synced; monitoring: the same of ServiceMonitors and
	// PodMonitors.
	gatewayAPI, monitoring bool
	// podSecurity is --pod-security-profile; none when empty.
	podSecurity children.PodSecurityProfile

	client        *fake.Clientset
	kubeClient    *k8sfake.Clientset
	gatewayClient *gatewayfake.Clientset
	dynamicClient *dynamicfake.FakeDynamicClient
	// caches are the typed children's caches of the last newChildren.
	caches caches.ChildCaches
}

func newFixture(t *testing.T) *fixture {
	return &fixture{t: t}
}

// newChildren is Children over the fixture's cluster, in which the API
// server also holds dobj (read before an adoption).
func (f *fixture) newChildren(dobj *appv1.DeployObject) *Children {
	f.t.Helper()
	var kubeObjs, routeObjs, monitorObjs []runtime.Object
	for _, obj := range slices.Concat(f.cached, f.unlisted) {
		switch obj.(type) {
		case *gatewayv1.HTTPRoute, *gatewayv1.GRPCRoute:
			routeObjs = append(routeObjs, obj)
		case *unstructured.Unstructured:
			monitorObjs = append(monitorObjs, obj)
		default:
			kubeObjs = append(kubeObjs, obj)
		}
	}
	f.client = fake.NewSimpleClientset(dobj.DeepCopy())
	f.kubeClient = k8sfake.NewClientset(kubeObjs...)
	f.gatewayClient = gatewayfake.NewClientset(routeObjs...)
	f.dynamicClient = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		children.ServiceMonitorResource: "ServiceMonitorList",
		children.PodMonitorResource:     "PodMonitorList",
	}, monitorObjs...)

	inf, err := caches.NewInformers(f.kubeClient, f.client, caches.Scope{}, 0, caches.NamedInformers{})
	if err != nil {
		f.t.Fatal(err)
	}
	f.caches = inf.Children
	httpRoutes := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	grpcRoutes := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	monitors := map[string]cache.Indexer{
		children.KindServiceMonitor: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}),
		children.KindPodMonitor:     cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}),
	}
	for _, obj := range f.cached {
		var into cache.Indexer
		switch o := obj.(type) {
		case *gatewayv1.HTTPRoute:
			into = httpRoutes
		case *gatewayv1.GRPCRoute:
			into = grpcRoutes
		case *unstructured.Unstructured:
			into = monitors[o.GetKind()]
		default:
			child, ok := f.caches.InformerFor(obj)
			if !ok {
				f.t.Fatalf("no cache of %T", obj)
			}
			into = child.GetIndexer()
		}
		mustAdd(f.t, into, obj.DeepCopyObject())
	}
	gateway := &caches.GatewayRoutes{Client: f.gatewayClient}
	if f.gatewayAPI {
		gateway.Lister = gatewaylisters.NewHTTPRouteLister(httpRoutes)
		gateway.GRPCLister = gatewaylisters.NewGRPCRouteLister(grpcRoutes)
	}
	monitorCaches := &caches.Monitors{Client: f.dynamicClient}
	if f.monitoring {
		monitorCaches.ServiceMonitorLister = cache.NewGenericLister(monitors[children.KindServiceMonitor], children.ServiceMonitorResource.GroupResource())
		monitorCaches.PodMonitorLister = cache.NewGenericLister(monitors[children.KindPodMonitor], children.PodMonitorResource.GroupResource())
	}

	podSecurity := f.podSecurity
	if podSecurity == "" {
		podSecurity = children.ProfileNone
	}
	check, err := children.NewPodSecurityCheck(podSecurity)
	if err != nil {
		f.t.Fatal(err)
	}
	// As NewController makes it, with configuration followed by no test
	// here (configuration rollouts are the sync loop's, tested at the root).
	return &Children{
		KubeClient:       f.kubeClient,
		Client:           f.client,
		Caches:           f.caches,
		Gateway:          gateway,
		Monitors:         monitorCaches,
		Admitted:         children.NewAdmittedWrites(),
		PodSecurity:      podSecurity,
		PodSecurityCheck: check,
		Rollouts:         &configrollout.Rollouts{Tracking: &configrollout.Tracking{}},
	}
}

// mustAdd adds or replaces obj in indexer, transformed as the informer would.
func mustAdd(t *testing.T, indexer cache.Indexer, obj any) {
	t.Helper()
	obj, err := caches.ChildKinds().Transform(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := indexer.Update(obj); err != nil {
		t.Fatalf("seeding indexer: %v", err)
	}
}

// sync runs one sync of the children of dobj on a new Children.
func (f *fixture) sync(dobj *appv1.DeployObject) (Result, error) {
	f.t.Helper()
	return f.syncWith(f.newChildren(dobj), dobj)
}

// mustSync is sync for a sync that must end without an error.
func (f *fixture) mustSync(dobj *appv1.DeployObject) Result {
	f.t.Helper()
	res, err := f.sync(dobj)
	if err != nil {
		f.t.Fatalf("sync: %v", err)
	}
	return res
}

// syncWith runs a sync of dobj with c, made by newChildren, whose clients
// and caches a test may have changed since.
func (f *fixture) syncWith(c *Children, dobj *appv1.DeployObject) (Result, error) {
	f.t.Helper()
	_, ctx := ktesting.NewTestContext(f.t)
	return c.Sync(ctx, dobj)
}

// writes are what the clients were asked, the Kubernetes client's first,
// then the DeployObject client's, the Gateway API client's and the dynamic
// client's; the informers' lists and watches are not part of what is
// tested.
func (f *fixture) writes() []core.Action {
	var out []core.Action
	for _, l := range [][]core.Action{f.kubeClient.Actions(), f.client.Actions(), f.gatewayClient.Actions(), f.dynamicClient.Actions()} {
		for _, a := range l {
			if v := a.GetVerb(); v != "list" && v != "watch" {
				out = append(out, a)
			}
		}
	}
	return out
}

// clearActions forgets what the clients were asked so far.
func (f *fixture) clearActions() {
	f.kubeClient.ClearActions()
	f.client.ClearActions()
	f.gatewayClient.ClearActions()
	f.dynamicClient.ClearActions()
}

// describe renders a as "verb resource[/subresource] name".
func describe(a core.Action) string {
	r := a.GetResource().Resource
	if a.GetSubresource() != "" {
		r += "/" + a.GetSubresource()
	}
	var name string
	switch a := a.(type) {
	case interface{ GetName() string }:
		name = a.GetName()
	case interface{ GetObject() runtime.Object }:
		if m, err := meta.Accessor(a.GetObject()); err == nil {
			name = m.GetName()
		}
	}
	return a.GetVerb() + " " + r + " " + name
}

// expectActions checks that got are exactly want, each "verb resource
// name", in order.
func expectActions(t *testing.T, got []core.Action, want ...string) {
	t.Helper()
	var g []string
	for _, a := range got {
		g = append(g, describe(a))
	}
	if !slices.Equal(g, want) {
		t.Fatalf("actions:\n got [%s]\nwant [%s]", strings.Join(g, ", "), strings.Join(want, ", "))
	}
}

// put caches objs, each in place of a cached object of the same kind and
// name.
func (f *fixture) put(objs ...runtime.Object) {
	for _, obj := range objs {
		if i := slices.IndexFunc(f.cached, sameObject(obj)); i >= 0 {
			f.cached[i] = obj
		} else {
			f.cached = append(f.cached, obj)
		}
	}
}

// remove takes the object of obj's kind and name out of the cached ones.
func (f *fixture) remove(obj runtime.Object) {
	f.cached = slices.DeleteFunc(f.cached, sameObject(obj))
}

func sameObject(obj runtime.Object) func(runtime.Object) bool {
	id := objectID(obj)
	return func(o runtime.Object) bool { return objectID(o) == id }
}

// objectID tells objects apart by type, kind (of the unstructured ones)
// and name.
func objectID(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf("%s %s %s/%s", reflect.TypeOf(obj), obj.GetObjectKind().GroupVersionKind().Kind, m.GetNamespace(), m.GetName())
}

// inLine caches dobj's Deployment and Service, live and rolled out, and
// live, the other children of dobj as the API server holds them, and gives
// dobj the status of the sync that found them so.
func (f *fixture) inLine(dobj *appv1.DeployObject, live ...runtime.Object) {
	objs := []runtime.Object{testobjects.LiveDeployment(dobj)}
	if s := testobjects.LiveService(dobj); s != nil {
		objs = append(objs, s)
	}
	objs = append(objs, live...)
	f.put(objs...)
	out := status.Outcome{DeploymentHash: testobjects.MustHash(dobj)}
	for _, obj := range objs {
		switch o := obj.(type) {
		case *appsv1.Deployment:
			out.Deployment = o
		case *corev1.Service:
			out.Service = o
		case *corev1.ServiceAccount:
			out.ServiceAccount = o
		case *policyv1.PodDisruptionBudget:
			out.PDB = o
		case *autoscalingv2.HorizontalPodAutoscaler:
			out.HPA = o
		case *networkingv1.NetworkPolicy:
			out.NetworkPolicy = o
		case *networkingv1.Ingress:
			out.Ingress = o
		case *gatewayv1.HTTPRoute:
			if o.Name == children.HTTPSRedirectName(dobj) {
				out.HTTPSRedirect = o
			} else {
				out.HTTPRoute = o
			}
		case *gatewayv1.GRPCRoute:
			out.GRPCRoute = o
		case *unstructured.Unstructured:
			out.Monitor = o
		}
	}
	dobj.Status = status.Compute(dobj, out, testobjects.Earlier)
}

// statusAfter is the status syncHandler computes from res for dobj.
func statusAfter(dobj *appv1.DeployObject, res Result) appv1.DeployObjectStatus {
	return status.Compute(dobj, res.Outcome, testobjects.FixedNow)
}

// expectStatusKept checks that res tells the status dobj has: syncHandler
// writes none.
func expectStatusKept(t *testing.T, dobj *appv1.DeployObject, res Result) {
	t.Helper()
	if st := statusAfter(dobj, res); !status.Equal(dobj.Status, st) {
		t.Errorf("the status changes, and would be written:\n was %+v\n now %+v", dobj.Status, st)
	}
}

// expectNothingDone checks that a sync changed nothing: no write to tell
// in an event, no problem, the same status.
func expectNothingDone(t *testing.T, dobj *appv1.DeployObject, res Result) {
	t.Helper()
	if len(res.Actions) != 0 || len(res.Outcome.Problems) != 0 {
		t.Errorf("actions %q, problems %+v; want none", res.Actions, res.Outcome.Problems)
	}
	expectStatusKept(t, dobj, res)
}

// conditionOf is the condition of type condType of st, or nil.
func conditionOf(st appv1.DeployObjectStatus, condType string) *metav1.Condition {
	return meta.FindStatusCondition(st.Conditions, condType)
}

// readyOf is the Ready condition of the status syncHandler computes from
// res for dobj.
func readyOf(t *testing.T, dobj *appv1.DeployObject, res Result) metav1.Condition {
	t.Helper()
	st := statusAfter(dobj, res)
	c := conditionOf(st, appv1.ConditionReady)
	if c == nil {
		t.Fatalf("status has no Ready condition: %+v", st)
	}
	if st.ObservedGeneration != dobj.Generation {
		t.Errorf("observedGeneration = %d, want %d", st.ObservedGeneration, dobj.Generation)
	}
	return *c
}

// problemOf is the problem res reports with the child of kind, or nil.
func problemOf(res Result, kind string) *children.Problem {
	for i, p := range res.Outcome.Problems {
		if p.Kind == kind {
			return &res.Outcome.Problems[i]
		}
	}
	return nil
}

// stored is the object of resource named name as the fake API server
// holds it.
func stored[T runtime.Object](t *testing.T, tracker core.ObjectTracker, resource schema.GroupVersionResource, name string) T {
	t.Helper()
	obj, err := tracker.Get(resource, testobjects.TestKey.Namespace, name)
	if err != nil {
		t.Fatalf("reading %s %s: %v", resource.Resource, name, err)
	}
	return obj.(T)
}

var deployments = appsv1.SchemeGroupVersion.WithResource("deployments")

// storedDeployment is the Deployment web as the fake API server holds it.
func (f *fixture) storedDeployment() *appsv1.Deployment {
	f.t.Helper()
	return stored[*appsv1.Deployment](f.t, f.kubeClient.Tracker(), deployments, testobjects.TestKey.Name)
}

// bumpGenerationOnPatch makes the fake API server bump a Deployment's
// generation on a patch, as the real one does on a spec change.
func (f *fixture) bumpGenerationOnPatch() {
	f.kubeClient.PrependReactor("patch", "deployments", func(a core.Action) (bool, runtime.Object, error) {
		d := stored[*appsv1.Deployment](f.t, f.kubeClient.Tracker(), deployments, a.(core.PatchAction).GetName())
		d.Generation++
		return false, nil, f.kubeClient.Tracker().Update(deployments, d, a.GetNamespace())
	})
}
