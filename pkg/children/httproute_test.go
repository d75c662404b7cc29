package children_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/testobjects"
)

func TestDesiredHTTPRoute(t *testing.T) {
	if r := testobjects.MustDesiredHTTPRoute(testobjects.NewDeployObject(testobjects.WithIngress)); r != nil {
		t.Errorf("an Ingress route asks for an HTTPRoute: %+v", r)
	}
	dobj := testobjects.NewDeployObject(testobjects.WithHTTPRoute)
	r := testobjects.MustDesiredHTTPRoute(dobj)
	if !metav1.IsControlledBy(r, dobj) || r.Annotations[appv1.AnnotationRouteHash] == "" {
		t.Errorf("metadata = %+v, want owned and hashed", r.ObjectMeta)
	}
	refs := r.Spec.ParentRefs
	if len(refs) != 2 || children.ParentName(refs[0], "ns") != "infra/public/https" || children.ParentName(refs[1], "ns") != "ns/internal" || *refs[1].Kind != "Gateway" {
		t.Errorf("parentRefs = %+v", refs)
	}
	rule := r.Spec.Rules[0]
	if m := rule.Matches[0].Path; *m.Type != gatewayv1.PathMatchPathPrefix || *m.Value != "/" {
		t.Errorf("match = %+v, want the prefix /", m)
	}
	if b := rule.BackendRefs[0]; b.Name != "web" || *b.Port != 80 || *b.Kind != "Service" || *b.Weight != 1 {
		t.Errorf("backend = %+v, want Service web port 80", b)
	}
}

// TestDesiredHTTPRouteRules: a rule of the HTTPRoute per route rule, each
// with its match type, its port's number and its timeout.
func TestDesiredHTTPRouteRules(t *testing.T) {
	dobj := testobjects.NewDeployObject(testobjects.WithHTTPRoute, func(d *appv1.DeployObject) {
		d.Spec.Ports = append(d.Spec.Ports, appv1.Port{Name: "admin", ContainerPort: 9000})
		d.Spec.Route.Port, d.Spec.Route.Rules = "", []appv1.RouteRule{
			{Path: "/healthz", PathType: appv1.PathExact, Port: "admin"},
			{Path: "/", PathType: appv1.PathPrefix, Port: "http", Timeout: ptr.To("1m30s")},
		}
	})
	r := testobjects.MustDesiredHTTPRoute(dobj)
	if len(r.Spec.Rules) != 2 {
		t.Fatalf("rules = %+v, want 2", r.Spec.Rules)
	}
	first, second := r.Spec.Rules[0], r.Spec.Rules[1]
	if m := first.Matches[0].Path; *m.Type != gatewayv1.PathMatchExact || *m.Value != "/healthz" || *first.BackendRefs[0].Port != 9000 || first.Timeouts != nil {
		t.Errorf("first rule = %+v, want /healthz exactly to port 9000 without a timeout", first)
	}
	if m := second.Matches[0].Path; *m.Type != gatewayv1.PathMatchPathPrefix || *m.Value != "/" || *second.BackendRefs[0].Port != 80 || second.Timeouts == nil || *second.Timeouts.Request != "1m30s" {
		t.Errorf("second rule = %+v, want the prefix / to port 80 with a request timeout of 1m30s", second)
	}
	single := testobjects.MustDesiredHTTPRoute(testobjects.NewDeployObject(testobjects.WithHTTPRoute))
	// The hash the controller stamped before route rules existed: a route
	// in the short form is in line after an upgrade, with no write.
	if got := single.Annotations[appv1.AnnotationRouteHash]; got != "7ef73a27a49ce6e3" {
		t.Errorf("the short form's HTTPRoute hash is %s, was 7ef73a27a49ce6e3 before route rules: every HTTPRoute would be written on upgrade", got)
	}
	asRules := testobjects.MustDesiredHTTPRoute(testobjects.NewDeployObject(testobjects.WithHTTPRoute, func(d *appv1.DeployObject) {
		d.Spec.Route.Port, d.Spec.Route.Rules = "", []appv1.RouteRule{{Path: "/", PathType: appv1.PathPrefix, Port: "http"}}
	}))
	if single.Annotations[appv1.AnnotationRouteHash] != asRules.Annotations[appv1.AnnotationRouteHash] {
		t.Error("port and the one rule it stands for make different HTTPRoutes")
	}
}

