package children_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/testobjects"
)

// canaryOwner is the controller ownerReference every child of
// testobjects.NewDeployObject carries.
var canaryOwner = []metav1.OwnerReference{{
	APIVersion: "app.deployobject.dev/v1", Kind: "DeployObject", Name: "web", UID: "uid-web",
	Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
}}

func TestCanaryReplicaSetName(t *testing.T) {
	if got := children.CanaryReplicaSetName(testobjects.NewDeployObject(), "5d8f7c9b6d-2"); got != "web-canary-5d8f7c9b6d-2" {
		t.Errorf("name %q, want web-canary-5d8f7c9b6d-2", got)
	}
}

func TestDesiredCanaryReplicaSet(t *testing.T) {
	container := corev1.Container{Name: "app", Image: "nginx:1.28"}
	for _, tc := range []struct {
		name     string
		template corev1.PodTemplateSpec
		id       string
		replicas int32
		want     *appsv1.ReplicaSet
	}{
		{
			name: "the Deployment's template, with the id as its pod-template-hash",
			template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      map[string]string{"app.kubernetes.io/managed-by": "deployobject-controller", "app.deployobject.dev/name": "web", "team": "shop"},
					Annotations: map[string]string{"app.deployobject.dev/template-hash": "abc"},
				},
				Spec: corev1.PodSpec{Containers: []corev1.Container{container}},
			},
			id: "5d8f7c9b6d-1", replicas: 1,
			want: &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{
					Name: "web-canary-5d8f7c9b6d-1", Namespace: "apps",
					Labels: map[string]string{
						"app.kubernetes.io/managed-by": "deployobject-controller", "app.deployobject.dev/name": "web",
						"app.deployobject.dev/canary": "5d8f7c9b6d-1",
					},
					OwnerReferences: canaryOwner,
				},
				Spec: appsv1.ReplicaSetSpec{
					Replicas: ptr.To[int32](1),
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.deployobject.dev/name": "web", "pod-template-hash": "5d8f7c9b6d-1"}},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{
							Labels: map[string]string{
								"app.kubernetes.io/managed-by": "deployobject-controller", "app.deployobject.dev/name": "web", "team": "shop",
								"pod-template-hash": "5d8f7c9b6d-1",
							},
							Annotations: map[string]string{"app.deployobject.dev/template-hash": "abc"},
						},
						Spec: corev1.PodSpec{Containers: []corev1.Container{container}},
					},
				},
			},
		},
		{
			name: "a pod-template-hash in the template is replaced by the id",
			template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.deployobject.dev/name": "web", "pod-template-hash": "7b9c"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{container}},
			},
			id: "5d8f7c9b6d-2", replicas: 3,
			want: &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{
					Name: "web-canary-5d8f7c9b6d-2", Namespace: "apps",
					Labels: map[string]string{
						"app.kubernetes.io/managed-by": "deployobject-controller", "app.deployobject.dev/name": "web",
						"app.deployobject.dev/canary": "5d8f7c9b6d-2",
					},
					OwnerReferences: canaryOwner,
				},
				Spec: appsv1.ReplicaSetSpec{
					Replicas: ptr.To[int32](3),
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.deployobject.dev/name": "web", "pod-template-hash": "5d8f7c9b6d-2"}},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.deployobject.dev/name": "web", "pod-template-hash": "5d8f7c9b6d-2"}},
						Spec:       corev1.PodSpec{Containers: []corev1.Container{container}},
					},
				},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.template.DeepCopy()
			got := children.DesiredCanaryReplicaSet(testobjects.NewDeployObject(), tc.template, tc.id, tc.replicas)
			if !testobjects.EqualObjects(got, tc.want) {
				t.Fatalf("got\n%+v\nwant\n%+v", got, tc.want)
			}
			if !testobjects.EqualObjects(&tc.template, before) {
				t.Errorf("the caller's template changed: %+v", tc.template)
			}
			got.Spec.Template.Labels["x"] = "y"
			for k := range got.Spec.Template.Annotations {
				got.Spec.Template.Annotations[k] = "changed"
			}
			got.Spec.Template.Spec.Containers[0].Image = "changed"
			if !testobjects.EqualObjects(&tc.template, before) {
				t.Error("the desired ReplicaSet points into the caller's template")
			}
		})
	}
}

