package reconcile

import (
	"context"
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/caches"
	"deployobject.dev/controller/pkg/children"
)

// A switch between the Ingress and a Gateway API route is made before it
// is broken: the route the spec no longer asks for stays (KeptRoute) until
// the one that replaces it carries traffic (see children.KeepsIngress and
// children.KeepsGatewayRoute).

func (p *pass) ingress(ctx context.Context) error {
	dobj, ns := p.dobj, p.dobj.Namespace
	if kept := keptRoute(dobj, children.WantsGatewayRoute(dobj), children.KindIngress, caches.ListerOf[networkingv1.Ingress](p.Caches).In(ns), func() bool {
		return children.KeepsIngress(dobj, p.gatewayRouteAccepted())
	}); kept != "" {
		p.out.KeptRoute = kept
		return nil
	}
	var action string
	var err error
	p.out.Ingress, action, err = children.SyncOptional(ctx, dobj, children.WantsIngress(dobj), children.DesiredIngress(dobj),
		children.UpdatedOps(children.KindIngress, caches.ListerOf[networkingv1.Ingress](p.Caches).In(ns), p.KubeClient.NetworkingV1().Ingresses(ns), children.MergeIngress, p.recheckOwner))
	return p.record(children.KindIngress, action, err)
}

// gatewayRoutes brings dobj's Gateway API routes in line, as the other
// children are: the GRPCRoute, then the HTTPRoute and the one that
// redirects to https. Without the Gateway API, or without one of the two
// kinds, there is no route of that kind to delete either; the problem is
// not retried: the controller syncs dobj again once the kind is served. An
// HTTPRoute that a GRPCRoute replaces (a port turned to gRPC) is deleted
// only once the GRPCRoute exists: the two may not serve one hostname on a
// listener, so the switch cannot wait for the GRPCRoute to be accepted.
func (p *pass) gatewayRoutes(ctx context.Context) error {
	dobj, out := p.dobj, p.out
	ns := dobj.Namespace
	unavailable := func(key, kind, name string) {
		out.Problems = append(out.Problems, children.Problem{Kind: key, Reason: appv1.ReasonGatewayAPIUnavailable,
			Message: fmt.Sprintf("the cluster does not serve %s %ss (the Gateway API CRDs are not installed); the controller makes %s %s once it does", children.GatewayAPIGroupVersion, kind, kind, name)})
	}

	if grpcRoutes := p.Gateway.GRPCRoutes(); grpcRoutes == nil {
		if children.WantsGRPCRoute(dobj) {
			unavailable(children.KindGRPCRoute, children.KindGRPCRoute, dobj.Name)
		}
	} else if kept := keptRoute(dobj, children.WantsIngress(dobj), children.KindGRPCRoute, grpcRoutes.GRPCRoutes(ns).Get, func() bool {
		return children.KeepsGatewayRoute(dobj, out.Ingress)
	}); kept != "" {
		out.KeptRoute = kept
	} else {
		desired, err := children.DesiredGRPCRoute(dobj, p.canaryWeight())
		if err != nil {
			return err
		}
		synced, action, err := children.SyncOptional(ctx, dobj, children.WantsGRPCRoute(dobj), desired,
			children.UpdatedOps(children.KindGRPCRoute, grpcRoutes.GRPCRoutes(ns).Get, p.Gateway.Client.GatewayV1().GRPCRoutes(ns), children.MergeGRPCRoute, p.recheckOwner))
		switch {
		case children.IsResourceNotServed(err):
			// The CRD was removed since the cache was built.
			p.Gateway.LostGRPC()
			if children.WantsGRPCRoute(dobj) {
				unavailable(children.KindGRPCRoute, children.KindGRPCRoute, dobj.Name)
			}
		default:
			out.GRPCRoute = synced
			if err := p.record(children.KindGRPCRoute, action, err); err != nil {
				return err
			}
		}
	}

	routes := p.Gateway.Routes()
	if routes == nil {
		if children.WantsHTTPRoute(dobj) {
			unavailable(children.KindHTTPRoute, children.KindHTTPRoute, dobj.Name)
		}
		if children.WantsHTTPSRedirect(dobj) {
			unavailable(children.KindHTTPSRedirect, children.KindHTTPRoute, children.HTTPSRedirectName(dobj))
		}
		return nil
	}
	if kept := keptRoute(dobj, children.WantsIngress(dobj), children.KindHTTPRoute, routes.HTTPRoutes(ns).Get, func() bool {
		return children.KeepsGatewayRoute(dobj, out.Ingress)
	}); kept != "" {
		out.KeptRoute = kept
		return nil
	}
	for _, r := range []struct {
		key, name string
		want      bool
		desired   func(*appv1.DeployObject) (*gatewayv1.HTTPRoute, error)
		synced    **gatewayv1.HTTPRoute
	}{
		{children.KindHTTPRoute, dobj.Name, children.WantsHTTPRoute(dobj), func(d *appv1.DeployObject) (*gatewayv1.HTTPRoute, error) {
			return children.DesiredHTTPRoute(d, p.canaryWeight())
		}, &out.HTTPRoute},
		{children.KindHTTPSRedirect, children.HTTPSRedirectName(dobj), children.WantsHTTPSRedirect(dobj), children.DesiredHTTPSRedirect, &out.HTTPSRedirect},
	} {
		if r.name == dobj.Name && children.WantsGRPCRoute(dobj) && out.GRPCRoute == nil {
			// Its replacement is not made yet.
			continue
		}
		desired, err := r.desired(dobj)
		if err != nil {
			return err
		}
		synced, action, err := children.SyncOptionalNamed(ctx, dobj, r.name, r.want, desired,
			children.UpdatedOps(children.KindHTTPRoute, routes.HTTPRoutes(ns).Get, p.Gateway.Client.GatewayV1().HTTPRoutes(ns), children.MergeHTTPRoute, p.recheckOwner))
		if children.IsResourceNotServed(err) {
			// The Gateway API CRDs were removed since the cache was built.
			p.Gateway.Lost()
			out.HTTPRoute, out.HTTPSRedirect = nil, nil
			if r.want {
				unavailable(r.key, children.KindHTTPRoute, r.name)
			}
			return nil
		}
		*r.synced = synced
		if err := p.record(r.key, action, err); err != nil {
			return err
		}
	}
	return nil
}

