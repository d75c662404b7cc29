package children

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Whether the Gateways a Gateway API route names have taken up its current
// spec, read from the status their controllers write: what the Route
// condition reports, and what a traffic change waits for before it counts
// as done.
//
// A route's status has an entry per parent and Gateway controller
// (RouteStatus.Parents is keyed by parentRef and controllerName): each
// controller writes only its own, and another's, stale or foreign, may sit
// beside it for the same parent. So every entry for a parent is read, never
// the first alone. A condition speaks for the route's current spec only
// when written for its generation: under the Gateway API's "fall back to
// the last known good state", a controller keeps Accepted=True at the
// generation it last accepted.

// Acceptance is what the Gateways a route names say of its current
// generation.
type Acceptance struct {
	// Accepted: the route names at least one parent, and every one has
	// accepted the current generation and resolved its references.
	Accepted bool
	// Waiting are the parents (as ParentName writes them), in the route's
	// order, that have neither accepted nor refused the current generation.
	Waiting []string
	// Refused is the first parent, in the route's order, that refuses the
	// current generation; nil when none does.
	Refused *Refusal
}

// Refusal is a parent's Accepted or ResolvedRefs condition that is False
// for the route's current generation.
type Refusal struct {
	// Parent is the refusing parent as ParentName writes it.
	Parent string
	// ControllerName is the Gateway controller that wrote the condition.
	ControllerName gatewayv1.GatewayController
	// Type is Accepted or ResolvedRefs.
	Type            gatewayv1.RouteConditionType
	Reason, Message string
}

// RouteAcceptance is what the parents refs name, as a route with meta and
// status names them, say of the route's current generation. A parent
// refuses when any controller's entry for it holds a current Accepted or
// ResolvedRefs condition that is False; it accepts when one entry holds
// both current and True; else it is waiting: no entry, conditions of an
// older generation, Unknown, or Accepted without ResolvedRefs. A route
// without a generation (never stored by an API server) is waiting on every
// parent: no condition can be told to be of its spec.
func RouteAcceptance(meta *metav1.ObjectMeta, refs []gatewayv1.ParentReference, status gatewayv1.RouteStatus) Acceptance {
	var a Acceptance
	for _, ref := range refs {
		accepted, refusal := parentAcceptance(meta, ref, status)
		switch {
		case refusal != nil:
			if a.Refused == nil {
				a.Refused = refusal
			}
		case !accepted:
			a.Waiting = append(a.Waiting, ParentName(ref, meta.Namespace))
		}
	}
	a.Accepted = len(refs) > 0 && a.Refused == nil && len(a.Waiting) == 0
	return a
}

// parentAcceptance is whether ref's parent accepts the current generation
// of a route with meta and status, or how it refuses it. Within one entry,
// Accepted is read before ResolvedRefs: a route not accepted is not
// served, whatever its references.
func parentAcceptance(meta *metav1.ObjectMeta, ref gatewayv1.ParentReference, status gatewayv1.RouteStatus) (bool, *Refusal) {
	parent := ParentName(ref, meta.Namespace)
	accepted := false
	for _, st := range status.Parents {
		// An entry names its parent as the route's spec does, with or
		// without the defaults filled in.
		if ParentName(st.ParentRef, meta.Namespace) != parent {
			continue
		}
		acc := currentCondition(st.Conditions, gatewayv1.RouteConditionAccepted, meta.Generation)
		res := currentCondition(st.Conditions, gatewayv1.RouteConditionResolvedRefs, meta.Generation)
		for _, c := range []*metav1.Condition{acc, res} {
			if c != nil && c.Status == metav1.ConditionFalse {
				return false, &Refusal{Parent: parent, ControllerName: st.ControllerName, Type: gatewayv1.RouteConditionType(c.Type), Reason: c.Reason, Message: c.Message}
			}
		}
		if isTrue(acc) && isTrue(res) {
			accepted = true
		}
	}
	return accepted, nil
}

func isTrue(c *metav1.Condition) bool {
	return c != nil && c.Status == metav1.ConditionTrue
}

// currentCondition is the condition of type t in conds, when it was
// written for generation; one written for an older spec says nothing of
// the current one, and none can be told to be of generation 0.
func currentCondition(conds []metav1.Condition, t gatewayv1.RouteConditionType, generation int64) *metav1.Condition {
	c := meta.FindStatusCondition(conds, string(t))
	if c == nil || generation == 0 || c.ObservedGeneration < generation {
		return nil
	}
	return c
}
