//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
)

// childrenResync is the resync period of the controllers these tests run,
// short so that a test can wait for resyncs.
const childrenResync = 4 * time.Second

// startChildrenController runs a controller of the test's own for ns, a
// namespace of newOwnNamespace, with a short resync.
func startChildrenController(t *testing.T, ns string) *controllerProcess {
	t.Helper()
	if _, own := ownNamespaces.Load(ns); !own {
		t.Fatalf("namespace %s is the shared controller's too: make it with newOwnNamespace", ns)
	}
	p, err := startController("children", "--namespace="+ns, "--resync-period="+childrenResync.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.stop(syscall.SIGKILL, 5*time.Second) })
	return p
}

// restartWritesNothing stops p, a controller of startChildrenController,
// starts another for ns in its place, and checks that the new one
// reconciles and writes nothing over a resync: a controller that starts
// finds the children it made in line, as the API server stores them. It
// returns the new controller.
func restartWritesNothing(t *testing.T, p *controllerProcess, ns string) *controllerProcess {
	t.Helper()
	if err := p.stop(syscall.SIGTERM, 30*time.Second); err != nil {
		t.Fatalf("stopping: %v", err)
	}
	restarted := time.Now()
	p, err := startController("children-2", "--namespace="+ns, "--resync-period="+childrenResync.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.stop(syscall.SIGKILL, 5*time.Second) })
	time.Sleep(childrenResync)
	if w := allWrites(t, ns, restarted); len(w) != 0 {
		t.Errorf("writes after a restart: %v", w)
	}
	if n, err := p.metric("deployobject_reconcile_total"); err != nil || n < 2 {
		t.Errorf("the restarted controller reconciled %v times (err %v): the window without writes shows nothing", n, err)
	}
	return p
}

