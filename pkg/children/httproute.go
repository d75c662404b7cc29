package children

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// The HTTPRoute (gateway.networking.k8s.io/v1): what the controller asks of
// it, how a live one is judged in line, what the cache keeps and how it is
// reported. It exists only while spec.route sets parentRefs and sends to
// ports other than gRPC ones (see grpcroute.go); a second one, which
// redirects to https, while spec.route sets httpsRedirect.
//
// The controller owns the whole spec and its labels. The Gateway API CRDs
// fill in defaults (parent and backend group and kind, the backend weight,
// the match type), which DesiredHTTPRoute sets explicitly; a live route is
// in line when it holds every value the desired one sets (covers) and
// carries the hash of the desired spec, as the HorizontalPodAutoscaler
// does, so that a field the spec stops setting is told from a default the
// CRDs may add in a later release. Writes are updates that replace the
// spec.

// KindHTTPRoute names the HTTPRoute in problems and events.
const KindHTTPRoute = "HTTPRoute"

// GatewayAPIGroupVersion is what discovery must serve, with httproutes and
// grpcroutes.
var GatewayAPIGroupVersion = gatewayv1.SchemeGroupVersion

// WantsGatewayRoute reports whether dobj asks for a route attached to
// Gateways: an HTTPRoute, or a GRPCRoute for gRPC ports.
func WantsGatewayRoute(dobj *appv1.DeployObject) bool {
	r := dobj.Spec.Route
	return r != nil && len(r.ParentRefs) > 0
}

// WantsHTTPRoute reports whether dobj asks for an HTTPRoute.
func WantsHTTPRoute(dobj *appv1.DeployObject) bool {
	return WantsGatewayRoute(dobj) && !routesGRPC(dobj)
}

// DesiredHTTPRoute is the HTTPRoute dobj asks for, stamped with the hash of
// its spec; nil when dobj asks for none. It has a rule per route rule,
// for every hostname, sending to the Service's port, which a backend names
// by number; during a canary (canaryWeight set), canaryWeight percent of
// it to the canary Service's (see serviceBackends).
func DesiredHTTPRoute(dobj *appv1.DeployObject, canaryWeight *int32) (*gatewayv1.HTTPRoute, error) {
	if !WantsHTTPRoute(dobj) {
		return nil, nil
	}
	r := dobj.Spec.Route
	route := &gatewayv1.HTTPRoute{
		ObjectMeta: childMeta(dobj),
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parentReferences(r.ParentRefs)},
			Hostnames:       hostnames(r),
		},
	}
	for _, rule := range RouteRules(r) {
		match := gatewayv1.PathMatchPathPrefix
		if rule.PathType == appv1.PathExact {
			match = gatewayv1.PathMatchExact
		}
		out := gatewayv1.HTTPRouteRule{
			Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{
				Type:  ptr.To(match),
				Value: ptr.To(string(rule.Path)),
			}}},
			BackendRefs: asBackendRefs(serviceBackends(dobj, rule.Port, canaryWeight), func(b gatewayv1.BackendRef) gatewayv1.HTTPBackendRef {
				return gatewayv1.HTTPBackendRef{BackendRef: b}
			}),
		}
		if rule.Timeout != nil {
			out.Timeouts = &gatewayv1.HTTPRouteTimeouts{Request: ptr.To(gatewayv1.Duration(*rule.Timeout))}
		}
		route.Spec.Rules = append(route.Spec.Rules, out)
	}
	return stampedRoute(route, r)
}

// KindHTTPSRedirect is the key of the problems of the HTTPRoute that
// redirects to https, told apart from the route's own.
const KindHTTPSRedirect = "HTTPRoute (https redirect)"

// WantsHTTPSRedirect reports whether dobj asks for the HTTPRoute that
// redirects to https.
func WantsHTTPSRedirect(dobj *appv1.DeployObject) bool {
	return WantsGatewayRoute(dobj) && dobj.Spec.Route.HTTPSRedirect != nil
}

// HTTPSRedirectName is the name of dobj's HTTPRoute that redirects to
// https. A DeployObject's name has no dot, so it is no other DeployObject's
// child's name.
func HTTPSRedirectName(dobj *appv1.DeployObject) string {
	return dobj.Name + ".https-redirect"
}

