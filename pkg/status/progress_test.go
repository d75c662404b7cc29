package status

import (
	"testing"
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/testobjects"
)

// rollingOut is dobj's status with its Deployment at updated of replicas
// updated and available (all of them: Available).
func rollingOut(dobj *appv1.DeployObject, updated int32) appv1.DeployObjectStatus {
	d := testobjects.LiveDeployment(dobj)
	d.Status.UpdatedReplicas, d.Status.AvailableReplicas = updated, updated
	return Compute(dobj, Outcome{Deployment: d, Service: testobjects.LiveService(dobj)}, testobjects.FixedNow)
}

func TestOnlyProgress(t *testing.T) {
	dobj := testobjects.NewDeployObject(func(d *appv1.DeployObject) { d.Spec.Replicas = ptr.To[int32](3) })
	zero, one, all := rollingOut(dobj, 0), rollingOut(dobj, 1), rollingOut(dobj, 3)
	newGeneration := one.DeepCopy()
	newGeneration.ObservedGeneration++
	newHash := one.DeepCopy()
	newHash.DeploymentHash = "other"
	// counted is one with a count changed by set, as each step of a
	// rollout changes one count at a time.
	counted := func(set func(*appv1.DeployObjectStatus)) appv1.DeployObjectStatus {
		s := one.DeepCopy()
		set(s)
		return *s
	}
	for _, tc := range []struct {
		name          string
		current, next appv1.DeployObjectStatus
		want          bool
	}{
		{"one more replica updated", zero, one, true},
		{"only replicas: a surge pod", one, counted(func(s *appv1.DeployObjectStatus) { s.Replicas = 4 }), true},
		{"only readyReplicas", one, counted(func(s *appv1.DeployObjectStatus) { s.ReadyReplicas = 2 }), true},
		{"only updatedReplicas", one, counted(func(s *appv1.DeployObjectStatus) { s.UpdatedReplicas = 2 }), true},
		{"only availableReplicas", one, counted(func(s *appv1.DeployObjectStatus) { s.AvailableReplicas = 2 }), true},
		{"rolled out: Available", one, all, false},
		{"a new generation", zero, *newGeneration, false},
		{"a new Deployment written", zero, *newHash, false},
		{"unchanged", one, one, true},
	} {
		if got := OnlyProgress(tc.current, tc.next); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestProgressReportsArePaced(t *testing.T) {
	dobj := testobjects.NewDeployObject(func(d *appv1.DeployObject) { d.Spec.Replicas = ptr.To[int32](3) })
	zero, one, all := rollingOut(dobj, 0), rollingOut(dobj, 1), rollingOut(dobj, 3)
	now := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	p := NewProgressReports(func() time.Time { return now })
	key := cache.ObjectName{Namespace: "apps", Name: "web"}
	if w := p.Wait(key, zero, one); w != 0 {
		t.Errorf("first report waits %s, want none: nothing was written yet", w)
	}
	p.Wrote(key, zero)
	now = now.Add(2 * time.Second)
	if w := p.Wait(key, zero, one); w != 3*time.Second {
		t.Errorf("a report 2s after the last waits %s, want 3s", w)
	}
	if w := p.Wait(key, zero, all); w != 0 {
		t.Errorf("Available waits %s, want none", w)
	}
	now = now.Add(3 * time.Second)
	if w := p.Wait(key, zero, one); w != 0 {
		t.Errorf("a report %s after the last waits %s, want none", ProgressInterval, w)
	}
	p.Wrote(key, all)
	if len(p.last) != 0 {
		t.Errorf("%d entries kept after Available, want none", len(p.last))
	}
}
