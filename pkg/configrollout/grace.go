package configrollout

import (
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"
)

// MissingGrace remembers since when each DeployObject has been waiting
// for a ConfigMap or Secret that does not exist, so that a missing
// reference is reported as still in progress (Reconciling) for a grace
// period before it stalls: GitOps tools apply an application together with
// its configuration, or with objects from which other controllers make it.
// It holds entries only for DeployObjects waiting now; a restart starts
// their grace again.
type MissingGrace struct {
	grace time.Duration
	now   func() time.Time

	mu    sync.Mutex
	since map[cache.ObjectName]time.Time
}

// NewMissingGrace allows grace; 0 stalls at once.
func NewMissingGrace(grace time.Duration, now func() time.Time) *MissingGrace {
	return &MissingGrace{grace: grace, now: now, since: map[cache.ObjectName]time.Time{}}
}

// Left is how much of key's grace is left, starting it now if key was not
// waiting yet; 0 once it is over. A nil *MissingGrace gives none.
func (g *MissingGrace) Left(key cache.ObjectName) time.Duration {
	if g == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	since, ok := g.since[key]
	if !ok {
		since = now
		g.since[key] = now
	}
	return max(0, g.grace-now.Sub(since))
}

// Found ends key's wait: its configuration exists, or it is gone.
func (g *MissingGrace) Found(key cache.ObjectName) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.since, key)
}
