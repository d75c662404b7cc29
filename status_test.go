package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

func TestComputeStatusKeepsTransitionTime(t *testing.T) {
	dobj := newDeployObject()
	out := syncOutcome{deployment: liveDeployment(dobj), service: liveService(dobj)}
	dobj.Status = computeStatus(dobj, out, earlier)

	again := computeStatus(dobj, out, fixedNow)
	if !statusEqual(dobj.Status, again) {
		t.Errorf("recomputing an unchanged world changed the status:\n%+v\n%+v", dobj.Status, again)
	}

	out.deployment.Status.AvailableReplicas = 1
	changed := computeStatus(dobj, out, fixedNow)
	ready := meta.FindStatusCondition(changed.Conditions, appv1.ConditionReady)
	if ready.Status != metav1.ConditionFalse || !ready.LastTransitionTime.Equal(&fixedNow) {
		t.Errorf("Ready = %s at %v, want False at %v", ready.Status, ready.LastTransitionTime, fixedNow)
	}
	if statusEqual(dobj.Status, changed) {
		t.Error("a change in availability must change the status")
	}
}

func TestComputeStatusKeepsOtherConditions(t *testing.T) {
	dobj := newDeployObject()
	other := metav1.Condition{Type: "Audited", Status: metav1.ConditionTrue, Reason: "Checked", LastTransitionTime: earlier}
	dobj.Status.Conditions = []metav1.Condition{other}
	st := computeStatus(dobj, syncOutcome{deployment: liveDeployment(dobj), service: liveService(dobj)}, fixedNow)
	if c := meta.FindStatusCondition(st.Conditions, "Audited"); c == nil || *c != other {
		t.Errorf("another writer's condition was changed: %+v", st.Conditions)
	}
	ac := statusApplyConfiguration(dobj, st)
	if n := len(ac.Status.Conditions); n != 1 || *ac.Status.Conditions[0].Type != appv1.ConditionReady {
		t.Errorf("the status apply must carry only the Ready condition, got %d conditions", n)
	}
}

func TestReadyCondition(t *testing.T) {
	for _, tc := range []struct {
		name   string
		out    func(d *appv1.DeployObject) syncOutcome
		status metav1.ConditionStatus
		reason string
	}{
		{"no Deployment", func(*appv1.DeployObject) syncOutcome { return syncOutcome{} }, metav1.ConditionFalse, appv1.ReasonProgressing},
		{"Service missing while ports are set", func(d *appv1.DeployObject) syncOutcome {
			return syncOutcome{deployment: liveDeployment(d)}
		}, metav1.ConditionFalse, appv1.ReasonProgressing},
		{"blocked wins over a ready Deployment", func(d *appv1.DeployObject) syncOutcome {
			return syncOutcome{deployment: liveDeployment(d), service: liveService(d), problems: []childProblem{{reason: appv1.ReasonResourceConflict, message: "taken"}}}
		}, metav1.ConditionFalse, appv1.ReasonResourceConflict},
		{"scaled down, surplus pods still there", func(d *appv1.DeployObject) syncOutcome {
			live := liveDeployment(d)
			live.Status.Replicas = 5
			return syncOutcome{deployment: live, service: liveService(d)}
		}, metav1.ConditionFalse, appv1.ReasonProgressing},
		{"pods refused", func(d *appv1.DeployObject) syncOutcome {
			live := liveDeployment(d)
			live.Status.UpdatedReplicas = 0
			live.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: "violates PodSecurity"}}
			return syncOutcome{deployment: live, service: liveService(d)}
		}, metav1.ConditionFalse, appv1.ReasonReplicaFailure},
		{"paused mid-rollout", func(d *appv1.DeployObject) syncOutcome {
			live := liveDeployment(d)
			live.Spec.Paused = true
			live.Status.UpdatedReplicas = 1
			return syncOutcome{deployment: live, service: liveService(d)}
		}, metav1.ConditionFalse, appv1.ReasonPaused},
		{"paused, rolled out", func(d *appv1.DeployObject) syncOutcome {
			live := liveDeployment(d)
			live.Spec.Paused = true
			return syncOutcome{deployment: live, service: liveService(d)}
		}, metav1.ConditionFalse, appv1.ReasonPaused},
		{"two problems: the first one's reason", func(d *appv1.DeployObject) syncOutcome {
			return syncOutcome{service: liveService(d), problems: []childProblem{
				{reason: appv1.ReasonQuotaExceeded, message: "Deployment: exceeded quota"},
				{reason: appv1.ReasonForbidden, message: "Service: denied"},
			}}
		}, metav1.ConditionFalse, appv1.ReasonQuotaExceeded},
		{"available", func(d *appv1.DeployObject) syncOutcome {
			return syncOutcome{deployment: liveDeployment(d), service: liveService(d)}
		}, metav1.ConditionTrue, appv1.ReasonAvailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dobj := newDeployObject()
			c := readyCondition(dobj, tc.out(dobj))
			if c.Status != tc.status || c.Reason != tc.reason || c.Message == "" {
				t.Errorf("Ready = %s/%s %q, want %s/%s with a message", c.Status, c.Reason, c.Message, tc.status, tc.reason)
			}
		})
	}
}

func TestConditionMessagesAreBounded(t *testing.T) {
	long := strings.Repeat("é", maxConditionMessage)
	for _, msg := range []string{long, "x" + long, strings.Repeat("a", 5*maxConditionMessage)} {
		c := blockedCondition([]childProblem{{reason: appv1.ReasonInvalidSpec, message: msg}})
		if len(c.Message) > maxConditionMessage || !utf8.ValidString(c.Message) || !strings.HasSuffix(c.Message, "[truncated]") {
			t.Errorf("message of %d bytes became %d bytes (valid UTF-8: %v), want at most %d, marked", len(msg), len(c.Message), utf8.ValidString(c.Message), maxConditionMessage)
		}
	}
	if c := notReady(appv1.ReasonProgressing, "short"); c.Message != "short" {
		t.Errorf("a short message changed: %q", c.Message)
	}
}

func TestNewProblems(t *testing.T) {
	quota := childProblem{reason: appv1.ReasonQuotaExceeded, message: "creating Deployment web: exceeded quota"}
	denied := childProblem{reason: appv1.ReasonForbidden, message: "creating Service web: denied"}
	reported := []metav1.Condition{blockedCondition([]childProblem{quota})}
	for _, tc := range []struct {
		name     string
		conds    []metav1.Condition
		problems []childProblem
		want     int
	}{
		{"first report", nil, []childProblem{quota}, 1},
		{"same problem again", reported, []childProblem{quota}, 0},
		{"a second problem joins", reported, []childProblem{quota, denied}, 1},
		{"after being Ready", []metav1.Condition{{Type: appv1.ConditionReady, Status: metav1.ConditionTrue, Message: quota.message}}, []childProblem{quota}, 1},
	} {
		if got := newProblems(tc.conds, tc.problems); len(got) != tc.want {
			t.Errorf("%s: %d new problems, want %d", tc.name, len(got), tc.want)
		}
	}
}
