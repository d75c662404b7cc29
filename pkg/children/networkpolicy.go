package children

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// The NetworkPolicy: what the controller asks of it, how a live one is
// brought in line, and what the cache keeps. It exists only while
// spec.networkPolicy is set. The controller owns its whole spec, its labels
// (not others' labels) and the keys of spec.networkPolicy.metadata. The API
// server fills in a port's protocol and the policy types when they are
// left out; DesiredNetworkPolicy sets both, so the spec is compared as it
// is (TestNetworkPolicy shows 0 writes in steady state against the real
// API server). A NetworkPolicy has no status: Ready waits only for it to
// exist.

// KindNetworkPolicy names the NetworkPolicy in problems and events.
const KindNetworkPolicy = "NetworkPolicy"

// dnsPort is the port of DNS, which a policy restricting egress keeps
// open.
var dnsPort = intstr.FromInt32(53)

// WantsNetworkPolicy reports whether dobj asks for a NetworkPolicy.
func WantsNetworkPolicy(dobj *appv1.DeployObject) bool {
	return dobj.Spec.NetworkPolicy != nil
}

// DesiredNetworkPolicy is the NetworkPolicy dobj asks for; nil when it asks
// for none. It selects the pods as the Deployment does and has up to three
// ingress rules: from's peers to every port of spec.ports (every port when
// there are none), routeFrom to the route's ports, and monitoringFrom to
// the port spec.monitoring scrapes. With egress, it has a rule for DNS to
// anywhere and one for egress.to's peers.
func DesiredNetworkPolicy(dobj *appv1.DeployObject) *networkingv1.NetworkPolicy {
	np := dobj.Spec.NetworkPolicy
	if np == nil {
		return nil
	}
	policy := &networkingv1.NetworkPolicy{
		ObjectMeta: childMeta(dobj),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: SelectorLabels(dobj)},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		},
	}
	if len(np.From) > 0 {
		var ports []networkingv1.NetworkPolicyPort
		for _, p := range dobj.Spec.Ports {
			ports = append(ports, policyPort(portProtocol(p), intstr.FromInt32(p.ContainerPort)))
		}
		policy.Spec.Ingress = append(policy.Spec.Ingress, networkingv1.NetworkPolicyIngressRule{Ports: ports, From: policyPeers(dobj, np.From)})
	}
	if np.RouteFrom != nil && dobj.Spec.Route != nil {
		var ports []networkingv1.NetworkPolicyPort
		for _, p := range dobj.Spec.Ports {
			if RoutesToPort(dobj, p) {
				ports = append(ports, policyPort(portProtocol(p), intstr.FromInt32(p.ContainerPort)))
			}
		}
		policy.Spec.Ingress = append(policy.Spec.Ingress, networkingv1.NetworkPolicyIngressRule{Ports: ports, From: policyPeers(dobj, []appv1.NetworkPeer{*np.RouteFrom})})
	}
	if port, ok := monitoringPort(dobj); ok && np.MonitoringFrom != nil {
		policy.Spec.Ingress = append(policy.Spec.Ingress, networkingv1.NetworkPolicyIngressRule{
			Ports: []networkingv1.NetworkPolicyPort{policyPort(corev1.ProtocolTCP, intstr.FromInt32(port))},
			From:  policyPeers(dobj, []appv1.NetworkPeer{*np.MonitoringFrom}),
		})
	}
	if np.Egress != nil {
		policy.Spec.PolicyTypes = append(policy.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		policy.Spec.Egress = []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{
			policyPort(corev1.ProtocolUDP, dnsPort),
			policyPort(corev1.ProtocolTCP, dnsPort),
		}}}
		if len(np.Egress.To) > 0 {
			policy.Spec.Egress = append(policy.Spec.Egress, networkingv1.NetworkPolicyEgressRule{To: policyPeers(dobj, np.Egress.To)})
		}
	}
	withChildMetadata(&policy.ObjectMeta, np.Metadata)
	return policy
}

// monitoringPort is the number of the container port spec.monitoring
// names: one of spec.ports, or a named port of a sidecar; false without
// monitoring, or for a name admission would have refused.
func monitoringPort(dobj *appv1.DeployObject) (int32, bool) {
	m := dobj.Spec.Monitoring
	if m == nil {
		return 0, false
	}
	for _, p := range dobj.Spec.Ports {
		if p.Name == m.Port {
			return p.ContainerPort, true
		}
	}
	for _, c := range dobj.Spec.Sidecars {
		for _, p := range c.Ports {
			if p.Name == m.Port {
				return p.ContainerPort, true
			}
		}
	}
	return 0, false
}

