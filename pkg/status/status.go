package status

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metaapply "k8s.io/client-go/applyconfigurations/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/canary"
	"deployobject.dev/controller/pkg/children"
	appapply "deployobject.dev/controller/pkg/generated/applyconfiguration/app/v1"
)

// Outcome is what a sync found out, as input to the status: the children
// as they are after the sync, or why the sync could not bring them in line.
type Outcome struct {
	Deployment *appsv1.Deployment
	Service    *corev1.Service
	PDB        *policyv1.PodDisruptionBudget
	HPA        *autoscalingv2.HorizontalPodAutoscaler
	Ingress    *networkingv1.Ingress
	HTTPRoute  *gatewayv1.HTTPRoute
	// HTTPSRedirect is the HTTPRoute that redirects to https.
	HTTPSRedirect *gatewayv1.HTTPRoute
	GRPCRoute     *gatewayv1.GRPCRoute
	// ServiceAccount has no status; Ready waits only for it to exist.
	ServiceAccount *corev1.ServiceAccount
	// NetworkPolicy has no status; Ready waits only for it to exist.
	NetworkPolicy *networkingv1.NetworkPolicy
	// Monitor is the ServiceMonitor or PodMonitor; it has no status, and
	// Ready waits only for it to exist.
	Monitor *unstructured.Unstructured
	// MonitoringUnavailable says why the monitor the spec asks for cannot
	// be made: the cluster does not serve its kind. It is no problem: the
	// Monitoring condition tells it, and Ready does not wait.
	MonitoringUnavailable string
	// deploymentHash identifies the desired Deployment when the live one is
	// in line with it; empty when the Deployment could not be brought in
	// line, and the status keeps the hash it had.
	DeploymentHash string
	// configHash is the config hash of the pod template the Deployment is
	// in line with, when deploymentHash is set.
	ConfigHash string
	// configPending: a rollout caused by configuration alone waits for a
	// slot under --max-concurrent-config-rollouts; configRollout: it has
	// one, and the Deployment is brought in line with the new
	// configuration.
	ConfigPending, ConfigRollout bool
	// ConfigMissingGrace: the ConfigMap or Secret reported missing may
	// still come (--config-missing-grace-period): Reconciling, not Stalled.
	ConfigMissingGrace bool
	// Canary is the canary under way (canary.Decision.Status), nil for
	// none; CanaryWaiting says why a canary has not started yet while the
	// template it is for is held.
	Canary        *appv1.CanaryStatus
	CanaryWaiting string
	// CanaryScaleDown is the scale-down of the spec that waits for the
	// canary's end (canary.Decision.KeepReplicas); nil for none.
	CanaryScaleDown *ScaleDown
	// KeptRoute names the route of the kind the spec no longer asks for,
	// kept while the one it asks for instead does not carry traffic yet.
	KeptRoute string
	// problems keep dobj from being Ready whatever the children say, in
	// the order of the children.
	Problems []children.Problem
}

// ScaleDown is a scale-down of the Deployment that waits: to the spec's
// replicas To, from the Deployment's Kept.
type ScaleDown struct{ To, Kept int32 }

// Compute is the status of dobj given the outcome of its sync. It keeps
// the lastTransitionTime of conditions whose status did not change, so an
// unchanged world yields an equal status and no write.
func Compute(dobj *appv1.DeployObject, out Outcome, now metav1.Time) appv1.DeployObjectStatus {
	status := appv1.DeployObjectStatus{
		ObservedGeneration: dobj.Generation,
		DeploymentHash:     dobj.Status.DeploymentHash,
		ConfigHash:         dobj.Status.ConfigHash,
		Selector:           children.SelectorString(dobj),
		Canary:             out.Canary,
		Conditions:         append([]metav1.Condition(nil), dobj.Status.Conditions...),
	}
	if out.DeploymentHash != "" {
		status.DeploymentHash, status.ConfigHash = out.DeploymentHash, out.ConfigHash
	}
	if d := out.Deployment; d != nil {
		status.Replicas = d.Status.Replicas
		status.ReadyReplicas = d.Status.ReadyReplicas
		status.AvailableReplicas = d.Status.AvailableReplicas
		status.UpdatedReplicas = d.Status.UpdatedReplicas
	}
	ready := ReadyCondition(dobj, out)
	ready.ObservedGeneration = dobj.Generation
	ready.LastTransitionTime = now
	meta.SetStatusCondition(&status.Conditions, ready)
	progress := progressCondition(ready, out.ConfigMissingGrace)
	for _, t := range progressConditionTypes {
		if progress == nil || progress.Type != t {
			// Absent rather than False: a Ready DeployObject carries no
			// more than it did before these conditions existed.
			meta.RemoveStatusCondition(&status.Conditions, t)
		}
	}
	if progress != nil {
		meta.SetStatusCondition(&status.Conditions, *progress)
	}
	setChildCondition(&status.Conditions, children.WantsDisruptionBudget(dobj), dobj.Generation, now, func() metav1.Condition {
		return children.DisruptionBudgetCondition(dobj, out.PDB, out.problem(children.KindPDB))
	})
	setChildCondition(&status.Conditions, children.WantsAutoscaling(dobj), dobj.Generation, now, func() metav1.Condition {
		return children.AutoscalingCondition(dobj, out.HPA, out.problem(children.KindHPA))
	})
	setChildCondition(&status.Conditions, children.WantsMonitoring(dobj), dobj.Generation, now, func() metav1.Condition {
		return children.MonitoringCondition(dobj, out.Monitor, out.problem(children.MonitorKind(dobj)), out.MonitoringUnavailable)
	})
	route := routeCondition(dobj, out)
	setChildCondition(&status.Conditions, dobj.Spec.Route != nil, dobj.Generation, now, func() metav1.Condition { return route })
	status.Addresses = addressesOf(dobj, out, route.Status)
	return status
}

