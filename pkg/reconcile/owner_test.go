package reconcile

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	core "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/testobjects"
)

func TestSyncAdoptsOrphans(t *testing.T) {
	f := newFixture(t)
	dobj := testobjects.NewDeployObject()
	d, s := testobjects.LiveDeployment(dobj), testobjects.LiveService(dobj)
	d.OwnerReferences, s.OwnerReferences = nil, []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "keep", UID: "uid-cm"}}
	f.put(d, s)
	res := f.mustSync(dobj)
	// The owner is read once, fresh, for both adoptions (the Kubernetes
	// client's actions are listed before the DeployObject client's).
	writes := f.writes()
	expectActions(t, writes, "patch deployments web", "patch services web", "get deployobjects web")
	for i, want := range []struct {
		rv   string
		refs int
	}{{d.ResourceVersion, 1}, {s.ResourceVersion, 2}} {
		p := writes[i].(core.PatchAction)
		var patch struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		if err := yaml.Unmarshal(p.GetPatch(), &patch); err != nil {
			t.Fatal(err)
		}
		refs := patch.Metadata.OwnerReferences
		if p.GetPatchType() != types.MergePatchType || patch.Metadata.ResourceVersion != want.rv || len(refs) != want.refs || !metav1.IsControlledBy(&patch.Metadata, dobj) {
			t.Errorf("%s patch = %s %s, want a merge patch at resourceVersion %s keeping %d owners with the DeployObject as controller", p.GetResource().Resource, p.GetPatchType(), p.GetPatch(), want.rv, want.refs-1)
		}
	}
	if ready := readyOf(t, dobj, res); ready.Reason != appv1.ReasonAvailable {
		t.Errorf("Ready reason = %s, want Available", ready.Reason)
	}
}

func TestSyncAdoptsOnlyForTheLiveOwner(t *testing.T) {
	for _, tc := range []struct {
		name  string
		apply func(*appv1.DeployObject)
	}{
		{"re-created meanwhile", func(d *appv1.DeployObject) { d.UID = "uid-new-web" }},
		{"being deleted", func(d *appv1.DeployObject) { d.DeletionTimestamp, d.Finalizers = &testobjects.FixedNow, []string{"x"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			dobj := testobjects.NewDeployObject()
			d := testobjects.LiveDeployment(dobj)
			d.OwnerReferences = nil
			f.put(d, testobjects.LiveService(dobj))
			c := f.newChildren(dobj)
			live := dobj.DeepCopy()
			tc.apply(live)
			if err := f.client.Tracker().Update(testobjects.ResDObj, live, live.Namespace); err != nil {
				t.Fatal(err)
			}
			f.client.ClearActions()
			if _, err := f.syncWith(c, dobj); err == nil {
				t.Error("sync succeeded, want an error so that the next sync decides on a fresh cache")
			}
			expectActions(t, f.writes(), "get deployobjects web")
		})
	}
}

// TestSyncAdoptsOrphansOfEveryKind: after `kubectl delete dobj
// --cascade=orphan` the garbage collector removes the children's
// ownerReferences and leaves their labels; the DeployObject applied again
// (a new UID) adopts every kind of child with one merge patch each, at the
// cached resourceVersion, and is not left in ResourceConflict.
func TestSyncAdoptsOrphansOfEveryKind(t *testing.T) {
	flags := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "flags", Namespace: testobjects.NewDeployObject().Namespace}, Data: map[string]string{"flags.json": "{}"}}
	for _, tc := range []struct {
		name   string
		mutate []func(*appv1.DeployObject)
		want   []string
	}{
		{"typed kinds, Ingress and ServiceMonitor",
			[]func(*appv1.DeployObject){testobjects.WithServiceAccount, testobjects.WithFiles, testobjects.WithBudget, testobjects.WithAutoscaling,
				testobjects.WithNetworkPolicy, testobjects.WithIngress, testobjects.WithServiceMonitor},
			[]string{"serviceaccounts", "configmaps", "deployments", "services", "poddisruptionbudgets", "horizontalpodautoscalers", "networkpolicies", "ingresses", "servicemonitors"}},
		{"HTTPRoute with its https redirect",
			[]func(*appv1.DeployObject){testobjects.WithFiles, testobjects.WithHTTPSRedirect},
			[]string{"configmaps", "deployments", "services", "httproutes", "httproutes"}},
		{"GRPCRoute and PodMonitor",
			[]func(*appv1.DeployObject){testobjects.WithGRPCRoute, testobjects.WithPodMonitor},
			[]string{"deployments", "services", "grpcroutes", "podmonitors"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.gatewayAPI, f.monitoring = true, true
			dobj := testobjects.NewDeployObject(tc.mutate...)
			live := []runtime.Object{flags}
			for _, obj := range []runtime.Object{
				testobjects.LiveServiceAccount(dobj), testobjects.LiveFilesConfigMap(dobj, 0), testobjects.LivePDB(dobj), testobjects.LiveHPA(dobj),
				testobjects.LiveNetworkPolicy(dobj), testobjects.LiveIngress(dobj), testobjects.LiveHTTPRoute(dobj), testobjects.LiveHTTPSRedirect(dobj),
				testobjects.LiveGRPCRoute(dobj), testobjects.LiveMonitor(dobj, children.MonitorKind(dobj)),
			} {
				// The Live functions return typed nils for what dobj
				// does not ask for.
				if !reflect.ValueOf(obj).IsNil() {
					live = append(live, obj)
				}
			}
			f.inLine(dobj, live...)
			for _, obj := range f.cached {
				if o := obj.(metav1.Object); o.GetName() != flags.Name {
					o.SetOwnerReferences(nil)
				}
			}
			// The DeployObject applied again is a new object.
			dobj.UID, dobj.Status = "uid-web-again", appv1.DeployObjectStatus{}

			res := f.mustSync(dobj)
			var adopted []string
			for _, a := range f.writes() {
				if a.GetResource().Resource == "deployobjects" {
					// The owner, read fresh before adopting.
					continue
				}
				p, ok := a.(core.PatchAction)
				if !ok || p.GetPatchType() != types.MergePatchType {
					t.Errorf("%s, want only adoption patches of the children", describe(a))
					continue
				}
				var patch struct {
					Metadata metav1.ObjectMeta `json:"metadata"`
				}
				if err := yaml.Unmarshal(p.GetPatch(), &patch); err != nil {
					t.Fatal(err)
				}
				if !metav1.IsControlledBy(&patch.Metadata, dobj) || patch.Metadata.ResourceVersion == "" {
					t.Errorf("%s patch %s, want the new DeployObject as controller, at the cached resourceVersion", p.GetResource().Resource, p.GetPatch())
				}
				adopted = append(adopted, p.GetResource().Resource)
			}
			if !slices.Equal(adopted, tc.want) {
				t.Errorf("adopted %v, want %v", adopted, tc.want)
			}
			if r := readyOf(t, dobj, res); r.Reason == appv1.ReasonResourceConflict {
				t.Errorf("Ready = %+v after adopting every child", r)
			}
		})
	}
}
