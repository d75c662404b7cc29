package children

import (
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// The GRPCRoute (gateway.networking.k8s.io/v1): what the controller asks of
// it, how a live one is judged in line, what the cache keeps and how it is
// reported. It takes the HTTPRoute's place when spec.route sets parentRefs
// and its rules send to ports whose appProtocol is grpc (admission keeps
// a route from sending to both kinds of port: a Gateway listener may not
// serve one hostname with an HTTPRoute and a GRPCRoute). It is owned,
// defaulted and written as the HTTPRoute is: the whole spec, the labels,
// and the hash of the spec in appv1.AnnotationRouteHash.

// KindGRPCRoute names the GRPCRoute in problems and events.
const KindGRPCRoute = "GRPCRoute"

// AppProtocolGRPC is the appProtocol of a port that serves gRPC.
const AppProtocolGRPC = "grpc"

// WantsGRPCRoute reports whether dobj asks for a GRPCRoute: a route
// attached to Gateways whose (first) rule sends to a gRPC port.
func WantsGRPCRoute(dobj *appv1.DeployObject) bool {
	r := dobj.Spec.Route
	return r != nil && len(r.ParentRefs) > 0 && routesGRPC(dobj)
}

// routesGRPC reports whether dobj's route sends to gRPC ports only, each
// rule with a path that names gRPC calls. Admission refuses anything else
// with parentRefs since GRPCRoutes exist; a DeployObject admitted before
// may send to a gRPC port by any path, and keeps its HTTPRoute.
func routesGRPC(dobj *appv1.DeployObject) bool {
	for _, rule := range RouteRules(dobj.Spec.Route) {
		if !grpcPort(dobj, rule.Port) || rule.Timeout != nil || !grpcPath(rule) {
			return false
		}
	}
	return true
}

// grpcPort reports whether the port of dobj named name serves gRPC.
func grpcPort(dobj *appv1.DeployObject, name string) bool {
	for _, p := range dobj.Spec.Ports {
		if p.Name == name {
			return ptr.Deref(p.AppProtocol, "") == AppProtocolGRPC
		}
	}
	return false
}

// grpcService and grpcMethod are the names a gRPC path holds, as the
// GRPCRoute CRD takes them.
var (
	grpcService = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
	grpcMethod  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// grpcPath reports whether rule's path names gRPC calls: "/" (a prefix:
// every call), "/SERVICE/" (a prefix: a service) or "/SERVICE/METHOD"
// (exact: a method).
func grpcPath(rule appv1.RouteRule) bool {
	if rule.Path == "/" {
		return rule.PathType == appv1.PathPrefix
	}
	service, method, ok := strings.Cut(strings.TrimPrefix(string(rule.Path), "/"), "/")
	if !ok || !grpcService.MatchString(service) {
		return false
	}
	if rule.PathType == appv1.PathPrefix {
		return method == ""
	}
	return grpcMethod.MatchString(method)
}

// DesiredGRPCRoute is the GRPCRoute dobj asks for, stamped with the hash of
// its spec; nil when dobj asks for none. Each route rule becomes a rule
// that sends to its port by number: a path of "/" matches every call,
// "/SERVICE/" every method of a service, and an exact "/SERVICE/METHOD"
// one method (the paths of gRPC calls). During a canary (canaryWeight set)
// each rule sends canaryWeight percent to the canary Service, as the
// HTTPRoute does.
func DesiredGRPCRoute(dobj *appv1.DeployObject, canaryWeight *int32) (*gatewayv1.GRPCRoute, error) {
	if !WantsGRPCRoute(dobj) {
		return nil, nil
	}
	r := dobj.Spec.Route
	route := &gatewayv1.GRPCRoute{
		ObjectMeta: childMeta(dobj),
		Spec: gatewayv1.GRPCRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parentReferences(r.ParentRefs)},
			Hostnames:       hostnames(r),
		},
	}
	for _, rule := range RouteRules(r) {
		out := gatewayv1.GRPCRouteRule{BackendRefs: asBackendRefs(serviceBackends(dobj, rule.Port, canaryWeight), func(b gatewayv1.BackendRef) gatewayv1.GRPCBackendRef {
			return gatewayv1.GRPCBackendRef{BackendRef: b}
		})}
		if m := methodMatch(rule); m != nil {
			out.Matches = []gatewayv1.GRPCRouteMatch{{Method: m}}
		}
		route.Spec.Rules = append(route.Spec.Rules, out)
	}
	if err := stampRoute(&route.ObjectMeta, &route.Spec, KindGRPCRoute, r); err != nil {
		return nil, err
	}
	return route, nil
}

// methodMatch is the gRPC method a rule's path names, as an exact match
// with the type the CRD would default; nil for "/", every call.
func methodMatch(rule appv1.RouteRule) *gatewayv1.GRPCMethodMatch {
	service, method, _ := strings.Cut(strings.Trim(string(rule.Path), "/"), "/")
	if service == "" {
		return nil
	}
	m := &gatewayv1.GRPCMethodMatch{Type: ptr.To(gatewayv1.GRPCMethodMatchExact), Service: ptr.To(service)}
	if method != "" {
		m.Method = ptr.To(method)
	}
	return m
}

// MergeGRPCRoute returns live with desired's labels, hash and spec, and
// whether that changed anything. When nothing changed it returns live
// itself.
func MergeGRPCRoute(live, desired *gatewayv1.GRPCRoute) (*gatewayv1.GRPCRoute, bool) {
	if routeInSync(live.ObjectMeta, desired.ObjectMeta, live.Spec, desired.Spec) {
		return live, false
	}
	out := live.DeepCopy()
	mergeChildMetadata(&out.ObjectMeta, live.ObjectMeta, desired.ObjectMeta)
	out.Spec = *desired.Spec.DeepCopy()
	return out, true
}

// GRPCRouteCanaryWeight is the weight of dobj's canary Service in r, a
// live GRPCRoute, as HTTPRouteCanaryWeight reads it in an HTTPRoute.
func GRPCRouteCanaryWeight(r *gatewayv1.GRPCRoute, dobj *appv1.DeployObject) *int32 {
	if r == nil {
		return nil
	}
	var w *int32
	for _, rule := range r.Spec.Rules {
		for _, b := range rule.BackendRefs {
			w = higherCanaryWeight(w, b.BackendRef, dobj)
		}
	}
	return w
}

// SlimGRPCRoute keeps what SlimHTTPRoute keeps of an HTTPRoute.
func SlimGRPCRoute(r *gatewayv1.GRPCRoute) *gatewayv1.GRPCRoute {
	r.TypeMeta = metav1.TypeMeta{}
	r.ObjectMeta = slimMetaOwning(r.ObjectMeta, appv1.AnnotationRouteHash)
	r.Status = gatewayv1.GRPCRouteStatus{RouteStatus: slimRouteStatus(r.Status.RouteStatus)}
	return r
}

// GRPCRouteCondition reports the GRPCRoute of dobj as HTTPRouteCondition
// reports an HTTPRoute.
func GRPCRouteCondition(dobj *appv1.DeployObject, route *gatewayv1.GRPCRoute, problem *Problem) metav1.Condition {
	if route == nil || problem != nil {
		return missingRouteCondition(KindGRPCRoute, dobj, problem)
	}
	return gatewayRouteCondition(KindGRPCRoute, &route.ObjectMeta, route.Spec.ParentRefs, route.Status.RouteStatus)
}