// gatewayRouteAccepted reports whether the Gateway API route dobj asks for
// exists, as the cache holds it, and every Gateway has accepted it.
func (p *pass) gatewayRouteAccepted() bool {
	dobj := p.dobj
	if children.WantsGRPCRoute(dobj) {
		routes := p.Gateway.GRPCRoutes()
		if routes == nil {
			return false
		}
		r, err := routes.GRPCRoutes(dobj.Namespace).Get(dobj.Name)
		return err == nil && metav1.IsControlledBy(r, dobj) && children.GRPCRouteCondition(dobj, r, nil).Status == metav1.ConditionTrue
	}
	routes := p.Gateway.Routes()
	if routes == nil {
		return false
	}
	r, err := routes.HTTPRoutes(dobj.Namespace).Get(dobj.Name)
	return err == nil && metav1.IsControlledBy(r, dobj) && children.HTTPRouteCondition(dobj, r, nil).Status == metav1.ConditionTrue
}

// keptRoute names dobj's route of kind, which its spec no longer asks for,
// when keep says it must stay until the route the spec asks for instead
// (switching: the spec asks for the other kind) carries traffic (see
// children.KeepsIngress); "" when there is no such route to keep, or it may
// go.
func keptRoute[T metav1.Object](dobj *appv1.DeployObject, switching bool, kind string, cached func(string) (T, error), keep func() bool) string {
	if !switching {
		return ""
	}
	live, err := cached(dobj.Name)
	if err != nil || !metav1.IsControlledBy(live, dobj) || !keep() {
		return ""
	}
	return kind + " " + live.GetName()
}
