//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// gatewayNamespace is a namespace of the test's own on a cluster that
// serves the Gateway API, and a client of it.
func gatewayNamespace(t *testing.T) (string, gatewayclient.Interface) {
	t.Helper()
	ns := newOwnNamespace(t)
	if !gatewayAPIServed(t) {
		installGatewayAPI(t)
	}
	return ns, gatewayclient.NewForConfigOrDie(env.cfg)
}

// startGatewayWriter plays the Gateway implementation for the HTTPRoutes
// of ns until the test ends: it accepts each new generation of a route,
// for every parent, ack after it first saw that generation.
func startGatewayWriter(t *testing.T, gw gatewayclient.Interface, ns string, ack time.Duration) {
	t.Helper()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	t.Cleanup(func() { close(done); wg.Wait() })
	seen := map[string]time.Time{}
	go func() {
		defer wg.Done()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			routes, err := gw.GatewayV1().HTTPRoutes(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				continue
			}
			for i := range routes.Items {
				r := &routes.Items[i]
				key := fmt.Sprintf("%s/%d", r.Name, r.Generation)
				if acked(r) {
					continue
				}
				first, ok := seen[key]
				if !ok {
					seen[key] = time.Now()
					continue
				}
				if time.Since(first) < ack {
					continue
				}
				r.Status.Parents = nil
				for _, ref := range r.Spec.ParentRefs {
					r.Status.Parents = append(r.Status.Parents, gatewayv1.RouteParentStatus{
						ParentRef: ref, ControllerName: "example.com/test-gateway",
						Conditions: []metav1.Condition{
							{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", Message: "the test accepts it", ObservedGeneration: r.Generation, LastTransitionTime: metav1.Now()},
							{Type: "ResolvedRefs", Status: metav1.ConditionTrue, Reason: "ResolvedRefs", Message: "the test resolves it", ObservedGeneration: r.Generation, LastTransitionTime: metav1.Now()},
						},
					})
				}
				// A conflict is tried again at the next tick.
				_, _ = gw.GatewayV1().HTTPRoutes(ns).UpdateStatus(ctx, r, metav1.UpdateOptions{})
			}
		}
	}()
}

// acked reports whether every parent of r accepted its current generation.
func acked(r *gatewayv1.HTTPRoute) bool {
	if len(r.Status.Parents) != len(r.Spec.ParentRefs) {
		return false
	}
	for _, p := range r.Status.Parents {
		c := meta.FindStatusCondition(p.Conditions, "Accepted")
		if c == nil || c.ObservedGeneration != r.Generation {
			return false
		}
	}
	return true
}

// waitCanary waits until the DeployObject's status.canary satisfies ok,
// and returns it.
func waitCanary(t *testing.T, ns, name, what string, ok func(*appv1.CanaryStatus) bool) *appv1.CanaryStatus {
	t.Helper()
	var st *appv1.CanaryStatus
	eventually(t, timeout, "canary "+what, func() (bool, string, error) {
		d := getDO(t, ns, name)
		st = d.Status.Canary
		_, state := readyState(d)
		if st == nil {
			return false, "no status.canary; " + state, nil
		}
		return ok(st), fmt.Sprintf("canary %s %s step %d weight %d/%d, %d/%d pods; %s", st.ID, st.Phase, st.Step, st.ObservedWeight, st.DesiredWeight, st.AvailableReplicas, st.Replicas, state), nil
	})
	return st
}

// canaryTestPods are the pods of DeployObject name, by UID, with their
// pod-template-hash.
func canaryTestPods(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	list, err := env.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.Set{appv1.LabelName: name}.String()})
	if err != nil {
		t.Fatal(err)
	}
	pods := map[string]string{}
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			pods[string(p.UID)] = p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
		}
	}
	return pods
}

func annotate(t *testing.T, ns, name, key, value string) {
	t.Helper()
	if out, err := kubectl("-n", ns, "annotate", "deployobject/"+name, key+"="+value, "--overwrite"); err != nil {
		t.Fatalf("kubectl annotate: %v: %s", err, out)
	}
}