// waitChildCondition waits until the DeployObject's condition of type condType has
// status and reason, and returns it.
func waitChildCondition(t *testing.T, ns, name, condType string, status metav1.ConditionStatus, reason string) metav1.Condition {
	t.Helper()
	var got metav1.Condition
	eventually(t, 2*timeout, fmt.Sprintf("%s condition %s/%s on %s", condType, status, reason, name), func() (bool, string, error) {
		d, err := env.client.AppV1().DeployObjects(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		c := meta.FindStatusCondition(d.Status.Conditions, condType)
		if c == nil {
			return false, "no condition", nil
		}
		got = *c
		return c.Status == status && c.Reason == reason && c.ObservedGeneration == d.Generation, fmt.Sprintf("%s/%s: %s", c.Status, c.Reason, c.Message), nil
	})
	return got
}

// waitGone waits until get reports the object missing.
func waitGone(t *testing.T, what string, get func() error) {
	t.Helper()
	eventually(t, timeout, what+" deleted", func() (bool, string, error) {
		err := get()
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		return false, "still there", err
	})
}

// scaleWriters counts, by user agent (up to its first '/'), the writes to
// the scale subresource of DeployObject name in ns since t0, from the
// audit log.
func scaleWriters(t *testing.T, ns, name string, since time.Time) map[string]int {
	t.Helper()
	n := map[string]int{}
	auditLog(t, since, func(e auditEvent) {
		r := e.ObjectRef
		if r.Resource == "deployobjects" && r.Subresource == "scale" && r.Namespace == ns && r.Name == name &&
			writeVerbs[e.Verb] && e.ResponseStatus.Code < 300 {
			agent, _, _ := strings.Cut(e.UserAgent, "/")
			n[agent]++
		}
	})
	return n
}

// expectOnlyRefusedCreates fails unless the controller's only writes to the
// object name of resource in ns were creates, which the API server refuses
// for a name that is taken.
func expectOnlyRefusedCreates(t *testing.T, ns, resource, name string) {
	t.Helper()
	for _, verb := range []string{"update", "patch", "delete"} {
		if n := controllerWrites(t, ns, resource, verb, time.Time{})[name]; n != 0 {
			t.Errorf("the controller made %d %s requests to the foreign %s %s", n, verb, resource, name)
		}
	}
}

// TestDisruptionBudget: a PodDisruptionBudget is created for a DeployObject
// that asks for one and reported in its status; drift is corrected; steady
// state costs no write; removing the budget from the spec removes it; a
// foreign PodDisruptionBudget of the same name is reported and never
// touched.
func TestDisruptionBudget(t *testing.T) {
	t.Parallel()
	ns := newOwnNamespace(t)
	p := startChildrenController(t, ns)
	pdbs := env.kube.PolicyV1().PodDisruptionBudgets(ns)

	create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
		d.Spec.DisruptionBudget = &appv1.DisruptionBudget{MinAvailable: ptr.To(intstr.FromInt32(1))}
	}))
	dobj := waitReady(t, ns, "web")
	pdb, err := pdbs.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the PodDisruptionBudget: %v", err)
	}
	if !controlledBy(pdb, dobj) || pdb.Spec.MinAvailable.IntValue() != 1 || pdb.Spec.Selector.MatchLabels[appv1.LabelName] != "web" {
		t.Errorf("PodDisruptionBudget = %+v", pdb)
	}
	// The disruption controller counts the two ready pods: one may go.
	c := waitChildCondition(t, ns, "web", appv1.ConditionDisruptionBudget, metav1.ConditionTrue, appv1.ReasonDisruptionsAllowed)
	t.Logf("DisruptionBudget condition: %s", c.Message)
	if out, err := kubectl("-n", ns, "describe", "dobj", "web"); err != nil || !strings.Contains(out, "DisruptionsAllowed") {
		t.Errorf("kubectl describe does not show the budget: %v\n%s", err, out)
	}

	expectQuiet(t, p, ns, 3*childrenResync, true)

	kubectlPatch(t, ns, "pdb/web", `[{"op":"replace","path":"/spec/minAvailable","value":0}]`)
	eventually(t, timeout, "the budget's drift corrected", func() (bool, string, error) {
		p, err := pdbs.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return p.Spec.MinAvailable.IntValue() == 1, fmt.Sprintf("minAvailable %s", p.Spec.MinAvailable.String()), nil
	})

	// A scale that would leave no pod evictable is refused at admission.
	if out, err := kubectl("-n", ns, "scale", "dobj/web", "--replicas=1"); err == nil || !strings.Contains(out, "never allows an eviction") {
		t.Errorf("kubectl scale to 1 with minAvailable 1: %v\n%s", err, out)
	}

	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.DisruptionBudget = nil })
	waitGone(t, "PodDisruptionBudget web", func() error {
		_, err := pdbs.Get(ctx, "web", metav1.GetOptions{})
		return err
	})
	eventually(t, timeout, "the DisruptionBudget condition removed", func() (bool, string, error) {
		d := getDO(t, ns, "web")
		c := meta.FindStatusCondition(d.Status.Conditions, appv1.ConditionDisruptionBudget)
		return c == nil && d.Status.ObservedGeneration == d.Generation, fmt.Sprintf("%+v", c), nil
	})

	foreign, err := pdbs.Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "theirs", Labels: map[string]string{"owner": "someone-else"}},
		Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(3)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "theirs"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	create(t, newDO(ns, "theirs", func(d *appv1.DeployObject) {
		d.Spec.DisruptionBudget = &appv1.DisruptionBudget{MaxUnavailable: ptr.To(intstr.FromString("50%"))}
	}))
	waitReason(t, ns, "theirs", metav1.ConditionFalse, appv1.ReasonResourceConflict)
	c = waitChildCondition(t, ns, "theirs", appv1.ConditionDisruptionBudget, metav1.ConditionFalse, appv1.ReasonResourceConflict)
	if !strings.Contains(c.Message, "PodDisruptionBudget theirs exists and is not controlled by this DeployObject") {
		t.Errorf("condition message %q does not say why", c.Message)
	}
	// The disruption controller writes its status; nobody else may write.
	if got, err := pdbs.Get(ctx, "theirs", metav1.GetOptions{}); err != nil || got.Generation != foreign.Generation || !equality.Semantic.DeepEqual(got.Spec, foreign.Spec) {
		t.Errorf("the foreign PodDisruptionBudget was changed: %v %+v", err, got)
	}
	expectOnlyRefusedCreates(t, ns, "poddisruptionbudgets", "theirs")
	// The blocked budget does not keep the Deployment from being made.
	getDeployment(t, ns, "theirs")
}

