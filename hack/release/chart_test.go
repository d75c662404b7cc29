package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
)

// root is the repository, from this module's directory.
const root = "../.."

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(filepath.Join(root, chartDir))
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// values parses YAML values as `helm install -f` reads them.
func values(t *testing.T, y string) map[string]any {
	t.Helper()
	v, err := common.ReadValues([]byte(y))
	if err != nil {
		t.Fatalf("values %q: %v", y, err)
	}
	return v
}

// render renders the chart as `helm install` installs it: with its CRD,
// unless namespaced, which docs/installing.md installs with --skip-crds.
func render(t *testing.T, ch *chart.Chart, namespace, vals string) []object {
	t.Helper()
	v := values(t, vals)
	objs, err := renderChart(ch, namespace, v, v["namespaced"] != true)
	if err != nil {
		t.Fatalf("rendering the chart with %q: %v", vals, err)
	}
	return objs
}

func build(t *testing.T, o overlay) []object {
	t.Helper()
	objs, err := o.buildObjects(root)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func index(t *testing.T, objs []object) map[string]object {
	t.Helper()
	m, err := byID(objs)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// namespaceObject is the one object of deploy/ the chart does not render:
// Helm stores the release in its namespace before it creates any object,
// so a chart cannot create the namespace it is installed into, and one
// installed with --create-namespace would then own the chart's Namespace
// already. docs/installing.md creates it, with the same label, first.
var namespaceObject = "Namespace.core " + systemNamespace

// compareToKustomize checks that the chart renders exactly the objects
// kustomize builds, field by field, apart from ignore.
func compareToKustomize(t *testing.T, want, got []object, ignore ...string) {
	t.Helper()
	w, g := index(t, want), index(t, got)
	for _, id := range ignore {
		if _, ok := w[id]; !ok {
			t.Errorf("kustomize builds no %s: nothing to ignore", id)
		}
		if _, ok := g[id]; ok {
			t.Errorf("the chart renders %s, which it must not", id)
		}
		delete(w, id)
	}
	for id, o := range w {
		other, ok := g[id]
		if !ok {
			t.Errorf("the chart does not render %s", id)
			continue
		}
		if d := cmp.Diff(o, other); d != "" {
			t.Errorf("%s differs (-kustomize +chart):\n%s", id, d)
		}
	}
	for id := range g {
		if _, ok := w[id]; !ok {
			t.Errorf("the chart renders %s, which kustomize does not build", id)
		}
	}
}

// TestChartMatchesKustomize renders the chart with the defaults and with
// each optional piece, and compares it object by object with the kustomize
// installation docs/installing.md gives for the same choice. Only the
// Namespace of deploy/ is left out (see namespaceObject); no label,
// annotation or field is ignored.
func TestChartMatchesKustomize(t *testing.T) {
	ch := loadChart(t)
	cluster := overlay{base: "deploy", namespace: systemNamespace}
	namespaced := overlay{base: "deploy/namespaced", namespace: "team-a"}
	with := func(o overlay, components ...string) overlay {
		o.components = components
		return o
	}
	for _, tc := range []struct {
		name      string
		values    string
		namespace string
		kustomize overlay
	}{
		{"defaults", "", systemNamespace, cluster},
		{"trackSecrets", "trackSecrets: true", systemNamespace, with(cluster, "deploy/track-secrets")},
		{"monitoring", "monitoring: {enabled: true}", systemNamespace, with(cluster, "deploy/components/monitoring")},
		{"metricsNetworkPolicy", "metricsNetworkPolicy: {enabled: true}", systemNamespace, with(cluster, "deploy/components/metrics-networkpolicy")},
		{"metricsCertManager", "metricsCertManager: {enabled: true}", systemNamespace, with(cluster, "deploy/components/metrics-cert-manager")},
		// With monitoring too, the ServiceMonitor verifies the certificate,
		// which the kustomization in the docs does with a patch: see
		// TestChartMatchesDocs.
		{"trackSecrets, monitoring and metricsNetworkPolicy", "{trackSecrets: true, monitoring: {enabled: true}, metricsNetworkPolicy: {enabled: true}}", systemNamespace,
			with(cluster, "deploy/track-secrets", "deploy/components/monitoring", "deploy/components/metrics-networkpolicy")},
		{"trackSecrets and metricsCertManager", "{trackSecrets: true, metricsCertManager: {enabled: true}}", systemNamespace,
			with(cluster, "deploy/track-secrets", "deploy/components/metrics-cert-manager")},
		{"namespaced", "namespaced: true", "team-a", namespaced},
		{"namespaced trackSecrets", "{namespaced: true, trackSecrets: true}", "team-a", with(namespaced, "deploy/namespaced/track-secrets")},
		{"namespaced trackSecrets and metricsCertManager", "{namespaced: true, trackSecrets: true, metricsCertManager: {enabled: true}}", "team-a",
			with(namespaced, "deploy/namespaced/track-secrets", "deploy/components/metrics-cert-manager")},
		{"namespaced monitoring and metricsNetworkPolicy", "{namespaced: true, monitoring: {enabled: true}, metricsNetworkPolicy: {enabled: true}}", "team-a",
			with(namespaced, "deploy/components/monitoring", "deploy/components/metrics-networkpolicy")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := build(t, tc.kustomize)
			got := render(t, ch, tc.namespace, tc.values)
			var ignore []string
			if tc.kustomize.base == "deploy" {
				ignore = append(ignore, namespaceObject)
			}
			compareToKustomize(t, want, got, ignore...)
		})
	}
}

// buildDocBlock builds the kustomization in the yaml block of page (a file
// of the repository) whose first line is first, as it stands there, next to
// a link named deployobject-controller to this repository, as the docs
// have it.
func buildDocBlock(t *testing.T, page, first string) []object {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, page))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(raw), "```yaml\n"+first+"\n")
	if !ok {
		t.Fatalf("%s has no yaml block beginning %q", page, first)
	}
	block, _, ok := strings.Cut(after, "\n```\n")
	if !ok {
		t.Fatalf("%s: the block beginning %q does not end", page, first)
	}
	dir := t.TempDir()
	repo, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(repo, filepath.Join(dir, "deployobject-controller")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(first+"\n"+block+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := kustomize(dir)
	if err != nil {
		t.Fatalf("kustomize build of %s's block %q: %v", page, first, err)
	}
	objs, err := objectsOf(m)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// TestChartMatchesDocs: the chart with metricsCertManager renders what the
// kustomizations of "Metrics certificate from cert-manager" in
// docs/operating.md build, as TestChartMatchesKustomize compares: with
// monitoring, a ServiceMonitor that verifies the certificate, as the docs'
// patch makes it; with issuerRef, the Certificate signed by that issuer and
// no CA of the chart's own, as the docs' patches have it.
func TestChartMatchesDocs(t *testing.T) {
	ch := loadChart(t)
	for _, tc := range []struct{ values, block string }{
		{"{monitoring: {enabled: true}, metricsCertManager: {enabled: true}}",
			"# kustomization.yaml: the metrics certificate, verified by the monitoring component's ServiceMonitor"},
		{"metricsCertManager: {enabled: true, issuerRef: {name: internal-ca, kind: ClusterIssuer}}",
			"# kustomization.yaml: the metrics certificate from your own issuer"},
	} {
		t.Run(tc.values, func(t *testing.T) {
			want := buildDocBlock(t, "docs/operating.md", tc.block)
			compareToKustomize(t, want, render(t, ch, systemNamespace, tc.values), namespaceObject)
		})
	}
}

// TestChartCRDIsTheGeneratedOne: the chart's crds/ holds the CRD of crd/
// (hack/update-codegen.sh copies it; make verify fails when it is stale).
func TestChartCRDIsTheGeneratedOne(t *testing.T) {
	ch := loadChart(t)
	crds := ch.CRDObjects()
	if len(crds) != 1 {
		t.Fatalf("the chart has %d CRDs, want 1", len(crds))
	}
	got, err := decodeObjects(crds[0].File.Data)
	if err != nil {
		t.Fatal(err)
	}
	want := build(t, overlay{base: "crd"})
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the chart's CRD differs from crd/ (-crd/ +chart); run hack/update-codegen.sh:\n%s", d)
	}
}

// TestChartVersionFollowsDeploy: the chart's appVersion is deploy/'s image
// tag, so that both installations of a working tree run the same image.
func TestChartVersionFollowsDeploy(t *testing.T) {
	ch := loadChart(t)
	objs := build(t, overlay{base: "deploy"})
	d := index(t, objs)["Deployment.apps "+systemNamespace+"/deployobject-controller"]
	if d == nil {
		t.Fatal("deploy/ has no Deployment deployobject-controller")
	}
	image := field(t, d, "spec", "template", "spec", "containers", 0, "image")
	if want := "deployobject-controller:" + ch.Metadata.AppVersion; image != want {
		t.Errorf("deploy/ runs %v, the chart %s by default", image, want)
	}
}

// field walks obj along path (map keys and list indexes).
func field(t *testing.T, obj any, path ...any) any {
	t.Helper()
	cur := obj
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				t.Fatalf("%v: not a mapping at %q", path, k)
			}
			cur = m[k]
		case int:
			l, ok := cur.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("%v: no item %d", path, k)
			}
			cur = l[k]
		}
	}
	return cur
}

