package reconcile

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/intstr"
	core "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/testobjects"
)

// kindCases is one kind of child as TestSyncEachKind runs the cases every
// kind has: how a DeployObject asks for it, its desired and its live
// object, how a live copy drifts and what the correction brings back.
type kindCases struct {
	kind, resource string
	// name is the child's name; the DeployObject's when nil.
	name func(*appv1.DeployObject) string
	// asks make a DeployObject ask for the kind; createdAsks, when set,
	// in the created case.
	asks, createdAsks []func(*appv1.DeployObject)
	// without make the DeployObject that no longer asks for it.
	without []func(*appv1.DeployObject)
	// gatewayAPI, monitoring: the kind is served only with these.
	gatewayAPI, monitoring bool
	// created are the resources a first sync creates, in order.
	created []string
	// createdAlso checks more of the created case: the writes and the
	// status they lead to.
	createdAlso   func(t *testing.T, dobj *appv1.DeployObject, writes []core.Action, st appv1.DeployObjectStatus)
	desired, live func(*appv1.DeployObject) runtime.Object
	// drift changes a live copy; corrected checks the update.
	drift     func(runtime.Object)
	corrected func(t *testing.T, dobj *appv1.DeployObject, got runtime.Object)
	// condition is the kind's own condition, "" for none (Ready tells
	// it).
	condition string
	// cachesForeign: the kind's cache holds every object, not only the
	// labelled ones, so that a foreign one is found there, not by a
	// create.
	cachesForeign bool
}

func (k kindCases) nameOf(dobj *appv1.DeployObject) string {
	if k.name == nil {
		return dobj.Name
	}
	return k.name(dobj)
}

func optionalChild[T runtime.Object](desired func(*appv1.DeployObject) (T, error)) func(*appv1.DeployObject) runtime.Object {
	return func(dobj *appv1.DeployObject) runtime.Object {
		obj, err := desired(dobj)
		if err != nil {
			panic(err)
		}
		return obj
	}
}

func live[T runtime.Object](live func(*appv1.DeployObject) T) func(*appv1.DeployObject) runtime.Object {
	return func(dobj *appv1.DeployObject) runtime.Object { return live(dobj) }
}

func monitor(kind string) func(*appv1.DeployObject) runtime.Object {
	return func(dobj *appv1.DeployObject) runtime.Object { return testobjects.LiveMonitor(dobj, kind) }
}