func TestMergeCanaryReplicaSet(t *testing.T) {
	dobj := testobjects.NewDeployObject()
	desired := children.DesiredCanaryReplicaSet(dobj, children.DesiredDeployment(dobj, children.ProfileNone).Spec.Template, "5d8f7c9b6d-1", 2)
	for _, tc := range []struct {
		name         string
		drift        func(*appsv1.ReplicaSet)
		wantChange   bool
		wantReplicas int32
		wantLabels   map[string]string
	}{
		{"in sync", func(*appsv1.ReplicaSet) {}, false, 2, map[string]string{
			"app.kubernetes.io/managed-by": "deployobject-controller", "app.deployobject.dev/name": "web", "app.deployobject.dev/canary": "5d8f7c9b6d-1",
		}},
		{"others' labels and template fields are theirs", func(rs *appsv1.ReplicaSet) {
			rs.Labels["team"] = "shop"
			rs.Spec.Template.Spec.SchedulerName = "default-scheduler"
			rs.Spec.MinReadySeconds = 5
		}, false, 2, map[string]string{
			"app.kubernetes.io/managed-by": "deployobject-controller", "app.deployobject.dev/name": "web", "app.deployobject.dev/canary": "5d8f7c9b6d-1", "team": "shop",
		}},
		{"the template and selector are never brought in line", func(rs *appsv1.ReplicaSet) {
			rs.Spec.Template.Spec.Containers[0].Image = "nginx:1.26"
			rs.Spec.Selector.MatchLabels["x"] = "y"
		}, false, 2, map[string]string{
			"app.kubernetes.io/managed-by": "deployobject-controller", "app.deployobject.dev/name": "web", "app.deployobject.dev/canary": "5d8f7c9b6d-1",
		}},
		{"scaled by someone else", func(rs *appsv1.ReplicaSet) { rs.Spec.Replicas = ptr.To[int32](5) }, true, 2, map[string]string{
			"app.kubernetes.io/managed-by": "deployobject-controller", "app.deployobject.dev/name": "web", "app.deployobject.dev/canary": "5d8f7c9b6d-1",
		}},
		{"replicas unset", func(rs *appsv1.ReplicaSet) { rs.Spec.Replicas = nil }, true, 2, map[string]string{
			"app.kubernetes.io/managed-by": "deployobject-controller", "app.deployobject.dev/name": "web", "app.deployobject.dev/canary": "5d8f7c9b6d-1",
		}},
		{"canary label removed", func(rs *appsv1.ReplicaSet) { delete(rs.Labels, "app.deployobject.dev/canary") }, true, 2, map[string]string{
			"app.kubernetes.io/managed-by": "deployobject-controller", "app.deployobject.dev/name": "web", "app.deployobject.dev/canary": "5d8f7c9b6d-1",
		}},
		{"managed-by label changed, another kept", func(rs *appsv1.ReplicaSet) {
			rs.Labels["app.kubernetes.io/managed-by"] = "helm"
			rs.Labels["team"] = "shop"
		}, true, 2, map[string]string{
			"app.kubernetes.io/managed-by": "deployobject-controller", "app.deployobject.dev/name": "web", "app.deployobject.dev/canary": "5d8f7c9b6d-1", "team": "shop",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live := desired.DeepCopy()
			live.UID, live.ResourceVersion, live.Generation = "uid-canary", "50", 1
			tc.drift(live)
			before := live.DeepCopy()
			got, changed := children.MergeCanaryReplicaSet(live, desired)
			if changed != tc.wantChange {
				t.Fatalf("changed = %v, want %v", changed, tc.wantChange)
			}
			if !testobjects.EqualObjects(live, before) {
				t.Error("MergeCanaryReplicaSet modified live")
			}
			if !changed && got != live {
				t.Error("in line, but not live itself")
			}
			if *got.Spec.Replicas != tc.wantReplicas || !testobjects.EqualObjects(got.Labels, tc.wantLabels) {
				t.Errorf("replicas %d labels %v, want %d %v", *got.Spec.Replicas, got.Labels, tc.wantReplicas, tc.wantLabels)
			}
			if !testobjects.EqualObjects(got.Spec.Template, live.Spec.Template) || !testobjects.EqualObjects(got.Spec.Selector, live.Spec.Selector) ||
				got.Spec.MinReadySeconds != live.Spec.MinReadySeconds || got.UID != live.UID || got.ResourceVersion != live.ResourceVersion {
				t.Error("the template, selector or others' fields are not live's")
			}
			if _, again := children.MergeCanaryReplicaSet(got, desired); again {
				t.Error("the merged ReplicaSet is not in line")
			}
			if changed && got.Spec.Replicas == desired.Spec.Replicas {
				t.Error("the merged ReplicaSet points into the desired one")
			}
		})
	}
}

