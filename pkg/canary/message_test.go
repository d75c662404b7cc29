package canary

import (
	"testing"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

func TestCondition(t *testing.T) {
	base := appv1.CanaryStatus{ID: "5d8f-1", Revision: "5d8f", Attempt: 1, StableRevision: "6c9d", Mode: appv1.CanaryModeRoute,
		Step: 3, DesiredWeight: 50, ObservedWeight: 50, Replicas: 2, AvailableReplicas: 2}
	for _, tc := range []struct {
		phase           appv1.CanaryPhase
		abortReason     appv1.CanaryAbortReason
		reason, message string
	}{
		{appv1.CanaryProgressing, "", appv1.ReasonCanaryProgressing,
			"canary 5d8f-1 at step 3: weight 50 % of 50 % (Route), 2 of 2 canary pods available; abort: kubectl annotate deployobject web app.deployobject.dev/canary-abort=5d8f-1 --overwrite"},
		{appv1.CanaryPaused, "", appv1.ReasonCanaryPaused,
			"canary 5d8f-1 paused at step 3, weight 50 %; promote: kubectl annotate deployobject web app.deployobject.dev/canary-promote=5d8f-1/3 --overwrite; abort: kubectl annotate deployobject web app.deployobject.dev/canary-abort=5d8f-1 --overwrite"},
		{appv1.CanaryPromoting, "", appv1.ReasonCanaryProgressing,
			"canary 5d8f-1 promoting: revision 5d8f rolls out to every replica"},
		{appv1.CanaryAborting, appv1.AbortRestarts, appv1.ReasonCanaryAborted,
			"canary 5d8f-1 aborting (Restarts): traffic back to stable 6c9d, then its pods removed"},
		{appv1.CanaryAborting, appv1.AbortSuperseded, appv1.ReasonCanaryProgressing,
			"canary 5d8f-1 aborting (Superseded): traffic back to stable 6c9d, then its pods removed"},
		{appv1.CanaryAborted, appv1.AbortOperator, appv1.ReasonCanaryAborted,
			"canary 5d8f-1 aborted (Operator); stable 6c9d serves all traffic; retry: kubectl annotate deployobject web app.deployobject.dev/canary-retry=5d8f-1 --overwrite"},
	} {
		st := base
		st.Phase, st.AbortReason = tc.phase, tc.abortReason
		reason, message := Condition("web", &st)
		if reason != tc.reason || message != tc.message {
			t.Errorf("%s %s:\n got %s: %s\nwant %s: %s", tc.phase, tc.abortReason, reason, message, tc.reason, tc.message)
		}
	}
}
