package children_test

import (
	"maps"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/testobjects"
)

func TestDesiredServiceAccount(t *testing.T) {
	for _, tc := range []struct {
		name        string
		spec        *appv1.OwnedServiceAccount
		accountName string
		want        string // the ServiceAccount's name; "" for none
		annotations map[string]string
	}{
		{name: "none asked for", accountName: "shared", want: ""},
		{name: "named after the DeployObject", spec: &appv1.OwnedServiceAccount{}, want: "web"},
		{name: "named", spec: &appv1.OwnedServiceAccount{Name: "web-runtime"}, want: "web-runtime"},
		{name: "with workload identity annotations",
			spec: &appv1.OwnedServiceAccount{Metadata: &appv1.ChildMetadata{Annotations: map[string]string{"azure.workload.identity/client-id": "0000-1111"}}},
			want: "web",
			annotations: map[string]string{
				"azure.workload.identity/client-id": "0000-1111",
				appv1.AnnotationOwnedMetadata:       "a:azure.workload.identity/client-id",
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject()
			dobj.Spec.ServiceAccount, dobj.Spec.ServiceAccountName = tc.spec, tc.accountName
			sa := children.DesiredServiceAccount(dobj)
			if tc.want == "" {
				if sa != nil {
					t.Fatalf("DesiredServiceAccount = %v, want none", sa.Name)
				}
				if got := children.PodServiceAccountName(dobj); got != tc.accountName {
					t.Errorf("the pods run as %q, want %q", got, tc.accountName)
				}
				return
			}
			if sa.Name != tc.want || children.PodServiceAccountName(dobj) != tc.want {
				t.Errorf("ServiceAccount %q, pods run as %q; want %q for both", sa.Name, children.PodServiceAccountName(dobj), tc.want)
			}
			if !children.HasLabels(sa.Labels, children.SelectorLabels(dobj)) || len(sa.OwnerReferences) != 1 || !*sa.OwnerReferences[0].Controller {
				t.Errorf("ServiceAccount labels %v, owners %v: want the child labels and dobj as controller", sa.Labels, sa.OwnerReferences)
			}
			if !maps.Equal(sa.Annotations, tc.annotations) {
				t.Errorf("annotations = %v, want %v", sa.Annotations, tc.annotations)
			}
			// The desired object must not share the spec's maps.
			if tc.spec != nil && tc.spec.Metadata != nil {
				sa.Annotations["x"] = "y"
				if _, leaked := tc.spec.Metadata.Annotations["x"]; leaked {
					t.Error("the desired ServiceAccount shares the spec's annotations")
				}
			}
		})
	}
}

func TestMergeServiceAccount(t *testing.T) {
	dobj := testobjects.NewDeployObject(testobjects.WithServiceAccount)
	desired := children.DesiredServiceAccount(dobj)
	live := testobjects.LiveServiceAccount(dobj)
	live.Annotations["kubernetes.io/enforce-mountable-secrets"] = "true"
	live.Labels["team"] = "shop"
	live.Secrets = []corev1.ObjectReference{{Name: "web-token"}}
	live.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
	if _, changed := children.MergeServiceAccount(live, desired); changed {
		t.Error("a ServiceAccount with others' keys, secrets and pull secrets is out of line")
	}
	if _, changed := children.MergeServiceAccount(children.SlimServiceAccount(live.DeepCopy()), desired); changed {
		t.Error("a ServiceAccount in line is out of line once slimmed for the cache")
	}

	dobj.Spec.ServiceAccount.Metadata = nil
	merged, changed := children.MergeServiceAccount(live, children.DesiredServiceAccount(dobj))
	if !changed {
		t.Fatal("a ServiceAccount keeping an annotation the spec dropped is in line")
	}
	want := map[string]string{"kubernetes.io/enforce-mountable-secrets": "true"}
	if !maps.Equal(merged.Annotations, want) || merged.Labels["team"] != "shop" || len(merged.Secrets) != 1 || len(merged.ImagePullSecrets) != 1 {
		t.Errorf("merged: annotations %v, labels %v, secrets %v, pull secrets %v; want annotations %v and the rest kept", merged.Annotations, merged.Labels, merged.Secrets, merged.ImagePullSecrets, want)
	}
	if len(live.Annotations) != 3 {
		t.Errorf("the merge changed live: %v", live.Annotations)
	}
}

func TestSupersededServiceAccounts(t *testing.T) {
	named := func(name string) *appv1.DeployObject {
		d := testobjects.NewDeployObject(testobjects.WithServiceAccount)
		d.Spec.ServiceAccount.Name = name
		return d
	}
	owned := []*corev1.ServiceAccount{testobjects.LiveServiceAccount(named("web")), testobjects.LiveServiceAccount(named("web-v2"))}
	foreign := testobjects.LiveServiceAccount(named("other"))
	foreign.OwnerReferences[0].UID = "someone-else"
	owned = append(owned, foreign)
	deployment := func(dobj *appv1.DeployObject, st appsv1.DeploymentStatus) *appsv1.Deployment {
		d := testobjects.LiveDeployment(dobj)
		d.Status = st
		return d
	}
	done := appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 3, UpdatedReplicas: 3}

	withExisting := testobjects.NewDeployObject()
	withExisting.Spec.ServiceAccountName = "web"
	for _, tc := range []struct {
		name string
		dobj *appv1.DeployObject
		d    *appsv1.Deployment
		want []string
	}{
		{"renamed, rolled out", named("web-v2"), deployment(named("web-v2"), done), []string{"web"}},
		{"renamed, older pods left", named("web-v2"), deployment(named("web-v2"), appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 4, UpdatedReplicas: 3}), nil},
		{"renamed, older pods terminating", named("web-v2"), deployment(named("web-v2"), appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 3, UpdatedReplicas: 3, TerminatingReplicas: ptr.To[int32](1)}), nil},
		{"renamed, status of an older spec", named("web-v2"), deployment(named("web-v2"), appsv1.DeploymentStatus{ObservedGeneration: 0, Replicas: 3, UpdatedReplicas: 3}), nil},
		{"renamed, the Deployment not updated yet", named("web-v2"), deployment(named("web"), done), nil},
		{"renamed, no Deployment in the cache", named("web-v2"), nil, nil},
		{"removed, rolled out", testobjects.NewDeployObject(), deployment(testobjects.NewDeployObject(), done), []string{"web", "web-v2"}},
		{"serviceAccountName names one it owns", withExisting, deployment(withExisting, done), []string{"web-v2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, sa := range children.SupersededServiceAccounts(tc.dobj, owned, tc.d) {
				got = append(got, sa.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("superseded = %v, want %v", got, tc.want)
			}
		})
	}
}
