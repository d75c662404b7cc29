package main

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// The informers' transforms: what enters the caches is only what the
// controller reads. A Deployment holds a whole pod template with every
// defaulted field, and annotations such as kubectl's last-applied
// configuration can be larger than the rest of an object. Cached objects
// are never written back: an update starts from a fresh read of the live
// object (see syncChild), so nothing dropped here can be lost.

// transformObject dispatches on the type the informer delivers; anything
// else (tombstones are not transformed) passes unchanged.
func transformObject(obj any) (any, error) {
	switch o := obj.(type) {
	case *appv1.DeployObject:
		return slimDeployObject(o), nil
	case *appsv1.Deployment:
		return slimDeployment(o), nil
	case *corev1.Service:
		return slimService(o), nil
	}
	return obj, nil
}

// slimMeta keeps the identity, labels and owners of an object.
func slimMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:              m.Name,
		Namespace:         m.Namespace,
		UID:               m.UID,
		ResourceVersion:   m.ResourceVersion,
		Generation:        m.Generation,
		Labels:            m.Labels,
		OwnerReferences:   m.OwnerReferences,
		DeletionTimestamp: m.DeletionTimestamp,
	}
}

// slimDeployObject drops managedFields and annotations; the spec and status
// are all read.
func slimDeployObject(d *appv1.DeployObject) *appv1.DeployObject {
	d.ObjectMeta = slimMeta(d.ObjectMeta)
	return d
}

// slimDeployment keeps the fields deploymentMatches compares and the status
// readyCondition reads.
func slimDeployment(d *appsv1.Deployment) *appsv1.Deployment {
	out := &appsv1.Deployment{
		ObjectMeta: slimMeta(d.ObjectMeta),
		Spec: appsv1.DeploymentSpec{
			Replicas: d.Spec.Replicas,
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: d.Spec.Template.Labels}},
		},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration: d.Status.ObservedGeneration,
			Replicas:           d.Status.Replicas,
			UpdatedReplicas:    d.Status.UpdatedReplicas,
			ReadyReplicas:      d.Status.ReadyReplicas,
			AvailableReplicas:  d.Status.AvailableReplicas,
		},
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		out.Spec.Template.Spec.Containers = append(out.Spec.Template.Spec.Containers, corev1.Container{
			Name:      c.Name,
			Image:     c.Image,
			Command:   c.Command,
			Args:      c.Args,
			Env:       c.Env,
			Resources: c.Resources,
			Ports:     c.Ports,
		})
	}
	if c := deploymentCondition(d, appsv1.DeploymentProgressing); c != nil && c.Status == corev1.ConditionFalse {
		out.Status.Conditions = []appsv1.DeploymentCondition{{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message}}
	}
	return out
}

// slimService keeps the fields mergeService compares.
func slimService(s *corev1.Service) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: slimMeta(s.ObjectMeta),
		Spec: corev1.ServiceSpec{
			Type:     s.Spec.Type,
			Selector: s.Spec.Selector,
			Ports:    s.Spec.Ports,
		},
	}
}
