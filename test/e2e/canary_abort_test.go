//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// canaryPodsOf counts the live pods of canary id.
func canaryPodsOf(t *testing.T, ns, name, id string) int {
	t.Helper()
	n := 0
	for _, hash := range canaryTestPods(t, ns, name) {
		if hash == id {
			n++
		}
	}
	return n
}

// canaryReplicaSets counts the canary ReplicaSets of ns not being deleted.
func canaryReplicaSets(t *testing.T, ns string) int {
	t.Helper()
	list, err := env.kube.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: appv1.LabelCanary})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, rs := range list.Items {
		if rs.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

// TestCanaryAbortsOnRestartsAndNotReady: the kwok stages of
// hack/tools/kwok-stages.yaml make the canary's pods crash-loop (restarts)
// or fail their readiness (NotReady) once they were Ready. Each canary
// aborts by itself for its reason, with the stable pods untouched and the
// stable template held.
func TestCanaryAbortsOnRestartsAndNotReady(t *testing.T) {
	t.Parallel()
	ns := newOwnNamespace(t)
	startChildrenController(t, ns)
	cases := []struct {
		name       string
		annotation string
		autoAbort  appv1.CanaryAutoAbort
		reason     appv1.CanaryAbortReason
	}{
		{"crash", "test.deployobject.dev/crash-loop", appv1.CanaryAutoAbort{MaxRestarts: ptr.To[int32](3)}, appv1.AbortRestarts},
		{"unready", "test.deployobject.dev/not-ready", appv1.CanaryAutoAbort{NotReadySeconds: ptr.To[int32](5)}, appv1.AbortNotReady},
	}
	stable := map[string]map[string]string{}
	for _, c := range cases {
		create(t, newDO(ns, c.name, func(d *appv1.DeployObject) {
			d.Spec.Canary = &appv1.Canary{
				Steps:                 []appv1.CanaryStep{{SetWeight: ptr.To[int32](50)}, {Pause: &appv1.CanaryPause{}}},
				ScaleDownDelaySeconds: ptr.To[int32](0),
				AutoAbort:             &c.autoAbort,
			}
		}))
	}
	for _, c := range cases {
		waitReady(t, ns, c.name)
		stable[c.name] = canaryTestPods(t, ns, c.name)
		// The stage's annotation comes with the new revision: only the
		// canary's pods fail.
		updateDO(t, ns, c.name, func(d *appv1.DeployObject) {
			d.Spec.Image = "nginx:1.28"
			d.Spec.PodMetadata = &appv1.PodMetadata{Annotations: map[string]string{c.annotation: "4"}}
		})
	}
	for _, c := range cases {
		st := waitCanary(t, ns, c.name, "aborted", func(s *appv1.CanaryStatus) bool { return s.Phase == appv1.CanaryAborted })
		if st.AbortReason != c.reason {
			t.Errorf("%s: canary %+v aborted for %s, want %s", c.name, st, st.AbortReason, c.reason)
		}
		// Restarts are summed over the canary's pods: 2 (50 % beside 2
		// stable ones) with the stage's 4 each.
		if c.reason == appv1.AbortRestarts && st.Restarts != 8 {
			t.Errorf("%s: %d restarts seen, want 8", c.name, st.Restarts)
		}
		waitReason(t, ns, c.name, metav1.ConditionFalse, appv1.ReasonCanaryAborted)
		eventually(t, timeout, c.name+": the canary's pods gone, the stable's untouched", func() (bool, string, error) {
			now := canaryTestPods(t, ns, c.name)
			return equalKeys(now, stable[c.name]), fmt.Sprintf("pods %v, stable %v", now, stable[c.name]), nil
		})
		if d := getDeployment(t, ns, c.name); d.Spec.Template.Spec.Containers[0].Image != "nginx:1.27" || d.Spec.Template.Annotations[c.annotation] != "" {
			t.Errorf("%s: the Deployment's template changed to %s %v, want the stable one held", c.name, d.Spec.Template.Spec.Containers[0].Image, d.Spec.Template.Annotations)
		}
		warned := false
		for _, e := range eventsOf(t, ns, c.name) {
			warned = warned || e == "Warning/CanaryAborting"
		}
		if !warned {
			t.Errorf("%s: no Warning CanaryAborting event among %v", c.name, eventsOf(t, ns, c.name))
		}
	}
}

// TestCanaryWaitsForTheGateway: with a Gateway that has not accepted the
// route, the weight stays unobserved and the step aborts at its progress
// deadline; the canary's pods and Service, which the route still names,
// stay until the Gateway accepts the route without them, and only then
// go.
func TestCanaryWaitsForTheGateway(t *testing.T) {
	t.Parallel()
	ns, gw := gatewayNamespace(t)
	startChildrenController(t, ns)
	create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Route = &appv1.Route{Port: "http", ParentRefs: []appv1.GatewayRef{{Name: "gw"}}}
		d.Spec.Canary = &appv1.Canary{
			Steps:                 []appv1.CanaryStep{{SetWeight: ptr.To[int32](50)}, {Pause: &appv1.CanaryPause{}}},
			ScaleDownDelaySeconds: ptr.To[int32](1),
			AutoAbort:             &appv1.CanaryAutoAbort{ProgressDeadlineSeconds: ptr.To[int32](15)},
		}
	}))
	// Nobody accepts the route: the DeployObject cannot be Ready, and the
	// canary starts from a complete stable all the same.
	eventually(t, timeout, "the Deployment rolled out", func() (bool, string, error) {
		d, err := env.kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return d.Status.AvailableReplicas == 2 && d.Status.UpdatedReplicas == 2, fmt.Sprintf("%d updated, %d available", d.Status.UpdatedReplicas, d.Status.AvailableReplicas), nil
	})
	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.Image = "nginx:1.28" })
	st := waitCanary(t, ns, "web", "aborting at its deadline", func(s *appv1.CanaryStatus) bool {
		return s.Phase == appv1.CanaryAborting
	})
	if st.AbortReason != appv1.AbortProgressDeadline || st.ObservedWeight != 0 || st.DesiredWeight != 50 {
		t.Errorf("canary %+v, want weight 50 desired, never observed, aborted at its ProgressDeadline", st)
	}
	if got, want := routeWeights(t, gw, ns, "web"), "web=100,web-canary=0"; got != want {
		t.Errorf("route backends while aborting: %s, want %s (the canary's weight taken back at once)", got, want)
	}
	// The route that still names the canary Service is not accepted: the
	// canary's children stay.
	time.Sleep(3 * childrenResync)
	if st := getDO(t, ns, "web").Status.Canary; st == nil || st.Phase != appv1.CanaryAborting {
		t.Errorf("canary %+v without the Gateway's acceptance, want it still aborting", st)
	}
	if _, err := env.kube.CoreV1().Services(ns).Get(ctx, "web-canary", metav1.GetOptions{}); err != nil {
		t.Errorf("the canary Service, which the unaccepted route names: %v", err)
	}
	if n := canaryPodsOf(t, ns, "web", st.ID); n != 1 {
		t.Errorf("%d canary pods before the Gateway accepted weight 0, want the 1 it had", n)
	}

	startGatewayWriter(t, gw, ns, time.Second)
	aborted := waitCanary(t, ns, "web", "aborted", func(s *appv1.CanaryStatus) bool { return s.Phase == appv1.CanaryAborted })
	if aborted.ID != st.ID {
		t.Errorf("aborted canary %s, want %s", aborted.ID, st.ID)
	}
	eventually(t, timeout, "the canary's children gone", func() (bool, string, error) {
		_, err := env.kube.CoreV1().Services(ns).Get(ctx, "web-canary", metav1.GetOptions{})
		rs := canaryReplicaSets(t, ns)
		return apierrors.IsNotFound(err) && rs == 0, fmt.Sprintf("canary Service: %v, %d canary ReplicaSets", err, rs), nil
	})
	if got := routeWeights(t, gw, ns, "web"); got != "web=1" {
		t.Errorf("route backends after the abort: %s, want the stable Service alone", got)
	}
	if sel := getService(t, ns, "web").Spec.Selector; sel[appsv1.DefaultDeploymentUniqueLabelKey] != "" {
		t.Errorf("stable Service selector %v after the abort, want it unpinned", sel)
	}
}