// TestDesiredHTTPSRedirect: the HTTPRoute on route.httpsRedirect's
// listeners answers every request for the route's hostnames with a
// permanent redirect (301) to https, and exists only when asked for.
func TestDesiredHTTPSRedirect(t *testing.T) {
	if r, err := children.DesiredHTTPSRedirect(testobjects.NewDeployObject(testobjects.WithHTTPRoute)); r != nil || err != nil {
		t.Errorf("a route without httpsRedirect asks for %+v, %v", r, err)
	}
	dobj := testobjects.NewDeployObject(testobjects.WithHTTPSRedirect)
	r, err := children.DesiredHTTPSRedirect(dobj)
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != "web.https-redirect" || !metav1.IsControlledBy(r, dobj) || r.Annotations[appv1.AnnotationRouteHash] == "" {
		t.Errorf("metadata = %+v, want web.https-redirect, owned and hashed", r.ObjectMeta)
	}
	want := gatewayv1.HTTPRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{
			Group: ptr.To[gatewayv1.Group]("gateway.networking.k8s.io"), Kind: ptr.To[gatewayv1.Kind]("Gateway"),
			Name: "public", Namespace: ptr.To[gatewayv1.Namespace]("infra"), SectionName: ptr.To[gatewayv1.SectionName]("http"),
		}}},
		Hostnames: []gatewayv1.Hostname{"shop.example.com"},
		Rules: []gatewayv1.HTTPRouteRule{{
			Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To("/")}}},
			Filters: []gatewayv1.HTTPRouteFilter{{
				Type:            gatewayv1.HTTPRouteFilterRequestRedirect,
				RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{Scheme: ptr.To("https"), StatusCode: ptr.To(301)},
			}},
		}},
	}
	if !equality.Semantic.DeepEqual(r.Spec, want) {
		t.Errorf("spec (-want +got):\n%s", diff.Diff(want, r.Spec))
	}
}

func TestMergeHTTPRoute(t *testing.T) {
	for _, tc := range []struct {
		name    string
		spec    func(*appv1.DeployObject)
		drift   func(*gatewayv1.HTTPRoute)
		changed bool
	}{
		{"in line", nil, func(*gatewayv1.HTTPRoute) {}, false},
		// A default a later release of the CRDs might fill in.
		{"a server default", nil, func(r *gatewayv1.HTTPRoute) { r.Spec.Rules[0].Name = ptr.To(gatewayv1.SectionName("rule-0")) }, false},
		{"others' labels", nil, func(r *gatewayv1.HTTPRoute) { r.Labels["team"] = "shop" }, false},
		{"hostname added", nil, func(r *gatewayv1.HTTPRoute) { r.Spec.Hostnames = append(r.Spec.Hostnames, "evil.example.com") }, true},
		{"backend port changed", nil, func(r *gatewayv1.HTTPRoute) { r.Spec.Rules[0].BackendRefs[0].Port = ptr.To[gatewayv1.PortNumber](8080) }, true},
		// The spec stops setting sectionName: covers cannot tell, the
		// hash does.
		{"sectionName removed from the spec", func(d *appv1.DeployObject) { d.Spec.Route.ParentRefs[0].SectionName = nil }, func(*gatewayv1.HTTPRoute) {}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject(testobjects.WithHTTPRoute)
			live := testobjects.LiveHTTPRoute(dobj)
			tc.drift(live)
			if tc.spec != nil {
				tc.spec(dobj)
			}
			got, changed := children.MergeHTTPRoute(live, testobjects.MustDesiredHTTPRoute(dobj))
			if changed != tc.changed {
				t.Fatalf("changed = %v, want %v", changed, tc.changed)
			}
			if _, again := children.MergeHTTPRoute(got, testobjects.MustDesiredHTTPRoute(dobj)); again {
				t.Error("the merged HTTPRoute is not in line")
			}
		})
	}
}

