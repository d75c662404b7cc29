package children_test

import (
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/identity"
	"deployobject.dev/controller/pkg/testobjects"
)

func TestDesiredHPA(t *testing.T) {
	if h := testobjects.MustDesiredHPA(testobjects.NewDeployObject()); h != nil {
		t.Error("a HorizontalPodAutoscaler for a DeployObject that asks for none")
	}
	dobj := testobjects.NewDeployObject(testobjects.WithAutoscaling, func(d *appv1.DeployObject) {
		d.Spec.Autoscaling.TargetMemoryUtilizationPercentage = ptr.To[int32](80)
		d.Spec.Autoscaling.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60)}}
	})
	h := testobjects.MustDesiredHPA(dobj)
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
	if !metav1.IsControlledBy(h, dobj) || h.Labels[identity.ManagedByLabel] != identity.ManagedByValue {
		t.Error("owner or labels missing")
	}

	noMin := testobjects.NewDeployObject(testobjects.WithAutoscaling, func(d *appv1.DeployObject) { d.Spec.Autoscaling.MinReplicas = nil })
	if got := *testobjects.MustDesiredHPA(noMin).Spec.MinReplicas; got != 1 {
		t.Errorf("minReplicas = %d without one in the spec, want 1", got)
	}
	hash := func(h *autoscalingv2.HorizontalPodAutoscaler) string {
		return h.Annotations[appv1.AnnotationAutoscalerHash]
	}
	if hash(h) == "" || hash(h) == hash(testobjects.MustDesiredHPA(testobjects.NewDeployObject(testobjects.WithAutoscaling))) {
		t.Error("the hash does not tell the specs apart")
	}
	other := testobjects.NewDeployObject(testobjects.WithAutoscaling, func(d *appv1.DeployObject) { d.UID = "uid-other" })
	if hash(testobjects.MustDesiredHPA(other)) != hash(testobjects.MustDesiredHPA(testobjects.NewDeployObject(testobjects.WithAutoscaling))) {
		t.Error("the hash depends on the owner: an orphan would not be found in line")
	}
}

// The hashes the controller stamps on the HorizontalPodAutoscalers of
// today's objects: a change that moves them makes every autoscaler be
// written on upgrade.
func TestDesiredHPAWithoutMetricsIsUnchanged(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec func(*appv1.DeployObject)
		want string
	}{
		{"CPU", func(*appv1.DeployObject) {}, "e59704d95fb445c4"},
		{"CPU, memory and a behavior", func(d *appv1.DeployObject) {
			d.Spec.Autoscaling.TargetMemoryUtilizationPercentage = ptr.To[int32](80)
			d.Spec.Autoscaling.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60)}}
		}, "2b840349bb527000"},
		// An empty metrics list, as `metrics: []` decodes, is no metric.
		{"CPU with an empty metrics list", func(d *appv1.DeployObject) { d.Spec.Autoscaling.Metrics = []appv1.MetricSpec{} }, "e59704d95fb445c4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := testobjects.MustDesiredHPA(testobjects.NewDeployObject(testobjects.WithAutoscaling, tc.spec))
			if got := h.Annotations[appv1.AnnotationAutoscalerHash]; got != tc.want {
				t.Errorf("hash %s, was %s: every HorizontalPodAutoscaler would be written on upgrade", got, tc.want)
			}
		})
	}
}

