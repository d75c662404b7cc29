package canary

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

var now = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// ago is a status time d before now.
func ago(d time.Duration) *metav1.Time { return ptr.To(metav1.NewTime(now.Add(-d))) }

func weightStep(w int32) appv1.CanaryStep { return appv1.CanaryStep{SetWeight: ptr.To(w)} }
func pauseStep(d string) appv1.CanaryStep {
	if d == "" {
		return appv1.CanaryStep{Pause: &appv1.CanaryPause{}}
	}
	return appv1.CanaryStep{Pause: &appv1.CanaryPause{Duration: ptr.To(d)}}
}

// input is a canary of revision "new" beside a complete stable "old" of 4
// pods (pod-template-hash "s7", maxSurge 1), in Route mode, with the steps
// 20 %, pause 30s, 50 %, pause until promoted; restarts and readiness
// checked.
func input(mutate ...func(*Input)) Input {
	in := Input{
		Now: now,
		Spec: &appv1.Canary{
			Steps:                 []appv1.CanaryStep{weightStep(20), pauseStep("30s"), weightStep(50), pauseStep("")},
			ScaleDownDelaySeconds: ptr.To[int32](30),
			AutoAbort:             &appv1.CanaryAutoAbort{ProgressDeadlineSeconds: ptr.To[int32](600), MaxRestarts: ptr.To[int32](3), NotReadySeconds: ptr.To[int32](60)},
		},
		Revision:       "new",
		TemplateChange: true,
		Mode:           appv1.CanaryModeRoute,
		Stable:         Stable{Exists: true, Revision: "old", PodTemplateHash: "s7", Replicas: 4, Available: 4, MaxSurge: 1, Complete: true},
	}
	for _, f := range mutate {
		f(&in)
	}
	return in
}

// status is canary "new-1" at step 0, begun 10 s ago, in Route mode.
func status(mutate ...func(*appv1.CanaryStatus)) *appv1.CanaryStatus {
	st := &appv1.CanaryStatus{ID: "new-1", Revision: "new", Attempt: 1, StableRevision: "s7", Mode: appv1.CanaryModeRoute,
		Phase: appv1.CanaryProgressing, StepStartTime: ago(10 * time.Second)}
	for _, f := range mutate {
		f(st)
	}
	return st
}

func withStatus(st *appv1.CanaryStatus) func(*Input) { return func(in *Input) { in.Status = st } }
func withCanary(replicas, available int32) func(*Input) {
	return func(in *Input) {
		in.Canary = &ReplicaSet{Replicas: replicas, Available: available, TemplateMatches: true}
	}
}
func withRoute(w *int32, accepted bool) func(*Input) {
	return func(in *Input) { in.Route = Route{Weight: w, Accepted: accepted} }
}

// live is what every live phase of canary st in Route mode wants: the
// template held, the Deployment not scaled down, the canary Service, the
// stable pinned.
func live(st *appv1.CanaryStatus, replicas int32, weight *int32) Decision {
	return Decision{Status: st, Hold: true, KeepReplicas: true, CanaryReplicas: ptr.To(replicas), CanaryService: true, Weight: weight, Pin: "s7"}
}

func with(d Decision, f func(*Decision)) Decision { f(&d); return d }

type ev struct {
	warning bool
	reason  string
}

// decideCase is a row of the tables of Decide: the input, the decision but
// for its events, and the events' warning flags and reasons.
type decideCase struct {
	name   string
	in     Input
	want   Decision
	events []ev
}

func runDecide(t *testing.T, cases []decideCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Decide(tc.in)
			var events []ev
			for _, e := range got.Events {
				events = append(events, ev{e.Warning, e.Reason})
			}
			got.Events = nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Decide:\n got %s\nwant %s", show(got), show(tc.want))
			}
			if !reflect.DeepEqual(events, tc.events) {
				t.Errorf("events %v, want %v", events, tc.events)
			}
		})
	}
}

// promoting is a canary promoted from its last step, at weight 50 with 2
// pods.
func promoting(s *appv1.CanaryStatus) {
	s.Phase, s.Step, s.DesiredWeight, s.ObservedWeight, s.Replicas, s.AvailableReplicas = appv1.CanaryPromoting, 4, 50, 50, 2, 2
}

// aborting is a canary aborting for reason since 20 s, from weight 20 with
// one pod; shift is when the Gateways accepted weight 0.
func aborting(reason appv1.CanaryAbortReason, shift *metav1.Time) func(*appv1.CanaryStatus) {
	return func(s *appv1.CanaryStatus) {
		s.Phase, s.AbortReason, s.StepStartTime, s.TrafficShiftTime = appv1.CanaryAborting, reason, ago(20*time.Second), shift
		s.DesiredWeight, s.Replicas, s.AvailableReplicas = 20, 1, 1
	}
}