// eachKind are the kinds of child, each with what TestSyncEachKind needs
// of it. The Deployment is not one: it is never removed (see
// deployment_test.go).
func eachKind() []kindCases {
	return []kindCases{
		{
			kind: "Service", resource: "services",
			without: []func(*appv1.DeployObject){func(d *appv1.DeployObject) { d.Spec.Ports = nil }},
			created: []string{"deployments", "services"},
			desired: live(children.DesiredService), live: live(testobjects.LiveService),
			drift: func(obj runtime.Object) { obj.(*corev1.Service).Spec.Ports[0].Port = 81 },
			corrected: func(t *testing.T, _ *appv1.DeployObject, obj runtime.Object) {
				if got := obj.(*corev1.Service); got.Spec.Ports[0].Port != 80 || got.Spec.ClusterIP != "10.96.0.10" {
					t.Errorf("updated Service = %+v, want port 80 back and the clusterIP kept", got.Spec)
				}
			},
		},
		{
			kind: children.KindServiceAccount, resource: "serviceaccounts",
			asks:    []func(*appv1.DeployObject){testobjects.WithServiceAccount},
			created: []string{"serviceaccounts", "deployments", "services"},
			// Before the Deployment, whose pods run as it.
			createdAlso: func(t *testing.T, dobj *appv1.DeployObject, writes []core.Action, _ appv1.DeployObjectStatus) {
				if got := createdOf(t, writes, "deployments").(*appsv1.Deployment).Spec.Template.Spec.ServiceAccountName; got != dobj.Name {
					t.Errorf("the pods run as %q, want %q", got, dobj.Name)
				}
			},
			desired: live(children.DesiredServiceAccount), live: live(testobjects.LiveServiceAccount),
			drift: func(obj runtime.Object) {
				delete(obj.(*corev1.ServiceAccount).Annotations, "eks.amazonaws.com/role-arn")
			},
			corrected: func(t *testing.T, _ *appv1.DeployObject, obj runtime.Object) {
				if got := obj.(*corev1.ServiceAccount); got.Annotations["eks.amazonaws.com/role-arn"] != "arn:aws:iam::111122223333:role/web" {
					t.Errorf("updated ServiceAccount annotations %v, want the role back", got.Annotations)
				}
			},
		},
		{
			kind: children.KindFilesConfigMap, resource: "configmaps",
			name: children.FilesConfigMapName,
			asks: []func(*appv1.DeployObject){testobjects.WithFiles},
			// The ConfigMap of the files of an older pod template stays
			// for a rollback within the history (see TestSyncFiles); with
			// none kept, it goes.
			without: []func(*appv1.DeployObject){func(d *appv1.DeployObject) { d.Spec.RevisionHistoryLimit = ptr.To[int32](0) }},
			created: []string{"configmaps", "deployments", "services"},
			// Before the Deployment, which mounts it.
			createdAlso: func(t *testing.T, dobj *appv1.DeployObject, writes []core.Action, _ appv1.DeployObjectStatus) {
				if d := createdOf(t, writes, "deployments").(*appsv1.Deployment); !mounts(d, children.FilesConfigMapName(dobj)) {
					t.Errorf("the pods do not mount ConfigMap %s: %+v", children.FilesConfigMapName(dobj), d.Spec.Template.Spec.Volumes)
				}
			},
			desired: live(children.DesiredFilesConfigMap),
			live:    func(d *appv1.DeployObject) runtime.Object { return testobjects.LiveFilesConfigMap(d, 0) },
			// Without the label, the clean-up after a rollout would not
			// find it.
			drift: func(obj runtime.Object) { delete(obj.(*corev1.ConfigMap).Labels, appv1.LabelFiles) },
			corrected: func(t *testing.T, _ *appv1.DeployObject, obj runtime.Object) {
				if got := obj.(*corev1.ConfigMap); got.Labels[appv1.LabelFiles] != "true" {
					t.Errorf("updated ConfigMap labels %v, want %s back", got.Labels, appv1.LabelFiles)
				}
			},
			cachesForeign: true,
		},
		{
			kind: children.KindPDB, resource: "poddisruptionbudgets",
			asks:        []func(*appv1.DeployObject){testobjects.WithBudget},
			created:     []string{"deployments", "services", "poddisruptionbudgets"},
			createdAlso: conditionFor(appv1.ConditionDisruptionBudget),
			desired:     live(children.DesiredPDB), live: live(testobjects.LivePDB),
			drift: func(obj runtime.Object) {
				obj.(*policyv1.PodDisruptionBudget).Spec.MinAvailable = ptr.To(intstr.FromInt32(0))
			},
			corrected: func(t *testing.T, _ *appv1.DeployObject, obj runtime.Object) {
				if got := obj.(*policyv1.PodDisruptionBudget).Spec.MinAvailable; got == nil || *got != intstr.FromInt32(1) {
					t.Errorf("updated PodDisruptionBudget minAvailable %v, want 1 back", got)
				}
			},
			condition: appv1.ConditionDisruptionBudget,
		},
		{
			kind: children.KindHPA, resource: "horizontalpodautoscalers",
			asks: []func(*appv1.DeployObject){testobjects.WithAutoscaling},
			// After the PodDisruptionBudget.
			createdAsks: []func(*appv1.DeployObject){testobjects.WithBudget, testobjects.WithAutoscaling},
			created:     []string{"deployments", "services", "poddisruptionbudgets", "horizontalpodautoscalers"},
			createdAlso: conditionFor(appv1.ConditionAutoscaling),
			desired:     optionalChild(children.DesiredHPA), live: live(testobjects.LiveHPA),
			drift: func(obj runtime.Object) { obj.(*autoscalingv2.HorizontalPodAutoscaler).Spec.MaxReplicas = 100 },
			corrected: func(t *testing.T, _ *appv1.DeployObject, obj runtime.Object) {
				if got := obj.(*autoscalingv2.HorizontalPodAutoscaler).Spec.MaxReplicas; got != 5 {
					t.Errorf("updated HorizontalPodAutoscaler maxReplicas %d, want 5 back", got)
				}
			},
			condition: appv1.ConditionAutoscaling,
		},
		{
			kind: children.KindNetworkPolicy, resource: "networkpolicies",
			asks: []func(*appv1.DeployObject){func(d *appv1.DeployObject) {
				testobjects.WithNetworkPolicy(d)
				d.Spec.NetworkPolicy.RouteFrom = nil
			}},
			// Before the Ingress, so that the route's proxies are let in
			// once it serves.
			createdAsks: []func(*appv1.DeployObject){testobjects.WithIngress, testobjects.WithNetworkPolicy},
			created:     []string{"deployments", "services", "networkpolicies", "ingresses"},
			desired:     live(children.DesiredNetworkPolicy), live: live(testobjects.LiveNetworkPolicy),
			drift: func(obj runtime.Object) { obj.(*networkingv1.NetworkPolicy).Spec.Ingress = nil },
			corrected: func(t *testing.T, dobj *appv1.DeployObject, obj runtime.Object) {
				if got, want := obj.(*networkingv1.NetworkPolicy), children.DesiredNetworkPolicy(dobj); !equality.Semantic.DeepEqual(got.Spec, want.Spec) {
					t.Errorf("updated NetworkPolicy = %+v, want the desired spec back", got.Spec)
				}
			},
		},
		{
			kind: children.KindIngress, resource: "ingresses",
			asks:    []func(*appv1.DeployObject){testobjects.WithIngress},
			created: []string{"deployments", "services", "ingresses"},
			createdAlso: func(t *testing.T, _ *appv1.DeployObject, _ []core.Action, st appv1.DeployObjectStatus) {
				if c := conditionOf(st, appv1.ConditionRoute); c == nil || c.Reason != appv1.ReasonProgressing {
					t.Errorf("Route condition = %+v, want Progressing until the ingress controller gives an address", c)
				}
			},
			desired: live(children.DesiredIngress), live: live(testobjects.LiveIngress),
			drift: func(obj runtime.Object) { obj.(*networkingv1.Ingress).Spec.TLS = nil },
			corrected: func(t *testing.T, _ *appv1.DeployObject, obj runtime.Object) {
				if got := obj.(*networkingv1.Ingress); len(got.Spec.TLS) != 1 {
					t.Errorf("updated Ingress = %+v, want TLS back", got.Spec)
				}
			},
			condition: appv1.ConditionRoute,
		},
		{
			kind: children.KindHTTPRoute, resource: "httproutes",
			asks:       []func(*appv1.DeployObject){testobjects.WithHTTPRoute},
			gatewayAPI: true,
			created:    []string{"deployments", "services", "httproutes"},
			desired:    optionalChild(func(d *appv1.DeployObject) (*gatewayv1.HTTPRoute, error) { return children.DesiredHTTPRoute(d, nil) }), live: live(testobjects.LiveHTTPRoute),
			drift:     hostnameAdded,
			corrected: hostnamesCorrected,
			condition: appv1.ConditionRoute,
		},
		{
			kind: children.KindGRPCRoute, resource: "grpcroutes",
			asks:       []func(*appv1.DeployObject){testobjects.WithGRPCRoute},
			gatewayAPI: true,
			created:    []string{"deployments", "services", "grpcroutes"},
			desired:    optionalChild(func(d *appv1.DeployObject) (*gatewayv1.GRPCRoute, error) { return children.DesiredGRPCRoute(d, nil) }), live: live(testobjects.LiveGRPCRoute),
			drift:     hostnameAdded,
			corrected: hostnamesCorrected,
			condition: appv1.ConditionRoute,
		},
		{
			kind: children.KindServiceMonitor, resource: "servicemonitors",
			asks:       []func(*appv1.DeployObject){testobjects.WithServiceMonitor},
			monitoring: true,
			created:    []string{"deployments", "services", "servicemonitors"},
			createdAlso: monitorCreated(func(c *metav1.Condition) bool {
				return c.Message == "ServiceMonitor web scrapes port http of Service web at /metrics"
			}),
			desired: optionalChild(func(d *appv1.DeployObject) (*unstructured.Unstructured, error) {
				return children.DesiredMonitor(d, children.KindServiceMonitor)
			}),
			live:      monitor(children.KindServiceMonitor),
			drift:     endpointsDrift("endpoints", "http"),
			corrected: monitorSpecCorrected(children.KindServiceMonitor),
			condition: appv1.ConditionMonitoring,
		},
		{
			kind: children.KindPodMonitor, resource: "podmonitors",
			asks:       []func(*appv1.DeployObject){testobjects.WithPodMonitor},
			monitoring: true,
			created:    []string{"deployments", "services", "podmonitors"},
			createdAlso: monitorCreated(func(c *metav1.Condition) bool {
				return strings.HasPrefix(c.Message, "PodMonitor web scrapes port exporter")
			}),
			desired: optionalChild(func(d *appv1.DeployObject) (*unstructured.Unstructured, error) {
				return children.DesiredMonitor(d, children.KindPodMonitor)
			}),
			live:      monitor(children.KindPodMonitor),
			drift:     endpointsDrift("podMetricsEndpoints", "exporter"),
			corrected: monitorSpecCorrected(children.KindPodMonitor),
			condition: appv1.ConditionMonitoring,
		},
	}
}