// DesiredHTTPSRedirect is the HTTPRoute dobj asks for on the listeners of
// route.httpsRedirect, stamped with the hash of its spec; nil when dobj
// asks for none. Its one rule answers every request for the route's
// hostnames with a permanent redirect (301) to the same URL over https.
func DesiredHTTPSRedirect(dobj *appv1.DeployObject) (*gatewayv1.HTTPRoute, error) {
	if !WantsHTTPSRedirect(dobj) {
		return nil, nil
	}
	r := dobj.Spec.Route
	route := &gatewayv1.HTTPRoute{
		ObjectMeta: childMeta(dobj),
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parentReferences(r.HTTPSRedirect.ParentRefs)},
			Hostnames:       hostnames(r),
			Rules: []gatewayv1.HTTPRouteRule{{
				Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{
					Type:  ptr.To(gatewayv1.PathMatchPathPrefix),
					Value: ptr.To("/"),
				}}},
				Filters: []gatewayv1.HTTPRouteFilter{{
					Type: gatewayv1.HTTPRouteFilterRequestRedirect,
					RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{
						Scheme:     ptr.To("https"),
						StatusCode: ptr.To(301),
					},
				}},
			}},
		},
	}
	route.Name = HTTPSRedirectName(dobj)
	return stampedRoute(route, r)
}

// stampedRoute is route with the hash of its spec and r's metadata.
func stampedRoute(route *gatewayv1.HTTPRoute, r *appv1.Route) (*gatewayv1.HTTPRoute, error) {
	if err := stampRoute(&route.ObjectMeta, &route.Spec, KindHTTPRoute, r); err != nil {
		return nil, err
	}
	return route, nil
}

// stampRoute sets on meta, a desired Gateway API route's of kind, the hash
// of its spec and r's labels and annotations.
func stampRoute(meta *metav1.ObjectMeta, spec any, kind string, r *appv1.Route) error {
	hash, err := desiredHash(spec)
	if err != nil {
		return fmt.Errorf("hashing the desired %s: %w", kind, err)
	}
	meta.Annotations = map[string]string{appv1.AnnotationRouteHash: hash}
	withChildMetadata(meta, r.Metadata)
	return nil
}

// serviceBackends are the backends of a route rule that sends to the port
// named port: dobj's Service, with the weight the Gateway API CRDs would
// default; during a canary, the Service and the canary Service, with the
// weights 100-canaryWeight and canaryWeight. The pair always sums to 100:
// the Gateway API leaves a rule whose weights are all zero undefined
// (Gateways answer it with 500 or 503), and a canary weight outside
// 0..100 is taken as the nearest bound rather than written as that.
func serviceBackends(dobj *appv1.DeployObject, port string, canaryWeight *int32) []gatewayv1.BackendRef {
	if canaryWeight == nil {
		return []gatewayv1.BackendRef{serviceBackend(dobj, dobj.Name, port, 1)}
	}
	w := min(max(*canaryWeight, 0), 100)
	return []gatewayv1.BackendRef{
		serviceBackend(dobj, dobj.Name, port, 100-w),
		serviceBackend(dobj, CanaryServiceName(dobj), port, w),
	}
}

// serviceBackend is dobj's Service named name as a route's backend, at the
// number of the port named port, with weight, and with the kind and group
// the Gateway API CRDs would default.
func serviceBackend(dobj *appv1.DeployObject, name, port string, weight int32) gatewayv1.BackendRef {
	var number gatewayv1.PortNumber
	for _, p := range dobj.Spec.Ports {
		if p.Name == port {
			number = ServicePort(p)
		}
	}
	return gatewayv1.BackendRef{
		BackendObjectReference: gatewayv1.BackendObjectReference{
			Group: ptr.To(gatewayv1.Group("")),
			Kind:  ptr.To(gatewayv1.Kind("Service")),
			Name:  gatewayv1.ObjectName(name),
			Port:  &number,
		},
		Weight: ptr.To(weight),
	}
}

// asBackendRefs are refs as the rules of a kind of route hold them (wrap).
func asBackendRefs[R any](refs []gatewayv1.BackendRef, wrap func(gatewayv1.BackendRef) R) []R {
	out := make([]R, len(refs))
	for i, b := range refs {
		out[i] = wrap(b)
	}
	return out
}

