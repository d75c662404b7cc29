package main

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// The children's labels and container name are part of the API (see
// pkg/apis/app/v1/labels.go); these short names keep the builders readable.
const (
	managedByLabel = appv1.LabelManagedBy
	managedByValue = appv1.ManagedByController
	nameLabel      = appv1.LabelName
	containerName  = appv1.ContainerName
)

var deployObjectKind = appv1.SchemeGroupVersion.WithKind("DeployObject")

// selectorLabels are the Deployment's and the Service's selector. They never
// change for an object, as a Deployment's selector is immutable, and hold
// only the object's identity: which tool manages the pods is not part of
// which pods they are.
func selectorLabels(dobj *appv1.DeployObject) map[string]string {
	return map[string]string{nameLabel: dobj.Name}
}

// selectorString is the pod selector in the string form the scale
// subresource expects.
func selectorString(dobj *appv1.DeployObject) string {
	return labels.SelectorFromSet(selectorLabels(dobj)).String()
}

// childLabels are the labels the controller sets on the Deployment, its pod
// template and the Service; labels others add are kept. Pods carry the
// managed-by label too, as the recommended labels ask of every object of an
// application, and a Deployment in sync then has the same labels as its pod
// template, which lets the cache hold them once (see slimDeployment).
func childLabels(dobj *appv1.DeployObject) map[string]string {
	return map[string]string{
		managedByLabel: managedByValue,
		nameLabel:      dobj.Name,
	}
}

func childMeta(dobj *appv1.DeployObject) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:            dobj.Name,
		Namespace:       dobj.Namespace,
		Labels:          childLabels(dobj),
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(dobj, deployObjectKind)},
	}
}

// desiredDeployment is the Deployment dobj asks for, holding only the fields
// the controller owns. Fields the API server defaults inside owned fields are
// set here as the server would set them, so that a live object in sync
// compares equal and steady state costs no writes.
func desiredDeployment(dobj *appv1.DeployObject) *appsv1.Deployment {
	replicas := int32(1)
	if dobj.Spec.Replicas != nil {
		replicas = *dobj.Spec.Replicas
	}
	return &appsv1.Deployment{
		ObjectMeta: childMeta(dobj),
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: selectorLabels(dobj)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: childLabels(dobj)},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{desiredContainer(dobj)},
				},
			},
		},
	}
}

func desiredContainer(dobj *appv1.DeployObject) corev1.Container {
	c := corev1.Container{
		Name:      containerName,
		Image:     dobj.Spec.Image,
		Command:   dobj.Spec.Command,
		Args:      dobj.Spec.Args,
		Resources: storedResources(dobj.Spec.Resources),
	}
	if len(dobj.Spec.Env) > 0 {
		c.Env = make([]corev1.EnvVar, len(dobj.Spec.Env))
		for i := range dobj.Spec.Env {
			c.Env[i] = normalizeEnvVar(dobj.Spec.Env[i])
		}
	}
	for _, p := range dobj.Spec.Ports {
		c.Ports = append(c.Ports, corev1.ContainerPort{
			Name:          p.Name,
			ContainerPort: p.ContainerPort,
			Protocol:      portProtocol(p),
		})
	}
	return c
}

// storedResources is r as the API server stores it in a pod template: it
// rounds every quantity up to a thousandth (SetDefaults_ResourceList), so
// that a cpu of "0.5m" is kept as "1m". Built any other way, a spec with
// such a value would differ from its Deployment forever.
func storedResources(r corev1.ResourceRequirements) corev1.ResourceRequirements {
	out := *r.DeepCopy()
	for _, list := range []corev1.ResourceList{out.Requests, out.Limits} {
		for name, q := range list {
			q.RoundUp(-3)
			list[name] = q
		}
	}
	return out
}

// normalizeEnvVar applies the API server's defaulting of a fieldRef's
// apiVersion to a deep copy of e.
func normalizeEnvVar(e corev1.EnvVar) corev1.EnvVar {
	out := *e.DeepCopy()
	if out.ValueFrom != nil && out.ValueFrom.FieldRef != nil && out.ValueFrom.FieldRef.APIVersion == "" {
		out.ValueFrom.FieldRef.APIVersion = "v1"
	}
	return out
}

func portProtocol(p appv1.Port) corev1.Protocol {
	if p.Protocol == "" {
		return corev1.ProtocolTCP
	}
	return p.Protocol
}

func servicePort(p appv1.Port) int32 {
	if p.ServicePort != nil {
		return *p.ServicePort
	}
	return p.ContainerPort
}

// wantsService reports whether dobj asks for a Service: only when it has ports.
func wantsService(dobj *appv1.DeployObject) bool {
	return len(dobj.Spec.Ports) > 0
}

// desiredService is the Service dobj asks for, holding only the fields the
// controller owns; nil when dobj has no ports. clusterIP and nodePorts are
// left to the API server to allocate.
func desiredService(dobj *appv1.DeployObject) *corev1.Service {
	if !wantsService(dobj) {
		return nil
	}
	svcType := corev1.ServiceType(dobj.Spec.ServiceType)
	if svcType == "" {
		svcType = corev1.ServiceTypeClusterIP
	}
	ports := make([]corev1.ServicePort, 0, len(dobj.Spec.Ports))
	for _, p := range dobj.Spec.Ports {
		ports = append(ports, corev1.ServicePort{
			Name:       p.Name,
			Protocol:   portProtocol(p),
			Port:       servicePort(p),
			TargetPort: intstr.FromInt32(p.ContainerPort),
			// A copy: the desired Service must not point into the cache.
			AppProtocol: copyPtr(p.AppProtocol),
		})
	}
	return &corev1.Service{
		ObjectMeta: childMeta(dobj),
		Spec: corev1.ServiceSpec{
			Type:     svcType,
			Selector: selectorLabels(dobj),
			Ports:    ports,
		},
	}
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