func TestDecide(t *testing.T) {
	pausedAt := func(step int32, start time.Duration) func(*appv1.CanaryStatus) {
		return func(s *appv1.CanaryStatus) {
			s.Phase, s.Step, s.StepStartTime = appv1.CanaryPaused, step, ago(start)
			s.DesiredWeight, s.ObservedWeight, s.TrafficShiftTime = 20, 20, ago(start)
			s.Replicas, s.AvailableReplicas = 1, 1
			if step == 3 {
				s.DesiredWeight, s.ObservedWeight, s.Replicas, s.AvailableReplicas = 50, 50, 2, 2
			}
		}
	}
	committed := func(paused, complete bool) func(*Input) {
		return func(in *Input) {
			in.Stable.Revision, in.TemplateChange, in.Stable.Paused, in.Stable.Complete = "new", false, paused, complete
		}
	}
	aborted := status(func(s *appv1.CanaryStatus) {
		s.Phase, s.AbortReason, s.StepStartTime, s.TrafficShiftTime, s.DesiredWeight = appv1.CanaryAborted, appv1.AbortOperator, ago(20*time.Second), ago(40*time.Second), 20
	})
	runDecide(t, []decideCase{
		// No canary.
		{"T0 no spec.canary: as without one", input(func(in *Input) { in.Spec = nil }), Decision{}, nil},
		{"T0 the spec asks for the stable revision", input(func(in *Input) { in.Revision = "old" }), Decision{}, nil},
		{"T0 no Deployment yet: creation rolls as without a canary", input(func(in *Input) { in.Stable = Stable{} }), Decision{}, nil},
		{"T0 a revision change without a template change", input(func(in *Input) { in.TemplateChange = false }), Decision{}, nil},
		{"T2 the stable still rolling: the template waits", input(func(in *Input) { in.Stable.Complete = false }),
			Decision{Hold: true, Waiting: "the canary of revision new waits for the Deployment's rollout to finish"}, nil},
		{"T3 a failed stable is not blocked by its fix", input(func(in *Input) { in.Stable.Failed, in.Stable.Complete = true, false }),
			Decision{}, []ev{{false, "CanarySkipped"}}},
		{"T3 no stable replicas", input(func(in *Input) { in.Stable.Replicas = 0 }), Decision{}, []ev{{false, "CanarySkipped"}}},

		// Start and weights.
		{"T1 start: one canary pod for 20 % of 4, the stable pinned, no weight before it is available", input(),
			with(live(status(func(s *appv1.CanaryStatus) { s.StepStartTime, s.DesiredWeight = ago(0), 20 }), 1, nil),
				func(d *Decision) { d.After = 600 * time.Second }),
			[]ev{{false, "CanaryStarted"}}},
		{"W1 the canary pod not available yet: no weight", input(withStatus(status()), withCanary(1, 0)),
			with(live(status(func(s *appv1.CanaryStatus) { s.DesiredWeight, s.Replicas = 20, 1 }), 1, nil),
				func(d *Decision) { d.After = notReadyRecheck }), nil},
		{"W2 the canary pod available: the weight is written", input(withStatus(status()), withCanary(1, 1)),
			with(live(status(func(s *appv1.CanaryStatus) { s.DesiredWeight, s.Replicas, s.AvailableReplicas = 20, 1, 1 }), 1, ptr.To[int32](20)),
				func(d *Decision) { d.After = 590 * time.Second }), nil},
		{"W3 written, not accepted: it waits, the deadline counting", input(withStatus(status()), withCanary(1, 1), withRoute(ptr.To[int32](20), false)),
			with(live(status(func(s *appv1.CanaryStatus) { s.DesiredWeight, s.Replicas, s.AvailableReplicas = 20, 1, 1 }), 1, ptr.To[int32](20)),
				func(d *Decision) { d.After = 590 * time.Second }), nil},
		{"W4 accepted: the step completes and the timed pause begins", input(withStatus(status()), withCanary(1, 1), withRoute(ptr.To[int32](20), true)),
			with(live(status(pausedAt(1, 0)), 1, ptr.To[int32](20)), func(d *Decision) { d.After = 30 * time.Second }),
			[]ev{{false, "CanaryWeightSet"}, {false, "CanaryPaused"}}},
		{"P0 a timed pause waiting writes nothing new", input(withStatus(status(pausedAt(1, 10*time.Second))), withCanary(1, 1), withRoute(ptr.To[int32](20), true)),
			with(live(status(pausedAt(1, 10*time.Second)), 1, ptr.To[int32](20)), func(d *Decision) { d.After = 20 * time.Second }), nil},
		{"P1 a timed pause over: the next weight's pods first", input(withStatus(status(pausedAt(1, 31*time.Second))), withCanary(1, 1), withRoute(ptr.To[int32](20), true)),
			with(live(status(pausedAt(1, 31*time.Second), func(s *appv1.CanaryStatus) {
				s.Phase, s.Step, s.StepStartTime, s.DesiredWeight = appv1.CanaryProgressing, 2, ago(0), 50
			}), 2, ptr.To[int32](20)), func(d *Decision) { d.After = 600 * time.Second }), nil},
		{"P2 a pause without duration waits for the promote operation, with no timer", input(withStatus(status(pausedAt(3, time.Hour))), withCanary(2, 2), withRoute(ptr.To[int32](50), true)),
			live(status(pausedAt(3, time.Hour)), 2, ptr.To[int32](50)), nil},
		{"P2 a stale promote of an earlier step does nothing", input(withStatus(status(pausedAt(3, time.Hour))), withCanary(2, 2), withRoute(ptr.To[int32](50), true),
			func(in *Input) { in.Ops.Promote = "new-1/1" }),
			live(status(pausedAt(3, time.Hour)), 2, ptr.To[int32](50)), nil},
		{"P2 a promote of another canary does nothing", input(withStatus(status(pausedAt(3, time.Hour))), withCanary(2, 2), withRoute(ptr.To[int32](50), true),
			func(in *Input) { in.Ops.Promote = "old-1/3" }),
			live(status(pausedAt(3, time.Hour)), 2, ptr.To[int32](50)), nil},
		{"P3 promote ID/STEP ends the pause: past the last step, the promotion begins", input(withStatus(status(pausedAt(3, time.Hour))), withCanary(2, 2), withRoute(ptr.To[int32](50), true),
			func(in *Input) { in.Ops.Promote = "new-1/3" }),
			Decision{Status: status(pausedAt(3, time.Hour), promoting, func(s *appv1.CanaryStatus) { s.StepStartTime, s.TrafficShiftTime = ago(0), nil }),
				KeepReplicas: true, Pause: true, CanaryReplicas: ptr.To[int32](2), CanaryService: true, Weight: ptr.To[int32](50)},
			[]ev{{false, "CanaryStepPromoted"}, {false, "CanaryPromoting"}}},
		{"PR0 the template not applied yet (its write failed): the same again",
			input(withStatus(status(func(s *appv1.CanaryStatus) { s.DesiredWeight, s.Phase = 20, appv1.CanaryPromoting })), withCanary(1, 1)),
			Decision{Status: status(func(s *appv1.CanaryStatus) {
				s.DesiredWeight, s.Phase, s.Replicas, s.AvailableReplicas = 20, appv1.CanaryPromoting, 1, 1
			}),
				KeepReplicas: true, Pause: true, CanaryReplicas: ptr.To[int32](1), CanaryService: true}, nil},
		{"PR0 promote-full from a weight step; the canary pre-scaled to maxSurge",
			input(withStatus(status(func(s *appv1.CanaryStatus) { s.DesiredWeight = 20 })), withCanary(0, 0), func(in *Input) { in.Ops.PromoteFull = "new-1" }),
			Decision{Status: status(func(s *appv1.CanaryStatus) {
				s.DesiredWeight, s.Phase, s.StepStartTime = 20, appv1.CanaryPromoting, ago(0)
			}),
				KeepReplicas: true, Pause: true, CanaryReplicas: ptr.To[int32](1), CanaryService: true},
			[]ev{{false, "CanaryPromoting"}}},

		// Promotion after the template was applied.
		{"PR3 applied while paused: the canary ReplicaSet is handed over", input(withStatus(status(promoting)), withCanary(2, 2), withRoute(ptr.To[int32](50), true), committed(true, false)),
			Decision{Status: status(promoting), Hold: true, KeepReplicas: true, Pause: true, HandOver: true, CanaryReplicas: ptr.To[int32](2), CanaryService: true, Weight: ptr.To[int32](50)}, nil},
		{"PR3' a template that differs: one rolling update, the canary kept until it is done",
			input(withStatus(status(promoting)), withCanary(2, 2), withRoute(ptr.To[int32](50), true), committed(true, false), func(in *Input) { in.Canary.TemplateMatches = false }),
			Decision{Status: status(promoting), Hold: true, CanaryReplicas: ptr.To[int32](2), CanaryService: true, Weight: ptr.To[int32](50)},
			[]ev{{false, "CanaryPromotedByRollout"}}},
		{"PR4 handed over: resumed", input(withStatus(status(promoting)), withRoute(ptr.To[int32](50), true), committed(true, false)),
			Decision{Status: status(promoting, func(s *appv1.CanaryStatus) { s.Replicas, s.AvailableReplicas = 0, 0 }), Hold: true, CanaryService: true, Weight: ptr.To[int32](50)}, nil},
		{"PR4 a new revision during a committed promotion waits for it", input(withStatus(status(promoting)), withRoute(ptr.To[int32](50), true), committed(false, false),
			func(in *Input) { in.Revision, in.TemplateChange = "newer", true }),
			Decision{Status: status(promoting, func(s *appv1.CanaryStatus) { s.Replicas, s.AvailableReplicas = 0, 0 }), Hold: true, CanaryService: true, Weight: ptr.To[int32](50)}, nil},
		{"PR4 an abort after the template was applied does nothing", input(withStatus(status(promoting)), withRoute(ptr.To[int32](50), true), committed(false, false),
			func(in *Input) { in.Ops.Abort = "new-1" }),
			Decision{Status: status(promoting, func(s *appv1.CanaryStatus) { s.Replicas, s.AvailableReplicas = 0, 0 }), Hold: true, CanaryService: true, Weight: ptr.To[int32](50)}, nil},
		{"PR5 rolled out: the route drops the canary backend", input(withStatus(status(promoting)), withRoute(ptr.To[int32](50), true), committed(false, true)),
			Decision{Status: status(promoting, func(s *appv1.CanaryStatus) { s.Replicas, s.AvailableReplicas = 0, 0 }), Hold: true, CanaryService: true}, nil},
		{"PR5 that route accepted: the delay starts", input(withStatus(status(promoting)), withRoute(nil, true), committed(false, true)),
			Decision{Status: status(promoting, func(s *appv1.CanaryStatus) { s.Replicas, s.AvailableReplicas, s.TrafficShiftTime = 0, 0, ago(0) }),
				Hold: true, CanaryService: true, After: 30 * time.Second}, nil},
		{"PR6 the delay over: promoted, nothing of the canary left", input(withStatus(status(promoting, func(s *appv1.CanaryStatus) { s.TrafficShiftTime = ago(31 * time.Second) })),
			withRoute(nil, true), committed(false, true)),
			Decision{}, []ev{{false, "CanaryPromoted"}}},
		{"PR6 promoted with a newer revision asked for: its canary starts", input(withStatus(status(promoting, func(s *appv1.CanaryStatus) { s.TrafficShiftTime = ago(31 * time.Second) })),
			withRoute(nil, true), committed(false, true), func(in *Input) { in.Revision, in.TemplateChange, in.Stable.PodTemplateHash = "newer", true, "n8" }),
			with(live(status(func(s *appv1.CanaryStatus) {
				s.ID, s.Revision, s.StableRevision, s.StepStartTime, s.DesiredWeight = "newer-1", "newer", "n8", ago(0), 20
			}), 1, nil), func(d *Decision) { d.Pin, d.After = "n8", 600*time.Second }),
			[]ev{{false, "CanaryPromoted"}, {false, "CanaryStarted"}}},

		// Aborts.
		{"A1 operator abort in a pause: weight 0 at once, the pods kept", input(withStatus(status(pausedAt(1, 5*time.Second))), withCanary(1, 1), withRoute(ptr.To[int32](20), true),
			func(in *Input) { in.Ops.Abort = "new-1" }),
			live(status(pausedAt(1, 5*time.Second), func(s *appv1.CanaryStatus) {
				s.Phase, s.AbortReason, s.StepStartTime, s.TrafficShiftTime = appv1.CanaryAborting, appv1.AbortOperator, ago(0), nil
			}), 1, ptr.To[int32](0)),
			[]ev{{true, "CanaryAborting"}}},
		{"A1 a stale abort of another canary does nothing", input(withStatus(status(pausedAt(1, 5*time.Second))), withCanary(1, 1), withRoute(ptr.To[int32](20), true),
			func(in *Input) { in.Ops.Abort = "new-0" }),
			with(live(status(pausedAt(1, 5*time.Second)), 1, ptr.To[int32](20)), func(d *Decision) { d.After = 25 * time.Second }), nil},
		{"A2 weight 0 accepted: the delay starts, the pods kept", input(withStatus(status(aborting(appv1.AbortOperator, nil))), withCanary(1, 1), withRoute(ptr.To[int32](0), true)),
			with(live(status(aborting(appv1.AbortOperator, ago(0))), 1, ptr.To[int32](0)), func(d *Decision) { d.After = 30 * time.Second }), nil},
		{"A2 the delay over: the pods and the canary backend go", input(withStatus(status(aborting(appv1.AbortOperator, ago(31*time.Second)))), withCanary(1, 1), withRoute(ptr.To[int32](0), true)),
			with(live(status(aborting(appv1.AbortOperator, ago(31*time.Second))), 0, nil), func(d *Decision) { d.CanaryReplicas = nil }), nil},
		{"A3 the route without the canary not accepted yet: the canary Service stays", input(withStatus(status(aborting(appv1.AbortOperator, ago(40*time.Second)))), withRoute(nil, false)),
			with(live(status(aborting(appv1.AbortOperator, ago(40*time.Second)), func(s *appv1.CanaryStatus) { s.Replicas, s.AvailableReplicas = 0, 0 }), 0, nil),
				func(d *Decision) { d.CanaryReplicas = nil }), nil},
		{"A3 accepted and the pods gone: Aborted, the stable held", input(withStatus(status(aborting(appv1.AbortOperator, ago(40*time.Second)))), withRoute(nil, true)),
			Decision{Status: status(aborting(appv1.AbortOperator, ago(40*time.Second)), func(s *appv1.CanaryStatus) {
				s.Phase, s.Replicas, s.AvailableReplicas = appv1.CanaryAborted, 0, 0
			}), Hold: true},
			[]ev{{true, "CanaryAborted"}}},
		{"A3 a canary whose weight was never written goes at once", input(withStatus(status(aborting(appv1.AbortProgressDeadline, nil))), withCanary(1, 0)),
			with(live(status(aborting(appv1.AbortProgressDeadline, nil), func(s *appv1.CanaryStatus) { s.AvailableReplicas = 0 }), 0, nil),
				func(d *Decision) { d.CanaryReplicas = nil }), nil},
		{"Aborted stays Aborted, also under a stale abort", input(withStatus(aborted), func(in *Input) { in.Ops.Abort = "new-1" }),
			Decision{Status: aborted, Hold: true}, nil},
		{"R1 retry names the aborted canary: attempt 2, a new id", input(withStatus(aborted), func(in *Input) { in.Ops.Retry = "new-1" }),
			with(live(status(func(s *appv1.CanaryStatus) {
				s.ID, s.Attempt, s.StepStartTime, s.DesiredWeight = "new-2", 2, ago(0), 20
			}), 1, nil),
				func(d *Decision) { d.After = 600 * time.Second }),
			[]ev{{false, "CanaryRetried"}}},
		{"R1 a retry of an earlier attempt does nothing", input(withStatus(status(func(s *appv1.CanaryStatus) {
			s.ID, s.Attempt, s.Phase, s.AbortReason = "new-2", 2, appv1.CanaryAborted, appv1.AbortRestarts
		})), func(in *Input) { in.Ops.Retry = "new-1" }),
			Decision{Status: status(func(s *appv1.CanaryStatus) {
				s.ID, s.Attempt, s.Phase, s.AbortReason = "new-2", 2, appv1.CanaryAborted, appv1.AbortRestarts
			}), Hold: true}, nil},

		// The spec changes.
		{"S1 a new revision mid-canary aborts without a warning", input(withStatus(status(pausedAt(1, 5*time.Second))), withCanary(1, 1), withRoute(ptr.To[int32](20), true),
			func(in *Input) { in.Revision = "newer" }),
			live(status(pausedAt(1, 5*time.Second), func(s *appv1.CanaryStatus) {
				s.Phase, s.AbortReason, s.StepStartTime, s.TrafficShiftTime = appv1.CanaryAborting, appv1.AbortSuperseded, ago(0), nil
			}), 1, ptr.To[int32](0)),
			[]ev{{false, "CanaryAborting"}}},
		{"S1 the superseded canary gone: the new revision starts at step 0", input(withStatus(status(aborting(appv1.AbortSuperseded, ago(40*time.Second)))), withRoute(nil, true),
			func(in *Input) { in.Revision = "newer" }),
			with(live(status(func(s *appv1.CanaryStatus) {
				s.ID, s.Revision, s.StepStartTime, s.DesiredWeight = "newer-1", "newer", ago(0), 20
			}), 1, nil),
				func(d *Decision) { d.After = 600 * time.Second }),
			[]ev{{false, "CanaryAborted"}, {false, "CanaryStarted"}}},
		{"S1 a new revision after an abort starts at once", input(withStatus(aborted), func(in *Input) { in.Revision = "newer" }),
			with(live(status(func(s *appv1.CanaryStatus) {
				s.ID, s.Revision, s.StepStartTime, s.DesiredWeight = "newer-1", "newer", ago(0), 20
			}), 1, nil),
				func(d *Decision) { d.After = 600 * time.Second }),
			[]ev{{false, "CanaryStarted"}}},
		{"S2 back to the stable revision: aborted, then nothing held", input(withStatus(status(aborting(appv1.AbortReverted, ago(40*time.Second)))), withRoute(nil, true),
			func(in *Input) { in.Revision = "old" }),
			Decision{}, []ev{{false, "CanaryAborted"}}},
		{"S3 spec.canary removed: aborted, then the rolling update", input(withStatus(status(pausedAt(1, 5*time.Second))), withCanary(1, 1),
			func(in *Input) { in.Spec = nil }),
			with(live(status(pausedAt(1, 5*time.Second), func(s *appv1.CanaryStatus) {
				s.Phase, s.AbortReason, s.StepStartTime, s.TrafficShiftTime = appv1.CanaryAborting, appv1.AbortCanaryRemoved, ago(0), nil
			}), 0, nil), func(d *Decision) { d.CanaryReplicas = nil }),
			[]ev{{false, "CanaryAborting"}}},

		// Automatic aborts.
		{"restarts over maxRestarts abort", input(withStatus(status()), withCanary(1, 1), func(in *Input) { in.Pods.Restarts = 4 }),
			with(live(status(func(s *appv1.CanaryStatus) {
				s.Phase, s.AbortReason, s.StepStartTime, s.Restarts, s.Replicas, s.AvailableReplicas = appv1.CanaryAborting, appv1.AbortRestarts, ago(0), 4, 1, 1
			}), 0, nil), func(d *Decision) { d.CanaryReplicas = nil }),
			[]ev{{true, "CanaryAborting"}}},
		{"restarts seen stay counted when the pods that made them are gone", input(withStatus(status(func(s *appv1.CanaryStatus) { s.Restarts = 3 })), withCanary(1, 1),
			func(in *Input) { in.Pods.Restarts = 1 }),
			with(live(status(func(s *appv1.CanaryStatus) {
				s.Restarts, s.DesiredWeight, s.Replicas, s.AvailableReplicas = 3, 20, 1, 1
			}), 1, ptr.To[int32](20)),
				func(d *Decision) { d.After = 590 * time.Second }), nil},
		{"a pod not Ready for notReadySeconds aborts", input(withStatus(status()), withCanary(1, 0), func(in *Input) { in.Pods.NotReadyFor = 60 * time.Second }),
			with(live(status(func(s *appv1.CanaryStatus) {
				s.Phase, s.AbortReason, s.StepStartTime, s.Replicas = appv1.CanaryAborting, appv1.AbortNotReady, ago(0), 1
			}), 0, nil), func(d *Decision) { d.CanaryReplicas = nil }),
			[]ev{{true, "CanaryAborting"}}},
		{"a pod not Ready for less is looked at again", input(withStatus(status()), withCanary(1, 0), func(in *Input) { in.Pods.NotReadyFor = 55 * time.Second }),
			with(live(status(func(s *appv1.CanaryStatus) { s.DesiredWeight, s.Replicas = 20, 1 }), 1, nil), func(d *Decision) { d.After = 5 * time.Second }), nil},
		{"a setWeight step past its deadline aborts (a Gateway that never accepts)", input(withStatus(status(func(s *appv1.CanaryStatus) { s.StepStartTime = ago(600 * time.Second) })),
			withCanary(1, 1), withRoute(ptr.To[int32](20), false)),
			live(status(func(s *appv1.CanaryStatus) {
				s.Phase, s.AbortReason, s.StepStartTime, s.Replicas, s.AvailableReplicas = appv1.CanaryAborting, appv1.AbortProgressDeadline, ago(0), 1, 1
			}), 1, ptr.To[int32](0)),
			[]ev{{true, "CanaryAborting"}}},
		{"no autoAbort: the deadline defaults to 600 s", input(withStatus(status(func(s *appv1.CanaryStatus) { s.StepStartTime = ago(599 * time.Second) })),
			withCanary(1, 0), func(in *Input) { in.Spec.AutoAbort = nil }),
			with(live(status(func(s *appv1.CanaryStatus) {
				s.StepStartTime, s.DesiredWeight, s.Replicas = ago(599*time.Second), 20, 1
			}), 1, nil),
				func(d *Decision) { d.After = time.Second }), nil},
		{"autoAbort without progressDeadlineSeconds: 600 s", input(withStatus(status(func(s *appv1.CanaryStatus) { s.StepStartTime = ago(599 * time.Second) })),
			withCanary(1, 0), func(in *Input) { in.Spec.AutoAbort = &appv1.CanaryAutoAbort{NotReadySeconds: ptr.To[int32](60)} }),
			with(live(status(func(s *appv1.CanaryStatus) {
				s.StepStartTime, s.DesiredWeight, s.Replicas = ago(599*time.Second), 20, 1
			}), 1, nil),
				func(d *Decision) { d.After = time.Second }), nil},
		{"steps that complete at once run in one sync, up to the pause after them", input(withStatus(status()), withCanary(1, 1), withRoute(ptr.To[int32](20), true),
			func(in *Input) {
				in.Spec.Steps = []appv1.CanaryStep{weightStep(20), weightStep(20), weightStep(20), pauseStep("")}
			}),
			live(status(func(s *appv1.CanaryStatus) {
				s.Phase, s.Step, s.StepStartTime, s.TrafficShiftTime = appv1.CanaryPaused, 3, ago(0), ago(0)
				s.DesiredWeight, s.ObservedWeight, s.Replicas, s.AvailableReplicas = 20, 20, 1, 1
			}), 1, ptr.To[int32](20)),
			[]ev{{false, "CanaryWeightSet"}, {false, "CanaryWeightSet"}, {false, "CanaryWeightSet"}, {false, "CanaryPaused"}}},
		{"a timed pause over to the second: the next step", input(withStatus(status(pausedAt(1, 30*time.Second))), withCanary(1, 1), withRoute(ptr.To[int32](20), true)),
			with(live(status(pausedAt(1, 30*time.Second), func(s *appv1.CanaryStatus) {
				s.Phase, s.Step, s.StepStartTime, s.DesiredWeight = appv1.CanaryProgressing, 2, ago(0), 50
			}), 2, ptr.To[int32](20)), func(d *Decision) { d.After = 600 * time.Second }), nil},
		{"a pause shorter than the delay since the last weight: looked at again when the pause ends", input(withStatus(status(pausedAt(1, 10*time.Second),
			func(s *appv1.CanaryStatus) { s.TrafficShiftTime = ago(25 * time.Second) })), withCanary(1, 1), withRoute(ptr.To[int32](20), true)),
			with(live(status(pausedAt(1, 10*time.Second), func(s *appv1.CanaryStatus) { s.TrafficShiftTime = ago(25 * time.Second) }), 1, ptr.To[int32](20)),
				func(d *Decision) { d.After = 20 * time.Second }), nil},
		{"spec.canary removed while weight 0 is accepted: the default delay", input(withStatus(status(aborting(appv1.AbortCanaryRemoved, ago(10*time.Second)))),
			withCanary(1, 1), withRoute(ptr.To[int32](0), true), func(in *Input) { in.Spec = nil }),
			with(live(status(aborting(appv1.AbortCanaryRemoved, ago(10*time.Second))), 1, ptr.To[int32](0)), func(d *Decision) { d.After = 20 * time.Second }), nil},
		{"a delay of its own: the pods go once it has passed", input(withStatus(status(aborting(appv1.AbortOperator, ago(5*time.Second)))), withCanary(1, 1), withRoute(ptr.To[int32](0), true),
			func(in *Input) { in.Spec.ScaleDownDelaySeconds = ptr.To[int32](5) }),
			with(live(status(aborting(appv1.AbortOperator, ago(5*time.Second))), 0, nil), func(d *Decision) { d.CanaryReplicas = nil }), nil},
		{"a pause is not bounded by the deadline", input(withStatus(status(pausedAt(3, 2*time.Hour))), withCanary(2, 2), withRoute(ptr.To[int32](50), true)),
			live(status(pausedAt(3, 2*time.Hour)), 2, ptr.To[int32](50)), nil},
	})
}