// conditionFor checks that the created case's status has the condition
// condType, for the DeployObject's generation.
func conditionFor(condType string) func(*testing.T, *appv1.DeployObject, []core.Action, appv1.DeployObjectStatus) {
	return func(t *testing.T, dobj *appv1.DeployObject, _ []core.Action, st appv1.DeployObjectStatus) {
		if c := conditionOf(st, condType); c == nil || c.ObservedGeneration != dobj.Generation {
			t.Errorf("condition %s = %+v, want one for generation %d", condType, c, dobj.Generation)
		}
	}
}

// monitorCreated checks that the created case's Monitoring condition is
// True, MonitorCreated, with a message that says.
func monitorCreated(says func(*metav1.Condition) bool) func(*testing.T, *appv1.DeployObject, []core.Action, appv1.DeployObjectStatus) {
	return func(t *testing.T, _ *appv1.DeployObject, _ []core.Action, st appv1.DeployObjectStatus) {
		if c := conditionOf(st, appv1.ConditionMonitoring); c == nil || c.Status != metav1.ConditionTrue || c.Reason != appv1.ReasonMonitorCreated || !says(c) {
			t.Errorf("Monitoring condition = %+v, want MonitorCreated saying what it scrapes", c)
		}
	}
}

// endpointsDrift scrapes port every 5s instead.
func endpointsDrift(field, port string) func(runtime.Object) {
	return func(obj runtime.Object) {
		obj.(*unstructured.Unstructured).Object["spec"].(map[string]any)[field] = []any{map[string]any{"port": port, "interval": "5s"}}
	}
}

