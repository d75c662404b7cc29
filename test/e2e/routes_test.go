//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/test/crdinstall"
)

// waitAddress waits until the DeployObject's status.addresses holds want.
func waitAddress(t *testing.T, ns, name string, want appv1.Address) {
	t.Helper()
	eventually(t, timeout, fmt.Sprintf("address %s on %s", want.Value, name), func() (bool, string, error) {
		d := getDO(t, ns, name)
		return slices.ContainsFunc(d.Status.Addresses, func(a appv1.Address) bool { return equality.Semantic.DeepEqual(a, want) }), fmt.Sprintf("%+v", d.Status.Addresses), nil
	})
}

// waitRouteConditionGone waits until the DeployObject has no Route
// condition for its current generation.
func waitRouteConditionGone(t *testing.T, ns, name string) {
	t.Helper()
	eventually(t, timeout, "the Route condition removed", func() (bool, string, error) {
		d := getDO(t, ns, name)
		c := meta.FindStatusCondition(d.Status.Conditions, appv1.ConditionRoute)
		return c == nil && d.Status.ObservedGeneration == d.Generation, fmt.Sprintf("%+v", c), nil
	})
}

// TestRoutesIngress: an Ingress is made for a DeployObject whose route
// sets ingressClassName; a test playing the ingress controller gives it an
// address, which the Route condition and status.addresses report; steady
// state costs no write against the API server's own handling of Ingresses;
// drift is undone; a foreign Ingress of the same name is reported and never
// written; removing the route removes the Ingress.
func TestRoutesIngress(t *testing.T) {
	t.Parallel()
	ns := newOwnNamespace(t)
	p := startChildrenController(t, ns)
	ingresses := env.kube.NetworkingV1().Ingresses(ns)

	create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Route = &appv1.Route{Port: "http", Hostnames: []string{"shop.example.com", "*.shop.example.com"}, Path: "/api", IngressClassName: ptr.To("nginx"), TLSSecretName: ptr.To("shop-tls")}
	}))
	dobj := waitReady(t, ns, "web")
	ing, err := ingresses.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the Ingress: %v", err)
	}
	if !controlledBy(ing, dobj) || len(ing.Spec.Rules) != 2 || ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Port.Name != "http" || ing.Spec.TLS[0].SecretName != "shop-tls" {
		t.Errorf("Ingress = %+v", ing.Spec)
	}
	waitChildCondition(t, ns, "web", appv1.ConditionRoute, metav1.ConditionFalse, appv1.ReasonProgressing)
	waitAddress(t, ns, "web", appv1.Address{Type: appv1.AddressServiceDNS, Value: "web." + ns + ".svc", Ports: []int32{80}})

	// The ingress controller's part: an address.
	ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.7"}}
	if _, err := ingresses.UpdateStatus(ctx, ing, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := waitChildCondition(t, ns, "web", appv1.ConditionRoute, metav1.ConditionTrue, appv1.ReasonAddressAssigned)
	t.Logf("Route condition: %s", c.Message)
	waitAddress(t, ns, "web", appv1.Address{Type: appv1.AddressURL, Value: "https://shop.example.com/api"})
	if out, err := kubectl("-n", ns, "describe", "dobj", "web"); err != nil || !strings.Contains(out, "AddressAssigned") {
		t.Errorf("kubectl describe does not show the route: %v\n%s", err, out)
	}

	expectQuiet(t, p, ns, 3*childrenResync, true)

	kubectlPatch(t, ns, "ingress/web", `[{"op":"replace","path":"/spec/rules/0/http/paths/0/path","value":"/"}]`)
	eventually(t, timeout, "the Ingress's drift corrected", func() (bool, string, error) {
		i, err := ingresses.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return i.Spec.Rules[0].HTTP.Paths[0].Path == "/api", i.Spec.Rules[0].HTTP.Paths[0].Path, nil
	})

	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.Route = nil })
	waitGone(t, "Ingress web", func() error {
		_, err := ingresses.Get(ctx, "web", metav1.GetOptions{})
		return err
	})
	waitRouteConditionGone(t, ns, "web")

	prefix := networkingv1.PathTypePrefix
	foreign, err := ingresses.Create(ctx, &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "theirs", Labels: map[string]string{"owner": "someone-else"}},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "theirs.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
			Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &prefix, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "theirs", Port: networkingv1.ServiceBackendPort{Number: 80}}}}},
		}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	create(t, newDO(ns, "theirs", func(d *appv1.DeployObject) {
		d.Spec.Route = &appv1.Route{Port: "http", IngressClassName: ptr.To("nginx")}
	}))
	waitReason(t, ns, "theirs", metav1.ConditionFalse, appv1.ReasonResourceConflict)
	waitChildCondition(t, ns, "theirs", appv1.ConditionRoute, metav1.ConditionFalse, appv1.ReasonResourceConflict)
	if got, err := ingresses.Get(ctx, "theirs", metav1.GetOptions{}); err != nil || got.ResourceVersion != foreign.ResourceVersion {
		t.Errorf("the foreign Ingress was changed: %v %+v", err, got)
	}
	expectOnlyRefusedCreates(t, ns, "ingresses", "theirs")
}

