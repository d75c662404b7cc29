package status

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/testobjects"
)

func TestComputeStatusKeepsTransitionTime(t *testing.T) {
	dobj := testobjects.NewDeployObject()
	out := Outcome{Deployment: testobjects.LiveDeployment(dobj), Service: testobjects.LiveService(dobj)}
	dobj.Status = Compute(dobj, out, testobjects.Earlier)

	again := Compute(dobj, out, testobjects.FixedNow)
	if !Equal(dobj.Status, again) {
		t.Errorf("recomputing an unchanged world changed the status:\n%+v\n%+v", dobj.Status, again)
	}

	out.Deployment.Status.AvailableReplicas = 1
	changed := Compute(dobj, out, testobjects.FixedNow)
	ready := meta.FindStatusCondition(changed.Conditions, appv1.ConditionReady)
	if ready.Status != metav1.ConditionFalse || !ready.LastTransitionTime.Equal(&testobjects.FixedNow) {
		t.Errorf("Ready = %s at %v, want False at %v", ready.Status, ready.LastTransitionTime, testobjects.FixedNow)
	}
	if Equal(dobj.Status, changed) {
		t.Error("a change in availability must change the status")
	}
}

func TestComputeStatusKeepsOtherConditions(t *testing.T) {
	dobj := testobjects.NewDeployObject()
	other := metav1.Condition{Type: "Audited", Status: metav1.ConditionTrue, Reason: "Checked", LastTransitionTime: testobjects.Earlier}
	dobj.Status.Conditions = []metav1.Condition{other}
	st := Compute(dobj, Outcome{Deployment: testobjects.LiveDeployment(dobj), Service: testobjects.LiveService(dobj)}, testobjects.FixedNow)
	if c := meta.FindStatusCondition(st.Conditions, "Audited"); c == nil || *c != other {
		t.Errorf("another writer's condition was changed: %+v", st.Conditions)
	}
	ac := ApplyConfiguration(dobj, st)
	if n := len(ac.Status.Conditions); n != 1 || *ac.Status.Conditions[0].Type != appv1.ConditionReady {
		t.Errorf("the status apply must carry only the Ready condition, got %d conditions", n)
	}

	// Not Ready: Reconciling joins Ready in the apply, the other writer's
	// condition still stays out.
	st = Compute(dobj, Outcome{}, testobjects.FixedNow)
	var types []string
	for _, c := range ApplyConfiguration(dobj, st).Status.Conditions {
		types = append(types, *c.Type)
	}
	if want := []string{appv1.ConditionReady, appv1.ConditionReconciling}; !slices.Equal(types, want) {
		t.Errorf("the status apply carries conditions %v, want %v", types, want)
	}
}

