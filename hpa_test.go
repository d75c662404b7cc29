package main

import (
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// withAutoscaling asks for 2 to 5 replicas at 70% CPU.
func withAutoscaling(d *appv1.DeployObject) {
	d.Spec.Autoscaling = &appv1.Autoscaling{MinReplicas: ptr.To[int32](2), MaxReplicas: 5, TargetCPUUtilizationPercentage: ptr.To[int32](70)}
}

func mustDesiredHPA(dobj *appv1.DeployObject) *autoscalingv2.HorizontalPodAutoscaler {
	h, err := desiredHPA(dobj)
	if err != nil {
		panic(err)
	}
	return h
}

// liveHPA is the HorizontalPodAutoscaler of dobj as the API server holds it
// once the autoscaler has evaluated it: with the behavior the server
// defaults when the spec sets one, and a status.
func liveHPA(dobj *appv1.DeployObject) *autoscalingv2.HorizontalPodAutoscaler {
	h := mustDesiredHPA(dobj)
	if h == nil {
		return nil
	}
	h.UID, h.ResourceVersion, h.Generation = "uid-hpa", "50", 1
	if b := h.Spec.Behavior; b != nil {
		max := autoscalingv2.MaxChangePolicySelect
		if b.ScaleUp == nil {
			b.ScaleUp = &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](0)}
		}
		if b.ScaleDown == nil {
			b.ScaleDown = &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](300)}
		}
		for _, r := range []*autoscalingv2.HPAScalingRules{b.ScaleUp, b.ScaleDown} {
			if r.SelectPolicy == nil {
				r.SelectPolicy = &max
			}
			if r.Policies == nil {
				r.Policies = []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}
			}
		}
	}
	h.Status = autoscalingv2.HorizontalPodAutoscalerStatus{
		ObservedGeneration: ptr.To[int64](1),
		CurrentReplicas:    2,
		DesiredReplicas:    2,
		CurrentMetrics: []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
			Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To[int32](40)}}}},
		Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{
			{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, Reason: "ReadyForNewScale", Message: "recommended size matches current size", LastTransitionTime: earlier},
			{Type: autoscalingv2.ScalingActive, Status: corev1.ConditionTrue, Reason: "ValidMetricFound", Message: "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)", LastTransitionTime: earlier},
			{Type: autoscalingv2.ScalingLimited, Status: corev1.ConditionFalse, Reason: "DesiredWithinRange", LastTransitionTime: earlier},
		},
	}
	return h
}

func TestDesiredHPA(t *testing.T) {
	if h := mustDesiredHPA(newDeployObject()); h != nil {
		t.Error("a HorizontalPodAutoscaler for a DeployObject that asks for none")
	}
	dobj := newDeployObject(withAutoscaling, func(d *appv1.DeployObject) {
		d.Spec.Autoscaling.TargetMemoryUtilizationPercentage = ptr.To[int32](80)
		d.Spec.Autoscaling.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60)}}
	})
	h := mustDesiredHPA(dobj)
	if ref := h.Spec.ScaleTargetRef; ref.APIVersion != "app.deployobject.dev/v1" || ref.Kind != "DeployObject" || ref.Name != "web" {
		t.Errorf("scaleTargetRef = %+v, want the DeployObject itself", ref)
	}
	if *h.Spec.MinReplicas != 2 || h.Spec.MaxReplicas != 5 || len(h.Spec.Metrics) != 2 ||
		h.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU || *h.Spec.Metrics[0].Resource.Target.AverageUtilization != 70 ||
		h.Spec.Metrics[1].Resource.Name != corev1.ResourceMemory || *h.Spec.Metrics[1].Resource.Target.AverageUtilization != 80 {
		t.Errorf("spec = %+v", h.Spec)
	}
	if h.Spec.Behavior == dobj.Spec.Autoscaling.Behavior || *h.Spec.Behavior.ScaleDown.StabilizationWindowSeconds != 60 {
		t.Error("the behavior is not a copy of the spec's")
	}
	if !metav1.IsControlledBy(h, dobj) || h.Labels[managedByLabel] != managedByValue {
		t.Error("owner or labels missing")
	}

	noMin := newDeployObject(withAutoscaling, func(d *appv1.DeployObject) { d.Spec.Autoscaling.MinReplicas = nil })
	if got := *mustDesiredHPA(noMin).Spec.MinReplicas; got != 1 {
		t.Errorf("minReplicas = %d without one in the spec, want 1", got)
	}
	hash := func(h *autoscalingv2.HorizontalPodAutoscaler) string {
		return h.Annotations[appv1.AnnotationAutoscalerHash]
	}
	if hash(h) == "" || hash(h) == hash(mustDesiredHPA(newDeployObject(withAutoscaling))) {
		t.Error("the hash does not tell the specs apart")
	}
	other := newDeployObject(withAutoscaling, func(d *appv1.DeployObject) { d.UID = "uid-other" })
	if hash(mustDesiredHPA(other)) != hash(mustDesiredHPA(newDeployObject(withAutoscaling))) {
		t.Error("the hash depends on the owner: an orphan would not be found in line")
	}
}