// installGatewayAPI installs the Gateway API's standard CRDs from the
// sigs.k8s.io/gateway-api module the controller is built with.
func installGatewayAPI(t *testing.T) {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api")
	cmd.Dir = env.repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("finding the gateway-api module: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard")
	if err := crdinstall.Install(ctx, env.cfg, dir); err != nil {
		t.Fatalf("installing the Gateway API CRDs from %s: %v", dir, err)
	}
}

// gatewayAPIServed reports whether the cluster serves HTTPRoutes.
func gatewayAPIServed(t *testing.T) bool {
	t.Helper()
	list, err := env.kube.Discovery().ServerResourcesForGroupVersion(gatewayv1.SchemeGroupVersion.String())
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == "httproutes" })
}

// playGateway writes the status a Gateway controller writes for every
// parent of the HTTPRoute: Accepted and ResolvedRefs with the given
// statuses and reasons, for its current generation.
func playGateway(t *testing.T, routes gatewayclient.Interface, ns, name string, accepted metav1.ConditionStatus, acceptedReason string, resolved metav1.ConditionStatus, resolvedReason string) {
	t.Helper()
	r, err := routes.GatewayV1().HTTPRoutes(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.Status.Parents = nil
	for _, ref := range r.Spec.ParentRefs {
		r.Status.Parents = append(r.Status.Parents, gatewayv1.RouteParentStatus{
			ParentRef: ref, ControllerName: "example.com/test-gateway",
			Conditions: []metav1.Condition{
				{Type: "Accepted", Status: accepted, Reason: acceptedReason, Message: "the test says " + acceptedReason, ObservedGeneration: r.Generation, LastTransitionTime: metav1.Now()},
				{Type: "ResolvedRefs", Status: resolved, Reason: resolvedReason, Message: "the test says " + resolvedReason, ObservedGeneration: r.Generation, LastTransitionTime: metav1.Now()},
			},
		})
	}
	if _, err := routes.GatewayV1().HTTPRoutes(ns).UpdateStatus(ctx, r, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestRoutesHTTPRoute: on a cluster without the Gateway API CRDs, a
// DeployObject asking for an HTTPRoute is Ready=False
// GatewayAPIUnavailable, without a retry loop; once the CRDs are installed
// the running controller makes the HTTPRoute. A test playing the Gateway
// controller accepts and rejects it, and the Route condition follows;
// steady state costs no write; drift is undone; a foreign HTTPRoute is
// never written; removing the route removes the HTTPRoute.
func TestRoutesHTTPRoute(t *testing.T) {
	ns := newOwnNamespace(t)
	routes := gatewayclient.NewForConfigOrDie(env.cfg).GatewayV1().HTTPRoutes(ns)
	gateway := gatewayclient.NewForConfigOrDie(env.cfg)
	withoutCRDs := !gatewayAPIServed(t)
	p := startChildrenController(t, ns)

	create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Route = &appv1.Route{Port: "http", Hostnames: []string{"shop.example.com"}, ParentRefs: []appv1.GatewayRef{{Name: "public", Namespace: ptr.To("infra"), SectionName: ptr.To("http")}}}
	}))
	// And a GRPCRoute, which waits the same way.
	create(t, newDO(ns, "rpc", func(d *appv1.DeployObject) {
		d.Spec.Ports = []appv1.Port{{Name: "grpc", ContainerPort: 9090, AppProtocol: ptr.To("grpc")}}
		d.Spec.Route = &appv1.Route{Port: "grpc", ParentRefs: []appv1.GatewayRef{{Name: "public", Namespace: ptr.To("infra")}}}
	}))
	if withoutCRDs {
		c := waitReason(t, ns, "web", metav1.ConditionFalse, appv1.ReasonGatewayAPIUnavailable)
		t.Logf("Ready without the Gateway API: %s", c.Message)
		if c := waitReason(t, ns, "rpc", metav1.ConditionFalse, appv1.ReasonGatewayAPIUnavailable); !strings.Contains(c.Message, "GRPCRoute") {
			t.Errorf("Ready of the gRPC route without the Gateway API: %q, want it to name GRPCRoutes", c.Message)
		}
		waitChildCondition(t, ns, "web", appv1.ConditionRoute, metav1.ConditionFalse, appv1.ReasonGatewayAPIUnavailable)
		// The rest is made and rolled out meanwhile.
		eventually(t, timeout, "the Deployment rolled out", func() (bool, string, error) {
			d := getDO(t, ns, "web")
			return d.Status.AvailableReplicas == 2, fmt.Sprintf("%d available", d.Status.AvailableReplicas), nil
		})
		// No retry loop: over three resyncs, no further status write and
		// no retry.
		expectQuiet(t, p, ns, 3*childrenResync, true)
		installGatewayAPI(t)
	} else {
		const reason = "the cluster already serves HTTPRoutes: the path without them is not shown by this run"
		if os.Getenv("CI") != "" {
			t.Fatal(reason + ", and CI's fresh cluster must show it")
		}
		t.Log(reason)
	}
	// The rest reads only this namespace: it runs beside the parallel
	// tests, once the serial ones are done.
	t.Parallel()

	var route *gatewayv1.HTTPRoute
	// The controller asks discovery every 20 s.
	eventually(t, 2*timeout, "HTTPRoute web made", func() (bool, string, error) {
		r, err := routes.Get(ctx, "web", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, "not yet", nil
		}
		route = r
		return err == nil, "", err
	})
	dobj := waitReady(t, ns, "web")
	if !controlledBy(route, dobj) || len(route.Spec.Hostnames) != 1 || *route.Spec.Rules[0].BackendRefs[0].Port != 80 {
		t.Errorf("HTTPRoute = %+v", route.Spec)
	}
	eventually(t, timeout, "GRPCRoute rpc made once the CRDs are served", func() (bool, string, error) {
		_, err := gateway.GatewayV1().GRPCRoutes(ns).Get(ctx, "rpc", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, "not yet", nil
		}
		return err == nil, "", err
	})
	waitChildCondition(t, ns, "web", appv1.ConditionRoute, metav1.ConditionFalse, appv1.ReasonProgressing)

	playGateway(t, gateway, ns, "web", metav1.ConditionTrue, "Accepted", metav1.ConditionTrue, "ResolvedRefs")
	c := waitChildCondition(t, ns, "web", appv1.ConditionRoute, metav1.ConditionTrue, appv1.ReasonAccepted)
	t.Logf("Route condition: %s", c.Message)
	waitAddress(t, ns, "web", appv1.Address{Type: appv1.AddressURL, Value: "http://shop.example.com/"})

	expectQuiet(t, p, ns, 3*childrenResync, true)
	// And across a restart, with the CRDs' defaults in both routes.
	restartWritesNothing(t, p, ns)

	playGateway(t, gateway, ns, "web", metav1.ConditionFalse, "NotAllowedByListeners", metav1.ConditionTrue, "ResolvedRefs")
	c = waitChildCondition(t, ns, "web", appv1.ConditionRoute, metav1.ConditionFalse, "NotAllowedByListeners")
	if !strings.Contains(c.Message, "Gateway infra/public/http does not accept") {
		t.Errorf("Route message %q does not say which Gateway", c.Message)
	}
	// Refused for good: not Ready, and Stalled, which kstatus reads as
	// Failed and Argo CD as Degraded.
	if ready := waitReason(t, ns, "web", metav1.ConditionFalse, appv1.ReasonRouteNotAccepted); !strings.Contains(ready.Message, "NotAllowedByListeners") {
		t.Errorf("Ready message %q does not carry the Gateway's reason", ready.Message)
	}
	waitChildCondition(t, ns, "web", appv1.ConditionStalled, metav1.ConditionTrue, appv1.ReasonRouteNotAccepted)
	// A route not accepted is no place to reach the application.
	if d := getDO(t, ns, "web"); slices.ContainsFunc(d.Status.Addresses, func(a appv1.Address) bool { return a.Type == appv1.AddressURL }) {
		t.Errorf("addresses %+v still list the rejected route", d.Status.Addresses)
	}
	playGateway(t, gateway, ns, "web", metav1.ConditionTrue, "Accepted", metav1.ConditionFalse, "BackendNotFound")
	waitChildCondition(t, ns, "web", appv1.ConditionRoute, metav1.ConditionFalse, "BackendNotFound")
	// The Gateway's controller finds the Service once its cache has it:
	// not Ready, but not Stalled either.
	waitReason(t, ns, "web", metav1.ConditionFalse, appv1.ReasonProgressing)
	if out, err := kubectl("-n", ns, "describe", "dobj", "web"); err != nil || !strings.Contains(out, "BackendNotFound") {
		t.Errorf("kubectl describe does not show the route: %v\n%s", err, out)
	}

	kubectlPatch(t, ns, "httproute/web", `[{"op":"add","path":"/spec/hostnames/-","value":"evil.example.com"}]`)
	eventually(t, timeout, "the HTTPRoute's drift corrected", func() (bool, string, error) {
		r, err := routes.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return len(r.Spec.Hostnames) == 1, fmt.Sprintf("%v", r.Spec.Hostnames), nil
	})

	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.Route = nil })
	waitGone(t, "HTTPRoute web", func() error {
		_, err := routes.Get(ctx, "web", metav1.GetOptions{})
		return err
	})
	waitRouteConditionGone(t, ns, "web")

	foreign, err := routes.Create(ctx, &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Name: "theirs", Labels: map[string]string{"owner": "someone-else"}},
		Spec:       gatewayv1.HTTPRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "other"}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	create(t, newDO(ns, "theirs", func(d *appv1.DeployObject) {
		d.Spec.Route = &appv1.Route{Port: "http", ParentRefs: []appv1.GatewayRef{{Name: "public"}}}
	}))
	waitReason(t, ns, "theirs", metav1.ConditionFalse, appv1.ReasonResourceConflict)
	waitChildCondition(t, ns, "theirs", appv1.ConditionRoute, metav1.ConditionFalse, appv1.ReasonResourceConflict)
	if got, err := routes.Get(ctx, "theirs", metav1.GetOptions{}); err != nil || got.ResourceVersion != foreign.ResourceVersion {
		t.Errorf("the foreign HTTPRoute was changed: %v %+v", err, got)
	}
	expectOnlyRefusedCreates(t, ns, "httproutes", "theirs")
}