func show(d Decision) string {
	b, err := json.Marshal(d)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// TestDecideLowerWeight: a lower weight is written at once, before its
// pods go; they go only once the Gateways accepted it and
// scaleDownDelaySeconds passed.
func TestDecideLowerWeight(t *testing.T) {
	steps := func(in *Input) {
		in.Spec.Steps = []appv1.CanaryStep{weightStep(50), weightStep(20), pauseStep("")}
	}
	atStep1 := func(s *appv1.CanaryStatus) {
		s.Step, s.DesiredWeight, s.ObservedWeight, s.TrafficShiftTime, s.Replicas, s.AvailableReplicas = 1, 20, 50, ago(40*time.Second), 2, 2
	}
	runDecide(t, []decideCase{
		{"50 live and accepted: 20 written at once, the pods for 50 kept",
			input(steps, withStatus(status(atStep1)), withCanary(2, 2), withRoute(ptr.To[int32](50), true)),
			with(live(status(atStep1), 2, ptr.To[int32](20)), func(d *Decision) { d.After = 590 * time.Second }), nil},
		{"20 accepted: the step completes, the pods kept for the delay",
			input(steps, withStatus(status(atStep1)), withCanary(2, 2), withRoute(ptr.To[int32](20), true)),
			with(live(status(atStep1, func(s *appv1.CanaryStatus) {
				s.Phase, s.Step, s.StepStartTime, s.ObservedWeight, s.TrafficShiftTime = appv1.CanaryPaused, 2, ago(0), 20, ago(0)
			}), 2, ptr.To[int32](20)), func(d *Decision) { d.After = 30 * time.Second }),
			[]ev{{false, "CanaryWeightSet"}, {false, "CanaryPaused"}}},
		{"the delay over: down to the pods 20 % needs",
			input(steps, withStatus(status(atStep1, func(s *appv1.CanaryStatus) {
				s.Phase, s.Step, s.ObservedWeight, s.TrafficShiftTime = appv1.CanaryPaused, 2, 20, ago(31*time.Second)
			})), withCanary(2, 2), withRoute(ptr.To[int32](20), true)),
			live(status(atStep1, func(s *appv1.CanaryStatus) {
				s.Phase, s.Step, s.ObservedWeight, s.TrafficShiftTime = appv1.CanaryPaused, 2, 20, ago(31*time.Second)
			}), 1, ptr.To[int32](20)), nil},
	})
}

// TestDecideReplicaRatio: with an Ingress or no route the Service spreads
// the requests over every pod, so a step completes once the canary has the
// pods its share needs, and the observed weight is their share of the
// available pods.
func TestDecideReplicaRatio(t *testing.T) {
	ratio := func(in *Input) { in.Mode = appv1.CanaryModeReplicaRatio }
	st := func(mutate ...func(*appv1.CanaryStatus)) *appv1.CanaryStatus {
		return status(append([]func(*appv1.CanaryStatus){func(s *appv1.CanaryStatus) { s.Mode = appv1.CanaryModeReplicaRatio }}, mutate...)...)
	}
	runDecide(t, []decideCase{
		{"start: no canary Service, no pin", input(ratio),
			Decision{Status: st(func(s *appv1.CanaryStatus) { s.StepStartTime, s.DesiredWeight = ago(0), 20 }),
				Hold: true, KeepReplicas: true, CanaryReplicas: ptr.To[int32](1), After: 600 * time.Second},
			[]ev{{false, "CanaryStarted"}}},
		{"the canary pod available: 1 of 5 pods is 20 %", input(ratio, withStatus(st()), withCanary(1, 1)),
			Decision{Status: st(func(s *appv1.CanaryStatus) {
				s.Phase, s.Step, s.StepStartTime, s.DesiredWeight, s.ObservedWeight, s.Replicas, s.AvailableReplicas = appv1.CanaryPaused, 1, ago(0), 20, 20, 1, 1
			}), Hold: true, KeepReplicas: true, CanaryReplicas: ptr.To[int32](1), After: 30 * time.Second},
			[]ev{{false, "CanaryWeightSet"}, {false, "CanaryPaused"}}},
		{"50 % is as many canary pods as stable ones", input(ratio, withStatus(st(func(s *appv1.CanaryStatus) { s.Step = 2 })), withCanary(1, 1)),
			Decision{Status: st(func(s *appv1.CanaryStatus) {
				s.Step, s.DesiredWeight, s.ObservedWeight, s.Replicas, s.AvailableReplicas = 2, 50, 20, 1, 1
			}), Hold: true, KeepReplicas: true, CanaryReplicas: ptr.To[int32](4), After: 590 * time.Second}, nil},
		{"a lower weight: the pods it no longer needs go at once", input(ratio, withStatus(st(func(s *appv1.CanaryStatus) { s.Step = 1 })), withCanary(4, 4),
			func(in *Input) { in.Spec.Steps = []appv1.CanaryStep{weightStep(50), weightStep(20), pauseStep("")} }),
			Decision{Status: st(func(s *appv1.CanaryStatus) {
				s.Step, s.DesiredWeight, s.ObservedWeight, s.Replicas, s.AvailableReplicas = 1, 20, 50, 4, 4
			}), Hold: true, KeepReplicas: true, CanaryReplicas: ptr.To[int32](1), After: 590 * time.Second}, nil},
		{"an abort removes the pods at once", input(ratio, withStatus(st()), withCanary(1, 1), func(in *Input) { in.Ops.Abort = "new-1" }),
			Decision{Status: st(func(s *appv1.CanaryStatus) {
				s.Phase, s.AbortReason, s.StepStartTime, s.ObservedWeight, s.Replicas, s.AvailableReplicas = appv1.CanaryAborting, appv1.AbortOperator, ago(0), 20, 1, 1
			}), Hold: true, KeepReplicas: true},
			[]ev{{true, "CanaryAborting"}}},
		{"the pods gone: Aborted", input(ratio, withStatus(st(aborting(appv1.AbortOperator, nil)))),
			Decision{Status: st(aborting(appv1.AbortOperator, nil), func(s *appv1.CanaryStatus) { s.Phase, s.Replicas, s.AvailableReplicas = appv1.CanaryAborted, 0, 0 }), Hold: true},
			[]ev{{true, "CanaryAborted"}}},
		{"promoted once rolled out, without a route to wait for", input(ratio, withStatus(st(promoting)), func(in *Input) {
			in.Stable.Revision, in.TemplateChange = "new", false
		}), Decision{}, []ev{{false, "CanaryPromoted"}}},
	})
}

// TestDecidePauses: a pause whose duration does not parse (stored before
// admission checked it) waits for the promote operation, as does a step
// with neither setWeight nor pause.
func TestDecidePauses(t *testing.T) {
	paused := func(s *appv1.CanaryStatus) {
		s.Phase, s.Step, s.StepStartTime, s.DesiredWeight, s.ObservedWeight, s.Replicas, s.AvailableReplicas = appv1.CanaryPaused, 1, ago(time.Hour), 20, 20, 1, 1
	}
	runDecide(t, []decideCase{
		{"a duration that does not parse", input(withStatus(status(paused)), withCanary(1, 1), withRoute(ptr.To[int32](20), true),
			func(in *Input) { in.Spec.Steps[1] = pauseStep("30") }),
			live(status(paused), 1, ptr.To[int32](20)), nil},
		{"a step with neither setWeight nor pause", input(withStatus(status(paused)), withCanary(1, 1), withRoute(ptr.To[int32](20), true),
			func(in *Input) { in.Spec.Steps[1] = appv1.CanaryStep{} }),
			live(status(paused), 1, ptr.To[int32](20)), nil},
	})
}
