package main

import (
	"unique"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// The informers' transforms: what enters the caches is only what the
// controller reads. A Deployment holds a whole pod template with every
// defaulted field, and annotations such as kubectl's last-applied
// configuration can be larger than the rest of an object. Cached objects
// are never written back: an update starts from a fresh read of the live
// object (see syncChild), so nothing dropped here can be lost.
//
// Each transform trims the freshly decoded object in place, so an event
// costs no second allocation of the object. The children with a protobuf
// encoding are then cached packed (see packed.go), and ConfigMaps and
// Secrets packed as their per-key hashes (see slimConfigMap). Of what stays
// decoded (DeployObjects, HTTPRoutes, and the metadata of packed objects)
// the strings that thousands of cached objects repeat (label keys, the
// namespace, owner references' API version and kind, images, port names and
// protocols) point at one shared copy each, and the copies of an object's
// own name in its labels and owner references at its name: decoded, every
// object holds its own copy of each.

// transformObject dispatches on the type the informer delivers; anything
// else (tombstones are not transformed) passes unchanged.
func transformObject(obj any) (any, error) {
	switch o := obj.(type) {
	case *appv1.DeployObject:
		return slimDeployObject(o), nil
	case *appsv1.Deployment:
		return pack(slimDeployment(o))
	case *corev1.Service:
		return pack(slimService(o))
	case *policyv1.PodDisruptionBudget:
		return pack(slimPDB(o))
	case *autoscalingv2.HorizontalPodAutoscaler:
		return pack(slimHPA(o))
	case *corev1.ConfigMap:
		return slimConfigMap(o)
	case *corev1.Secret:
		return slimSecret(o)
	case *networkingv1.Ingress:
		return pack(slimIngress(o))
	case *gatewayv1.HTTPRoute:
		return slimHTTPRoute(o), nil
	}
	return obj, nil
}

// slimMeta keeps the identity, labels and owners of an object.
func slimMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	for i := range m.OwnerReferences {
		ref := &m.OwnerReferences[i]
		ref.APIVersion, ref.Kind, ref.Name = intern(ref.APIVersion), intern(ref.Kind), share(ref.Name, m.Name)
	}
	return metav1.ObjectMeta{
		Name:              m.Name,
		Namespace:         intern(m.Namespace),
		UID:               m.UID,
		ResourceVersion:   m.ResourceVersion,
		Generation:        m.Generation,
		Labels:            shareLabels(m.Labels, m.Name),
		OwnerReferences:   m.OwnerReferences,
		DeletionTimestamp: m.DeletionTimestamp,
	}
}

// slimMetaKeeping is slimMeta that also keeps the annotation named key, if
// m has it: the hash a child was last written from, which its in-sync
// check reads.
func slimMetaKeeping(m metav1.ObjectMeta, key string) metav1.ObjectMeta {
	value, ok := m.Annotations[key]
	out := slimMeta(m)
	if ok {
		out.Annotations = map[string]string{key: value}
	}
	return out
}

// intern returns the one shared copy of s.
func intern[S ~string](s S) S {
	return S(unique.Make(string(s)).Value())
}

// share returns name when s equals it, so that the two share their bytes,
// and the shared copy of s otherwise. An object's own name is not interned:
// it is unique, and interning it would only add an entry per object to the
// interning table.
func share(s, name string) string {
	if s == name {
		return name
	}
	return intern(s)
}

// shareLabels shares the keys and values of labels, in place. Assigning
// to an existing key replaces the stored key too (Go does this for string
// keys so that the old one can be freed); TestTransformSharesStrings checks
// that this still holds.
func shareLabels(labels map[string]string, name string) map[string]string {
	for k, v := range labels {
		labels[intern(k)] = share(v, name)
	}
	return labels
}

// slimDeployObject drops managedFields and annotations; the spec and status
// are all read. It also drops the kind and API version, which a
// DeployObject has when it comes from a list and lacks when it comes from
// a watch (the client's decoder clears them, and a custom resource's list
// items carry them): the cache holds the same object either way, which is
// what client-go's watch-list consistency detector checks.
func slimDeployObject(d *appv1.DeployObject) *appv1.DeployObject {
	d.TypeMeta = metav1.TypeMeta{}
	d.ObjectMeta = slimMeta(d.ObjectMeta)
	d.Spec.Image = intern(d.Spec.Image)
	d.Spec.ConfigRollout = intern(d.Spec.ConfigRollout)
	for i := range d.Spec.Ports {
		p := &d.Spec.Ports[i]
		p.Name, p.Protocol = intern(p.Name), intern(p.Protocol)
	}
	for i := range d.Status.Addresses {
		// Values name the object; types are a few constants.
		d.Status.Addresses[i].Type = intern(d.Status.Addresses[i].Type)
	}
	for i := range d.Status.Conditions {
		c := &d.Status.Conditions[i]
		// Messages often name the object, so they are not shared.
		c.Type, c.Status, c.Reason = intern(c.Type), intern(c.Status), intern(c.Reason)
	}
	return d
}
