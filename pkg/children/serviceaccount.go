package children

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// The ServiceAccount: what the controller asks of it, how a live one is
// brought in line, what the cache keeps, and when a superseded one may go.
// It exists only while spec.serviceAccount is set. The controller owns its
// labels and the keys spec.serviceAccount.metadata lists (see
// metadata.go); the rest (others' annotations, secrets, imagePullSecrets,
// automountServiceAccountToken) is someone else's and carried over on
// update. The API server fills in nothing on a ServiceAccount.
//
// Unlike the other children, it may be renamed, and a pod's
// ServiceAccount tokens stop working once the ServiceAccount they were
// issued for is deleted. So the one a spec no longer names is deleted
// only when no pod of the Deployment can still run as it: the Deployment
// names another and has no pod left from an older template.

// KindServiceAccount names the ServiceAccount in problems and events.
const KindServiceAccount = "ServiceAccount"

// WantsServiceAccount reports whether dobj asks for a ServiceAccount of its
// own.
func WantsServiceAccount(dobj *appv1.DeployObject) bool {
	return dobj.Spec.ServiceAccount != nil
}

// PodServiceAccountName is the ServiceAccount dobj's pods run as: its own,
// the one serviceAccountName names, or "" for the namespace's default.
func PodServiceAccountName(dobj *appv1.DeployObject) string {
	sa := dobj.Spec.ServiceAccount
	switch {
	case sa == nil:
		return dobj.Spec.ServiceAccountName
	case sa.Name != "":
		return sa.Name
	default:
		return dobj.Name
	}
}

// DesiredServiceAccount is the ServiceAccount dobj asks for; nil when it
// asks for none.
func DesiredServiceAccount(dobj *appv1.DeployObject) *corev1.ServiceAccount {
	sa := dobj.Spec.ServiceAccount
	if sa == nil {
		return nil
	}
	out := &corev1.ServiceAccount{ObjectMeta: childMeta(dobj)}
	out.Name = PodServiceAccountName(dobj)
	withChildMetadata(&out.ObjectMeta, sa.Metadata)
	return out
}

// MergeServiceAccount returns live with the labels and annotations of
// desired, and whether that changed anything. When nothing changed it
// returns live itself.
func MergeServiceAccount(live, desired *corev1.ServiceAccount) (*corev1.ServiceAccount, bool) {
	if childMetadataInSync(live.ObjectMeta, desired.ObjectMeta) {
		return live, false
	}
	out := live.DeepCopy()
	mergeChildMetadata(&out.ObjectMeta, live.ObjectMeta, desired.ObjectMeta)
	return out, true
}

// SlimServiceAccount keeps the metadata MergeServiceAccount compares; the
// secrets and pull secrets others list are never read.
func SlimServiceAccount(sa *corev1.ServiceAccount) *corev1.ServiceAccount {
	sa.ObjectMeta = slimMetaOwning(sa.ObjectMeta)
	sa.Secrets, sa.ImagePullSecrets, sa.AutomountServiceAccountToken = nil, nil, nil
	return sa
}

// SupersededServiceAccounts are those of owned, the ServiceAccounts dobj
// controls, that its spec no longer names and that no pod of d, its
// Deployment as cached, can still run as: they may be deleted. A
// Deployment whose status lags its spec, or that still has pods of an
// older template (during a rollout, a paused or stuck one, or pods still
// terminating), may have pods running as any of them; so may one the
// cache does not show (nil: orphaned pods may run on), and none goes then.
func SupersededServiceAccounts(dobj *appv1.DeployObject, owned []*corev1.ServiceAccount, d *appsv1.Deployment) []*corev1.ServiceAccount {
	// serviceAccountName may name one dobj made before: it stays.
	keep := PodServiceAccountName(dobj)
	var out []*corev1.ServiceAccount
	for _, sa := range owned {
		if sa.Name == keep || !metav1.IsControlledBy(sa, dobj) {
			continue
		}
		if d == nil || d.Spec.Template.Spec.ServiceAccountName == sa.Name || !OlderPodsGone(d) {
			continue
		}
		out = append(out, sa)
	}
	return out
}

// OlderPodsGone reports whether every pod of d is of its current template:
// its status is of its current spec, and no pod of an older template is
// left, running or terminating. Unlike RolloutDone, a rollout that gave up
// is not done here: its older pods still run.
func OlderPodsGone(d *appsv1.Deployment) bool {
	st := d.Status
	return st.ObservedGeneration >= d.Generation && st.Replicas == st.UpdatedReplicas &&
		ptr.Deref(st.TerminatingReplicas, 0) == 0
}
