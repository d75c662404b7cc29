package monitoring

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// jobName is the job label the ServiceMonitor gives the controller's series
// (its Service's app.kubernetes.io/name), which the alerts and the
// dashboard select.
const jobName = "deployobject-controller"

// object is the part of a Kubernetes object these tests read.
type object struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec     json.RawMessage       `json:"spec"`
	Data     map[string]string     `json:"data"`
	RoleRef  struct{ Name string } `json:"roleRef"`
	Subjects []struct {
		Kind, Name, Namespace string
	} `json:"subjects"`
	Rules []policyRule `json:"rules"`
}

type policyRule struct {
	NonResourceURLs []string `json:"nonResourceURLs"`
	Verbs           []string `json:"verbs"`
}

type deploymentSpec struct {
	Template struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
		Spec struct {
			Containers []struct {
				Args  []string        `json:"args"`
				Ports []containerPort `json:"ports"`
			} `json:"containers"`
		} `json:"spec"`
	} `json:"template"`
}

type containerPort struct {
	Name          string `json:"name"`
	ContainerPort int    `json:"containerPort"`
}

type serviceSpec struct {
	Selector map[string]string `json:"selector"`
	Ports    []servicePort     `json:"ports"`
}

type servicePort struct {
	Name       string `json:"name"`
	TargetPort string `json:"targetPort"`
}

type serviceMonitorSpec struct {
	JobLabel string `json:"jobLabel"`
	Selector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	} `json:"selector"`
	Endpoints []struct {
		Port          string `json:"port"`
		Scheme        string `json:"scheme"`
		Path          string `json:"path"`
		Authorization struct {
			Type        string `json:"type"`
			Credentials struct {
				Name string `json:"name"`
				Key  string `json:"key"`
			} `json:"credentials"`
		} `json:"authorization"`
	} `json:"endpoints"`
}

// kubectl is the cluster's kubectl, which make test-monitoring passes in
// KUBECTL, else the one hack/cluster.sh builds.
func kubectl(t *testing.T) string {
	t.Helper()
	if k := os.Getenv("KUBECTL"); k != "" {
		return k
	}
	out, err := exec.Command("../../hack/cluster.sh", "bindir").Output()
	if err != nil {
		t.Fatalf("hack/cluster.sh bindir: %v", err)
	}
	k := filepath.Join(strings.TrimSpace(string(out)), "kubectl")
	if _, err := os.Stat(k); err != nil {
		t.Fatalf("no kubectl (%v): run `make test-monitoring`, or `hack/cluster.sh build` first", err)
	}
	return k
}

// build runs kubectl kustomize on a kustomization that installs base into
// namespace ns with components, as docs/monitoring.md shows.
func build(t *testing.T, base, ns string, components ...string) []object {
	t.Helper()
	dir := t.TempDir()
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		r, err := filepath.Rel(dir, a)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	var rel []string
	for _, c := range components {
		rel = append(rel, abs(c))
	}
	k := fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: %s\nresources: [%s]\ncomponents: [%s]\n", ns, abs(base), strings.Join(rel, ", "))
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	return kustomize(t, dir)
}

// kustomize returns the objects kubectl kustomize builds from dir.
func kustomize(t *testing.T, dir string) []object {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(kubectl(t), "kustomize", dir)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, stderr.String())
	}
	var objs []object
	for _, doc := range strings.Split(string(out), "\n---\n") {
		var o object
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("decoding the output of kubectl kustomize: %v\n%s", err, doc)
		}
		objs = append(objs, o)
	}
	return objs
}

func find(t *testing.T, objs []object, kind, name string) object {
	t.Helper()
	for _, o := range objs {
		if o.Kind == kind && o.Metadata.Name == name {
			return o
		}
	}
	t.Fatalf("the build has no %s %s", kind, name)
	return object{}
}

func spec(t *testing.T, o object, into any) {
	t.Helper()
	if err := json.Unmarshal(o.Spec, into); err != nil {
		t.Fatalf("%s %s: %v", o.Kind, o.Metadata.Name, err)
	}
}

// subset reports whether every key of sub has the same value in of.
func subset(sub, of map[string]string) bool {
	for k, v := range sub {
		if of[k] != v {
			return false
		}
	}
	return len(sub) > 0
}

