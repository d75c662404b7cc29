package children_test

import (
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/testobjects"
)

func TestDesiredIngress(t *testing.T) {
	prefix := networkingv1.PathTypePrefix
	backend := func(path string) *networkingv1.HTTPIngressRuleValue {
		return &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{Path: path, PathType: &prefix, Backend: networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Name: "http"}},
		}}}}
	}
	for _, tc := range []struct {
		name  string
		route *appv1.Route
		want  *networkingv1.IngressSpec
	}{
		{"no route", nil, nil},
		{"an HTTPRoute", &appv1.Route{Port: "http", ParentRefs: []appv1.GatewayRef{{Name: "gw"}}}, nil},
		{"no hostnames, path defaulted", &appv1.Route{Port: "http", IngressClassName: ptr.To("nginx")}, &networkingv1.IngressSpec{
			IngressClassName: ptr.To("nginx"),
			Rules:            []networkingv1.IngressRule{{IngressRuleValue: networkingv1.IngressRuleValue{HTTP: backend("/")}}},
		}},
		{"hostnames and TLS", &appv1.Route{Port: "http", Hostnames: []string{"a.example.com", "*.b.example.com"}, Path: "/api", IngressClassName: ptr.To("nginx"), TLSSecretName: ptr.To("tls")}, &networkingv1.IngressSpec{
			IngressClassName: ptr.To("nginx"),
			Rules: []networkingv1.IngressRule{
				{Host: "a.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: backend("/api")}},
				{Host: "*.b.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: backend("/api")}},
			},
			TLS: []networkingv1.IngressTLS{{Hosts: []string{"a.example.com", "*.b.example.com"}, SecretName: "tls"}},
		}},
		{"two rules, an exact path and a prefix, to two ports", &appv1.Route{Hostnames: []string{"a.example.com"}, IngressClassName: ptr.To("nginx"), Rules: []appv1.RouteRule{
			{Path: "/healthz", PathType: appv1.PathExact, Port: "admin"},
			{Path: "/", PathType: appv1.PathPrefix, Port: "http"},
		}}, &networkingv1.IngressSpec{
			IngressClassName: ptr.To("nginx"),
			Rules: []networkingv1.IngressRule{{Host: "a.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{
				{Path: "/healthz", PathType: ptr.To(networkingv1.PathTypeExact), Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Name: "admin"}}}},
				backend("/").Paths[0],
			}}}}},
		}},
		{"a rule read before the API server's defaults", &appv1.Route{IngressClassName: ptr.To("nginx"), Rules: []appv1.RouteRule{{Port: "http"}}}, &networkingv1.IngressSpec{
			IngressClassName: ptr.To("nginx"),
			Rules:            []networkingv1.IngressRule{{IngressRuleValue: networkingv1.IngressRuleValue{HTTP: backend("/")}}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject(func(d *appv1.DeployObject) { d.Spec.Route = tc.route })
			got := children.DesiredIngress(dobj)
			if tc.want == nil {
				if got != nil {
					t.Fatalf("desiredIngress = %+v, want none", got)
				}
				return
			}
			if !equality.Semantic.DeepEqual(got.Spec, *tc.want) {
				t.Errorf("spec differs:\n%s", diff.Diff(*tc.want, got.Spec))
			}
			if !metav1.IsControlledBy(got, dobj) || got.Labels[appv1.LabelName] != "web" {
				t.Errorf("metadata = %+v, want owned and labelled", got.ObjectMeta)
			}
		})
	}
}

