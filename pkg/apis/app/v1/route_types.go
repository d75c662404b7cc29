package v1

// Route exposes spec.ports over HTTP, through an HTTPRoute
// (gateway.networking.k8s.io/v1) attached to Gateways when parentRefs is
// set, a GRPCRoute instead when its rules send to ports whose appProtocol
// is grpc, or through an Ingress (networking.k8s.io/v1) of an ingress
// class when ingressClassName is set: exactly one of parentRefs and
// ingressClassName. Either child has
// the DeployObject's name and, for every hostname, sends the requests that
// rules match to their ports of the Service; port (with path) is the short
// form of a single rule that sends every request under path to one port:
// exactly one of port and rules.
//
// The rules below refuse at admission what the API server would refuse in
// the HTTPRoute or the Ingress later, where the rules of the two differ the
// stricter one.
//
// +kubebuilder:validation:XValidation:rule="has(self.parentRefs) != has(self.ingressClassName)",message="route must set exactly one of parentRefs (an HTTPRoute or GRPCRoute attached to Gateways) and ingressClassName (an Ingress)"
// +kubebuilder:validation:XValidation:rule="!has(self.tlsSecretName) || has(self.ingressClassName)",message="tlsSecretName is for an Ingress (ingressClassName); with parentRefs, TLS is terminated by the Gateway's listener",fieldPath=".tlsSecretName"
// +kubebuilder:validation:XValidation:rule="has(self.port) != has(self.rules)",message="route must set exactly one of port (one rule: every request under path to one port) and rules"
// +kubebuilder:validation:XValidation:rule="!has(self.path) || has(self.port)",message="path goes with port; each of rules has its own path",fieldPath=".path"
// +kubebuilder:validation:XValidation:rule="!has(self.httpsRedirect) || has(self.parentRefs)",message="httpsRedirect is for an HTTPRoute (parentRefs): the Ingress API has no redirect; ingress controllers read theirs from annotations, which route.metadata sets",fieldPath=".httpsRedirect"
// +kubebuilder:validation:XValidation:rule="!has(self.httpsRedirect) || !has(self.parentRefs) || self.httpsRedirect.parentRefs.all(r, !self.parentRefs.exists(p, p.name == r.name && (has(p.__namespace__) ? p.__namespace__ : '-') == (has(r.__namespace__) ? r.__namespace__ : '-') && (!has(p.sectionName) || p.sectionName == r.sectionName)))",message="a listener either redirects to https or serves the route: parentRefs must not attach to a listener of httpsRedirect.parentRefs (a parentRef without sectionName attaches to every listener of its Gateway)",fieldPath=".httpsRedirect.parentRefs"
// +kubebuilder:validation:XValidation:rule="!has(self.ingressClassName) || !has(self.rules) || self.rules.all(r, !has(r.timeout))",message="timeout is for an HTTPRoute (parentRefs): the Ingress API has none; ingress controllers read theirs from annotations, which route.metadata sets",fieldPath=".rules"
type Route struct {
	// port is the name of one of spec.ports, a TCP port, that the route
	// sends every request under path to, through the Service: the short
	// form of rules with one rule. Exactly one of port and rules is set.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	Port string `json:"port,omitempty"`

	// rules send the requests whose path they match to their ports: at
	// most 16, each path and match type once. A request matched by several
	// rules goes to the most specific one: an exact match first, then the
	// longest prefix.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(r, self.exists_one(q, q.path == r.path && q.pathType == r.pathType))",message="each path and pathType may appear in one rule only"
	Rules []RouteRule `json:"rules,omitempty"`

	// hostnames are the host names the route answers for, lowercase DNS
	// names such as "shop.example.com", or a wildcard "*.example.com" as
	// the first label; at most 16, each at most 253 characters, not an IP
	// address. Without hostnames the route answers for any host its
	// Gateway listener or ingress controller accepts.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +kubebuilder:validation:items:XValidation:rule="!self.matches('^[0-9]+[.][0-9]+[.][0-9]+[.][0-9]+$')",message="a hostname must be a DNS name, not an IP address"
	Hostnames []string `json:"hostnames,omitempty"`

	// path, with port, is the prefix of the request paths the route sends
	// to the port, "/" (every path) when unset.
	// +optional
	Path HTTPPath `json:"path,omitempty"`

	// parentRefs are the Gateways the HTTPRoute or GRPCRoute attaches to:
	// at most 8; two references to the same Gateway must each name a
	// different listener (sectionName).
	// +optional
	ParentRefs GatewayRefs `json:"parentRefs,omitempty"`

	// ingressClassName is the IngressClass of the Ingress: a DNS subdomain
	// of at most 253 characters.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	IngressClassName *string `json:"ingressClassName,omitempty"`

	// tlsSecretName is the Secret, in the DeployObject's namespace, that
	// holds the certificate the Ingress serves for hostnames (HTTPS): a DNS
	// subdomain of at most 253 characters. Ingress only.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	TLSSecretName *string `json:"tlsSecretName,omitempty"`

	// httpsRedirect makes the Gateway answer plain-HTTP requests for
	// hostnames with a redirect to the same URL over https. HTTPRoute
	// (parentRefs) only: the Ingress API has no redirect, and ingress
	// controllers read theirs from annotations, which metadata sets.
	// +optional
	HTTPSRedirect *HTTPSRedirect `json:"httpsRedirect,omitempty"`

	// metadata are labels and annotations for the route (the Ingress, or
	// the HTTPRoute, its redirect and the GRPCRoute), such as
	// cert-manager's cert-manager.io/cluster-issuer or external-dns's
	// external-dns.alpha.kubernetes.io/hostname; see ChildMetadata for who
	// owns which key.
	// +optional
	Metadata *ChildMetadata `json:"metadata,omitempty"`
}

