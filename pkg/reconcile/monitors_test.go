package reconcile

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/diff"
	core "k8s.io/client-go/testing"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/testobjects"
)

// TestSyncMonitoring: what the monitors have beyond the cases of every
// kind (TestSyncEachKind): Ready does not wait for scraping that cannot be
// set up, a switch of kind deletes the old monitor only once the new one
// is made, and the kinds may go from the cluster.
func TestSyncMonitoring(t *testing.T) {
	t.Run("without prometheus-operator, Ready is not held back", func(t *testing.T) {
		f := newFixture(t)
		dobj := testobjects.NewDeployObject(testobjects.WithServiceMonitor)
		f.inLine(dobj)
		res := f.mustSync(dobj)
		expectActions(t, f.writes())
		// Not retried: no problem; the controller syncs it again once
		// monitors are served.
		if p := res.Outcome.Problems; len(p) != 0 {
			t.Errorf("problems %+v, want none", p)
		}
		if r := readyOf(t, dobj, res); r.Status != metav1.ConditionTrue || r.Reason != appv1.ReasonAvailable {
			t.Errorf("Ready = %+v, want True: the application runs without scraping", r)
		}
		if c := conditionOf(statusAfter(dobj, res), appv1.ConditionMonitoring); c == nil || c.Status != metav1.ConditionFalse || c.Reason != appv1.ReasonMonitoringAPIUnavailable || !strings.Contains(c.Message, "prometheus-operator's CRDs are not installed") {
			t.Errorf("Monitoring condition = %+v, want MonitoringAPIUnavailable", c)
		}
	})
	t.Run("ServiceMonitor created for a running DeployObject, which stays Ready", func(t *testing.T) {
		f := newFixture(t)
		f.monitoring = true
		dobj := testobjects.NewDeployObject(testobjects.WithServiceMonitor)
		f.inLine(dobj)
		res := f.mustSync(dobj)
		writes := f.writes()
		expectActions(t, writes, "create servicemonitors web")
		want := testobjects.MustDesiredMonitor(dobj, children.KindServiceMonitor)
		if got := writes[0].(core.CreateAction).GetObject(); !equality.Semantic.DeepEqual(got, want) {
			t.Errorf("created ServiceMonitor differs from desired:\n%s", diff.Diff(want, got))
		}
		if c := conditionOf(statusAfter(dobj, res), appv1.ConditionMonitoring); c == nil || c.Status != metav1.ConditionTrue || c.Reason != appv1.ReasonMonitorCreated || c.Message != "ServiceMonitor web scrapes port http of Service web at /metrics" {
			t.Errorf("Monitoring condition = %+v, want MonitorCreated", c)
		}
		if r := readyOf(t, dobj, res); r.Status != metav1.ConditionTrue {
			t.Errorf("Ready = %+v, want True", r)
		}
	})
	t.Run("Ready waits for a monitor that cannot be made", func(t *testing.T) {
		f, dobj, _, res := syncRefusingMonitor(t, apierrors.NewForbidden(children.ServiceMonitorResource.GroupResource(), "web", errors.New("RBAC: access denied")))
		expectActions(t, f.writes(), "create servicemonitors web")
		if p := problemOf(res, children.KindServiceMonitor); p == nil || !p.Retry {
			t.Errorf("problem = %+v, want the blocked monitor retried", p)
		}
		if r := readyOf(t, dobj, res); r.Reason != appv1.ReasonForbidden || !strings.Contains(r.Message, "ServiceMonitor web") {
			t.Errorf("Ready = %+v, want Forbidden naming the ServiceMonitor", r)
		}
		if c := conditionOf(statusAfter(dobj, res), appv1.ConditionMonitoring); c == nil || c.Reason != appv1.ReasonForbidden {
			t.Errorf("Monitoring condition = %+v, want Forbidden", c)
		}
	})
	// The monitor switched to a sidecar's port: the ServiceMonitor, live,
	// is to be a PodMonitor.
	switched := func(t *testing.T) (*fixture, *appv1.DeployObject) {
		f := newFixture(t)
		f.monitoring = true
		before := testobjects.NewDeployObject(testobjects.WithServiceMonitor)
		dobj := testobjects.NewDeployObject(testobjects.WithPodMonitor)
		f.inLine(dobj)
		f.put(testobjects.LiveMonitor(before, children.KindServiceMonitor))
		return f, dobj
	}
	t.Run("switched to a sidecar's port: a PodMonitor, then the ServiceMonitor deleted", func(t *testing.T) {
		f, dobj := switched(t)
		res := f.mustSync(dobj)
		writes := f.writes()
		expectActions(t, writes, "create podmonitors web", "delete servicemonitors web")
		if uid := writes[1].(core.DeleteAction).GetDeleteOptions().Preconditions.UID; uid == nil || *uid != "uid-servicemonitor" {
			t.Errorf("delete preconditions UID = %v, want uid-servicemonitor", uid)
		}
		if c := conditionOf(statusAfter(dobj, res), appv1.ConditionMonitoring); c == nil || c.Status != metav1.ConditionTrue || !strings.HasPrefix(c.Message, "PodMonitor web scrapes port exporter") {
			t.Errorf("Monitoring condition = %+v, want the PodMonitor", c)
		}
	})
	t.Run("switched, but the PodMonitor's name is taken: the ServiceMonitor stays", func(t *testing.T) {
		f, dobj := switched(t)
		foreign := testobjects.LiveMonitor(dobj, children.KindPodMonitor)
		foreign.SetOwnerReferences(nil)
		foreign.SetLabels(map[string]string{"team": "obs"})
		f.unlisted = append(f.unlisted, foreign)
		res := f.mustSync(dobj)
		expectActions(t, f.writes(), "create podmonitors web", "get podmonitors web")
		if p := problemOf(res, children.KindPodMonitor); p == nil || p.Reason != appv1.ReasonResourceConflict || !p.Retry {
			t.Errorf("problem = %+v, want a ResourceConflict retried", p)
		}
	})
	// prometheus-operator's CRDs removed while the controller runs: the
	// create is answered 404 for the resource; the condition says why, and
	// the cache is given up until discovery shows them again.
	t.Run("prometheus-operator removed", func(t *testing.T) {
		f, dobj, c, res := syncRefusingMonitor(t, apierrors.NewNotFound(schema.GroupResource{}, ""))
		expectActions(t, f.writes(), "create servicemonitors web")
		if p := res.Outcome.Problems; len(p) != 0 {
			t.Errorf("problems %+v, want none: not retried", p)
		}
		if c := conditionOf(statusAfter(dobj, res), appv1.ConditionMonitoring); c == nil || c.Reason != appv1.ReasonMonitoringAPIUnavailable {
			t.Errorf("Monitoring condition = %+v, want MonitoringAPIUnavailable", c)
		}
		if r := readyOf(t, dobj, res); r.Status != metav1.ConditionTrue {
			t.Errorf("Ready = %+v, want True", r)
		}
		if c.Monitors.Lister(children.KindServiceMonitor) != nil {
			t.Error("the ServiceMonitor cache is still read after the 404")
		}
	})
}

// syncRefusingMonitor syncs a DeployObject with live children that asks
// for a ServiceMonitor, which the API server refuses to create with
// refusal, and returns the fixture, the DeployObject, the Children and
// the result of the sync, which must not fail.
func syncRefusingMonitor(t *testing.T, refusal error) (*fixture, *appv1.DeployObject, *Children, Result) {
	t.Helper()
	f := newFixture(t)
	f.monitoring = true
	dobj := testobjects.NewDeployObject(testobjects.WithServiceMonitor)
	f.inLine(dobj)
	c := f.newChildren(dobj)
	f.dynamicClient.PrependReactor("create", "servicemonitors", func(core.Action) (bool, runtime.Object, error) {
		return true, nil, refusal
	})
	res, err := f.syncWith(c, dobj)
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	return f, dobj, c, res
}
