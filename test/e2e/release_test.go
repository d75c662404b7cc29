//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// TestReleaseArtifacts installs the controller as docs/installing.md tells
// an operator to, from the release artifacts: dist/install.yaml with
// kubectl, then the Helm chart with the helm CLI. Each time it runs the
// controller binary in-cluster (startInCluster) as the installed
// ServiceAccount, with exactly the installed RBAC and the installed
// Deployment's flags, and reconciles the examples.
//
// Both install deploy/'s objects, under deploy/'s names, into
// deployobject-system, which other tests use too: the test is not parallel,
// so it runs alone; it stops the shared controller, removes each
// installation but for the CRD and the Namespace (which every DeployObject
// and the shared controller's ServiceAccount live on) before the next one,
// and applies deploy/ again at the end. hack/e2e.sh builds dist/ and the
// helm CLI and names them in E2E_DIST and E2E_HELM.
func TestReleaseArtifacts(t *testing.T) {
	if os.Geteuid() != 0 {
		skipOutsideCI(t, "needs root for a private mount namespace (unshare -m); CI runs as root")
	}
	dist, helm := os.Getenv("E2E_DIST"), os.Getenv("E2E_HELM")
	if dist == "" || helm == "" {
		skipOutsideCI(t, "E2E_DIST and E2E_HELM are not set: hack/e2e.sh builds dist/ and the helm CLI and sets them")
	}
	withoutSharedController(t)
	// Registered after withoutSharedController, so that it runs before the
	// shared controller restarts: its ServiceAccount is bound to deploy/'s
	// ClusterRoles. Forced, in case a failed uninstall left fields that
	// Helm manages.
	t.Cleanup(func() {
		if out, err := kubectl("apply", "--server-side", "--force-conflicts", "-k", filepath.Join(env.repoRoot, "deploy")); err != nil {
			t.Errorf("applying deploy/ again: %v\n%s", err, out)
		}
	})

	t.Run("install-yaml", func(t *testing.T) {
		file := filepath.Join(dist, "install.yaml")
		want := distImage(t, file)
		rest := withoutKinds(t, file, "CustomResourceDefinition", "Namespace")
		if out, err := kubectl("apply", "--server-side", "-f", file); err != nil {
			t.Fatalf("kubectl apply --server-side -f %s: %v\n%s", file, err, out)
		}
		// Removed, but for the CRD and the Namespace, before the chart
		// installs the same objects, also when a check below fails.
		t.Cleanup(func() {
			if out, err := kubectlStdin(rest, "delete", "--wait", "--ignore-not-found", "-f", "-"); err != nil {
				t.Errorf("kubectl delete install.yaml but its CRD and Namespace: %v\n%s", err, out)
			}
		})
		// Every object of the file is there: kubectl get fails on the
		// first that is not.
		if out, err := kubectl("get", "-f", file, "-o", "name"); err != nil {
			t.Fatalf("kubectl get -f %s: %v\n%s", file, err, out)
		}
		if got, _ := kubectl("-n", systemNamespace, "get", "deployment/deployobject-controller", "-o", "jsonpath={.spec.template.spec.containers[0].image}"); got != want {
			t.Errorf("the installed Deployment runs %q, install.yaml names %q", got, want)
		}
		reconcileAsInstalled(t, "install-yaml")
	})

	t.Run("helm-chart", func(t *testing.T) {
		chart := filepath.Join(env.repoRoot, "charts", "deployobject-controller")
		home := t.TempDir()
		helmRun := func(args ...string) (string, error) {
			cmd := exec.Command(helm, append(args, "--kubeconfig", env.kubeconfig)...)
			// Helm's own configuration, cache and data stay in the test's
			// directory.
			cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+filepath.Join(home, "config"),
				"HELM_CACHE_HOME="+filepath.Join(home, "cache"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
			out, err := cmd.CombinedOutput()
			return string(out), err
		}
		// As docs/installing.md installs it: into the existing namespace,
		// labelled for Pod Security restricted by install.yaml, whose CRD
		// is there already (Helm skips crds/ then).
		if out, err := helmRun("install", "deployobject-controller", chart, "--namespace", systemNamespace); err != nil {
			t.Fatalf("helm install: %v\n%s", err, out)
		}
		uninstalled := false
		defer func() {
			if !uninstalled {
				if out, err := helmRun("uninstall", "deployobject-controller", "--namespace", systemNamespace); err != nil {
					t.Errorf("helm uninstall: %v\n%s", err, out)
				}
			}
		}()
		manifest, err := helmRun("get", "manifest", "deployobject-controller", "--namespace", systemNamespace)
		if err != nil {
			t.Fatalf("helm get manifest: %v\n%s", err, manifest)
		}
		if out, err := kubectlStdin(manifest, "get", "-f", "-", "-o", "name"); err != nil {
			t.Fatalf("the release's objects: %v\n%s", err, out)
		}
		// Helm made them: they were removed above, and it marks its own.
		owner, _ := kubectl("get", "clusterrole/deployobject-controller", "-o", `jsonpath={.metadata.annotations.meta\.helm\.sh/release-name}`)
		if owner != "deployobject-controller" {
			t.Errorf("ClusterRole deployobject-controller belongs to release %q, want deployobject-controller", owner)
		}
		reconcileAsInstalled(t, "helm-chart")

		uninstalled = true
		if out, err := helmRun("uninstall", "deployobject-controller", "--namespace", systemNamespace, "--wait"); err != nil {
			t.Fatalf("helm uninstall: %v\n%s", err, out)
		}
		eventually(t, timeout, "helm uninstall to remove the release's objects", func() (bool, string, error) {
			out, _ := kubectlStdin(manifest, "get", "-f", "-", "-o", "name", "--ignore-not-found")
			return strings.TrimSpace(out) == "", out, nil
		})
		// Helm never deletes what crds/ installed: the DeployObjects stay.
		if _, err := env.kube.Discovery().ServerResourcesForGroupVersion("app.deployobject.dev/v1"); err != nil {
			t.Errorf("the CRD is gone after helm uninstall: %v", err)
		}
		if _, err := env.kube.CoreV1().Namespaces().Get(ctx, systemNamespace, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			t.Errorf("helm uninstall deleted the namespace %s, which the chart does not own", systemNamespace)
		}
	})
}

// reconcileAsInstalled waits for the installed Deployment in
// deployobject-system to roll out (its pods admitted under Pod Security
// restricted), then runs the controller in-cluster as the installed
// ServiceAccount with the Deployment's flags: it must lead, bring the
// examples to Ready without an RBAC denial, and release its Lease on
// SIGTERM.
func reconcileAsInstalled(t *testing.T, name string) {
	t.Helper()
	// Rolled out: every replica of the installed revision is available.
	if out, err := kubectl("-n", systemNamespace, "rollout", "status", "deployment/deployobject-controller", "--timeout=60s"); err != nil {
		t.Fatalf("the installed Deployment did not roll out: %v\n%s", err, out)
	}
	args := installedArgs(t, systemNamespace)
	if !slices.Contains(args, "--metrics-secure=true") || !slices.Contains(args, "--leader-elect=true") {
		t.Fatalf("the installed Deployment's args %q lack --metrics-secure=true and --leader-elect=true", args)
	}
	ns := newNamespace(t)
	scraper := metricsToken(t, ns, "scraper", true)
	p := startInCluster(t, name, systemNamespace, "deployobject-controller", args...)
	p.metricsToken = scraper
	defer func() {
		_ = p.stop(syscall.SIGKILL, 5*time.Second)
		if t.Failed() {
			t.Logf("--- %s controller log:\n%s", name, p.logTail(60))
		}
	}()
	eventually(t, timeout, "the controller to lead", func() (bool, string, error) {
		v, err := p.metric("deployobject_controller_leader")
		return v == 1, fmt.Sprint(v), err
	})
	if out, err := kubectl("-n", ns, "apply", "-f", filepath.Join(env.repoRoot, "example")); err != nil {
		t.Fatalf("kubectl apply -f example/: %v\n%s", err, out)
	}
	waitReady(t, ns, "hello")
	waitReady(t, ns, "web")
	if p.deniedTo(serviceAccount) {
		t.Errorf("the controller was denied under the installed RBAC:\n%s", p.logTail(40))
	}
	if err := p.stop(syscall.SIGTERM, 30*time.Second); err != nil {
		t.Errorf("SIGTERM: the controller did not exit cleanly: %v", err)
	}
	leaseReleased(t, systemNamespace, "a clean shutdown")
}

// manifestObjects are the objects of a YAML file of dist/.
func manifestObjects(t *testing.T, file string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var objs []map[string]any
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(o) > 0 {
			objs = append(objs, o)
		}
	}
	return objs
}

// distImage is the controller's image in the install file.
func distImage(t *testing.T, file string) string {
	t.Helper()
	for _, o := range manifestObjects(t, file) {
		if o["kind"] != "Deployment" {
			continue
		}
		spec, _ := o["spec"].(map[string]any)
		template, _ := spec["template"].(map[string]any)
		podSpec, _ := template["spec"].(map[string]any)
		containers, _ := podSpec["containers"].([]any)
		if len(containers) == 1 {
			if c, ok := containers[0].(map[string]any); ok {
				if image, ok := c["image"].(string); ok {
					return image
				}
			}
		}
	}
	t.Fatalf("%s has no Deployment with one container and an image", file)
	return ""
}

// withoutKinds is the install file without the objects of kinds, as YAML.
func withoutKinds(t *testing.T, file string, kinds ...string) string {
	t.Helper()
	var docs []string
	for _, o := range manifestObjects(t, file) {
		if kind, _ := o["kind"].(string); slices.Contains(kinds, kind) {
			continue
		}
		y, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(y))
	}
	return strings.Join(docs, "---\n")
}