// TestAutoscaling: the HorizontalPodAutoscaler scales the DeployObject
// through its scale subresource and the controller follows, never reverting
// the decision across syncs and resyncs.
//
// There is no metrics server in the local cluster. kube-controller-manager's
// HPA controller still acts on a replica count outside [minReplicas,
// maxReplicas] without metrics, so the first decision below is the real
// autoscaler's; the later one plays the autoscaler's part by writing the
// scale subresource as it does, since a metrics-driven decision cannot
// happen here.
func TestAutoscaling(t *testing.T) {
	t.Parallel()
	ns := newOwnNamespace(t)
	p := startChildrenController(t, ns)
	hpas := env.kube.AutoscalingV2().HorizontalPodAutoscalers(ns)

	start := time.Now()
	create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Replicas = ptr.To[int32](1)
		d.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
		d.Spec.Autoscaling = &appv1.Autoscaling{MinReplicas: ptr.To[int32](2), MaxReplicas: 4, TargetCPUUtilizationPercentage: ptr.To[int32](60)}
		// tolerance needs Kubernetes 1.35: an older API server drops it,
		// and the steady state below must hold all the same.
		d.Spec.Autoscaling.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{Tolerance: ptr.To(resource.MustParse("0.2"))}}
		// The budget is judged at minReplicas, not at replicas 1.
		d.Spec.DisruptionBudget = &appv1.DisruptionBudget{MinAvailable: ptr.To(intstr.FromInt32(1))}
	}))
	hpa := waitHPA(t, ns, "web")
	if ref := hpa.Spec.ScaleTargetRef; ref.APIVersion != "app.deployobject.dev/v1" || ref.Kind != "DeployObject" || ref.Name != "web" {
		t.Errorf("scaleTargetRef = %+v, want the DeployObject", ref)
	}
	minor := serverMinor(t)
	if kept := hpa.Spec.Behavior != nil && hpa.Spec.Behavior.ScaleDown != nil && hpa.Spec.Behavior.ScaleDown.Tolerance != nil; kept != (minor >= 35) {
		t.Errorf("Kubernetes 1.%d: the autoscaler's scaleDown tolerance is kept: %v, want %v (docs/autoscaling.md)", minor, kept, minor >= 35)
	}

	// The autoscaler raises replicas 1 to minReplicas 2 through /scale.
	eventually(t, 3*timeout, "the autoscaler to scale to minReplicas", func() (bool, string, error) {
		d := getDO(t, ns, "web")
		return *d.Spec.Replicas == 2, fmt.Sprintf("spec.replicas %d", *d.Spec.Replicas), nil
	})
	writers := scaleWriters(t, ns, "web", start)
	if writers["kube-controller-manager"] == 0 {
		t.Errorf("scale writes by %v, want kube-controller-manager's autoscaler among them", writers)
	}
	d := waitReady(t, ns, "web")
	if got := *getDeployment(t, ns, "web").Spec.Replicas; got != 2 || d.Status.ReadyReplicas != 2 {
		t.Errorf("Deployment replicas %d, ready %d after the autoscaler's decision, want 2", got, d.Status.ReadyReplicas)
	}
	// Without metrics the autoscaler says so, and the DeployObject tells.
	c := waitChildCondition(t, ns, "web", appv1.ConditionAutoscaling, metav1.ConditionFalse, "FailedGetResourceMetric")
	t.Logf("Autoscaling condition: %s", c.Message)
	if dropped := strings.Contains(c.Message, "the API server dropped behavior.scaleDown.tolerance"); dropped != (minor < 35) {
		t.Errorf("Kubernetes 1.%d: the Autoscaling condition names the dropped tolerance: %v, want %v", minor, dropped, minor < 35)
	}
	if out, err := kubectl("-n", ns, "describe", "dobj", "web"); err != nil || !strings.Contains(out, "FailedGetResourceMetric") {
		t.Errorf("kubectl describe does not show the autoscaler's state: %v\n%s", err, out)
	}

	// Steady state, across resyncs and the autoscaler's evaluations (every
	// 15 s): nothing written, nothing reverted.
	expectQuiet(t, p, ns, 20*time.Second, true)
	if got := *getDO(t, ns, "web").Spec.Replicas; got != 2 {
		t.Errorf("spec.replicas %d after resyncs, want the autoscaler's 2", got)
	}

	// A decision as the autoscaler writes it: PUT on /scale.
	scaled := time.Now()
	scales := env.dynamic.Resource(appv1.SchemeGroupVersion.WithResource("deployobjects")).Namespace(ns)
	scale, err := scales.Get(ctx, "web", metav1.GetOptions{}, "scale")
	if err != nil {
		t.Fatalf("reading the scale subresource: %v", err)
	}
	if err := unstructured.SetNestedField(scale.Object, int64(3), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	if _, err := scales.Update(ctx, scale, metav1.UpdateOptions{FieldManager: "e2e-autoscaler"}, "scale"); err != nil {
		t.Fatalf("writing the scale subresource: %v", err)
	}
	waitReady(t, ns, "web")
	if got := *getDeployment(t, ns, "web").Spec.Replicas; got != 3 {
		t.Errorf("Deployment replicas %d after scaling to 3", got)
	}
	time.Sleep(3 * childrenResync)
	if got := *getDO(t, ns, "web").Spec.Replicas; got != 3 {
		t.Errorf("spec.replicas %d after resyncs, want the scale decision 3", got)
	}
	if got := *getDeployment(t, ns, "web").Spec.Replicas; got != 3 {
		t.Errorf("Deployment replicas %d after resyncs, want 3", got)
	}
	if w := controllerWrites(t, ns, "deployobjects", "update", scaled); len(w) != 0 {
		t.Errorf("the controller updated the DeployObject: %v", w)
	}

	kubectlPatch(t, ns, "hpa/web", `[{"op":"replace","path":"/spec/maxReplicas","value":10}]`)
	eventually(t, timeout, "the autoscaler's drift corrected", func() (bool, string, error) {
		h, err := hpas.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return h.Spec.MaxReplicas == 4, fmt.Sprintf("maxReplicas %d", h.Spec.MaxReplicas), nil
	})

	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.Autoscaling = nil })
	waitGone(t, "HorizontalPodAutoscaler web", func() error {
		_, err := hpas.Get(ctx, "web", metav1.GetOptions{})
		return err
	})
	d = waitReady(t, ns, "web")
	if *d.Spec.Replicas != 3 || meta.FindStatusCondition(d.Status.Conditions, appv1.ConditionAutoscaling) != nil {
		t.Errorf("after removing autoscaling: replicas %d, conditions %+v; want 3 and no Autoscaling", *d.Spec.Replicas, d.Status.Conditions)
	}

	foreign, err := hpas.Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "theirs"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "elsewhere"},
			MaxReplicas:    7,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	create(t, newDO(ns, "theirs", func(d *appv1.DeployObject) {
		d.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}
		d.Spec.Autoscaling = &appv1.Autoscaling{MaxReplicas: 3, TargetMemoryUtilizationPercentage: ptr.To[int32](80)}
	}))
	c = waitChildCondition(t, ns, "theirs", appv1.ConditionAutoscaling, metav1.ConditionFalse, appv1.ReasonResourceConflict)
	if !strings.Contains(c.Message, "HorizontalPodAutoscaler theirs exists and is not controlled by this DeployObject") {
		t.Errorf("condition message %q does not say why", c.Message)
	}
	waitReason(t, ns, "theirs", metav1.ConditionFalse, appv1.ReasonResourceConflict)
	// The autoscaler writes its status; nobody else may write.
	if got, err := hpas.Get(ctx, "theirs", metav1.GetOptions{}); err != nil || got.Generation != foreign.Generation || !equality.Semantic.DeepEqual(got.Spec, foreign.Spec) {
		t.Errorf("the foreign HorizontalPodAutoscaler was changed: %v %+v", err, got)
	}
	expectOnlyRefusedCreates(t, ns, "horizontalpodautoscalers", "theirs")
}