// outcomes are sync outcomes of every kind, each with the Ready status and
// reason and the kstatus condition ("" for none) it must give.
var outcomes = []struct {
	name     string
	out      func(d *appv1.DeployObject) Outcome
	status   metav1.ConditionStatus
	reason   string
	progress string
}{
	{"no Deployment", func(*appv1.DeployObject) Outcome { return Outcome{} }, metav1.ConditionFalse, appv1.ReasonProgressing, appv1.ConditionReconciling},
	{"Service missing while ports are set", func(d *appv1.DeployObject) Outcome {
		return Outcome{Deployment: testobjects.LiveDeployment(d)}
	}, metav1.ConditionFalse, appv1.ReasonProgressing, appv1.ConditionReconciling},
	{"blocked wins over a ready Deployment", func(d *appv1.DeployObject) Outcome {
		return Outcome{Deployment: testobjects.LiveDeployment(d), Service: testobjects.LiveService(d), Problems: []children.Problem{{Reason: appv1.ReasonResourceConflict, Message: "taken"}}}
	}, metav1.ConditionFalse, appv1.ReasonResourceConflict, appv1.ConditionStalled},
	{"generation not yet observed by the Deployment controller", func(d *appv1.DeployObject) Outcome {
		live := testobjects.LiveDeployment(d)
		live.Generation = 3
		return Outcome{Deployment: live, Service: testobjects.LiveService(d)}
	}, metav1.ConditionFalse, appv1.ReasonProgressing, appv1.ConditionReconciling},
	{"scaled down, surplus pods still there", func(d *appv1.DeployObject) Outcome {
		live := testobjects.LiveDeployment(d)
		live.Status.Replicas = 5
		return Outcome{Deployment: live, Service: testobjects.LiveService(d)}
	}, metav1.ConditionFalse, appv1.ReasonProgressing, appv1.ConditionReconciling},
	{"pods not yet available", func(d *appv1.DeployObject) Outcome {
		live := testobjects.LiveDeployment(d)
		live.Status.AvailableReplicas = 0
		return Outcome{Deployment: live, Service: testobjects.LiveService(d)}
	}, metav1.ConditionFalse, appv1.ReasonProgressing, appv1.ConditionReconciling},
	{"pods refused", func(d *appv1.DeployObject) Outcome {
		live := testobjects.LiveDeployment(d)
		live.Status.UpdatedReplicas = 0
		live.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: "violates PodSecurity"}}
		return Outcome{Deployment: live, Service: testobjects.LiveService(d)}
	}, metav1.ConditionFalse, appv1.ReasonReplicaFailure, appv1.ConditionStalled},
	{"rollout past its deadline", func(d *appv1.DeployObject) Outcome {
		live := testobjects.LiveDeployment(d)
		live.Status.UpdatedReplicas = 1
		live.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded", Message: "ReplicaSet web-1 has timed out progressing."}}
		return Outcome{Deployment: live, Service: testobjects.LiveService(d)}
	}, metav1.ConditionFalse, appv1.ReasonProgressDeadlineExceeded, appv1.ConditionStalled},
	{"paused mid-rollout", func(d *appv1.DeployObject) Outcome {
		live := testobjects.LiveDeployment(d)
		live.Spec.Paused = true
		live.Status.UpdatedReplicas = 1
		return Outcome{Deployment: live, Service: testobjects.LiveService(d)}
	}, metav1.ConditionFalse, appv1.ReasonPaused, appv1.ConditionReconciling},
	{"paused, rolled out", func(d *appv1.DeployObject) Outcome {
		live := testobjects.LiveDeployment(d)
		live.Spec.Paused = true
		return Outcome{Deployment: live, Service: testobjects.LiveService(d)}
	}, metav1.ConditionFalse, appv1.ReasonPaused, appv1.ConditionReconciling},
	{"invalid spec", func(d *appv1.DeployObject) Outcome {
		return Outcome{Service: testobjects.LiveService(d), Problems: []children.Problem{{Reason: appv1.ReasonInvalidSpec, Message: "env[0].name: Invalid value"}}}
	}, metav1.ConditionFalse, appv1.ReasonInvalidSpec, appv1.ConditionStalled},
	{"two problems: the first one's reason", func(d *appv1.DeployObject) Outcome {
		return Outcome{Service: testobjects.LiveService(d), Problems: []children.Problem{
			{Reason: appv1.ReasonQuotaExceeded, Message: "Deployment: exceeded quota"},
			{Reason: appv1.ReasonForbidden, Message: "Service: denied"},
		}}
	}, metav1.ConditionFalse, appv1.ReasonQuotaExceeded, appv1.ConditionStalled},
	{"policy refusal", func(d *appv1.DeployObject) Outcome {
		return Outcome{Deployment: testobjects.LiveDeployment(d), Problems: []children.Problem{{Reason: appv1.ReasonForbidden, Message: "Service: denied"}}}
	}, metav1.ConditionFalse, appv1.ReasonForbidden, appv1.ConditionStalled},
	{"available", func(d *appv1.DeployObject) Outcome {
		return Outcome{Deployment: testobjects.LiveDeployment(d), Service: testobjects.LiveService(d)}
	}, metav1.ConditionTrue, appv1.ReasonAvailable, ""},
}

func TestReadyCondition(t *testing.T) {
	for _, tc := range outcomes {
		t.Run(tc.name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject()
			c := ReadyCondition(dobj, tc.out(dobj))
			if c.Status != tc.status || c.Reason != tc.reason || c.Message == "" {
				t.Errorf("Ready = %s/%s %q, want %s/%s with a message", c.Status, c.Reason, c.Message, tc.status, tc.reason)
			}
		})
	}
}

func TestProgressCondition(t *testing.T) {
	for _, tc := range outcomes {
		t.Run(tc.name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject()
			st := Compute(dobj, tc.out(dobj), testobjects.FixedNow)
			ready := meta.FindStatusCondition(st.Conditions, appv1.ConditionReady)
			for _, typ := range progressConditionTypes {
				c := meta.FindStatusCondition(st.Conditions, typ)
				if typ != tc.progress {
					if c != nil {
						t.Errorf("%s present (%s/%s), want it absent", typ, c.Status, c.Reason)
					}
					continue
				}
				want := metav1.Condition{Type: typ, Status: metav1.ConditionTrue, ObservedGeneration: dobj.Generation, LastTransitionTime: testobjects.FixedNow, Reason: ready.Reason, Message: ready.Message}
				if c == nil || *c != want {
					t.Errorf("%s = %+v, want %+v", typ, c, want)
				}
			}
		})
	}
}

