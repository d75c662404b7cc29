package monitoring

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const networkPolicyComponent = "../../deploy/components/metrics-networkpolicy"

type networkPolicySpec struct {
	PodSelector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	} `json:"podSelector"`
	PolicyTypes []string `json:"policyTypes"`
	Ingress     []struct {
		From []struct {
			NamespaceSelector *struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"namespaceSelector"`
			PodSelector json.RawMessage `json:"podSelector"`
			IPBlock     json.RawMessage `json:"ipBlock"`
		} `json:"from"`
		Ports []struct {
			Protocol string `json:"protocol"`
			// Port is a number or the name of a container port.
			Port json.RawMessage `json:"port"`
		} `json:"ports"`
	} `json:"ingress"`
}

// TestMetricsNetworkPolicy builds the metrics-networkpolicy component, with
// the monitoring component, on top of deploy/ and deploy/namespaced. The
// policy must select the controller's pods, restrict their ingress only
// (the controller must reach the API server), and admit exactly the port
// --metrics-bind-address serves, over TCP, from pods in namespaces labelled
// metrics=enabled and from nothing else; the --health-probe-bind-address
// port must be in no rule.
func TestMetricsNetworkPolicy(t *testing.T) {
	for _, base := range []string{"../../deploy", "../../deploy/namespaced"} {
		t.Run(filepath.Base(base), func(t *testing.T) {
			const ns = "network-policy-test"
			objs := build(t, base, ns, component, networkPolicyComponent)
			var ds deploymentSpec
			spec(t, find(t, objs, "Deployment", "deployobject-controller"), &ds)
			if len(ds.Template.Spec.Containers) == 0 {
				t.Fatal("the Deployment has no container")
			}
			c := ds.Template.Spec.Containers[0]
			metrics, health := bindPort(t, c.Args, "--metrics-bind-address"), bindPort(t, c.Args, "--health-probe-bind-address")

			np := find(t, objs, "NetworkPolicy", "deployobject-controller-metrics")
			if np.Metadata.Namespace != ns {
				t.Errorf("the NetworkPolicy is in namespace %q, want the kustomization's %s", np.Metadata.Namespace, ns)
			}
			var nps networkPolicySpec
			spec(t, np, &nps)
			if !subset(nps.PodSelector.MatchLabels, ds.Template.Metadata.Labels) {
				t.Errorf("the policy's podSelector %v does not select the controller's pods %v", nps.PodSelector.MatchLabels, ds.Template.Metadata.Labels)
			}
			if !slices.Equal(nps.PolicyTypes, []string{"Ingress"}) {
				t.Errorf("policyTypes %v, want [Ingress]: egress to the API server must stay open", nps.PolicyTypes)
			}
			var allowed []int
			for _, rule := range nps.Ingress {
				for _, peer := range rule.From {
					if peer.NamespaceSelector == nil || !maps.Equal(peer.NamespaceSelector.MatchLabels, map[string]string{"metrics": "enabled"}) ||
						peer.PodSelector != nil || peer.IPBlock != nil {
						j, _ := json.Marshal(peer)
						t.Errorf("a rule admits %s, want only a namespaceSelector of metrics=enabled", j)
					}
				}
				if len(rule.From) == 0 {
					t.Error("a rule without from admits every source")
				}
				if len(rule.Ports) == 0 {
					t.Error("a rule without ports admits every port")
				}
				for _, p := range rule.Ports {
					if p.Protocol != "TCP" {
						t.Errorf("port %s: protocol %q, want TCP", p.Port, p.Protocol)
					}
					allowed = append(allowed, containerPortOf(t, c.Ports, p.Port))
				}
			}
			if !slices.Equal(allowed, []int{metrics}) {
				t.Errorf("the policy admits container ports %v, want only the metrics port %d", allowed, metrics)
			}
			if slices.Contains(allowed, health) {
				t.Errorf("the policy admits the probe port %d to other pods", health)
			}
		})
	}
}

// bindPort is the port of the ":PORT" address that flag sets in args.
func bindPort(t *testing.T, args []string, flag string) int {
	t.Helper()
	addr := flagValue(t, args, flag, "")
	if addr == "" {
		t.Fatalf("the controller's args %v do not set %s", args, flag)
	}
	_, port, _ := strings.Cut(addr, ":")
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatalf("%s=%s: %v", flag, addr, err)
	}
	return n
}

// containerPortOf is the container port a NetworkPolicy port names: a number,
// or the name of one of ports.
func containerPortOf(t *testing.T, ports []containerPort, port json.RawMessage) int {
	t.Helper()
	var n int
	if err := json.Unmarshal(port, &n); err == nil {
		return n
	}
	var name string
	if err := json.Unmarshal(port, &name); err != nil {
		t.Fatalf("port %s is neither a number nor a name", port)
	}
	i := slices.IndexFunc(ports, func(p containerPort) bool { return p.Name == name })
	if i < 0 {
		t.Fatalf("the policy names port %q, which the controller's container does not", name)
	}
	return ports[i].ContainerPort
}
