package deploy

import (
	"os"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// TestDisruptionBudget: the controller's PodDisruptionBudget covers its pods,
// lets a drain evict one replica while the other stays, still lets a drain
// through when the Deployment is scaled to one replica, and lets a replica
// that is not ready go even when the budget is spent.
func TestDisruptionBudget(t *testing.T) {
	var d appsv1.Deployment
	readObject(t, "controller/deployment.yaml", &d)
	var pdb policyv1.PodDisruptionBudget
	readObject(t, "controller/poddisruptionbudget.yaml", &pdb)

	if !selects(t, pdb.Spec.Selector, d.Spec.Template.Labels) {
		t.Errorf("the budget's selector %v does not select the controller's pods %v", pdb.Spec.Selector, d.Spec.Template.Labels)
	}
	// allowed is how many of n ready replicas the budget lets a drain
	// evict at once.
	allowed := func(n int) int {
		if pdb.Spec.MinAvailable != nil {
			minAvailable, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, n, true)
			if err != nil {
				t.Fatal(err)
			}
			return n - minAvailable
		}
		if pdb.Spec.MaxUnavailable == nil {
			t.Fatal("the budget sets neither minAvailable nor maxUnavailable")
		}
		maxUnavailable, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, n, false)
		if err != nil {
			t.Fatal(err)
		}
		return maxUnavailable
	}
	if d.Spec.Replicas == nil {
		t.Fatal("the Deployment does not set replicas")
	}
	replicas := int(*d.Spec.Replicas)
	if a := allowed(replicas); a < 1 || a >= replicas {
		t.Errorf("at %d replicas the budget allows %d evictions at once, want at least 1 and fewer than %d", replicas, a, replicas)
	}
	if a := allowed(1); a < 1 {
		t.Errorf("scaled to 1 replica, the budget allows %d evictions: every node drain would wait for good", a)
	}
	if p := ptr.Deref(pdb.Spec.UnhealthyPodEvictionPolicy, ""); p != policyv1.AlwaysAllow {
		t.Errorf("unhealthyPodEvictionPolicy %q, want AlwaysAllow: two replicas that are not ready would block every drain", p)
	}
}

// TestTopologySpread: the Deployment spreads its replicas over nodes and
// zones, softly, with selectors that count its own pods (a selector that
// matches none makes a constraint do nothing).
func TestTopologySpread(t *testing.T) {
	var d appsv1.Deployment
	readObject(t, "controller/deployment.yaml", &d)
	for _, key := range []string{corev1.LabelHostname, corev1.LabelTopologyZone} {
		found := false
		for _, c := range d.Spec.Template.Spec.TopologySpreadConstraints {
			if c.TopologyKey != key {
				continue
			}
			found = true
			if c.WhenUnsatisfiable != corev1.ScheduleAnyway {
				t.Errorf("%s: whenUnsatisfiable %s, want ScheduleAnyway: a cluster of one node or zone must still run both replicas", key, c.WhenUnsatisfiable)
			}
			if !selects(t, c.LabelSelector, d.Spec.Template.Labels) {
				t.Errorf("%s: the selector %v does not select the controller's pods %v", key, c.LabelSelector, d.Spec.Template.Labels)
			}
		}
		if !found {
			t.Errorf("no topology spread constraint on %s", key)
		}
	}
}

// selects reports whether the label selector s selects pods labelled l.
func selects(t *testing.T, s *metav1.LabelSelector, l map[string]string) bool {
	t.Helper()
	if s == nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		t.Fatal(err)
	}
	return !sel.Empty() && sel.Matches(labels.Set(l))
}

func readObject(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