// TestProgressConditionsCostNoWrites: from any status the controller wrote
// to any outcome, the kstatus conditions change the status only where Ready
// changes it too, so they add no status write, and an outcome that repeats
// writes nothing.
func TestProgressConditionsCostNoWrites(t *testing.T) {
	readyOnly := func(st appv1.DeployObjectStatus) appv1.DeployObjectStatus {
		st.Conditions = slices.DeleteFunc(slices.Clone(st.Conditions), func(c metav1.Condition) bool { return c.Type != appv1.ConditionReady })
		return st
	}
	for _, from := range outcomes {
		for _, to := range outcomes {
			dobj := testobjects.NewDeployObject()
			dobj.Status = Compute(dobj, from.out(dobj), testobjects.Earlier)
			next := Compute(dobj, to.out(dobj), testobjects.FixedNow)
			write, readyWrite := !Equal(dobj.Status, next), !Equal(readyOnly(dobj.Status), readyOnly(next))
			if write != readyWrite {
				t.Errorf("%s -> %s: status write %v, but %v with Ready alone", from.name, to.name, write, readyWrite)
			}
			if from.name == to.name && write {
				t.Errorf("%s again: the status changed", from.name)
			}
		}
	}
}

func TestProgressConditionTransitions(t *testing.T) {
	dobj := testobjects.NewDeployObject()
	progressing := Outcome{}
	stalled := Outcome{Problems: []children.Problem{{Reason: appv1.ReasonInvalidSpec, Message: "rejected"}}}
	available := Outcome{Deployment: testobjects.LiveDeployment(dobj), Service: testobjects.LiveService(dobj)}

	dobj.Status = Compute(dobj, progressing, testobjects.Earlier)
	dobj.Status = Compute(dobj, Outcome{Deployment: testobjects.LiveDeployment(dobj)}, testobjects.FixedNow)
	if c := meta.FindStatusCondition(dobj.Status.Conditions, appv1.ConditionReconciling); c == nil || !c.LastTransitionTime.Equal(&testobjects.Earlier) || !strings.Contains(c.Message, "Service") {
		t.Errorf("Reconciling through two steps of progress = %+v, want it since %v with the new message", c, testobjects.Earlier)
	}
	dobj.Status = Compute(dobj, stalled, testobjects.FixedNow)
	if meta.FindStatusCondition(dobj.Status.Conditions, appv1.ConditionReconciling) != nil || !meta.IsStatusConditionTrue(dobj.Status.Conditions, appv1.ConditionStalled) {
		t.Errorf("after a rejection, conditions = %+v, want Stalled alone beside Ready", dobj.Status.Conditions)
	}
	dobj.Status = Compute(dobj, available, testobjects.FixedNow)
	if n := len(dobj.Status.Conditions); n != 1 {
		t.Errorf("once available, conditions = %+v, want Ready alone", dobj.Status.Conditions)
	}
}

func TestConditionMessagesAreBounded(t *testing.T) {
	long := strings.Repeat("é", children.MaxConditionMessage)
	for _, msg := range []string{long, "x" + long, strings.Repeat("a", 5*children.MaxConditionMessage)} {
		c := blockedCondition([]children.Problem{{Reason: appv1.ReasonInvalidSpec, Message: msg}})
		if len(c.Message) > children.MaxConditionMessage || !utf8.ValidString(c.Message) || !strings.HasSuffix(c.Message, "[truncated]") {
			t.Errorf("message of %d bytes became %d bytes (valid UTF-8: %v), want at most %d, marked", len(msg), len(c.Message), utf8.ValidString(c.Message), children.MaxConditionMessage)
		}
	}
	if c := notReady(appv1.ReasonProgressing, "short"); c.Message != "short" {
		t.Errorf("a short message changed: %q", c.Message)
	}
}

func TestNewProblems(t *testing.T) {
	quota := children.Problem{Reason: appv1.ReasonQuotaExceeded, Message: "creating Deployment web: exceeded quota"}
	denied := children.Problem{Reason: appv1.ReasonForbidden, Message: "creating Service web: denied"}
	reported := []metav1.Condition{blockedCondition([]children.Problem{quota})}
	for _, tc := range []struct {
		name     string
		conds    []metav1.Condition
		problems []children.Problem
		want     int
	}{
		{"first report", nil, []children.Problem{quota}, 1},
		{"same problem again", reported, []children.Problem{quota}, 0},
		{"a second problem joins", reported, []children.Problem{quota, denied}, 1},
		{"after being Ready", []metav1.Condition{{Type: appv1.ConditionReady, Status: metav1.ConditionTrue, Message: quota.Message}}, []children.Problem{quota}, 1},
	} {
		if got := NewProblems(tc.conds, tc.problems); len(got) != tc.want {
			t.Errorf("%s: %d new problems, want %d", tc.name, len(got), tc.want)
		}
	}
}

