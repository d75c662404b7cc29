package main

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/cache"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	discoveryfake "k8s.io/client-go/discovery/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

func withHTTPRoute(d *appv1.DeployObject) {
	d.Spec.Route = &appv1.Route{Port: "http", Hostnames: []string{"shop.example.com"}, ParentRefs: []appv1.GatewayRef{
		{Name: "public", Namespace: ptr.To("infra"), SectionName: ptr.To("https")},
		{Name: "internal"},
	}}
}

func mustDesiredHTTPRoute(dobj *appv1.DeployObject) *gatewayv1.HTTPRoute {
	r, err := desiredHTTPRoute(dobj)
	if err != nil {
		panic(err)
	}
	return r
}

// parentAccepted is the status a Gateway controller writes for a parent
// that accepted the route and resolved its backend.
func parentAccepted(ref gatewayv1.ParentReference, generation int64) gatewayv1.RouteParentStatus {
	return gatewayv1.RouteParentStatus{ParentRef: ref, ControllerName: "example.com/gateway", Conditions: []metav1.Condition{
		{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", ObservedGeneration: generation},
		{Type: "ResolvedRefs", Status: metav1.ConditionTrue, Reason: "ResolvedRefs", ObservedGeneration: generation},
	}}
}

// liveHTTPRoute is the HTTPRoute of dobj as the API server would hold it,
// accepted by every parent.
func liveHTTPRoute(dobj *appv1.DeployObject) *gatewayv1.HTTPRoute {
	r := mustDesiredHTTPRoute(dobj)
	if r == nil {
		return nil
	}
	r.UID, r.ResourceVersion, r.Generation = "uid-route", "70", 1
	for _, ref := range r.Spec.ParentRefs {
		r.Status.Parents = append(r.Status.Parents, parentAccepted(ref, 1))
	}
	return r
}

func TestDesiredHTTPRoute(t *testing.T) {
	if r := mustDesiredHTTPRoute(newDeployObject(withIngress)); r != nil {
		t.Errorf("an Ingress route asks for an HTTPRoute: %+v", r)
	}
	dobj := newDeployObject(withHTTPRoute)
	r := mustDesiredHTTPRoute(dobj)
	if !metav1.IsControlledBy(r, dobj) || r.Annotations[appv1.AnnotationRouteHash] == "" {
		t.Errorf("metadata = %+v, want owned and hashed", r.ObjectMeta)
	}
	refs := r.Spec.ParentRefs
	if len(refs) != 2 || parentName(refs[0], "ns") != "infra/public/https" || parentName(refs[1], "ns") != "ns/internal" || *refs[1].Kind != "Gateway" {
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
			dobj := newDeployObject(withHTTPRoute)
			live := liveHTTPRoute(dobj)
			tc.drift(live)
			if tc.spec != nil {
				tc.spec(dobj)
			}
			got, changed := mergeHTTPRoute(live, mustDesiredHTTPRoute(dobj))
			if changed != tc.changed {
				t.Fatalf("changed = %v, want %v", changed, tc.changed)
			}
			if _, again := mergeHTTPRoute(got, mustDesiredHTTPRoute(dobj)); again {
				t.Error("the merged HTTPRoute is not in line")
			}
		})
	}
}

func TestSlimHTTPRouteAnswersLikeTheFullObject(t *testing.T) {
	dobj := newDeployObject(withHTTPRoute)
	full := liveHTTPRoute(dobj)
	full.Annotations["kubectl.kubernetes.io/last-applied-configuration"] = "{}"
	full.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	full.Status.Parents[0].Conditions = append(full.Status.Parents[0].Conditions, metav1.Condition{Type: "PartiallyInvalid", Status: metav1.ConditionTrue})
	slim := slimHTTPRoute(full.DeepCopy())
	if _, a := mergeHTTPRoute(full, mustDesiredHTTPRoute(dobj)); a {
		t.Fatal("the full object is not in line")
	}
	if _, b := mergeHTTPRoute(slim, mustDesiredHTTPRoute(dobj)); b {
		t.Error("the slim copy is not in line")
	}
	if a, b := httpRouteCondition(dobj, full, nil), httpRouteCondition(dobj, slim, nil); a != b {
		t.Errorf("condition: full %+v, slim %+v", a, b)
	}
	if len(slim.Annotations) != 1 || slim.ManagedFields != nil || len(slim.Status.Parents[0].Conditions) != 2 {
		t.Errorf("the slim copy keeps what the controller never reads: %+v", slim)
	}
}