// deployment is the rendered controller Deployment.
func deployment(t *testing.T, objs []object) object {
	t.Helper()
	for _, o := range objs {
		if o["kind"] == "Deployment" {
			return o
		}
	}
	t.Fatal("no Deployment rendered")
	return nil
}

func args(t *testing.T, objs []object) []string {
	t.Helper()
	var out []string
	for _, a := range field(t, deployment(t, objs), "spec", "template", "spec", "containers", 0, "args").([]any) {
		out = append(out, a.(string))
	}
	return out
}

func ids(objs []object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, objectID(o))
	}
	slices.Sort(out)
	return out
}

// TestChartValues: each value renders what it says, beyond the pieces
// TestChartMatchesKustomize compares.
func TestChartValues(t *testing.T) {
	ch := loadChart(t)
	defaults := render(t, ch, systemNamespace, "")
	for _, tc := range []struct {
		name   string
		values string
		check  func(t *testing.T, objs []object)
	}{
		{"image tag", "image: {repository: registry.invalid/team/deployobject-controller, tag: v1.2.3}", func(t *testing.T, objs []object) {
			assertEqual(t, "image", field(t, deployment(t, objs), "spec", "template", "spec", "containers", 0, "image"), "registry.invalid/team/deployobject-controller:v1.2.3")
		}},
		{"image digest alone", "image: {digest: 'sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'}", func(t *testing.T, objs []object) {
			assertEqual(t, "image", field(t, deployment(t, objs), "spec", "template", "spec", "containers", 0, "image"),
				"deployobject-controller@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
		}},
		{"image tag and digest", "image: {tag: v1, digest: 'sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', pullPolicy: Always}", func(t *testing.T, objs []object) {
			c := field(t, deployment(t, objs), "spec", "template", "spec", "containers", 0)
			assertEqual(t, "image", field(t, c, "image"), "deployobject-controller:v1@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
			assertEqual(t, "imagePullPolicy", field(t, c, "imagePullPolicy"), "Always")
		}},
		{"imagePullSecrets", "imagePullSecrets: [{name: registry}]", func(t *testing.T, objs []object) {
			assertEqual(t, "imagePullSecrets", field(t, deployment(t, objs), "spec", "template", "spec", "imagePullSecrets", 0, "name"), "registry")
		}},
		// Helm merges values into the defaults: a key is removed with null.
		{"replicas and resources", "{replicas: 3, resources: {requests: {cpu: 1, memory: null}, limits: {memory: 512Mi}}}", func(t *testing.T, objs []object) {
			d := deployment(t, objs)
			assertEqual(t, "replicas", field(t, d, "spec", "replicas"), float64(3))
			assertEqual(t, "resources", field(t, d, "spec", "template", "spec", "containers", 0, "resources"),
				map[string]any{"requests": map[string]any{"cpu": float64(1)}, "limits": map[string]any{"memory": "512Mi"}})
		}},
		{"no resources", "resources: null", func(t *testing.T, objs []object) {
			if r := field(t, deployment(t, objs), "spec", "template", "spec", "containers", 0, "resources"); r != nil {
				t.Errorf("resources %v, want none", r)
			}
		}},
		{"controller flags", `controller: {workers: 32, kubeAPIQPS: 50.5, kubeAPIBurst: 1000000, resyncPeriod: 0s, maxConcurrentConfigRollouts: 0,
			podSecurityProfile: restricted, loggingFormat: json, verbosity: 2, kubeAPIContentType: application/json, childEventBatchPeriod: 2s,
			cacheSyncTimeout: 5m, shutdownGracePeriod: 20s, configRolloutDelay: 1s, configMissingGracePeriod: 30s}`, func(t *testing.T, objs []object) {
			got := args(t, objs)
			for _, want := range []string{"--workers=32", "--kube-api-qps=50.5", "--kube-api-burst=1000000", "--resync-period=0s",
				"--max-concurrent-config-rollouts=0", "--pod-security-profile=restricted", "--logging-format=json", "-v=2",
				"--kube-api-content-type=application/json", "--child-event-batch-period=2s", "--cache-sync-timeout=5m",
				"--shutdown-grace-period=20s", "--config-rollout-delay=1s", "--config-missing-grace-period=30s"} {
				if !slices.Contains(got, want) {
					t.Errorf("args %q lack %s", got, want)
				}
			}
			if n := len(got) - len(args(t, defaults)); n != 14 {
				t.Errorf("%d args added, want the 14 flags set: %q", n, got)
			}
		}},
		// helm install --set passes a decimal as a string.
		{"kubeAPIQPS as a string", `controller: {kubeAPIQPS: "20.5"}`, func(t *testing.T, objs []object) {
			if !slices.Contains(args(t, objs), "--kube-api-qps=20.5") {
				t.Errorf("args %q lack --kube-api-qps=20.5", args(t, objs))
			}
		}},
		{"extraArgs come last", "{trackSecrets: true, controller: {workers: 4}, extraArgs: [--profiling, --metrics-cert-path=/certs]}", func(t *testing.T, objs []object) {
			got := args(t, objs)
			if !slices.Equal(got[len(got)-4:], []string{"--track-secrets", "--workers=4", "--profiling", "--metrics-cert-path=/certs"}) {
				t.Errorf("args %q", got)
			}
		}},
		{"leader election timings", "leaderElection: {leaseDuration: 30s, renewDeadline: 20s, retryPeriod: 4s}", func(t *testing.T, objs []object) {
			got := args(t, objs)
			for _, want := range []string{"--leader-elect=true", "--leader-elect-lease-duration=30s", "--leader-elect-renew-deadline=20s", "--leader-elect-retry-period=4s"} {
				if !slices.Contains(got, want) {
					t.Errorf("args %q lack %s", got, want)
				}
			}
		}},
		{"without leader election", "{replicas: 1, leaderElection: {enabled: false}}", func(t *testing.T, objs []object) {
			if !slices.Contains(args(t, objs), "--leader-elect=false") {
				t.Errorf("args %q lack --leader-elect=false", args(t, objs))
			}
			for _, id := range ids(objs) {
				if strings.Contains(id, "leader-election") {
					t.Errorf("%s rendered without leader election", id)
				}
			}
		}},
		{"podDisruptionBudget", "podDisruptionBudget: {maxUnavailable: 50%}", func(t *testing.T, objs []object) {
			pdb := index(t, objs)["PodDisruptionBudget.policy "+systemNamespace+"/deployobject-controller"]
			if pdb == nil {
				t.Fatal("no PodDisruptionBudget")
			}
			assertEqual(t, "maxUnavailable", field(t, pdb, "spec", "maxUnavailable"), "50%")
		}},
		{"no podDisruptionBudget", "podDisruptionBudget: {enabled: false}", func(t *testing.T, objs []object) {
			assertEqual(t, "objects", ids(objs), without(ids(defaults), "PodDisruptionBudget.policy "+systemNamespace+"/deployobject-controller"))
		}},
		{"scheduling", `{nodeSelector: {kubernetes.io/os: linux}, tolerations: [{key: dedicated, operator: Exists}],
			affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: In, values: [system]}]}]}}},
			topologySpreadConstraints: [], priorityClassName: system-cluster-critical, terminationGracePeriodSeconds: 60}`, func(t *testing.T, objs []object) {
			spec := field(t, deployment(t, objs), "spec", "template", "spec")
			assertEqual(t, "nodeSelector", field(t, spec, "nodeSelector"), map[string]any{"kubernetes.io/os": "linux"})
			assertEqual(t, "tolerations", field(t, spec, "tolerations"), []any{map[string]any{"key": "dedicated", "operator": "Exists"}})
			assertEqual(t, "affinity key", field(t, spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", 0, "matchExpressions", 0, "key"), "pool")
			assertEqual(t, "topologySpreadConstraints", field(t, spec, "topologySpreadConstraints"), nil)
			assertEqual(t, "priorityClassName", field(t, spec, "priorityClassName"), "system-cluster-critical")
			assertEqual(t, "terminationGracePeriodSeconds", field(t, spec, "terminationGracePeriodSeconds"), float64(60))
		}},
		{"pod labels and annotations", "{podLabels: {team: a, app.kubernetes.io/name: other}, podAnnotations: {note: x, prometheus.io/port: '9'}}", func(t *testing.T, objs []object) {
			meta := field(t, deployment(t, objs), "spec", "template", "metadata")
			assertEqual(t, "labels", field(t, meta, "labels"), map[string]any{"team": "a", "app.kubernetes.io/name": "deployobject-controller"})
			assertEqual(t, "annotations", field(t, meta, "annotations"), map[string]any{
				"note": "x", "prometheus.io/port": "8443", "prometheus.io/scheme": "https", "prometheus.io/scrape": "true"})
		}},
		{"no user roles", "userRoles: false", func(t *testing.T, objs []object) {
			assertEqual(t, "objects", ids(objs), without(ids(defaults), "ClusterRole.rbac.authorization.k8s.io deployobject-editor", "ClusterRole.rbac.authorization.k8s.io deployobject-viewer"))
		}},
		{"monitoring labels and runbook links", "monitoring: {enabled: true, labels: {release: kube-prometheus-stack}, runbookURL: 'https://git.invalid/docs/monitoring.md'}", func(t *testing.T, objs []object) {
			m := index(t, objs)
			for _, id := range []string{"ServiceMonitor.monitoring.coreos.com " + systemNamespace + "/deployobject-controller", "PrometheusRule.monitoring.coreos.com " + systemNamespace + "/deployobject-controller"} {
				if m[id] == nil {
					t.Fatalf("no %s", id)
				}
				assertEqual(t, id+" labels", field(t, m[id], "metadata", "labels"), map[string]any{"release": "kube-prometheus-stack", "app.kubernetes.io/name": "deployobject-controller"})
			}
			rules := 0
			for _, g := range field(t, m["PrometheusRule.monitoring.coreos.com "+systemNamespace+"/deployobject-controller"], "spec", "groups").([]any) {
				for _, r := range field(t, g, "rules").([]any) {
					url, _ := field(t, r, "annotations", "runbook_url").(string)
					if !strings.HasPrefix(url, "https://git.invalid/docs/monitoring.md#deployobject") {
						t.Errorf("runbook_url %q", url)
					}
					rules++
				}
			}
			if rules == 0 {
				t.Error("no alerts")
			}
		}},
		{"metricsCertManager with an issuer of one's own", "metricsCertManager: {enabled: true, issuerRef: {name: team-ca}}", func(t *testing.T, objs []object) {
			const cert = "Certificate.cert-manager.io " + systemNamespace + "/deployobject-controller-metrics"
			c := index(t, objs)[cert]
			if c == nil {
				t.Fatalf("no %s", cert)
			}
			assertEqual(t, "issuerRef", field(t, c, "spec", "issuerRef"), map[string]any{"name": "team-ca", "kind": "Issuer", "group": "cert-manager.io"})
			// No CA of the chart's own: the serving Certificate is the one
			// object added.
			assertEqual(t, "objects", without(ids(objs), cert), ids(defaults))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, render(t, ch, systemNamespace, tc.values))
		})
	}
}

func without(list []string, drop ...string) []string {
	var out []string
	for _, s := range list {
		if !slices.Contains(drop, s) {
			out = append(out, s)
		}
	}
	if len(out) != len(list)-len(drop) {
		panic("without: not every dropped item was in the list")
	}
	return out
}

func assertEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s (-want +got):\n%s", what, d)
	}
}

// TestChartRefusesValues: what cannot work is refused at install, by the
// schema or the templates, before anything reaches the cluster.
func TestChartRefusesValues(t *testing.T) {
	ch := loadChart(t)
	for _, tc := range []struct {
		values, want string
	}{
		{"replicas: 2\nleaderElection: {enabled: false}", "replicas above 1 need leaderElection.enabled"},
		{"replicas: 0", "replicas"},
		{"image: {tag: null}", "tag"},
		{"image: {digest: latest}", "digest"},
		{"image: {pullPolicy: Sometimes}", "pullPolicy"},
		{"controller: {workers: 0}", "workers"},
		{"controller: {workers: 1.5}", "workers"},
		{"controller: {resyncPeriod: 10}", "resyncPeriod"},
		{"controller: {resyncPeriod: ten minutes}", "resyncPeriod"},
		{"controller: {podSecurityProfile: baseline}", "podSecurityProfile"},
		{"controller: {loggingFormat: xml}", "loggingFormat"},
		{"controller: {threads: 4}", "threads"},
		{"controller: {kubeAPIQPS: fast}", "kubeAPIQPS"},
		{"controller: {kubeAPIQPS: 0}", "kubeAPIQPS"},
		{"extraArgs: [4]", "extraArgs"},
		{"trackSecret: true", "trackSecret"},
		{"monitoring: {enable: true}", "enable"},
		{"podDisruptionBudget: {maxUnavailable: -1}", "maxUnavailable"},
		{"leaderElection: {leaseDuration: 15}", "leaseDuration"},
		{"metricsCertManager: {enabled: true, issuerRef: {kind: ClusterIssuer}}", "set issuerRef.name"},
		{"metricsCertManager: {enabled: true, issuerRef: {name: team-ca, kind: ''}}", "kind"},
		{"metricsCertManager: {issuerRef: {name: team-ca, namespace: cert-manager}}", "namespace"},
		{"metricsCertManager: {enable: true}", "enable"},
	} {
		t.Run(tc.values, func(t *testing.T) {
			_, err := renderChart(ch, systemNamespace, values(t, tc.values), true)
			if err == nil {
				t.Fatalf("rendered")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not name %s", err, tc.want)
			}
		})
	}
}
