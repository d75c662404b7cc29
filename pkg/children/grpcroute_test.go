package children_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/testobjects"
)

func TestDesiredGRPCRoute(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mutate   func(*appv1.DeployObject)
		grpc     bool
		want     []*gatewayv1.GRPCMethodMatch
		wantPort gatewayv1.PortNumber
	}{
		{"an HTTP port makes an HTTPRoute", testobjects.WithHTTPRoute, false, nil, 0},
		{"an Ingress to a gRPC port stays an Ingress", func(d *appv1.DeployObject) {
			testobjects.WithIngress(d)
			d.Spec.Ports[0].AppProtocol = ptr.To("grpc")
		}, false, nil, 0},
		{"an Ingress of every call to a gRPC port stays an Ingress", func(d *appv1.DeployObject) {
			testobjects.WithIngress(d)
			d.Spec.Route.Path = ""
			d.Spec.Ports[0].AppProtocol = ptr.To("grpc")
		}, false, nil, 0},
		{"a service and a method", testobjects.WithGRPCRoute, true, []*gatewayv1.GRPCMethodMatch{
			{Type: ptr.To(gatewayv1.GRPCMethodMatchExact), Service: ptr.To("shop.v1.Cart")},
			{Type: ptr.To(gatewayv1.GRPCMethodMatchExact), Service: ptr.To("grpc.health.v1.Health"), Method: ptr.To("Check")},
		}, 9090},
		// A prefix cannot be a GRPCRoute method match, which is exact:
		// such a route, admitted before GRPCRoutes, keeps its HTTPRoute.
		{"a prefix naming a method stays an HTTPRoute", func(d *appv1.DeployObject) {
			testobjects.WithGRPCRoute(d)
			d.Spec.Route.Rules[1].PathType = appv1.PathPrefix
		}, false, nil, 0},
		{"the short form: every call", func(d *appv1.DeployObject) {
			testobjects.WithHTTPRoute(d)
			d.Spec.Ports[0].AppProtocol = ptr.To("grpc")
		}, true, []*gatewayv1.GRPCMethodMatch{nil}, 80},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject(tc.mutate)
			got, err := children.DesiredGRPCRoute(dobj, nil)
			if err != nil {
				t.Fatal(err)
			}
			if (got != nil) != tc.grpc || children.WantsHTTPRoute(dobj) == tc.grpc && children.WantsGatewayRoute(dobj) {
				t.Fatalf("GRPCRoute %v, HTTPRoute wanted %v; want a GRPCRoute: %v", got != nil, children.WantsHTTPRoute(dobj), tc.grpc)
			}
			if got == nil {
				return
			}
			if len(got.Spec.Rules) != len(tc.want) || got.Annotations[appv1.AnnotationRouteHash] == "" || got.Name != dobj.Name || len(got.Spec.Hostnames) != 1 {
				t.Fatalf("GRPCRoute = %+v", got)
			}
			for i, rule := range got.Spec.Rules {
				var m *gatewayv1.GRPCMethodMatch
				if len(rule.Matches) > 0 {
					m = rule.Matches[0].Method
				}
				if !testobjects.EqualObjects(m, tc.want[i]) {
					t.Errorf("rule %d matches %+v, want %+v", i, m, tc.want[i])
				}
				if b := rule.BackendRefs[0]; b.Name != "web" || *b.Port != tc.wantPort || *b.Weight != 1 {
					t.Errorf("rule %d backend %+v, want Service web port %d", i, b, tc.wantPort)
				}
			}
		})
	}
}

func TestMergeGRPCRoute(t *testing.T) {
	dobj := testobjects.NewDeployObject(testobjects.WithGRPCRoute)
	desired, err := children.DesiredGRPCRoute(dobj, nil)
	if err != nil {
		t.Fatal(err)
	}
	live := testobjects.LiveGRPCRoute(dobj)
	live.Labels["team"] = "rpc"
	if _, changed := children.MergeGRPCRoute(live, desired); changed {
		t.Error("a GRPCRoute in line, with someone else's label, is written")
	}
	live.Spec.Rules = live.Spec.Rules[:1]
	merged, changed := children.MergeGRPCRoute(live, desired)
	if !changed || len(merged.Spec.Rules) != 2 || merged.Labels["team"] != "rpc" || merged.UID != live.UID {
		t.Errorf("merged %+v (changed %v), want both rules back on the same object with the label", merged, changed)
	}
}

