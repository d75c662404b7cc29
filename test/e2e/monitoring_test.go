//go:build e2e

package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

const (
	// monitoringComponent is the kustomize component of the ServiceMonitor,
	// the alerts and the dashboard.
	monitoringComponent = "deploy/components/monitoring"
	// metricNamesFixture lists the series names and label names the
	// controller exports; test/monitoring checks the alerts and the
	// dashboard against it.
	metricNamesFixture = monitoringComponent + "/testdata/metric-names.txt"
	metricNamesHeader  = "# Captured by TestMonitoringMetricNames (test/e2e) with E2E_UPDATE_FIXTURES=1; do not edit.\n" +
		"# One series name a line, with the label names its series carry.\n"
)

// TestMonitoringMetricNames scrapes a controller that has reconciled a
// DeployObject, the way the monitoring component's ServiceMonitor does
// (HTTPS, with the token kube-controller-manager puts in the component's
// Secret for its scraper ServiceAccount, which its ClusterRoleBinding lets
// read /metrics), and checks that every series name
// of the committed fixture is still exported, with at least the fixture's
// label names. With E2E_UPDATE_FIXTURES=1 it writes the fixture instead.
func TestMonitoringMetricNames(t *testing.T) {
	applyDeploy(t)
	ns := newNamespace(t)
	applyMonitoringComponent(t, ns)
	user := "system:serviceaccount:" + ns + ":deployobject-metrics-scraper"
	eventually(t, timeout, user+" may get /metrics", func() (bool, string, error) {
		out, _ := kubectl("auth", "can-i", "get", "/metrics", "--as="+user)
		return strings.HasSuffix(strings.TrimSpace(out), "yes"), out, nil
	})
	token := scraperToken(t, ns)

	withoutSharedController(t)
	p, err := startController("monitoring", "--metrics-secure=true", "--namespace="+ns,
		"--leader-elect=true", "--leader-elect-resource-namespace="+ns)
	if err != nil {
		t.Fatal(err)
	}
	defer p.stopLogged(t, syscall.SIGKILL, 5*time.Second)
	create(t, newDO(ns, "web"))
	waitReady(t, ns, "web")

	resp, err := p.getMetrics("/metrics", token)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET /metrics with the scraper's token = %s, want 200 OK: the component's RBAC does not let it scrape\n%.300s", resp.Status, body)
	}
	exported, err := seriesLabelNames(resp.Body)
	if err != nil {
		t.Fatal(err)
	}

	path := filepath.Join(env.repoRoot, metricNamesFixture)
	if os.Getenv("E2E_UPDATE_FIXTURES") == "1" {
		var b strings.Builder
		b.WriteString(metricNamesHeader)
		for _, name := range slices.Sorted(maps.Keys(exported)) {
			b.WriteString(strings.TrimSpace(name + " " + strings.Join(slices.Sorted(maps.Keys(exported[name])), ",")))
			b.WriteByte('\n')
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the fixture (write it with E2E_UPDATE_FIXTURES=1): %v", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, labels, _ := strings.Cut(line, " ")
		got, ok := exported[name]
		if !ok {
			t.Errorf("the fixture %s lists %s, which the controller no longer exports: refresh it with E2E_UPDATE_FIXTURES=1 and fix the alerts and dashboard that use it", metricNamesFixture, name)
			continue
		}
		for _, l := range strings.Split(labels, ",") {
			if l != "" && !got[l] {
				t.Errorf("the fixture %s gives %s the label %s, which its series no longer carry (they have %v)", metricNamesFixture, name, l, slices.Sorted(maps.Keys(got)))
			}
		}
	}
}

// applyMonitoringComponent installs the monitoring component into ns, as a
// kustomization with `namespace: ns` and the component would, without the
// ServiceMonitor and PrometheusRule, whose CRDs (the Prometheus Operator's)
// the test cluster lacks.
func applyMonitoringComponent(t *testing.T, ns string) {
	t.Helper()
	dir := t.TempDir()
	rel, err := filepath.Rel(dir, filepath.Join(env.repoRoot, monitoringComponent))
	if err != nil {
		t.Fatal(err)
	}
	kustomization := fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: %s\ncomponents: [%s]\n", ns, rel)
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kustomization), 0o644); err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, u := range kustomizeBuild(t, dir) {
		switch u.GetKind() {
		case "ServiceMonitor", "PrometheusRule":
			continue
		case "ClusterRoleBinding":
			name := u.GetName()
			t.Cleanup(func() { _, _ = kubectl("delete", "clusterrolebinding", name, "--ignore-not-found") })
		}
		js, err := u.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(js))
	}
	if out, err := kubectlStdin(strings.Join(docs, "\n---\n"), "apply", "--server-side", "-f", "-"); err != nil {
		t.Fatalf("applying %s: %v\n%s", monitoringComponent, err, out)
	}
}

// scraperToken waits for kube-controller-manager's token controller to fill
// in the token of the component's scraper Secret, the credentials the
// ServiceMonitor sends, and returns it.
func scraperToken(t *testing.T, ns string) string {
	t.Helper()
	var token string
	eventually(t, timeout, "the token of the Secret deployobject-metrics-scraper-token", func() (bool, string, error) {
		s, err := env.kube.CoreV1().Secrets(ns).Get(ctx, "deployobject-metrics-scraper-token", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		token = string(s.Data["token"])
		return token != "", fmt.Sprintf("keys %v", slices.Sorted(maps.Keys(s.Data))), nil
	})
	return token
}

// kustomizeBuild returns the objects `kubectl kustomize dir` builds.
func kustomizeBuild(t *testing.T, dir string) []unstructured.Unstructured {
	t.Helper()
	out, err := kubectl("kustomize", dir)
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, out)
	}
	var objs []unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(out), 4096)
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return objs
		} else if err != nil {
			t.Fatalf("decoding the output of kubectl kustomize %s: %v", dir, err)
		}
		objs = append(objs, u)
	}
}

// seriesLabelNames reads the text exposition format and returns each series
// name (histograms and summaries as their _bucket, _sum and _count series)
// with the label names its samples carry.
func seriesLabelNames(r io.Reader) (map[string]map[string]bool, error) {
	out := map[string]map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.IndexAny(line, "{ ")
		if i <= 0 {
			return nil, fmt.Errorf("metrics line %q: no name", line)
		}
		name := line[:i]
		if out[name] == nil {
			out[name] = map[string]bool{}
		}
		if line[i] != '{' {
			continue
		}
		rest := line[i+1:]
		for !strings.HasPrefix(rest, "}") {
			label, value, ok := strings.Cut(rest, `="`)
			if !ok {
				return nil, fmt.Errorf("metrics line %q: a label without a value", line)
			}
			out[name][label] = true
			end := closingQuote(value)
			if end < 0 {
				return nil, fmt.Errorf("metrics line %q: an unterminated label value", line)
			}
			rest = strings.TrimPrefix(value[end+1:], ",")
		}
	}
	return out, sc.Err()
}

// closingQuote is the index of the quote that ends the label value s
// begins, past escaped quotes and backslashes, or -1.
func closingQuote(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}
