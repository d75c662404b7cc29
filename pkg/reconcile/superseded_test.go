package reconcile

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/caches"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/generated/clientset/versioned/fake"
	"deployobject.dev/controller/pkg/testobjects"
)

// TestSupersededFiles: the clean-up step reads the ReplicaSets only when
// an older ConfigMap of inline files exists, deletes those that no
// ReplicaSet mounts, with a UID precondition, and reports a refused read
// as a problem of the ConfigMap without deleting anything.
func TestSupersededFiles(t *testing.T) {
	with := func(content string) *appv1.DeployObject {
		d := testobjects.NewDeployObject(testobjects.WithFiles)
		d.Spec.Files[0].Content = ptr.To(content)
		d.Spec.RevisionHistoryLimit = ptr.To[int32](1)
		return d
	}
	// Content A, then B, then A again, then C: the Deployment keeps A's
	// ReplicaSet (revision 3) beside C's, and dropped B's.
	a, b, c := with("a\n"), with("b\n"), with("c\n")
	kept := []runtime.Object{testobjects.LiveReplicaSet(a, 3), testobjects.LiveReplicaSet(c, 4)}
	forbidden := func(client *k8sfake.Clientset) {
		client.PrependReactor("list", "replicasets", func(core.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "replicasets"}, "", nil)
		})
	}
	for _, tc := range []struct {
		name       string
		configMaps []*corev1.ConfigMap
		react      func(*k8sfake.Clientset)
		want       []string
		problem    string
	}{
		{"A, B, A again, then C: B goes", []*corev1.ConfigMap{testobjects.LiveFilesConfigMap(a, 1), testobjects.LiveFilesConfigMap(b, 2), testobjects.LiveFilesConfigMap(c, 4)}, nil,
			[]string{"list replicasets", "delete configmaps " + children.FilesConfigMapName(b) + " uid-" + children.FilesConfigMapName(b)}, ""},
		{"only the current one: the ReplicaSets are not read", []*corev1.ConfigMap{testobjects.LiveFilesConfigMap(c, 4)}, nil, nil, ""},
		{"the ReplicaSets may not be read: nothing goes", []*corev1.ConfigMap{testobjects.LiveFilesConfigMap(b, 2), testobjects.LiveFilesConfigMap(c, 4)}, forbidden,
			[]string{"list replicasets"}, appv1.ReasonForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kube := k8sfake.NewClientset(kept...)
			if tc.react != nil {
				tc.react(kube)
			}
			inf, err := caches.NewInformers(kube, fake.NewSimpleClientset(), caches.Scope{}, 0, caches.NamedInformers{})
			if err != nil {
				t.Fatal(err)
			}
			configMaps, _ := inf.Children.InformerFor(&corev1.ConfigMap{})
			for _, cm := range tc.configMaps {
				packed, err := caches.ChildKinds().Transform(cm)
				if err != nil {
					t.Fatal(err)
				}
				if err := configMaps.GetIndexer().Add(packed); err != nil {
					t.Fatal(err)
				}
			}
			p := (&Children{KubeClient: kube, Caches: inf.Children}).newPass(c)
			p.cachedDeployment, p.filesName = testobjects.LiveDeployment(c), children.FilesConfigMapName(c)
			if err := p.superseded(context.Background()); err != nil {
				t.Fatalf("superseded: %v", err)
			}
			var got []string
			for _, a := range kube.Actions() {
				s := a.GetVerb() + " " + a.GetResource().Resource
				if del, ok := a.(core.DeleteAction); ok {
					s += " " + del.GetName() + " " + string(ptr.Deref(del.GetDeleteOptions().Preconditions.UID, ""))
				}
				got = append(got, s)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("requests %q, want %q", got, tc.want)
			}
			var reasons []string
			for _, pr := range p.out.Problems {
				reasons = append(reasons, pr.Kind+" "+pr.Reason)
			}
			if want := map[bool][]string{true: {children.KindFilesConfigMap + " " + tc.problem}}[tc.problem != ""]; !slices.Equal(reasons, want) {
				t.Errorf("problems %q, want %q", reasons, want)
			}
		})
	}
}
