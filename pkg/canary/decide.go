package canary

import (
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// Defaults of spec.canary's optional fields, as the API server fills them
// in; they apply also where the object holding one is absent.
const (
	DefaultScaleDownDelaySeconds   = 30
	DefaultProgressDeadlineSeconds = 600
)

// Stable is the Deployment the canary runs beside.
type Stable struct {
	// Exists: the DeployObject's Deployment exists. A DeployObject being
	// created has nothing to run a canary beside.
	Exists bool
	// Revision is the revision its template was last applied for (its
	// appv1.AnnotationPodSpecHash).
	Revision string
	// PodTemplateHash is the pod-template-hash of its ReplicaSet of the
	// current template, which every stable pod carries once Complete.
	PodTemplateHash string
	// Replicas is the number of stable pods the canary runs beside: the
	// larger of the Deployment's and the spec's, since a scale-down waits
	// for the canary's end.
	Replicas int32
	// Available counts its available pods.
	Available int32
	// MaxSurge is its rolling update's maxSurge, resolved for Replicas.
	MaxSurge int32
	// Complete: it has rolled out its template, every replica available
	// and no pod of another template left.
	Complete bool
	// Failed: its rollout exceeded its progress deadline.
	Failed bool
	// Paused: spec.paused is set.
	Paused bool
}

// ReplicaSet is the canary's ReplicaSet, as the cache holds it.
type ReplicaSet struct {
	Replicas, Available int32
	// TemplateMatches: its pod template equals the Deployment's but for
	// the pod-template-hash label, so that the Deployment takes it for its
	// new ReplicaSet once it is no longer the DeployObject's.
	TemplateMatches bool
}

// Route is the live route, in Route mode.
type Route struct {
	// Weight is the canary's weight in the route; nil when the route sends
	// everything to the stable Service alone (no canary backend).
	Weight *int32
	// Accepted: every parent Gateway accepted the route's current
	// generation (children.RouteAcceptance).
	Accepted bool
}

// Pods is what the canary's pods show.
type Pods struct {
	// Restarts is the sum of their containers' restarts.
	Restarts int32
	// NotReadyFor is the longest any of them has not been Ready.
	NotReadyFor time.Duration
}

// Input is everything the decision depends on.
type Input struct {
	Now time.Time
	// Spec is spec.canary; nil when the spec asks for none.
	Spec *appv1.Canary
	// Revision is what the spec asks of the pod template (the Deployment's
	// appv1.AnnotationPodSpecHash when applied).
	Revision string
	// TemplateChange: the pod template the spec asks for differs from the
	// Deployment's. A change of the revision alone (a field the template
	// does not carry) starts no canary.
	TemplateChange bool
	// Mode is Route when the route has parentRefs, ReplicaRatio otherwise.
	Mode appv1.CanaryMode
	// Status is status.canary as persisted; nil outside a canary.
	Status *appv1.CanaryStatus
	Stable Stable
	// Canary is the canary's ReplicaSet; nil when the cache has none.
	Canary *ReplicaSet
	Route  Route
	Pods   Pods
	Ops    Ops
}

// Event is an event to record on the DeployObject.
type Event struct {
	Warning         bool
	Reason, Message string
}

// Decision is what the children must be. Outside a canary (Status nil and
// Hold false) every field is its zero value and the sync does what it
// does without a canary: no canary ReplicaSet or Service, the route with
// the stable backend alone, the stable Service unpinned.
type Decision struct {
	// Status is status.canary to persist.
	Status *appv1.CanaryStatus
	// Hold: the Deployment keeps its live pod template.
	Hold bool
	// Pause: the Deployment is paused, so that the template applied for a
	// promotion creates no ReplicaSet before the canary's is handed over.
	Pause bool
	// HandOver: the canary ReplicaSet is to be released to the Deployment,
	// which adopts it as its new ReplicaSet: its pods keep running and
	// count toward the new revision.
	HandOver bool
	// KeepReplicas: the Deployment's replicas are not lowered; a
	// scale-down waits for the canary's end.
	KeepReplicas bool
	// CanaryReplicas is the canary ReplicaSet's size; nil: no canary
	// ReplicaSet.
	CanaryReplicas *int32
	// CanaryService: the canary Service exists.
	CanaryService bool
	// Weight is the canary's weight to write in the route; nil: the stable
	// backend alone.
	Weight *int32
	// Pin is the pod-template-hash the stable Service selects besides the
	// name; "" for none.
	Pin string
	// Waiting says, outside a canary, why the template is held.
	Waiting string
	Events  []Event
	// After, when not 0, is when to look again.
	After time.Duration
}

// notReadyRecheck is how often a canary whose pods are not all Ready is
// looked at again while autoAbort.notReadySeconds or maxRestarts is set:
// no event comes when a pod's restart count or the time it has not been
// Ready grows.
const notReadyRecheck = 10 * time.Second

// Decide says what the children must be and what status.canary becomes.
func Decide(in Input) Decision {
	m := machine{in: in}
	if in.Status == nil {
		m.start(1)
		return m.out
	}
	m.st = in.Status.DeepCopy()
	m.run()
	return m.out
}

type machine struct {
	in  Input
	st  *appv1.CanaryStatus
	out Decision
}

func (m *machine) event(warning bool, reason, format string, args ...any) {
	m.out.Events = append(m.out.Events, Event{Warning: warning, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// after keeps the earliest time to look again; every caller passes a
// positive time.
func (m *machine) after(d time.Duration) {
	if m.out.After == 0 || d < m.out.After {
		m.out.After = d
	}
}

// start begins attempt attempt of the revision the spec asks for, when it
// asks for a canary of a template change beside a stable that can take one.
func (m *machine) start(attempt int32) {
	in := m.in
	m.st = nil
	m.out.Status = nil
	if in.Spec == nil || !in.Stable.Exists || !in.TemplateChange || in.Revision == in.Stable.Revision {
		return
	}
	if in.Stable.Failed || in.Stable.Replicas == 0 {
		m.event(false, "CanarySkipped", "the stable Deployment %s, so revision %s rolls out without a canary",
			map[bool]string{true: "exceeded its progress deadline", false: "has no replicas"}[in.Stable.Failed], in.Revision)
		return
	}
	if !in.Stable.Complete {
		m.out.Hold = true
		m.out.Waiting = fmt.Sprintf("the canary of revision %s waits for the Deployment's rollout to finish", in.Revision)
		return
	}
	m.st = &appv1.CanaryStatus{
		ID:             in.Revision + "-" + strconv.Itoa(int(attempt)),
		Revision:       in.Revision,
		Attempt:        attempt,
		StableRevision: in.Stable.PodTemplateHash,
		Mode:           in.Mode,
		Phase:          appv1.CanaryProgressing,
		StepStartTime:  ptr.To(metav1.NewTime(in.Now)),
	}
	if attempt > 1 {
		m.event(false, "CanaryRetried", "canary %s starts: attempt %d of revision %s", m.st.ID, attempt, in.Revision)
	} else {
		m.event(false, "CanaryStarted", "canary %s starts: revision %s beside stable %s", m.st.ID, in.Revision, in.Stable.PodTemplateHash)
	}
	m.steps()
}

// run decides for a canary under way: spec changes first, then the
// operations, then the automatic aborts, then the phase's own step.
func (m *machine) run() {
	in, st := m.in, m.st
	if m.committed() {
		m.promoting()
		return
	}
	switch {
	case in.Spec == nil:
		m.abortFor(appv1.AbortCanaryRemoved, "spec.canary was removed")
		return
	case in.Revision != st.Revision && in.Revision == in.Stable.Revision:
		m.abortFor(appv1.AbortReverted, "the spec asks for the stable revision again")
		return
	case in.Revision != st.Revision:
		m.abortFor(appv1.AbortSuperseded, "the spec asks for revision "+in.Revision)
		return
	}
	live := st.Phase == appv1.CanaryProgressing || st.Phase == appv1.CanaryPaused
	switch {
	case in.Ops.Abort == st.ID && (live || st.Phase == appv1.CanaryPromoting):
		m.abort(appv1.AbortOperator, true, "aborted by the "+appv1.AnnotationCanaryAbort+" annotation")
		return
	case in.Ops.Retry == st.ID && st.Phase == appv1.CanaryAborted:
		m.start(st.Attempt + 1)
		return
	case in.Ops.PromoteFull == st.ID && live:
		m.promote("promoted fully by the " + appv1.AnnotationCanaryPromoteFull + " annotation")
		return
	case in.Ops.promotes(st.ID, st.Step) && st.Phase == appv1.CanaryPaused:
		m.event(false, "CanaryStepPromoted", "canary %s: step %d promoted by the %s annotation", st.ID, st.Step, appv1.AnnotationCanaryPromote)
		m.next()
		m.steps()
		return
	}
	if live && m.autoAbort() {
		return
	}
	switch st.Phase {
	case appv1.CanaryProgressing, appv1.CanaryPaused:
		m.steps()
	case appv1.CanaryPromoting:
		m.promoting()
	case appv1.CanaryAborting:
		m.aborting()
	case appv1.CanaryAborted:
		m.out.Status, m.out.Hold = m.st, true
	}
}

// committed reports whether the promotion applied the new template: from
// then on it runs to its end whatever the spec or the operations say, and
// a new revision waits for it.
func (m *machine) committed() bool {
	return m.st.Phase == appv1.CanaryPromoting && m.in.Stable.Revision == m.st.Revision
}

// abortFor ends the canary because the spec changed: aborted as for any
// reason, then, once its pods are gone, the spec's new revision starts
// (Superseded) or no canary remains.
func (m *machine) abortFor(reason appv1.CanaryAbortReason, why string) {
	if m.st.Phase == appv1.CanaryAborted {
		m.start(1)
		return
	}
	if m.st.Phase != appv1.CanaryAborting {
		m.abort(reason, false, why)
		return
	}
	m.aborting()
}

// autoAbort aborts a canary whose pods restart too often or stay not
// Ready too long, or whose setWeight step passed its deadline.
func (m *machine) autoAbort() bool {
	in, st, spec := m.in, m.st, m.in.Spec
	st.Restarts = max(st.Restarts, in.Pods.Restarts)
	aa := spec.AutoAbort
	if aa == nil {
		aa = &appv1.CanaryAutoAbort{}
	}
	if aa.MaxRestarts != nil && st.Restarts > *aa.MaxRestarts {
		m.abort(appv1.AbortRestarts, true, fmt.Sprintf("the canary's containers restarted %d times, more than autoAbort.maxRestarts %d", st.Restarts, *aa.MaxRestarts))
		return true
	}
	if aa.NotReadySeconds != nil && in.Pods.NotReadyFor > 0 {
		limit := seconds(*aa.NotReadySeconds)
		if in.Pods.NotReadyFor >= limit {
			m.abort(appv1.AbortNotReady, true, fmt.Sprintf("a canary pod was not Ready for %s, autoAbort.notReadySeconds %d", in.Pods.NotReadyFor.Round(time.Second), *aa.NotReadySeconds))
			return true
		}
		m.after(min(limit-in.Pods.NotReadyFor, notReadyRecheck))
	}
	if aa.MaxRestarts != nil && m.in.Canary != nil && m.in.Canary.Available < m.in.Canary.Replicas {
		m.after(notReadyRecheck)
	}
	if step := m.step(); step != nil && step.SetWeight != nil && m.deadlineLeft() <= 0 {
		m.abort(appv1.AbortProgressDeadline, true, fmt.Sprintf("step %d (setWeight %d) did not complete within autoAbort.progressDeadlineSeconds %d",
			st.Step, *step.SetWeight, ptr.Deref(aa.ProgressDeadlineSeconds, DefaultProgressDeadlineSeconds)))
		return true
	}
	return false
}

// deadlineLeft is the time the current step has left before its progress
// deadline.
func (m *machine) deadlineLeft() time.Duration {
	deadline := int32(DefaultProgressDeadlineSeconds)
	if aa := m.in.Spec.AutoAbort; aa != nil && aa.ProgressDeadlineSeconds != nil {
		deadline = *aa.ProgressDeadlineSeconds
	}
	return seconds(deadline) - m.in.Now.Sub(m.st.StepStartTime.Time)
}

// step is the current step, nil past the last one.
func (m *machine) step() *appv1.CanaryStep {
	if m.st.Step < 0 || int(m.st.Step) >= len(m.in.Spec.Steps) {
		return nil
	}
	return &m.in.Spec.Steps[m.st.Step]
}

func (m *machine) next() {
	m.st.Step++
	m.st.StepStartTime = ptr.To(metav1.NewTime(m.in.Now))
	m.st.Phase = appv1.CanaryProgressing
}

// steps runs the steps from the current one for as long as each completes
// at once, then says what the children are while it waits.
func (m *machine) steps() {
	for range len(m.in.Spec.Steps) + 1 {
		step := m.step()
		if step == nil {
			m.promote("every step completed")
			return
		}
		// A step without setWeight is a pause (admission refuses a step
		// with neither).
		if step.SetWeight == nil {
			if !m.pause(step.Pause) {
				return
			}
		} else if !m.setWeight(*step.SetWeight) {
			m.after(m.deadlineLeft())
			return
		}
		m.next()
	}
}

// running sets what every live phase has: the template held, the canary
// Service and the stable pinned in Route mode, the Deployment not scaled
// down.
func (m *machine) running(replicas int32) {
	m.out.Status = m.st
	m.out.Hold, m.out.KeepReplicas = true, true
	m.out.CanaryReplicas = ptr.To(replicas)
	m.out.Weight = m.in.Route.Weight
	if m.st.Mode == appv1.CanaryModeRoute {
		m.out.CanaryService = true
		m.out.Pin = m.st.StableRevision
	}
	if m.in.Canary != nil {
		m.st.Replicas, m.st.AvailableReplicas = m.in.Canary.Replicas, m.in.Canary.Available
	} else {
		m.st.Replicas, m.st.AvailableReplicas = 0, 0
	}
	if m.st.Mode == appv1.CanaryModeReplicaRatio {
		m.st.ObservedWeight = RatioWeight(m.st.AvailableReplicas, m.in.Stable.Available)
	}
}

// keptReplicas is the canary's size for weight w: what w needs, but never
// fewer than a higher weight still in the route needs, nor fewer than it
// has before scaleDownDelaySeconds have passed since the Gateways accepted
// the last change of the weights.
func (m *machine) keptReplicas(w int32) int32 {
	n, mode := m.in.Stable.Replicas, m.st.Mode
	need := Replicas(mode, n, w)
	if live := m.in.Route.Weight; live != nil && *live > w {
		need = max(need, Replicas(mode, n, *live))
	}
	if c := m.in.Canary; c != nil && c.Replicas > need && !m.delayPassed() {
		need = c.Replicas
	}
	return need
}

// delayPassed reports whether scaleDownDelaySeconds have passed since the
// Gateways accepted the last change of the weights; if not, it looks again
// then.
func (m *machine) delayPassed() bool {
	if m.st.TrafficShiftTime == nil {
		return true
	}
	delay := int32(DefaultScaleDownDelaySeconds)
	if m.in.Spec != nil && m.in.Spec.ScaleDownDelaySeconds != nil {
		delay = *m.in.Spec.ScaleDownDelaySeconds
	}
	left := seconds(delay) - m.in.Now.Sub(m.st.TrafficShiftTime.Time)
	if left > 0 {
		m.after(left)
		return false
	}
	return true
}

// setWeight runs a setWeight step: the canary's pods first, then the
// weight, then the Gateways' acceptance. A lower weight is written at once
// and its pods go after the delay.
func (m *machine) setWeight(w int32) bool {
	st, in := m.st, m.in
	st.Phase, st.DesiredWeight = appv1.CanaryProgressing, w
	need := Replicas(st.Mode, in.Stable.Replicas, w)
	m.running(m.keptReplicas(w))
	if st.Mode == appv1.CanaryModeReplicaRatio {
		// The share is the pods': the step is done once the canary has
		// exactly the pods w needs available, fewer or (for a lower
		// weight) more.
		if st.AvailableReplicas != need {
			return false
		}
		m.stepDone(w)
		return true
	}
	live := ptr.Deref(in.Route.Weight, 0)
	if w < live || st.AvailableReplicas >= need {
		m.out.Weight = ptr.To(w)
	}
	if in.Route.Weight == nil || live != w || !in.Route.Accepted {
		return false
	}
	if st.ObservedWeight != w {
		st.TrafficShiftTime = ptr.To(metav1.NewTime(in.Now))
	}
	m.stepDone(w)
	return true
}

func (m *machine) stepDone(w int32) {
	if m.st.Mode == appv1.CanaryModeRoute {
		m.st.ObservedWeight = w
	}
	m.event(false, "CanaryWeightSet", "canary %s: step %d, weight %d %% (%s)", m.st.ID, m.st.Step, w,
		map[appv1.CanaryMode]string{appv1.CanaryModeRoute: "accepted by every Gateway", appv1.CanaryModeReplicaRatio: "approximate, by the share of pods"}[m.st.Mode])
}

// pause runs a pause step: timed, it ends by itself; without a duration,
// only the promote operation ends it (see run).
func (m *machine) pause(p *appv1.CanaryPause) bool {
	st := m.st
	if st.Phase != appv1.CanaryPaused {
		m.event(false, "CanaryPaused", "canary %s paused at step %d", st.ID, st.Step)
	}
	st.Phase = appv1.CanaryPaused
	m.running(m.keptReplicas(st.DesiredWeight))
	if p == nil || p.Duration == nil {
		return false
	}
	d, err := time.ParseDuration(*p.Duration)
	if err != nil {
		// Admission refuses such a duration; an object stored before the
		// rule waits for the promote operation.
		return false
	}
	left := d - m.in.Now.Sub(st.StepStartTime.Time)
	if left > 0 {
		m.after(left)
		return false
	}
	return true
}

// promote starts the promotion.
func (m *machine) promote(why string) {
	m.st.Phase = appv1.CanaryPromoting
	m.st.StepStartTime = ptr.To(metav1.NewTime(m.in.Now))
	m.st.TrafficShiftTime = nil
	m.event(false, "CanaryPromoting", "canary %s is promoted: %s", m.st.ID, why)
	m.promoting()
}

// promoting hands the new revision to the Deployment: the stable Service
// unpinned, so that it covers the canary's pods too and the canary's share
// only grows; the template applied while the Deployment is paused; the
// canary ReplicaSet handed over (or, when its template differs from the
// Deployment's, left to serve until one rolling update is done); the
// Deployment resumed. Once it has rolled out, the route drops the canary
// backend and, after the delay, the canary's children go.
func (m *machine) promoting() {
	in, st := m.in, m.st
	m.out.Status = m.st
	m.out.Weight = in.Route.Weight
	m.out.CanaryService = st.Mode == appv1.CanaryModeRoute
	if in.Canary != nil {
		st.Replicas, st.AvailableReplicas = in.Canary.Replicas, in.Canary.Available
		m.out.CanaryReplicas = ptr.To(in.Canary.Replicas)
	} else {
		st.Replicas, st.AvailableReplicas = 0, 0
	}
	if !m.committed() {
		m.out.KeepReplicas, m.out.Pause = true, true
		if in.Canary != nil {
			// The Deployment counts the canary's pods as its new
			// ReplicaSet's: with at least maxSurge of them, adopting it
			// leaves no room to scale the stable up.
			surge := min(in.Stable.MaxSurge, in.Stable.Replicas)
			m.out.CanaryReplicas = ptr.To(max(in.Canary.Replicas, surge))
		}
		return
	}
	// The template is applied: it stays, whatever the spec asks now.
	m.out.Hold = true
	if in.Canary != nil && in.Stable.Paused {
		if in.Canary.TemplateMatches {
			m.out.KeepReplicas, m.out.Pause, m.out.HandOver = true, true, true
			return
		}
		m.event(false, "CanaryPromotedByRollout", "canary %s: the Deployment's template differs from the canary's (another writer or admission changed it), so the Deployment rolls out as usual and the canary's pods go once it is done", st.ID)
	}
	if !in.Stable.Complete {
		return
	}
	if st.Mode == appv1.CanaryModeRoute {
		m.out.Weight = nil
		if in.Route.Weight != nil || !in.Route.Accepted {
			return
		}
		if st.TrafficShiftTime == nil {
			st.TrafficShiftTime = ptr.To(metav1.NewTime(in.Now))
		}
		if !m.delayPassed() {
			return
		}
	}
	m.event(false, "CanaryPromoted", "canary %s promoted: revision %s is the stable revision", st.ID, st.Revision)
	m.restart()
}

// restart ends the canary and decides afresh, from no canary: what the
// spec asks now may be another revision, whose canary starts at once.
func (m *machine) restart() {
	events := m.out.Events
	m.out = Decision{}
	m.start(1)
	m.out.Events = append(events, m.out.Events...)
}

// abort starts aborting: the weight back to 0 at once.
func (m *machine) abort(reason appv1.CanaryAbortReason, warning bool, why string) {
	st := m.st
	st.Phase, st.AbortReason = appv1.CanaryAborting, reason
	st.StepStartTime = ptr.To(metav1.NewTime(m.in.Now))
	st.TrafficShiftTime = nil
	m.event(warning, "CanaryAborting", "canary %s aborts: %s", st.ID, why)
	m.aborting()
}

// aborting takes the canary's traffic away, then (once the Gateways
// accepted that and the delay passed) its pods and the route's canary
// backend, then (once that route is accepted) the canary Service and the
// stable's pin. Its pods are never scaled up meanwhile.
func (m *machine) aborting() {
	in, st := m.in, m.st
	m.running(0)
	m.out.CanaryReplicas = nil
	if in.Canary != nil && st.Mode == appv1.CanaryModeRoute {
		m.out.CanaryReplicas = ptr.To(in.Canary.Replicas)
	}
	if w := in.Route.Weight; st.Mode == appv1.CanaryModeRoute && w != nil {
		m.out.Weight = ptr.To[int32](0)
		if *w != 0 || !in.Route.Accepted {
			return
		}
		if st.TrafficShiftTime == nil {
			st.TrafficShiftTime = ptr.To(metav1.NewTime(in.Now))
			st.ObservedWeight = 0
		}
		if !m.delayPassed() {
			return
		}
		m.out.CanaryReplicas, m.out.Weight = nil, nil
		return
	}
	m.out.CanaryReplicas = nil
	// A route that dropped the canary backend (TrafficShiftTime is set
	// once it sent the canary nothing) must be accepted before the canary
	// Service goes; one that never had it waits for nothing.
	if in.Canary != nil || st.TrafficShiftTime != nil && !in.Route.Accepted {
		return
	}
	m.aborted()
}

// aborted ends an abort: a canary aborted for a spec change gives way to
// what the spec now asks; any other stays Aborted, holding the stable
// template, until retried or the spec changes.
func (m *machine) aborted() {
	st := m.st
	m.event(!specChange(st.AbortReason), "CanaryAborted", "canary %s aborted (%s): the stable revision serves all traffic", st.ID, st.AbortReason)
	if specChange(st.AbortReason) {
		m.restart()
		return
	}
	st.Phase = appv1.CanaryAborted
	st.Replicas, st.AvailableReplicas, st.ObservedWeight = 0, 0, 0
	m.out = Decision{Status: st, Hold: true, Events: m.out.Events}
}

// specChange reports whether an abort for reason was the spec's doing: it
// needs nobody to act, and what the spec asks follows it.
func specChange(reason appv1.CanaryAbortReason) bool {
	return reason == appv1.AbortSuperseded || reason == appv1.AbortReverted || reason == appv1.AbortCanaryRemoved
}

func seconds(s int32) time.Duration { return time.Duration(s) * time.Second }
