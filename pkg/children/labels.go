package children

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/identity"
)

// The children's name label and container name are part of the API (see
// pkg/apis/app/v1/labels.go); these short names keep the builders readable.
// The managed-by label and the controller's names are in pkg/identity.
const (
	NameLabel     = appv1.LabelName
	ContainerName = appv1.ContainerName
)

// SelectorLabels are the Deployment's and the Service's selector. They never
// change for an object, as a Deployment's selector is immutable, and hold
// only the object's identity: which tool manages the pods is not part of
// which pods they are.
func SelectorLabels(dobj *appv1.DeployObject) map[string]string {
	return map[string]string{NameLabel: dobj.Name}
}

// SelectorString is the pod selector in the string form the scale
// subresource expects.
func SelectorString(dobj *appv1.DeployObject) string {
	return labels.SelectorFromSet(SelectorLabels(dobj)).String()
}

// childLabels are the labels the controller sets on the Deployment, its pod
// template and the Service; labels others add are kept. Pods carry the
// managed-by label too, as the recommended labels ask of every object of an
// application, and a Deployment in sync then has the same labels as its pod
// template, which lets the cache hold them once (see SlimDeployment).
func childLabels(dobj *appv1.DeployObject) map[string]string {
	return map[string]string{
		identity.ManagedByLabel: identity.ManagedByValue,
		NameLabel:               dobj.Name,
	}
}

func childMeta(dobj *appv1.DeployObject) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:            dobj.Name,
		Namespace:       dobj.Namespace,
		Labels:          childLabels(dobj),
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(dobj, identity.DeployObjectKind)},
	}
}

// HasLabels reports whether every label in want is set in got with the same value.
func HasLabels(got, want map[string]string) bool {
	for k, v := range want {
		if gv, ok := got[k]; !ok || gv != v {
			return false
		}
	}
	return true
}

// WithLabels returns a copy of got with every label of want set.
func WithLabels(got, want map[string]string) map[string]string {
	out := make(map[string]string, len(got)+len(want))
	for k, v := range got {
		out[k] = v
	}
	for k, v := range want {
		out[k] = v
	}
	return out
}