// routeCondition is the Route condition of dobj, for the kind of route its
// spec asks for.
func routeCondition(dobj *appv1.DeployObject, out Outcome) metav1.Condition {
	var c metav1.Condition
	if children.WantsIngress(dobj) {
		c = children.IngressCondition(dobj, out.Ingress, out.problem(children.KindIngress))
	} else {
		if children.WantsGRPCRoute(dobj) {
			c = children.GRPCRouteCondition(dobj, out.GRPCRoute, out.problem(children.KindGRPCRoute))
		} else {
			c = children.HTTPRouteCondition(dobj, out.HTTPRoute, out.problem(children.KindHTTPRoute))
		}
		if redirect := httpsRedirectCondition(dobj, out); c.Status == metav1.ConditionTrue && redirect != nil {
			c = *redirect
		}
	}
	if out.KeptRoute != "" {
		c.Message = children.BoundMessage(c.Message + "; switching routes: " + out.KeptRoute + " keeps serving until then")
	}
	return c
}

// httpsRedirectCondition is the Route condition for dobj's HTTPRoute that
// redirects to https, when the spec asks for one and it is not accepted
// yet or refused: plain-HTTP clients are not redirected then. nil otherwise.
func httpsRedirectCondition(dobj *appv1.DeployObject, out Outcome) *metav1.Condition {
	if !children.WantsHTTPSRedirect(dobj) {
		return nil
	}
	if p := out.problem(children.KindHTTPSRedirect); out.HTTPSRedirect == nil && p == nil {
		c := metav1.Condition{Type: appv1.ConditionRoute, Status: metav1.ConditionFalse, Reason: appv1.ReasonProgressing,
			Message: fmt.Sprintf("%s %s, which redirects to https, does not exist yet", children.KindHTTPRoute, children.HTTPSRedirectName(dobj))}
		return &c
	}
	c := children.HTTPRouteCondition(dobj, out.HTTPSRedirect, out.problem(children.KindHTTPSRedirect))
	if c.Status == metav1.ConditionTrue {
		return nil
	}
	return &c
}

// setChildCondition sets the condition of an optional child that the spec
// asks for (want), and removes it when the spec does not: a DeployObject
// without optional children carries no condition about them.
func setChildCondition(conds *[]metav1.Condition, want bool, generation int64, now metav1.Time, condition func() metav1.Condition) {
	c := condition()
	if !want {
		meta.RemoveStatusCondition(conds, c.Type)
		return
	}
	c.ObservedGeneration, c.LastTransitionTime = generation, now
	meta.SetStatusCondition(conds, c)
}

// problem is the problem that kept the child of kind from being made, if
// any.
func (o Outcome) problem(kind string) *children.Problem {
	for i := range o.Problems {
		if o.Problems[i].Kind == kind {
			return &o.Problems[i]
		}
	}
	return nil
}

// progressConditionTypes are the kstatus conditions, derived from Ready by
// progressCondition.
var progressConditionTypes = []string{appv1.ConditionReconciling, appv1.ConditionStalled}

