package caches

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"testing"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/identity"
	"deployobject.dev/controller/pkg/status"
	"deployobject.dev/controller/pkg/testobjects"
)

// TestSlimCacheAnswersLikeTheFullObject: every question the controller asks
// of a cached child gets the same answer from the slimmed copy as from the
// whole object, in sync or drifted.
func TestSlimCacheAnswersLikeTheFullObject(t *testing.T) {
	drifts := map[string]func(*appsv1.Deployment, *corev1.Service){
		"in sync":  func(*appsv1.Deployment, *corev1.Service) {},
		"image":    func(d *appsv1.Deployment, _ *corev1.Service) { d.Spec.Template.Spec.Containers[0].Image = "x" },
		"replicas": func(d *appsv1.Deployment, _ *corev1.Service) { d.Spec.Replicas = ptr.To[int32](9) },
		"env":      func(d *appsv1.Deployment, _ *corev1.Service) { d.Spec.Template.Spec.Containers[0].Env = nil },
		"resources": func(d *appsv1.Deployment, _ *corev1.Service) {
			d.Spec.Template.Spec.Containers[0].Resources.Limits = nil
		},
		"label": func(d *appsv1.Deployment, s *corev1.Service) {
			delete(d.Labels, children.NameLabel)
			delete(s.Labels, children.NameLabel)
		},
		"ports": func(d *appsv1.Deployment, s *corev1.Service) {
			d.Spec.Template.Spec.Containers[0].Ports = nil
			s.Spec.Ports[0].Port = 1
		},
		"nodePort": func(_ *appsv1.Deployment, s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.Ports[0].NodePort = 30001
		},
		"sidecar first": func(d *appsv1.Deployment, _ *corev1.Service) {
			cs := d.Spec.Template.Spec.Containers
			d.Spec.Template.Spec.Containers = append([]corev1.Container{cs[len(cs)-1]}, cs[:len(cs)-1]...)
		},
		"container renamed": func(d *appsv1.Deployment, _ *corev1.Service) { d.Spec.Template.Spec.Containers[0].Name = "main" },
		"not rolled":        func(d *appsv1.Deployment, _ *corev1.Service) { d.Generation = 5 },
		"unavailable":       func(d *appsv1.Deployment, _ *corev1.Service) { d.Status.AvailableReplicas = 0 },
		"stuck": func(d *appsv1.Deployment, _ *corev1.Service) {
			d.Status.UpdatedReplicas = 0
			d.Status.Conditions = []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable"},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded", Message: "timed out"},
			}
		},
		"paused": func(d *appsv1.Deployment, _ *corev1.Service) { d.Spec.Paused = true },
		"pods refused": func(d *appsv1.Deployment, _ *corev1.Service) {
			d.Status.Conditions = []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "ReplicaSetUpdated"},
				{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: `pods "web-1" is forbidden: exceeded quota`},
			}
		},
		"pods refused, then admitted": func(d *appsv1.Deployment, _ *corev1.Service) {
			d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionFalse}}
		},
	}
	for name, drift := range drifts {
		t.Run(name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject()
			full := testobjects.LiveDeployment(dobj)
			full.Annotations = map[string]string{"deployment.kubernetes.io/revision": "2"}
			full.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}}
			full.Spec.Template.Spec.Containers = append(full.Spec.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "envoy", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}})
			fullSvc := testobjects.LiveService(dobj)
			drift(full, fullSvc)

			slim := throughCache(t, full.DeepCopy(), appsv1.Resource("deployments"), NewPackedLister[appsv1.Deployment])
			slimSvc := throughCache(t, fullSvc.DeepCopy(), corev1.Resource("services"), NewPackedLister[corev1.Service])
			if a, b := children.DeploymentInSync(full, children.DesiredDeployment(dobj, children.ProfileNone)), children.DeploymentInSync(slim, children.DesiredDeployment(dobj, children.ProfileNone)); a != b {
				t.Errorf("deploymentMatches: full %v, slim %v", a, b)
			}
			_, a := children.MergeService(fullSvc, children.DesiredService(dobj))
			_, b := children.MergeService(slimSvc, children.DesiredService(dobj))
			if a != b {
				t.Errorf("mergeService changed: full %v, slim %v", a, b)
			}
			if !metav1.IsControlledBy(slim, dobj) || !metav1.IsControlledBy(slimSvc, dobj) {
				t.Error("ownership lost")
			}
			fullReady := status.ReadyCondition(dobj, status.Outcome{Deployment: full, Service: fullSvc})
			slimReady := status.ReadyCondition(dobj, status.Outcome{Deployment: slim, Service: slimSvc})
			if fullReady != slimReady {
				t.Errorf("Ready: full %+v, slim %+v", fullReady, slimReady)
			}
			if slim.Annotations != nil || slim.ManagedFields != nil || slimSvc.Spec.ClusterIP != "" {
				t.Error("the slim copies keep what the controller never reads")
			}
		})
	}
}

