package deploy

import (
	"bytes"
	"os"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"
)

// TestNamespacedRoleMatchesClusterRole: the namespaced installation grants
// in one namespace what the cluster-wide one grants everywhere, except the
// token and access reviews, which a Role cannot grant. A rule added to one
// file and not the other leaves that installation's controller without a
// cache or a write it needs.
func TestNamespacedRoleMatchesClusterRole(t *testing.T) {
	cluster := readRules(t, "rbac.yaml", "ClusterRole", "deployobject-controller")
	var want []rbacv1.PolicyRule
	for _, r := range cluster {
		if len(r.APIGroups) == 1 && (r.APIGroups[0] == "authentication.k8s.io" || r.APIGroups[0] == "authorization.k8s.io") {
			continue
		}
		want = append(want, r)
	}
	got := readRules(t, "namespaced/rbac.yaml", "Role", "deployobject-controller")
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("deploy/namespaced's Role differs from deploy/'s ClusterRole:\n got %+v\nwant %+v", got, want)
	}
}

// TestTrackSecretsIsApart: the Secret permissions live only in the
// track-secrets components, which grant list and watch on Secrets and
// nothing else, the same cluster-wide and in one namespace, together with
// the flag that uses them.
func TestTrackSecretsIsApart(t *testing.T) {
	for _, r := range readRules(t, "rbac.yaml", "ClusterRole", "deployobject-controller") {
		if slices.Contains(r.Resources, "secrets") {
			t.Errorf("the default ClusterRole grants %v on Secrets", r.Verbs)
		}
	}
	want := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list", "watch"}}}
	cluster := readRules(t, "track-secrets/rbac.yaml", "ClusterRole", "deployobject-controller-track-secrets")
	namespaced := readRules(t, "namespaced/track-secrets/rbac.yaml", "Role", "deployobject-controller-track-secrets")
	if !equality.Semantic.DeepEqual(cluster, want) || !equality.Semantic.DeepEqual(namespaced, want) {
		t.Errorf("Secret rules: cluster-wide %+v, namespaced %+v; want %+v", cluster, namespaced, want)
	}
	for _, dir := range []string{"track-secrets", "namespaced/track-secrets"} {
		data, err := os.ReadFile(dir + "/kustomization.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte("kind: Component")) || !bytes.Contains(data, []byte("value: --track-secrets")) {
			t.Errorf("%s is not a component that adds --track-secrets", dir)
		}
	}
}

// TestEventsRule: the controller writes its events through events.k8s.io/v1
// (create, and patch for a repeat's series) and nothing through core/v1,
// which it no longer uses.
func TestEventsRule(t *testing.T) {
	want := rbacv1.PolicyRule{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}}
	var got []rbacv1.PolicyRule
	for _, r := range readRules(t, "rbac.yaml", "ClusterRole", "deployobject-controller") {
		if slices.Contains(r.Resources, "events") {
			got = append(got, r)
		}
	}
	if len(got) != 1 || !equality.Semantic.DeepEqual(got[0], want) {
		t.Errorf("rules on events %+v, want only %+v", got, want)
	}
}

func readRules(t *testing.T, path, kind, name string) []rbacv1.PolicyRule {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range bytes.Split(data, []byte("\n---")) {
		var role struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Rules []rbacv1.PolicyRule `json:"rules"`
		}
		if err := yaml.Unmarshal(doc, &role); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if role.Kind == kind && role.Metadata.Name == name {
			return role.Rules
		}
	}
	t.Fatalf("%s: no %s %s", path, kind, name)
	return nil
}
