package children

import (
	"encoding/json"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/identity"
)

// adoptable reports whether dobj may adopt child: it has no controller, is
// not being deleted, and carries the labels dobj's children carry, as after
// `kubectl delete --cascade=orphan` of an earlier DeployObject of the same
// name. An object without those labels was not made for dobj and is never
// taken over.
func adoptable(child metav1.Object, dobj *appv1.DeployObject) bool {
	labels := child.GetLabels()
	return metav1.GetControllerOfNoCopy(child) == nil && child.GetDeletionTimestamp() == nil &&
		labels[identity.ManagedByLabel] == identity.ManagedByValue && labels[NameLabel] == dobj.Name
}

// adoptionPatch is a JSON merge patch that makes dobj the controller of
// child, keeping child's other owners, on condition that child is still at
// the resourceVersion it was judged at.
func adoptionPatch(child metav1.Object, dobj *appv1.DeployObject) ([]byte, error) {
	refs := append(slices.Clone(child.GetOwnerReferences()), *metav1.NewControllerRef(dobj, identity.DeployObjectKind))
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"ownerReferences": refs,
		"resourceVersion": child.GetResourceVersion(),
	}})
	if err != nil {
		return nil, fmt.Errorf("building the adoption patch: %w", err)
	}
	return patch, nil
}
