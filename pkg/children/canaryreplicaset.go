package children

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// The canary ReplicaSet: the pods of a canary's new revision, beside the
// Deployment's, one ReplicaSet per canary id (revision and attempt). It is
// a bare ReplicaSet rather than a second Deployment so that, at promotion,
// the Deployment can adopt it as its new ReplicaSet: their templates differ
// only in the pod-template-hash label, which the Deployment controller
// ignores when it looks for its new ReplicaSet.
//
// The controller owns its labels (not others' labels) and replicas. Its
// template and selector are written once, at create: a new revision is a
// new ReplicaSet, and a template changed under running pods would make
// them a revision other than the one the canary's status names. The
// canary label goes on the ReplicaSet only, never on its pods: the
// Deployment that adopts the ReplicaSet must find its own template there.

// KindCanaryReplicaSet names the canary ReplicaSet in problems and events.
const KindCanaryReplicaSet = "ReplicaSet"

// CanaryReplicaSetName is the name of dobj's canary ReplicaSet of the
// canary id.
func CanaryReplicaSetName(dobj *appv1.DeployObject, id string) string {
	return dobj.Name + "-canary-" + id
}

// canarySelector selects the pods of dobj's canary id: the id is their
// pod-template-hash, a value the Deployment controller's hashes never take
// (they hold no "-"), so no pod of the Deployment matches.
func canarySelector(dobj *appv1.DeployObject, id string) map[string]string {
	return map[string]string{NameLabel: dobj.Name, appsv1.DefaultDeploymentUniqueLabelKey: id}
}

// DesiredCanaryReplicaSet is dobj's canary ReplicaSet of the canary id,
// running replicas pods of template with the pod-template-hash id. The
// template is copied: the desired object must not point into the
// caller's.
func DesiredCanaryReplicaSet(dobj *appv1.DeployObject, template corev1.PodTemplateSpec, id string, replicas int32) *appsv1.ReplicaSet {
	meta := childMeta(dobj)
	meta.Name = CanaryReplicaSetName(dobj, id)
	meta.Labels[appv1.LabelCanary] = id
	pods := *template.DeepCopy()
	pods.Labels = WithLabels(pods.Labels, map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: id})
	return &appsv1.ReplicaSet{
		ObjectMeta: meta,
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: canarySelector(dobj, id)},
			Template: pods,
		},
	}
}

// MergeCanaryReplicaSet returns live with the labels and replicas of
// desired, and whether that changed anything. When nothing changed it
// returns live itself. The template and selector are never brought in
// line (see above).
func MergeCanaryReplicaSet(live, desired *appsv1.ReplicaSet) (*appsv1.ReplicaSet, bool) {
	if HasLabels(live.Labels, desired.Labels) && ptr.Equal(live.Spec.Replicas, desired.Spec.Replicas) {
		return live, false
	}
	out := live.DeepCopy()
	out.Labels = WithLabels(out.Labels, desired.Labels)
	out.Spec.Replicas = copyPtr(desired.Spec.Replicas)
	return out, true
}

// SlimCanaryReplicaSet keeps the fields MergeCanaryReplicaSet compares,
// the selector and the counts of pods the canary's steps wait for. Not the
// template: the sync reads it from the API server on the one occasion it
// needs it.
func SlimCanaryReplicaSet(rs *appsv1.ReplicaSet) *appsv1.ReplicaSet {
	rs.ObjectMeta = SlimMeta(rs.ObjectMeta)
	rs.Spec = appsv1.ReplicaSetSpec{
		Replicas: rs.Spec.Replicas,
		Selector: rs.Spec.Selector,
	}
	rs.Status = appsv1.ReplicaSetStatus{
		Replicas:           rs.Status.Replicas,
		ReadyReplicas:      rs.Status.ReadyReplicas,
		AvailableReplicas:  rs.Status.AvailableReplicas,
		ObservedGeneration: rs.Status.ObservedGeneration,
	}
	return rs
}
