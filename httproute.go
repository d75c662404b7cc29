package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gatewaylisters "sigs.k8s.io/gateway-api/pkg/client/listers/apis/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// The HTTPRoute (gateway.networking.k8s.io/v1): what the controller asks of
// it, how a live one is judged in line, what the cache keeps, how it is
// reported, and how the controller finds out that the cluster serves
// HTTPRoutes at all. It exists only while spec.route sets parentRefs.
//
// The controller owns the whole spec and its labels. The Gateway API CRDs
// fill in defaults (parent and backend group and kind, the backend weight,
// the match type), which desiredHTTPRoute sets explicitly; a live route is
// in line when it holds every value the desired one sets (covers) and
// carries the hash of the desired spec, as the HorizontalPodAutoscaler
// does, so that a field the spec stops setting is told from a default the
// CRDs may add in a later release. Writes are updates that replace the
// spec.

const kindHTTPRoute = "HTTPRoute"

// gatewayAPIGroupVersion is what discovery must serve, with httproutes.
var gatewayAPIGroupVersion = gatewayv1.SchemeGroupVersion

func wantsHTTPRoute(dobj *appv1.DeployObject) bool {
	r := dobj.Spec.Route
	return r != nil && len(r.ParentRefs) > 0
}

// desiredHTTPRoute is the HTTPRoute dobj asks for, stamped with the hash of
// its spec; nil when dobj asks for none. It sends path and below, for every
// hostname, to the Service's route port, which a backend names by number.
func desiredHTTPRoute(dobj *appv1.DeployObject) (*gatewayv1.HTTPRoute, error) {
	if !wantsHTTPRoute(dobj) {
		return nil, nil
	}
	r := dobj.Spec.Route
	var port gatewayv1.PortNumber
	for _, p := range dobj.Spec.Ports {
		if p.Name == r.Port {
			port = servicePort(p)
		}
	}
	parents := make([]gatewayv1.ParentReference, len(r.ParentRefs))
	for i, p := range r.ParentRefs {
		parents[i] = gatewayv1.ParentReference{
			Group:       ptrTo(gatewayv1.Group(gatewayv1.GroupName)),
			Kind:        ptrTo(gatewayv1.Kind("Gateway")),
			Name:        gatewayv1.ObjectName(p.Name),
			Namespace:   (*gatewayv1.Namespace)(copyPtr(p.Namespace)),
			SectionName: (*gatewayv1.SectionName)(copyPtr(p.SectionName)),
		}
	}
	var hostnames []gatewayv1.Hostname
	for _, h := range r.Hostnames {
		hostnames = append(hostnames, gatewayv1.Hostname(h))
	}
	route := &gatewayv1.HTTPRoute{
		ObjectMeta: childMeta(dobj),
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parents},
			Hostnames:       hostnames,
			Rules: []gatewayv1.HTTPRouteRule{{
				Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{
					Type:  ptrTo(gatewayv1.PathMatchPathPrefix),
					Value: ptrTo(routePath(r)),
				}}},
				BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
					BackendObjectReference: gatewayv1.BackendObjectReference{
						Group: ptrTo(gatewayv1.Group("")),
						Kind:  ptrTo(gatewayv1.Kind("Service")),
						Name:  gatewayv1.ObjectName(dobj.Name),
						Port:  &port,
					},
					Weight: ptrTo[int32](1),
				}}},
			}},
		},
	}
	hash, err := hashOf(&route.Spec)
	if err != nil {
		return nil, fmt.Errorf("hashing the desired %s: %w", kindHTTPRoute, err)
	}
	route.Annotations = map[string]string{appv1.AnnotationRouteHash: hash}
	return route, nil
}

// mergeHTTPRoute returns live with desired's labels, hash and spec, and
// whether that changed anything. When nothing changed it returns live
// itself.
func mergeHTTPRoute(live, desired *gatewayv1.HTTPRoute) (*gatewayv1.HTTPRoute, bool) {
	if live.Annotations[appv1.AnnotationRouteHash] == desired.Annotations[appv1.AnnotationRouteHash] &&
		hasLabels(live.Labels, desired.Labels) &&
		covers(live.Spec, desired.Spec) {
		return live, false
	}
	out := live.DeepCopy()
	out.Labels = withLabels(out.Labels, desired.Labels)
	out.Annotations = withLabels(out.Annotations, desired.Annotations)
	out.Spec = *desired.Spec.DeepCopy()
	return out, true
}

