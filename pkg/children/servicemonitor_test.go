package children_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/identity"
	"deployobject.dev/controller/pkg/testobjects"
)

func TestMonitorKind(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*appv1.DeployObject)
		want   string
	}{
		{"none", func(*appv1.DeployObject) {}, ""},
		{"a port of spec.ports", testobjects.WithServiceMonitor, children.KindServiceMonitor},
		{"a sidecar's port", testobjects.WithPodMonitor, children.KindPodMonitor},
	} {
		if got := children.MonitorKind(testobjects.NewDeployObject(tc.mutate)); got != tc.want {
			t.Errorf("%s: MonitorKind = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestDesiredMonitor(t *testing.T) {
	for _, tc := range []struct {
		name, kind string
		mutate     func(*appv1.DeployObject)
		// want is the spec; nil when dobj asks for no monitor of kind.
		want map[string]any
	}{
		{name: "none asked for", kind: children.KindServiceMonitor, mutate: func(*appv1.DeployObject) {}},
		{name: "a PodMonitor asked for", kind: children.KindServiceMonitor, mutate: testobjects.WithPodMonitor},
		{name: "ServiceMonitor", kind: children.KindServiceMonitor, mutate: testobjects.WithServiceMonitor, want: map[string]any{
			"selector":  map[string]any{"matchLabels": map[string]any{"app.deployobject.dev/name": "web"}},
			"endpoints": []any{map[string]any{"port": "http", "path": "/metrics", "interval": "30s", "scrapeTimeout": "10s"}},
		}},
		{name: "ServiceMonitor without interval and timeout", kind: children.KindServiceMonitor, mutate: func(d *appv1.DeployObject) {
			d.Spec.Monitoring = &appv1.Monitoring{Port: "http", Path: "/stats/prometheus"}
		}, want: map[string]any{
			"selector":  map[string]any{"matchLabels": map[string]any{"app.deployobject.dev/name": "web"}},
			"endpoints": []any{map[string]any{"port": "http", "path": "/stats/prometheus"}},
		}},
		{name: "PodMonitor", kind: children.KindPodMonitor, mutate: testobjects.WithPodMonitor, want: map[string]any{
			"selector":            map[string]any{"matchLabels": map[string]any{"app.deployobject.dev/name": "web"}},
			"podMetricsEndpoints": []any{map[string]any{"port": "exporter", "path": "/prometheus"}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject(tc.mutate)
			m, err := children.DesiredMonitor(dobj, tc.kind)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if m != nil {
					t.Fatalf("a %s for a DeployObject that asks for none: %v", tc.kind, m)
				}
				return
			}
			if !equality.Semantic.DeepEqual(m.Object["spec"], tc.want) {
				t.Errorf("spec = %v, want %v", m.Object["spec"], tc.want)
			}
			if m.GetAPIVersion() != "monitoring.coreos.com/v1" || m.GetKind() != tc.kind || m.GetName() != "web" || m.GetNamespace() != dobj.Namespace {
				t.Errorf("identity = %s %s %s/%s", m.GetAPIVersion(), m.GetKind(), m.GetNamespace(), m.GetName())
			}
			if !metav1.IsControlledBy(m, dobj) || m.GetLabels()[identity.ManagedByLabel] != identity.ManagedByValue || m.GetLabels()[children.NameLabel] != "web" {
				t.Errorf("owner or labels missing: %v %v", m.GetOwnerReferences(), m.GetLabels())
			}
			if m.GetAnnotations()[appv1.AnnotationMonitorHash] == "" {
				t.Error("no hash")
			}
		})
	}

	sm := testobjects.MustDesiredMonitor(testobjects.NewDeployObject(testobjects.WithServiceMonitor), children.KindServiceMonitor)
	if l := sm.GetLabels(); l["release"] != "kube-prometheus-stack" || sm.GetAnnotations()[appv1.AnnotationOwnedMetadata] != "l:release" {
		t.Errorf("metadata labels = %v, record %q", l, sm.GetAnnotations()[appv1.AnnotationOwnedMetadata])
	}
	hash := func(mutate ...func(*appv1.DeployObject)) string {
		return testobjects.MustDesiredMonitor(testobjects.NewDeployObject(mutate...), children.KindServiceMonitor).GetAnnotations()[appv1.AnnotationMonitorHash]
	}
	if hash(testobjects.WithServiceMonitor) == hash(testobjects.WithServiceMonitor, func(d *appv1.DeployObject) { d.Spec.Monitoring.ScrapeTimeout = nil }) {
		t.Error("the hash does not tell a dropped scrapeTimeout")
	}
	if hash(testobjects.WithServiceMonitor) != hash(testobjects.WithServiceMonitor, func(d *appv1.DeployObject) { d.UID = "uid-other" }) {
		t.Error("the hash depends on the owner: an orphan would not be found in line")
	}
	if hash(testobjects.WithServiceMonitor) != hash(testobjects.WithServiceMonitor, func(d *appv1.DeployObject) { d.Spec.Monitoring.Path = "/metrics" }) {
		t.Error("an unset path and /metrics make different monitors")
	}
}

func TestMonitorInSyncAndMerge(t *testing.T) {
	for _, tc := range []struct {
		name   string
		kind   string
		spec   func(*appv1.DeployObject)
		drift  func(*unstructured.Unstructured)
		change func(*appv1.DeployObject)
		want   bool
	}{
		{name: "in sync", want: true},
		{name: "PodMonitor in sync", kind: children.KindPodMonitor, spec: testobjects.WithPodMonitor, want: true},
		{name: "others' label and annotation, and a field a CRD defaults", drift: func(m *unstructured.Unstructured) {
			m.SetLabels(map[string]string{identity.ManagedByLabel: identity.ManagedByValue, children.NameLabel: "web", "release": "kube-prometheus-stack", "team": "a"})
			m.SetAnnotations(map[string]string{appv1.AnnotationMonitorHash: m.GetAnnotations()[appv1.AnnotationMonitorHash], appv1.AnnotationOwnedMetadata: "l:release", "note": "x"})
			m.Object["spec"].(map[string]any)["endpoints"].([]any)[0].(map[string]any)["scheme"] = "http"
		}, want: true},
		{name: "interval edited", drift: func(m *unstructured.Unstructured) {
			m.Object["spec"].(map[string]any)["endpoints"].([]any)[0].(map[string]any)["interval"] = "5s"
		}},
		{name: "an endpoint added", drift: func(m *unstructured.Unstructured) {
			eps := m.Object["spec"].(map[string]any)["endpoints"].([]any)
			m.Object["spec"].(map[string]any)["endpoints"] = append(eps, map[string]any{"port": "other"})
		}},
		{name: "selector widened", drift: func(m *unstructured.Unstructured) {
			m.Object["spec"].(map[string]any)["selector"] = map[string]any{}
		}},
		{name: "release label removed", drift: func(m *unstructured.Unstructured) {
			l := m.GetLabels()
			delete(l, "release")
			m.SetLabels(l)
		}},
		{name: "scrapeTimeout dropped from the spec", change: func(d *appv1.DeployObject) { d.Spec.Monitoring.ScrapeTimeout = nil }},
		{name: "a label dropped from the spec", change: func(d *appv1.DeployObject) { d.Spec.Monitoring.Metadata = nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kind, spec := tc.kind, tc.spec
			if kind == "" {
				kind, spec = children.KindServiceMonitor, testobjects.WithServiceMonitor
			}
			dobj := testobjects.NewDeployObject(spec)
			live := testobjects.LiveMonitor(dobj, kind)
			if tc.drift != nil {
				tc.drift(live)
			}
			if tc.change != nil {
				tc.change(dobj)
			}
			desired := testobjects.MustDesiredMonitor(dobj, kind)
			if got := children.MonitorInSync(live, desired); got != tc.want {
				t.Errorf("MonitorInSync = %v, want %v", got, tc.want)
			}
			if got := children.MonitorInSync(children.SlimMonitor(live.DeepCopy()), desired); got != tc.want {
				t.Errorf("MonitorInSync of the cached monitor = %v, want %v: the cache drops what the check reads", got, tc.want)
			}
			merged, changed := children.MergeMonitor(live, desired)
			if changed == tc.want {
				t.Errorf("MergeMonitor changed = %v, want %v", changed, !tc.want)
			}
			if !children.MonitorInSync(merged, desired) {
				t.Errorf("merged monitor is not in sync: %v", merged.Object)
			}
			if merged.GetUID() != live.GetUID() || merged.GetResourceVersion() != live.GetResourceVersion() {
				t.Error("the merge lost the live object's identity")
			}
			if l := live.GetLabels(); l["team"] != "" && merged.GetLabels()["team"] != l["team"] {
				t.Error("the merge dropped another writer's label")
			}
			if _, kept := merged.GetLabels()["release"]; kept != (dobj.Spec.Monitoring.Metadata != nil) {
				t.Errorf("release label kept = %v with spec metadata %v", kept, dobj.Spec.Monitoring.Metadata)
			}
		})
	}
}

func TestSlimMonitor(t *testing.T) {
	live := testobjects.LiveMonitor(testobjects.NewDeployObject(testobjects.WithServiceMonitor), children.KindServiceMonitor)
	a := live.GetAnnotations()
	a["kubectl.kubernetes.io/last-applied-configuration"] = "{...}"
	live.SetAnnotations(a)
	live.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl"}})
	slim := children.SlimMonitor(live.DeepCopy())
	if slim.GetManagedFields() != nil || slim.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"] != "" {
		t.Errorf("kept what no check reads: %v", slim.Object["metadata"])
	}
	if slim.GetName() != "web" || slim.GetUID() != live.GetUID() || slim.GetResourceVersion() != "90" || !metav1.IsControlledBy(slim, testobjects.NewDeployObject()) ||
		slim.GetKind() != children.KindServiceMonitor || !equality.Semantic.DeepEqual(slim.Object["spec"], live.Object["spec"]) {
		t.Errorf("dropped what the sync reads: %v", slim.Object)
	}
}

func TestMonitoringCondition(t *testing.T) {
	sm := testobjects.NewDeployObject(testobjects.WithServiceMonitor)
	pm := testobjects.NewDeployObject(testobjects.WithPodMonitor)
	frontend := []appv1.NetworkPeer{{DeployObject: ptr.To("frontend")}}
	blockedPM := testobjects.NewDeployObject(testobjects.WithPodMonitor, func(d *appv1.DeployObject) {
		d.Spec.NetworkPolicy = &appv1.NetworkPolicy{From: frontend}
	})
	admittedPM := testobjects.NewDeployObject(testobjects.WithPodMonitor, func(d *appv1.DeployObject) {
		d.Spec.NetworkPolicy = &appv1.NetworkPolicy{From: frontend, MonitoringFrom: &appv1.NetworkPeer{PodSelector: &appv1.LabelSelector{}}}
	})
	for _, tc := range []struct {
		name        string
		dobj        *appv1.DeployObject
		monitor     *unstructured.Unstructured
		problem     *children.Problem
		unavailable string
		status      metav1.ConditionStatus
		reason      string
		message     string
	}{
		{"ServiceMonitor exists", sm, testobjects.LiveMonitor(sm, children.KindServiceMonitor), nil, "", metav1.ConditionTrue, appv1.ReasonMonitorCreated,
			"ServiceMonitor web scrapes port http of Service web at /metrics"},
		{"PodMonitor exists", pm, testobjects.LiveMonitor(pm, children.KindPodMonitor), nil, "", metav1.ConditionTrue, appv1.ReasonMonitorCreated,
			"PodMonitor web scrapes port exporter of the pods at /prometheus"},
		{"not made yet", sm, nil, nil, "", metav1.ConditionFalse, appv1.ReasonProgressing, "ServiceMonitor web does not exist yet"},
		{"not served", sm, nil, nil, children.MonitoringUnavailableMessage(sm, children.KindServiceMonitor), metav1.ConditionFalse, appv1.ReasonMonitoringAPIUnavailable,
			"the cluster does not serve monitoring.coreos.com/v1 ServiceMonitors (prometheus-operator's CRDs are not installed): metrics are not scraped; the controller makes ServiceMonitor web once it does"},
		// The policy's word is given whether or not the cluster serves
		// monitors.
		{"the NetworkPolicy keeps the scraper out", blockedPM, testobjects.LiveMonitor(blockedPM, children.KindPodMonitor), nil, "", metav1.ConditionFalse, appv1.ReasonNetworkPolicyBlocksScraping,
			"NetworkPolicy web admits networkPolicy.from to spec.ports only, not to port exporter of a sidecar, which Prometheus scrapes: set networkPolicy.monitoringFrom to where Prometheus runs"},
		{"the NetworkPolicy keeps the scraper out, not served", blockedPM, nil, nil, children.MonitoringUnavailableMessage(blockedPM, children.KindPodMonitor), metav1.ConditionFalse, appv1.ReasonNetworkPolicyBlocksScraping,
			"NetworkPolicy web admits networkPolicy.from to spec.ports only, not to port exporter of a sidecar, which Prometheus scrapes: set networkPolicy.monitoringFrom to where Prometheus runs"},
		{"the NetworkPolicy lets the scraper in", admittedPM, testobjects.LiveMonitor(admittedPM, children.KindPodMonitor), nil, "", metav1.ConditionTrue, appv1.ReasonMonitorCreated,
			"PodMonitor web scrapes port exporter of the pods at /prometheus"},
		{"blocked", sm, nil, &children.Problem{Reason: appv1.ReasonResourceConflict, Message: "ServiceMonitor web exists and is not controlled by this DeployObject; it is left untouched"}, "",
			metav1.ConditionFalse, appv1.ReasonResourceConflict, "ServiceMonitor web exists and is not controlled by this DeployObject; it is left untouched"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := children.MonitoringCondition(tc.dobj, tc.monitor, tc.problem, tc.unavailable)
			if c.Type != appv1.ConditionMonitoring || c.Status != tc.status || c.Reason != tc.reason || c.Message != tc.message {
				t.Errorf("condition = %+v, want %s %s %q", c, tc.status, tc.reason, tc.message)
			}
		})
	}
}

func TestCoversJSON(t *testing.T) {
	for _, tc := range []struct {
		name          string
		live, desired any
		want          bool
	}{
		{"equal strings", "a", "a", true},
		{"other string", "a", "b", false},
		{"numbers of either decoding", float64(3), int64(3), true},
		{"other number", int64(4), int64(3), false},
		{"a number for a string", int64(3), "3", false},
		{"extra key", map[string]any{"a": "1", "b": "2"}, map[string]any{"a": "1"}, true},
		{"missing key", map[string]any{"b": "2"}, map[string]any{"a": "1"}, false},
		{"a map for a string", map[string]any{}, "a", false},
		{"list element by element, with extra keys", []any{map[string]any{"a": "1", "x": true}}, []any{map[string]any{"a": "1"}}, true},
		{"list longer", []any{"a", "b"}, []any{"a"}, false},
		{"list shorter", []any{}, []any{"a"}, false},
		{"a list for a map", []any{}, map[string]any{}, false},
	} {
		if got := children.CoversJSON(tc.live, tc.desired); got != tc.want {
			t.Errorf("%s: CoversJSON = %v, want %v", tc.name, got, tc.want)
		}
	}
}
