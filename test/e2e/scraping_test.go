//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/identity"
	"deployobject.dev/controller/test/crdinstall"
)

// prometheusOperatorModule is the release whose ServiceMonitor and
// PodMonitor CRDs the test installs, from the Go module proxy like the
// Gateway API's; it is not a dependency of the controller.
const prometheusOperatorModule = "github.com/prometheus-operator/prometheus-operator@v0.85.0"

// monitoringServed reports whether the cluster serves ServiceMonitors and
// PodMonitors.
func monitoringServed(t *testing.T) bool {
	t.Helper()
	list, err := env.kube.Discovery().ServerResourcesForGroupVersion(children.MonitoringGroupVersion.String())
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	served := func(name string) bool {
		return slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == name })
	}
	return served("servicemonitors") && served("podmonitors")
}

// installMonitoringCRDs installs prometheus-operator's ServiceMonitor and
// PodMonitor CRDs, and only those, and waits until they are served. CRDs
// are cluster-wide: every controller running now sees them, which changes
// nothing for a DeployObject without spec.monitoring. They stay for the
// rest of the suite, as the Gateway API's do.
func installMonitoringCRDs(t *testing.T) {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", prometheusOperatorModule)
	cmd.Dir = env.repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("downloading %s: %v", prometheusOperatorModule, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("finding %s's directory in %s: %v", prometheusOperatorModule, out, err)
	}
	dir := t.TempDir()
	for _, name := range []string{"monitoring.coreos.com_servicemonitors.yaml", "monitoring.coreos.com_podmonitors.yaml"} {
		data, err := os.ReadFile(filepath.Join(mod.Dir, "example", "prometheus-operator-crd", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := crdinstall.Install(ctx, env.cfg, dir); err != nil {
		t.Fatalf("installing prometheus-operator's monitor CRDs: %v", err)
	}
}

// getMonitor reads the monitor of resource named name in ns; nil when
// there is none.
func getMonitor(t *testing.T, resource schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	t.Helper()
	m, err := env.dynamic.Resource(resource).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// waitMonitor waits until the monitor of resource named name exists in
// ns, and returns it.
func waitMonitor(t *testing.T, resource schema.GroupVersionResource, ns, name string, within time.Duration) *unstructured.Unstructured {
	t.Helper()
	var m *unstructured.Unstructured
	eventually(t, within, resource.Resource+" "+name+" made", func() (bool, string, error) {
		m = getMonitor(t, resource, ns, name)
		return m != nil, "not yet", nil
	})
	return m
}

// endpoint is the first endpoint of a ServiceMonitor (endpoints) or
// PodMonitor (podMetricsEndpoints), as the API server stores it.
func endpoint(t *testing.T, m *unstructured.Unstructured, field string) map[string]any {
	t.Helper()
	eps, _, err := unstructured.NestedSlice(m.Object, "spec", field)
	if err != nil || len(eps) != 1 {
		t.Fatalf("%s %s: spec.%s = %v (%v), want one endpoint", m.GetKind(), m.GetName(), field, eps, err)
	}
	return eps[0].(map[string]any)
}

// TestScraping: on a cluster without prometheus-operator's CRDs, a
// DeployObject asking to be scraped is Ready, and its Monitoring condition
// says MonitoringAPIUnavailable, without a retry loop (or
// NetworkPolicyBlocksScraping, for a sidecar's port that its NetworkPolicy
// keeps the scraper from, before and after the CRDs are installed, until
// networkPolicy.monitoringFrom lets the scraper reach that port alone); once the CRDs are
// installed the running controller makes the ServiceMonitor, which the
// real API server stores with its defaulting; another writer's label
// survives; resyncs and a controller restart write nothing; drift is
// undone; switching the port to a sidecar's makes a PodMonitor and deletes
// the ServiceMonitor; removing spec.monitoring deletes the PodMonitor and
// the condition.
func TestScraping(t *testing.T) {
	ns := newOwnNamespace(t)
	withoutCRDs := !monitoringServed(t)
	p := startChildrenController(t, ns)

	create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Sidecars = []corev1.Container{{Name: "exporter", Image: "prom/nginx-prometheus-exporter:1.4",
			Ports: []corev1.ContainerPort{{Name: "exporter", ContainerPort: 9113}}}}
		interval, timeout := appv1.PrometheusDuration("30s"), appv1.PrometheusDuration("10s")
		d.Spec.Monitoring = &appv1.Monitoring{Port: "http", Interval: &interval, ScrapeTimeout: &timeout,
			Metadata: &appv1.ChildMetadata{Labels: map[string]string{"release": "kube-prometheus-stack"}}}
	}))
	// A sidecar's port behind a NetworkPolicy whose from reaches spec.ports
	// only: the scrape is blocked, and the condition says so whether or
	// not the cluster serves monitors.
	create(t, newDO(ns, "locked", func(d *appv1.DeployObject) {
		d.Spec.Sidecars = []corev1.Container{{Name: "exporter", Image: "prom/nginx-prometheus-exporter:1.4",
			Ports: []corev1.ContainerPort{{Name: "exporter", ContainerPort: 9113}}}}
		d.Spec.Monitoring = &appv1.Monitoring{Port: "exporter"}
		d.Spec.NetworkPolicy = &appv1.NetworkPolicy{From: []appv1.NetworkPeer{{DeployObject: ptr.To("frontend")}}}
	}))
	if withoutCRDs {
		c := waitChildCondition(t, ns, "web", appv1.ConditionMonitoring, metav1.ConditionFalse, appv1.ReasonMonitoringAPIUnavailable)
		t.Logf("Monitoring without prometheus-operator: %s", c.Message)
		c = waitChildCondition(t, ns, "locked", appv1.ConditionMonitoring, metav1.ConditionFalse, appv1.ReasonNetworkPolicyBlocksScraping)
		t.Logf("Monitoring of a blocked port without prometheus-operator: %s", c.Message)
		// Nothing else breaks: the application is Ready.
		waitReady(t, ns, "web")
		waitReady(t, ns, "locked")
		// No retry loop: over three resyncs, no write and no retry.
		expectQuiet(t, p, ns, 3*childrenResync, true)
		installMonitoringCRDs(t)
	} else {
		const reason = "the cluster already serves ServiceMonitors: the path without them is not shown by this run"
		if os.Getenv("CI") != "" {
			t.Fatal(reason + ", and CI's fresh cluster must show it")
		}
		t.Log(reason)
	}
	// The rest reads only this namespace: it runs beside the parallel
	// tests, once the serial ones are done.
	t.Parallel()

	// The controller asks discovery every 20 s.
	sm := waitMonitor(t, children.ServiceMonitorResource, ns, "web", 2*timeout)
	dobj := waitReady(t, ns, "web")
	if !controlledBy(sm, dobj) || sm.GetLabels()["release"] != "kube-prometheus-stack" || sm.GetLabels()[identity.ManagedByLabel] != identity.ManagedByValue {
		t.Errorf("ServiceMonitor metadata: owners %v, labels %v", sm.GetOwnerReferences(), sm.GetLabels())
	}
	if sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels"); len(sel) != 1 || sel[children.NameLabel] != "web" {
		t.Errorf("ServiceMonitor selector = %v, want the DeployObject's Service alone", sel)
	}
	if ep := endpoint(t, sm, "endpoints"); ep["port"] != "http" || ep["path"] != "/metrics" || ep["interval"] != "30s" || ep["scrapeTimeout"] != "10s" {
		t.Errorf("ServiceMonitor endpoint = %v", ep)
	}
	c := waitChildCondition(t, ns, "web", appv1.ConditionMonitoring, metav1.ConditionTrue, appv1.ReasonMonitorCreated)
	t.Logf("Monitoring: %s", c.Message)

	// With the CRDs, the PodMonitor of the blocked port is made, and the
	// condition still says that the policy keeps the scraper out; once
	// monitoringFrom names where Prometheus runs, the policy lets it reach
	// the sidecar's port, and only that port.
	waitMonitor(t, children.PodMonitorResource, ns, "locked", timeout)
	waitChildCondition(t, ns, "locked", appv1.ConditionMonitoring, metav1.ConditionFalse, appv1.ReasonNetworkPolicyBlocksScraping)
	prometheus := appv1.NetworkPeer{NamespaceSelector: &appv1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "monitoring"}}}
	updateDO(t, ns, "locked", func(d *appv1.DeployObject) { d.Spec.NetworkPolicy.MonitoringFrom = &prometheus })
	waitChildCondition(t, ns, "locked", appv1.ConditionMonitoring, metav1.ConditionTrue, appv1.ReasonMonitorCreated)
	tcp, scrapePort := corev1.ProtocolTCP, intstr.FromInt32(9113)
	wantScrape := networkingv1.NetworkPolicyIngressRule{
		Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &scrapePort}},
		From:  []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "monitoring"}}}},
	}
	eventually(t, timeout, "the NetworkPolicy admits the scraper to the sidecar's port", func() (bool, string, error) {
		ingress := getNetworkPolicy(t, ns, "locked").Spec.Ingress
		return len(ingress) == 2 && equality.Semantic.DeepEqual(ingress[1], wantScrape), fmt.Sprintf("%+v", ingress), nil
	})

	// Another writer's label survives the resyncs, which write nothing.
	kubectlPatch(t, ns, "servicemonitor/web", `[{"op":"add","path":"/metadata/labels/team","value":"shop"}]`)
	expectQuiet(t, p, ns, 3*childrenResync, true)
	if sm := getMonitor(t, children.ServiceMonitorResource, ns, "web"); sm == nil || sm.GetLabels()["team"] != "shop" {
		t.Errorf("another writer's label is gone: %v", sm)
	}

	// Nor does a restart, with the API server's stored form and the other
	// writer's label present.
	p = restartWritesNothing(t, p, ns)

	// Drift is undone; the other writer's label stays.
	kubectlPatch(t, ns, "servicemonitor/web", `[{"op":"replace","path":"/spec/endpoints/0/interval","value":"5s"}]`)
	eventually(t, timeout, "the ServiceMonitor's drift corrected", func() (bool, string, error) {
		sm := getMonitor(t, children.ServiceMonitorResource, ns, "web")
		ep := endpoint(t, sm, "endpoints")
		return ep["interval"] == "30s" && sm.GetLabels()["team"] == "shop", fmt.Sprintf("interval %v, labels %v", ep["interval"], sm.GetLabels()), nil
	})

	// The exporter sidecar's port is not in the Service: a PodMonitor.
	updateDO(t, ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Monitoring.Port = "exporter"
		d.Spec.Monitoring.Path = "/prometheus"
	})
	pm := waitMonitor(t, children.PodMonitorResource, ns, "web", timeout)
	if ep := endpoint(t, pm, "podMetricsEndpoints"); ep["port"] != "exporter" || ep["path"] != "/prometheus" {
		t.Errorf("PodMonitor endpoint = %v", ep)
	}
	if !controlledBy(pm, getDO(t, ns, "web")) {
		t.Errorf("PodMonitor owners %v", pm.GetOwnerReferences())
	}
	waitGone(t, "ServiceMonitor web", func() error {
		_, err := env.dynamic.Resource(children.ServiceMonitorResource).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
		return err
	})
	if c := waitChildCondition(t, ns, "web", appv1.ConditionMonitoring, metav1.ConditionTrue, appv1.ReasonMonitorCreated); !strings.HasPrefix(c.Message, "PodMonitor web") {
		t.Errorf("Monitoring message %q does not name the PodMonitor", c.Message)
	}
	waitReady(t, ns, "web")
	expectQuiet(t, p, ns, 3*childrenResync, true)

	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.Monitoring = nil })
	waitGone(t, "PodMonitor web", func() error {
		_, err := env.dynamic.Resource(children.PodMonitorResource).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
		return err
	})
	eventually(t, timeout, "the Monitoring condition removed", func() (bool, string, error) {
		d := getDO(t, ns, "web")
		c := meta.FindStatusCondition(d.Status.Conditions, appv1.ConditionMonitoring)
		return c == nil && d.Status.ObservedGeneration == d.Generation, fmt.Sprintf("%+v", c), nil
	})

	// A foreign ServiceMonitor of the name is reported and never written.
	foreign := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": children.MonitoringGroupVersion.String(), "kind": children.KindServiceMonitor,
		"metadata": map[string]any{"name": "theirs", "labels": map[string]any{"owner": "someone-else"}},
		"spec":     map[string]any{"selector": map[string]any{}, "endpoints": []any{map[string]any{"port": "web"}}},
	}}
	foreign, err := env.dynamic.Resource(children.ServiceMonitorResource).Namespace(ns).Create(ctx, foreign, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	create(t, newDO(ns, "theirs", func(d *appv1.DeployObject) {
		d.Spec.Monitoring = &appv1.Monitoring{Port: "http", Path: "/metrics"}
	}))
	waitReason(t, ns, "theirs", metav1.ConditionFalse, appv1.ReasonResourceConflict)
	waitChildCondition(t, ns, "theirs", appv1.ConditionMonitoring, metav1.ConditionFalse, appv1.ReasonResourceConflict)
	if got := getMonitor(t, children.ServiceMonitorResource, ns, "theirs"); got == nil || got.GetResourceVersion() != foreign.GetResourceVersion() {
		t.Errorf("the foreign ServiceMonitor was changed: %v", got)
	}
	expectOnlyRefusedCreates(t, ns, "servicemonitors", "theirs")
}