// TestComponentBuilds builds the component on top of deploy/ and
// deploy/namespaced, checks that both hold the controller's
// PodDisruptionBudget, and follows the scrape from end to end: the
// ServiceMonitor selects the Service and sends the Secret's token over
// HTTPS to the port the controller serves secure metrics on, the Service
// selects the controller's pods, and the Secret's ServiceAccount is bound to
// the ClusterRole that may read /metrics.
func TestComponentBuilds(t *testing.T) {
	for _, tc := range []struct {
		base string
		// reader: the build holds the ClusterRole deployobject-metrics-reader.
		// deploy/namespaced leaves cluster-wide RBAC to a cluster admin.
		reader bool
	}{
		{"../../deploy", true},
		{"../../deploy/namespaced", false},
	} {
		base := tc.base
		t.Run(filepath.Base(base), func(t *testing.T) {
			const ns = "monitoring-test"
			objs := build(t, base, ns, component)
			for _, o := range objs {
				cluster := o.Kind == "ClusterRole" || o.Kind == "ClusterRoleBinding" || o.Kind == "CustomResourceDefinition" || o.Kind == "Namespace"
				if !cluster && o.Metadata.Namespace != ns {
					t.Errorf("%s %s is in namespace %q, want the kustomization's %s", o.Kind, o.Metadata.Name, o.Metadata.Namespace, ns)
				}
			}

			deploy := find(t, objs, "Deployment", "deployobject-controller")
			var ds deploymentSpec
			spec(t, deploy, &ds)
			if len(ds.Template.Spec.Containers) == 0 {
				t.Fatal("the Deployment has no container")
			}
			c := ds.Template.Spec.Containers[0]
			if !slices.Contains(c.Args, "--metrics-secure=true") {
				t.Errorf("the controller's args %v lack --metrics-secure=true: the ServiceMonitor scrapes HTTPS with a token", c.Args)
			}

			// The budget that deploy/controller gives both installations.
			pdb := find(t, objs, "PodDisruptionBudget", "deployobject-controller")
			var ps struct {
				Selector struct {
					MatchLabels map[string]string `json:"matchLabels"`
				} `json:"selector"`
			}
			spec(t, pdb, &ps)
			if !subset(ps.Selector.MatchLabels, ds.Template.Metadata.Labels) {
				t.Errorf("the PodDisruptionBudget's selector %v does not select the controller's pods %v", ps.Selector.MatchLabels, ds.Template.Metadata.Labels)
			}

			svc := find(t, objs, "Service", "deployobject-controller-metrics")
			var ss serviceSpec
			spec(t, svc, &ss)
			if !subset(ss.Selector, ds.Template.Metadata.Labels) {
				t.Errorf("the Service's selector %v does not select the controller's pods %v", ss.Selector, ds.Template.Metadata.Labels)
			}
			if svc.Metadata.Labels["app.kubernetes.io/name"] != jobName {
				t.Errorf("the Service's app.kubernetes.io/name is %q: the job label would not be %s", svc.Metadata.Labels["app.kubernetes.io/name"], jobName)
			}

			sm := find(t, objs, "ServiceMonitor", "deployobject-controller")
			var sms serviceMonitorSpec
			spec(t, sm, &sms)
			if !subset(sms.Selector.MatchLabels, svc.Metadata.Labels) {
				t.Errorf("the ServiceMonitor's selector %v does not select the Service's labels %v", sms.Selector.MatchLabels, svc.Metadata.Labels)
			}
			if svc.Metadata.Labels[sms.JobLabel] != jobName {
				t.Errorf("jobLabel %q gives job=%q, want %s", sms.JobLabel, svc.Metadata.Labels[sms.JobLabel], jobName)
			}
			if len(sms.Endpoints) != 1 {
				t.Fatalf("the ServiceMonitor has %d endpoints, want 1", len(sms.Endpoints))
			}
			ep := sms.Endpoints[0]
			i := slices.IndexFunc(ss.Ports, func(p servicePort) bool { return p.Name == ep.Port })
			if i < 0 {
				t.Fatalf("the ServiceMonitor scrapes port %q, which the Service lacks", ep.Port)
			}
			target := ss.Ports[i].TargetPort
			j := slices.IndexFunc(c.Ports, func(p containerPort) bool { return p.Name == target })
			if j < 0 {
				t.Fatalf("the Service targets port %q, which the controller's container does not name", target)
			}
			if want := fmt.Sprintf("--metrics-bind-address=:%d", c.Ports[j].ContainerPort); !slices.Contains(c.Args, want) {
				t.Errorf("the Service targets container port %d, but the controller's args %v lack %s", c.Ports[j].ContainerPort, c.Args, want)
			}
			if ep.Scheme != "https" || ep.Path != "/metrics" || ep.Authorization.Type != "Bearer" {
				t.Errorf("the ServiceMonitor scrapes %s %s with %q authorization, want https /metrics with a Bearer token", ep.Scheme, ep.Path, ep.Authorization.Type)
			}

			secret := find(t, objs, "Secret", ep.Authorization.Credentials.Name)
			if ep.Authorization.Credentials.Key != "token" {
				t.Errorf("the ServiceMonitor reads key %q of the Secret; a ServiceAccount token Secret holds token", ep.Authorization.Credentials.Key)
			}
			sa := find(t, objs, "ServiceAccount", secret.Metadata.Annotations["kubernetes.io/service-account.name"])
			crb := find(t, objs, "ClusterRoleBinding", "deployobject-metrics-scraper")
			if crb.RoleRef.Name != "deployobject-metrics-reader" || len(crb.Subjects) != 1 ||
				crb.Subjects[0].Kind != "ServiceAccount" || crb.Subjects[0].Name != sa.Metadata.Name || crb.Subjects[0].Namespace != ns {
				t.Errorf("the ClusterRoleBinding binds %+v to %s, want ServiceAccount %s/%s to deployobject-metrics-reader", crb.Subjects, crb.RoleRef.Name, ns, sa.Metadata.Name)
			}

			if tc.reader {
				role := find(t, objs, "ClusterRole", crb.RoleRef.Name)
				if !slices.ContainsFunc(role.Rules, func(r policyRule) bool {
					return slices.Contains(r.NonResourceURLs, "/metrics") && slices.Contains(r.Verbs, "get")
				}) {
					t.Errorf("the ClusterRole %s does not grant get on /metrics: %+v", role.Metadata.Name, role.Rules)
				}
			}

			cm := find(t, objs, "ConfigMap", "deployobject-controller-dashboard")
			if cm.Metadata.Labels["grafana_dashboard"] != "1" {
				t.Errorf("the dashboard ConfigMap's labels %v lack grafana_dashboard: \"1\"", cm.Metadata.Labels)
			}
			dashboard, err := os.ReadFile(component + "/dashboard.json")
			if err != nil {
				t.Fatal(err)
			}
			if cm.Data["deployobject-controller.json"] != string(dashboard) {
				t.Error("the dashboard ConfigMap does not hold dashboard.json as deployobject-controller.json")
			}
			find(t, objs, "PrometheusRule", "deployobject-controller")
		})
	}
}
