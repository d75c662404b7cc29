package canary

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// PodsOf is what the canary's pods show at now: their containers' restarts,
// summed, and the longest any of them (not being deleted) has not been
// Ready: since its Ready condition turned False, or since it was made when
// it has none yet (unscheduled).
func PodsOf(pods []corev1.Pod, now time.Time) Pods {
	var out Pods
	for i := range pods {
		pod := &pods[i]
		for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
			for _, c := range statuses {
				out.Restarts += c.RestartCount
			}
		}
		if pod.DeletionTimestamp != nil {
			continue
		}
		since := pod.CreationTimestamp.Time
		ready := false
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodReady {
				since, ready = c.LastTransitionTime.Time, c.Status == corev1.ConditionTrue
			}
		}
		if !ready {
			out.NotReadyFor = max(out.NotReadyFor, now.Sub(since))
		}
	}
	return out
}
