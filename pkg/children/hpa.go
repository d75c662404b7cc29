package children

import (
	"fmt"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/identity"
)

// The HorizontalPodAutoscaler: what the controller asks of it, how a live one
// is judged in line, what the cache keeps, and how it is reported. It exists
// only while spec.autoscaling is set.
//
// It scales the DeployObject itself, through the scale subresource, not the
// Deployment: it writes spec.replicas, and the controller passes
// spec.replicas on to the Deployment as it always does. There is one truth
// for the number of replicas, `kubectl get dobj` shows the autoscaled one,
// and the controller never undoes the autoscaler's decision, because that
// decision is the spec.
//
// The controller owns the whole spec of the HorizontalPodAutoscaler and its
// labels. The API server fills defaults into a scaling behavior (policies,
// select policy, stabilization windows), so a live autoscaler is in line
// when it holds every value the desired one sets (covers) and carries the
// hash of the desired spec, which tells a spec that stopped setting a field
// apart from a default. Writes are updates that replace the spec.

// KindHPA names the HorizontalPodAutoscaler in problems and events.
const KindHPA = "HorizontalPodAutoscaler"

// WantsAutoscaling reports whether dobj asks for a HorizontalPodAutoscaler.
func WantsAutoscaling(dobj *appv1.DeployObject) bool {
	return dobj.Spec.Autoscaling != nil
}

// DesiredHPA is the HorizontalPodAutoscaler dobj asks for, stamped with the
// hash of its spec; nil when dobj asks for none.
func DesiredHPA(dobj *appv1.DeployObject) (*autoscalingv2.HorizontalPodAutoscaler, error) {
	a := dobj.Spec.Autoscaling
	if a == nil {
		return nil, nil
	}
	minReplicas := int32(1)
	if a.MinReplicas != nil {
		minReplicas = *a.MinReplicas
	}
	var metrics []autoscalingv2.MetricSpec
	for _, t := range []struct {
		resource corev1.ResourceName
		target   *int32
	}{{corev1.ResourceCPU, a.TargetCPUUtilizationPercentage}, {corev1.ResourceMemory, a.TargetMemoryUtilizationPercentage}} {
		if t.target == nil {
			continue
		}
		metrics = append(metrics, autoscalingv2.MetricSpec{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{
				Name:   t.resource,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: copyPtr(t.target)},
			},
		})
	}
	for i := range a.Metrics {
		metrics = append(metrics, metricSpec(&a.Metrics[i]))
	}
	h := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: childMeta(dobj),
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{
				APIVersion: appv1.SchemeGroupVersion.String(),
				Kind:       identity.DeployObjectKind.Kind,
				Name:       dobj.Name,
			},
			MinReplicas: &minReplicas,
			MaxReplicas: a.MaxReplicas,
			Metrics:     metrics,
			Behavior:    a.Behavior.DeepCopy(),
		},
	}
	hash, err := desiredHash(&h.Spec)
	if err != nil {
		return nil, fmt.Errorf("hashing the desired %s: %w", KindHPA, err)
	}
	h.Annotations = map[string]string{appv1.AnnotationAutoscalerHash: hash}
	return h, nil
}

// metricSpec is m as the HorizontalPodAutoscaler's metric, a copy. The API
// server defaults nothing inside a metric (autoscaling/v2's
// SetDefaults_HorizontalPodAutoscaler fills metrics only when there are
// none, and the behavior), so the live metric is the desired one, with its
// quantities perhaps in another form, which Covers compares by value.
func metricSpec(m *appv1.MetricSpec) autoscalingv2.MetricSpec {
	out := autoscalingv2.MetricSpec{Type: autoscalingv2.MetricSourceType(m.Type)}
	switch {
	case m.Resource != nil:
		out.Resource = &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceName(m.Resource.Name), Target: metricTarget(m.Resource.Target)}
	case m.ContainerResource != nil:
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricSource{
			Name:      corev1.ResourceName(m.ContainerResource.Name),
			Container: m.ContainerResource.Container,
			Target:    metricTarget(m.ContainerResource.Target),
		}
	case m.Pods != nil:
		out.Pods = &autoscalingv2.PodsMetricSource{Metric: metricIdentifier(m.Pods.Metric), Target: metricTarget(m.Pods.Target)}
	case m.Object != nil:
		ref := m.Object.DescribedObject
		out.Object = &autoscalingv2.ObjectMetricSource{
			DescribedObject: autoscalingv2.CrossVersionObjectReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name},
			Metric:          metricIdentifier(m.Object.Metric),
			Target:          metricTarget(m.Object.Target),
		}
	case m.External != nil:
		out.External = &autoscalingv2.ExternalMetricSource{Metric: metricIdentifier(m.External.Metric), Target: metricTarget(m.External.Target)}
	}
	return out
}