// routeWeights are the HTTPRoute's backends with their weights, rule by
// rule.
func routeWeights(t *testing.T, gw gatewayclient.Interface, ns, name string) string {
	t.Helper()
	r, err := gw.GatewayV1().HTTPRoutes(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, rule := range r.Spec.Rules {
		var refs []string
		for _, b := range rule.BackendRefs {
			refs = append(refs, fmt.Sprintf("%s=%d", b.Name, ptr.Deref(b.Weight, 1)))
		}
		rules = append(rules, strings.Join(refs, ","))
	}
	return strings.Join(rules, ";")
}

// TestCanaryPromotesByRouteWeights: a new image with spec.canary runs as
// a canary beside the full stable Deployment. Its weight is raised only
// once its pods are available and the Gateway accepted the route; the
// stable Service selects only the stable pods meanwhile; a pause without a
// duration waits, writing nothing, until the promote annotation names it;
// the promotion keeps the canary's pods, so the Deployment makes only the
// rest of the new revision's; and nothing of the canary is left.
func TestCanaryPromotesByRouteWeights(t *testing.T) {
	t.Parallel()
	ns, gw := gatewayNamespace(t)
	startGatewayWriter(t, gw, ns, 2*time.Second)
	p := startChildrenController(t, ns)
	create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Replicas = ptr.To[int32](4)
		d.Spec.Route = &appv1.Route{Port: "http", ParentRefs: []appv1.GatewayRef{{Name: "gw"}}}
		d.Spec.Canary = &appv1.Canary{
			Steps: []appv1.CanaryStep{
				{SetWeight: ptr.To[int32](25)}, {Pause: &appv1.CanaryPause{Duration: ptr.To("2s")}},
				{SetWeight: ptr.To[int32](50)}, {Pause: &appv1.CanaryPause{}},
			},
			ScaleDownDelaySeconds: ptr.To[int32](2),
			AutoAbort:             &appv1.CanaryAutoAbort{ProgressDeadlineSeconds: ptr.To[int32](120)},
		}
	}))
	waitReady(t, ns, "web")
	if got := routeWeights(t, gw, ns, "web"); got != "web=1" {
		t.Errorf("route backends before the canary: %s, want the stable Service alone", got)
	}
	stable := canaryTestPods(t, ns, "web")

	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.Image = "nginx:1.28" })
	st := waitCanary(t, ns, "web", "paused at step 3", func(c *appv1.CanaryStatus) bool {
		return c.Phase == appv1.CanaryPaused && c.Step == 3
	})
	if st.ObservedWeight != 50 || st.Replicas != 2 || st.AvailableReplicas != 2 || st.Mode != appv1.CanaryModeRoute {
		t.Errorf("canary paused at step 3: %+v, want weight 50 accepted with 2 of 2 pods in Route mode", st)
	}
	if got, want := routeWeights(t, gw, ns, "web"), "web=50,web-canary=50"; got != want {
		t.Errorf("route backends: %s, want %s", got, want)
	}
	if sel := getService(t, ns, "web").Spec.Selector; sel[appsv1.DefaultDeploymentUniqueLabelKey] != st.StableRevision {
		t.Errorf("stable Service selector %v, want it pinned to the stable pods (%s)", sel, st.StableRevision)
	}
	if sel := getService(t, ns, "web-canary").Spec.Selector; sel[appsv1.DefaultDeploymentUniqueLabelKey] != st.ID {
		t.Errorf("canary Service selector %v, want the canary's pods (%s)", sel, st.ID)
	}
	now := canaryTestPods(t, ns, "web")
	var canaryPods []string
	for uid, hash := range now {
		if hash == st.ID {
			canaryPods = append(canaryPods, uid)
		} else if _, ok := stable[uid]; !ok {
			t.Errorf("pod %s (hash %s) is neither the stable's nor the canary's", uid, hash)
		}
	}
	for uid := range stable {
		if _, ok := now[uid]; !ok {
			t.Errorf("stable pod %s is gone during the canary", uid)
		}
	}
	if len(canaryPods) != 2 {
		t.Errorf("%d canary pods, want 2", len(canaryPods))
	}
	c := waitReason(t, ns, "web", metav1.ConditionFalse, appv1.ReasonCanaryPaused)
	promote := st.ID + "/3"
	if !strings.Contains(c.Message, "app.deployobject.dev/canary-promote="+promote) {
		t.Errorf("Ready message %q does not give the promote command", c.Message)
	}
	// The pause waits for someone: nothing is written meanwhile.
	expectQuiet(t, p, ns, 3*childrenResync, true)
	// A promote of another step does nothing.
	annotate(t, ns, "web", appv1.AnnotationCanaryPromote, st.ID+"/1")
	time.Sleep(2 * childrenResync)
	if st := getDO(t, ns, "web").Status.Canary; st == nil || st.Phase != appv1.CanaryPaused {
		t.Fatalf("after a promote of step 1: canary %+v, want it still paused", st)
	}

	annotate(t, ns, "web", appv1.AnnotationCanaryPromote, promote)
	waitReady(t, ns, "web")
	eventually(t, timeout, "the canary's children gone", func() (bool, string, error) {
		d := getDO(t, ns, "web")
		_, err := env.kube.CoreV1().Services(ns).Get(ctx, "web-canary", metav1.GetOptions{})
		return d.Status.Canary == nil && apierrors.IsNotFound(err), fmt.Sprintf("status.canary %+v, canary Service: %v", d.Status.Canary, err), nil
	})
	if got := routeWeights(t, gw, ns, "web"); got != "web=1" {
		t.Errorf("route backends after the promotion: %s, want the stable Service alone", got)
	}
	if sel := getService(t, ns, "web").Spec.Selector; sel[appsv1.DefaultDeploymentUniqueLabelKey] != "" {
		t.Errorf("stable Service selector %v after the promotion, want it unpinned", sel)
	}
	after := canaryTestPods(t, ns, "web")
	kept, created := 0, 0
	for uid, hash := range after {
		switch {
		case slices.Contains(canaryPods, uid):
			kept++
		case hash == st.ID:
			created++
		default:
			t.Errorf("pod %s of template %s after the promotion, want only the new revision's", uid, hash)
		}
	}
	t.Logf("after the promotion: %d canary pods kept, %d made by the Deployment", kept, created)
	if kept != 2 || created != 2 {
		t.Errorf("after the promotion: %d canary pods kept and %d made, want 2 and 2: the canary's pods count toward the new revision (N − c new pods)", kept, created)
	}
	d := getDeployment(t, ns, "web")
	if d.Spec.Paused || d.Spec.Template.Spec.Containers[0].Image != "nginx:1.28" {
		t.Errorf("Deployment after the promotion: paused %t, image %s", d.Spec.Paused, d.Spec.Template.Spec.Containers[0].Image)
	}
}

