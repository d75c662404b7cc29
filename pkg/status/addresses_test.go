package status

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/testobjects"
)

func TestAddressesOf(t *testing.T) {
	svcDNS := appv1.Address{Type: appv1.AddressServiceDNS, Value: "web.apps.svc", Ports: []int32{80}}
	loadBalancer := func(s *corev1.Service) *corev1.Service {
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.7"}, {Hostname: "lb.example.net"}}
		return s
	}
	ingressWithout := func(d *appv1.DeployObject) {
		testobjects.WithIngress(d)
		d.Spec.Route.Hostnames, d.Spec.Route.TLSSecretName = nil, nil
	}
	for _, tc := range []struct {
		name  string
		spec  func(*appv1.DeployObject)
		out   func(*appv1.DeployObject) Outcome
		route metav1.ConditionStatus
		want  []appv1.Address
	}{
		{"no Service yet", nil, func(*appv1.DeployObject) Outcome { return Outcome{} }, "", nil},
		{"no ports", func(d *appv1.DeployObject) { d.Spec.Ports = nil }, func(*appv1.DeployObject) Outcome { return Outcome{} }, "", nil},
		{"ClusterIP Service", nil, func(d *appv1.DeployObject) Outcome { return Outcome{Service: testobjects.LiveService(d)} }, "", []appv1.Address{svcDNS}},
		{"LoadBalancer provisioned", nil, func(d *appv1.DeployObject) Outcome { return Outcome{Service: loadBalancer(testobjects.LiveService(d))} }, "", []appv1.Address{
			svcDNS,
			{Type: appv1.AddressLoadBalancer, Value: "203.0.113.7", Ports: []int32{80}},
			{Type: appv1.AddressLoadBalancer, Value: "lb.example.net", Ports: []int32{80}},
		}},
		{"Ingress not taken up yet", testobjects.WithIngress, func(d *appv1.DeployObject) Outcome {
			return Outcome{Service: testobjects.LiveService(d), Ingress: testobjects.LiveIngress(d)}
		}, metav1.ConditionFalse, []appv1.Address{svcDNS}},
		{"Ingress with TLS, wildcard left out", testobjects.WithIngress, func(d *appv1.DeployObject) Outcome {
			return Outcome{Service: testobjects.LiveService(d), Ingress: testobjects.LiveIngress(d)}
		}, metav1.ConditionTrue, []appv1.Address{
			svcDNS, {Type: appv1.AddressURL, Value: "https://shop.example.com/api"},
		}},
		{"Ingress without hostnames uses its addresses", ingressWithout, func(d *appv1.DeployObject) Outcome {
			i := testobjects.LiveIngress(d)
			i.Status.LoadBalancer.Ingress = append(i.Status.LoadBalancer.Ingress, networkingv1.IngressLoadBalancerIngress{IP: "2001:db8::1"})
			return Outcome{Service: testobjects.LiveService(d), Ingress: i}
		}, metav1.ConditionTrue, []appv1.Address{
			svcDNS, {Type: appv1.AddressURL, Value: "http://192.0.2.7/api"}, {Type: appv1.AddressURL, Value: "http://[2001:db8::1]/api"},
		}},
		{"HTTPRoute accepted", testobjects.WithHTTPRoute, func(d *appv1.DeployObject) Outcome {
			return Outcome{Service: testobjects.LiveService(d), HTTPRoute: testobjects.LiveHTTPRoute(d)}
		}, metav1.ConditionTrue, []appv1.Address{
			svcDNS, {Type: appv1.AddressURL, Value: "http://shop.example.com/"},
		}},
		{"HTTPRoute with two rules: every host and path", func(d *appv1.DeployObject) {
			testobjects.WithHTTPRoute(d)
			d.Spec.Route.Hostnames = []string{"shop.example.com", "shop.example.org"}
			d.Spec.Route.Port, d.Spec.Route.Rules = "", []appv1.RouteRule{{Path: "/api", PathType: appv1.PathPrefix, Port: "http"}, {Path: "/", PathType: appv1.PathPrefix, Port: "http"}}
		}, func(d *appv1.DeployObject) Outcome {
			return Outcome{Service: testobjects.LiveService(d), HTTPRoute: testobjects.LiveHTTPRoute(d)}
		}, metav1.ConditionTrue, []appv1.Address{
			svcDNS,
			{Type: appv1.AddressURL, Value: "http://shop.example.com/api"}, {Type: appv1.AddressURL, Value: "http://shop.example.com/"},
			{Type: appv1.AddressURL, Value: "http://shop.example.org/api"}, {Type: appv1.AddressURL, Value: "http://shop.example.org/"},
		}},
		{"HTTPRoute not accepted", testobjects.WithHTTPRoute, func(d *appv1.DeployObject) Outcome {
			return Outcome{Service: testobjects.LiveService(d), HTTPRoute: testobjects.LiveHTTPRoute(d)}
		}, metav1.ConditionFalse, []appv1.Address{svcDNS}},
		{"bounded", nil, func(d *appv1.DeployObject) Outcome {
			s := loadBalancer(testobjects.LiveService(d))
			for range 100 {
				s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: "203.0.113.8"})
			}
			return Outcome{Service: s}
		}, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mutate []func(*appv1.DeployObject)
			if tc.spec != nil {
				mutate = append(mutate, tc.spec)
			}
			dobj := testobjects.NewDeployObject(mutate...)
			got := addressesOf(dobj, tc.out(dobj), tc.route)
			if tc.name == "bounded" {
				if len(got) != maxAddresses {
					t.Errorf("%d addresses, want the CRD's bound %d", len(got), maxAddresses)
				}
				return
			}
			if !equality.Semantic.DeepEqual(got, tc.want) {
				t.Errorf("addresses differ:\n%s", diff.Diff(tc.want, got))
			}
		})
	}
}