func TestHPAInSync(t *testing.T) {
	withBehavior := func(d *appv1.DeployObject) {
		d.Spec.Autoscaling.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](30)}}
	}
	for _, tc := range []struct {
		name   string
		spec   []func(*appv1.DeployObject)
		drift  func(*autoscalingv2.HorizontalPodAutoscaler)
		change func(*appv1.DeployObject)
		want   bool
	}{
		{name: "in sync", want: true},
		{name: "behavior with the server's defaults", spec: []func(*appv1.DeployObject){withBehavior}, want: true},
		{name: "others' label and annotation", drift: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Labels["team"] = "a"
			h.Annotations["note"] = "x"
		}, want: true},
		{name: "maxReplicas edited", drift: func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MaxReplicas = 50 }},
		{name: "retargeted at the Deployment", drift: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
		}},
		{name: "a metric added", drift: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics = append(h.Spec.Metrics, h.Spec.Metrics[0])
		}},
		{name: "a behavior added by hand", drift: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{}
		}},
		{name: "label removed", drift: func(h *autoscalingv2.HorizontalPodAutoscaler) { delete(h.Labels, nameLabel) }},
		{name: "hash missing", drift: func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Annotations = nil }},
		{name: "target changed", change: func(d *appv1.DeployObject) { d.Spec.Autoscaling.TargetCPUUtilizationPercentage = ptr.To[int32](50) }},
		{name: "memory target added", change: func(d *appv1.DeployObject) { d.Spec.Autoscaling.TargetMemoryUtilizationPercentage = ptr.To[int32](50) }},
		// The live behavior still covers the desired one: only the hash
		// tells that the spec stopped setting scaleUp.
		{name: "behavior removed from the spec", spec: []func(*appv1.DeployObject){withBehavior}, change: func(d *appv1.DeployObject) {
			d.Spec.Autoscaling.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dobj := newDeployObject(append([]func(*appv1.DeployObject){withAutoscaling}, tc.spec...)...)
			live := liveHPA(dobj)
			live.Annotations["kubectl.kubernetes.io/last-applied-configuration"] = "{}"
			if tc.drift != nil {
				tc.drift(live)
			}
			if tc.change != nil {
				tc.change(dobj)
			}
			desired := mustDesiredHPA(dobj)
			if got := hpaInSync(live, desired); got != tc.want {
				t.Errorf("hpaInSync = %v, want %v", got, tc.want)
			}
			if got := hpaInSync(slimHPA(live.DeepCopy()), desired); got != tc.want {
				t.Errorf("hpaInSync of the cached copy = %v, want %v", got, tc.want)
			}
			merged, changed := mergeHPA(live, desired)
			if changed == tc.want || !hpaInSync(merged, desired) {
				t.Error("the merged HorizontalPodAutoscaler is not in line")
			}
			if merged.UID != live.UID || merged.Labels["team"] != live.Labels["team"] || merged.Annotations["note"] != live.Annotations["note"] {
				t.Error("others' fields are not kept")
			}
		})
	}
}