// TestChildConditions: the DisruptionBudget and Autoscaling conditions are
// there only while the spec asks for their child, keep their transition time
// while their status holds, and leave Ready alone.
func TestChildConditions(t *testing.T) {
	plain := testobjects.NewDeployObject()
	st := Compute(plain, Outcome{Deployment: testobjects.LiveDeployment(plain), Service: testobjects.LiveService(plain)}, testobjects.Earlier)
	for _, ct := range []string{appv1.ConditionDisruptionBudget, appv1.ConditionAutoscaling} {
		if c := meta.FindStatusCondition(st.Conditions, ct); c != nil {
			t.Errorf("a DeployObject that asks for no %s carries %+v", ct, c)
		}
	}

	dobj := testobjects.NewDeployObject(testobjects.WithBudget, testobjects.WithAutoscaling)
	out := Outcome{Deployment: testobjects.LiveDeployment(dobj), Service: testobjects.LiveService(dobj), PDB: testobjects.LivePDB(dobj), HPA: testobjects.LiveHPA(dobj)}
	dobj.Status = Compute(dobj, out, testobjects.Earlier)
	if ready := meta.FindStatusCondition(dobj.Status.Conditions, appv1.ConditionReady); ready.Status != metav1.ConditionTrue {
		t.Fatalf("Ready = %+v with both children in line", ready)
	}
	out.PDB.Status.CurrentHealthy, out.PDB.Status.DisruptionsAllowed = 1, 0
	out.HPA.Status.DesiredReplicas = 3
	next := Compute(dobj, out, testobjects.FixedNow)
	budget := meta.FindStatusCondition(next.Conditions, appv1.ConditionDisruptionBudget)
	autoscaling := meta.FindStatusCondition(next.Conditions, appv1.ConditionAutoscaling)
	if budget.Status != metav1.ConditionFalse || !budget.LastTransitionTime.Equal(&testobjects.FixedNow) {
		t.Errorf("DisruptionBudget = %+v, want False since now", budget)
	}
	if autoscaling.Status != metav1.ConditionTrue || !autoscaling.LastTransitionTime.Equal(&testobjects.Earlier) || !strings.Contains(autoscaling.Message, "3 desired") {
		t.Errorf("Autoscaling = %+v, want True since earlier with the new count", autoscaling)
	}
	if ready := meta.FindStatusCondition(next.Conditions, appv1.ConditionReady); ready.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v: a budget allowing no eviction does not make the application unavailable", ready)
	}
	if a := ApplyConfiguration(dobj, next); len(a.Status.Conditions) != 3 {
		t.Errorf("the status apply carries %d conditions, want Ready, DisruptionBudget and Autoscaling", len(a.Status.Conditions))
	}
}

// TestReadyFollowsTheGatewaysVerdict: a route its Gateway refuses keeps the
// DeployObject from being Ready; a lasting refusal stalls it (kstatus
// Failed), a passing one does not.
func TestReadyFollowsTheGatewaysVerdict(t *testing.T) {
	dobj := testobjects.NewDeployObject(testobjects.WithHTTPRoute)
	refused := func(condType, reason string) *gatewayv1.HTTPRoute {
		r := testobjects.LiveHTTPRoute(dobj)
		c := meta.FindStatusCondition(r.Status.Parents[0].Conditions, condType)
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, reason, "the Gateway's message"
		return r
	}
	for _, tc := range []struct {
		name                  string
		route                 *gatewayv1.HTTPRoute
		reason, progress      string
		messageHasGatewayWord bool
	}{
		{"accepted", testobjects.LiveHTTPRoute(dobj), appv1.ReasonAvailable, "", false},
		{"not allowed by the listeners", refused("Accepted", "NotAllowedByListeners"), appv1.ReasonRouteNotAccepted, appv1.ConditionStalled, true},
		{"a reference not permitted", refused("ResolvedRefs", "RefNotPermitted"), appv1.ReasonRouteNotAccepted, appv1.ConditionStalled, true},
		{"the backend not found yet", refused("ResolvedRefs", "BackendNotFound"), appv1.ReasonProgressing, appv1.ConditionReconciling, true},
		{"pending", refused("Accepted", "Pending"), appv1.ReasonProgressing, appv1.ConditionReconciling, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Compute(dobj, Outcome{Deployment: testobjects.LiveDeployment(dobj), Service: testobjects.LiveService(dobj), HTTPRoute: tc.route}, testobjects.FixedNow)
			ready := meta.FindStatusCondition(s.Conditions, appv1.ConditionReady)
			if ready.Reason != tc.reason {
				t.Fatalf("Ready = %s %q, want %s", ready.Reason, ready.Message, tc.reason)
			}
			if tc.messageHasGatewayWord && !strings.Contains(ready.Message, "the Gateway's message") {
				t.Errorf("Ready message %q does not carry the Gateway's", ready.Message)
			}
			for _, ct := range []string{appv1.ConditionStalled, appv1.ConditionReconciling} {
				if got := meta.FindStatusCondition(s.Conditions, ct) != nil; got != (ct == tc.progress) {
					t.Errorf("%s present: %v, want %v", ct, got, ct == tc.progress)
				}
			}
		})
	}
}