// TestAutoscalingMetrics: a DeployObject that scales on a queue's length
// (an External metric) and on a custom metric of its pods gets an
// autoscaler carrying both as the API server stores them; the autoscaler's
// verdict (no external metrics API in the local cluster) shows in the
// Autoscaling condition; with the API server's defaults and another
// controller's annotation on the autoscaler, the controller writes nothing
// across resyncs and across a restart; and removing the metrics returns
// the autoscaler to the CPU-only spec an object without metrics gets.
func TestAutoscalingMetrics(t *testing.T) {
	t.Parallel()
	ns := newOwnNamespace(t)
	p := startChildrenController(t, ns)
	hpas := env.kube.AutoscalingV2().HorizontalPodAutoscalers(ns)

	create(t, newDO(ns, "worker", func(d *appv1.DeployObject) {
		d.Spec.Replicas = nil
		d.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
		d.Spec.Autoscaling = &appv1.Autoscaling{MaxReplicas: 10, Metrics: []appv1.MetricSpec{
			{Type: appv1.ExternalMetricSourceType, External: &appv1.ExternalMetricSource{
				Metric: appv1.MetricIdentifier{Name: "queue_messages_ready", Selector: &appv1.LabelSelector{MatchLabels: map[string]string{"queue": "orders"}}},
				Target: appv1.MetricTarget{Type: appv1.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("30"))},
			}},
			{Type: appv1.PodsMetricSourceType, Pods: &appv1.PodsMetricSource{
				Metric: appv1.MetricIdentifier{Name: "http_requests_per_second"},
				// Stored as 500m: the live autoscaler holds it in another
				// form than the spec.
				Target: appv1.MetricTarget{Type: appv1.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("0.5"))},
			}},
		}}
	}))
	hpa := waitHPA(t, ns, "worker")
	m := hpa.Spec.Metrics
	if len(m) != 2 || m[0].Type != autoscalingv2.ExternalMetricSourceType || m[0].External == nil || m[1].Type != autoscalingv2.PodsMetricSourceType || m[1].Pods == nil {
		t.Fatalf("metrics as stored: %+v, want the External metric and the Pods metric", m)
	}
	if ext := m[0].External; ext.Metric.Name != "queue_messages_ready" || ext.Metric.Selector == nil || ext.Metric.Selector.MatchLabels["queue"] != "orders" ||
		ext.Target.Type != autoscalingv2.AverageValueMetricType || ext.Target.AverageValue == nil || ext.Target.AverageValue.Cmp(resource.MustParse("30")) != 0 {
		t.Errorf("External metric as stored: %+v", ext)
	}
	if pods := m[1].Pods; pods.Metric.Name != "http_requests_per_second" || pods.Target.AverageValue == nil || pods.Target.AverageValue.Cmp(resource.MustParse("500m")) != 0 {
		t.Errorf("Pods metric as stored: %+v", pods)
	}

	// The first metric the autoscaler cannot read sets its condition: the
	// External one, as the local cluster serves no external metrics API.
	c := waitChildCondition(t, ns, "worker", appv1.ConditionAutoscaling, metav1.ConditionFalse, "FailedGetExternalMetric")
	t.Logf("Autoscaling condition: %s", c.Message)
	if !strings.Contains(c.Message, "queue_messages_ready") {
		t.Errorf("the condition does not name the metric: %q", c.Message)
	}

	// Another controller's annotation on the autoscaler is kept and costs
	// no write.
	if out, err := kubectl("-n", ns, "annotate", "hpa/worker", "team.example.com/owner=payments"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	expectQuiet(t, p, ns, 3*childrenResync, true)
	restartWritesNothing(t, p, ns)

	// Back to CPU alone: the autoscaler is the one an object that never had
	// metrics gets, hash included.
	updateDO(t, ns, "worker", func(d *appv1.DeployObject) {
		d.Spec.Autoscaling.Metrics = nil
		d.Spec.Autoscaling.TargetCPUUtilizationPercentage = ptr.To[int32](60)
	})
	want, err := children.DesiredHPA(newDO(ns, "worker", func(d *appv1.DeployObject) {
		d.Spec.Autoscaling = &appv1.Autoscaling{MaxReplicas: 10, TargetCPUUtilizationPercentage: ptr.To[int32](60)}
	}))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, timeout, "the autoscaler back to CPU alone", func() (bool, string, error) {
		h, err := hpas.Get(ctx, "worker", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return equality.Semantic.DeepEqual(h.Spec.Metrics, want.Spec.Metrics) &&
				h.Annotations[appv1.AnnotationAutoscalerHash] == want.Annotations[appv1.AnnotationAutoscalerHash],
			fmt.Sprintf("metrics %+v, hash %s", h.Spec.Metrics, h.Annotations[appv1.AnnotationAutoscalerHash]), nil
	})
	if h, err := hpas.Get(ctx, "worker", metav1.GetOptions{}); err != nil || h.Annotations["team.example.com/owner"] != "payments" {
		t.Errorf("the other controller's annotation is gone: %v %v", err, h.Annotations)
	}
	waitChildCondition(t, ns, "worker", appv1.ConditionAutoscaling, metav1.ConditionFalse, "FailedGetResourceMetric")
}

