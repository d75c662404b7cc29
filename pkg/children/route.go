package children

import (
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// RoutePath is the route's path prefix; the API server defaults it to "/",
// and a DeployObject read before that default existed has none.
func RoutePath(r *appv1.Route) string {
	if r.Path == "" {
		return "/"
	}
	return r.Path
}

// LoadBalancerHost is the address of one load balancer ingress point: its IP, or its
// host name when it has no IP.
func LoadBalancerHost(ip, hostname string) string {
	if ip != "" {
		return ip
	}
	return hostname
}

// A switch of spec.route from an Ingress to an HTTPRoute, or back, keeps
// the old route until the new one carries traffic, so that the application
// never loses its way in: the HTTPRoute until every Gateway accepted it,
// the Ingress until its ingress controller gave it an address. Without the
// Gateway API, an HTTPRoute never carries traffic, and the Ingress stays.

// KeepsIngress reports whether dobj's Ingress, which its spec no longer
// asks for, must stay because the HTTPRoute it asks for instead (route, as
// the cache holds it; nil when there is none yet) is not accepted yet.
func KeepsIngress(dobj *appv1.DeployObject, route *gatewayv1.HTTPRoute) bool {
	return WantsHTTPRoute(dobj) && (route == nil || HTTPRouteCondition(dobj, route, nil).Status != metav1.ConditionTrue)
}

// KeepsHTTPRoute reports whether dobj's HTTPRoute, which its spec no
// longer asks for, must stay because the Ingress it asks for instead (ing,
// as synced; nil when it could not be made) has no address yet.
func KeepsHTTPRoute(dobj *appv1.DeployObject, ing *networkingv1.Ingress) bool {
	return WantsIngress(dobj) && (ing == nil || IngressCondition(dobj, ing, nil).Status != metav1.ConditionTrue)
}