func monitorSpecCorrected(kind string) func(*testing.T, *appv1.DeployObject, runtime.Object) {
	return func(t *testing.T, dobj *appv1.DeployObject, obj runtime.Object) {
		got, want := obj.(*unstructured.Unstructured), testobjects.MustDesiredMonitor(dobj, kind)
		if !equality.Semantic.DeepEqual(got.Object["spec"], want.Object["spec"]) {
			t.Errorf("updated %s spec = %v, want the desired %v", kind, got.Object["spec"], want.Object["spec"])
		}
	}
}

// hostnamesOf are the hostnames of a Gateway API route.
func hostnamesOf(route runtime.Object) *[]gatewayv1.Hostname {
	switch r := route.(type) {
	case *gatewayv1.HTTPRoute:
		return &r.Spec.Hostnames
	case *gatewayv1.GRPCRoute:
		return &r.Spec.Hostnames
	}
	panic(fmt.Sprintf("%T is no Gateway API route", route))
}

func hostnameAdded(route runtime.Object) {
	h := hostnamesOf(route)
	*h = append(*h, "evil.example.com")
}

func hostnamesCorrected(t *testing.T, _ *appv1.DeployObject, route runtime.Object) {
	if got := *hostnamesOf(route); !slices.Equal(got, []gatewayv1.Hostname{"shop.example.com"}) {
		t.Errorf("updated %T hostnames %v, want the spec's", route, got)
	}
}

