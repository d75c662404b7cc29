package caches

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
)

// The informers' transforms: what enters the caches is only what the
// controller reads. A Deployment holds a whole pod template with every
// defaulted field, and annotations such as kubectl's last-applied
// configuration can be larger than the rest of an object. Cached objects
// are never written back: an update starts from a fresh read of the live
// object (see children.Sync), so nothing dropped here can be lost.
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

// Transform is the transform of the informers of the objects that are
// not rows of ChildKinds (whose transforms Kinds.Transform dispatches to):
// DeployObjects, Secrets, the Gateway API routes and the monitors. It
// dispatches on the type the informer delivers; anything else (tombstones
// are not transformed) passes unchanged.
func Transform(obj any) (any, error) {
	switch o := obj.(type) {
	case *appv1.DeployObject:
		return slimDeployObject(o), nil
	case *corev1.Secret:
		return slimSecret(o)
	case *gatewayv1.HTTPRoute:
		return children.SlimHTTPRoute(o), nil
	case *gatewayv1.GRPCRoute:
		return children.SlimGRPCRoute(o), nil
	case *unstructured.Unstructured:
		// The one kind of unstructured child: prometheus-operator's
		// monitors.
		if o.GroupVersionKind().GroupVersion() == children.MonitoringGroupVersion {
			return children.SlimMonitor(o), nil
		}
	}
	return obj, nil
}

// slimDeployObject drops managedFields and the annotations but the canary
// operations (see canary.OpsFrom); the spec and status are all read. It also drops the kind and API version, which a
// DeployObject has when it comes from a list and lacks when it comes from
// a watch (the client's decoder clears them, and a custom resource's list
// items carry them): the cache holds the same object either way, which is
// what client-go's watch-list consistency detector checks.
func slimDeployObject(d *appv1.DeployObject) *appv1.DeployObject {
	d.TypeMeta = metav1.TypeMeta{}
	d.ObjectMeta = children.SlimMetaKeeping(d.ObjectMeta, appv1.AnnotationCanaryPromote, appv1.AnnotationCanaryPromoteFull, appv1.AnnotationCanaryAbort, appv1.AnnotationCanaryRetry)
	d.Spec.Image = children.Intern(d.Spec.Image)
	d.Spec.ConfigRollout = children.Intern(d.Spec.ConfigRollout)
	for i := range d.Spec.Ports {
		p := &d.Spec.Ports[i]
		p.Name, p.Protocol = children.Intern(p.Name), children.Intern(p.Protocol)
	}
	for i := range d.Status.Addresses {
		// Values name the object; types are a few constants.
		d.Status.Addresses[i].Type = children.Intern(d.Status.Addresses[i].Type)
	}
	for i := range d.Status.Conditions {
		c := &d.Status.Conditions[i]
		// Messages often name the object, so they are not shared.
		c.Type, c.Status, c.Reason = children.Intern(c.Type), children.Intern(c.Status), children.Intern(c.Reason)
	}
	return d
}
