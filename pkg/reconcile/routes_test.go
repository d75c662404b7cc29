package reconcile

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/diff"
	core "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/testobjects"
)

// expectUnavailable checks that res reports the Gateway API route of
// kind as not served, and that the problem is not retried: the controller
// syncs the DeployObject again once the kind is served.
func expectUnavailable(t *testing.T, dobj *appv1.DeployObject, res Result, kind string) metav1.Condition {
	t.Helper()
	if p := problemOf(res, kind); p == nil || p.Reason != appv1.ReasonGatewayAPIUnavailable || p.Retry {
		t.Errorf("problem = %+v, want GatewayAPIUnavailable, not retried", p)
	}
	r := readyOf(t, dobj, res)
	if r.Reason != appv1.ReasonGatewayAPIUnavailable {
		t.Errorf("Ready = %+v, want GatewayAPIUnavailable", r)
	}
	return r
}

func TestSyncHTTPRoute(t *testing.T) {
	t.Run("without the Gateway API", func(t *testing.T) {
		f := newFixture(t)
		dobj := testobjects.NewDeployObject(testobjects.WithHTTPRoute)
		res := f.mustSync(dobj)
		expectActions(t, f.writes(), "create deployments web", "create services web")
		if r := expectUnavailable(t, dobj, res, children.KindHTTPRoute); !strings.Contains(r.Message, "Gateway API CRDs are not installed") {
			t.Errorf("Ready = %+v, want it to say why", r)
		}
		if c := conditionOf(statusAfter(dobj, res), appv1.ConditionRoute); c == nil || c.Reason != appv1.ReasonGatewayAPIUnavailable {
			t.Errorf("Route condition = %+v, want GatewayAPIUnavailable", c)
		}
	})
	// The CRDs removed while the controller runs: the create is answered
	// 404 for the resource; the status still says why, for this
	// generation, and the cache is given up until discovery shows them.
	t.Run("the Gateway API removed", func(t *testing.T) {
		f := newFixture(t)
		f.gatewayAPI = true
		dobj := testobjects.NewDeployObject(testobjects.WithHTTPRoute)
		c := f.newChildren(dobj)
		f.gatewayClient.PrependReactor("create", "httproutes", func(core.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewNotFound(schema.GroupResource{}, "")
		})
		res, err := f.syncWith(c, dobj)
		if err != nil {
			t.Fatalf("sync: %v, want the problem reported, not retried", err)
		}
		expectActions(t, f.writes(), "create deployments web", "create services web", "create httproutes web")
		expectUnavailable(t, dobj, res, children.KindHTTPRoute)
		if c.Gateway.Routes() != nil {
			t.Error("the HTTPRoute cache is still read after the 404")
		}
	})
}

// TestSyncHTTPSRedirect: route.httpsRedirect makes a second HTTPRoute on
// the plain-HTTP listeners, which Ready waits for; steady state writes
// nothing; dropping the field deletes it alone.
func TestSyncHTTPSRedirect(t *testing.T) {
	t.Run("created with the route", func(t *testing.T) {
		f := newFixture(t)
		f.gatewayAPI = true
		dobj := testobjects.NewDeployObject(testobjects.WithHTTPSRedirect)
		f.mustSync(dobj)
		writes := f.writes()
		expectActions(t, writes, "create deployments web", "create services web", "create httproutes web", "create httproutes web.https-redirect")
		want, err := children.DesiredHTTPSRedirect(dobj)
		if err != nil {
			t.Fatal(err)
		}
		if got := writes[3].(core.CreateAction).GetObject(); !testobjects.EqualObjects(got, want) {
			t.Errorf("created redirect HTTPRoute differs from desired:\n%s", diff.Diff(want, got))
		}
	})
	t.Run("steady state writes nothing", func(t *testing.T) {
		f := newFixture(t)
		f.gatewayAPI = true
		dobj := testobjects.NewDeployObject(testobjects.WithHTTPSRedirect)
		f.inLine(dobj, testobjects.LiveHTTPRoute(dobj), testobjects.LiveHTTPSRedirect(dobj))
		res := f.mustSync(dobj)
		expectActions(t, f.writes())
		expectNothingDone(t, dobj, res)
		if r := meta.FindStatusCondition(dobj.Status.Conditions, appv1.ConditionReady); r == nil || r.Status != metav1.ConditionTrue {
			t.Errorf("Ready = %+v, want True with both routes accepted", r)
		}
	})
	t.Run("removed with the field, the route kept", func(t *testing.T) {
		f := newFixture(t)
		f.gatewayAPI = true
		before := testobjects.NewDeployObject(testobjects.WithHTTPSRedirect)
		f.inLine(before, testobjects.LiveHTTPRoute(before), testobjects.LiveHTTPSRedirect(before))
		dobj := testobjects.NewDeployObject(testobjects.WithHTTPRoute)
		f.mustSync(dobj)
		writes := f.writes()
		expectActions(t, writes, "delete httproutes web.https-redirect")
		if uid := writes[0].(core.DeleteAction).GetDeleteOptions().Preconditions.UID; uid == nil || *uid != "uid-redirect" {
			t.Errorf("delete preconditions UID = %v, want uid-redirect", uid)
		}
	})
}