// slimHTTPRoute keeps the spec, the hash annotation mergeHTTPRoute reads,
// and of the status, each parent's Accepted and ResolvedRefs conditions,
// which httpRouteCondition reads.
func slimHTTPRoute(r *gatewayv1.HTTPRoute) *gatewayv1.HTTPRoute {
	r.ObjectMeta = slimMetaKeeping(r.ObjectMeta, appv1.AnnotationRouteHash)
	parents := r.Status.Parents
	for i := range parents {
		kept := parents[i].Conditions[:0]
		for _, c := range parents[i].Conditions {
			switch gatewayv1.RouteConditionType(c.Type) {
			case gatewayv1.RouteConditionAccepted, gatewayv1.RouteConditionResolvedRefs:
				kept = append(kept, metav1.Condition{Type: intern(c.Type), Status: intern(c.Status), Reason: intern(c.Reason), Message: c.Message, ObservedGeneration: c.ObservedGeneration})
			}
		}
		clear(parents[i].Conditions[len(kept):])
		parents[i] = gatewayv1.RouteParentStatus{ParentRef: parents[i].ParentRef, ControllerName: intern(parents[i].ControllerName), Conditions: kept}
	}
	r.Status = gatewayv1.HTTPRouteStatus{RouteStatus: gatewayv1.RouteStatus{Parents: parents}}
	return r
}

// httpRouteCondition reports the HTTPRoute of dobj: why it is missing
// (problem, when the sync could not make it, or the cluster does not serve
// HTTPRoutes), or whether every parent Gateway asked for has accepted it
// and resolved its backend, from the Accepted and ResolvedRefs conditions
// the Gateway controllers write for the route's current generation.
func httpRouteCondition(dobj *appv1.DeployObject, route *gatewayv1.HTTPRoute, problem *childProblem) metav1.Condition {
	c := metav1.Condition{Type: appv1.ConditionRoute, Status: metav1.ConditionFalse, Reason: appv1.ReasonProgressing}
	if problem != nil {
		c.Reason, c.Message = problem.reason, boundMessage(problem.message)
		return c
	}
	if route == nil {
		c.Message = fmt.Sprintf("%s %s does not exist yet", kindHTTPRoute, dobj.Name)
		return c
	}
	var waiting, accepted []string
	for _, ref := range route.Spec.ParentRefs {
		parent := parentName(ref, route.Namespace)
		st := parentStatus(route, ref)
		var acc, res *metav1.Condition
		if st != nil {
			acc = currentCondition(st.Conditions, gatewayv1.RouteConditionAccepted, route.Generation)
			res = currentCondition(st.Conditions, gatewayv1.RouteConditionResolvedRefs, route.Generation)
		}
		switch {
		case acc != nil && acc.Status == metav1.ConditionFalse:
			c.Reason = reasonOr(acc.Reason, "NotAccepted")
			c.Message = boundMessage(fmt.Sprintf("Gateway %s does not accept %s %s: %s", parent, kindHTTPRoute, route.Name, acc.Message))
			return c
		case res != nil && res.Status == metav1.ConditionFalse:
			c.Reason = reasonOr(res.Reason, "UnresolvedRefs")
			c.Message = boundMessage(fmt.Sprintf("Gateway %s cannot resolve the references of %s %s: %s", parent, kindHTTPRoute, route.Name, res.Message))
			return c
		case acc == nil || res == nil:
			waiting = append(waiting, parent)
		default:
			accepted = append(accepted, parent)
		}
	}
	if len(waiting) > 0 {
		c.Message = boundMessage(fmt.Sprintf("waiting for Gateway %s to accept %s %s", strings.Join(waiting, ", "), kindHTTPRoute, route.Name))
		return c
	}
	c.Status, c.Reason = metav1.ConditionTrue, appv1.ReasonAccepted
	c.Message = boundMessage(fmt.Sprintf("%s %s is accepted by Gateway %s", kindHTTPRoute, route.Name, strings.Join(accepted, ", ")))
	return c
}

// parentName is ref's Gateway as namespace/name[/sectionName].
func parentName(ref gatewayv1.ParentReference, routeNamespace string) string {
	s := string(ptrOr(ref.Namespace, gatewayv1.Namespace(routeNamespace))) + "/" + string(ref.Name)
	if ref.SectionName != nil {
		s += "/" + string(*ref.SectionName)
	}
	return s
}

// parentStatus is the status a Gateway controller wrote for ref, if any.
// A status entry names its parent as the route's spec does, with the
// defaults filled in.
func parentStatus(route *gatewayv1.HTTPRoute, ref gatewayv1.ParentReference) *gatewayv1.RouteParentStatus {
	want := parentName(ref, route.Namespace)
	for i := range route.Status.Parents {
		if parentName(route.Status.Parents[i].ParentRef, route.Namespace) == want {
			return &route.Status.Parents[i]
		}
	}
	return nil
}