func TestDesiredHPAMetrics(t *testing.T) {
	queue := &appv1.LabelSelector{MatchLabels: map[string]string{"queue": "orders"}, MatchExpressions: []appv1.LabelSelectorRequirement{{Key: "vhost", Operator: metav1.LabelSelectorOpExists}}}
	thirty := resource.MustParse("30")
	for _, tc := range []struct {
		name   string
		metric appv1.MetricSpec
		want   autoscalingv2.MetricSpec
	}{
		{"Resource at an average value",
			appv1.MetricSpec{Type: appv1.ResourceMetricSourceType, Resource: &appv1.ResourceMetricSource{Name: "memory",
				Target: appv1.MetricTarget{Type: appv1.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("200Mi"))}}},
			autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("200Mi"))}}}},
		{"ContainerResource utilization",
			appv1.MetricSpec{Type: appv1.ContainerResourceMetricSourceType, ContainerResource: &appv1.ContainerResourceMetricSource{Name: "cpu", Container: "app",
				Target: appv1.MetricTarget{Type: appv1.UtilizationMetricType, AverageUtilization: ptr.To[int32](60)}}},
			autoscalingv2.MetricSpec{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{Name: corev1.ResourceCPU, Container: "app",
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](60)}}}},
		{"Pods",
			appv1.MetricSpec{Type: appv1.PodsMetricSourceType, Pods: &appv1.PodsMetricSource{Metric: appv1.MetricIdentifier{Name: "http_requests_per_second"},
				Target: appv1.MetricTarget{Type: appv1.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("100"))}}},
			autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "http_requests_per_second"},
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("100"))}}}},
		{"Object in the core group",
			appv1.MetricSpec{Type: appv1.ObjectMetricSourceType, Object: &appv1.ObjectMetricSource{
				DescribedObject: appv1.MetricObjectReference{Kind: "Service", Name: "web"},
				Metric:          appv1.MetricIdentifier{Name: "requests_per_second", Selector: &appv1.LabelSelector{}},
				Target:          appv1.MetricTarget{Type: appv1.ValueMetricType, Value: ptr.To(resource.MustParse("2k"))}}},
			autoscalingv2.MetricSpec{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
				DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: "Service", Name: "web"},
				Metric:          autoscalingv2.MetricIdentifier{Name: "requests_per_second", Selector: &metav1.LabelSelector{}},
				Target:          autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptr.To(resource.MustParse("2k"))}}}},
		{"Object of an Ingress",
			appv1.MetricSpec{Type: appv1.ObjectMetricSourceType, Object: &appv1.ObjectMetricSource{
				DescribedObject: appv1.MetricObjectReference{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: "web"},
				Metric:          appv1.MetricIdentifier{Name: "requests_per_second"},
				Target:          appv1.MetricTarget{Type: appv1.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("500m"))}}},
			autoscalingv2.MetricSpec{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
				DescribedObject: autoscalingv2.CrossVersionObjectReference{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: "web"},
				Metric:          autoscalingv2.MetricIdentifier{Name: "requests_per_second"},
				Target:          autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("500m"))}}}},
		{"External queue length",
			appv1.MetricSpec{Type: appv1.ExternalMetricSourceType, External: &appv1.ExternalMetricSource{Metric: appv1.MetricIdentifier{Name: "queue_messages_ready", Selector: queue},
				Target: appv1.MetricTarget{Type: appv1.AverageValueMetricType, AverageValue: &thirty}}},
			autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
				Metric: autoscalingv2.MetricIdentifier{Name: "queue_messages_ready", Selector: &metav1.LabelSelector{
					MatchLabels: map[string]string{"queue": "orders"}, MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "vhost", Operator: metav1.LabelSelectorOpExists}}}},
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("30"))}}}},
		{"External value",
			appv1.MetricSpec{Type: appv1.ExternalMetricSourceType, External: &appv1.ExternalMetricSource{Metric: appv1.MetricIdentifier{Name: "sqs_visible_messages"},
				Target: appv1.MetricTarget{Type: appv1.ValueMetricType, Value: ptr.To(resource.MustParse("1k"))}}},
			autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "sqs_visible_messages"},
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptr.To(resource.MustParse("1k"))}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject(testobjects.WithAutoscaling, func(d *appv1.DeployObject) {
				d.Spec.Autoscaling.Metrics = []appv1.MetricSpec{tc.metric}
			})
			h := testobjects.MustDesiredHPA(dobj)
			// The CPU shortcut first, then the metrics in list order.
			if len(h.Spec.Metrics) != 2 || h.Spec.Metrics[0].Resource == nil || h.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU {
				t.Fatalf("metrics = %+v, want the CPU shortcut and the metric", h.Spec.Metrics)
			}
			if got := h.Spec.Metrics[1]; !equality.Semantic.DeepEqual(got, tc.want) {
				t.Errorf("metric\n got %+v\nwant %+v", got, tc.want)
			}
			if h.Annotations[appv1.AnnotationAutoscalerHash] == testobjects.MustDesiredHPA(testobjects.NewDeployObject(testobjects.WithAutoscaling)).Annotations[appv1.AnnotationAutoscalerHash] {
				t.Error("the hash does not change with a metric")
			}
			// A copy: changing the desired HorizontalPodAutoscaler leaves
			// the DeployObject alone.
			before := dobj.Spec.Autoscaling.Metrics[0].DeepCopy()
			for _, q := range []*resource.Quantity{targetOf(h.Spec.Metrics[1]).Value, targetOf(h.Spec.Metrics[1]).AverageValue} {
				if q != nil {
					q.Add(resource.MustParse("1"))
				}
			}
			if sel := selectorOf(h.Spec.Metrics[1]); sel != nil && sel.MatchLabels != nil {
				sel.MatchLabels["queue"] = "changed"
			}
			if !equality.Semantic.DeepEqual(*before, dobj.Spec.Autoscaling.Metrics[0]) {
				t.Error("the desired metric shares memory with the spec")
			}
		})
	}

	// Only metrics, in list order after the shortcuts.
	onlyMetrics := testobjects.NewDeployObject(testobjects.WithAutoscaling, func(d *appv1.DeployObject) {
		d.Spec.Autoscaling.TargetCPUUtilizationPercentage = nil
		d.Spec.Autoscaling.Metrics = []appv1.MetricSpec{
			{Type: appv1.ExternalMetricSourceType, External: &appv1.ExternalMetricSource{Metric: appv1.MetricIdentifier{Name: "b"}, Target: appv1.MetricTarget{Type: appv1.ValueMetricType, Value: &thirty}}},
			{Type: appv1.PodsMetricSourceType, Pods: &appv1.PodsMetricSource{Metric: appv1.MetricIdentifier{Name: "a"}, Target: appv1.MetricTarget{Type: appv1.AverageValueMetricType, AverageValue: &thirty}}},
		}
	})
	if m := testobjects.MustDesiredHPA(onlyMetrics).Spec.Metrics; len(m) != 2 || m[0].External == nil || m[1].Pods == nil {
		t.Errorf("metrics = %+v, want External b then Pods a", m)
	}
}