// stallingReasons are the reasons of a Ready=False that lasts until someone
// acts: a spec change, a foreign object deleted, a quota raised, a policy or
// permission changed, pods made admissible, a stuck rollout looked at.
var stallingReasons = map[string]bool{
	appv1.ReasonInvalidSpec:              true,
	appv1.ReasonPodSecurityViolation:     true,
	appv1.ReasonRouteNotAccepted:         true,
	appv1.ReasonResourceConflict:         true,
	appv1.ReasonQuotaExceeded:            true,
	appv1.ReasonForbidden:                true,
	appv1.ReasonReplicaFailure:           true,
	appv1.ReasonProgressDeadlineExceeded: true,
	// Someone has to create the ConfigMap or Secret (or fix the
	// reference); the controller notices at once when they do.
	appv1.ReasonConfigMissing:         true,
	appv1.ReasonGatewayAPIUnavailable: true,
	// Until the canary is retried or the spec changes.
	appv1.ReasonCanaryAborted: true,
}

// progressCondition is the kstatus condition that goes with ready: Stalled
// for a reason that waits for someone to act, Reconciling for any other
// reason to be not Ready, none when Ready. It is a function of ready alone,
// so it changes only in status writes that a change of Ready makes anyway,
// and costs no write of its own; the one exception is ConfigMissing, which
// is Reconciling while configMayCome (the grace period) and costs one
// write when the grace ends.
func progressCondition(ready metav1.Condition, configMayCome bool) *metav1.Condition {
	if ready.Status == metav1.ConditionTrue {
		return nil
	}
	c := ready
	c.Type = appv1.ConditionReconciling
	if stallingReasons[ready.Reason] && (ready.Reason != appv1.ReasonConfigMissing || !configMayCome) {
		c.Type = appv1.ConditionStalled
	}
	c.Status = metav1.ConditionTrue
	return &c
}

// Equal reports whether writing b over a would change nothing.
func Equal(a, b appv1.DeployObjectStatus) bool {
	return equality.Semantic.DeepEqual(a, b)
}