// TestSyncGRPCRoute: a port that turns to gRPC replaces the HTTPRoute by
// a GRPCRoute, once that exists; without GRPCRoutes served, the
// DeployObject says so.
func TestSyncGRPCRoute(t *testing.T) {
	// web's HTTPRoute, live, and the spec now with its port turned to gRPC.
	turnedToGRPC := func(f *fixture) *appv1.DeployObject {
		f.gatewayAPI = true
		before := testobjects.NewDeployObject(testobjects.WithHTTPRoute)
		f.inLine(before, testobjects.LiveHTTPRoute(before))
		return testobjects.NewDeployObject(testobjects.WithHTTPRoute, func(d *appv1.DeployObject) { d.Spec.Ports[0].AppProtocol = ptr.To("grpc") })
	}
	t.Run("a port turned to gRPC replaces the HTTPRoute", func(t *testing.T) {
		f := newFixture(t)
		dobj := turnedToGRPC(f)
		f.mustSync(dobj)
		// The HTTPRoute goes once its replacement exists.
		expectActions(t, f.writes(), "get services web", "update services web", "create grpcroutes web", "delete httproutes web")
	})
	t.Run("a port turned to gRPC keeps the HTTPRoute while GRPCRoutes are not served", func(t *testing.T) {
		f := newFixture(t)
		dobj := turnedToGRPC(f)
		res := f.syncWithoutGRPCRoutes(dobj)
		expectActions(t, f.writes(), "get services web", "update services web")
		expectUnavailable(t, dobj, res, children.KindGRPCRoute)
	})
	t.Run("a route admitted before GRPCRoutes, by a path that names no gRPC call, keeps its HTTPRoute", func(t *testing.T) {
		f := newFixture(t)
		f.gatewayAPI = true
		dobj := testobjects.NewDeployObject(testobjects.WithHTTPRoute, func(d *appv1.DeployObject) {
			d.Spec.Ports[0].AppProtocol = ptr.To("grpc")
			d.Spec.Route.Path = "/api"
		})
		f.inLine(dobj, testobjects.LiveHTTPRoute(dobj))
		res := f.mustSync(dobj)
		expectActions(t, f.writes())
		expectNothingDone(t, dobj, res)
	})
	t.Run("GRPCRoutes not served", func(t *testing.T) {
		f := newFixture(t)
		f.gatewayAPI = true
		dobj := testobjects.NewDeployObject(testobjects.WithGRPCRoute)
		res := f.syncWithoutGRPCRoutes(dobj)
		expectActions(t, f.writes(), "create deployments web", "create services web")
		if r := expectUnavailable(t, dobj, res, children.KindGRPCRoute); !strings.Contains(r.Message, "GRPCRoutes") {
			t.Errorf("Ready = %+v, want GatewayAPIUnavailable about GRPCRoutes", r)
		}
	})
}

// syncWithoutGRPCRoutes syncs dobj in a cluster that serves HTTPRoutes
// but not GRPCRoutes, which is no error to retry.
func (f *fixture) syncWithoutGRPCRoutes(dobj *appv1.DeployObject) Result {
	f.t.Helper()
	c := f.newChildren(dobj)
	c.Gateway.GRPCLister = nil
	res, err := f.syncWith(c, dobj)
	if err != nil {
		f.t.Fatalf("sync: %v, want the problem reported, not retried", err)
	}
	return res
}

// TestSyncRouteSwitchMakesBeforeBreaking: switching spec.route from an
// Ingress to an HTTPRoute, or back, keeps the old route until the new one
// carries traffic, and says so in the Route condition.
func TestSyncRouteSwitchMakesBeforeBreaking(t *testing.T) {
	for _, tc := range []struct {
		name string
		// from and to are the routes before and after the switch.
		from, to func(*appv1.DeployObject)
		// newServing: the new route, already made, carries traffic.
		newServing bool
		gatewayAPI bool
		want       []string
		kept       string
	}{
		{"to an HTTPRoute not made yet", testobjects.WithIngress, testobjects.WithHTTPRoute, false, true,
			[]string{"create httproutes web"}, "Ingress web"},
		{"to an HTTPRoute without the Gateway API", testobjects.WithIngress, testobjects.WithHTTPRoute, false, false,
			nil, "Ingress web"},
		{"to an accepted HTTPRoute", testobjects.WithIngress, testobjects.WithHTTPRoute, true, true,
			[]string{"delete ingresses web"}, ""},
		{"to an Ingress without an address yet", testobjects.WithHTTPRoute, testobjects.WithIngress, false, true,
			[]string{"create ingresses web"}, "HTTPRoute web"},
		{"to an Ingress with an address", testobjects.WithHTTPRoute, testobjects.WithIngress, true, true,
			[]string{"delete httproutes web"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.gatewayAPI = tc.gatewayAPI
			before := testobjects.NewDeployObject(tc.from)
			after := testobjects.NewDeployObject(tc.to)
			f.inLine(after)
			after.Generation++
			if old := testobjects.LiveIngress(before); old != nil {
				f.put(old)
			} else {
				f.put(testobjects.LiveHTTPRoute(before))
			}
			if tc.newServing {
				if ing := testobjects.LiveIngress(after); ing != nil {
					f.put(ing)
				} else {
					f.put(testobjects.LiveHTTPRoute(after))
				}
			}
			res := f.mustSync(after)
			expectActions(t, f.writes(), tc.want...)
			route := conditionOf(statusAfter(after, res), appv1.ConditionRoute)
			if kept := strings.Contains(route.Message, "switching routes: "+tc.kept+" keeps serving"); kept != (tc.kept != "") {
				t.Errorf("Route message %q; want it to say %q is kept: %v", route.Message, tc.kept, tc.kept != "")
			}
		})
	}
}