// waitHPA waits for the HorizontalPodAutoscaler name in ns.
func waitHPA(t *testing.T, ns, name string) *autoscalingv2.HorizontalPodAutoscaler {
	t.Helper()
	var h *autoscalingv2.HorizontalPodAutoscaler
	eventually(t, timeout, "HorizontalPodAutoscaler "+name, func() (bool, string, error) {
		var err error
		h, err = env.kube.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, "not found", nil
		}
		return err == nil, "", err
	})
	return h
}

// TestAutoscalerMayScaleDeployObjects: the built-in role of the
// autoscaler's ServiceAccount may read and write any scale subresource,
// DeployObjects' included. The local cluster's kube-controller-manager runs
// with the cluster's admin credentials, so TestAutoscaling does not show
// this; a cluster whose kube-controller-manager uses one credential per
// controller (--use-service-account-credentials, as kubeadm sets it) does.
func TestAutoscalerMayScaleDeployObjects(t *testing.T) {
	t.Parallel()
	const sa = "system:serviceaccount:kube-system:horizontal-pod-autoscaler"
	for _, verb := range []string{"get", "update"} {
		out, _ := kubectl("auth", "can-i", "--as="+sa, verb, "deployobjects.app.deployobject.dev", "--subresource=scale", "-n", "default")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if got := lines[len(lines)-1]; got != "yes" {
			t.Errorf("can the autoscaler %s deployobjects/scale: %q, want yes", verb, got)
		}
	}
}