// ScrapeBlocked says why dobj's NetworkPolicy admits nobody to the port
// spec.monitoring scrapes; "" when it admits the scraper, or dobj asks for
// no policy or no monitoring. The scraper is admitted by monitoringFrom,
// or by from when from reaches the port: the peers of from are then the
// user's word for who may reach it, Prometheus among them or not, which
// the controller cannot tell. from reaches spec.ports only, every port
// when there are none.
func ScrapeBlocked(dobj *appv1.DeployObject) string {
	np, m := dobj.Spec.NetworkPolicy, dobj.Spec.Monitoring
	if np == nil || m == nil || np.MonitoringFrom != nil {
		return ""
	}
	if len(np.From) == 0 {
		return fmt.Sprintf("NetworkPolicy %s admits nobody to port %s, which Prometheus scrapes: set networkPolicy.monitoringFrom to where Prometheus runs", dobj.Name, m.Port)
	}
	if len(dobj.Spec.Ports) == 0 || MonitorKind(dobj) == KindServiceMonitor {
		return ""
	}
	return fmt.Sprintf("NetworkPolicy %s admits networkPolicy.from to spec.ports only, not to port %s of a sidecar, which Prometheus scrapes: set networkPolicy.monitoringFrom to where Prometheus runs", dobj.Name, m.Port)
}

func policyPort(protocol corev1.Protocol, port intstr.IntOrString) networkingv1.NetworkPolicyPort {
	return networkingv1.NetworkPolicyPort{Protocol: &protocol, Port: &port}
}

// policyPeers are peers as a NetworkPolicy names them; a DeployObject's
// pods are those its selector labels select.
func policyPeers(dobj *appv1.DeployObject, peers []appv1.NetworkPeer) []networkingv1.NetworkPolicyPeer {
	out := make([]networkingv1.NetworkPolicyPeer, len(peers))
	for i, p := range peers {
		switch {
		case p.DeployObject != nil:
			other := appv1.DeployObject{ObjectMeta: metav1.ObjectMeta{Name: *p.DeployObject, Namespace: dobj.Namespace}}
			out[i].PodSelector = &metav1.LabelSelector{MatchLabels: SelectorLabels(&other)}
		case p.IPBlock != nil:
			out[i].IPBlock = &networkingv1.IPBlock{CIDR: p.IPBlock.CIDR, Except: cloneSlice(p.IPBlock.Except)}
		default:
			out[i].PodSelector = labelSelector(p.PodSelector)
			out[i].NamespaceSelector = labelSelector(p.NamespaceSelector)
		}
	}
	return out
}

// labelSelector is s as a metav1.LabelSelector, a copy; nil for nil.
func labelSelector(s *appv1.LabelSelector) *metav1.LabelSelector {
	if s == nil {
		return nil
	}
	out := &metav1.LabelSelector{MatchLabels: cloneMap(s.MatchLabels)}
	for _, e := range s.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, metav1.LabelSelectorRequirement{Key: e.Key, Operator: e.Operator, Values: cloneSlice(e.Values)})
	}
	return out
}

// MergeNetworkPolicy returns live with desired's labels, owned metadata
// and spec, and whether that changed anything. When nothing changed it
// returns live itself.
func MergeNetworkPolicy(live, desired *networkingv1.NetworkPolicy) (*networkingv1.NetworkPolicy, bool) {
	if childMetadataInSync(live.ObjectMeta, desired.ObjectMeta) &&
		equality.Semantic.DeepEqual(live.Spec, desired.Spec) {
		return live, false
	}
	out := live.DeepCopy()
	mergeChildMetadata(&out.ObjectMeta, live.ObjectMeta, desired.ObjectMeta)
	out.Spec = *desired.Spec.DeepCopy()
	return out, true
}

// SlimNetworkPolicy keeps the spec, which MergeNetworkPolicy compares, and
// the metadata it reads.
func SlimNetworkPolicy(p *networkingv1.NetworkPolicy) *networkingv1.NetworkPolicy {
	p.ObjectMeta = slimMetaOwning(p.ObjectMeta)
	return p
}
