package main

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// The benchmark's observer takes a DeployObject for Ready only with Ready
// True at its generation; the peer must say so exactly when the Deployment
// has rolled out.
func TestSetStatusReady(t *testing.T) {
	rolledOut := func() *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Generation: 2},
			Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](3)},
			Status:     appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, UpdatedReplicas: 3},
		}
	}
	tests := []struct {
		name   string
		change func(*appsv1.Deployment)
		want   metav1.ConditionStatus
	}{
		{"rolled out", func(*appsv1.Deployment) {}, metav1.ConditionTrue},
		{"template not yet observed", func(d *appsv1.Deployment) { d.Status.ObservedGeneration = 1 }, metav1.ConditionFalse},
		{"old pods left", func(d *appsv1.Deployment) { d.Status.Replicas = 4 }, metav1.ConditionFalse},
		{"not all updated", func(d *appsv1.Deployment) { d.Status.UpdatedReplicas = 2 }, metav1.ConditionFalse},
		{"not all available", func(d *appsv1.Deployment) { d.Status.AvailableReplicas = 2 }, metav1.ConditionFalse},
		{"no replicas set means one", func(d *appsv1.Deployment) {
			d.Spec.Replicas = nil
			d.Status = appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 1, AvailableReplicas: 1, UpdatedReplicas: 1}
		}, metav1.ConditionTrue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dep := rolledOut()
			tt.change(dep)
			do := &appv1.DeployObject{ObjectMeta: metav1.ObjectMeta{Generation: 7}}
			setStatus(do, dep)
			c := meta.FindStatusCondition(do.Status.Conditions, appv1.ConditionReady)
			if c == nil || c.Status != tt.want || c.ObservedGeneration != 7 || do.Status.ObservedGeneration != 7 {
				t.Errorf("status = %+v, want Ready %s at generation 7", do.Status, tt.want)
			}
			if do.Status.AvailableReplicas != dep.Status.AvailableReplicas || do.Status.UpdatedReplicas != dep.Status.UpdatedReplicas {
				t.Errorf("counts not copied: %+v from %+v", do.Status, dep.Status)
			}
		})
	}
}

// The benchmark reads the writes by "verb resource[/subresource]" as
// deployobject-controller labels them.
func TestAPIResource(t *testing.T) {
	for path, want := range map[string]string{
		"/apis/app.deployobject.dev/v1/namespaces/ns/deployobjects/x/status": "deployobjects/status",
		"/apis/app.deployobject.dev/v1/deployobjects":                        "deployobjects",
		"/apis/apps/v1/namespaces/ns/deployments":                            "deployments",
		"/apis/apps/v1/namespaces/ns/deployments/x":                          "deployments",
		"/api/v1/namespaces/ns/services/x":                                   "services",
		"/api/v1/namespaces/ns/events":                                       "events",
		"/api/v1/namespaces/ns":                                              "namespaces",
		"/apis/coordination.k8s.io/v1/namespaces/ns/leases/peer":             "leases",
		"/api":                  "other",
		"/apis/apps/v1":         "other",
		"/apis/apps/v1/":        "other",
		"/version":              "other",
		"/api/v1/nodes/n/proxy": "nodes/proxy",
	} {
		if got := apiResource(path); got != want {
			t.Errorf("apiResource(%q) = %q, want %q", path, got, want)
		}
	}
}