// ReadyCondition is dobj's Ready condition given the outcome of its sync.
func ReadyCondition(dobj *appv1.DeployObject, out Outcome) metav1.Condition {
	if len(out.Problems) > 0 {
		return blockedCondition(out.Problems)
	}
	if out.ConfigPending {
		return notReady(appv1.ReasonConfigRolloutPending, "the pod template changed without a change of the spec (the ConfigMaps or Secrets the pods use, or the controller's pod security profile or version); the rollout waits for a slot under the controller's --max-concurrent-config-rollouts, and a scale is applied meanwhile")
	}
	d := out.Deployment
	if d == nil {
		return notReady(appv1.ReasonProgressing, "Deployment %s does not exist yet", dobj.Name)
	}
	if children.WantsServiceAccount(dobj) && out.ServiceAccount == nil {
		return notReady(appv1.ReasonProgressing, "%s %s does not exist yet", children.KindServiceAccount, children.PodServiceAccountName(dobj))
	}
	if children.WantsService(dobj) && out.Service == nil {
		return notReady(appv1.ReasonProgressing, "Service %s does not exist yet", dobj.Name)
	}
	if children.WantsDisruptionBudget(dobj) && out.PDB == nil {
		return notReady(appv1.ReasonProgressing, "%s %s does not exist yet", children.KindPDB, dobj.Name)
	}
	if children.WantsAutoscaling(dobj) && out.HPA == nil {
		return notReady(appv1.ReasonProgressing, "%s %s does not exist yet", children.KindHPA, dobj.Name)
	}
	if children.WantsNetworkPolicy(dobj) && out.NetworkPolicy == nil {
		return notReady(appv1.ReasonProgressing, "%s %s does not exist yet", children.KindNetworkPolicy, dobj.Name)
	}
	if children.WantsMonitoring(dobj) && out.Monitor == nil && out.MonitoringUnavailable == "" {
		return notReady(appv1.ReasonProgressing, "%s %s does not exist yet", children.MonitorKind(dobj), dobj.Name)
	}
	if children.WantsIngress(dobj) && out.Ingress == nil {
		return notReady(appv1.ReasonProgressing, "%s %s does not exist yet", children.KindIngress, dobj.Name)
	}
	if children.WantsHTTPRoute(dobj) && out.HTTPRoute == nil {
		return notReady(appv1.ReasonProgressing, "%s %s does not exist yet", children.KindHTTPRoute, dobj.Name)
	}
	if children.WantsGRPCRoute(dobj) && out.GRPCRoute == nil {
		return notReady(appv1.ReasonProgressing, "%s %s does not exist yet", children.KindGRPCRoute, dobj.Name)
	}
	if children.WantsHTTPSRedirect(dobj) && out.HTTPSRedirect == nil {
		return notReady(appv1.ReasonProgressing, "%s %s does not exist yet", children.KindHTTPRoute, children.HTTPSRedirectName(dobj))
	}
	// A route its Gateway refuses leaves the application unreachable
	// through it (or, for the redirect, unreachable over plain HTTP):
	// Argo CD must not show it Healthy.
	var verdicts []metav1.Condition
	if children.WantsHTTPRoute(dobj) {
		verdicts = append(verdicts, children.HTTPRouteCondition(dobj, out.HTTPRoute, nil))
	}
	if children.WantsGRPCRoute(dobj) {
		verdicts = append(verdicts, children.GRPCRouteCondition(dobj, out.GRPCRoute, nil))
	}
	if children.WantsHTTPSRedirect(dobj) {
		verdicts = append(verdicts, children.HTTPRouteCondition(dobj, out.HTTPSRedirect, nil))
	}
	for _, route := range verdicts {
		if route.Status == metav1.ConditionFalse && route.Reason != appv1.ReasonProgressing {
			if children.RouteRefusalPasses(route.Reason) {
				return notReady(appv1.ReasonProgressing, "%s: %s", route.Reason, route.Message)
			}
			return notReady(appv1.ReasonRouteNotAccepted, "%s: %s", route.Reason, route.Message)
		}
	}
	// A canary pauses the Deployment for its promotion: it comes before
	// the Deployment's own state.
	if out.Canary != nil {
		reason, message := canary.Condition(dobj.Name, out.Canary)
		if s := out.CanaryScaleDown; s != nil {
			message += fmt.Sprintf("; the scale-down to replicas=%d waits for the canary's end (the stable keeps %d)", s.To, s.Kept)
		}
		return notReady(reason, "%s", message)
	}
	if out.CanaryWaiting != "" {
		return notReady(appv1.ReasonCanaryProgressing, "%s", out.CanaryWaiting)
	}
	if d.Status.ObservedGeneration < d.Generation {
		return notReady(appv1.ReasonProgressing, "waiting for the Deployment controller to observe generation %d of Deployment %s", d.Generation, d.Name)
	}
	if c := deploymentCondition(d, appsv1.DeploymentReplicaFailure); c != nil && c.Status == corev1.ConditionTrue {
		return notReady(appv1.ReasonReplicaFailure, "Deployment %s cannot create or delete pods: %s: %s", d.Name, c.Reason, c.Message)
	}
	if c := deploymentCondition(d, appsv1.DeploymentProgressing); c != nil && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
		return notReady(appv1.ReasonProgressDeadlineExceeded, "Deployment %s: %s", d.Name, c.Message)
	}
	if d.Spec.Paused {
		return notReady(appv1.ReasonPaused, "Deployment %s is paused; `kubectl rollout resume deployment/%s` resumes it", d.Name, d.Name)
	}
	desired := int32(1)
	if d.Spec.Replicas != nil {
		desired = *d.Spec.Replicas
	}
	switch {
	case d.Status.UpdatedReplicas < desired:
		return notReady(appv1.ReasonProgressing, "%d of %d replicas updated", d.Status.UpdatedReplicas, desired)
	case d.Status.Replicas > desired:
		return notReady(appv1.ReasonProgressing, "%d replicas pending termination", d.Status.Replicas-desired)
	case d.Status.AvailableReplicas < desired:
		return notReady(appv1.ReasonProgressing, "%d of %d updated replicas available", d.Status.AvailableReplicas, desired)
	}
	return metav1.Condition{
		Type:    appv1.ConditionReady,
		Status:  metav1.ConditionTrue,
		Reason:  appv1.ReasonAvailable,
		Message: fmt.Sprintf("%d of %d replicas available", d.Status.AvailableReplicas, desired),
	}
}

func notReady(reason, format string, args ...any) metav1.Condition {
	return metav1.Condition{
		Type:    appv1.ConditionReady,
		Status:  metav1.ConditionFalse,
		Reason:  reason,
		Message: children.BoundMessage(fmt.Sprintf(format, args...)),
	}
}

// blockedCondition is the Ready condition for problems: the first one's
// reason, every one's message.
func blockedCondition(problems []children.Problem) metav1.Condition {
	msgs := make([]string, len(problems))
	for i, p := range problems {
		msgs[i] = p.Message
	}
	return notReady(problems[0].Reason, "%s", strings.Join(msgs, "; "))
}

func deploymentCondition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	return children.FindCondition(d.Status.Conditions, t, func(c *appsv1.DeploymentCondition) appsv1.DeploymentConditionType { return c.Type })
}

