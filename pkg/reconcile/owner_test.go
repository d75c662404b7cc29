package reconcile

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	core "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
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