func TestSlimHTTPRouteAnswersLikeTheFullObject(t *testing.T) {
	dobj := testobjects.NewDeployObject(testobjects.WithHTTPRoute)
	full := testobjects.LiveHTTPRoute(dobj)
	full.Annotations["kubectl.kubernetes.io/last-applied-configuration"] = "{}"
	full.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	full.Status.Parents[0].Conditions = append(full.Status.Parents[0].Conditions, metav1.Condition{Type: "PartiallyInvalid", Status: metav1.ConditionTrue})
	slim := children.SlimHTTPRoute(full.DeepCopy())
	if _, a := children.MergeHTTPRoute(full, testobjects.MustDesiredHTTPRoute(dobj)); a {
		t.Fatal("the full object is not in line")
	}
	if _, b := children.MergeHTTPRoute(slim, testobjects.MustDesiredHTTPRoute(dobj)); b {
		t.Error("the slim copy is not in line")
	}
	if a, b := children.HTTPRouteCondition(dobj, full, nil), children.HTTPRouteCondition(dobj, slim, nil); a != b {
		t.Errorf("condition: full %+v, slim %+v", a, b)
	}
	if len(slim.Annotations) != 1 || slim.ManagedFields != nil || len(slim.Status.Parents[0].Conditions) != 2 {
		t.Errorf("the slim copy keeps what the controller never reads: %+v", slim)
	}
}