// TestCanaryAbortsThenRetries: a canary whose pods cannot be scheduled
// aborts at its progress deadline without touching the stable pods, stays
// Aborted (Stalled) with the retry command, starts again as a new attempt
// when retried, and a spec back at the stable revision ends it Available.
// Without a route, the split is by the share of pods (ReplicaRatio).
func TestCanaryAbortsThenRetries(t *testing.T) {
	t.Parallel()
	ns := newOwnNamespace(t)
	startChildrenController(t, ns)
	create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Canary = &appv1.Canary{
			Steps:                 []appv1.CanaryStep{{SetWeight: ptr.To[int32](50)}, {Pause: &appv1.CanaryPause{}}},
			ScaleDownDelaySeconds: ptr.To[int32](0),
			AutoAbort:             &appv1.CanaryAutoAbort{ProgressDeadlineSeconds: ptr.To[int32](10)},
		}
	}))
	waitReady(t, ns, "web")
	stable := canaryTestPods(t, ns, "web")
	updateDO(t, ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Image = "nginx:1.28"
		d.Spec.NodeSelector = map[string]string{"example.com/no-such-node": "true"}
	})
	st := waitCanary(t, ns, "web", "aborted", func(c *appv1.CanaryStatus) bool { return c.Phase == appv1.CanaryAborted })
	if st.AbortReason != appv1.AbortProgressDeadline || st.Mode != appv1.CanaryModeReplicaRatio || st.Attempt != 1 {
		t.Errorf("aborted canary %+v, want attempt 1 in ReplicaRatio mode aborted at its ProgressDeadline", st)
	}
	c := waitReason(t, ns, "web", metav1.ConditionFalse, appv1.ReasonCanaryAborted)
	if !strings.Contains(c.Message, appv1.AnnotationCanaryRetry+"="+st.ID) {
		t.Errorf("Ready message %q does not give the retry command", c.Message)
	}
	if d := getDO(t, ns, "web"); meta.FindStatusCondition(d.Status.Conditions, appv1.ConditionStalled) == nil {
		t.Errorf("an aborted canary is not Stalled: %+v", d.Status.Conditions)
	}
	eventually(t, timeout, "the canary's pods gone, the stable's untouched", func() (bool, string, error) {
		now := canaryTestPods(t, ns, "web")
		return equalKeys(now, stable), fmt.Sprintf("pods %v, stable %v", now, stable), nil
	})
	if d := getDeployment(t, ns, "web"); d.Spec.Template.Spec.Containers[0].Image != "nginx:1.27" {
		t.Errorf("the Deployment's image is %s, want the stable nginx:1.27 held", d.Spec.Template.Spec.Containers[0].Image)
	}

	annotate(t, ns, "web", appv1.AnnotationCanaryRetry, st.ID)
	retried := waitCanary(t, ns, "web", "attempt 2", func(c *appv1.CanaryStatus) bool { return c.Attempt == 2 })
	if retried.ID == st.ID || retried.Phase == appv1.CanaryAborted {
		t.Errorf("the retried canary %+v, want a new id, not aborted", retried)
	}
	updateDO(t, ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Image = "nginx:1.27"
		d.Spec.NodeSelector = nil
	})
	waitReady(t, ns, "web")
	eventually(t, timeout, "status.canary and the canary's pods gone", func() (bool, string, error) {
		now := canaryTestPods(t, ns, "web")
		d := getDO(t, ns, "web")
		return d.Status.Canary == nil && equalKeys(now, stable), fmt.Sprintf("canary %+v, pods %v", d.Status.Canary, now), nil
	})
	list, err := env.kube.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: appv1.LabelCanary})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("%d canary ReplicaSets left", len(list.Items))
	}
}

