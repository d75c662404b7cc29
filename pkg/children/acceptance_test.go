package children_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"deployobject.dev/controller/pkg/children"
)

// TestRouteAcceptance reads HTTPRoutes as Gateway controllers leave them
// (testdata/routestatus): every controller's entry for a parent counts, a
// condition counts only for the route's current generation, and a parent
// accepts only with both Accepted and ResolvedRefs True.
func TestRouteAcceptance(t *testing.T) {
	envoy := gatewayv1.GatewayController("gateway.envoyproxy.io/gatewayclass-controller")
	for _, tc := range []struct {
		file string
		want children.Acceptance
	}{
		{"accepted.yaml", children.Acceptance{Accepted: true}},
		{"missing-parent-entry.yaml", children.Acceptance{Waiting: []string{"shop/internal"}}},
		{"generation-zero.yaml", children.Acceptance{Waiting: []string{"infra/public"}}},
		{"observed-generation-behind.yaml", children.Acceptance{Waiting: []string{"infra/public"}}},
		{"backend-not-found.yaml", children.Acceptance{Refused: &children.Refusal{
			Parent: "infra/public", ControllerName: envoy, Type: gatewayv1.RouteConditionResolvedRefs,
			Reason: "BackendNotFound", Message: "Failed to process route rule 0 backendRef 0: service shop/web not found.",
		}}},
		{"accepted-without-resolvedrefs.yaml", children.Acceptance{Waiting: []string{"infra/public"}}},
		{"foreign-entry-other-parent.yaml", children.Acceptance{Waiting: []string{"infra/public"}}},
		{"foreign-stale-refusal.yaml", children.Acceptance{Accepted: true}},
		{"foreign-current-refusal.yaml", children.Acceptance{Refused: &children.Refusal{
			Parent: "infra/public", ControllerName: "gateway.nginx.org/nginx-gateway-controller", Type: gatewayv1.RouteConditionAccepted,
			Reason: "NotAllowedByListeners", Message: "Route is not allowed by any listener",
		}}},
		{"two-parents-one-waiting.yaml", children.Acceptance{Waiting: []string{"shop/internal"}}},
		{"section-name.yaml", children.Acceptance{Refused: &children.Refusal{
			Parent: "infra/public/http", ControllerName: envoy, Type: gatewayv1.RouteConditionAccepted,
			Reason: "NotAllowedByListeners", Message: "No listeners included by this parent ref allowed this attachment.",
		}}},
		// The first refusing parent is reported, and of an entry that
		// refuses twice, its Accepted condition.
		{"two-parents-refused.yaml", children.Acceptance{Refused: &children.Refusal{
			Parent: "infra/public", ControllerName: envoy, Type: gatewayv1.RouteConditionAccepted,
			Reason: "NotAllowedByListeners", Message: "No listeners included by this parent ref allowed this attachment.",
		}}},
		{"no-parent-refs.yaml", children.Acceptance{}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			r := readRoute(t, tc.file)
			if got := children.RouteAcceptance(&r.ObjectMeta, r.Spec.ParentRefs, r.Status.RouteStatus); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("RouteAcceptance = %s, want %s", describe(got), describe(tc.want))
			}
		})
	}
}

func readRoute(t *testing.T, file string) *gatewayv1.HTTPRoute {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "routestatus", file))
	if err != nil {
		t.Fatal(err)
	}
	var r gatewayv1.HTTPRoute
	if err := yaml.UnmarshalStrict(data, &r); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return &r
}

func describe(a children.Acceptance) string {
	out, _ := yaml.Marshal(a)
	return "\n" + string(out)
}