// RouteRule sends the requests whose path matches to one port.
type RouteRule struct {
	// path is the request path the rule matches, "/" when unset. To a gRPC
	// port through Gateways (a GRPCRoute), it names gRPC calls: "/" every
	// call, a prefix "/SERVICE/" every method of a service (such as
	// "/shop.v1.Cart/"), an exact "/SERVICE/METHOD" one method.
	// +optional
	// +kubebuilder:default="/"
	Path HTTPPath `json:"path,omitempty"`

	// pathType is Prefix (the default: path and every path below it, by
	// whole segments) or Exact (path alone).
	// +optional
	// +kubebuilder:default=Prefix
	PathType PathType `json:"pathType,omitempty"`

	// port is the name of one of spec.ports, a TCP port, that the rule
	// sends requests to, through the Service.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	Port string `json:"port"`

	// timeout bounds how long the Gateway waits for the whole response to
	// a request, in the Gateway API's duration format: up to four numbers
	// of at most five digits each followed by h, m, s or ms, such as "30s"
	// or "1m30s"; "0s" turns the Gateway's own timeout off. Unset, the
	// Gateway's default applies. HTTPRoute (parentRefs) only.
	// +optional
	// +kubebuilder:validation:MaxLength=28
	// +kubebuilder:validation:Pattern=`^([0-9]{1,5}(h|m|s|ms)){1,4}$`
	Timeout *string `json:"timeout,omitempty"`
}

// HTTPPath is an absolute request path of at most 1024 characters, of the
// characters a URL path may hold, without "//", "/./", "/../", an encoded
// "/" ("%2F") or a trailing "/." or "/.." (the stricter of the Ingress and
// Gateway API rules).
//
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=1024
// +kubebuilder:validation:Pattern=`^/([-A-Za-z0-9/._~!$&'()*+,;=:@]|%[0-9a-fA-F]{2})*$`
// +kubebuilder:validation:XValidation:rule="!self.contains('//') && !self.contains('/./') && !self.contains('/../') && !self.lowerAscii().contains('%2f')",message="path must not contain '//', '/./', '/../' or an encoded '/' (%2F)"
// +kubebuilder:validation:XValidation:rule="!self.endsWith('/.') && !self.endsWith('/..')",message="path must not end with '/.' or '/..'"
type HTTPPath string

