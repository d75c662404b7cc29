package canary

import (
	"fmt"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// Condition is the reason and message of Ready for the canary st of the
// DeployObject name. The message holds no countdown, so that it changes
// only when the canary does and a waiting canary writes nothing.
func Condition(name string, st *appv1.CanaryStatus) (reason, message string) {
	annotate := func(key, value string) string {
		return fmt.Sprintf("kubectl annotate deployobject %s %s=%s --overwrite", name, key, value)
	}
	abort := "; abort: " + annotate(appv1.AnnotationCanaryAbort, st.ID)
	switch st.Phase {
	case appv1.CanaryPaused:
		return appv1.ReasonCanaryPaused, fmt.Sprintf("canary %s paused at step %d, weight %d %%; promote: %s%s",
			st.ID, st.Step, st.ObservedWeight, annotate(appv1.AnnotationCanaryPromote, PromoteValue(st.ID, st.Step)), abort)
	case appv1.CanaryAborted:
		return appv1.ReasonCanaryAborted, fmt.Sprintf("canary %s aborted (%s); stable %s serves all traffic; retry: %s",
			st.ID, st.AbortReason, st.StableRevision, annotate(appv1.AnnotationCanaryRetry, st.ID))
	case appv1.CanaryAborting:
		reason := appv1.ReasonCanaryAborted
		if specChange(st.AbortReason) {
			reason = appv1.ReasonCanaryProgressing
		}
		return reason, fmt.Sprintf("canary %s aborting (%s): traffic back to stable %s, then its pods removed",
			st.ID, st.AbortReason, st.StableRevision)
	case appv1.CanaryPromoting:
		return appv1.ReasonCanaryProgressing, fmt.Sprintf("canary %s promoting: revision %s rolls out to every replica", st.ID, st.Revision)
	}
	return appv1.ReasonCanaryProgressing, fmt.Sprintf("canary %s at step %d: weight %d %% of %d %% (%s), %d of %d canary pods available%s",
		st.ID, st.Step, st.ObservedWeight, st.DesiredWeight, st.Mode, st.AvailableReplicas, st.Replicas, abort)
}