func TestHTTPRouteCondition(t *testing.T) {
	dobj := newDeployObject(withHTTPRoute)
	with := func(mutate func(*gatewayv1.HTTPRoute)) *gatewayv1.HTTPRoute {
		r := liveHTTPRoute(dobj)
		mutate(r)
		return r
	}
	for _, tc := range []struct {
		name    string
		route   *gatewayv1.HTTPRoute
		problem *childProblem
		status  metav1.ConditionStatus
		reason  string
		message string
	}{
		{"Gateway API missing", nil, &childProblem{reason: appv1.ReasonGatewayAPIUnavailable, message: "the cluster does not serve"}, metav1.ConditionFalse, appv1.ReasonGatewayAPIUnavailable, "does not serve"},
		{"not made yet", nil, nil, metav1.ConditionFalse, appv1.ReasonProgressing, "HTTPRoute web does not exist yet"},
		{"no status yet", with(func(r *gatewayv1.HTTPRoute) { r.Status.Parents = nil }), nil, metav1.ConditionFalse, appv1.ReasonProgressing, "waiting for Gateway infra/public/https, apps/internal to accept"},
		{"one parent silent", with(func(r *gatewayv1.HTTPRoute) { r.Status.Parents = r.Status.Parents[:1] }), nil, metav1.ConditionFalse, appv1.ReasonProgressing, "waiting for Gateway apps/internal"},
		{"status of an older generation", with(func(r *gatewayv1.HTTPRoute) { r.Generation = 2 }), nil, metav1.ConditionFalse, appv1.ReasonProgressing, "waiting for Gateway"},
		{"accepted", liveHTTPRoute(dobj), nil, metav1.ConditionTrue, appv1.ReasonAccepted, "accepted by Gateway infra/public/https, apps/internal"},
		{"refused by a listener", with(func(r *gatewayv1.HTTPRoute) {
			r.Status.Parents[1].Conditions[0] = metav1.Condition{Type: "Accepted", Status: metav1.ConditionFalse, Reason: "NotAllowedByListeners", Message: "no listener allows this namespace", ObservedGeneration: 1}
		}), nil, metav1.ConditionFalse, "NotAllowedByListeners", "Gateway apps/internal does not accept HTTPRoute web: no listener allows this namespace"},
		{"backend not found", with(func(r *gatewayv1.HTTPRoute) {
			r.Status.Parents[0].Conditions[1] = metav1.Condition{Type: "ResolvedRefs", Status: metav1.ConditionFalse, Reason: "BackendNotFound", Message: "Service web not found", ObservedGeneration: 1}
		}), nil, metav1.ConditionFalse, "BackendNotFound", "cannot resolve the references of HTTPRoute web: Service web not found"},
		{"a status entry that omits defaults", with(func(r *gatewayv1.HTTPRoute) {
			r.Status.Parents[1].ParentRef = gatewayv1.ParentReference{Name: "internal"}
		}), nil, metav1.ConditionTrue, appv1.ReasonAccepted, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := httpRouteCondition(dobj, tc.route, tc.problem)
			if c.Type != appv1.ConditionRoute || c.Status != tc.status || c.Reason != tc.reason || !strings.Contains(c.Message, tc.message) {
				t.Errorf("condition = %+v, want %s/%s with %q", c, tc.status, tc.reason, tc.message)
			}
		})
	}
}