func TestSlimHPA(t *testing.T) {
	dobj := newDeployObject(withAutoscaling)
	full := liveHPA(dobj)
	full.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}}
	full.Annotations["kubectl.kubernetes.io/last-applied-configuration"] = "{}"
	slim := slimHPA(full.DeepCopy())
	if slim.ManagedFields != nil || slim.Status.CurrentMetrics != nil || len(slim.Annotations) != 1 {
		t.Errorf("the slim copy keeps what the controller never reads: %+v", slim)
	}
	if a, b := autoscalingCondition(dobj, full, nil), autoscalingCondition(dobj, slim, nil); a != b {
		t.Errorf("condition: full %+v, slim %+v", a, b)
	}
}

func TestAutoscalingCondition(t *testing.T) {
	dobj := newDeployObject(withAutoscaling)
	setCond := func(t autoscalingv2.HorizontalPodAutoscalerConditionType, s corev1.ConditionStatus, reason, msg string) func(*autoscalingv2.HorizontalPodAutoscaler) {
		return func(h *autoscalingv2.HorizontalPodAutoscaler) {
			for i := range h.Status.Conditions {
				if h.Status.Conditions[i].Type == t {
					h.Status.Conditions[i] = autoscalingv2.HorizontalPodAutoscalerCondition{Type: t, Status: s, Reason: reason, Message: msg}
				}
			}
		}
	}
	for _, tc := range []struct {
		name       string
		missing    bool
		problem    *childProblem
		mutate     func(*autoscalingv2.HorizontalPodAutoscaler)
		wantStatus metav1.ConditionStatus
		wantReason string
		wantIn     string
	}{
		{name: "scaling", wantStatus: metav1.ConditionTrue, wantReason: "ValidMetricFound",
			wantIn: "HorizontalPodAutoscaler web: 2 current, 2 desired replicas, between 2 and 5"},
		{name: "limited", mutate: setCond(autoscalingv2.ScalingLimited, corev1.ConditionTrue, "TooManyReplicas", "the desired replica count is more than the maximum replica count"),
			wantStatus: metav1.ConditionTrue, wantReason: "ValidMetricFound", wantIn: "limited: the desired replica count is more"},
		{name: "no metrics", mutate: setCond(autoscalingv2.ScalingActive, corev1.ConditionFalse, "FailedGetResourceMetric", "unable to get metrics for resource cpu"),
			wantStatus: metav1.ConditionFalse, wantReason: "FailedGetResourceMetric", wantIn: "is not scaling: unable to get metrics for resource cpu"},
		{name: "cannot read the scale", mutate: setCond(autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedGetScale", "deployobjects.app.deployobject.dev \"web\" is forbidden"),
			wantStatus: metav1.ConditionFalse, wantReason: "FailedGetScale", wantIn: "cannot scale DeployObject web: deployobjects"},
		{name: "not evaluated yet", mutate: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Status = autoscalingv2.HorizontalPodAutoscalerStatus{}
		},
			wantStatus: metav1.ConditionFalse, wantReason: appv1.ReasonProgressing, wantIn: "waiting for the HorizontalPodAutoscaler controller"},
		{name: "reason left empty", mutate: setCond(autoscalingv2.ScalingActive, corev1.ConditionFalse, "", "?"),
			wantStatus: metav1.ConditionFalse, wantReason: "ScalingInactive", wantIn: "is not scaling"},
		{name: "not made yet", missing: true, wantStatus: metav1.ConditionFalse, wantReason: appv1.ReasonProgressing, wantIn: "HorizontalPodAutoscaler web does not exist yet"},
		{name: "blocked", missing: true, problem: &childProblem{kind: kindHPA, reason: appv1.ReasonQuotaExceeded, message: "exceeded quota: q"},
			wantStatus: metav1.ConditionFalse, wantReason: appv1.ReasonQuotaExceeded, wantIn: "exceeded quota"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := liveHPA(dobj)
			if tc.mutate != nil {
				tc.mutate(h)
			}
			if tc.missing {
				h = nil
			}
			c := autoscalingCondition(dobj, h, tc.problem)
			if c.Type != appv1.ConditionAutoscaling || c.Status != tc.wantStatus || c.Reason != tc.wantReason || !strings.Contains(c.Message, tc.wantIn) {
				t.Errorf("got %+v, want %s %s containing %q", c, tc.wantStatus, tc.wantReason, tc.wantIn)
			}
		})
	}
}
