//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// healthFixtures is where the Argo CD health check's fixtures live; the
// health check and Flux's status library are tested on them in the
// test/gitops module.
const healthFixtures = "deploy/argocd/resource_customizations/app.deployobject.dev/DeployObject/testdata"

// fixtureTime replaces the timestamps of captured objects, so that
// refreshing the fixtures changes them only where the statuses changed.
const fixtureTime = "2026-01-01T00:00:00Z"

// TestGitOpsHealthFixtures puts DeployObjects into each state a GitOps tool
// must tell apart and checks that the committed fixtures of the Argo CD
// health check hold the conditions (type, status, reason) that the
// controller really writes in that state, so that the health check and the
// kstatus tests in test/gitops run on what the controller produces. With
// E2E_UPDATE_FIXTURES=1 it writes the fixtures instead.
func TestGitOpsHealthFixtures(t *testing.T) {
	t.Parallel()
	update := os.Getenv("E2E_UPDATE_FIXTURES") == "1"
	for _, tc := range []struct {
		fixture string
		// name is the DeployObject's.
		name string
		// reach puts DeployObject name into the state in namespace ns and
		// waits for it.
		reach func(t *testing.T, ns string)
	}{
		{"healthy-minimal", "hello", func(t *testing.T, ns string) {
			applyExample(t, ns, "minimal.yaml")
			waitReady(t, ns, "hello")
		}},
		{"healthy-full", "web", func(t *testing.T, ns string) {
			applyExample(t, ns, "full.yaml")
			waitReady(t, ns, "web")
		}},
		{"progressing", "web", func(t *testing.T, ns string) {
			// No node has a thousand cores: the pods stay Pending and the
			// rollout goes on until its deadline, ten minutes away.
			create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
				d.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000")}
			}))
			waitCondition(t, ns, "web", appv1.ConditionReconciling, appv1.ReasonProgressing, "updated replicas available")
		}},
		{"paused", "web", func(t *testing.T, ns string) {
			create(t, newDO(ns, "web"))
			waitReady(t, ns, "web")
			if out, err := kubectl("-n", ns, "rollout", "pause", "deployment/web"); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.Image = "nginx:1.28" })
			waitCondition(t, ns, "web", appv1.ConditionReconciling, appv1.ReasonPaused, "")
		}},
		{"invalid-spec", "web", func(t *testing.T, ns string) {
			create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
				d.Spec.Env = []corev1.EnvVar{{Name: "A=B", Value: "x"}}
			}))
			waitCondition(t, ns, "web", appv1.ConditionStalled, appv1.ReasonInvalidSpec, "")
		}},
		{"resource-conflict", "web", func(t *testing.T, ns string) {
			createForeignDeployment(t, ns, "web")
			create(t, newDO(ns, "web"))
			waitCondition(t, ns, "web", appv1.ConditionStalled, appv1.ReasonResourceConflict, "")
		}},
		{"canary-progressing", "web", func(t *testing.T, ns string) {
			// The canary's pods ask for more than a node offers (1,000
			// CPUs, see hack/cluster.sh): they stay Pending until the
			// step's deadline, ten minutes away.
			create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
				d.Spec.Canary = &appv1.Canary{Steps: []appv1.CanaryStep{{SetWeight: ptr.To[int32](50)}}}
			}))
			waitReady(t, ns, "web")
			updateDO(t, ns, "web", func(d *appv1.DeployObject) {
				d.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2000")}
			})
			waitCondition(t, ns, "web", appv1.ConditionReconciling, appv1.ReasonCanaryProgressing, "0 of 2 canary pods available")
		}},
		{"canary-paused", "web", func(t *testing.T, ns string) {
			create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
				d.Spec.Canary = &appv1.Canary{Steps: []appv1.CanaryStep{{SetWeight: ptr.To[int32](50)}, {Pause: &appv1.CanaryPause{}}}}
			}))
			waitReady(t, ns, "web")
			updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.Image = "nginx:1.28" })
			waitCondition(t, ns, "web", appv1.ConditionReconciling, appv1.ReasonCanaryPaused, "")
		}},
		{"canary-aborted", "web", func(t *testing.T, ns string) {
			create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
				d.Spec.Canary = &appv1.Canary{
					Steps:     []appv1.CanaryStep{{SetWeight: ptr.To[int32](50)}},
					AutoAbort: &appv1.CanaryAutoAbort{ProgressDeadlineSeconds: ptr.To[int32](5)},
				}
			}))
			waitReady(t, ns, "web")
			updateDO(t, ns, "web", func(d *appv1.DeployObject) {
				d.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2000")}
			})
			waitCondition(t, ns, "web", appv1.ConditionStalled, appv1.ReasonCanaryAborted, "aborted (ProgressDeadline)")
		}},
		{"replica-failure", "web", func(t *testing.T, ns string) {
			if out, err := kubectl("label", "namespace", ns, "pod-security.kubernetes.io/enforce=restricted"); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			create(t, newDO(ns, "web"))
			waitCondition(t, ns, "web", appv1.ConditionStalled, appv1.ReasonReplicaFailure, "")
		}},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			tc.reach(t, ns)
			live, err := env.dynamic.Resource(appv1.SchemeGroupVersion.WithResource("deployobjects")).Namespace(ns).Get(ctx, tc.name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(env.repoRoot, healthFixtures, tc.fixture+".yaml")
			if update {
				writeFixture(t, path, live)
				return
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("reading the fixture (write it with E2E_UPDATE_FIXTURES=1): %v", err)
			}
			var fixture unstructured.Unstructured
			if err := yaml.Unmarshal(raw, &fixture.Object); err != nil {
				t.Fatalf("decoding %s: %v", path, err)
			}
			if got, want := conditionSummary(t, live), conditionSummary(t, &fixture); !slices.Equal(got, want) {
				t.Errorf("the controller writes conditions %v in this state, but the fixture %s holds %v: refresh it with E2E_UPDATE_FIXTURES=1", got, path, want)
			}
		})
	}
}