func TestGatewayAPIServed(t *testing.T) {
	for _, tc := range []struct {
		name      string
		resources []*metav1.APIResourceList
		want      bool
	}{
		{"no Gateway API", nil, false},
		{"Gateway API without HTTPRoutes", []*metav1.APIResourceList{{GroupVersion: "gateway.networking.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "gateways"}}}}, false},
		{"HTTPRoutes served", []*metav1.APIResourceList{{GroupVersion: "gateway.networking.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "gateways"}, {Name: "httproutes"}}}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &gatewayRoutes{discovery: &discoveryfake.FakeDiscovery{Fake: &core.Fake{Resources: tc.resources}}}
			got, err := g.served()
			if err != nil || got != tc.want {
				t.Errorf("served() = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestSyncHTTPRoute(t *testing.T) {
	t.Run("without the Gateway API", func(t *testing.T) {
		f := newFixture(t)
		dobj := newDeployObject(withHTTPRoute)
		f.dobjs = []*appv1.DeployObject{dobj}
		err, actions := f.sync()
		// Not retried: watchGatewayAPI syncs it again once HTTPRoutes
		// are served.
		if err != nil {
			t.Fatalf("sync: %v, want no retry", err)
		}
		expectActions(t, actions, "create deployments", "create services", "patch deployobjects/status")
		if r := readyOf(t, actions[2]); r.Reason != appv1.ReasonGatewayAPIUnavailable || !strings.Contains(r.Message, "Gateway API CRDs are not installed") {
			t.Errorf("Ready = %+v, want GatewayAPIUnavailable", r)
		}
		if c := conditionOf(t, actions[2], appv1.ConditionRoute); c == nil || c.Reason != appv1.ReasonGatewayAPIUnavailable {
			t.Errorf("Route condition = %+v, want GatewayAPIUnavailable", c)
		}
	})
	t.Run("created", func(t *testing.T) {
		f := newFixture(t)
		f.gatewayAPI = true
		dobj := newDeployObject(withHTTPRoute)
		f.dobjs = []*appv1.DeployObject{dobj}
		err, actions := f.sync()
		if err != nil {
			t.Fatalf("sync: %v", err)
		}
		// The fixture lists the Gateway API client's actions last.
		expectActions(t, actions, "create deployments", "create services", "patch deployobjects/status", "create httproutes")
		if got := actions[3].(core.CreateAction).GetObject(); !equalObjects(got, mustDesiredHTTPRoute(dobj)) {
			t.Errorf("created HTTPRoute differs from desired:\n%s", diff.Diff(mustDesiredHTTPRoute(dobj), got))
		}
	})
	t.Run("steady state writes nothing", func(t *testing.T) {
		f := newFixture(t)
		f.gatewayAPI = true
		dobj := newDeployObject(withHTTPRoute)
		f.withLiveChildren(dobj)
		f.httpRoutes = []*gatewayv1.HTTPRoute{liveHTTPRoute(dobj)}
		dobj.Status = computeStatus(dobj, syncOutcome{deployment: liveDeployment(dobj), service: liveService(dobj), httpRoute: liveHTTPRoute(dobj), deploymentHash: mustHash(dobj)}, earlier)
		err, actions := f.sync()
		if err != nil {
			t.Fatalf("sync: %v", err)
		}
		expectActions(t, actions)
	})
	t.Run("drift corrected", func(t *testing.T) {
		f := newFixture(t)
		f.gatewayAPI = true
		dobj := newDeployObject(withHTTPRoute)
		f.withLiveChildren(dobj)
		drifted := liveHTTPRoute(dobj)
		drifted.Spec.Hostnames = append(drifted.Spec.Hostnames, "evil.example.com")
		f.httpRoutes = []*gatewayv1.HTTPRoute{drifted}
		err, actions := f.sync()
		if err != nil {
			t.Fatalf("sync: %v", err)
		}
		expectActions(t, actions, "patch deployobjects/status", "get httproutes", "update httproutes")
		if got := actions[2].(core.UpdateAction).GetObject().(*gatewayv1.HTTPRoute); len(got.Spec.Hostnames) != 1 || got.UID != "uid-route" {
			t.Errorf("updated HTTPRoute hostnames %v, want the spec's on the same object", got.Spec.Hostnames)
		}
	})
}

// switchableDiscovery serves HTTPRoutes once served is set, as a cluster
// does once the Gateway API CRDs are installed.
type switchableDiscovery struct {
	discovery.DiscoveryInterface
	served atomic.Bool
}

func (d *switchableDiscovery) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	if !d.served.Load() {
		return nil, apierrors.NewNotFound(schema.GroupResource{}, gv)
	}
	return &metav1.APIResourceList{GroupVersion: gv, APIResources: []metav1.APIResource{{Name: "httproutes"}}}, nil
}

// TestGatewayRoutesStartWhenServed: the controller may start syncing as
// soon as discovery says there are no HTTPRoutes; once they are served,
// without a restart, their cache is started and filled, and the
// DeployObjects that wait for it are synced.
func TestGatewayRoutesStartWhenServed(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	disc := &switchableDiscovery{}
	route := liveHTTPRoute(newDeployObject(withHTTPRoute))
	client := gatewayfake.NewClientset(route)
	name, err := cache.NewInformerName("test-gateway-routes")
	if err != nil {
		t.Fatal(err)
	}
	defer name.Release()
	g := &gatewayRoutes{client: client, discovery: disc, recheck: 10 * time.Millisecond, informer: func() (cache.SharedIndexInformer, error) {
		return newHTTPRouteInformer(client, metav1.NamespaceAll, namedInformers{name, newInformerMetrics(prometheus.NewRegistry())})
	}}
	synced := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.run(ctx, cache.ResourceEventHandlerFuncs{}, func() { close(synced) })
	}()
	defer func() { cancel(); <-done }()

	if err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) { return g.hasSynced(), nil }); err != nil {
		t.Fatal("syncs never allowed without the Gateway API")
	}
	if g.routes() != nil {
		t.Fatal("an HTTPRoute cache without the Gateway API")
	}
	disc.served.Store(true)
	select {
	case <-synced:
	case <-time.After(5 * time.Second):
		t.Fatal("the HTTPRoute cache was not started once HTTPRoutes are served")
	}
	got, err := g.routes().HTTPRoutes(route.Namespace).Get(route.Name)
	if err != nil || got.UID != route.UID {
		t.Errorf("cached HTTPRoute = %v, %v", got, err)
	}
}