func metricIdentifier(id appv1.MetricIdentifier) autoscalingv2.MetricIdentifier {
	return autoscalingv2.MetricIdentifier{Name: id.Name, Selector: labelSelector(id.Selector)}
}

func metricTarget(t appv1.MetricTarget) autoscalingv2.MetricTarget {
	out := autoscalingv2.MetricTarget{Type: autoscalingv2.MetricTargetType(t.Type), AverageUtilization: copyPtr(t.AverageUtilization)}
	if t.Value != nil {
		out.Value = ptr.To(t.Value.DeepCopy())
	}
	if t.AverageValue != nil {
		out.AverageValue = ptr.To(t.AverageValue.DeepCopy())
	}
	return out
}

// HPAInSync reports whether live is in line with desired: it was last
// written from the same spec, holds every value desired sets, and has no
// behavior when desired has none (the API server adds none then).
//
// A tolerance that desired sets and live lacks is no reason to write when
// live was written from the same spec: an API server before Kubernetes
// 1.35 (HPAConfigurableTolerance alpha) drops the field from what it
// stores, so writing it again would change nothing, at every sync. The
// cost is that on a later server a tolerance someone removed by hand comes
// back only with the next write for another reason; AutoscalingCondition
// reports the missing tolerance either way.
func HPAInSync(live, desired *autoscalingv2.HorizontalPodAutoscaler) bool {
	spec := desired.Spec
	if b, dropped := withoutDroppedTolerances(live.Spec.Behavior, desired.Spec.Behavior); len(dropped) > 0 {
		spec.Behavior = b
	}
	return live.Annotations[appv1.AnnotationAutoscalerHash] == desired.Annotations[appv1.AnnotationAutoscalerHash] &&
		HasLabels(live.Labels, desired.Labels) &&
		(desired.Spec.Behavior != nil || live.Spec.Behavior == nil) &&
		Covers(live.Spec, spec)
}

// withoutDroppedTolerances returns a copy of desired without the
// tolerances of its scaling rules that live lacks, and the paths of those
// (behavior.scaleUp.tolerance, behavior.scaleDown.tolerance).
func withoutDroppedTolerances(live, desired *autoscalingv2.HorizontalPodAutoscalerBehavior) (*autoscalingv2.HorizontalPodAutoscalerBehavior, []string) {
	if live == nil || desired == nil {
		return desired, nil
	}
	out := desired.DeepCopy()
	var dropped []string
	for _, r := range []struct {
		name    string
		live    *autoscalingv2.HPAScalingRules
		desired *autoscalingv2.HPAScalingRules
	}{{"scaleUp", live.ScaleUp, out.ScaleUp}, {"scaleDown", live.ScaleDown, out.ScaleDown}} {
		if r.live != nil && r.live.Tolerance == nil && r.desired != nil && r.desired.Tolerance != nil {
			r.desired.Tolerance = nil
			dropped = append(dropped, "behavior."+r.name+".tolerance")
		}
	}
	return out, dropped
}

// MergeHPA returns live with desired's labels, hash and spec, and whether
// that changed anything. When nothing changed it returns live itself.
func MergeHPA(live, desired *autoscalingv2.HorizontalPodAutoscaler) (*autoscalingv2.HorizontalPodAutoscaler, bool) {
	if HPAInSync(live, desired) {
		return live, false
	}
	out := live.DeepCopy()
	out.Labels = WithLabels(out.Labels, desired.Labels)
	out.Annotations = WithLabels(out.Annotations, desired.Annotations)
	out.Spec = *desired.Spec.DeepCopy()
	return out, true
}