// applyExample applies the file of example/ to namespace ns.
func applyExample(t *testing.T, ns, file string) {
	t.Helper()
	if out, err := kubectl("-n", ns, "apply", "-f", filepath.Join(env.repoRoot, "example", file)); err != nil {
		t.Fatalf("kubectl apply -f example/%s: %v\n%s", file, err, out)
	}
}

// waitCondition waits until DeployObject name has condition typ True with
// reason, at the current generation, and a message containing msg.
func waitCondition(t *testing.T, ns, name, typ, reason, msg string) {
	t.Helper()
	eventually(t, timeout, fmt.Sprintf("%s=True/%s on %s", typ, reason, name), func() (bool, string, error) {
		d, err := env.client.AppV1().DeployObjects(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		c := meta.FindStatusCondition(d.Status.Conditions, typ)
		_, state := readyState(d)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == reason && c.ObservedGeneration == d.Generation &&
			d.Status.ObservedGeneration == d.Generation && strings.Contains(c.Message, msg), state, nil
	})
}

// conditionSummary is "type=status/reason" of each condition of obj, sorted,
// and whether its status describes its generation.
func conditionSummary(t *testing.T, obj *unstructured.Unstructured) []string {
	t.Helper()
	conds, _, err := unstructured.NestedSlice(obj.Object, "status", "conditions")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range conds {
		m, _ := c.(map[string]any)
		out = append(out, fmt.Sprintf("%v=%v/%v", m["type"], m["status"], m["reason"]))
	}
	slices.Sort(out)
	observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	return append(out, fmt.Sprintf("observed current generation: %v", observed == obj.GetGeneration()))
}

// writeFixture writes obj to path without what differs from run to run:
// server-set metadata, the test's namespace, timestamps.
func writeFixture(t *testing.T, path string, obj *unstructured.Unstructured) {
	t.Helper()
	clean := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": obj.GetAPIVersion(),
		"kind":       obj.GetKind(),
		"spec":       obj.Object["spec"],
		"status":     obj.Object["status"],
	}}
	clean.SetName(obj.GetName())
	clean.SetNamespace("demo")
	clean.SetGeneration(obj.GetGeneration())
	conds, _, _ := unstructured.NestedSlice(clean.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok {
			m["lastTransitionTime"] = fixtureTime
			if msg, ok := m["message"].(string); ok {
				m["message"] = strings.ReplaceAll(msg, obj.GetNamespace(), "demo")
			}
		}
	}
	if err := unstructured.SetNestedSlice(clean.Object, conds, "status", "conditions"); err != nil {
		t.Fatal(err)
	}
	out, err := yaml.Marshal(clean.Object)
	if err != nil {
		t.Fatal(err)
	}
	header := "# Captured by TestGitOpsHealthFixtures (test/e2e) with E2E_UPDATE_FIXTURES=1; do not edit.\n"
	if err := os.WriteFile(path, append([]byte(header), out...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestNewDeployObjectIsNotCurrent: a DeployObject the controller has not
// synced yet reads status.observedGeneration 0, below its generation, so
// kstatus (Flux) says InProgress rather than Current for it.
func TestNewDeployObjectIsNotCurrent(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	// The create's answer is the object as stored, before any status
	// write; a later read could already hold the controller's.
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(newDO(ns, "web"))
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: u}
	obj.SetAPIVersion(appv1.SchemeGroupVersion.String())
	obj.SetKind("DeployObject")
	obj, err = env.dynamic.Resource(appv1.SchemeGroupVersion.WithResource("deployobjects")).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	observed, found, err := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	if err != nil || !found || observed != 0 {
		t.Errorf("status.observedGeneration of the created object = %d (found %v, %v), want 0; status %v", observed, found, err, obj.Object["status"])
	}
	waitReady(t, ns, "web")
}