func TestTransformKeepsDeployObjectSpecAndStatus(t *testing.T) {
	dobj := inSync(testobjects.NewDeployObject())
	dobj.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{...}",
		appv1.AnnotationCanaryPromote: "a-1/2", appv1.AnnotationCanaryPromoteFull: "a-1", appv1.AnnotationCanaryAbort: "a-2", appv1.AnnotationCanaryRetry: "a-3"}
	dobj.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	want := dobj.DeepCopy()
	got, err := ChildKinds().Transform(dobj)
	if err != nil {
		t.Fatal(err)
	}
	d := got.(*appv1.DeployObject)
	// The canary operations are read from the cache.
	if wantAnnotations := map[string]string{appv1.AnnotationCanaryPromote: "a-1/2", appv1.AnnotationCanaryPromoteFull: "a-1", appv1.AnnotationCanaryAbort: "a-2", appv1.AnnotationCanaryRetry: "a-3"}; !maps.Equal(d.Annotations, wantAnnotations) || d.ManagedFields != nil {
		t.Errorf("annotations %v and managedFields %v kept, want only the canary operations' and no managedFields", d.Annotations, d.ManagedFields)
	}
	if !testobjects.EqualObjects(d.Spec, want.Spec) || !testobjects.EqualObjects(d.Status, want.Status) || d.UID != want.UID || d.Generation != want.Generation {
		t.Error("the transform changed what the controller reads")
	}
	if other, _ := ChildKinds().Transform("tombstone"); other != "tombstone" {
		t.Error("unknown objects must pass unchanged")
	}
}

// TestTransformCachesListedAndWatchedAlike: a DeployObject from a list
// carries its kind and API version, one from a watch does not; the cache
// must hold the same object for both, or client-go's watch-list
// consistency detector (KUBE_WATCHLIST_INCONSISTENCY_DETECTOR) panics the
// controller at every start, as it did in the e2e suite.
func TestTransformCachesListedAndWatchedAlike(t *testing.T) {
	watched := inSync(testobjects.NewDeployObject())
	watched.TypeMeta = metav1.TypeMeta{}
	listed := watched.DeepCopy()
	listed.TypeMeta = metav1.TypeMeta{APIVersion: appv1.SchemeGroupVersion.String(), Kind: "DeployObject"}
	a, _ := ChildKinds().Transform(listed)
	b, _ := ChildKinds().Transform(watched)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("listed and watched DeployObjects are cached differently:\n%+v\n%+v", a, b)
	}

	// The Gateway API routes too (the e2e suite's controller panicked on
	// a GRPCRoute listed with its kind).
	route := testobjects.LiveGRPCRoute(testobjects.NewDeployObject(testobjects.WithGRPCRoute))
	listedRoute := route.DeepCopy()
	listedRoute.TypeMeta = metav1.TypeMeta{APIVersion: gatewayv1.SchemeGroupVersion.String(), Kind: "GRPCRoute"}
	a, _ = ChildKinds().Transform(listedRoute)
	b, _ = ChildKinds().Transform(route)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("listed and watched GRPCRoutes are cached differently:\n%+v\n%+v", a, b)
	}
	httpRoute := testobjects.LiveHTTPRoute(testobjects.NewDeployObject(testobjects.WithHTTPRoute))
	listedHTTPRoute := httpRoute.DeepCopy()
	listedHTTPRoute.TypeMeta = metav1.TypeMeta{APIVersion: gatewayv1.SchemeGroupVersion.String(), Kind: "HTTPRoute"}
	a, _ = ChildKinds().Transform(listedHTTPRoute)
	b, _ = ChildKinds().Transform(httpRoute)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("listed and watched HTTPRoutes are cached differently:\n%+v\n%+v", a, b)
	}
}

