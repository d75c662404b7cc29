package main

import (
	"encoding/json"
	"reflect"
	"testing"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
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
			delete(d.Labels, nameLabel)
			delete(s.Labels, nameLabel)
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
			dobj := newDeployObject()
			full := liveDeployment(dobj)
			full.Annotations = map[string]string{"deployment.kubernetes.io/revision": "2"}
			full.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}}
			full.Spec.Template.Spec.Containers = append(full.Spec.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "envoy", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}})
			fullSvc := liveService(dobj)
			drift(full, fullSvc)

			slim := slimDeployment(full.DeepCopy())
			slimSvc := slimService(fullSvc.DeepCopy())
			if a, b := deploymentInSync(full, desiredDeployment(dobj, profileNone)), deploymentInSync(slim, desiredDeployment(dobj, profileNone)); a != b {
				t.Errorf("deploymentMatches: full %v, slim %v", a, b)
			}
			_, a := mergeService(fullSvc, desiredService(dobj))
			_, b := mergeService(slimSvc, desiredService(dobj))
			if a != b {
				t.Errorf("mergeService changed: full %v, slim %v", a, b)
			}
			if !metav1.IsControlledBy(slim, dobj) || !metav1.IsControlledBy(slimSvc, dobj) {
				t.Error("ownership lost")
			}
			fullReady := readyCondition(dobj, syncOutcome{deployment: full, service: fullSvc})
			slimReady := readyCondition(dobj, syncOutcome{deployment: slim, service: slimSvc})
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
	dobj := inSync(newDeployObject())
	dobj.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{...}"}
	dobj.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	want := dobj.DeepCopy()
	got, err := transformObject(dobj)
	if err != nil {
		t.Fatal(err)
	}
	d := got.(*appv1.DeployObject)
	if d.Annotations != nil || d.ManagedFields != nil {
		t.Error("annotations and managedFields are kept")
	}
	if !equalObjects(d.Spec, want.Spec) || !equalObjects(d.Status, want.Status) || d.UID != want.UID || d.Generation != want.Generation {
		t.Error("the transform changed what the controller reads")
	}
	if other, _ := transformObject("tombstone"); other != "tombstone" {
		t.Error("unknown objects must pass unchanged")
	}
}

// TestTransformCachesListedAndWatchedAlike: a DeployObject from a list
// carries its kind and API version, one from a watch does not; the cache
// must hold the same object for both, or client-go's watch-list
// consistency detector (KUBE_WATCHLIST_INCONSISTENCY_DETECTOR) panics the
// controller at every start, as it did in the e2e suite.
func TestTransformCachesListedAndWatchedAlike(t *testing.T) {
	watched := inSync(newDeployObject())
	watched.TypeMeta = metav1.TypeMeta{}
	listed := watched.DeepCopy()
	listed.TypeMeta = metav1.TypeMeta{APIVersion: appv1.SchemeGroupVersion.String(), Kind: "DeployObject"}
	a, _ := transformObject(listed)
	b, _ := transformObject(watched)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("listed and watched DeployObjects are cached differently:\n%+v\n%+v", a, b)
	}
}

// TestTransformSharesStrings: two objects decoded separately, as two watch
// events are, hold their own copies of every string; after the transform
// the strings all children repeat are one copy, and an object's labels and
// owner reference hold its name's bytes, with nothing changed in value.
func TestTransformSharesStrings(t *testing.T) {
	dobj := newDeployObject()
	decoded := func() (*appsv1.Deployment, *corev1.Service) {
		var d appsv1.Deployment
		var s corev1.Service
		roundTrip(t, liveDeployment(dobj), &d)
		roundTrip(t, liveService(dobj), &s)
		return &d, &s
	}
	d1, s1 := decoded()
	d2, s2 := decoded()
	if unsafe.StringData(d1.Namespace) == unsafe.StringData(d2.Namespace) {
		t.Fatal("decoding already shares strings; this test would prove nothing")
	}
	wantD, wantS := d1.DeepCopy(), s1.DeepCopy()
	for _, o := range []any{d1, s1, d2, s2} {
		if _, err := transformObject(o); err != nil {
			t.Fatal(err)
		}
	}

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
	same("namespace", d1.Namespace, s2.Namespace)
	same("owner API version", d1.OwnerReferences[0].APIVersion, s2.OwnerReferences[0].APIVersion)
	same("owner kind", d1.OwnerReferences[0].Kind, d2.OwnerReferences[0].Kind)
	same("owner name", d1.OwnerReferences[0].Name, d1.Name)
	same("image", d1.Spec.Template.Spec.Containers[0].Image, d2.Spec.Template.Spec.Containers[0].Image)
	same("port protocol", string(s1.Spec.Ports[0].Protocol), string(d2.Spec.Template.Spec.Containers[0].Ports[0].Protocol))
	same("service type", string(s1.Spec.Type), string(s2.Spec.Type))
	for _, key := range []string{managedByLabel, nameLabel} {
		same("label key "+key, keyOf(d1.Labels, key), keyOf(s2.Labels, key))
	}
	same("template label key", keyOf(d1.Spec.Template.Labels, nameLabel), keyOf(s2.Spec.Selector, nameLabel))
	same("managed-by value", d1.Labels[managedByLabel], s2.Labels[managedByLabel])
	same("name label value", d1.Labels[nameLabel], d1.Name)
	same("selector value", s1.Spec.Selector[nameLabel], s1.Name)

	if !sameMap(d1.Labels, d1.Spec.Template.Labels) {
		t.Error("a Deployment in sync holds the same labels twice")
	}
	if !equalObjects(d1.Labels, wantD.Labels) || !equalObjects(d1.Spec.Template.Labels, wantD.Spec.Template.Labels) ||
		!equalObjects(s1.Spec.Selector, wantS.Spec.Selector) || !equalObjects(d1.OwnerReferences, wantD.OwnerReferences) {
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

// TestTransformKeepsDifferentTemplateLabels: labels someone added to the
// Deployment alone keep the two maps apart, each with its own content.
func TestTransformKeepsDifferentTemplateLabels(t *testing.T) {
	d := liveDeployment(newDeployObject())
	d.Labels["team"] = "web"
	want := d.DeepCopy()
	slim := slimDeployment(d)
	if sameMap(slim.Labels, slim.Spec.Template.Labels) {
		t.Error("different labels share one map")
	}
	if !equalObjects(slim.Labels, want.Labels) || !equalObjects(slim.Spec.Template.Labels, want.Spec.Template.Labels) {
		t.Errorf("labels changed: %v and %v, want %v and %v", slim.Labels, slim.Spec.Template.Labels, want.Labels, want.Spec.Template.Labels)
	}
}

func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