// HTTPRouteCanaryWeight is the weight of dobj's canary Service in r, a
// live HTTPRoute: what the route sends the canary now, which a canary
// continues from after a restart. Nil when no rule sends to the canary
// Service (or r is nil); the highest when rules disagree, so that a
// weight written to some rules only is not taken for a lower one.
func HTTPRouteCanaryWeight(r *gatewayv1.HTTPRoute, dobj *appv1.DeployObject) *int32 {
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

// higherCanaryWeight is the higher of w and b's weight when b is dobj's
// canary Service, w otherwise. An unset weight is 1, the CRDs' default.
func higherCanaryWeight(w *int32, b gatewayv1.BackendRef, dobj *appv1.DeployObject) *int32 {
	if string(b.Name) != CanaryServiceName(dobj) {
		return w
	}
	bw := ptr.Deref(b.Weight, 1)
	if w != nil && *w >= bw {
		return w
	}
	return &bw
}

// parentReferences are refs as a route names them, with the group and
// kind the Gateway API CRDs would default.
func parentReferences(refs []appv1.GatewayRef) []gatewayv1.ParentReference {
	parents := make([]gatewayv1.ParentReference, len(refs))
	for i, p := range refs {
		parents[i] = gatewayv1.ParentReference{
			Group:       ptr.To(gatewayv1.Group(gatewayv1.GroupName)),
			Kind:        ptr.To(gatewayv1.Kind("Gateway")),
			Name:        gatewayv1.ObjectName(p.Name),
			Namespace:   (*gatewayv1.Namespace)(copyPtr(p.Namespace)),
			SectionName: (*gatewayv1.SectionName)(copyPtr(p.SectionName)),
		}
	}
	return parents
}

func hostnames(r *appv1.Route) []gatewayv1.Hostname {
	var out []gatewayv1.Hostname
	for _, h := range r.Hostnames {
		out = append(out, gatewayv1.Hostname(h))
	}
	return out
}

// MergeHTTPRoute returns live with desired's labels, hash and spec, and
// whether that changed anything. When nothing changed it returns live
// itself.
func MergeHTTPRoute(live, desired *gatewayv1.HTTPRoute) (*gatewayv1.HTTPRoute, bool) {
	if routeInSync(live.ObjectMeta, desired.ObjectMeta, live.Spec, desired.Spec) {
		return live, false
	}
	out := live.DeepCopy()
	mergeChildMetadata(&out.ObjectMeta, live.ObjectMeta, desired.ObjectMeta)
	out.Spec = *desired.Spec.DeepCopy()
	return out, true
}

// routeInSync reports whether a live Gateway API route, by its metadata
// and spec, is in line with the desired one: the same hash of the spec,
// the owned labels and annotations, and every value the desired spec sets.
func routeInSync[S any](live, desired metav1.ObjectMeta, liveSpec, desiredSpec S) bool {
	return live.Annotations[appv1.AnnotationRouteHash] == desired.Annotations[appv1.AnnotationRouteHash] &&
		childMetadataInSync(live, desired) && Covers(liveSpec, desiredSpec)
}

// SlimHTTPRoute keeps the spec, the hash annotation MergeHTTPRoute reads,
// and of the status, each parent's Accepted and ResolvedRefs conditions,
// which HTTPRouteCondition reads; not the kind and API version.
func SlimHTTPRoute(r *gatewayv1.HTTPRoute) *gatewayv1.HTTPRoute {
	// A route from a list and one from a watch must be cached alike (see
	// caches.TestTransformCachesListedAndWatchedAlike): only one of them
	// carries the kind and API version.
	r.TypeMeta = metav1.TypeMeta{}
	r.ObjectMeta = slimMetaOwning(r.ObjectMeta, appv1.AnnotationRouteHash)
	r.Status = gatewayv1.HTTPRouteStatus{RouteStatus: slimRouteStatus(r.Status.RouteStatus)}
	return r
}

// slimRouteStatus keeps of a route's status each parent's Accepted and
// ResolvedRefs conditions and who wrote them, which RouteAcceptance reads.
func slimRouteStatus(st gatewayv1.RouteStatus) gatewayv1.RouteStatus {
	parents := st.Parents
	for i := range parents {
		kept := parents[i].Conditions[:0]
		for _, c := range parents[i].Conditions {
			switch gatewayv1.RouteConditionType(c.Type) {
			case gatewayv1.RouteConditionAccepted, gatewayv1.RouteConditionResolvedRefs:
				kept = append(kept, metav1.Condition{Type: Intern(c.Type), Status: Intern(c.Status), Reason: Intern(c.Reason), Message: c.Message, ObservedGeneration: c.ObservedGeneration})
			}
		}
		clear(parents[i].Conditions[len(kept):])
		parents[i] = gatewayv1.RouteParentStatus{ParentRef: parents[i].ParentRef, ControllerName: Intern(parents[i].ControllerName), Conditions: kept}
	}
	return gatewayv1.RouteStatus{Parents: parents}
}

// HTTPRouteCondition reports the HTTPRoute of dobj: why it is missing
// (problem, when the sync could not make it, or the cluster does not serve
// HTTPRoutes), or whether every parent Gateway asked for has accepted it
// and resolved its backend, from the Accepted and ResolvedRefs conditions
// the Gateway controllers write for the route's current generation.
func HTTPRouteCondition(dobj *appv1.DeployObject, route *gatewayv1.HTTPRoute, problem *Problem) metav1.Condition {
	if route == nil || problem != nil {
		return missingRouteCondition(KindHTTPRoute, dobj, problem)
	}
	return gatewayRouteCondition(KindHTTPRoute, &route.ObjectMeta, route.Spec.ParentRefs, route.Status.RouteStatus)
}

// missingRouteCondition is the Route condition of a route of kind that
// the sync could not make (problem), or that does not exist yet.
func missingRouteCondition(kind string, dobj *appv1.DeployObject, problem *Problem) metav1.Condition {
	c := metav1.Condition{Type: appv1.ConditionRoute, Status: metav1.ConditionFalse, Reason: appv1.ReasonProgressing}
	if problem != nil {
		c.Reason, c.Message = problem.Reason, BoundMessage(problem.Message)
	} else {
		c.Message = fmt.Sprintf("%s %s does not exist yet", kind, dobj.Name)
	}
	return c
}

// gatewayRouteCondition is the Route condition of a Gateway API route of
// kind, with meta, parentRefs and status: whether every parent Gateway
// asked for has accepted its current generation and resolved its backend
// (see RouteAcceptance).
func gatewayRouteCondition(kind string, meta *metav1.ObjectMeta, refs []gatewayv1.ParentReference, status gatewayv1.RouteStatus) metav1.Condition {
	c := metav1.Condition{Type: appv1.ConditionRoute, Status: metav1.ConditionFalse, Reason: appv1.ReasonProgressing}
	a := RouteAcceptance(meta, refs, status)
	switch {
	case a.Refused != nil && a.Refused.Type == gatewayv1.RouteConditionAccepted:
		c.Reason = reasonOr(a.Refused.Reason, "NotAccepted")
		c.Message = fmt.Sprintf("Gateway %s does not accept %s %s: %s", a.Refused.Parent, kind, meta.Name, a.Refused.Message)
	case a.Refused != nil:
		c.Reason = reasonOr(a.Refused.Reason, "UnresolvedRefs")
		c.Message = fmt.Sprintf("Gateway %s cannot resolve the references of %s %s: %s", a.Refused.Parent, kind, meta.Name, a.Refused.Message)
	case len(a.Waiting) > 0:
		c.Message = fmt.Sprintf("waiting for Gateway %s to accept %s %s", strings.Join(a.Waiting, ", "), kind, meta.Name)
	case !a.Accepted:
		// Only a live route someone else edited names no parent: the
		// next sync writes the parents back.
		c.Message = fmt.Sprintf("%s %s names no parent Gateway", kind, meta.Name)
	default:
		parents := make([]string, len(refs))
		for i, ref := range refs {
			parents[i] = ParentName(ref, meta.Namespace)
		}
		c.Status, c.Reason = metav1.ConditionTrue, appv1.ReasonAccepted
		c.Message = fmt.Sprintf("%s %s is accepted by Gateway %s", kind, meta.Name, strings.Join(parents, ", "))
	}
	c.Message = BoundMessage(c.Message)
	return c
}

// RouteRefusalPasses reports whether a Gateway's refusal of a route, by
// the reason of its Accepted or ResolvedRefs condition, may end without
// anyone acting: Pending (not yet processed), and BackendNotFound for the
// Service the controller itself makes, which the Gateway's controller
// finds once its cache has it. Any other reason waits for a change of the
// route, the Gateway or a ReferenceGrant.
func RouteRefusalPasses(reason string) bool {
	return reason == string(gatewayv1.RouteReasonPending) || reason == string(gatewayv1.RouteReasonBackendNotFound)
}

// ParentName is ref's Gateway as namespace/name[/sectionName].
func ParentName(ref gatewayv1.ParentReference, routeNamespace string) string {
	s := string(ptr.Deref(ref.Namespace, gatewayv1.Namespace(routeNamespace))) + "/" + string(ref.Name)
	if ref.SectionName != nil {
		s += "/" + string(*ref.SectionName)
	}
	return s
}