// createdOf is the object of the first create of resource in writes.
func createdOf(t *testing.T, writes []core.Action, resource string) runtime.Object {
	t.Helper()
	for _, a := range writes {
		if c, ok := a.(core.CreateAction); ok && a.GetResource().Resource == resource {
			return c.GetObject()
		}
	}
	t.Fatalf("no %s created", resource)
	return nil
}

// mounts reports whether d's pods mount the ConfigMap name into their
// files.
func mounts(d *appsv1.Deployment, name string) bool {
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, s := range v.Projected.Sources {
			if s.ConfigMap != nil && s.ConfigMap.Name == name {
				return true
			}
		}
	}
	return false
}

// othersMetadata are a label and an annotation someone else put on a
// child; the controller keeps them and is not woken by them.
var othersLabels, othersAnnotations = map[string]string{"audit": "done"}, map[string]string{"note": "x"}

// withOthersMetadata is obj with othersLabels and othersAnnotations.
func withOthersMetadata(obj runtime.Object) runtime.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(err)
	}
	m.SetLabels(children.WithLabels(m.GetLabels(), othersLabels))
	m.SetAnnotations(children.WithLabels(m.GetAnnotations(), othersAnnotations))
	return obj
}

// TestSyncEachKind runs, for each kind of child, the cases every kind has:
// created; steady state writes nothing, however others labelled or
// annotated it; drift corrected on the same object, others' metadata
// kept; removed from the spec, deleted with a UID precondition; a foreign
// object of its name never touched, reported when the spec asks for the
// kind and none of its business when not.
func TestSyncEachKind(t *testing.T) {
	for _, k := range eachKind() {
		serve := func(f *fixture) { f.gatewayAPI, f.monitoring = k.gatewayAPI, k.monitoring }
		asking := func() *appv1.DeployObject { return testobjects.NewDeployObject(k.asks...) }

		t.Run(k.kind+"/created", func(t *testing.T) {
			f := newFixture(t)
			serve(f)
			asks := k.asks
			if k.createdAsks != nil {
				asks = k.createdAsks
			}
			dobj := testobjects.NewDeployObject(asks...)
			res := f.mustSync(dobj)
			var want []string
			for _, r := range k.created {
				name := dobj.Name
				if r == k.resource {
					name = k.nameOf(dobj)
				}
				want = append(want, "create "+r+" "+name)
			}
			writes := f.writes()
			expectActions(t, writes, want...)
			if got := createdOf(t, writes, k.resource); !testobjects.EqualObjects(got, k.desired(dobj)) {
				t.Errorf("created %s differs from desired:\n%s", k.kind, diff.Diff(k.desired(dobj), got))
			}
			if action := "created " + k.kind + " " + k.nameOf(dobj); !slices.Contains(res.Actions, action) {
				t.Errorf("actions %q, want %q", res.Actions, action)
			}
			if k.createdAlso != nil {
				k.createdAlso(t, dobj, writes, statusAfter(dobj, res))
			}
		})
		t.Run(k.kind+"/steady state writes nothing", func(t *testing.T) {
			f := newFixture(t)
			serve(f)
			dobj := asking()
			f.inLine(dobj, withOthersMetadata(k.live(dobj)))
			if c := conditionOf(dobj.Status, k.condition); k.condition != "" && (c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, k.kind+" "+k.nameOf(dobj))) {
				t.Fatalf("%s condition = %+v, want True about %s %s", k.condition, c, k.kind, k.nameOf(dobj))
			}
			res := f.mustSync(dobj)
			expectActions(t, f.writes())
			expectNothingDone(t, dobj, res)
		})
		t.Run(k.kind+"/drift corrected", func(t *testing.T) {
			f := newFixture(t)
			serve(f)
			dobj := asking()
			f.inLine(dobj, withOthersMetadata(k.live(dobj)))
			drifted := withOthersMetadata(k.live(dobj))
			k.drift(drifted)
			f.put(drifted)
			res := f.mustSync(dobj)
			name := k.nameOf(dobj)
			writes := f.writes()
			expectActions(t, writes, "get "+k.resource+" "+name, "update "+k.resource+" "+name)
			got := writes[1].(core.UpdateAction).GetObject()
			k.corrected(t, dobj, got)
			m, err := meta.Accessor(got)
			if err != nil {
				t.Fatal(err)
			}
			if want, _ := meta.Accessor(drifted); m.GetUID() != want.GetUID() || !children.HasLabels(m.GetLabels(), othersLabels) || !children.HasLabels(m.GetAnnotations(), othersAnnotations) {
				t.Errorf("updated %s: uid %s, labels %v, annotations %v; want uid %s, others' label and annotation kept", k.kind, m.GetUID(), m.GetLabels(), m.GetAnnotations(), want.GetUID())
			}
			// What the event tells.
			if want := []string{"updated " + k.kind + " " + name}; !slices.Equal(res.Actions, want) {
				t.Errorf("actions %q, want %q", res.Actions, want)
			}
			expectStatusKept(t, dobj, res)
		})
		t.Run(k.kind+"/removed from the spec", func(t *testing.T) {
			f := newFixture(t)
			serve(f)
			dobj := testobjects.NewDeployObject(k.without...)
			f.inLine(dobj)
			live := k.live(asking())
			f.put(live)
			res := f.mustSync(dobj)
			m, err := meta.Accessor(live)
			if err != nil {
				t.Fatal(err)
			}
			writes := f.writes()
			expectActions(t, writes, "delete "+k.resource+" "+m.GetName())
			if uid := writes[0].(core.DeleteAction).GetDeleteOptions().Preconditions.UID; uid == nil || *uid != m.GetUID() {
				t.Errorf("delete preconditions UID = %v, want %s", uid, m.GetUID())
			}
			if want := []string{"deleted " + k.kind + " " + m.GetName()}; !slices.Equal(res.Actions, want) {
				t.Errorf("actions %q, want %q", res.Actions, want)
			}
			// The status of a DeployObject without the kind, its
			// condition gone.
			expectStatusKept(t, dobj, res)
			if k.condition != "" {
				if c := conditionOf(statusAfter(dobj, res), k.condition); c != nil {
					t.Errorf("condition %s still reported after its child was removed: %+v", k.condition, c)
				}
			}
		})
		t.Run(k.kind+"/foreign one reported, never touched", func(t *testing.T) {
			f := newFixture(t)
			serve(f)
			dobj := asking()
			f.inLine(dobj)
			foreign := k.live(dobj)
			f.remove(foreign)
			m, err := meta.Accessor(foreign)
			if err != nil {
				t.Fatal(err)
			}
			m.SetOwnerReferences(nil)
			m.SetLabels(map[string]string{"team": "other"})
			var want []string
			if k.cachesForeign {
				f.put(foreign)
			} else {
				// Without the managed-by label, not in the cache: the
				// create finds it, the live read shows whose it is.
				f.unlisted = append(f.unlisted, foreign)
				want = []string{"create " + k.resource + " " + m.GetName(), "get " + k.resource + " " + m.GetName()}
			}
			res := f.mustSync(dobj)
			expectActions(t, f.writes(), want...)
			if p := problemOf(res, k.kind); p == nil || p.Reason != appv1.ReasonResourceConflict || !p.Retry {
				t.Errorf("problem = %+v, want a ResourceConflict retried", p)
			}
			for _, condType := range []string{appv1.ConditionReady, k.condition} {
				if c := conditionOf(statusAfter(dobj, res), condType); condType != "" && (c == nil || c.Reason != appv1.ReasonResourceConflict) {
					t.Errorf("%s condition = %+v, want ResourceConflict", condType, c)
				}
			}
		})
		for _, foreign := range []struct {
			name string
			make func(metav1.Object)
		}{
			{"orphan", func(m metav1.Object) { m.SetOwnerReferences(nil) }},
			{"another DeployObject's", func(m metav1.Object) {
				refs := m.GetOwnerReferences()
				refs[0].UID = "uid-of-another-web"
				m.SetOwnerReferences(refs)
			}},
		} {
			t.Run(k.kind+"/foreign one left alone when not asked for: "+foreign.name, func(t *testing.T) {
				f := newFixture(t)
				serve(f)
				dobj := testobjects.NewDeployObject(k.without...)
				f.inLine(dobj)
				obj := k.live(asking())
				m, err := meta.Accessor(obj)
				if err != nil {
					t.Fatal(err)
				}
				foreign.make(m)
				f.put(obj)
				res := f.mustSync(dobj)
				expectActions(t, f.writes())
				expectNothingDone(t, dobj, res)
			})
		}
	}
}