// TestTransformSharesStrings: two objects decoded separately, as two watch
// events are, hold their own copies of every string; after the transform
// the strings all objects repeat are one copy, in the DeployObjects and in
// the metadata of packed children, and an object's labels and owner
// reference hold its name's bytes, with nothing changed in value.
func TestTransformSharesStrings(t *testing.T) {
	dobj := inSync(testobjects.NewDeployObject())
	decoded := func() (*appv1.DeployObject, *appsv1.Deployment) {
		var o appv1.DeployObject
		var d appsv1.Deployment
		roundTrip(t, dobj, &o)
		roundTrip(t, testobjects.LiveDeployment(dobj), &d)
		return &o, &d
	}
	o1, rawD1 := decoded()
	o2, rawD2 := decoded()
	if unsafe.StringData(o1.Namespace) == unsafe.StringData(rawD2.Namespace) || unsafe.StringData(o1.Spec.Image) == unsafe.StringData(o2.Spec.Image) {
		t.Fatal("decoding already shares strings; this test would prove nothing")
	}
	transformed := func(obj any) any {
		t.Helper()
		out, err := ChildKinds().Transform(obj)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	transformed(o1)
	transformed(o2)
	d1, d2 := transformed(rawD1).(*Packed), transformed(rawD2).(*Packed)

	same := func(what, a, b string) {
		t.Helper()
		if a != b || unsafe.StringData(a) != unsafe.StringData(b) {
			t.Errorf("%s: %q and %q are not one copy", what, a, b)
		}
	}
	keyOf := func(m map[string]string, key string) string {
		for k := range m {
			if k == key {
				return k
			}
		}
		t.Fatalf("no label %q in %v", key, m)
		return ""
	}
	same("namespace", o1.Namespace, d2.Namespace)
	same("owner API version", d1.OwnerReferences[0].APIVersion, d2.OwnerReferences[0].APIVersion)
	same("owner kind", d1.OwnerReferences[0].Kind, d2.OwnerReferences[0].Kind)
	same("owner name", d1.OwnerReferences[0].Name, d1.Name)
	same("image", o1.Spec.Image, o2.Spec.Image)
	same("port protocol", string(o1.Spec.Ports[0].Protocol), string(o2.Spec.Ports[0].Protocol))
	same("condition type", o1.Status.Conditions[0].Type, o2.Status.Conditions[0].Type)

	labelled := dobj.DeepCopy()
	labelled.Labels = map[string]string{"team": "payments", "copy-of-name": labelled.Name}
	var l1, l2 appv1.DeployObject
	roundTrip(t, labelled, &l1)
	roundTrip(t, labelled, &l2)
	transformed(&l1)
	transformed(&l2)
	same("label key", keyOf(l1.Labels, "team"), keyOf(l2.Labels, "team"))
	same("label value", l1.Labels["team"], l2.Labels["team"])
	same("label value equal to the name", l1.Labels["copy-of-name"], l1.Name)
	if !testobjects.EqualObjects(l1.Labels, labelled.Labels) || !testobjects.EqualObjects(o1.Spec, dobj.Spec) || !testobjects.EqualObjects(o1.Status, dobj.Status) {
		t.Error("sharing changed a value")
	}
}

// roundTrip decodes the JSON of in into out, so that out's strings are
// allocations of their own.
func roundTrip(t *testing.T, in, out any) {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}

// throughCache is obj as a sync reads it from its informer's cache:
// transformed, stored, and read back through the kind's lister.
func throughCache[T any, P interface {
	*T
	protoObject
}](t *testing.T, obj P, resource schema.GroupResource, lister func(cache.Indexer, schema.GroupResource) PackedLister[T, P]) P {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	mustAdd(t, indexer, obj)
	got, err := lister(indexer, resource).In(obj.GetNamespace())(obj.GetName())
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// mustAdd puts obj into indexer as the informers do, through Transform.
func mustAdd(t *testing.T, indexer cache.Indexer, obj any) {
	t.Helper()
	obj, err := ChildKinds().Transform(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := indexer.Update(obj); err != nil {
		t.Fatalf("seeding indexer: %v", err)
	}
}

// inSync gives dobj the status a sync writes when its children are in
// line with it.
func inSync(dobj *appv1.DeployObject) *appv1.DeployObject {
	dobj.Status = status.Compute(dobj, status.Outcome{Deployment: testobjects.LiveDeployment(dobj), Service: testobjects.LiveService(dobj), PDB: testobjects.LivePDB(dobj), HPA: testobjects.LiveHPA(dobj), DeploymentHash: testobjects.MustHash(dobj)}, testobjects.Earlier)
	return dobj
}

// TestOrphansKeepWhatAdoptionReads: after `kubectl delete --cascade=orphan`
// of a DeployObject, the garbage collector removes its ownerReferences
// from every child and leaves the labels. For every kind of child, the
// cache of such an orphan keeps what adopting it reads: the labels that
// make it adoptable (children.Sync), the owners that remain, which the
// adoption patch keeps, and the resourceVersion it is conditional on; and
// the metadata the event handlers read carries the labels, which name the
// DeployObject that would adopt it.
func TestOrphansKeepWhatAdoptionReads(t *testing.T) {
	keep := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "keep", UID: "uid-keep"}
	packedRead := func(obj metav1.Object) metav1.Object {
		t.Helper()
		switch o := obj.(type) {
		case *appsv1.Deployment:
			return throughCache(t, o, appsv1.Resource("deployments"), NewPackedLister[appsv1.Deployment])
		case *appsv1.ReplicaSet:
			return throughCache(t, o, appsv1.Resource("replicasets"), NewPackedLister[appsv1.ReplicaSet])
		case *corev1.Service:
			return throughCache(t, o, corev1.Resource("services"), NewPackedLister[corev1.Service])
		case *corev1.ServiceAccount:
			return throughCache(t, o, corev1.Resource("serviceaccounts"), NewPackedLister[corev1.ServiceAccount])
		case *corev1.ConfigMap:
			return throughCache(t, o, corev1.Resource("configmaps"), NewPackedLister[corev1.ConfigMap])
		case *policyv1.PodDisruptionBudget:
			return throughCache(t, o, policyv1.Resource("poddisruptionbudgets"), NewPackedLister[policyv1.PodDisruptionBudget])
		case *autoscalingv2.HorizontalPodAutoscaler:
			return throughCache(t, o, autoscalingv2.Resource("horizontalpodautoscalers"), NewPackedLister[autoscalingv2.HorizontalPodAutoscaler])
		case *networkingv1.NetworkPolicy:
			return throughCache(t, o, networkingv1.Resource("networkpolicies"), NewPackedLister[networkingv1.NetworkPolicy])
		case *networkingv1.Ingress:
			return throughCache(t, o, networkingv1.Resource("ingresses"), NewPackedLister[networkingv1.Ingress])
		}
		// The discovered kinds (routes, monitors) are cached as Transform
		// leaves them.
		cached, err := Transform(obj)
		if err != nil {
			t.Fatal(err)
		}
		return cached.(metav1.Object)
	}
	dobj := testobjects.NewDeployObject(testobjects.WithServiceAccount, testobjects.WithFiles, testobjects.WithBudget,
		testobjects.WithAutoscaling, testobjects.WithNetworkPolicy, testobjects.WithHTTPSRedirect, testobjects.WithServiceMonitor)
	withIngress := testobjects.NewDeployObject(testobjects.WithIngress)
	withGRPC := testobjects.NewDeployObject(testobjects.WithGRPCRoute, testobjects.WithPodMonitor)
	for _, child := range []metav1.Object{
		testobjects.LiveDeployment(dobj),
		testobjects.LiveCanaryReplicaSet(dobj, "5d8f7c9b6d-1"),
		testobjects.LiveService(dobj),
		testobjects.LiveServiceAccount(dobj),
		testobjects.LiveFilesConfigMap(dobj, 0),
		testobjects.LivePDB(dobj),
		testobjects.LiveHPA(dobj),
		testobjects.LiveNetworkPolicy(dobj),
		testobjects.LiveIngress(withIngress),
		testobjects.LiveHTTPRoute(dobj),
		testobjects.LiveHTTPSRedirect(dobj),
		testobjects.LiveGRPCRoute(withGRPC),
		testobjects.LiveMonitor(dobj, children.KindServiceMonitor),
		testobjects.LiveMonitor(withGRPC, children.KindPodMonitor),
	} {
		name := fmt.Sprintf("%T %s", child, child.GetName())
		child.SetOwnerReferences([]metav1.OwnerReference{keep})
		labels := maps.Clone(child.GetLabels())
		if labels[identity.ManagedByLabel] != identity.ManagedByValue || labels[children.NameLabel] == "" {
			t.Fatalf("%s: the test object lacks the children's labels: %v", name, labels)
		}
		rv := child.GetResourceVersion()

		cached, err := ChildKinds().Transform(child.(runtime.Object).DeepCopyObject())
		if err != nil {
			t.Fatal(err)
		}
		event, err := meta.Accessor(cached)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(event.GetLabels(), labels) {
			t.Errorf("%s: the event handlers read the labels %v, want %v", name, event.GetLabels(), labels)
		}

		got := packedRead(child)
		if !maps.Equal(got.GetLabels(), labels) {
			t.Errorf("%s: read back with the labels %v, want %v", name, got.GetLabels(), labels)
		}
		if refs := got.GetOwnerReferences(); len(refs) != 1 || refs[0] != keep {
			t.Errorf("%s: read back with the owners %v, want only %v", name, refs, keep)
		}
		if got.GetResourceVersion() != rv {
			t.Errorf("%s: read back at resourceVersion %q, want %q", name, got.GetResourceVersion(), rv)
		}
	}
}