// TestCanaryIngressAbortRetry: with an Ingress the split is by the share
// of pods (ReplicaRatio, said in status): the stable Service keeps
// selecting every pod and the Ingress is not touched. An operator's abort
// ends the canary (Stalled, with the retry command), a retry starts a new
// attempt, and promote-full rolls the new revision out.
func TestCanaryIngressAbortRetry(t *testing.T) {
	t.Parallel()
	ns := newOwnNamespace(t)
	startChildrenController(t, ns)
	create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Replicas = ptr.To[int32](3)
		d.Spec.Route = &appv1.Route{Port: "http", Hostnames: []string{"shop.example.com"}, IngressClassName: ptr.To("nginx")}
		d.Spec.Canary = &appv1.Canary{
			Steps:                 []appv1.CanaryStep{{SetWeight: ptr.To[int32](25)}, {Pause: &appv1.CanaryPause{}}},
			ScaleDownDelaySeconds: ptr.To[int32](0),
		}
	}))
	waitReady(t, ns, "web")
	ingress, err := env.kube.NetworkingV1().Ingresses(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the Ingress: %v", err)
	}
	stable := canaryTestPods(t, ns, "web")
	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.Image = "nginx:1.28" })
	st := waitCanary(t, ns, "web", "paused", func(s *appv1.CanaryStatus) bool { return s.Phase == appv1.CanaryPaused })
	// 1 canary pod beside 3 stable ones is the closest share to 25 %.
	if st.Mode != appv1.CanaryModeReplicaRatio || st.Replicas != 1 || st.ObservedWeight != 25 {
		t.Errorf("canary %+v, want 1 pod, 25 %% by the share of pods (ReplicaRatio)", st)
	}
	if sel := getService(t, ns, "web").Spec.Selector; sel[appsv1.DefaultDeploymentUniqueLabelKey] != "" {
		t.Errorf("stable Service selector %v, want every pod of the application (the split is by pods)", sel)
	}
	if _, err := env.kube.CoreV1().Services(ns).Get(ctx, "web-canary", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a canary Service in ReplicaRatio mode: %v, want none", err)
	}

	annotate(t, ns, "web", appv1.AnnotationCanaryAbort, st.ID)
	aborted := waitCanary(t, ns, "web", "aborted", func(s *appv1.CanaryStatus) bool { return s.Phase == appv1.CanaryAborted })
	if aborted.AbortReason != appv1.AbortOperator {
		t.Errorf("canary aborted for %s, want %s", aborted.AbortReason, appv1.AbortOperator)
	}
	waitReason(t, ns, "web", metav1.ConditionFalse, appv1.ReasonCanaryAborted)
	eventually(t, timeout, "the canary's pods gone, the stable's untouched", func() (bool, string, error) {
		now := canaryTestPods(t, ns, "web")
		return equalKeys(now, stable), fmt.Sprintf("pods %v, stable %v", now, stable), nil
	})
	// The abort annotation stays on the object, as a GitOps tool would keep
	// it: it names this canary only, so the retry is not aborted by it.
	annotate(t, ns, "web", appv1.AnnotationCanaryRetry, st.ID)
	retried := waitCanary(t, ns, "web", "attempt 2 paused", func(s *appv1.CanaryStatus) bool {
		return s.Attempt == 2 && s.Phase == appv1.CanaryPaused
	})
	annotate(t, ns, "web", appv1.AnnotationCanaryPromoteFull, retried.ID)
	d := waitReady(t, ns, "web")
	if d.Status.Canary != nil || d.Status.AvailableReplicas != 3 {
		t.Errorf("after the promotion: canary %+v, %d available, want no canary and 3", d.Status.Canary, d.Status.AvailableReplicas)
	}
	if img := getDeployment(t, ns, "web").Spec.Template.Spec.Containers[0].Image; img != "nginx:1.28" {
		t.Errorf("the Deployment's image after the promotion: %s, want nginx:1.28", img)
	}
	now, err := env.kube.NetworkingV1().Ingresses(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the Ingress: %v", err)
	}
	if now.ResourceVersion != ingress.ResourceVersion {
		t.Errorf("the Ingress was written during the canary (resourceVersion %s, then %s)", ingress.ResourceVersion, now.ResourceVersion)
	}
}