func TestSyncCorrectsServiceDrift(t *testing.T) {
	for _, tc := range []struct {
		name  string
		drift func(*corev1.Service)
	}{
		{"type", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort; s.Spec.Ports[0].NodePort = 30001 }},
		{"selector", func(s *corev1.Service) { s.Spec.Selector = map[string]string{"app": "other"} }},
		{"port", func(s *corev1.Service) { s.Spec.Ports[0].Port = 81 }},
		{"target port", func(s *corev1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromInt32(1) }},
		{"extra port", func(s *corev1.Service) {
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "x", Port: 1, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(1)})
		}},
		{"label", func(s *corev1.Service) { s.Labels[children.NameLabel] = "x" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			dobj := testobjects.NewDeployObject()
			f.inLine(dobj)
			live := testobjects.LiveService(dobj)
			tc.drift(live)
			f.put(live)
			res := f.mustSync(dobj)
			writes := f.writes()
			expectActions(t, writes, "get services web", "update services web")
			got := writes[1].(core.UpdateAction).GetObject().(*corev1.Service)
			// Judged against the desired Service itself, not through
			// MergeService, which would share a blind spot of the code
			// under test.
			want := children.DesiredService(dobj)
			if got.Spec.Type != want.Spec.Type || !maps.Equal(got.Spec.Selector, want.Spec.Selector) || !children.HasLabels(got.Labels, want.Labels) {
				t.Errorf("updated Service: type %s, selector %v, labels %v; want type %s, selector %v, labels %v",
					got.Spec.Type, got.Spec.Selector, got.Labels, want.Spec.Type, want.Spec.Selector, want.Labels)
			}
			if len(got.Spec.Ports) != len(want.Spec.Ports) {
				t.Fatalf("updated Service has ports %+v, want %+v", got.Spec.Ports, want.Spec.Ports)
			}
			for i, p := range got.Spec.Ports {
				w := want.Spec.Ports[i]
				if p.Name != w.Name || p.Port != w.Port || p.TargetPort != w.TargetPort || p.Protocol != w.Protocol || p.NodePort != 0 {
					t.Errorf("updated Service port %+v, want %+v without a node port", p, w)
				}
			}
			if got.Spec.ClusterIP != live.Spec.ClusterIP {
				t.Errorf("clusterIP = %q, want %q kept", got.Spec.ClusterIP, live.Spec.ClusterIP)
			}
			expectStatusKept(t, dobj, res)
		})
	}
}

