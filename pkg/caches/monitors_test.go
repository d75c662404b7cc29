package caches

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	discoveryfake "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/metrics"
	"deployobject.dev/controller/pkg/testobjects"
)

func TestMonitoringServed(t *testing.T) {
	for _, tc := range []struct {
		name      string
		resources []*metav1.APIResourceList
		sm, pm    bool
	}{
		{"no prometheus-operator", nil, false, false},
		{"only ServiceMonitors", []*metav1.APIResourceList{{GroupVersion: "monitoring.coreos.com/v1", APIResources: []metav1.APIResource{{Name: "prometheuses"}, {Name: "servicemonitors"}}}}, true, false},
		{"both served", []*metav1.APIResourceList{{GroupVersion: "monitoring.coreos.com/v1", APIResources: []metav1.APIResource{{Name: "podmonitors"}, {Name: "servicemonitors"}}}}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &Monitors{Discovery: &discoveryfake.FakeDiscovery{Fake: &core.Fake{Resources: tc.resources}}}
			m.kinds()
			got, err := m.d.served()
			if err != nil || got["servicemonitors"] != tc.sm || got["podmonitors"] != tc.pm {
				t.Errorf("served() = %v, %v; want servicemonitors %v, podmonitors %v", got, err, tc.sm, tc.pm)
			}
		})
	}
}

// newMonitorClient is a fake dynamic client holding objs, which knows the
// monitors' list kinds.
func newMonitorClient(objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		children.ServiceMonitorResource: "ServiceMonitorList",
		children.PodMonitorResource:     "PodMonitorList",
	}, objs...)
}

// TestMonitorsFollowDiscovery: syncs may start as soon as discovery says
// there are no monitors; once prometheus-operator's CRDs are served,
// without a restart, the caches are started and filled, trimmed; removing
// the CRDs withdraws them, installing them again brings them back, and a
// write answered 404 (Lost) withdraws one at once.
func TestMonitorsFollowDiscovery(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	disc := &switchableDiscovery{resources: []string{"servicemonitors", "podmonitors"}}
	sm := testobjects.LiveMonitor(testobjects.NewDeployObject(testobjects.WithServiceMonitor), children.KindServiceMonitor)
	sm.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl"}})
	pm := testobjects.LiveMonitor(testobjects.NewDeployObject(testobjects.WithPodMonitor, func(d *appv1.DeployObject) { d.Name = "exp" }), children.KindPodMonitor)
	client := newMonitorClient(sm, pm)
	name, err := cache.NewInformerName("test-monitors")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(name.Release)
	id := NamedInformers{name, metrics.NewInformerMetrics(prometheus.NewRegistry())}
	m := &Monitors{Client: client, Discovery: disc, Recheck: 10 * time.Millisecond,
		Informer: func(r schema.GroupVersionResource) (cache.SharedIndexInformer, error) {
			return NewMonitorInformer(client, r, metav1.NamespaceAll, id)
		}}
	var changes atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Run(ctx, cache.ResourceEventHandlerFuncs{}, func() { changes.Add(1) })
	}()
	defer func() { cancel(); <-done }()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) { return cond(), nil }); err != nil {
			t.Fatalf("%s: not within 5s", what)
		}
	}
	served := func() bool {
		return m.Lister(children.KindServiceMonitor) != nil && m.Lister(children.KindPodMonitor) != nil
	}
	gone := func() bool {
		return m.Lister(children.KindServiceMonitor) == nil && m.Lister(children.KindPodMonitor) == nil
	}

	waitFor("syncs allowed without prometheus-operator", m.HasSynced)
	if !gone() {
		t.Fatal("a monitor cache without prometheus-operator")
	}
	disc.served.Store(true)
	waitFor("the caches offered once the monitors are served", func() bool { return served() && changes.Load() == 1 })
	got, err := MonitorsIn(m.Lister(children.KindServiceMonitor), sm.GetNamespace())(sm.GetName())
	if err != nil || got.GetUID() != sm.GetUID() {
		t.Fatalf("cached ServiceMonitor = %v, %v", got, err)
	}
	if got.GetManagedFields() != nil {
		t.Error("the cached ServiceMonitor is not trimmed")
	}
	if gotPM, err := MonitorsIn(m.Lister(children.KindPodMonitor), pm.GetNamespace())(pm.GetName()); err != nil || gotPM.GetUID() != pm.GetUID() {
		t.Errorf("cached PodMonitor = %v, %v", gotPM, err)
	}

	disc.served.Store(false)
	waitFor("the caches withdrawn once discovery no longer shows the monitors", func() bool { return gone() && changes.Load() == 2 })
	disc.served.Store(true)
	// Back once each informer has listed anew (a new resourceVersion).
	second := testobjects.LiveMonitor(testobjects.NewDeployObject(testobjects.WithServiceMonitor, func(d *appv1.DeployObject) { d.Name = "second" }), children.KindServiceMonitor)
	if _, err := client.Resource(children.ServiceMonitorResource).Namespace(second.GetNamespace()).Create(ctx, second, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	third := testobjects.LiveMonitor(testobjects.NewDeployObject(testobjects.WithPodMonitor, func(d *appv1.DeployObject) { d.Name = "third" }), children.KindPodMonitor)
	if _, err := client.Resource(children.PodMonitorResource).Namespace(third.GetNamespace()).Create(ctx, third, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("the caches offered again", func() bool { return served() && changes.Load() >= 3 })

	m.Lost(children.KindServiceMonitor)
	if m.Lister(children.KindServiceMonitor) != nil || m.Lister(children.KindPodMonitor) == nil {
		t.Error("after a ServiceMonitor write was answered 404, its cache is still offered, or the PodMonitor one is not")
	}
	m.Lost(children.KindPodMonitor)
	if m.Lister(children.KindPodMonitor) != nil {
		t.Error("the PodMonitor cache still offered after a write was answered 404")
	}
}
