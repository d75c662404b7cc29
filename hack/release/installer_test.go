package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
)

func TestParseImage(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		in   string
		want imageRef
		err  bool
	}{
		{in: "deployobject-controller:dev", want: imageRef{repository: "deployobject-controller", tag: "dev"}},
		{in: "registry.invalid:5000/team/deployobject-controller:v1.2.3", want: imageRef{repository: "registry.invalid:5000/team/deployobject-controller", tag: "v1.2.3"}},
		{in: "registry.invalid/deployobject-controller@" + digest, want: imageRef{repository: "registry.invalid/deployobject-controller", digest: digest}},
		{in: "deployobject-controller:v1@" + digest, want: imageRef{repository: "deployobject-controller", tag: "v1", digest: digest}},
		{in: "registry.invalid:5000/deployobject-controller", err: true},
		{in: "deployobject-controller@latest", err: true},
		{in: ":v1", err: true},
	} {
		got, err := parseImage(tc.in)
		if tc.err {
			if err == nil {
				t.Errorf("parseImage(%q) = %+v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parseImage(%q) = %+v, %v, want %+v", tc.in, got, err, tc.want)
		}
		if got.String() != tc.in {
			t.Errorf("%q prints as %q", tc.in, got.String())
		}
	}
}

func TestChartVersion(t *testing.T) {
	for in, want := range map[string]string{
		"v0.1.0":                  "0.1.0",
		"v1.2.3-rc.1":             "1.2.3-rc.1",
		"v0.1.0-5-gc597fef":       "0.1.0-5-gc597fef",
		"v0.1.0-5-gc597fef-dirty": "0.1.0-5-gc597fef-dirty",
		"c597fef":                 "0.0.0-git-c597fef",
		"0123456-dirty":           "0.0.0-git-0123456-dirty",
		"dev":                     "0.0.0-git-dev",
	} {
		if got, err := chartVersion(in); err != nil || got != want {
			t.Errorf("chartVersion(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
	if v, err := chartVersion("v1/2"); err == nil {
		t.Errorf("chartVersion(v1/2) = %q, want an error", v)
	}
}

const testImage = "registry.invalid/team/deployobject-controller:v9.9.9"

// writeDist writes the installer as `make build-installer` does, for
// testImage, into a temporary directory.
func writeDist(t *testing.T) string {
	t.Helper()
	out := t.TempDir()
	if err := writeInstaller(root, out, testImage, "v9.9.9"); err != nil {
		t.Fatal(err)
	}
	return out
}

func readDist(t *testing.T, dir, file string) []object {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	if head := "# deployobject-controller v9.9.9: " + file + "\n"; !strings.HasPrefix(string(data), head) {
		t.Errorf("%s does not start with %q", file, head)
	}
	objs, err := decodeObjects(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return objs
}

// withImage is objs with the controller's image set to image, as
// `kustomize edit set image` sets it.
func withImage(t *testing.T, objs []object, image string) []object {
	t.Helper()
	set := 0
	for _, o := range objs {
		if o["kind"] != "Deployment" {
			continue
		}
		c := field(t, o, "spec", "template", "spec", "containers", 0).(map[string]any)
		c["image"] = image
		set++
	}
	if set != 1 {
		t.Fatalf("%d Deployments, want 1", set)
	}
	return objs
}

// TestInstaller: each file of dist/ is the kustomize build docs/installing.md
// names for it, with the image of IMG; the files of the additive
// components, applied with install.yaml, make the build of deploy/ with
// those components.
func TestInstaller(t *testing.T) {
	dist := writeDist(t)
	cluster := overlay{base: "deploy", namespace: systemNamespace}
	namespaced := overlay{base: "deploy/namespaced"}
	with := func(o overlay, components ...string) overlay {
		o.components = components
		return o
	}
	for _, tc := range []struct {
		file string
		want overlay
	}{
		{"crd.yaml", overlay{base: "crd"}},
		{"install.yaml", cluster},
		{"install-track-secrets.yaml", with(cluster, "deploy/track-secrets")},
		{"namespaced-install.yaml", namespaced},
		{"namespaced-install-track-secrets.yaml", with(namespaced, "deploy/namespaced/track-secrets")},
	} {
		t.Run(tc.file, func(t *testing.T) {
			want := build(t, tc.want)
			if tc.want.base != "crd" {
				want = withImage(t, want, testImage)
			}
			if d := cmp.Diff(want, readDist(t, dist, tc.file)); d != "" {
				t.Errorf("%s differs from the kustomize build (-kustomize +file):\n%s", tc.file, d)
			}
		})
	}

	t.Run("namespaced-install.yaml names no namespace", func(t *testing.T) {
		for _, o := range readDist(t, dist, "namespaced-install.yaml") {
			if ns := field(t, o, "metadata", "namespace"); ns != nil {
				t.Errorf("%s names namespace %v: `kubectl apply -n` would refuse it elsewhere", objectID(o), ns)
			}
		}
	})

	t.Run("additive components", func(t *testing.T) {
		all := readDist(t, dist, "install.yaml")
		for file, kinds := range map[string][]string{
			"monitoring.yaml":            {"ClusterRoleBinding", "ConfigMap", "PrometheusRule", "Secret", "Service", "ServiceAccount", "ServiceMonitor"},
			"metrics-networkpolicy.yaml": {"NetworkPolicy"},
		} {
			objs := readDist(t, dist, file)
			var got []string
			for _, o := range objs {
				got = append(got, o["kind"].(string))
			}
			slices.Sort(got)
			if !slices.Equal(got, kinds) {
				t.Errorf("%s holds %v, want %v", file, got, kinds)
			}
			all = append(all, objs...)
		}
		want := withImage(t, build(t, with(cluster, "deploy/components/monitoring", "deploy/components/metrics-networkpolicy")), testImage)
		if d := cmp.Diff(index(t, want), index(t, all)); d != "" {
			t.Errorf("install.yaml, monitoring.yaml and metrics-networkpolicy.yaml differ from deploy/ with both components (-kustomize +files):\n%s", d)
		}
	})
}

// TestAdditionsRefusesPatches: a component that changes an object of the
// installation cannot be shipped as the objects it adds.
func TestAdditionsRefusesPatches(t *testing.T) {
	for _, component := range []string{"deploy/track-secrets", "deploy/components/metrics-cert-manager"} {
		_, err := additions(root, overlay{base: "deploy", namespace: systemNamespace}, component)
		if err == nil || !strings.Contains(err.Error(), "changes Deployment") {
			t.Errorf("additions of %s: %v, want a refusal naming the Deployment", component, err)
		}
	}
}

// TestPackagedChart: the package `make build-chart` writes carries the
// release's version and, by default, installs what install.yaml does
// (less the Namespace, see namespaceObject).
func TestPackagedChart(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		image, version, chartVersion string
	}{
		{testImage, "v9.9.9", "9.9.9"},
		{"registry.invalid/deployobject-controller@" + digest, "c597fef-dirty", "0.0.0-git-c597fef-dirty"},
		{"deployobject-controller:v1@" + digest, "v1", "0.0.0-git-v1"},
	} {
		t.Run(tc.image, func(t *testing.T) {
			path, err := packageChart(root, t.TempDir(), tc.image, tc.version)
			if err != nil {
				t.Fatal(err)
			}
			if want := "deployobject-controller-" + tc.chartVersion + ".tgz"; filepath.Base(path) != want {
				t.Errorf("package %s, want %s", filepath.Base(path), want)
			}
			ch, err := loader.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if ch.Metadata.Version != tc.chartVersion || ch.Metadata.AppVersion != tc.version {
				t.Errorf("version %q, appVersion %q; want %q, %q", ch.Metadata.Version, ch.Metadata.AppVersion, tc.chartVersion, tc.version)
			}
			src, err := os.ReadFile(filepath.Join(root, chartDir, "values.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range ch.Raw {
				if f.Name != "values.yaml" {
					continue
				}
				// Only the image's lines change: comments and layout stay.
				a, b := strings.Split(string(src), "\n"), strings.Split(string(f.Data), "\n")
				if len(a) != len(b) {
					t.Fatalf("the packaged values.yaml has %d lines, the chart's %d", len(b), len(a))
				}
				for i := range a {
					if a[i] != b[i] && !strings.HasPrefix(strings.TrimSpace(a[i]), "repository:") && !strings.HasPrefix(strings.TrimSpace(a[i]), "tag:") && !strings.HasPrefix(strings.TrimSpace(a[i]), "digest:") {
						t.Errorf("values.yaml line %d changed: %q -> %q", i+1, a[i], b[i])
					}
				}
			}
			want := withImage(t, build(t, overlay{base: "deploy", namespace: systemNamespace}), tc.image)
			compareToKustomize(t, want, render(t, ch, systemNamespace, ""), namespaceObject)
		})
	}
}
