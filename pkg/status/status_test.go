package status

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
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

// TestComputeStatusHashes: the status takes the Deployment and config
// hashes of a sync that brought the Deployment in line with the spec, and
// keeps those it had after one that could not.
func TestComputeStatusHashes(t *testing.T) {
	for _, tc := range []struct {
		name           string
		out            Outcome
		deploy, config string
	}{
		{"in line", Outcome{DeploymentHash: "new-deploy", ConfigHash: "new-config"}, "new-deploy", "new-config"},
		{"in line, no configuration", Outcome{DeploymentHash: "new-deploy"}, "new-deploy", ""},
		{"not in line", Outcome{Problems: []children.Problem{{Kind: "Deployment", Reason: appv1.ReasonForbidden, Message: "denied"}}}, "old-deploy", "old-config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject()
			dobj.Status.DeploymentHash, dobj.Status.ConfigHash = "old-deploy", "old-config"
			st := Compute(dobj, tc.out, testobjects.FixedNow)
			if st.DeploymentHash != tc.deploy || st.ConfigHash != tc.config {
				t.Errorf("hashes %q and %q, want %q and %q", st.DeploymentHash, st.ConfigHash, tc.deploy, tc.config)
			}
		})
	}
}

// TestApplyConfigurationHashes: the status apply carries the hashes the
// status has, and leaves out those it has not.
func TestApplyConfigurationHashes(t *testing.T) {
	dobj := testobjects.NewDeployObject()
	ac := ApplyConfiguration(dobj, appv1.DeployObjectStatus{DeploymentHash: "d1", ConfigHash: "c1"})
	if ac.Status.DeploymentHash == nil || *ac.Status.DeploymentHash != "d1" || ac.Status.ConfigHash == nil || *ac.Status.ConfigHash != "c1" {
		t.Errorf("the apply carries hashes %v and %v, want d1 and c1", ac.Status.DeploymentHash, ac.Status.ConfigHash)
	}
	ac = ApplyConfiguration(dobj, appv1.DeployObjectStatus{})
	if ac.Status.DeploymentHash != nil || ac.Status.ConfigHash != nil {
		t.Errorf("the apply of a status without hashes carries %q and %q, want neither", *ac.Status.DeploymentHash, *ac.Status.ConfigHash)
	}
}

