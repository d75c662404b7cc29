package children

import (
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// RouteRules are r's rules with their defaults filled in: port and path as
// the one rule they stand for, or rules. A path is "/" when unset: the API
// server defaults a rule's, and the short form's has no default (so that
// it may stay unset beside rules) but means the same.
func RouteRules(r *appv1.Route) []appv1.RouteRule {
	if len(r.Rules) == 0 {
		return []appv1.RouteRule{{Path: orRoot(r.Path), PathType: appv1.PathPrefix, Port: r.Port}}
	}
	rules := make([]appv1.RouteRule, len(r.Rules))
	for i, rule := range r.Rules {
		rules[i] = appv1.RouteRule{Path: orRoot(rule.Path), PathType: rule.PathType, Port: rule.Port, Timeout: copyPtr(rule.Timeout)}
		if rules[i].PathType == "" {
			rules[i].PathType = appv1.PathPrefix
		}
	}
	return rules
}

func orRoot(p appv1.HTTPPath) appv1.HTTPPath {
	if p == "" {
		return "/"
	}
	return p
}

// RoutesToPort reports whether one of dobj's route rules sends requests to
// port p.
func RoutesToPort(dobj *appv1.DeployObject, p appv1.Port) bool {
	if dobj.Spec.Route == nil {
		return false
	}
	for _, rule := range RouteRules(dobj.Spec.Route) {
		if rule.Port == p.Name {
			return true
		}
	}
	return false
}

// LoadBalancerHost is the address of one load balancer ingress point: its IP, or its
// host name when it has no IP.
func LoadBalancerHost(ip, hostname string) string {
	if ip != "" {
		return ip
	}
	return hostname
}

// A switch of spec.route from an Ingress to a Gateway API route (an
// HTTPRoute or a GRPCRoute), or back, keeps the old route until the new
// one carries traffic, so that the application never loses its way in: the
// Gateway API route until every Gateway accepted it, the Ingress until its
// ingress controller gave it an address. Without the Gateway API, its
// route never carries traffic, and the Ingress stays.

// KeepsIngress reports whether dobj's Ingress, which its spec no longer
// asks for, must stay because the Gateway API route it asks for instead
// is not accepted yet (accepted: it exists, and its Route condition is
// True).
func KeepsIngress(dobj *appv1.DeployObject, accepted bool) bool {
	return WantsGatewayRoute(dobj) && !accepted
}

// KeepsGatewayRoute reports whether dobj's HTTPRoute or GRPCRoute, which
// its spec no longer asks for, must stay because the Ingress it asks for
// instead (ing, as synced; nil when it could not be made) has no address
// yet.
func KeepsGatewayRoute(dobj *appv1.DeployObject, ing *networkingv1.Ingress) bool {
	return WantsIngress(dobj) && (ing == nil || IngressCondition(dobj, ing, nil).Status != metav1.ConditionTrue)
}