func TestHTTPRouteCondition(t *testing.T) {
	dobj := testobjects.NewDeployObject(testobjects.WithHTTPRoute)
	with := func(mutate func(*gatewayv1.HTTPRoute)) *gatewayv1.HTTPRoute {
		r := testobjects.LiveHTTPRoute(dobj)
		mutate(r)
		return r
	}
	for _, tc := range []struct {
		name    string
		route   *gatewayv1.HTTPRoute
		problem *children.Problem
		status  metav1.ConditionStatus
		reason  string
		message string
	}{
		{"Gateway API missing", nil, &children.Problem{Reason: appv1.ReasonGatewayAPIUnavailable, Message: "the cluster does not serve"}, metav1.ConditionFalse, appv1.ReasonGatewayAPIUnavailable, "does not serve"},
		{"not made yet", nil, nil, metav1.ConditionFalse, appv1.ReasonProgressing, "HTTPRoute web does not exist yet"},
		{"no status yet", with(func(r *gatewayv1.HTTPRoute) { r.Status.Parents = nil }), nil, metav1.ConditionFalse, appv1.ReasonProgressing, "waiting for Gateway infra/public/https, apps/internal to accept"},
		{"one parent silent", with(func(r *gatewayv1.HTTPRoute) { r.Status.Parents = r.Status.Parents[:1] }), nil, metav1.ConditionFalse, appv1.ReasonProgressing, "waiting for Gateway apps/internal"},
		{"status of an older generation", with(func(r *gatewayv1.HTTPRoute) { r.Generation = 2 }), nil, metav1.ConditionFalse, appv1.ReasonProgressing, "waiting for Gateway"},
		{"accepted", testobjects.LiveHTTPRoute(dobj), nil, metav1.ConditionTrue, appv1.ReasonAccepted, "accepted by Gateway infra/public/https, apps/internal"},
		{"refused by a listener", with(func(r *gatewayv1.HTTPRoute) {
			r.Status.Parents[1].Conditions[0] = metav1.Condition{Type: "Accepted", Status: metav1.ConditionFalse, Reason: "NotAllowedByListeners", Message: "no listener allows this namespace", ObservedGeneration: 1}
		}), nil, metav1.ConditionFalse, "NotAllowedByListeners", "Gateway apps/internal does not accept HTTPRoute web: no listener allows this namespace"},
		{"backend not found", with(func(r *gatewayv1.HTTPRoute) {
			r.Status.Parents[0].Conditions[1] = metav1.Condition{Type: "ResolvedRefs", Status: metav1.ConditionFalse, Reason: "BackendNotFound", Message: "Service web not found", ObservedGeneration: 1}
		}), nil, metav1.ConditionFalse, "BackendNotFound", "cannot resolve the references of HTTPRoute web: Service web not found"},
		// Status entries are keyed by parent and controller: a foreign
		// controller's entry for the same parent, listed first, does not
		// mask the entry of the Gateway's own controller.
		{"a foreign stale refusal listed before the accepting entry", with(func(r *gatewayv1.HTTPRoute) {
			r.Generation = 3
			for i := range r.Status.Parents {
				for j := range r.Status.Parents[i].Conditions {
					r.Status.Parents[i].Conditions[j].ObservedGeneration = 3
				}
			}
			foreign := gatewayv1.RouteParentStatus{ParentRef: r.Spec.ParentRefs[1], ControllerName: "other.example.com/gateway", Conditions: []metav1.Condition{
				{Type: "Accepted", Status: metav1.ConditionFalse, Reason: "NotAllowedByListeners", Message: "no listener allows this namespace", ObservedGeneration: 2},
			}}
			r.Status.Parents = append([]gatewayv1.RouteParentStatus{foreign}, r.Status.Parents...)
		}), nil, metav1.ConditionTrue, appv1.ReasonAccepted, "accepted by Gateway infra/public/https, apps/internal"},
		{"a foreign current refusal listed after the accepting entry", with(func(r *gatewayv1.HTTPRoute) {
			r.Status.Parents = append(r.Status.Parents, gatewayv1.RouteParentStatus{ParentRef: r.Spec.ParentRefs[1], ControllerName: "other.example.com/gateway", Conditions: []metav1.Condition{
				{Type: "Accepted", Status: metav1.ConditionFalse, Reason: "NotAllowedByListeners", Message: "no listener allows this namespace", ObservedGeneration: 1},
			}})
		}), nil, metav1.ConditionFalse, "NotAllowedByListeners", "Gateway apps/internal does not accept HTTPRoute web: no listener allows this namespace"},
		{"a parent still pending", with(func(r *gatewayv1.HTTPRoute) {
			r.Status.Parents[1].Conditions[0] = metav1.Condition{Type: "Accepted", Status: metav1.ConditionUnknown, Reason: "Pending", Message: "Waiting for controller", ObservedGeneration: 1}
		}), nil, metav1.ConditionFalse, appv1.ReasonProgressing, "waiting for Gateway apps/internal to accept HTTPRoute web"},
		{"parents removed by someone else", with(func(r *gatewayv1.HTTPRoute) { r.Spec.ParentRefs = nil }), nil, metav1.ConditionFalse, appv1.ReasonProgressing, "HTTPRoute web names no parent Gateway"},
		{"a status entry that omits defaults", with(func(r *gatewayv1.HTTPRoute) {
			r.Status.Parents[1].ParentRef = gatewayv1.ParentReference{Name: "internal"}
		}), nil, metav1.ConditionTrue, appv1.ReasonAccepted, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := children.HTTPRouteCondition(dobj, tc.route, tc.problem)
			if c.Type != appv1.ConditionRoute || c.Status != tc.status || c.Reason != tc.reason || !strings.Contains(c.Message, tc.message) {
				t.Errorf("condition = %+v, want %s/%s with %q", c, tc.status, tc.reason, tc.message)
			}
		})
	}
}

// backend is a route's backendRef to the Service name at port with weight,
// as the controller writes it.
func backend(name string, port gatewayv1.PortNumber, weight int32) gatewayv1.BackendRef {
	return gatewayv1.BackendRef{
		BackendObjectReference: gatewayv1.BackendObjectReference{
			Group: ptr.To[gatewayv1.Group](""), Kind: ptr.To[gatewayv1.Kind]("Service"), Name: gatewayv1.ObjectName(name), Port: ptr.To(port),
		},
		Weight: ptr.To(weight),
	}
}