// TestSlimCanaryReplicaSet: the cache keeps the identity, labels, owners,
// replicas, selector and counts, and nothing else; the slim copy is in
// line exactly when the whole object is.
func TestSlimCanaryReplicaSet(t *testing.T) {
	deleted := metav1.NewTime(testobjects.FixedNow.Time)
	full := &appsv1.ReplicaSet{
		TypeMeta: metav1.TypeMeta{},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-canary-5d8f7c9b6d-1", Namespace: "apps", UID: "uid-canary", ResourceVersion: "50", Generation: 3,
			CreationTimestamp: testobjects.FixedNow,
			Labels: map[string]string{
				"app.kubernetes.io/managed-by": "deployobject-controller", "app.deployobject.dev/name": "web", "app.deployobject.dev/canary": "5d8f7c9b6d-1",
			},
			Annotations:       map[string]string{"note": "x"},
			OwnerReferences:   canaryOwner,
			DeletionTimestamp: &deleted,
			Finalizers:        []string{"example.com/f"},
			ManagedFields:     []metav1.ManagedFieldsEntry{{Manager: "deployobject-controller"}},
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        ptr.To[int32](2),
			MinReadySeconds: 5,
			Selector:        &metav1.LabelSelector{MatchLabels: map[string]string{"app.deployobject.dev/name": "web", "pod-template-hash": "5d8f7c9b6d-1"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.deployobject.dev/name": "web", "pod-template-hash": "5d8f7c9b6d-1"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.28"}}},
			},
		},
		Status: appsv1.ReplicaSetStatus{
			Replicas: 2, FullyLabeledReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 1, TerminatingReplicas: ptr.To[int32](1), ObservedGeneration: 3,
			Conditions: []appsv1.ReplicaSetCondition{{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionFalse}},
		},
	}
	want := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-canary-5d8f7c9b6d-1", Namespace: "apps", UID: "uid-canary", ResourceVersion: "50", Generation: 3,
			Labels: map[string]string{
				"app.kubernetes.io/managed-by": "deployobject-controller", "app.deployobject.dev/name": "web", "app.deployobject.dev/canary": "5d8f7c9b6d-1",
			},
			OwnerReferences:   canaryOwner,
			DeletionTimestamp: &deleted,
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.deployobject.dev/name": "web", "pod-template-hash": "5d8f7c9b6d-1"}},
		},
		Status: appsv1.ReplicaSetStatus{Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 1, ObservedGeneration: 3},
	}
	if got := children.SlimCanaryReplicaSet(full.DeepCopy()); !testobjects.EqualObjects(got, want) {
		t.Errorf("slim\n%+v\nwant\n%+v", got, want)
	}

	dobj := testobjects.NewDeployObject()
	desired := children.DesiredCanaryReplicaSet(dobj, full.Spec.Template, "5d8f7c9b6d-1", 2)
	for name, drift := range map[string]func(*appsv1.ReplicaSet){
		"in sync":       func(*appsv1.ReplicaSet) {},
		"replicas":      func(rs *appsv1.ReplicaSet) { rs.Spec.Replicas = ptr.To[int32](1) },
		"label removed": func(rs *appsv1.ReplicaSet) { delete(rs.Labels, "app.deployobject.dev/canary") },
		"template":      func(rs *appsv1.ReplicaSet) { rs.Spec.Template.Spec.Containers[0].Image = "x" },
	} {
		t.Run(name, func(t *testing.T) {
			live := full.DeepCopy()
			drift(live)
			_, a := children.MergeCanaryReplicaSet(live, desired)
			_, b := children.MergeCanaryReplicaSet(children.SlimCanaryReplicaSet(live.DeepCopy()), desired)
			if a != b {
				t.Errorf("MergeCanaryReplicaSet changed: full %v, slim %v", a, b)
			}
		})
	}
}