func equalKeys(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

// TestCanaryRestartAndNewRevision: a controller that takes over a paused
// canary writes nothing (its state is in status.canary and the children);
// a new revision mid-canary replaces the canary, without Stalled, by one
// of the new revision from its first step; the spec back at the stable
// revision ends the canary and leaves the stable pods as they were.
func TestCanaryRestartAndNewRevision(t *testing.T) {
	t.Parallel()
	ns := newOwnNamespace(t)
	p := startChildrenController(t, ns)
	create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Canary = &appv1.Canary{
			Steps:                 []appv1.CanaryStep{{SetWeight: ptr.To[int32](50)}, {Pause: &appv1.CanaryPause{}}},
			ScaleDownDelaySeconds: ptr.To[int32](0),
		}
	}))
	waitReady(t, ns, "web")
	stable := canaryTestPods(t, ns, "web")
	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.Image = "nginx:1.28" })
	first := waitCanary(t, ns, "web", "paused", func(c *appv1.CanaryStatus) bool { return c.Phase == appv1.CanaryPaused })
	if first.ObservedWeight != 50 || first.Replicas != 2 {
		t.Errorf("paused canary %+v, want 2 pods beside 2 stable ones, 50 %%", first)
	}
	p = restartWritesNothing(t, p, ns)
	if st := getDO(t, ns, "web").Status.Canary; st == nil || st.ID != first.ID || !st.StepStartTime.Equal(first.StepStartTime) {
		t.Errorf("after a restart: canary %+v, want %+v unchanged", st, first)
	}

	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.Image = "nginx:1.29" })
	second := waitCanary(t, ns, "web", "of the new revision paused", func(c *appv1.CanaryStatus) bool {
		return c.Revision != first.Revision && c.Phase == appv1.CanaryPaused
	})
	if second.Attempt != 1 || second.Step != 1 {
		t.Errorf("the new revision's canary %+v, want attempt 1 paused at step 1", second)
	}
	list, err := env.kube.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: appv1.LabelCanary})
	if err != nil {
		t.Fatal(err)
	}
	for _, rs := range list.Items {
		if rs.Labels[appv1.LabelCanary] != second.ID && rs.DeletionTimestamp == nil {
			t.Errorf("canary ReplicaSet %s of an earlier revision left", rs.Name)
		}
	}
	// The canary the spec replaced is told by a Normal event: nobody has
	// to act.
	for _, e := range eventsOf(t, ns, "web") {
		if strings.HasPrefix(e, "Warning/") {
			t.Errorf("event %s for a canary the spec replaced", e)
		}
	}

	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.Image = "nginx:1.27" })
	waitReady(t, ns, "web")
	eventually(t, timeout, "status.canary and the canary's pods gone", func() (bool, string, error) {
		now := canaryTestPods(t, ns, "web")
		d := getDO(t, ns, "web")
		return d.Status.Canary == nil && equalKeys(now, stable), fmt.Sprintf("canary %+v, pods %v", d.Status.Canary, now), nil
	})
	expectQuiet(t, p, ns, 2*childrenResync, true)
}

