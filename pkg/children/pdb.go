package children

import (
	"fmt"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// The PodDisruptionBudget: what the controller asks of it, how a live one is
// brought in line, what the cache keeps, and how it is reported. It exists
// only while spec.disruptionBudget is set. The controller owns its labels
// (not others' labels), minAvailable, maxUnavailable and selector; the
// unhealthy pod eviction policy and everything else are someone else's and
// carried over on update. The API server fills in no defaults there, so the
// owned fields are compared as they are, and written with an update.

// KindPDB names the PodDisruptionBudget in problems and events.
const KindPDB = "PodDisruptionBudget"

// WantsDisruptionBudget reports whether dobj asks for a
// PodDisruptionBudget.
func WantsDisruptionBudget(dobj *appv1.DeployObject) bool {
	return dobj.Spec.DisruptionBudget != nil
}

// DesiredPDB is the PodDisruptionBudget dobj asks for; nil when it asks for
// none. It selects the pods as the Deployment does.
func DesiredPDB(dobj *appv1.DeployObject) *policyv1.PodDisruptionBudget {
	b := dobj.Spec.DisruptionBudget
	if b == nil {
		return nil
	}
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: childMeta(dobj),
		Spec: policyv1.PodDisruptionBudgetSpec{
			// Copies: the desired object must not point into the cache.
			MinAvailable:   copyPtr(b.MinAvailable),
			MaxUnavailable: copyPtr(b.MaxUnavailable),
			Selector:       &metav1.LabelSelector{MatchLabels: SelectorLabels(dobj)},
		},
	}
}

// MergePDB returns live with the owned fields of desired, and whether that
// changed anything. When nothing changed it returns live itself.
func MergePDB(live, desired *policyv1.PodDisruptionBudget) (*policyv1.PodDisruptionBudget, bool) {
	if HasLabels(live.Labels, desired.Labels) &&
		equality.Semantic.DeepEqual(live.Spec.MinAvailable, desired.Spec.MinAvailable) &&
		equality.Semantic.DeepEqual(live.Spec.MaxUnavailable, desired.Spec.MaxUnavailable) &&
		equality.Semantic.DeepEqual(live.Spec.Selector, desired.Spec.Selector) {
		return live, false
	}
	out := live.DeepCopy()
	out.Labels = WithLabels(out.Labels, desired.Labels)
	out.Spec.MinAvailable = desired.Spec.MinAvailable
	out.Spec.MaxUnavailable = desired.Spec.MaxUnavailable
	out.Spec.Selector = desired.Spec.Selector
	return out, true
}

// SlimPDB keeps the fields MergePDB compares and the status
// DisruptionBudgetCondition reads.
func SlimPDB(p *policyv1.PodDisruptionBudget) *policyv1.PodDisruptionBudget {
	p.ObjectMeta = SlimMeta(p.ObjectMeta)
	p.Spec = policyv1.PodDisruptionBudgetSpec{
		MinAvailable:   p.Spec.MinAvailable,
		MaxUnavailable: p.Spec.MaxUnavailable,
		Selector:       p.Spec.Selector,
	}
	p.Status = policyv1.PodDisruptionBudgetStatus{
		ObservedGeneration: p.Status.ObservedGeneration,
		DisruptionsAllowed: p.Status.DisruptionsAllowed,
		CurrentHealthy:     p.Status.CurrentHealthy,
		DesiredHealthy:     p.Status.DesiredHealthy,
		ExpectedPods:       p.Status.ExpectedPods,
	}
	return p
}

// DisruptionBudgetCondition reports the PodDisruptionBudget of dobj: why it
// is missing (problem, when the sync could not make it), or how many
// evictions it allows now. The counts change only when pods come, go or
// change health, so in steady state the condition does not change.
func DisruptionBudgetCondition(dobj *appv1.DeployObject, pdb *policyv1.PodDisruptionBudget, problem *Problem) metav1.Condition {
	c := metav1.Condition{Type: appv1.ConditionDisruptionBudget, Status: metav1.ConditionFalse}
	switch {
	case problem != nil:
		c.Reason, c.Message = problem.Reason, problem.Message
	case pdb == nil:
		c.Reason, c.Message = appv1.ReasonProgressing, fmt.Sprintf("%s %s does not exist yet", KindPDB, dobj.Name)
	case pdb.Status.ObservedGeneration < pdb.Generation:
		c.Reason, c.Message = appv1.ReasonProgressing, fmt.Sprintf("waiting for the disruption controller to observe generation %d of %s %s", pdb.Generation, KindPDB, pdb.Name)
	default:
		st := pdb.Status
		c.Reason = appv1.ReasonNoDisruptionsAllowed
		allows := "allows no eviction now"
		if st.DisruptionsAllowed > 0 {
			c.Status, c.Reason = metav1.ConditionTrue, appv1.ReasonDisruptionsAllowed
			allows = fmt.Sprintf("allows %d eviction(s) now", st.DisruptionsAllowed)
		}
		c.Message = fmt.Sprintf("%s %s %s: %d of %d pods healthy, %d required", KindPDB, pdb.Name, allows, st.CurrentHealthy, st.ExpectedPods, st.DesiredHealthy)
	}
	c.Message = BoundMessage(c.Message)
	return c
}
