package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NetworkPolicy asks for a NetworkPolicy (networking.k8s.io/v1) of the same
// name for the DeployObject's pods. It admits traffic to the pods' ports
// (spec.ports; every port when there are none) only from the peers in from,
// to the ports spec.route sends to also from routeFrom, and to the port
// spec.monitoring scrapes also from monitoringFrom; everything else is
// refused, so with none of them set nothing may reach the pods. With egress set, the pods
// may reach only egress.to, and DNS (port 53, UDP and TCP, anywhere, so
// that name resolution keeps working wherever the cluster's resolver
// runs). A NetworkPolicy is enforced by the cluster's network plugin; on a
// cluster whose plugin does not enforce them it changes nothing.
type NetworkPolicy struct {
	// from are the peers that may reach the pods' ports: at most 16.
	// {podSelector: {}} admits every pod of the namespace.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	From []NetworkPeer `json:"from,omitempty"`

	// routeFrom is where the proxies that carry spec.route's traffic run
	// (the ingress controller's or the Gateway's pods): they may reach the
	// ports the route sends to. Set it when spec.route is set and from does
	// not admit them already.
	// +optional
	RouteFrom *NetworkPeer `json:"routeFrom,omitempty"`

	// monitoringFrom is where the scraper of spec.monitoring runs
	// (Prometheus' pods): it may reach monitoring.port, and no other port.
	// Set it when spec.monitoring is set and from does not admit the
	// scraper to that port already: from reaches only spec.ports, so a
	// sidecar's port needs it. Without it the Monitoring condition says
	// that the policy blocks the scrape.
	// +optional
	MonitoringFrom *NetworkPeer `json:"monitoringFrom,omitempty"`

	// egress, when set, restricts the traffic the pods send: only to
	// egress.to, and DNS. Unset, the pods may send anywhere.
	// +optional
	Egress *NetworkEgress `json:"egress,omitempty"`

	// metadata are labels and annotations for the NetworkPolicy; see
	// ChildMetadata for who owns which key.
	// +optional
	Metadata *ChildMetadata `json:"metadata,omitempty"`
}

// NetworkEgress restricts the traffic the pods send.
type NetworkEgress struct {
	// to are the peers the pods may reach on any port, besides DNS: at most
	// 16. Empty: DNS only.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	To []NetworkPeer `json:"to,omitempty"`
}

// NetworkPeer is one source or destination of traffic: the pods of another
// DeployObject of the namespace (deployObject), pods and namespaces by
// label (podSelector, namespaceSelector, as in a NetworkPolicy), or a range
// of IP addresses (ipBlock): exactly one of the three. A podSelector alone
// selects pods of the DeployObject's namespace, a namespaceSelector alone
// every pod of the namespaces it selects, and both the pods it selects in
// those namespaces. The namespace named N is selected by the label
// kubernetes.io/metadata.name: N, which the API server sets on every
// namespace.
//
// +kubebuilder:validation:XValidation:rule="[has(self.deployObject), has(self.podSelector) || has(self.namespaceSelector), has(self.ipBlock)].filter(x, x).size() == 1",message="a peer must set exactly one of deployObject, ipBlock, and podSelector and/or namespaceSelector"
type NetworkPeer struct {
	// deployObject names another DeployObject of the namespace (or this
	// one): its pods.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	DeployObject *string `json:"deployObject,omitempty"`

	// podSelector selects pods by label.
	// +optional
	PodSelector *LabelSelector `json:"podSelector,omitempty"`

	// namespaceSelector selects namespaces by label.
	// +optional
	NamespaceSelector *LabelSelector `json:"namespaceSelector,omitempty"`

	// ipBlock is a range of IP addresses, outside the cluster's pod
	// network as a rule: the network plugin may not apply it to pod
	// traffic.
	// +optional
	IPBlock *IPBlock `json:"ipBlock,omitempty"`
}

// IPBlock is a range of IP addresses, less some ranges within it.
//
// +kubebuilder:validation:XValidation:rule="!has(self.except) || self.except.all(e, isCIDR(e) && cidr(self.cidr).containsCIDR(e) && cidr(e).prefixLength() > cidr(self.cidr).prefixLength())",message="each except must be a CIDR strictly inside cidr",fieldPath=".except"
type IPBlock struct {
	// cidr is the range, such as "10.0.0.0/8" or "2001:db8::/32", with no
	// bits set past its prefix length.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="isCIDR(self) && cidr(self).masked() == cidr(self)",message="cidr must be a CIDR such as 10.0.0.0/8, with no bits set past its prefix length"
	CIDR string `json:"cidr"`

	// except are ranges within cidr that are not part of the peer: at most
	// 16.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=43
	Except []string `json:"except,omitempty"`
}

// LabelSelector selects objects by label, as a metav1.LabelSelector does
// and with the same fields, bounded so that admission can check them.
type LabelSelector struct {
	// matchLabels are labels the objects must have, key and value: at most
	// 16, each key a label key and each value a label value (at most 63
	// letters, digits, '-', '_' and '.', starting and ending with a letter
	// or digit, or empty).
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 317 && k.matches('^([^/]{1,253}/)?[^/]{1,63}$') && k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'))",message="matchLabels keys must be label keys: an optional DNS-subdomain prefix and '/', then a name of at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(self[k]) <= 63 && self[k].matches('^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$'))",message="matchLabels values must be label values: at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
	MatchLabels map[string]string `json:"matchLabels,omitempty"`

	// matchExpressions are requirements on the objects' labels, all of
	// which must hold: at most 16.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	MatchExpressions []LabelSelectorRequirement `json:"matchExpressions,omitempty"`
}

// LabelSelectorRequirement is a requirement on the value of one label.
//
// +kubebuilder:validation:XValidation:rule="self.operator in ['In', 'NotIn'] ? has(self.values) && size(self.values) > 0 : !has(self.values) || size(self.values) == 0",message="values are required with the operators In and NotIn, and refused with Exists and DoesNotExist",fieldPath=".values"
type LabelSelectorRequirement struct {
	// key is the label key.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="self.matches('^([^/]{1,253}/)?[^/]{1,63}$')",message="a label key is an optional DNS-subdomain prefix of at most 253 characters and '/', then a name of at most 63 characters"
	Key string `json:"key"`

	// operator is In, NotIn, Exists or DoesNotExist.
	// +required
	// +kubebuilder:validation:Enum=In;NotIn;Exists;DoesNotExist
	Operator metav1.LabelSelectorOperator `json:"operator"`

	// values are the label values In and NotIn compare with: 1 to 16.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
	Values []string `json:"values,omitempty"`
}
