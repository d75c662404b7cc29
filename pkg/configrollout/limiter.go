package configrollout

import (
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"
)

// Limiter bounds how many DeployObjects are in a configuration-
// triggered rollout at once, across the whole controller: one ConfigMap
// used by a thousand applications must not start a thousand rollouts in
// the same second (each makes a ReplicaSet and replaces every pod, and
// kube-controller-manager's memory grows with the rollouts in flight).
//
// A DeployObject whose configuration changed asks for a slot before its
// Deployment is written. Without one it waits in line, first come first
// served, and is woken (wake) when a slot is handed to it: a slot freed
// goes to the head of the line at once, so a newcomer can never overtake
// a DeployObject that waited. A slot is held until the rollout has
// finished (finish), or for at most timeout, so that a rollout that is
// never seen finishing cannot block the others for ever.
type Limiter struct {
	max     int
	timeout time.Duration
	now     func() time.Time
	wake    func(cache.ObjectName)

	mu sync.Mutex
	// active holds the DeployObjects with a slot, and when they got it.
	active map[cache.ObjectName]time.Time
	// waiting is the line, in order of arrival.
	waiting []cache.ObjectName
}

// NewLimiter allows limit rollouts at once; 0 allows any number. A
// nil *Limiter allows everything, for a controller that tracks no
// configuration.
func NewLimiter(limit int, timeout time.Duration, wake func(cache.ObjectName)) *Limiter {
	return &Limiter{max: limit, timeout: timeout, now: time.Now, wake: wake, active: map[cache.ObjectName]time.Time{}}
}

// Acquire reports whether key holds a slot, giving it one if one is free
// and nobody waits for it; otherwise key joins the line (once) and is
// woken when its turn comes.
func (l *Limiter) Acquire(key cache.ObjectName) bool {
	if l == nil {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expire()
	if _, ok := l.active[key]; ok {
		return true
	}
	if l.max <= 0 || (len(l.active) < l.max && len(l.waiting) == 0) {
		l.active[key] = l.now()
		return true
	}
	if !slices.Contains(l.waiting, key) {
		l.waiting = append(l.waiting, key)
	}
	return false
}

// Adopt gives key a slot whatever the limit: its rollout is already under
// way, started by an earlier controller (see appv1.AnnotationLimitedRollout),
// and counts until it is done.
func (l *Limiter) Adopt(key cache.ObjectName) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.active[key]; !ok {
		l.active[key] = l.now()
	}
}

// Finish frees key's slot, or its place in line, when done (its
// rollout has finished, or it no longer needs one), and hands free slots
// on, among them those held past the timeout.
func (l *Limiter) Finish(key cache.ObjectName, done bool) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if done {
		delete(l.active, key)
		l.waiting = slices.DeleteFunc(l.waiting, func(k cache.ObjectName) bool { return k == key })
	}
	l.expire()
}

// expire frees the slots held longer than timeout.
func (l *Limiter) expire() {
	now := l.now()
	for k, since := range l.active {
		if now.Sub(since) >= l.timeout {
			delete(l.active, k)
		}
	}
	l.handOn()
}

// handOn gives the free slots to the head of the line and wakes it. The
// wake is a work queue add, which does not block.
func (l *Limiter) handOn() {
	for len(l.waiting) > 0 && (l.max <= 0 || len(l.active) < l.max) {
		next := l.waiting[0]
		l.waiting = l.waiting[1:]
		l.active[next] = l.now()
		l.wake(next)
	}
}

// Counts are the rollouts under way and those waiting.
func (l *Limiter) Counts() (active, pending int) {
	if l == nil {
		return 0, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.active), len(l.waiting)
}

// Timeout bounds how long one configuration rollout holds its
// slot: well past the Deployment's default progress deadline (600 s), after
// which a stuck rollout reports ProgressDeadlineExceeded and gives its slot
// up anyway.
const Timeout = 15 * time.Minute