// TestDesiredHTTPRouteCanaryWeights: without a canary weight each rule
// sends to the Service alone, as before canaries; with one, each rule
// sends to the Service and the canary Service at its own port, the pair
// summing to 100, never both zero, whatever the weight asked.
func TestDesiredHTTPRouteCanaryWeights(t *testing.T) {
	dobj := testobjects.NewDeployObject(testobjects.WithHTTPRoute, func(d *appv1.DeployObject) {
		d.Spec.Ports = append(d.Spec.Ports, appv1.Port{Name: "admin", ContainerPort: 9000})
		d.Spec.Route.Port, d.Spec.Route.Rules = "", []appv1.RouteRule{
			{Path: "/healthz", PathType: appv1.PathExact, Port: "admin"},
			{Path: "/", PathType: appv1.PathPrefix, Port: "http"},
		}
	})
	for _, tc := range []struct {
		name   string
		weight *int32
		want   [][]gatewayv1.BackendRef
	}{
		{"no canary", nil, [][]gatewayv1.BackendRef{
			{backend("web", 9000, 1)},
			{backend("web", 80, 1)},
		}},
		{"20%", ptr.To[int32](20), [][]gatewayv1.BackendRef{
			{backend("web", 9000, 80), backend("web-canary", 9000, 20)},
			{backend("web", 80, 80), backend("web-canary", 80, 20)},
		}},
		{"0%: referenced, no traffic", ptr.To[int32](0), [][]gatewayv1.BackendRef{
			{backend("web", 9000, 100), backend("web-canary", 9000, 0)},
			{backend("web", 80, 100), backend("web-canary", 80, 0)},
		}},
		{"100%", ptr.To[int32](100), [][]gatewayv1.BackendRef{
			{backend("web", 9000, 0), backend("web-canary", 9000, 100)},
			{backend("web", 80, 0), backend("web-canary", 80, 100)},
		}},
		{"below 0 is 0", ptr.To[int32](-5), [][]gatewayv1.BackendRef{
			{backend("web", 9000, 100), backend("web-canary", 9000, 0)},
			{backend("web", 80, 100), backend("web-canary", 80, 0)},
		}},
		{"above 100 is 100", ptr.To[int32](150), [][]gatewayv1.BackendRef{
			{backend("web", 9000, 0), backend("web-canary", 9000, 100)},
			{backend("web", 80, 0), backend("web-canary", 80, 100)},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := children.DesiredHTTPRoute(dobj, tc.weight)
			if err != nil {
				t.Fatal(err)
			}
			var got [][]gatewayv1.BackendRef
			for _, rule := range r.Spec.Rules {
				var refs []gatewayv1.BackendRef
				for _, b := range rule.BackendRefs {
					if b.Filters != nil {
						t.Errorf("backend %s has filters", b.Name)
					}
					refs = append(refs, b.BackendRef)
				}
				got = append(got, refs)
			}
			if !equality.Semantic.DeepEqual(got, tc.want) {
				t.Errorf("backends (-want +got):\n%s", diff.Diff(tc.want, got))
			}
		})
	}
}