// TestGRPCRouteCanaryWeights: a GRPCRoute's rules split as an HTTPRoute's
// do (see TestDesiredHTTPRouteCanaryWeights), the live weight is read back
// as from an HTTPRoute, and the weight is part of the hash.
func TestGRPCRouteCanaryWeights(t *testing.T) {
	dobj := testobjects.NewDeployObject(testobjects.WithGRPCRoute)
	for _, tc := range []struct {
		name       string
		weight     *int32
		edit       func(*gatewayv1.GRPCRoute)
		want       [][]gatewayv1.BackendRef
		wantWeight *int32
	}{
		{"no canary", nil, func(*gatewayv1.GRPCRoute) {}, [][]gatewayv1.BackendRef{
			{backend("web", 9090, 1)},
			{backend("web", 9090, 1)},
		}, nil},
		{"20%", ptr.To[int32](20), func(*gatewayv1.GRPCRoute) {}, [][]gatewayv1.BackendRef{
			{backend("web", 9090, 80), backend("web-canary", 9090, 20)},
			{backend("web", 9090, 80), backend("web-canary", 9090, 20)},
		}, ptr.To[int32](20)},
		{"above 100 is 100", ptr.To[int32](101), func(*gatewayv1.GRPCRoute) {}, [][]gatewayv1.BackendRef{
			{backend("web", 9090, 0), backend("web-canary", 9090, 100)},
			{backend("web", 9090, 0), backend("web-canary", 9090, 100)},
		}, ptr.To[int32](100)},
		{"rules disagree: the higher", ptr.To[int32](10), func(r *gatewayv1.GRPCRoute) { r.Spec.Rules[0].BackendRefs[1].Weight = ptr.To[int32](40) }, [][]gatewayv1.BackendRef{
			{backend("web", 9090, 90), backend("web-canary", 9090, 40)},
			{backend("web", 9090, 90), backend("web-canary", 9090, 10)},
		}, ptr.To[int32](40)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := children.DesiredGRPCRoute(dobj, tc.weight)
			if err != nil {
				t.Fatal(err)
			}
			tc.edit(r)
			var got [][]gatewayv1.BackendRef
			for _, rule := range r.Spec.Rules {
				var refs []gatewayv1.BackendRef
				for _, b := range rule.BackendRefs {
					refs = append(refs, b.BackendRef)
				}
				got = append(got, refs)
			}
			if !equality.Semantic.DeepEqual(got, tc.want) {
				t.Errorf("backends (-want +got):\n%s", diff.Diff(tc.want, got))
			}
			if w := children.GRPCRouteCanaryWeight(r, dobj); !equality.Semantic.DeepEqual(w, tc.wantWeight) {
				t.Errorf("weight %v, want %v", ptr.Deref(w, -1), ptr.Deref(tc.wantWeight, -1))
			}
		})
	}
	if w := children.GRPCRouteCanaryWeight(nil, dobj); w != nil {
		t.Errorf("weight %d without a route", *w)
	}

	live, err := children.DesiredGRPCRoute(dobj, ptr.To[int32](20))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		want    *int32
		changed bool
	}{{ptr.To[int32](20), false}, {ptr.To[int32](50), true}, {nil, true}} {
		desired, err := children.DesiredGRPCRoute(dobj, tc.want)
		if err != nil {
			t.Fatal(err)
		}
		got, changed := children.MergeGRPCRoute(live, desired)
		if changed != tc.changed {
			t.Errorf("live at 20%%, asked %v: changed = %v, want %v", ptr.Deref(tc.want, -1), changed, tc.changed)
		}
		if _, slim := children.MergeGRPCRoute(children.SlimGRPCRoute(live.DeepCopy()), desired); slim != tc.changed {
			t.Errorf("live at 20%%, asked %v, from the cache: changed = %v, want %v", ptr.Deref(tc.want, -1), slim, tc.changed)
		}
		if _, again := children.MergeGRPCRoute(got, desired); again {
			t.Errorf("asked %v: the merged GRPCRoute is not in line", ptr.Deref(tc.want, -1))
		}
	}
}
