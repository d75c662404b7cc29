package canary

import (
	"testing"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

func TestReplicas(t *testing.T) {
	for _, tc := range []struct {
		mode     appv1.CanaryMode
		n, w     int32
		replicas int32
	}{
		{appv1.CanaryModeRoute, 1, 1, 1},
		{appv1.CanaryModeRoute, 3, 1, 1},
		{appv1.CanaryModeRoute, 10, 20, 2},
		{appv1.CanaryModeRoute, 10, 25, 3},
		{appv1.CanaryModeRoute, 3, 50, 2},
		{appv1.CanaryModeRoute, 10, 99, 10},
		{appv1.CanaryModeRoute, 4, 100, 4},
		{appv1.CanaryModeRoute, 0, 50, 1},
		{appv1.CanaryModeRoute, 4, 0, 1},
		{appv1.CanaryModeReplicaRatio, 4, 20, 1},
		{appv1.CanaryModeReplicaRatio, 10, 20, 3},
		{appv1.CanaryModeReplicaRatio, 10, 1, 1},
		{appv1.CanaryModeReplicaRatio, 3, 50, 3},
		{appv1.CanaryModeReplicaRatio, 4, 75, 4},
		{appv1.CanaryModeReplicaRatio, 4, 99, 4},
		{appv1.CanaryModeReplicaRatio, 4, 100, 4},
		{appv1.CanaryModeReplicaRatio, 0, 100, 1},
	} {
		if got := Replicas(tc.mode, tc.n, tc.w); got != tc.replicas {
			t.Errorf("Replicas(%s, n=%d, w=%d) = %d, want %d", tc.mode, tc.n, tc.w, got, tc.replicas)
		}
	}
}

func TestRatioWeight(t *testing.T) {
	for _, tc := range []struct{ canary, stable, weight int32 }{
		{0, 4, 0},
		{1, 4, 20},
		{3, 10, 23},
		{4, 4, 50},
		{2, 0, 100},
		{1, -1, 100},
		{0, 0, 0},
	} {
		if got := RatioWeight(tc.canary, tc.stable); got != tc.weight {
			t.Errorf("RatioWeight(%d, %d) = %d, want %d", tc.canary, tc.stable, got, tc.weight)
		}
	}
}
