package status

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
)

// maxAddresses is the bound of status.addresses in the CRD: a Service may
// be given any number of load balancer addresses, and the status must stay
// valid.
const maxAddresses = 64

// addressesOf lists where dobj can be reached, from its children as the
// sync left them: the Service's DNS name in the cluster with its ports,
// once the Service exists; each address a LoadBalancer Service was given,
// with the same ports; and the route's URLs, once the route is taken up
// (route is its condition's status): one per hostname and rule path, or
// for an Ingress without hostnames, per address its ingress controller gave
// it and rule path. A
// wildcard hostname is no address of its own and is left out. The scheme
// of an Ingress URL is https with tlsSecretName; an HTTPRoute's is https
// with httpsRedirect, and http otherwise, as the controller does not read
// which Gateway listener terminates TLS.
//
// The list depends only on the spec and on what the Service and route
// controllers assigned, so in steady state it does not change and costs no
// write.
func addressesOf(dobj *appv1.DeployObject, out Outcome, route metav1.ConditionStatus) []appv1.Address {
	var addrs []appv1.Address
	if svc := out.Service; svc != nil && children.WantsService(dobj) {
		ports := make([]int32, len(dobj.Spec.Ports))
		for i, p := range dobj.Spec.Ports {
			ports[i] = children.ServicePort(p)
		}
		addrs = append(addrs, appv1.Address{Type: appv1.AddressServiceDNS, Value: svc.Name + "." + svc.Namespace + ".svc", Ports: ports})
		if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
			for _, lb := range svc.Status.LoadBalancer.Ingress {
				if h := children.LoadBalancerHost(lb.IP, lb.Hostname); h != "" {
					addrs = append(addrs, appv1.Address{Type: appv1.AddressLoadBalancer, Value: h, Ports: ports})
				}
			}
		}
	}
	if r := dobj.Spec.Route; r != nil && route == metav1.ConditionTrue {
		scheme := "http://"
		if children.WantsHTTPSRedirect(dobj) {
			scheme = "https://"
		}
		hosts := r.Hostnames
		if children.WantsIngress(dobj) {
			if r.TLSSecretName != nil {
				scheme = "https://"
			}
			if len(hosts) == 0 && out.Ingress != nil {
				hosts = children.IngressHosts(out.Ingress)
			}
		}
		rules := children.RouteRules(r)
		for _, h := range hosts {
			if strings.HasPrefix(h, "*") {
				continue
			}
			if strings.Contains(h, ":") {
				// An IPv6 address, as an ingress controller may give.
				h = "[" + h + "]"
			}
			for _, rule := range rules {
				addrs = append(addrs, appv1.Address{Type: appv1.AddressURL, Value: scheme + h + string(rule.Path)})
			}
		}
	}
	if len(addrs) > maxAddresses {
		addrs = addrs[:maxAddresses]
	}
	return addrs
}