func targetOf(m autoscalingv2.MetricSpec) *autoscalingv2.MetricTarget {
	switch {
	case m.Resource != nil:
		return &m.Resource.Target
	case m.ContainerResource != nil:
		return &m.ContainerResource.Target
	case m.Pods != nil:
		return &m.Pods.Target
	case m.Object != nil:
		return &m.Object.Target
	default:
		return &m.External.Target
	}
}

func selectorOf(m autoscalingv2.MetricSpec) *metav1.LabelSelector {
	switch {
	case m.Pods != nil:
		return m.Pods.Metric.Selector
	case m.Object != nil:
		return m.Object.Metric.Selector
	case m.External != nil:
		return m.External.Metric.Selector
	}
	return nil
}

func TestHPAInSync(t *testing.T) {
	withBehavior := func(d *appv1.DeployObject) {
		d.Spec.Autoscaling.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](30)}}
	}
	withTolerances := func(d *appv1.DeployObject) {
		d.Spec.Autoscaling.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{
			ScaleUp:   &autoscalingv2.HPAScalingRules{Tolerance: ptr.To(resource.MustParse("0.05"))},
			ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60), Tolerance: ptr.To(resource.MustParse("0.2"))},
		}
	}
	withQueue := func(d *appv1.DeployObject) {
		d.Spec.Autoscaling.Metrics = []appv1.MetricSpec{{Type: appv1.ExternalMetricSourceType, External: &appv1.ExternalMetricSource{
			Metric: appv1.MetricIdentifier{Name: "queue_messages_ready", Selector: &appv1.LabelSelector{MatchLabels: map[string]string{"queue": "orders"}}},
			Target: appv1.MetricTarget{Type: appv1.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("0.5"))},
		}}}
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
		{name: "a metric with its quantity in the server's form", spec: []func(*appv1.DeployObject){withQueue}, drift: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[1].External.Target.AverageValue = ptr.To(resource.MustParse("500m"))
		}, want: true},
		{name: "a metric's target edited", spec: []func(*appv1.DeployObject){withQueue}, drift: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[1].External.Target.AverageValue = ptr.To(resource.MustParse("5"))
		}},
		{name: "a metric's selector edited", spec: []func(*appv1.DeployObject){withQueue}, drift: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[1].External.Metric.Selector = nil
		}},
		{name: "metrics removed from the spec", spec: []func(*appv1.DeployObject){withQueue}, change: func(d *appv1.DeployObject) {
			d.Spec.Autoscaling.Metrics = nil
		}},
		// An API server before Kubernetes 1.35 (HPAConfigurableTolerance
		// alpha) drops tolerance from what it stores: writing it again would
		// change nothing, at every sync.
		{name: "tolerances the API server dropped", spec: []func(*appv1.DeployObject){withTolerances}, drift: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Behavior.ScaleUp.Tolerance = nil
			h.Spec.Behavior.ScaleDown.Tolerance = nil
		}, want: true},
		{name: "a tolerance in the server's form", spec: []func(*appv1.DeployObject){withTolerances}, drift: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Behavior.ScaleUp.Tolerance = ptr.To(resource.MustParse("50m"))
		}, want: true},
		{name: "a tolerance edited", spec: []func(*appv1.DeployObject){withTolerances}, drift: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Behavior.ScaleDown.Tolerance = ptr.To(resource.MustParse("0.5"))
		}},
		{name: "a dropped tolerance does not hide other drift", spec: []func(*appv1.DeployObject){withTolerances}, drift: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Behavior.ScaleUp.Tolerance = nil
			h.Spec.Behavior.ScaleDown.StabilizationWindowSeconds = ptr.To[int32](300)
		}},
		{name: "a scaling rule with its tolerance removed by hand", spec: []func(*appv1.DeployObject){withTolerances}, drift: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Behavior.ScaleDown = nil
		}},
		// The spec changed since live was written, so live may lack the
		// tolerance because it was written before: a write, which a server
		// that keeps tolerance keeps.
		{name: "a tolerance added to the spec", spec: []func(*appv1.DeployObject){withBehavior}, change: func(d *appv1.DeployObject) {
			d.Spec.Autoscaling.Behavior.ScaleUp.Tolerance = ptr.To(resource.MustParse("0.05"))
		}},
		{name: "label removed", drift: func(h *autoscalingv2.HorizontalPodAutoscaler) { delete(h.Labels, children.NameLabel) }},
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
			dobj := testobjects.NewDeployObject(append([]func(*appv1.DeployObject){testobjects.WithAutoscaling}, tc.spec...)...)
			live := testobjects.LiveHPA(dobj)
			live.Annotations["kubectl.kubernetes.io/last-applied-configuration"] = "{}"
			if tc.drift != nil {
				tc.drift(live)
			}
			if tc.change != nil {
				tc.change(dobj)
			}
			desired := testobjects.MustDesiredHPA(dobj)
			if got := children.HPAInSync(live, desired); got != tc.want {
				t.Errorf("hpaInSync = %v, want %v", got, tc.want)
			}
			if got := children.HPAInSync(children.SlimHPA(live.DeepCopy()), desired); got != tc.want {
				t.Errorf("hpaInSync of the cached copy = %v, want %v", got, tc.want)
			}
			merged, changed := children.MergeHPA(live, desired)
			if changed == tc.want || !children.HPAInSync(merged, desired) {
				t.Error("the merged HorizontalPodAutoscaler is not in line")
			}
			if merged.UID != live.UID || merged.Labels["team"] != live.Labels["team"] || merged.Annotations["note"] != live.Annotations["note"] {
				t.Error("others' fields are not kept")
			}
		})
	}
}

