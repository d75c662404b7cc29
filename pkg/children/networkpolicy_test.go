package children_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/identity"
	"deployobject.dev/controller/pkg/testobjects"
)

func TestDesiredNetworkPolicy(t *testing.T) {
	if children.DesiredNetworkPolicy(testobjects.NewDeployObject()) != nil {
		t.Error("a NetworkPolicy for a DeployObject that asks for none")
	}
	port := func(protocol corev1.Protocol, n int32) networkingv1.NetworkPolicyPort {
		p := intstr.FromInt32(n)
		return networkingv1.NetworkPolicyPort{Protocol: &protocol, Port: &p}
	}
	dns := networkingv1.NetworkPolicyEgressRule{Ports: []networkingv1.NetworkPolicyPort{port(corev1.ProtocolUDP, 53), port(corev1.ProtocolTCP, 53)}}
	ingressOnly := []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
	both := []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}
	frontend := networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{appv1.LabelName: "frontend"}}}
	monitoringNamespace := map[string]string{"kubernetes.io/metadata.name": "monitoring"}
	prometheus := appv1.NetworkPeer{NamespaceSelector: &appv1.LabelSelector{MatchLabels: monitoringNamespace}}
	prometheusPeer := networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{MatchLabels: monitoringNamespace}}
	twoPorts := func(d *appv1.DeployObject) {
		d.Spec.Ports = append(d.Spec.Ports, appv1.Port{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP}, appv1.Port{Name: "dns", ContainerPort: 5353, Protocol: corev1.ProtocolUDP})
	}
	for _, tc := range []struct {
		name   string
		mutate func(*appv1.DeployObject)
		want   networkingv1.NetworkPolicySpec
	}{
		{"nobody may reach the pods", func(d *appv1.DeployObject) { d.Spec.NetworkPolicy = &appv1.NetworkPolicy{} },
			networkingv1.NetworkPolicySpec{PolicyTypes: ingressOnly}},
		{"a DeployObject to every port, by protocol", func(d *appv1.DeployObject) {
			twoPorts(d)
			d.Spec.NetworkPolicy = &appv1.NetworkPolicy{From: []appv1.NetworkPeer{{DeployObject: ptr.To("frontend")}}}
		}, networkingv1.NetworkPolicySpec{PolicyTypes: ingressOnly, Ingress: []networkingv1.NetworkPolicyIngressRule{{
			Ports: []networkingv1.NetworkPolicyPort{port(corev1.ProtocolTCP, 8080), port(corev1.ProtocolTCP, 9090), port(corev1.ProtocolUDP, 5353)},
			From:  []networkingv1.NetworkPolicyPeer{frontend},
		}}}},
		{"without ports, every port", func(d *appv1.DeployObject) {
			d.Spec.Ports = nil
			d.Spec.NetworkPolicy = &appv1.NetworkPolicy{From: []appv1.NetworkPeer{{PodSelector: &appv1.LabelSelector{}}}}
		}, networkingv1.NetworkPolicySpec{PolicyTypes: ingressOnly, Ingress: []networkingv1.NetworkPolicyIngressRule{{
			From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}},
		}}}},
		{"the route's proxies to the route's port only", func(d *appv1.DeployObject) {
			twoPorts(d)
			testobjects.WithIngress(d)
			d.Spec.NetworkPolicy = &appv1.NetworkPolicy{RouteFrom: &appv1.NetworkPeer{NamespaceSelector: &appv1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "ingress-nginx"}}}}
		}, networkingv1.NetworkPolicySpec{PolicyTypes: ingressOnly, Ingress: []networkingv1.NetworkPolicyIngressRule{{
			Ports: []networkingv1.NetworkPolicyPort{port(corev1.ProtocolTCP, 8080)},
			From:  []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "ingress-nginx"}}}},
		}}}},
		// A sidecar's port is not in spec.ports: from does not reach it,
		// monitoringFrom does, and reaches nothing else.
		{"the scraper to a sidecar's monitoring port only", func(d *appv1.DeployObject) {
			testobjects.WithPodMonitor(d)
			d.Spec.NetworkPolicy = &appv1.NetworkPolicy{From: []appv1.NetworkPeer{{DeployObject: ptr.To("frontend")}}, MonitoringFrom: &prometheus}
		}, networkingv1.NetworkPolicySpec{PolicyTypes: ingressOnly, Ingress: []networkingv1.NetworkPolicyIngressRule{
			{Ports: []networkingv1.NetworkPolicyPort{port(corev1.ProtocolTCP, 8080)}, From: []networkingv1.NetworkPolicyPeer{frontend}},
			{Ports: []networkingv1.NetworkPolicyPort{port(corev1.ProtocolTCP, 9113)}, From: []networkingv1.NetworkPolicyPeer{prometheusPeer}},
		}}},
		{"the scraper to a monitoring port of spec.ports", func(d *appv1.DeployObject) {
			twoPorts(d)
			d.Spec.Monitoring = &appv1.Monitoring{Port: "metrics"}
			d.Spec.NetworkPolicy = &appv1.NetworkPolicy{MonitoringFrom: &prometheus}
		}, networkingv1.NetworkPolicySpec{PolicyTypes: ingressOnly, Ingress: []networkingv1.NetworkPolicyIngressRule{
			{Ports: []networkingv1.NetworkPolicyPort{port(corev1.ProtocolTCP, 9090)}, From: []networkingv1.NetworkPolicyPeer{prometheusPeer}},
		}}},
		{"namespaces, pods by expression and CIDRs", func(d *appv1.DeployObject) {
			d.Spec.NetworkPolicy = &appv1.NetworkPolicy{From: []appv1.NetworkPeer{
				{NamespaceSelector: &appv1.LabelSelector{MatchLabels: map[string]string{"team": "shop"}}, PodSelector: &appv1.LabelSelector{MatchExpressions: []appv1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpExists}}}},
				{IPBlock: &appv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"10.1.0.0/16"}}},
			}}
		}, networkingv1.NetworkPolicySpec{PolicyTypes: ingressOnly, Ingress: []networkingv1.NetworkPolicyIngressRule{{
			Ports: []networkingv1.NetworkPolicyPort{port(corev1.ProtocolTCP, 8080)},
			From: []networkingv1.NetworkPolicyPeer{
				{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "shop"}}, PodSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpExists}}}},
				{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"10.1.0.0/16"}}},
			},
		}}}},
		{"egress to DNS only", func(d *appv1.DeployObject) {
			d.Spec.NetworkPolicy = &appv1.NetworkPolicy{Egress: &appv1.NetworkEgress{}}
		}, networkingv1.NetworkPolicySpec{PolicyTypes: both, Egress: []networkingv1.NetworkPolicyEgressRule{dns}}},
		{"egress to DNS and a DeployObject", func(d *appv1.DeployObject) {
			d.Spec.NetworkPolicy = &appv1.NetworkPolicy{Egress: &appv1.NetworkEgress{To: []appv1.NetworkPeer{{DeployObject: ptr.To("frontend")}}}}
		}, networkingv1.NetworkPolicySpec{PolicyTypes: both, Egress: []networkingv1.NetworkPolicyEgressRule{dns, {To: []networkingv1.NetworkPolicyPeer{frontend}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject(tc.mutate)
			got := children.DesiredNetworkPolicy(dobj)
			tc.want.PodSelector = metav1.LabelSelector{MatchLabels: children.SelectorLabels(dobj)}
			if !testobjects.EqualObjects(got.Spec, tc.want) {
				t.Errorf("spec differs:\n%s", diff.Diff(tc.want, got.Spec))
			}
			if !metav1.IsControlledBy(got, dobj) || got.Name != dobj.Name || got.Labels[identity.ManagedByLabel] != identity.ManagedByValue {
				t.Errorf("owner, name or labels wrong: %+v", got.ObjectMeta)
			}
		})
	}
}