// TestHTTPRouteCanaryWeight: the canary's weight is read from the live
// route: none without a canary backend, 0 told from none, the CRDs'
// default for an unset weight, the highest when rules disagree.
func TestHTTPRouteCanaryWeight(t *testing.T) {
	dobj := testobjects.NewDeployObject(testobjects.WithHTTPRoute, func(d *appv1.DeployObject) {
		d.Spec.Route.Port, d.Spec.Route.Rules = "", []appv1.RouteRule{
			{Path: "/a", PathType: appv1.PathPrefix, Port: "http"},
			{Path: "/b", PathType: appv1.PathPrefix, Port: "http"},
		}
	})
	weighted := func(w *int32, edit func(*gatewayv1.HTTPRoute)) *gatewayv1.HTTPRoute {
		r, err := children.DesiredHTTPRoute(dobj, w)
		if err != nil {
			t.Fatal(err)
		}
		edit(r)
		return r
	}
	none := func(*gatewayv1.HTTPRoute) {}
	for _, tc := range []struct {
		name  string
		route *gatewayv1.HTTPRoute
		want  *int32
	}{
		{"no route", nil, nil},
		{"no canary", weighted(nil, none), nil},
		{"20%", weighted(ptr.To[int32](20), none), ptr.To[int32](20)},
		{"0%", weighted(ptr.To[int32](0), none), ptr.To[int32](0)},
		{"unset weight: the CRDs' default", weighted(ptr.To[int32](20), func(r *gatewayv1.HTTPRoute) {
			for i := range r.Spec.Rules {
				r.Spec.Rules[i].BackendRefs[1].Weight = nil
			}
		}), ptr.To[int32](1)},
		{"rules disagree, the higher last", weighted(ptr.To[int32](10), func(r *gatewayv1.HTTPRoute) { r.Spec.Rules[1].BackendRefs[1].Weight = ptr.To[int32](30) }), ptr.To[int32](30)},
		{"rules disagree, the higher first", weighted(ptr.To[int32](10), func(r *gatewayv1.HTTPRoute) { r.Spec.Rules[0].BackendRefs[1].Weight = ptr.To[int32](30) }), ptr.To[int32](30)},
		{"one rule only", weighted(ptr.To[int32](50), func(r *gatewayv1.HTTPRoute) { r.Spec.Rules[0].BackendRefs = r.Spec.Rules[0].BackendRefs[:1] }), ptr.To[int32](50)},
		{"another backend is not the canary", weighted(ptr.To[int32](20), func(r *gatewayv1.HTTPRoute) {
			for i := range r.Spec.Rules {
				r.Spec.Rules[i].BackendRefs[1].Name = "web-canary-old"
			}
		}), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := children.HTTPRouteCanaryWeight(tc.route, dobj); !equality.Semantic.DeepEqual(got, tc.want) {
				t.Errorf("weight %v, want %v", ptr.Deref(got, -1), ptr.Deref(tc.want, -1))
			}
		})
	}
}

// TestMergeHTTPRouteCanaryWeight: the weight is part of the route's hash,
// so a route at the weight asked is in line, from the cache too, and one
// at another weight is written once and in line afterwards.
func TestMergeHTTPRouteCanaryWeight(t *testing.T) {
	dobj := testobjects.NewDeployObject(testobjects.WithHTTPRoute)
	liveAt := func(w *int32) *gatewayv1.HTTPRoute {
		r, err := children.DesiredHTTPRoute(dobj, w)
		if err != nil {
			t.Fatal(err)
		}
		r.UID, r.ResourceVersion, r.Generation = "uid-route", "70", 1
		return r
	}
	hashes := map[string]bool{}
	for _, w := range []*int32{nil, ptr.To[int32](0), ptr.To[int32](20), ptr.To[int32](50)} {
		hashes[liveAt(w).Annotations[appv1.AnnotationRouteHash]] = true
	}
	if len(hashes) != 4 {
		t.Errorf("%d route hashes for 4 weights", len(hashes))
	}
	for _, tc := range []struct {
		name       string
		live, want *int32
		changed    bool
	}{
		{"20% as asked", ptr.To[int32](20), ptr.To[int32](20), false},
		{"raised to 50%", ptr.To[int32](20), ptr.To[int32](50), true},
		{"lowered to 0%", ptr.To[int32](20), ptr.To[int32](0), true},
		{"canary ends", ptr.To[int32](20), nil, true},
		{"canary starts", nil, ptr.To[int32](0), true},
		{"no canary, as before", nil, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live := liveAt(tc.live)
			desired, err := children.DesiredHTTPRoute(dobj, tc.want)
			if err != nil {
				t.Fatal(err)
			}
			got, changed := children.MergeHTTPRoute(live, desired)
			if changed != tc.changed {
				t.Fatalf("changed = %v, want %v", changed, tc.changed)
			}
			if _, slim := children.MergeHTTPRoute(children.SlimHTTPRoute(live.DeepCopy()), desired); slim != tc.changed {
				t.Errorf("from the cache: changed = %v, want %v", slim, tc.changed)
			}
			if w := children.HTTPRouteCanaryWeight(got, dobj); !equality.Semantic.DeepEqual(w, tc.want) {
				t.Errorf("merged weight %v, want %v", ptr.Deref(w, -1), ptr.Deref(tc.want, -1))
			}
			if _, again := children.MergeHTTPRoute(got, desired); again {
				t.Error("the merged HTTPRoute is not in line")
			}
		})
	}
}
