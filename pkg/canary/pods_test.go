package canary

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodsOf(t *testing.T) {
	made := metav1.NewTime(now.Add(-time.Hour))
	pod := func(ready *corev1.ConditionStatus, since time.Duration, restarts ...int32) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: made}}
		if ready != nil {
			p.Status.Conditions = []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: made},
				{Type: corev1.PodReady, Status: *ready, LastTransitionTime: metav1.NewTime(now.Add(-since))},
			}
		}
		for i, r := range restarts {
			s := corev1.ContainerStatus{RestartCount: r}
			if i == 0 {
				p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses, s)
			} else {
				p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, s)
			}
		}
		return p
	}
	yes, no := corev1.ConditionTrue, corev1.ConditionFalse
	deleting := pod(&no, 5*time.Hour, 1)
	deleting.DeletionTimestamp = &made
	for _, tc := range []struct {
		name string
		pods []corev1.Pod
		want Pods
	}{
		{"none", nil, Pods{}},
		{"ready, restarts of init and app containers summed", []corev1.Pod{pod(&yes, time.Minute, 1, 2, 3)}, Pods{Restarts: 6}},
		{"not ready since its Ready turned False", []corev1.Pod{pod(&yes, time.Minute), pod(&no, 90*time.Second, 0, 4)}, Pods{Restarts: 4, NotReadyFor: 90 * time.Second}},
		{"no Ready condition yet: since made", []corev1.Pod{pod(nil, 0), pod(&no, time.Second)}, Pods{NotReadyFor: time.Hour}},
		{"a pod being deleted counts its restarts, not its readiness", []corev1.Pod{deleting, pod(&no, time.Second)}, Pods{Restarts: 1, NotReadyFor: time.Second}},
	} {
		if got := PodsOf(tc.pods, now); got != tc.want {
			t.Errorf("%s: PodsOf = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