// TestScrapeBlocked: the NetworkPolicy keeps the scraper out unless
// monitoringFrom lets it in or from reaches the monitoring port.
func TestScrapeBlocked(t *testing.T) {
	prometheus := &appv1.NetworkPeer{NamespaceSelector: &appv1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "monitoring"}}}
	frontend := []appv1.NetworkPeer{{DeployObject: ptr.To("frontend")}}
	policy := func(p appv1.NetworkPolicy) func(*appv1.DeployObject) {
		return func(d *appv1.DeployObject) { d.Spec.NetworkPolicy = &p }
	}
	const nobody = "NetworkPolicy web admits nobody to port %s, which Prometheus scrapes: set networkPolicy.monitoringFrom to where Prometheus runs"
	for _, tc := range []struct {
		name   string
		mutate []func(*appv1.DeployObject)
		want   string
	}{
		{"no policy", []func(*appv1.DeployObject){testobjects.WithPodMonitor}, ""},
		{"no monitoring", []func(*appv1.DeployObject){policy(appv1.NetworkPolicy{})}, ""},
		{"a port of spec.ports that from reaches", []func(*appv1.DeployObject){testobjects.WithServiceMonitor, policy(appv1.NetworkPolicy{From: frontend})}, ""},
		{"a sidecar's port, without spec.ports: from reaches every port", []func(*appv1.DeployObject){testobjects.WithPodMonitor, func(d *appv1.DeployObject) { d.Spec.Ports = nil }, policy(appv1.NetworkPolicy{From: frontend})}, ""},
		{"a sidecar's port, monitoringFrom", []func(*appv1.DeployObject){testobjects.WithPodMonitor, policy(appv1.NetworkPolicy{From: frontend, MonitoringFrom: prometheus})}, ""},
		{"a port of spec.ports, monitoringFrom alone", []func(*appv1.DeployObject){testobjects.WithServiceMonitor, policy(appv1.NetworkPolicy{MonitoringFrom: prometheus})}, ""},
		{"a sidecar's port that from does not reach", []func(*appv1.DeployObject){testobjects.WithPodMonitor, policy(appv1.NetworkPolicy{From: frontend})},
			"NetworkPolicy web admits networkPolicy.from to spec.ports only, not to port exporter of a sidecar, which Prometheus scrapes: set networkPolicy.monitoringFrom to where Prometheus runs"},
		{"a policy that admits nobody", []func(*appv1.DeployObject){testobjects.WithServiceMonitor, policy(appv1.NetworkPolicy{})}, fmt.Sprintf(nobody, "http")},
		// routeFrom admits the route's proxies, not the scraper, even to
		// the port both use.
		{"only the route's proxies to the monitoring port", []func(*appv1.DeployObject){testobjects.WithIngress, testobjects.WithServiceMonitor, policy(appv1.NetworkPolicy{RouteFrom: prometheus})}, fmt.Sprintf(nobody, "http")},
	} {
		if got := children.ScrapeBlocked(testobjects.NewDeployObject(tc.mutate...)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestDesiredNetworkPolicyCopies(t *testing.T) {
	dobj := testobjects.NewDeployObject(testobjects.WithIngress, testobjects.WithNetworkPolicy)
	got := children.DesiredNetworkPolicy(dobj)
	got.Spec.Ingress[0].From[1].NamespaceSelector.MatchLabels["team"] = "changed"
	got.Spec.Ingress[0].From[1].PodSelector.MatchExpressions[0].Values[0] = "changed"
	got.Spec.Ingress[0].From[2].IPBlock.Except[0] = "changed"
	if !testobjects.EqualObjects(dobj.Spec.NetworkPolicy, testobjects.NewDeployObject(testobjects.WithNetworkPolicy).Spec.NetworkPolicy) {
		t.Error("the desired NetworkPolicy points into the DeployObject")
	}
}

func TestMergeNetworkPolicy(t *testing.T) {
	for _, tc := range []struct {
		name       string
		spec       func(*appv1.DeployObject)
		drift      func(*networkingv1.NetworkPolicy)
		wantChange bool
	}{
		{"in sync", nil, func(*networkingv1.NetworkPolicy) {}, false},
		{"others' labels and annotations are theirs", nil, func(p *networkingv1.NetworkPolicy) {
			p.Labels["audit"] = "done"
			p.Annotations["note"] = "reviewed"
		}, false},
		{"a rule removed", nil, func(p *networkingv1.NetworkPolicy) { p.Spec.Ingress = p.Spec.Ingress[:1] }, true},
		{"egress opened", nil, func(p *networkingv1.NetworkPolicy) {
			p.Spec.Egress, p.Spec.PolicyTypes = nil, p.Spec.PolicyTypes[:1]
		}, true},
		{"pods widened", nil, func(p *networkingv1.NetworkPolicy) { p.Spec.PodSelector = metav1.LabelSelector{} }, true},
		{"the spec drops a label", func(d *appv1.DeployObject) { d.Spec.NetworkPolicy.Metadata = nil }, func(*networkingv1.NetworkPolicy) {}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject(testobjects.WithIngress, testobjects.WithNetworkPolicy)
			live := testobjects.LiveNetworkPolicy(dobj)
			tc.drift(live)
			if tc.spec != nil {
				tc.spec(dobj)
			}
			desired := children.DesiredNetworkPolicy(dobj)
			merged, changed := children.MergeNetworkPolicy(live, desired)
			if changed != tc.wantChange {
				t.Fatalf("changed = %v, want %v", changed, tc.wantChange)
			}
			if !testobjects.EqualObjects(merged.Spec, desired.Spec) {
				t.Errorf("merged spec differs:\n%s", diff.Diff(desired.Spec, merged.Spec))
			}
			if _, still := merged.Labels["policy-tier"]; still != (dobj.Spec.NetworkPolicy.Metadata != nil) {
				t.Errorf("policy-tier label present = %v, want it exactly while the spec asks for it", still)
			}
			if v, ok := live.Labels["audit"]; ok && merged.Labels["audit"] != v {
				t.Error("someone else's label was dropped")
			}
			if changed && merged.UID != live.UID {
				t.Error("the merge lost the live object's identity")
			}
		})
	}
}