// TestRouteRules: a route with two rules (an exact path to one port, a
// prefix with a timeout to another) and a redirect to https makes an
// HTTPRoute with two rules and one that redirects, which the Gateway API
// CRDs accept, and an Ingress with two paths; the addresses list every
// host and path; resyncs write nothing with the CRDs' defaults present;
// back to the short form, one rule again, and the redirect gone.
func TestRouteRules(t *testing.T) {
	t.Parallel()
	if !gatewayAPIServed(t) {
		// Alone; in the whole suite TestRoutesHTTPRoute has installed
		// them, after showing the path without them.
		installGatewayAPI(t)
	}
	ns := newNamespace(t)
	gateway := gatewayclient.NewForConfigOrDie(env.cfg)
	withRules := func(d *appv1.DeployObject) {
		d.Spec.Ports = append(d.Spec.Ports, appv1.Port{Name: "admin", ContainerPort: 9000})
		d.Spec.Route = &appv1.Route{Hostnames: []string{"shop.example.com", "shop.example.org"}, Rules: []appv1.RouteRule{
			{Path: "/healthz", PathType: appv1.PathExact, Port: "admin"},
			{Path: "/", Port: "http", Timeout: ptr.To("30s")},
		}}
	}
	create(t, newDO(ns, "gw", withRules, func(d *appv1.DeployObject) {
		d.Spec.Route.ParentRefs = []appv1.GatewayRef{{Name: "public", Namespace: ptr.To("infra"), SectionName: ptr.To("https")}}
		d.Spec.Route.HTTPSRedirect = &appv1.HTTPSRedirect{ParentRefs: []appv1.GatewayRef{{Name: "public", Namespace: ptr.To("infra"), SectionName: ptr.To("http")}}}
	}))
	create(t, newDO(ns, "ing", withRules, func(d *appv1.DeployObject) {
		d.Spec.Route.IngressClassName = ptr.To("nginx")
		d.Spec.Route.Rules[1].Timeout = nil
	}))

	var route *gatewayv1.HTTPRoute
	eventually(t, 2*timeout, "HTTPRoute gw made", func() (bool, string, error) {
		r, err := gateway.GatewayV1().HTTPRoutes(ns).Get(ctx, "gw", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, "not yet", nil
		}
		route = r
		return err == nil, "", err
	})
	if rules := route.Spec.Rules; len(rules) != 2 ||
		*rules[0].Matches[0].Path.Type != gatewayv1.PathMatchExact || *rules[0].Matches[0].Path.Value != "/healthz" || *rules[0].BackendRefs[0].Port != 9000 ||
		*rules[1].Matches[0].Path.Type != gatewayv1.PathMatchPathPrefix || *rules[1].BackendRefs[0].Port != 80 ||
		rules[1].Timeouts == nil || ptr.Deref(rules[1].Timeouts.Request, "") != "30s" {
		t.Fatalf("HTTPRoute rules as stored: %+v", rules)
	}
	var redirect *gatewayv1.HTTPRoute
	eventually(t, timeout, "HTTPRoute gw.https-redirect made", func() (bool, string, error) {
		r, err := gateway.GatewayV1().HTTPRoutes(ns).Get(ctx, "gw.https-redirect", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, "not yet", nil
		}
		redirect = r
		return err == nil, "", err
	})
	if rules := redirect.Spec.Rules; len(rules) != 1 || len(rules[0].BackendRefs) != 0 || len(rules[0].Filters) != 1 ||
		ptr.Deref(rules[0].Filters[0].RequestRedirect.Scheme, "") != "https" || ptr.Deref(rules[0].Filters[0].RequestRedirect.StatusCode, 0) != 301 ||
		ptr.Deref(redirect.Spec.ParentRefs[0].SectionName, "") != "http" || len(redirect.Spec.Hostnames) != 2 {
		t.Fatalf("redirect HTTPRoute as stored: %+v", redirect.Spec)
	}
	// DeployObject ing is a second object, synced on its own: its Ingress
	// may come after gw's routes.
	var ing *networkingv1.Ingress
	eventually(t, timeout, "Ingress ing made", func() (bool, string, error) {
		i, err := env.kube.NetworkingV1().Ingresses(ns).Get(ctx, "ing", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, "not yet", nil
		}
		ing = i
		return err == nil, "", err
	})
	if paths := ing.Spec.Rules[0].HTTP.Paths; len(ing.Spec.Rules) != 2 || len(paths) != 2 ||
		*paths[0].PathType != networkingv1.PathTypeExact || paths[0].Backend.Service.Port.Name != "admin" ||
		*paths[1].PathType != networkingv1.PathTypePrefix || paths[1].Path != "/" || paths[1].Backend.Service.Port.Name != "http" {
		t.Fatalf("Ingress rules as stored: %+v", ing.Spec.Rules)
	}

	playGateway(t, gateway, ns, "gw", metav1.ConditionTrue, "Accepted", metav1.ConditionTrue, "ResolvedRefs")
	waitChildCondition(t, ns, "gw", appv1.ConditionRoute, metav1.ConditionFalse, appv1.ReasonProgressing)
	playGateway(t, gateway, ns, "gw.https-redirect", metav1.ConditionTrue, "Accepted", metav1.ConditionTrue, "ResolvedRefs")
	waitChildCondition(t, ns, "gw", appv1.ConditionRoute, metav1.ConditionTrue, appv1.ReasonAccepted)
	for _, u := range []string{"https://shop.example.com/healthz", "https://shop.example.com/", "https://shop.example.org/healthz", "https://shop.example.org/"} {
		waitAddress(t, ns, "gw", appv1.Address{Type: appv1.AddressURL, Value: u})
	}
	waitReady(t, ns, "gw")
	waitReady(t, ns, "ing")
	// The shared controller serves the other tests too: its retries are
	// theirs as much as this one's.
	expectQuiet(t, shared, ns, sharedResync+5*time.Second, false)

	updateDO(t, ns, "gw", func(d *appv1.DeployObject) {
		d.Spec.Route.Rules, d.Spec.Route.Port, d.Spec.Route.HTTPSRedirect = nil, "http", nil
	})
	eventually(t, timeout, "HTTPRoute gw back to one rule, the redirect gone", func() (bool, string, error) {
		r, err := gateway.GatewayV1().HTTPRoutes(ns).Get(ctx, "gw", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		_, err = gateway.GatewayV1().HTTPRoutes(ns).Get(ctx, "gw.https-redirect", metav1.GetOptions{})
		return len(r.Spec.Rules) == 1 && r.Spec.Rules[0].Timeouts == nil && apierrors.IsNotFound(err), fmt.Sprintf("%+v; redirect: %v", r.Spec.Rules, err), nil
	})
}

// TestGRPCRoute: a route attached to Gateways whose rules send to a gRPC
// port (appProtocol grpc) makes a GRPCRoute, which the Gateway API CRDs
// accept as the controller wrote it, by service and by method; Route
// follows the Gateway's verdict; resyncs write nothing.
func TestGRPCRoute(t *testing.T) {
	t.Parallel()
	if !gatewayAPIServed(t) {
		installGatewayAPI(t)
	}
	ns := newNamespace(t)
	gateway := gatewayclient.NewForConfigOrDie(env.cfg)
	create(t, newDO(ns, "rpc", func(d *appv1.DeployObject) {
		d.Spec.Ports = []appv1.Port{{Name: "grpc", ContainerPort: 9090, AppProtocol: ptr.To("grpc")}}
		d.Spec.Route = &appv1.Route{Hostnames: []string{"rpc.example.com"}, ParentRefs: []appv1.GatewayRef{{Name: "public", Namespace: ptr.To("infra"), SectionName: ptr.To("https")}}, Rules: []appv1.RouteRule{
			{Path: "/shop.v1.Cart/", Port: "grpc"},
			{Path: "/grpc.health.v1.Health/Check", PathType: appv1.PathExact, Port: "grpc"},
		}}
	}))
	var route *gatewayv1.GRPCRoute
	eventually(t, 2*timeout, "GRPCRoute rpc made", func() (bool, string, error) {
		r, err := gateway.GatewayV1().GRPCRoutes(ns).Get(ctx, "rpc", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, "not yet", nil
		}
		route = r
		return err == nil, "", err
	})
	if rules := route.Spec.Rules; len(rules) != 2 ||
		ptr.Deref(rules[0].Matches[0].Method.Service, "") != "shop.v1.Cart" || rules[0].Matches[0].Method.Method != nil ||
		ptr.Deref(rules[1].Matches[0].Method.Method, "") != "Check" || *rules[1].BackendRefs[0].Port != 9090 {
		t.Fatalf("GRPCRoute rules as stored: %+v", rules)
	}
	if _, err := gateway.GatewayV1().HTTPRoutes(ns).Get(ctx, "rpc", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("an HTTPRoute beside the GRPCRoute: %v", err)
	}
	waitChildCondition(t, ns, "rpc", appv1.ConditionRoute, metav1.ConditionFalse, appv1.ReasonProgressing)

	route.Status.Parents = []gatewayv1.RouteParentStatus{{
		ParentRef: route.Spec.ParentRefs[0], ControllerName: "example.com/test-gateway",
		Conditions: []metav1.Condition{
			{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", ObservedGeneration: route.Generation, LastTransitionTime: metav1.Now()},
			{Type: "ResolvedRefs", Status: metav1.ConditionTrue, Reason: "ResolvedRefs", ObservedGeneration: route.Generation, LastTransitionTime: metav1.Now()},
		},
	}}
	if _, err := gateway.GatewayV1().GRPCRoutes(ns).UpdateStatus(ctx, route, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := waitChildCondition(t, ns, "rpc", appv1.ConditionRoute, metav1.ConditionTrue, appv1.ReasonAccepted)
	if !strings.Contains(c.Message, "GRPCRoute rpc") {
		t.Errorf("Route message %q does not name the GRPCRoute", c.Message)
	}
	waitReady(t, ns, "rpc")
	// The shared controller serves the other tests too: its retries are
	// theirs as much as this one's.
	expectQuiet(t, shared, ns, sharedResync+5*time.Second, false)
}