func TestMergeIngress(t *testing.T) {
	for _, tc := range []struct {
		name    string
		drift   func(*networkingv1.Ingress)
		changed bool
	}{
		{"in line", func(*networkingv1.Ingress) {}, false},
		{"others' labels, annotations and default backend", func(i *networkingv1.Ingress) {
			i.Labels["team"] = "shop"
			i.Annotations = map[string]string{"nginx.ingress.kubernetes.io/rewrite-target": "/"}
			i.Spec.DefaultBackend = &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "default", Port: networkingv1.ServiceBackendPort{Number: 80}}}
		}, false},
		{"class changed", func(i *networkingv1.Ingress) { i.Spec.IngressClassName = ptr.To("traefik") }, true},
		{"path changed", func(i *networkingv1.Ingress) { i.Spec.Rules[0].HTTP.Paths[0].Path = "/" }, true},
		{"rule added", func(i *networkingv1.Ingress) {
			i.Spec.Rules = append(i.Spec.Rules, networkingv1.IngressRule{Host: "x.example.com"})
		}, true},
		{"TLS removed", func(i *networkingv1.Ingress) { i.Spec.TLS = nil }, true},
		{"label removed", func(i *networkingv1.Ingress) { delete(i.Labels, appv1.LabelManagedBy) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject(testobjects.WithIngress)
			live := testobjects.LiveIngress(dobj)
			tc.drift(live)
			before := live.DeepCopy()
			got, changed := children.MergeIngress(live, children.DesiredIngress(dobj))
			if changed != tc.changed {
				t.Fatalf("changed = %v, want %v", changed, tc.changed)
			}
			if !equality.Semantic.DeepEqual(live, before) {
				t.Error("mergeIngress modified live")
			}
			if _, again := children.MergeIngress(got, children.DesiredIngress(dobj)); again {
				t.Error("the merged Ingress is not in line")
			}
			if !equality.Semantic.DeepEqual(got.Spec.DefaultBackend, before.Spec.DefaultBackend) || got.Annotations["nginx.ingress.kubernetes.io/rewrite-target"] != before.Annotations["nginx.ingress.kubernetes.io/rewrite-target"] {
				t.Error("mergeIngress dropped what belongs to someone else")
			}
		})
	}
}

func TestSlimIngressAnswersLikeTheFullObject(t *testing.T) {
	dobj := testobjects.NewDeployObject(testobjects.WithIngress)
	full := testobjects.LiveIngress(dobj)
	full.Annotations = map[string]string{"note": "x"}
	full.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	full.Spec.Rules[0].HTTP.Paths[0].Path = "/drifted"
	slim := children.SlimIngress(full.DeepCopy())
	if _, a := children.MergeIngress(full, children.DesiredIngress(dobj)); !a {
		t.Fatal("the drift is not seen in the full object")
	}
	if _, b := children.MergeIngress(slim, children.DesiredIngress(dobj)); !b {
		t.Error("the slim copy hides the drift")
	}
	if a, b := children.IngressCondition(dobj, full, nil), children.IngressCondition(dobj, slim, nil); a != b {
		t.Errorf("condition: full %+v, slim %+v", a, b)
	}
	if slim.Annotations != nil || slim.ManagedFields != nil || slim.Status.LoadBalancer.Ingress[0].Ports != nil {
		t.Error("the slim copy keeps what the controller never reads")
	}
}

func TestIngressCondition(t *testing.T) {
	dobj := testobjects.NewDeployObject(testobjects.WithIngress)
	noAddress := testobjects.LiveIngress(dobj)
	noAddress.Status = networkingv1.IngressStatus{}
	for _, tc := range []struct {
		name    string
		ing     *networkingv1.Ingress
		problem *children.Problem
		status  metav1.ConditionStatus
		reason  string
		message string
	}{
		{"blocked", nil, &children.Problem{Reason: appv1.ReasonResourceConflict, Message: "Ingress web exists and is not controlled by this DeployObject"}, metav1.ConditionFalse, appv1.ReasonResourceConflict, "not controlled"},
		{"not made yet", nil, nil, metav1.ConditionFalse, appv1.ReasonProgressing, "Ingress web does not exist yet"},
		{"no address yet", noAddress, nil, metav1.ConditionFalse, appv1.ReasonProgressing, "waiting for the ingress controller of class nginx"},
		{"address assigned", testobjects.LiveIngress(dobj), nil, metav1.ConditionTrue, appv1.ReasonAddressAssigned, "Ingress web has the address 192.0.2.7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := children.IngressCondition(dobj, tc.ing, tc.problem)
			if c.Type != appv1.ConditionRoute || c.Status != tc.status || c.Reason != tc.reason || !strings.Contains(c.Message, tc.message) {
				t.Errorf("condition = %+v, want %s/%s with %q", c, tc.status, tc.reason, tc.message)
			}
		})
	}
}