// NewProblems are the problems the Ready condition in conds does not
// report yet, each of which is worth one event. Waiting that ends by
// itself (Progressing) is none.
func NewProblems(conds []metav1.Condition, problems []children.Problem) []children.Problem {
	old := meta.FindStatusCondition(conds, appv1.ConditionReady)
	var out []children.Problem
	for _, p := range problems {
		if p.Reason == appv1.ReasonProgressing {
			continue
		}
		if old == nil || old.Status != metav1.ConditionFalse || !strings.Contains(old.Message, children.BoundMessage(p.Message)) {
			out = append(out, p)
		}
	}
	return out
}

// ReadyReason is the reason of the Ready condition in status, for logs.
func ReadyReason(status appv1.DeployObjectStatus) string {
	if c := meta.FindStatusCondition(status.Conditions, appv1.ConditionReady); c != nil {
		return c.Reason
	}
	return ""
}

// ApplyConfiguration is status as a server-side apply request for
// dobj's status subresource, on condition that the DeployObject is still at
// dobj's resourceVersion. Resource versions are unique across objects, so a
// status computed for a DeployObject that was deleted and created again
// meanwhile is refused (409) instead of landing on the new one. A UID in the
// request would not do: the status subresource takes every field but the
// status from the stored object, the UID included, and checks nothing
// (TestStatusOfARecreatedDeployObjectIsNotOverwritten). The price is a
// conflict, retried, when the DeployObject changed since the cache showed
// it; that change's own event would have brought a new sync anyway.
func ApplyConfiguration(dobj *appv1.DeployObject, status appv1.DeployObjectStatus) *appapply.DeployObjectApplyConfiguration {
	st := appapply.DeployObjectStatus().
		WithObservedGeneration(status.ObservedGeneration).
		WithReplicas(status.Replicas).
		WithReadyReplicas(status.ReadyReplicas).
		WithAvailableReplicas(status.AvailableReplicas).
		WithUpdatedReplicas(status.UpdatedReplicas).
		WithSelector(status.Selector)
	if status.DeploymentHash != "" {
		st.WithDeploymentHash(status.DeploymentHash)
	}
	if status.ConfigHash != "" {
		st.WithConfigHash(status.ConfigHash)
	}
	if c := status.Canary; c != nil {
		st.WithCanary(canaryApplyConfiguration(c))
	}
	for _, a := range status.Addresses {
		st.WithAddresses(appapply.Address().WithType(a.Type).WithValue(a.Value).WithPorts(a.Ports...))
	}
	for _, c := range status.Conditions {
		if !ownCondition(c.Type) {
			// Conditions of other writers stay theirs.
			continue
		}
		st.WithConditions(metaapply.Condition().
			WithType(c.Type).
			WithStatus(c.Status).
			WithObservedGeneration(c.ObservedGeneration).
			WithLastTransitionTime(c.LastTransitionTime).
			WithReason(c.Reason).
			WithMessage(c.Message))
	}
	return appapply.DeployObject(dobj.Name, dobj.Namespace).WithResourceVersion(dobj.ResourceVersion).WithStatus(st)
}

func canaryApplyConfiguration(c *appv1.CanaryStatus) *appapply.CanaryStatusApplyConfiguration {
	a := appapply.CanaryStatus().WithID(c.ID).WithRevision(c.Revision).WithAttempt(c.Attempt).WithMode(c.Mode).WithPhase(c.Phase).
		WithStep(c.Step).WithDesiredWeight(c.DesiredWeight).WithObservedWeight(c.ObservedWeight).
		WithReplicas(c.Replicas).WithAvailableReplicas(c.AvailableReplicas).WithRestarts(c.Restarts)
	if c.StableRevision != "" {
		a.WithStableRevision(c.StableRevision)
	}
	if c.StepStartTime != nil {
		a.WithStepStartTime(*c.StepStartTime)
	}
	if c.TrafficShiftTime != nil {
		a.WithTrafficShiftTime(*c.TrafficShiftTime)
	}
	if c.AbortReason != "" {
		a.WithAbortReason(c.AbortReason)
	}
	return a
}

// ownCondition reports whether the controller writes conditions of type t.
// A type it no longer writes for a DeployObject is left out of the apply,
// and server-side apply then removes the condition.
func ownCondition(t string) bool {
	return t == appv1.ConditionReady || t == appv1.ConditionDisruptionBudget || t == appv1.ConditionAutoscaling || t == appv1.ConditionRoute || t == appv1.ConditionMonitoring ||
		slices.Contains(progressConditionTypes, t)
}