// TestCanaryWithScale: during a canary a scale-up (an autoscaler's, here
// through the scale subresource as it writes) applies at once and the
// canary follows it; a scale-down waits for the canary's end, so the stable
// is never shrunk under it; the promotion then brings the replicas down.
func TestCanaryWithScale(t *testing.T) {
	t.Parallel()
	ns := newOwnNamespace(t)
	startChildrenController(t, ns)
	create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Canary = &appv1.Canary{
			Steps:                 []appv1.CanaryStep{{SetWeight: ptr.To[int32](20)}, {Pause: &appv1.CanaryPause{}}},
			ScaleDownDelaySeconds: ptr.To[int32](0),
		}
	}))
	waitReady(t, ns, "web")
	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.Image = "nginx:1.28" })
	st := waitCanary(t, ns, "web", "paused", func(c *appv1.CanaryStatus) bool { return c.Phase == appv1.CanaryPaused })
	if st.Replicas != 1 {
		t.Errorf("canary of 20 %% beside 2: %d pods, want 1", st.Replicas)
	}
	if out, err := kubectl("-n", ns, "scale", "deployobject/web", "--replicas=8"); err != nil {
		t.Fatalf("kubectl scale: %v\n%s", err, out)
	}
	waitCanary(t, ns, "web", "following the scale-up", func(c *appv1.CanaryStatus) bool { return c.Replicas == 2 && c.AvailableReplicas == 2 })
	if d := getDeployment(t, ns, "web"); *d.Spec.Replicas != 8 || d.Spec.Template.Spec.Containers[0].Image != "nginx:1.27" {
		t.Errorf("the stable after a scale-up: %d replicas of %s, want 8 of nginx:1.27", *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image)
	}
	if out, err := kubectl("-n", ns, "scale", "deployobject/web", "--replicas=3"); err != nil {
		t.Fatalf("kubectl scale: %v\n%s", err, out)
	}
	time.Sleep(2 * childrenResync)
	if d := getDeployment(t, ns, "web"); *d.Spec.Replicas != 8 {
		t.Errorf("the stable after a scale-down during the canary: %d replicas, want 8 until the canary ends", *d.Spec.Replicas)
	}
	if c := waitReason(t, ns, "web", metav1.ConditionFalse, appv1.ReasonCanaryPaused); !strings.Contains(c.Message, "the scale-down to replicas=3 waits for the canary's end (the stable keeps 8)") {
		t.Errorf("Ready message %q does not tell the scale-down that waits", c.Message)
	}
	annotate(t, ns, "web", appv1.AnnotationCanaryPromoteFull, st.ID)
	d := waitReady(t, ns, "web")
	if d.Status.Canary != nil || *getDeployment(t, ns, "web").Spec.Replicas != 3 || d.Status.AvailableReplicas != 3 {
		t.Errorf("after the promotion: canary %+v, Deployment %d replicas, %d available; want 3", d.Status.Canary, *getDeployment(t, ns, "web").Spec.Replicas, d.Status.AvailableReplicas)
	}
}