// SlimHPA keeps the spec, the hash annotation HPAInSync reads, and the
// status AutoscalingCondition reads; metrics readings, which change at every
// evaluation, are dropped.
func SlimHPA(h *autoscalingv2.HorizontalPodAutoscaler) *autoscalingv2.HorizontalPodAutoscaler {
	h.ObjectMeta = SlimMetaKeeping(h.ObjectMeta, appv1.AnnotationAutoscalerHash)
	kept := h.Status.Conditions[:0]
	for _, c := range h.Status.Conditions {
		switch c.Type {
		case autoscalingv2.AbleToScale, autoscalingv2.ScalingActive, autoscalingv2.ScalingLimited:
			kept = append(kept, autoscalingv2.HorizontalPodAutoscalerCondition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message})
		}
	}
	clear(h.Status.Conditions[len(kept):])
	h.Status = autoscalingv2.HorizontalPodAutoscalerStatus{
		ObservedGeneration: h.Status.ObservedGeneration,
		CurrentReplicas:    h.Status.CurrentReplicas,
		DesiredReplicas:    h.Status.DesiredReplicas,
		Conditions:         kept,
	}
	return h
}

// AutoscalingCondition reports the HorizontalPodAutoscaler of dobj: why it
// is missing (problem, when the sync could not make it), or whether it can
// scale, from its own AbleToScale and ScalingActive conditions. Metric
// readings are left out: they change at every evaluation, and each change
// would be a status write.
func AutoscalingCondition(dobj *appv1.DeployObject, hpa *autoscalingv2.HorizontalPodAutoscaler, problem *Problem) metav1.Condition {
	c := metav1.Condition{Type: appv1.ConditionAutoscaling, Status: metav1.ConditionFalse, Reason: appv1.ReasonProgressing}
	if problem != nil {
		c.Reason, c.Message = problem.Reason, BoundMessage(problem.Message)
		return c
	}
	if hpa == nil {
		c.Message = fmt.Sprintf("%s %s does not exist yet", KindHPA, dobj.Name)
		return c
	}
	able := hpaCondition(hpa, autoscalingv2.AbleToScale)
	active := hpaCondition(hpa, autoscalingv2.ScalingActive)
	switch {
	case able != nil && able.Status == corev1.ConditionFalse:
		c.Reason = reasonOr(able.Reason, "NotAbleToScale")
		c.Message = fmt.Sprintf("%s %s cannot scale DeployObject %s: %s", KindHPA, hpa.Name, dobj.Name, able.Message)
	case active != nil && active.Status == corev1.ConditionFalse:
		c.Reason = reasonOr(active.Reason, "ScalingInactive")
		c.Message = fmt.Sprintf("%s %s is not scaling: %s", KindHPA, hpa.Name, active.Message)
	case able == nil || active == nil:
		c.Message = fmt.Sprintf("waiting for the HorizontalPodAutoscaler controller to evaluate %s %s", KindHPA, hpa.Name)
	default:
		c.Status, c.Reason = metav1.ConditionTrue, reasonOr(active.Reason, "ScalingActive")
		c.Message = fmt.Sprintf("%s %s: %d current, %d desired replicas, between %d and %d",
			KindHPA, hpa.Name, hpa.Status.CurrentReplicas, hpa.Status.DesiredReplicas, ptr.Deref(hpa.Spec.MinReplicas, 1), hpa.Spec.MaxReplicas)
		if limited := hpaCondition(hpa, autoscalingv2.ScalingLimited); limited != nil && limited.Status == corev1.ConditionTrue {
			c.Message += "; limited: " + limited.Message
		}
	}
	if _, dropped := withoutDroppedTolerances(hpa.Spec.Behavior, dobj.Spec.Autoscaling.Behavior); len(dropped) > 0 {
		needs := "they need"
		if len(dropped) == 1 {
			needs = "it needs"
		}
		c.Message += fmt.Sprintf("; the API server dropped %s: %s Kubernetes 1.35 or later (feature gate HPAConfigurableTolerance), and the cluster-wide tolerance applies",
			strings.Join(dropped, " and "), needs)
	}
	c.Message = BoundMessage(c.Message)
	return c
}

func hpaCondition(h *autoscalingv2.HorizontalPodAutoscaler, t autoscalingv2.HorizontalPodAutoscalerConditionType) *autoscalingv2.HorizontalPodAutoscalerCondition {
	return FindCondition(h.Status.Conditions, t, func(c *autoscalingv2.HorizontalPodAutoscalerCondition) autoscalingv2.HorizontalPodAutoscalerConditionType {
		return c.Type
	})
}