// PathType is how a rule's path matches a request's.
// +kubebuilder:validation:Enum=Prefix;Exact
type PathType string

const (
	// PathPrefix matches the path and every path below it, by whole
	// segments: "/api" matches "/api" and "/api/v1", not "/apis".
	PathPrefix PathType = "Prefix"
	// PathExact matches the path alone.
	PathExact PathType = "Exact"
)

// GatewayRefs are Gateways a route attaches to: at most 8. Two
// references to the same Gateway must each name a different listener
// (sectionName). (In the rules, namespace is spelled __namespace__, as CEL
// reserves the word, and optional strings are read with has() rather than
// ?.orValue(), whose size the cost estimator cannot bound; an unset one
// reads as '-', which no namespace or listener name can be.)
//
// +listType=atomic
// +kubebuilder:validation:MinItems=1
// +kubebuilder:validation:MaxItems=8
// +kubebuilder:validation:XValidation:rule="self.all(p, self.exists_one(q, q.name == p.name && (has(q.__namespace__) ? q.__namespace__ : '-') == (has(p.__namespace__) ? p.__namespace__ : '-') && (has(q.sectionName) ? q.sectionName : '-') == (has(p.sectionName) ? p.sectionName : '-')))",message="parentRefs must be unique"
// +kubebuilder:validation:XValidation:rule="self.all(p, has(p.sectionName) || self.exists_one(q, q.name == p.name && (has(q.__namespace__) ? q.__namespace__ : '-') == (has(p.__namespace__) ? p.__namespace__ : '-')))",message="two parentRefs to the same Gateway must each set sectionName"
type GatewayRefs []GatewayRef

// HTTPSRedirect names the Gateway listeners that redirect to https: the
// controller keeps a second HTTPRoute, NAME.https-redirect, attached to
// them, whose one rule answers every request for the route's hostnames
// with a 301 redirect to the same URL over https.
//
// +kubebuilder:validation:XValidation:rule="self.parentRefs.all(r, has(r.sectionName))",message="each httpsRedirect parentRef must name the listener (sectionName) that redirects: a Gateway's other listeners serve the route",fieldPath=".parentRefs"
type HTTPSRedirect struct {
	// parentRefs are the plain-HTTP listeners, each a Gateway and its
	// sectionName, that answer with the redirect. The route's own
	// parentRefs must not attach to them, or the redirect would compete
	// with the route on the same listener.
	// +required
	ParentRefs GatewayRefs `json:"parentRefs"`
}

// GatewayRef names a Gateway (gateway.networking.k8s.io) the HTTPRoute
// attaches to, and optionally one of its listeners.
type GatewayRef struct {
	// name is the Gateway's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// namespace is the Gateway's namespace, the DeployObject's when unset.
	// A Gateway in another namespace must allow routes from this one.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace *string `json:"namespace,omitempty"`

	// sectionName is the name of one listener of the Gateway; unset
	// attaches to every listener that allows it.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	SectionName *string `json:"sectionName,omitempty"`
}

// AddressType tells what an Address is.
// +kubebuilder:validation:Enum=ServiceDNS;LoadBalancer;URL
type AddressType string

const (
	// AddressServiceDNS is the Service's DNS name inside the cluster,
	// NAME.NAMESPACE.svc, with its ports.
	AddressServiceDNS AddressType = "ServiceDNS"
	// AddressLoadBalancer is an IP address or host name a LoadBalancer
	// Service was given, with its ports.
	AddressLoadBalancer AddressType = "LoadBalancer"
	// AddressURL is a URL of the route.
	AddressURL AddressType = "URL"
)

// Address is one place where the application can be reached.
type Address struct {
	// type is ServiceDNS, LoadBalancer or URL.
	// +required
	Type AddressType `json:"type"`

	// value is a host name or IP address (ServiceDNS, LoadBalancer) or a
	// URL.
	// +required
	// +kubebuilder:validation:MaxLength=1300
	Value string `json:"value"`

	// ports are the Service ports reachable at value (ServiceDNS,
	// LoadBalancer).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Ports []int32 `json:"ports,omitempty"`
}