// TestSyncCorrectsOptionalChildDrift: the PodDisruptionBudget and the
// HorizontalPodAutoscaler are set back whichever field of theirs drifted.
func TestSyncCorrectsOptionalChildDrift(t *testing.T) {
	for _, tc := range []struct {
		name   string
		drift  func(pdb *policyv1.PodDisruptionBudget, hpa *autoscalingv2.HorizontalPodAutoscaler)
		want   []string
		action string
	}{
		{"budget loosened", func(p *policyv1.PodDisruptionBudget, _ *autoscalingv2.HorizontalPodAutoscaler) {
			p.Spec.MinAvailable = ptr.To(intstr.FromInt32(0))
		}, []string{"get poddisruptionbudgets web", "update poddisruptionbudgets web"}, "updated PodDisruptionBudget web"},
		{"budget selects other pods", func(p *policyv1.PodDisruptionBudget, _ *autoscalingv2.HorizontalPodAutoscaler) {
			p.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
		}, []string{"get poddisruptionbudgets web", "update poddisruptionbudgets web"}, "updated PodDisruptionBudget web"},
		{"autoscaler maxReplicas raised", func(_ *policyv1.PodDisruptionBudget, h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.MaxReplicas = 100
		}, []string{"get horizontalpodautoscalers web", "update horizontalpodautoscalers web"}, "updated HorizontalPodAutoscaler web"},
		{"autoscaler pointed at the Deployment", func(_ *policyv1.PodDisruptionBudget, h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
		}, []string{"get horizontalpodautoscalers web", "update horizontalpodautoscalers web"}, "updated HorizontalPodAutoscaler web"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			dobj := testobjects.NewDeployObject(testobjects.WithBudget, testobjects.WithAutoscaling)
			f.inLine(dobj, testobjects.LivePDB(dobj), testobjects.LiveHPA(dobj))
			pdb, hpa := testobjects.LivePDB(dobj), testobjects.LiveHPA(dobj)
			tc.drift(pdb, hpa)
			f.put(pdb, hpa)
			res := f.mustSync(dobj)
			writes := f.writes()
			expectActions(t, writes, tc.want...)
			switch got := writes[1].(core.UpdateAction).GetObject().(type) {
			case *policyv1.PodDisruptionBudget:
				if _, changed := children.MergePDB(got, children.DesiredPDB(dobj)); changed || got.UID != "uid-pdb" {
					t.Errorf("updated PodDisruptionBudget still drifts or lost its identity: %+v", got)
				}
			case *autoscalingv2.HorizontalPodAutoscaler:
				if !children.HPAInSync(got, testobjects.MustDesiredHPA(dobj)) || got.UID != "uid-hpa" {
					t.Errorf("updated HorizontalPodAutoscaler still drifts or lost its identity: %+v", got)
				}
			}
			// What the event tells.
			if !slices.Equal(res.Actions, []string{tc.action}) {
				t.Errorf("actions %q, want %q", res.Actions, tc.action)
			}
			expectStatusKept(t, dobj, res)
		})
	}
}