// TestCanaryWithAutoscaler: beside a canary the autoscaler reads the
// stable's replicas through the scale subresource (the canary's pods are
// not counted as replicas), its scale-up applies at once and the canary
// follows, and a paused canary beside it writes nothing across the
// autoscaler's evaluations: no fight.
func TestCanaryWithAutoscaler(t *testing.T) {
	t.Parallel()
	ns := newOwnNamespace(t)
	p := startChildrenController(t, ns)
	create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
		d.Spec.Autoscaling = &appv1.Autoscaling{MinReplicas: ptr.To[int32](2), MaxReplicas: 8, TargetCPUUtilizationPercentage: ptr.To[int32](60)}
		d.Spec.Canary = &appv1.Canary{
			Steps:                 []appv1.CanaryStep{{SetWeight: ptr.To[int32](50)}, {Pause: &appv1.CanaryPause{}}},
			ScaleDownDelaySeconds: ptr.To[int32](0),
		}
	}))
	waitHPA(t, ns, "web")
	waitReady(t, ns, "web")
	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.Image = "nginx:1.28" })
	st := waitCanary(t, ns, "web", "paused", func(c *appv1.CanaryStatus) bool { return c.Phase == appv1.CanaryPaused })
	if st.Replicas != 2 || st.AvailableReplicas != 2 {
		t.Errorf("canary of 50 %% beside 2: %+v, want 2 of 2 pods", st)
	}
	scale, err := env.dynamic.Resource(appv1.SchemeGroupVersion.WithResource("deployobjects")).Namespace(ns).Get(ctx, "web", metav1.GetOptions{}, "scale")
	if err != nil {
		t.Fatalf("reading the scale subresource: %v", err)
	}
	if got, _, _ := unstructured.NestedInt64(scale.Object, "status", "replicas"); got != 2 {
		t.Errorf("the scale subresource reports %d replicas during the canary, want the stable's 2", got)
	}

	// The autoscaler, without metrics here, evaluates every 15 s; a
	// window that holds an evaluation shows the paused canary beside it
	// writes nothing.
	waitChildCondition(t, ns, "web", appv1.ConditionAutoscaling, metav1.ConditionFalse, "FailedGetResourceMetric")
	expectQuiet(t, p, ns, 20*time.Second, true)

	// The autoscaler raises the replicas to its new minimum through /scale.
	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.Autoscaling.MinReplicas = ptr.To[int32](4) })
	eventually(t, 3*timeout, "the autoscaler to scale to minReplicas 4", func() (bool, string, error) {
		d := getDO(t, ns, "web")
		return *d.Spec.Replicas == 4, fmt.Sprintf("spec.replicas %d", *d.Spec.Replicas), nil
	})
	waitCanary(t, ns, "web", "following the autoscaler", func(c *appv1.CanaryStatus) bool {
		return c.Phase == appv1.CanaryPaused && c.Replicas == 4 && c.AvailableReplicas == 4
	})
	if d := getDeployment(t, ns, "web"); *d.Spec.Replicas != 4 || d.Spec.Template.Spec.Containers[0].Image != "nginx:1.27" {
		t.Errorf("the stable after the autoscaler's scale-up: %d replicas of %s, want 4 of nginx:1.27", *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image)
	}
	annotate(t, ns, "web", appv1.AnnotationCanaryPromoteFull, st.ID)
	d := waitReady(t, ns, "web")
	if dep := getDeployment(t, ns, "web"); d.Status.Canary != nil || *dep.Spec.Replicas != 4 || d.Status.AvailableReplicas != 4 || dep.Spec.Template.Spec.Containers[0].Image != "nginx:1.28" {
		t.Errorf("after the promotion: canary %+v, Deployment %d replicas of %s, %d available; want 4 of nginx:1.28", d.Status.Canary, *dep.Spec.Replicas, dep.Spec.Template.Spec.Containers[0].Image, d.Status.AvailableReplicas)
	}
}

// eventsOf are the types and reasons ("Normal/CanaryStarted") of the
// events about DeployObject name.
func eventsOf(t *testing.T, ns, name string) []string {
	t.Helper()
	list, err := env.kube.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, e := range list.Items {
		if e.Regarding.Kind == "DeployObject" && e.Regarding.Name == name {
			reasons = append(reasons, e.Type+"/"+e.Reason)
		}
	}
	return reasons
}