// TestChildrenSelectCanaryPods: the children that reach the DeployObject's
// pods reach the canary's pods too (its ReplicaSet's pod template): the
// PodDisruptionBudget, the NetworkPolicy and the PodMonitor select them,
// and the ServiceMonitor selects the canary Service, which selects them.
// The canary Service and ReplicaSet select no stable pod, and the stable
// Service pinned (Route mode) no canary pod; unpinned (ReplicaRatio) it
// selects both.
func TestChildrenSelectCanaryPods(t *testing.T) {
	const id, stableHash = "5d8f7c9b6d-1", "7b9c6d5f4"
	every := func(mutate ...func(*appv1.DeployObject)) *appv1.DeployObject {
		return testobjects.NewDeployObject(append([]func(*appv1.DeployObject){
			testobjects.WithHTTPRoute, testobjects.WithBudget, testobjects.WithNetworkPolicy,
			func(d *appv1.DeployObject) {
				d.Spec.PodMetadata = &appv1.PodMetadata{Labels: map[string]string{"team": "shop"}}
				d.Spec.Canary = &appv1.Canary{Steps: []appv1.CanaryStep{{SetWeight: ptr.To[int32](20)}}}
			},
		}, mutate...)...)
	}
	selectorOf := func(t *testing.T, s *metav1.LabelSelector) labels.Selector {
		t.Helper()
		sel, err := metav1.LabelSelectorAsSelector(s)
		if err != nil {
			t.Fatal(err)
		}
		return sel
	}
	monitorSelector := func(t *testing.T, dobj *appv1.DeployObject, kind string) labels.Selector {
		t.Helper()
		m, err := children.DesiredMonitor(dobj, kind)
		if err != nil || m == nil {
			t.Fatalf("%s: %v, %v", kind, m, err)
		}
		raw, ok, err := unstructured.NestedMap(m.Object, "spec", "selector")
		if err != nil || !ok {
			t.Fatalf("%s has no spec.selector: %v", kind, err)
		}
		var s metav1.LabelSelector
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &s); err != nil {
			t.Fatal(err)
		}
		return selectorOf(t, &s)
	}
	for _, tc := range []struct {
		kind string
		with func(*appv1.DeployObject)
		// selector is the child's; it selects pods, or Services (of).
		selector func(*testing.T, *appv1.DeployObject) labels.Selector
		of       string
		// canary, stable: whether it selects the canary's (pods or
		// Service) and the stable's.
		canary, stable bool
	}{
		{children.KindPDB, testobjects.WithServiceMonitor, func(t *testing.T, d *appv1.DeployObject) labels.Selector {
			return selectorOf(t, children.DesiredPDB(d).Spec.Selector)
		}, "pods", true, true},
		{children.KindNetworkPolicy, testobjects.WithServiceMonitor, func(t *testing.T, d *appv1.DeployObject) labels.Selector {
			return selectorOf(t, &children.DesiredNetworkPolicy(d).Spec.PodSelector)
		}, "pods", true, true},
		{children.KindPodMonitor, testobjects.WithPodMonitor, func(t *testing.T, d *appv1.DeployObject) labels.Selector {
			return monitorSelector(t, d, children.KindPodMonitor)
		}, "pods", true, true},
		{children.KindServiceMonitor, testobjects.WithServiceMonitor, func(t *testing.T, d *appv1.DeployObject) labels.Selector {
			return monitorSelector(t, d, children.KindServiceMonitor)
		}, "Services", true, true},
		{"canary Service", testobjects.WithServiceMonitor, func(_ *testing.T, d *appv1.DeployObject) labels.Selector {
			return labels.SelectorFromSet(children.DesiredCanaryService(d, id).Spec.Selector)
		}, "pods", true, false},
		{"Service pinned to the stable pods", testobjects.WithServiceMonitor, func(_ *testing.T, d *appv1.DeployObject) labels.Selector {
			return labels.SelectorFromSet(children.PinnedService(children.DesiredService(d), stableHash).Spec.Selector)
		}, "pods", false, true},
		{"Service unpinned", testobjects.WithServiceMonitor, func(_ *testing.T, d *appv1.DeployObject) labels.Selector {
			return labels.SelectorFromSet(children.DesiredService(d).Spec.Selector)
		}, "pods", true, true},
		{children.KindCanaryReplicaSet, testobjects.WithServiceMonitor, func(t *testing.T, d *appv1.DeployObject) labels.Selector {
			return selectorOf(t, children.DesiredCanaryReplicaSet(d, children.DesiredDeployment(d, children.ProfileNone).Spec.Template, id, 1).Spec.Selector)
		}, "pods", true, false},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			// The canary's and the stable's pods or Services of d.
			subjects := func(d *appv1.DeployObject) [2]labels.Set {
				template := children.DesiredDeployment(d, children.ProfileNone).Spec.Template
				if tc.of == "Services" {
					return [2]labels.Set{children.DesiredCanaryService(d, id).Labels, children.DesiredService(d).Labels}
				}
				// The Deployment controller adds the stable pods' hash.
				return [2]labels.Set{
					children.DesiredCanaryReplicaSet(d, template, id, 1).Spec.Template.Labels,
					children.WithLabels(template.Labels, map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: stableHash}),
				}
			}
			dobj := every(tc.with)
			sel := tc.selector(t, dobj)
			of := subjects(dobj)
			if got := sel.Matches(of[0]); got != tc.canary {
				t.Errorf("selector %q selects the canary's %s %v: %v, want %v", sel, tc.of, of[0], got, tc.canary)
			}
			if got := sel.Matches(of[1]); got != tc.stable {
				t.Errorf("selector %q selects the stable's %s %v: %v, want %v", sel, tc.of, of[1], got, tc.stable)
			}
			// Not every pod or Service: none of another DeployObject.
			other := every(tc.with, func(d *appv1.DeployObject) { d.Name = "api" })
			for _, l := range subjects(other) {
				if sel.Matches(l) {
					t.Errorf("selector %q selects %s %v of DeployObject api", sel, tc.of, l)
				}
			}
		})
	}
}