// outcomes are sync outcomes of every kind, each with the Ready status,
// reason and message and the kstatus condition ("" for none) it must give.
var outcomes = []struct {
	name     string
	out      func(d *appv1.DeployObject) Outcome
	status   metav1.ConditionStatus
	reason   string
	message  string
	progress string
}{
	{"no Deployment", func(*appv1.DeployObject) Outcome { return Outcome{} }, metav1.ConditionFalse, appv1.ReasonProgressing, "Deployment web does not exist yet", appv1.ConditionReconciling},
	{"Service missing while ports are set", func(d *appv1.DeployObject) Outcome {
		return Outcome{Deployment: testobjects.LiveDeployment(d)}
	}, metav1.ConditionFalse, appv1.ReasonProgressing, "Service web does not exist yet", appv1.ConditionReconciling},
	{"blocked wins over a ready Deployment", func(d *appv1.DeployObject) Outcome {
		return Outcome{Deployment: testobjects.LiveDeployment(d), Service: testobjects.LiveService(d), Problems: []children.Problem{{Reason: appv1.ReasonResourceConflict, Message: "taken"}}}
	}, metav1.ConditionFalse, appv1.ReasonResourceConflict, "taken", appv1.ConditionStalled},
	{"generation not yet observed by the Deployment controller", func(d *appv1.DeployObject) Outcome {
		live := testobjects.LiveDeployment(d)
		live.Generation = 3
		return Outcome{Deployment: live, Service: testobjects.LiveService(d)}
	}, metav1.ConditionFalse, appv1.ReasonProgressing, "waiting for the Deployment controller to observe generation 3 of Deployment web", appv1.ConditionReconciling},
	{"scaled down, surplus pods still there", func(d *appv1.DeployObject) Outcome {
		live := testobjects.LiveDeployment(d)
		live.Status.Replicas = 5
		return Outcome{Deployment: live, Service: testobjects.LiveService(d)}
	}, metav1.ConditionFalse, appv1.ReasonProgressing, "3 replicas pending termination", appv1.ConditionReconciling},
	{"pods not yet available", func(d *appv1.DeployObject) Outcome {
		live := testobjects.LiveDeployment(d)
		live.Status.AvailableReplicas = 0
		return Outcome{Deployment: live, Service: testobjects.LiveService(d)}
	}, metav1.ConditionFalse, appv1.ReasonProgressing, "0 of 2 updated replicas available", appv1.ConditionReconciling},
	{"pods refused", func(d *appv1.DeployObject) Outcome {
		live := testobjects.LiveDeployment(d)
		live.Status.UpdatedReplicas = 0
		live.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: "violates PodSecurity"}}
		return Outcome{Deployment: live, Service: testobjects.LiveService(d)}
	}, metav1.ConditionFalse, appv1.ReasonReplicaFailure, "Deployment web cannot create or delete pods: FailedCreate: violates PodSecurity", appv1.ConditionStalled},
	{"rollout past its deadline", func(d *appv1.DeployObject) Outcome {
		live := testobjects.LiveDeployment(d)
		live.Status.UpdatedReplicas = 1
		live.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded", Message: "ReplicaSet web-1 has timed out progressing."}}
		return Outcome{Deployment: live, Service: testobjects.LiveService(d)}
	}, metav1.ConditionFalse, appv1.ReasonProgressDeadlineExceeded, "Deployment web: ReplicaSet web-1 has timed out progressing.", appv1.ConditionStalled},
	{"paused mid-rollout", func(d *appv1.DeployObject) Outcome {
		live := testobjects.LiveDeployment(d)
		live.Spec.Paused = true
		live.Status.UpdatedReplicas = 1
		return Outcome{Deployment: live, Service: testobjects.LiveService(d)}
	}, metav1.ConditionFalse, appv1.ReasonPaused, "Deployment web is paused; `kubectl rollout resume deployment/web` resumes it", appv1.ConditionReconciling},
	{"paused, rolled out", func(d *appv1.DeployObject) Outcome {
		live := testobjects.LiveDeployment(d)
		live.Spec.Paused = true
		return Outcome{Deployment: live, Service: testobjects.LiveService(d)}
	}, metav1.ConditionFalse, appv1.ReasonPaused, "Deployment web is paused; `kubectl rollout resume deployment/web` resumes it", appv1.ConditionReconciling},
	{"invalid spec", func(d *appv1.DeployObject) Outcome {
		return Outcome{Service: testobjects.LiveService(d), Problems: []children.Problem{{Reason: appv1.ReasonInvalidSpec, Message: "env[0].name: Invalid value"}}}
	}, metav1.ConditionFalse, appv1.ReasonInvalidSpec, "env[0].name: Invalid value", appv1.ConditionStalled},
	{"two problems: the first one's reason", func(d *appv1.DeployObject) Outcome {
		return Outcome{Service: testobjects.LiveService(d), Problems: []children.Problem{
			{Reason: appv1.ReasonQuotaExceeded, Message: "Deployment: exceeded quota"},
			{Reason: appv1.ReasonForbidden, Message: "Service: denied"},
		}}
	}, metav1.ConditionFalse, appv1.ReasonQuotaExceeded, "Deployment: exceeded quota; Service: denied", appv1.ConditionStalled},
	{"policy refusal", func(d *appv1.DeployObject) Outcome {
		return Outcome{Deployment: testobjects.LiveDeployment(d), Problems: []children.Problem{{Reason: appv1.ReasonForbidden, Message: "Service: denied"}}}
	}, metav1.ConditionFalse, appv1.ReasonForbidden, "Service: denied", appv1.ConditionStalled},
	{"available", func(d *appv1.DeployObject) Outcome {
		return Outcome{Deployment: testobjects.LiveDeployment(d), Service: testobjects.LiveService(d)}
	}, metav1.ConditionTrue, appv1.ReasonAvailable, "2 of 2 replicas available", ""},
}

func TestReadyCondition(t *testing.T) {
	for _, tc := range outcomes {
		t.Run(tc.name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject()
			want := metav1.Condition{Type: appv1.ConditionReady, Status: tc.status, Reason: tc.reason, Message: tc.message}
			if c := ReadyCondition(dobj, tc.out(dobj)); c != want {
				t.Errorf("Ready = %+v, want %+v", c, want)
			}
		})
	}
}

