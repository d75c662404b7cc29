package status

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// ProgressInterval is how often at most a rollout's progress is written to
// a DeployObject's status while Ready stays Progressing: a rollout reaches
// the controller as several Deployment status changes seconds apart (the
// new ReplicaSet scaled up, the surge pod counted, the old one scaled
// down), each of which would be a status write. A change of Ready's reason
// (Available, a problem), of the generation or of anything else is written
// at once.
const ProgressInterval = 5 * time.Second

// ProgressReports paces the status writes that only report progress. It
// remembers the time of the last write of the DeployObjects whose Ready
// reason is Progressing, and only theirs.
type ProgressReports struct {
	now func() time.Time

	mu   sync.Mutex
	last map[cache.ObjectName]time.Time
}

// NewProgressReports paces progress writes by now.
func NewProgressReports(now func() time.Time) *ProgressReports {
	return &ProgressReports{now: now, last: map[cache.ObjectName]time.Time{}}
}

// Wait is how long writing next over current, key's status, must wait: 0
// unless next only reports progress over current and key's last write was
// less than ProgressInterval ago.
func (p *ProgressReports) Wait(key cache.ObjectName, current, next appv1.DeployObjectStatus) time.Duration {
	if !OnlyProgress(current, next) {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	last, ok := p.last[key]
	if !ok {
		return 0
	}
	return max(0, ProgressInterval-p.now().Sub(last))
}

// Wrote records that written was just written to key.
func (p *ProgressReports) Wrote(key cache.ObjectName, written appv1.DeployObjectStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ReadyReason(written) == appv1.ReasonProgressing {
		p.last[key] = p.now()
	} else {
		delete(p.last, key)
	}
}

// Forget drops key, a DeployObject that no longer exists.
func (p *ProgressReports) Forget(key cache.ObjectName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.last, key)
}

// OnlyProgress reports whether next differs from current only in the
// progress of one rollout: Ready stays Progressing for the same
// generation, and only the replica counts and the message change.
func OnlyProgress(current, next appv1.DeployObjectStatus) bool {
	if ReadyReason(current) != appv1.ReasonProgressing || ReadyReason(next) != appv1.ReasonProgressing {
		return false
	}
	return Equal(withoutProgress(current), withoutProgress(next))
}

// withoutProgress is s without its counts and the messages of Ready and the
// kstatus condition derived from it.
func withoutProgress(s appv1.DeployObjectStatus) appv1.DeployObjectStatus {
	s = *s.DeepCopy()
	s.Replicas, s.ReadyReplicas, s.UpdatedReplicas, s.AvailableReplicas = 0, 0, 0, 0
	for _, t := range []string{appv1.ConditionReady, appv1.ConditionReconciling} {
		if c := meta.FindStatusCondition(s.Conditions, t); c != nil {
			c.Message = ""
		}
	}
	return s
}