func TestSlimHPA(t *testing.T) {
	dobj := testobjects.NewDeployObject(testobjects.WithAutoscaling)
	full := testobjects.LiveHPA(dobj)
	full.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}}
	full.Annotations["kubectl.kubernetes.io/last-applied-configuration"] = "{}"
	slim := children.SlimHPA(full.DeepCopy())
	if slim.ManagedFields != nil || slim.Status.CurrentMetrics != nil || len(slim.Annotations) != 1 {
		t.Errorf("the slim copy keeps what the controller never reads: %+v", slim)
	}
	if a, b := children.AutoscalingCondition(dobj, full, nil), children.AutoscalingCondition(dobj, slim, nil); a != b {
		t.Errorf("condition: full %+v, slim %+v", a, b)
	}
}

func TestAutoscalingCondition(t *testing.T) {
	dobj := testobjects.NewDeployObject(testobjects.WithAutoscaling)
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
		spec       func(*appv1.DeployObject)
		missing    bool
		problem    *children.Problem
		mutate     func(*autoscalingv2.HorizontalPodAutoscaler)
		wantStatus metav1.ConditionStatus
		wantReason string
		// wantMessage is the whole message
		wantMessage string
	}{
		{name: "scaling", wantStatus: metav1.ConditionTrue, wantReason: "ValidMetricFound",
			wantMessage: "HorizontalPodAutoscaler web: 2 current, 2 desired replicas, between 2 and 5"},
		{name: "limited", mutate: setCond(autoscalingv2.ScalingLimited, corev1.ConditionTrue, "TooManyReplicas", "the desired replica count is more than the maximum replica count"),
			wantStatus: metav1.ConditionTrue, wantReason: "ValidMetricFound", wantMessage: "HorizontalPodAutoscaler web: 2 current, 2 desired replicas, between 2 and 5; limited: the desired replica count is more than the maximum replica count"},
		{name: "no metrics", mutate: setCond(autoscalingv2.ScalingActive, corev1.ConditionFalse, "FailedGetResourceMetric", "unable to get metrics for resource cpu"),
			wantStatus: metav1.ConditionFalse, wantReason: "FailedGetResourceMetric", wantMessage: "HorizontalPodAutoscaler web is not scaling: unable to get metrics for resource cpu"},
		{name: "cannot read the scale", mutate: setCond(autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedGetScale", "deployobjects.app.deployobject.dev \"web\" is forbidden"),
			wantStatus: metav1.ConditionFalse, wantReason: "FailedGetScale", wantMessage: "HorizontalPodAutoscaler web cannot scale DeployObject web: deployobjects.app.deployobject.dev \"web\" is forbidden"},
		{name: "not evaluated yet", mutate: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Status = autoscalingv2.HorizontalPodAutoscalerStatus{}
		},
			wantStatus: metav1.ConditionFalse, wantReason: appv1.ReasonProgressing, wantMessage: "waiting for the HorizontalPodAutoscaler controller to evaluate HorizontalPodAutoscaler web"},
		// A condition's reason needs at least one character: an empty one
		// from the autoscaler would make the status write invalid.
		{name: "reason left empty", mutate: setCond(autoscalingv2.ScalingActive, corev1.ConditionFalse, "", "?"),
			wantStatus: metav1.ConditionFalse, wantReason: "ScalingInactive", wantMessage: "HorizontalPodAutoscaler web is not scaling: ?"},
		{name: "reason left empty while unable to scale", mutate: setCond(autoscalingv2.AbleToScale, corev1.ConditionFalse, "", "?"),
			wantStatus: metav1.ConditionFalse, wantReason: "NotAbleToScale", wantMessage: "HorizontalPodAutoscaler web cannot scale DeployObject web: ?"},
		{name: "reason left empty while scaling", mutate: setCond(autoscalingv2.ScalingActive, corev1.ConditionTrue, "", ""),
			wantStatus: metav1.ConditionTrue, wantReason: "ScalingActive", wantMessage: "HorizontalPodAutoscaler web: 2 current, 2 desired replicas, between 2 and 5"},
		{name: "tolerances the API server dropped", spec: func(d *appv1.DeployObject) {
			d.Spec.Autoscaling.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleUp:   &autoscalingv2.HPAScalingRules{Tolerance: ptr.To(resource.MustParse("0.05"))},
				ScaleDown: &autoscalingv2.HPAScalingRules{Tolerance: ptr.To(resource.MustParse("0.2"))},
			}
		}, mutate: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Behavior.ScaleUp.Tolerance = nil
			h.Spec.Behavior.ScaleDown.Tolerance = nil
		}, wantStatus: metav1.ConditionTrue, wantReason: "ValidMetricFound",
			wantMessage: "HorizontalPodAutoscaler web: 2 current, 2 desired replicas, between 2 and 5; the API server dropped behavior.scaleUp.tolerance and behavior.scaleDown.tolerance: they need Kubernetes 1.35 or later (feature gate HPAConfigurableTolerance), and the cluster-wide tolerance applies"},
		{name: "a tolerance the API server dropped while it cannot scale", spec: func(d *appv1.DeployObject) {
			d.Spec.Autoscaling.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{Tolerance: ptr.To(resource.MustParse("0.2"))}}
		}, mutate: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Behavior.ScaleDown.Tolerance = nil
			setCond(autoscalingv2.ScalingActive, corev1.ConditionFalse, "FailedGetResourceMetric", "unable to get metrics for resource cpu")(h)
		}, wantStatus: metav1.ConditionFalse, wantReason: "FailedGetResourceMetric",
			wantMessage: "HorizontalPodAutoscaler web is not scaling: unable to get metrics for resource cpu; the API server dropped behavior.scaleDown.tolerance: it needs Kubernetes 1.35 or later (feature gate HPAConfigurableTolerance), and the cluster-wide tolerance applies"},
		{name: "not made yet", missing: true, wantStatus: metav1.ConditionFalse, wantReason: appv1.ReasonProgressing, wantMessage: "HorizontalPodAutoscaler web does not exist yet"},
		{name: "blocked", missing: true, problem: &children.Problem{Kind: children.KindHPA, Reason: appv1.ReasonQuotaExceeded, Message: "exceeded quota: q"},
			wantStatus: metav1.ConditionFalse, wantReason: appv1.ReasonQuotaExceeded, wantMessage: "exceeded quota: q"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dobj := dobj.DeepCopy()
			if tc.spec != nil {
				tc.spec(dobj)
			}
			h := testobjects.LiveHPA(dobj)
			if tc.mutate != nil {
				tc.mutate(h)
			}
			if tc.missing {
				h = nil
			}
			c := children.AutoscalingCondition(dobj, h, tc.problem)
			if c.Type != appv1.ConditionAutoscaling || c.Status != tc.wantStatus || c.Reason != tc.wantReason || c.Message != tc.wantMessage {
				t.Errorf("got %+v, want %s %s %q", c, tc.wantStatus, tc.wantReason, tc.wantMessage)
			}
		})
	}
}