// TestHTTPSRedirectIsReported: the HTTPRoute that redirects to https is
// part of the route: the Route condition and Ready wait for it and follow
// its Gateway's verdict, and its URLs say https.
func TestHTTPSRedirectIsReported(t *testing.T) {
	dobj := testobjects.NewDeployObject(testobjects.WithHTTPSRedirect)
	refused := testobjects.LiveHTTPSRedirect(dobj)
	c := meta.FindStatusCondition(refused.Status.Parents[0].Conditions, "Accepted")
	c.Status, c.Reason, c.Message = metav1.ConditionFalse, "NotAllowedByListeners", "the listener allows no routes from this namespace"
	waiting := testobjects.LiveHTTPSRedirect(dobj)
	waiting.Status.Parents = nil
	for _, tc := range []struct {
		name        string
		redirect    *gatewayv1.HTTPRoute
		ready       string
		route       metav1.ConditionStatus
		routeReason string
		scheme      string
	}{
		{"not made yet", nil, appv1.ReasonProgressing, metav1.ConditionFalse, appv1.ReasonProgressing, "http"},
		{"not taken up yet", waiting, appv1.ReasonAvailable, metav1.ConditionFalse, appv1.ReasonProgressing, "http"},
		{"refused", refused, appv1.ReasonRouteNotAccepted, metav1.ConditionFalse, "NotAllowedByListeners", "http"},
		{"accepted", testobjects.LiveHTTPSRedirect(dobj), appv1.ReasonAvailable, metav1.ConditionTrue, appv1.ReasonAccepted, "https"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Compute(dobj, Outcome{Deployment: testobjects.LiveDeployment(dobj), Service: testobjects.LiveService(dobj), HTTPRoute: testobjects.LiveHTTPRoute(dobj), HTTPSRedirect: tc.redirect}, testobjects.FixedNow)
			if ready := meta.FindStatusCondition(s.Conditions, appv1.ConditionReady); ready.Reason != tc.ready {
				t.Errorf("Ready = %s %q, want %s", ready.Reason, ready.Message, tc.ready)
			}
			route := meta.FindStatusCondition(s.Conditions, appv1.ConditionRoute)
			if route.Status != tc.route || route.Reason != tc.routeReason {
				t.Errorf("Route = %s %s %q, want %s %s", route.Status, route.Reason, route.Message, tc.route, tc.routeReason)
			}
			if tc.route != metav1.ConditionTrue && !strings.Contains(route.Message, "web.https-redirect") {
				t.Errorf("Route message %q does not name the redirect", route.Message)
			}
			var urls []string
			for _, a := range s.Addresses {
				if a.Type == appv1.AddressURL {
					urls = append(urls, a.Value)
				}
			}
			if want := tc.scheme + "://shop.example.com/"; tc.route == metav1.ConditionTrue && (len(urls) != 1 || urls[0] != want) {
				t.Errorf("URLs %v, want %s", urls, want)
			}
		})
	}
	// A problem of the redirect is the redirect's, not the route's.
	conflict := children.Problem{Kind: children.KindHTTPSRedirect, Reason: appv1.ReasonResourceConflict, Message: "HTTPRoute web.https-redirect exists and is not controlled by this DeployObject"}
	s := Compute(dobj, Outcome{Deployment: testobjects.LiveDeployment(dobj), Service: testobjects.LiveService(dobj), HTTPRoute: testobjects.LiveHTTPRoute(dobj), Problems: []children.Problem{conflict}}, testobjects.FixedNow)
	if route := meta.FindStatusCondition(s.Conditions, appv1.ConditionRoute); route.Reason != appv1.ReasonResourceConflict || !strings.Contains(route.Message, "web.https-redirect") {
		t.Errorf("Route = %s %q, want the redirect's conflict", route.Reason, route.Message)
	}
}