// everyChild is the outcome of a sync that made every child dobj asks
// for, each as the API server holds it once in line.
func everyChild(dobj *appv1.DeployObject) Outcome {
	return Outcome{
		Deployment: testobjects.LiveDeployment(dobj), Service: testobjects.LiveService(dobj),
		ServiceAccount: testobjects.LiveServiceAccount(dobj), PDB: testobjects.LivePDB(dobj), HPA: testobjects.LiveHPA(dobj),
		NetworkPolicy: testobjects.LiveNetworkPolicy(dobj), Monitor: testobjects.LiveMonitor(dobj, children.MonitorKind(dobj)),
		Ingress: testobjects.LiveIngress(dobj), HTTPRoute: testobjects.LiveHTTPRoute(dobj), GRPCRoute: testobjects.LiveGRPCRoute(dobj),
		HTTPSRedirect: testobjects.LiveHTTPSRedirect(dobj),
	}
}

// TestReadyWaitsForEveryChild: Ready waits until every child the spec asks
// for exists, one kind after another, and is Available once they all do. A
// monitor whose kind the cluster does not serve is not waited for.
func TestReadyWaitsForEveryChild(t *testing.T) {
	available := metav1.Condition{Type: appv1.ConditionReady, Status: metav1.ConditionTrue, Reason: appv1.ReasonAvailable, Message: "2 of 2 replicas available"}
	for _, tc := range []struct {
		kind    string
		ask     func(*appv1.DeployObject)
		missing func(*Outcome)
		message string
	}{
		{"Deployment", nil, func(o *Outcome) { o.Deployment = nil }, "Deployment web does not exist yet"},
		{"ServiceAccount", testobjects.WithServiceAccount, func(o *Outcome) { o.ServiceAccount = nil }, "ServiceAccount web does not exist yet"},
		{"Service", nil, func(o *Outcome) { o.Service = nil }, "Service web does not exist yet"},
		{"PodDisruptionBudget", testobjects.WithBudget, func(o *Outcome) { o.PDB = nil }, "PodDisruptionBudget web does not exist yet"},
		{"HorizontalPodAutoscaler", testobjects.WithAutoscaling, func(o *Outcome) { o.HPA = nil }, "HorizontalPodAutoscaler web does not exist yet"},
		{"NetworkPolicy", testobjects.WithNetworkPolicy, func(o *Outcome) { o.NetworkPolicy = nil }, "NetworkPolicy web does not exist yet"},
		{"ServiceMonitor", testobjects.WithServiceMonitor, func(o *Outcome) { o.Monitor = nil }, "ServiceMonitor web does not exist yet"},
		{"PodMonitor", testobjects.WithPodMonitor, func(o *Outcome) { o.Monitor = nil }, "PodMonitor web does not exist yet"},
		{"Ingress", testobjects.WithIngress, func(o *Outcome) { o.Ingress = nil }, "Ingress web does not exist yet"},
		{"HTTPRoute", testobjects.WithHTTPRoute, func(o *Outcome) { o.HTTPRoute = nil }, "HTTPRoute web does not exist yet"},
		{"GRPCRoute", testobjects.WithGRPCRoute, func(o *Outcome) { o.GRPCRoute = nil }, "GRPCRoute web does not exist yet"},
		{"HTTPRoute redirecting to https", testobjects.WithHTTPSRedirect, func(o *Outcome) { o.HTTPSRedirect = nil }, "HTTPRoute web.https-redirect does not exist yet"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			var ask []func(*appv1.DeployObject)
			if tc.ask != nil {
				ask = append(ask, tc.ask)
			}
			dobj := testobjects.NewDeployObject(ask...)
			out := everyChild(dobj)
			if c := ReadyCondition(dobj, out); c != available {
				t.Errorf("with every child: Ready = %+v, want %+v", c, available)
			}
			tc.missing(&out)
			want := metav1.Condition{Type: appv1.ConditionReady, Status: metav1.ConditionFalse, Reason: appv1.ReasonProgressing, Message: tc.message}
			if c := ReadyCondition(dobj, out); c != want {
				t.Errorf("without the %s: Ready = %+v, want %+v", tc.kind, c, want)
			}
			if children.WantsMonitoring(dobj) {
				out.MonitoringUnavailable = "the cluster serves no " + tc.kind
				if c := ReadyCondition(dobj, out); c != available {
					t.Errorf("without the %s, whose kind the cluster does not serve: Ready = %+v, want %+v", tc.kind, c, available)
				}
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

// TestStalledOrReconciling: a Ready=False whose reason waits for someone
// to act stalls; a missing ConfigMap or Secret only once its grace period
// is over; any other reason is progress.
func TestStalledOrReconciling(t *testing.T) {
	for _, tc := range []struct {
		reason  string
		mayCome bool
		want    string
	}{
		{appv1.ReasonResourceConflict, false, appv1.ConditionStalled},
		{appv1.ReasonResourceConflict, true, appv1.ConditionStalled},
		{appv1.ReasonInvalidSpec, true, appv1.ConditionStalled},
		{appv1.ReasonConfigMissing, false, appv1.ConditionStalled},
		{appv1.ReasonConfigMissing, true, appv1.ConditionReconciling},
		{appv1.ReasonProgressing, false, appv1.ConditionReconciling},
		{appv1.ReasonProgressing, true, appv1.ConditionReconciling},
		{appv1.ReasonPaused, false, appv1.ConditionReconciling},
	} {
		ready := metav1.Condition{Type: appv1.ConditionReady, Status: metav1.ConditionFalse, Reason: tc.reason, Message: "the message"}
		want := metav1.Condition{Type: tc.want, Status: metav1.ConditionTrue, Reason: tc.reason, Message: "the message"}
		if c := progressCondition(ready, tc.mayCome); c == nil || *c != want {
			t.Errorf("%s, configuration may still come: %v: got %+v, want %+v", tc.reason, tc.mayCome, c, want)
		}
	}
	if c := progressCondition(metav1.Condition{Type: appv1.ConditionReady, Status: metav1.ConditionTrue, Reason: appv1.ReasonAvailable}, true); c != nil {
		t.Errorf("Ready: got %+v, want none", c)
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

// TestChildProblemsAreTheirs: a problem of a child is reported by the
// condition of that child, and by that of no other child.
func TestChildProblemsAreTheirs(t *testing.T) {
	other := children.Problem{Kind: children.KindFilesConfigMap, Reason: appv1.ReasonResourceConflict, Message: "ConfigMap web-files-1 exists and is not controlled by this DeployObject"}
	for _, tc := range []struct {
		kind, condition string
		ask             func(*appv1.DeployObject)
		// reason and message of the condition without the problem
		reason, message string
	}{
		{children.KindPDB, appv1.ConditionDisruptionBudget, testobjects.WithBudget, appv1.ReasonDisruptionsAllowed,
			"PodDisruptionBudget web allows 1 eviction(s) now: 2 of 2 pods healthy, 1 required"},
		{children.KindHPA, appv1.ConditionAutoscaling, testobjects.WithAutoscaling, "ValidMetricFound",
			"HorizontalPodAutoscaler web: 2 current, 2 desired replicas, between 2 and 5"},
		{children.KindServiceMonitor, appv1.ConditionMonitoring, testobjects.WithServiceMonitor, appv1.ReasonMonitorCreated,
			"ServiceMonitor web scrapes port http of Service web at /metrics"},
		{children.KindPodMonitor, appv1.ConditionMonitoring, testobjects.WithPodMonitor, appv1.ReasonMonitorCreated,
			"PodMonitor web scrapes port exporter of the pods at /prometheus"},
		{children.KindIngress, appv1.ConditionRoute, testobjects.WithIngress, "AddressAssigned",
			"Ingress web has the address 192.0.2.7"},
		{children.KindHTTPRoute, appv1.ConditionRoute, testobjects.WithHTTPRoute, appv1.ReasonAccepted,
			"HTTPRoute web is accepted by Gateway infra/public/https, apps/internal"},
		{children.KindGRPCRoute, appv1.ConditionRoute, testobjects.WithGRPCRoute, appv1.ReasonAccepted,
			"GRPCRoute web is accepted by Gateway infra/public/https, apps/internal"},
		{children.KindHTTPSRedirect, appv1.ConditionRoute, testobjects.WithHTTPSRedirect, appv1.ReasonAccepted,
			"HTTPRoute web is accepted by Gateway infra/public/https, apps/internal"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			dobj := testobjects.NewDeployObject(tc.ask)
			out := everyChild(dobj)
			out.Problems = []children.Problem{other}
			want := metav1.Condition{Type: tc.condition, Status: metav1.ConditionTrue, ObservedGeneration: 2, LastTransitionTime: testobjects.FixedNow, Reason: tc.reason, Message: tc.message}
			st := Compute(dobj, out, testobjects.FixedNow)
			if c := meta.FindStatusCondition(st.Conditions, tc.condition); c == nil || *c != want {
				t.Errorf("with a problem of the files ConfigMap: %s = %+v, want %+v", tc.condition, c, want)
			}
			out.Problems = []children.Problem{{Kind: tc.kind, Reason: appv1.ReasonForbidden, Message: "denied"}}
			want = metav1.Condition{Type: tc.condition, Status: metav1.ConditionFalse, ObservedGeneration: 2, LastTransitionTime: testobjects.FixedNow, Reason: appv1.ReasonForbidden, Message: "denied"}
			st = Compute(dobj, out, testobjects.FixedNow)
			if c := meta.FindStatusCondition(st.Conditions, tc.condition); c == nil || *c != want {
				t.Errorf("with a problem of the %s: %s = %+v, want %+v", tc.kind, tc.condition, c, want)
			}
		})
	}
}

// TestRouteConditionNamesTheKeptRoute: while the route of the kind the
// spec no longer asks for keeps serving, the Route condition says so.
func TestRouteConditionNamesTheKeptRoute(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ask     func(*appv1.DeployObject)
		kept    string
		message string
	}{
		{"HTTPRoute", testobjects.WithHTTPRoute, "", "HTTPRoute web is accepted by Gateway infra/public/https, apps/internal"},
		{"HTTPRoute, the Ingress kept", testobjects.WithHTTPRoute, "Ingress web",
			"HTTPRoute web is accepted by Gateway infra/public/https, apps/internal; switching routes: Ingress web keeps serving until then"},
		{"GRPCRoute, the Ingress kept", testobjects.WithGRPCRoute, "Ingress web",
			"GRPCRoute web is accepted by Gateway infra/public/https, apps/internal; switching routes: Ingress web keeps serving until then"},
		{"Ingress", testobjects.WithIngress, "", "Ingress web has the address 192.0.2.7"},
		{"Ingress, the HTTPRoute kept", testobjects.WithIngress, "HTTPRoute web",
			"Ingress web has the address 192.0.2.7; switching routes: HTTPRoute web keeps serving until then"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject(tc.ask)
			out := everyChild(dobj)
			out.KeptRoute = tc.kept
			if c := routeCondition(dobj, out); c.Message != tc.message {
				t.Errorf("Route message %q, want %q", c.Message, tc.message)
			}
		})
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

// TestReadyConditionCanary: a canary under way (or waiting to start) is
// told by Ready before the Deployment's own state, which it pauses or
// rolls, with a scale-down that waits for the canary's end; a problem, a
// refused route and a child not made yet still come first. An aborted
// canary stalls; every other phase reconciles.
func TestReadyConditionCanary(t *testing.T) {
	const id = "5d8f7c9b6d-1"
	canary := func(phase appv1.CanaryPhase, reason appv1.CanaryAbortReason) *appv1.CanaryStatus {
		return &appv1.CanaryStatus{
			ID: id, Revision: "5d8f7c9b6d", Attempt: 1, StableRevision: "7b9c6d5f4", Mode: appv1.CanaryModeRoute, Phase: phase,
			Step: 1, DesiredWeight: 20, ObservedWeight: 20, Replicas: 1, AvailableReplicas: 1, AbortReason: reason,
		}
	}
	paused := func(d *appv1.DeployObject) *appsv1.Deployment {
		live := testobjects.LiveDeployment(d)
		live.Spec.Paused = true
		return live
	}
	rolling := func(d *appv1.DeployObject) *appsv1.Deployment {
		live := testobjects.LiveDeployment(d)
		live.Status.UpdatedReplicas = 1
		return live
	}
	refused := func(d *appv1.DeployObject) *gatewayv1.HTTPRoute {
		r := testobjects.LiveHTTPRoute(d)
		c := meta.FindStatusCondition(r.Status.Parents[0].Conditions, "Accepted")
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, "NotAllowedByListeners", "not here"
		return r
	}
	for _, tc := range []struct {
		name string
		out  func(d *appv1.DeployObject) Outcome
		// without is the Ready reason of the same outcome without the
		// canary.
		reason, message, progress, without string
	}{
		{"progressing beside a paused Deployment", func(d *appv1.DeployObject) Outcome {
			return Outcome{Deployment: paused(d), Service: testobjects.LiveService(d), HTTPRoute: testobjects.LiveHTTPRoute(d), Canary: canary(appv1.CanaryProgressing, "")}
		}, appv1.ReasonCanaryProgressing,
			"canary 5d8f7c9b6d-1 at step 1: weight 20 % of 20 % (Route), 1 of 1 canary pods available; abort: kubectl annotate deployobject web app.deployobject.dev/canary-abort=5d8f7c9b6d-1 --overwrite",
			appv1.ConditionReconciling, appv1.ReasonPaused},
		{"paused beside a rolling Deployment", func(d *appv1.DeployObject) Outcome {
			return Outcome{Deployment: rolling(d), Service: testobjects.LiveService(d), HTTPRoute: testobjects.LiveHTTPRoute(d), Canary: canary(appv1.CanaryPaused, "")}
		}, appv1.ReasonCanaryPaused,
			"canary 5d8f7c9b6d-1 paused at step 1, weight 20 %; promote: kubectl annotate deployobject web app.deployobject.dev/canary-promote=5d8f7c9b6d-1/1 --overwrite; abort: kubectl annotate deployobject web app.deployobject.dev/canary-abort=5d8f7c9b6d-1 --overwrite",
			appv1.ConditionReconciling, appv1.ReasonProgressing},
		{"progressing, a scale-down waiting", func(d *appv1.DeployObject) Outcome {
			return Outcome{Deployment: paused(d), Service: testobjects.LiveService(d), HTTPRoute: testobjects.LiveHTTPRoute(d), Canary: canary(appv1.CanaryProgressing, ""),
				CanaryScaleDown: &ScaleDown{To: 3, Kept: 8}}
		}, appv1.ReasonCanaryProgressing,
			"canary 5d8f7c9b6d-1 at step 1: weight 20 % of 20 % (Route), 1 of 1 canary pods available; abort: kubectl annotate deployobject web app.deployobject.dev/canary-abort=5d8f7c9b6d-1 --overwrite; the scale-down to replicas=3 waits for the canary's end (the stable keeps 8)",
			appv1.ConditionReconciling, appv1.ReasonPaused},
		{"paused, a scale-down to zero waiting", func(d *appv1.DeployObject) Outcome {
			return Outcome{Deployment: rolling(d), Service: testobjects.LiveService(d), HTTPRoute: testobjects.LiveHTTPRoute(d), Canary: canary(appv1.CanaryPaused, ""),
				CanaryScaleDown: &ScaleDown{To: 0, Kept: 2}}
		}, appv1.ReasonCanaryPaused,
			"canary 5d8f7c9b6d-1 paused at step 1, weight 20 %; promote: kubectl annotate deployobject web app.deployobject.dev/canary-promote=5d8f7c9b6d-1/1 --overwrite; abort: kubectl annotate deployobject web app.deployobject.dev/canary-abort=5d8f7c9b6d-1 --overwrite; the scale-down to replicas=0 waits for the canary's end (the stable keeps 2)",
			appv1.ConditionReconciling, appv1.ReasonProgressing},
		{"promoting, the Deployment paused", func(d *appv1.DeployObject) Outcome {
			return Outcome{Deployment: paused(d), Service: testobjects.LiveService(d), HTTPRoute: testobjects.LiveHTTPRoute(d), Canary: canary(appv1.CanaryPromoting, "")}
		}, appv1.ReasonCanaryProgressing, "canary 5d8f7c9b6d-1 promoting: revision 5d8f7c9b6d rolls out to every replica",
			appv1.ConditionReconciling, appv1.ReasonPaused},
		{"aborting for a new revision", func(d *appv1.DeployObject) Outcome {
			return Outcome{Deployment: testobjects.LiveDeployment(d), Service: testobjects.LiveService(d), HTTPRoute: testobjects.LiveHTTPRoute(d), Canary: canary(appv1.CanaryAborting, appv1.AbortSuperseded)}
		}, appv1.ReasonCanaryProgressing, "canary 5d8f7c9b6d-1 aborting (Superseded): traffic back to stable 7b9c6d5f4, then its pods removed",
			appv1.ConditionReconciling, appv1.ReasonAvailable},
		{"aborting by the operator", func(d *appv1.DeployObject) Outcome {
			return Outcome{Deployment: testobjects.LiveDeployment(d), Service: testobjects.LiveService(d), HTTPRoute: testobjects.LiveHTTPRoute(d), Canary: canary(appv1.CanaryAborting, appv1.AbortOperator)}
		}, appv1.ReasonCanaryAborted, "canary 5d8f7c9b6d-1 aborting (Operator): traffic back to stable 7b9c6d5f4, then its pods removed",
			appv1.ConditionStalled, appv1.ReasonAvailable},
		{"aborted beside a ready Deployment", func(d *appv1.DeployObject) Outcome {
			return Outcome{Deployment: testobjects.LiveDeployment(d), Service: testobjects.LiveService(d), HTTPRoute: testobjects.LiveHTTPRoute(d), Canary: canary(appv1.CanaryAborted, appv1.AbortRestarts)}
		}, appv1.ReasonCanaryAborted,
			"canary 5d8f7c9b6d-1 aborted (Restarts); stable 7b9c6d5f4 serves all traffic; retry: kubectl annotate deployobject web app.deployobject.dev/canary-retry=5d8f7c9b6d-1 --overwrite",
			appv1.ConditionStalled, appv1.ReasonAvailable},
		{"waiting to start beside a rolling Deployment", func(d *appv1.DeployObject) Outcome {
			return Outcome{Deployment: rolling(d), Service: testobjects.LiveService(d), HTTPRoute: testobjects.LiveHTTPRoute(d),
				CanaryWaiting: "the canary of revision 5d8f7c9b6d waits for the Deployment's rollout to finish"}
		}, appv1.ReasonCanaryProgressing, "the canary of revision 5d8f7c9b6d waits for the Deployment's rollout to finish",
			appv1.ConditionReconciling, appv1.ReasonProgressing},
		{"a problem comes first", func(d *appv1.DeployObject) Outcome {
			return Outcome{Deployment: paused(d), Service: testobjects.LiveService(d), HTTPRoute: testobjects.LiveHTTPRoute(d), Canary: canary(appv1.CanaryAborted, appv1.AbortRestarts),
				Problems: []children.Problem{{Kind: "canary Service", Reason: appv1.ReasonForbidden, Message: "creating Service web-canary: denied"}}}
		}, appv1.ReasonForbidden, "creating Service web-canary: denied", appv1.ConditionStalled, appv1.ReasonForbidden},
		{"a missing Service comes first", func(d *appv1.DeployObject) Outcome {
			return Outcome{Deployment: paused(d), HTTPRoute: testobjects.LiveHTTPRoute(d), Canary: canary(appv1.CanaryPaused, "")}
		}, appv1.ReasonProgressing, "Service web does not exist yet", appv1.ConditionReconciling, appv1.ReasonProgressing},
		{"a missing Deployment comes first", func(d *appv1.DeployObject) Outcome {
			return Outcome{Service: testobjects.LiveService(d), HTTPRoute: testobjects.LiveHTTPRoute(d), Canary: canary(appv1.CanaryProgressing, ""), CanaryWaiting: "x"}
		}, appv1.ReasonProgressing, "Deployment web does not exist yet", appv1.ConditionReconciling, appv1.ReasonProgressing},
		{"a missing route comes first", func(d *appv1.DeployObject) Outcome {
			return Outcome{Deployment: paused(d), Service: testobjects.LiveService(d), Canary: canary(appv1.CanaryPaused, "")}
		}, appv1.ReasonProgressing, "HTTPRoute web does not exist yet", appv1.ConditionReconciling, appv1.ReasonProgressing},
		{"a refused route comes first", func(d *appv1.DeployObject) Outcome {
			return Outcome{Deployment: paused(d), Service: testobjects.LiveService(d), HTTPRoute: refused(d), Canary: canary(appv1.CanaryPaused, "")}
		}, appv1.ReasonRouteNotAccepted, "NotAllowedByListeners: Gateway infra/public/https does not accept HTTPRoute web: not here", appv1.ConditionStalled, appv1.ReasonRouteNotAccepted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject(testobjects.WithHTTPRoute)
			out := tc.out(dobj)
			want := metav1.Condition{Type: appv1.ConditionReady, Status: metav1.ConditionFalse, Reason: tc.reason, Message: tc.message}
			if c := ReadyCondition(dobj, out); c != want {
				t.Errorf("Ready = %+v, want %+v", c, want)
			}
			st := Compute(dobj, out, testobjects.FixedNow)
			for _, typ := range progressConditionTypes {
				c := meta.FindStatusCondition(st.Conditions, typ)
				if typ != tc.progress {
					if c != nil {
						t.Errorf("%s = %+v, want none", typ, c)
					}
					continue
				}
				if c == nil || c.Status != metav1.ConditionTrue || c.Reason != tc.reason {
					t.Errorf("%s = %+v, want True for %s", typ, c, tc.reason)
				}
			}
			if !testobjects.EqualObjects(st.Canary, out.Canary) {
				t.Errorf("status.canary %+v, want %+v", st.Canary, out.Canary)
			}
			out.Canary, out.CanaryWaiting = nil, ""
			if c := ReadyCondition(dobj, out); c.Reason != tc.without {
				t.Errorf("without the canary: Ready = %s %q, want %s", c.Reason, c.Message, tc.without)
			}
		})
	}
}

// TestApplyConfigurationCanary: the status apply carries every field of
// status.canary (those the API makes optional only when set), and no
// canary when the status has none, so that server-side apply removes it.
func TestApplyConfigurationCanary(t *testing.T) {
	every := &appv1.CanaryStatus{
		ID: "5d8f7c9b6d-2", Revision: "5d8f7c9b6d", Attempt: 2, StableRevision: "7b9c6d5f4", Mode: appv1.CanaryModeRoute,
		Phase: appv1.CanaryAborting, Step: 3, StepStartTime: ptr.To(testobjects.Earlier), TrafficShiftTime: ptr.To(testobjects.FixedNow),
		DesiredWeight: 50, ObservedWeight: 20, Replicas: 2, AvailableReplicas: 1, Restarts: 4, AbortReason: appv1.AbortRestarts,
	}
	// A field added to the API without a value here fails the test.
	v := reflect.ValueOf(every).Elem()
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("the test sets no %s", v.Type().Field(i).Name)
		}
	}
	for _, tc := range []struct {
		name   string
		canary *appv1.CanaryStatus
		want   string
	}{
		{"every field", every, `{"id": "5d8f7c9b6d-2", "revision": "5d8f7c9b6d", "attempt": 2, "stableRevision": "7b9c6d5f4", "mode": "Route",
			"phase": "Aborting", "step": 3, "stepStartTime": "2026-11-01T11:00:00Z", "trafficShiftTime": "2026-11-01T12:00:00Z",
			"desiredWeight": 50, "observedWeight": 20, "replicas": 2, "availableReplicas": 1, "restarts": 4, "abortReason": "Restarts"}`},
		{"zeros are values, the optional fields absent", &appv1.CanaryStatus{ID: "5d8f7c9b6d-1", Revision: "5d8f7c9b6d", Attempt: 1, Mode: appv1.CanaryModeReplicaRatio, Phase: appv1.CanaryProgressing},
			`{"id": "5d8f7c9b6d-1", "revision": "5d8f7c9b6d", "attempt": 1, "mode": "ReplicaRatio", "phase": "Progressing",
			"step": 0, "desiredWeight": 0, "observedWeight": 0, "replicas": 0, "availableReplicas": 0, "restarts": 0}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ac := ApplyConfiguration(testobjects.NewDeployObject(), appv1.DeployObjectStatus{Canary: tc.canary})
			b, err := json.Marshal(ac.Status.Canary)
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("status.canary applied as\n%s\nwant\n%s", b, tc.want)
			}
		})
	}
	if ac := ApplyConfiguration(testobjects.NewDeployObject(), appv1.DeployObjectStatus{}); ac.Status.Canary != nil {
		t.Errorf("a status without a canary applies %+v", ac.Status.Canary)
	}
}