// TestSyncPreservesForeignFields: what others set on the Deployment and
// the Service, in fields the controller does not own, survives the
// controller's writes.
func TestSyncPreservesForeignFields(t *testing.T) {
	f := newFixture(t)
	dobj := testobjects.NewDeployObject(func(d *appv1.DeployObject) {
		d.Spec.ServiceType = appv1.ServiceTypeNodePort
		d.Spec.Image = "nginx:1.28"
	})
	liveD := testobjects.LiveDeployment(dobj)
	liveD.Spec.Template.Spec.Containers[0].Image = "nginx:1.27"
	liveD.Labels["team"] = "payments"
	liveD.Annotations = map[string]string{"deployment.kubernetes.io/revision": "3"}
	liveD.Spec.Template.Annotations = map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-11-01T10:00:00Z"}
	liveD.Spec.Template.Spec.Containers = append(liveD.Spec.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "envoy"})
	liveD.Spec.Template.Spec.Containers[0].ImagePullPolicy = corev1.PullAlways
	liveS := testobjects.LiveService(dobj)
	liveS.Spec.Ports[0].NodePort = 30080
	liveS.Labels["team"] = "payments"
	liveS.Spec.Ports[0].Port = 81 // drift, so that the Service is written too
	f.inLine(dobj, liveD, liveS)

	f.mustSync(dobj)
	writes := f.writes()
	expectActions(t, writes, "get deployments web", "patch deployments web", "get services web", "update services web")
	gotD := f.storedDeployment()
	if gotD.Labels["team"] != "payments" || gotD.Annotations["deployment.kubernetes.io/revision"] != "3" ||
		gotD.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] == "" {
		t.Errorf("foreign labels or annotations lost: %v %v %v", gotD.Labels, gotD.Annotations, gotD.Spec.Template.Annotations)
	}
	if n := len(gotD.Spec.Template.Spec.Containers); n != 2 || gotD.Spec.Template.Spec.Containers[1].Name != "sidecar" {
		t.Errorf("sidecar container lost: %d containers", n)
	}
	if c := gotD.Spec.Template.Spec.Containers[0]; c.Image != "nginx:1.28" || c.ImagePullPolicy != corev1.PullAlways {
		t.Errorf("container = %s/%s, want the new image and the foreign pull policy", c.Image, c.ImagePullPolicy)
	}
	gotS := writes[3].(core.UpdateAction).GetObject().(*corev1.Service)
	if gotS.Spec.ClusterIP != "10.96.0.10" || gotS.Spec.Ports[0].NodePort != 30080 || gotS.Spec.Ports[0].Port != 80 || gotS.Labels["team"] != "payments" {
		t.Errorf("Service = %+v %v, want clusterIP and nodePort kept, port 80, foreign label kept", gotS.Spec, gotS.Labels)
	}
}
