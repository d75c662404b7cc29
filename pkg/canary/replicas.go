package canary

import appv1 "deployobject.dev/controller/pkg/apis/app/v1"

// Replicas is how many canary pods the weight w (percent) needs beside n
// stable pods, at least one.
//
// With route weights the canary Service gets w % of the requests and the
// stable one the rest, so the canary needs w % of the pods the whole
// application would need: ⌈n·w/100⌉.
//
// Without them (ReplicaRatio) the one Service spreads requests evenly over
// the stable and canary pods, so the canary's share is c/(n+c), and
// c = ⌈n·w/(100−w)⌉ pods give at least w %. The stable is never shrunk
// during a canary, so c stops at n (50 %); 100 % is n too.
func Replicas(mode appv1.CanaryMode, n, w int32) int32 {
	if n <= 0 || w <= 0 {
		return 1
	}
	if mode == appv1.CanaryModeRoute {
		return max(1, ceilDiv(n*w, 100))
	}
	if w >= 100 {
		return n
	}
	return min(max(1, ceilDiv(n*w, 100-w)), n)
}

// RatioWeight is the share (percent, rounded down) of the requests that
// canary available pods get beside stable available ones behind one
// Service.
func RatioWeight(canary, stable int32) int32 {
	if canary <= 0 {
		return 0
	}
	return 100 * canary / (canary + max(stable, 0))
}

func ceilDiv(a, b int32) int32 { return (a + b - 1) / b }