// currentCondition is the condition of type t in conds, when it was
// written for generation; one written for an older spec says nothing of
// the current one.
func currentCondition(conds []metav1.Condition, t gatewayv1.RouteConditionType, generation int64) *metav1.Condition {
	c := meta.FindStatusCondition(conds, string(t))
	if c == nil || c.ObservedGeneration < generation {
		return nil
	}
	return c
}

// gatewayAPIRecheck is how often the controller asks discovery whether the
// cluster serves HTTPRoutes, until it does: one small GET, for clusters
// where the Gateway API CRDs are installed after the controller started.
// Tests set gatewayRoutes.recheck instead.
const gatewayAPIRecheck = 20 * time.Second

// gatewayRoutes is the HTTPRoute cache, which exists only once the cluster
// serves HTTPRoutes. Without the Gateway API CRDs, an informer for them
// could never sync and would hold back every other sync; instead the
// controller starts it when discovery first shows the CRDs, without a
// restart.
type gatewayRoutes struct {
	client    gatewayclient.Interface
	discovery discovery.DiscoveryInterface
	// informer builds the HTTPRoute informer, with its transform.
	informer func() (cache.SharedIndexInformer, error)
	// recheck is gatewayAPIRecheck, or shorter in tests.
	recheck time.Duration

	mu     sync.RWMutex
	lister gatewaylisters.HTTPRouteLister
	// decided: discovery has answered that HTTPRoutes are not served, or
	// they are and their cache has synced. Until then syncs wait (see
	// hasSynced): a DeployObject synced before the cache of a cluster that
	// serves HTTPRoutes would be reported GatewayAPIUnavailable for a
	// moment at every restart.
	decided atomic.Bool
}

// hasSynced reports whether syncs may start: whether the cluster serves
// HTTPRoutes is known, and if it does, their cache has synced.
func (g *gatewayRoutes) hasSynced() bool {
	return g == nil || g.decided.Load()
}

// routes is the HTTPRoute lister, or nil while the cluster does not serve
// HTTPRoutes or the cache has not synced yet.
func (g *gatewayRoutes) routes() gatewaylisters.HTTPRouteLister {
	if g == nil {
		return nil
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.lister
}

// served asks discovery whether the cluster serves HTTPRoutes.
func (g *gatewayRoutes) served() (bool, error) {
	list, err := g.discovery.ServerResourcesForGroupVersion(gatewayAPIGroupVersion.String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("discovering %s: %w", gatewayAPIGroupVersion, err)
	}
	for _, r := range list.APIResources {
		if r.Name == "httproutes" {
			return true, nil
		}
	}
	return false, nil
}

// run waits until the cluster serves HTTPRoutes, asking every
// gatewayAPIRecheck, then starts the HTTPRoute informer with handler, and
// once it has synced makes its lister available and calls synced. It
// returns when ctx ends.
func (g *gatewayRoutes) run(ctx context.Context, handler cache.ResourceEventHandler, synced func()) {
	logger := klog.FromContext(ctx)
	reported := false
	err := wait.PollUntilContextCancel(ctx, g.recheck, true, func(context.Context) (bool, error) {
		ok, err := g.served()
		if err != nil {
			logger.V(2).Info("Could not discover the Gateway API; asking again", "err", err, "in", g.recheck)
			return false, nil
		}
		if !ok && !reported {
			logger.Info("The cluster does not serve Gateway API HTTPRoutes; routes with parentRefs wait for them", "groupVersion", gatewayAPIGroupVersion, "recheck", g.recheck)
			reported = true
			g.decided.Store(true)
		}
		return ok, nil
	})
	if err != nil {
		return
	}
	inf, err := g.informer()
	if err != nil {
		logger.Error(err, "Building the HTTPRoute informer")
		return
	}
	if _, err := inf.AddEventHandlerWithOptions(handler, cache.HandlerOptions{Logger: &logger}); err != nil {
		logger.Error(err, "Adding the HTTPRoute event handler")
		return
	}
	go inf.RunWithContext(ctx)
	if !cache.WaitForNamedCacheSyncWithContext(ctx, inf.HasSynced) {
		return
	}
	g.mu.Lock()
	g.lister = gatewaylisters.NewHTTPRouteLister(inf.GetIndexer())
	g.mu.Unlock()
	g.decided.Store(true)
	logger.Info("Watching Gateway API HTTPRoutes", "groupVersion", gatewayAPIGroupVersion)
	synced()
}
