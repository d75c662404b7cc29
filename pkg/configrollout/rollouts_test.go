package configrollout

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/tools/cache"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/testobjects"
)

// TestRolloutsDecide: what configuration makes of a Deployment write, for
// each way the write can go.
func TestRolloutsDecide(t *testing.T) {
	key := testobjects.TestKey
	other := cache.ObjectName{Namespace: key.Namespace, Name: "other"}
	// desiredAndLive returns the Deployment to write for a DeployObject
	// last applied with another hash, with the configuration hash
	// "config-2", and a live one whose annotations are changed by mutate.
	desiredAndLive := func(t *testing.T, mutate func(live *appsv1.Deployment)) (*appv1.DeployObject, *appsv1.Deployment, *appsv1.Deployment) {
		dobj := testobjects.NewDeployObject()
		dobj.Status.DeploymentHash = "applied before"
		d := children.DesiredDeployment(dobj, children.ProfileNone)
		WithHash(&d.Spec.Template, "config-2")
		desired, _, err := children.StampedDeployment(d)
		if err != nil {
			t.Fatal(err)
		}
		live := desired.DeepCopy()
		if err := children.StampTemplateHashes(live, &dobj.Spec); err != nil {
			t.Fatal(err)
		}
		mutate(live)
		return dobj, desired, live
	}
	newConfig := func(live *appsv1.Deployment) {
		WithHash(&live.Spec.Template, "config-1")
		live.Annotations[appv1.AnnotationTemplateHash] = "older configuration"
	}
	// The controller changed the template by itself (a new pod security
	// profile, a new version of the controller): neither the spec nor the
	// configuration did.
	ownTemplate := func(live *appsv1.Deployment) {
		live.Annotations[appv1.AnnotationTemplateHash] = "the controller's older template"
	}
	newSpec := func(live *appsv1.Deployment) {
		live.Annotations[appv1.AnnotationPodSpecHash] = "older spec"
		live.Annotations[appv1.AnnotationTemplateHash] = "older template"
	}
	for _, tc := range []struct {
		name      string
		mutate    func(*appsv1.Deployment)
		noLive    bool
		applied   bool
		cfg       State
		grace     time.Duration
		slotTaken bool
		want      Gate
	}{
		{name: "missing configuration without a grace stalls at once", mutate: newConfig, cfg: State{Missing: []string{"ConfigMap app"}}, want: Gate{Missing: true}},
		{name: "missing configuration within its grace is looked at again when it ends", mutate: newConfig, cfg: State{Missing: []string{"ConfigMap app"}}, grace: 2 * time.Minute, want: Gate{Missing: true, After: 2 * time.Minute}},
		{name: "a Deployment to create is never held", mutate: newConfig, noLive: true, want: Gate{}},
		{name: "what was last applied is no rollout", mutate: newConfig, applied: true, slotTaken: true, want: Gate{}},
		{name: "a new spec never waits", mutate: newSpec, slotTaken: true, want: Gate{}},
		{name: "new configuration with a free slot takes it", mutate: newConfig, want: Gate{Limited: true, After: Timeout}},
		{name: "new configuration without a free slot waits", mutate: newConfig, slotTaken: true, want: Gate{Pending: true}},
		{name: "the controller's own template change with a free slot takes it", mutate: ownTemplate, want: Gate{Limited: true, After: Timeout}},
		{name: "the controller's own template change without a free slot waits", mutate: ownTemplate, slotTaken: true, want: Gate{Pending: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dobj, desired, live := desiredAndLive(t, tc.mutate)
			if tc.noLive {
				live = nil
			}
			if tc.applied {
				dobj.Status.DeploymentHash = desired.Annotations[appv1.AnnotationDeploymentHash]
			}
			now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
			r := &Rollouts{Tracking: &Tracking{Limiter: NewLimiter(1, Timeout, func(cache.ObjectName) {})}, Grace: NewMissingGrace(tc.grace, func() time.Time { return now })}
			if tc.slotTaken && !r.Limiter.Acquire(other) {
				t.Fatal("the other DeployObject got no slot")
			}
			got, err := r.Decide(key, dobj, live, desired, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("gate %+v, want %+v", got, tc.want)
			}
			if got.Held() != (tc.want.Missing || tc.want.Pending) {
				t.Errorf("held %v", got.Held())
			}
		})
	}
}

// TestRolloutsDoneAndForget: a slot is freed once the rollout is done or
// the DeployObject is gone, not while it goes on or waits.
func TestRolloutsDoneAndForget(t *testing.T) {
	key := testobjects.TestKey
	dobj := testobjects.NewDeployObject()
	rolling := testobjects.LiveDeployment(dobj)
	rolling.Status.UpdatedReplicas = 0
	for _, tc := range []struct {
		name       string
		finish     func(r *Rollouts)
		wantActive int
	}{
		{"still rolling out", func(r *Rollouts) { r.Done(key, false, rolling) }, 1},
		{"still waiting", func(r *Rollouts) { r.Done(key, true, nil) }, 1},
		{"rolled out", func(r *Rollouts) { r.Done(key, false, testobjects.LiveDeployment(dobj)) }, 0},
		{"no Deployment", func(r *Rollouts) { r.Done(key, false, nil) }, 0},
		{"deleted", func(r *Rollouts) { r.Forget(key) }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Rollouts{Tracking: &Tracking{Limiter: NewLimiter(1, Timeout, func(cache.ObjectName) {})}}
			r.Limiter.Acquire(key)
			tc.finish(r)
			if active, _ := r.Limiter.Counts(); active != tc.wantActive {
				t.Errorf("%d slots taken, want %d", active, tc.wantActive)
			}
		})
	}
}

// TestRolloutsAdopt: only rollouts under the limit that are still going
// are adopted, and without a limit nothing is listed.
func TestRolloutsAdopt(t *testing.T) {
	dobj := testobjects.NewDeployObject()
	limited := func(name string, done bool) *appsv1.Deployment {
		d := testobjects.LiveDeployment(dobj)
		d.Name = name
		d.OwnerReferences[0].Name = name
		d.Annotations[appv1.AnnotationLimitedRollout] = "true"
		if !done {
			d.Status.UpdatedReplicas = 0
		}
		return d
	}
	unlimited := limited("unlimited", false)
	delete(unlimited.Annotations, appv1.AnnotationLimitedRollout)
	orphan := limited("orphan", false)
	orphan.OwnerReferences = nil
	list := func() ([]*appsv1.Deployment, error) {
		return []*appsv1.Deployment{limited("going", false), limited("done", true), unlimited, orphan}, nil
	}

	r := &Rollouts{Tracking: &Tracking{Limiter: NewLimiter(1, Timeout, func(cache.ObjectName) {})}}
	adopted, err := r.Adopt(list)
	if err != nil {
		t.Fatal(err)
	}
	if want := []cache.ObjectName{{Namespace: dobj.Namespace, Name: "going"}}; len(adopted) != 1 || adopted[0] != want[0] {
		t.Errorf("adopted %v, want %v", adopted, want)
	}
	if active, _ := r.Limiter.Counts(); active != 1 {
		t.Errorf("%d slots taken, want 1", active)
	}

	none := &Rollouts{Tracking: &Tracking{}}
	if adopted, err := none.Adopt(func() ([]*appsv1.Deployment, error) {
		t.Error("listed without a limit")
		return nil, nil
	}); err != nil || adopted != nil {
		t.Errorf("without a limit adopted %v, %v", adopted, err)
	}
}
