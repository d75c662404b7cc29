package children

import (
	"fmt"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// The Ingress: what the controller asks of it, how a live one is brought in
// line, what the cache keeps, and how it is reported. It exists only while
// spec.route sets ingressClassName. The controller owns its labels (not
// others' labels), ingressClassName, rules and tls; a default backend and
// everything else are someone else's and carried over on update. The API
// server fills in no defaults in those fields (pathType is required in
// networking.k8s.io/v1), so they are compared as they are
// (TestRoutes shows 0 writes in steady state against the real one).

// KindIngress names the Ingress in problems and events.
const KindIngress = "Ingress"

// WantsIngress reports whether dobj asks for an Ingress.
func WantsIngress(dobj *appv1.DeployObject) bool {
	r := dobj.Spec.Route
	return r != nil && r.IngressClassName != nil
}

// DesiredIngress is the Ingress dobj asks for; nil when it asks for none.
// It has one rule per hostname (one without a host when there are none),
// each with a path per route rule, sending to the Service's port by name,
// so that a change of the port's number needs no change of the Ingress.
func DesiredIngress(dobj *appv1.DeployObject) *networkingv1.Ingress {
	if !WantsIngress(dobj) {
		return nil
	}
	r := dobj.Spec.Route
	http := &networkingv1.HTTPIngressRuleValue{}
	for _, rule := range RouteRules(r) {
		pathType := networkingv1.PathTypePrefix
		if rule.PathType == appv1.PathExact {
			pathType = networkingv1.PathTypeExact
		}
		http.Paths = append(http.Paths, networkingv1.HTTPIngressPath{
			Path:     string(rule.Path),
			PathType: &pathType,
			Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
				Name: dobj.Name,
				Port: networkingv1.ServiceBackendPort{Name: rule.Port},
			}},
		})
	}
	hosts := r.Hostnames
	if len(hosts) == 0 {
		hosts = []string{""}
	}
	rules := make([]networkingv1.IngressRule, len(hosts))
	for i, h := range hosts {
		// Each rule gets its own copy: the API server would not care,
		// but an update built from the desired object must not alias.
		rules[i] = networkingv1.IngressRule{Host: h, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: http.DeepCopy()}}
	}
	ing := &networkingv1.Ingress{
		ObjectMeta: childMeta(dobj),
		Spec: networkingv1.IngressSpec{
			IngressClassName: copyPtr(r.IngressClassName),
			Rules:            rules,
		},
	}
	if r.TLSSecretName != nil {
		ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: append([]string(nil), r.Hostnames...), SecretName: *r.TLSSecretName}}
	}
	withChildMetadata(&ing.ObjectMeta, r.Metadata)
	return ing
}

// MergeIngress returns live with the owned fields of desired, and whether
// that changed anything. When nothing changed it returns live itself.
func MergeIngress(live, desired *networkingv1.Ingress) (*networkingv1.Ingress, bool) {
	if childMetadataInSync(live.ObjectMeta, desired.ObjectMeta) &&
		equality.Semantic.DeepEqual(live.Spec.IngressClassName, desired.Spec.IngressClassName) &&
		equality.Semantic.DeepEqual(live.Spec.Rules, desired.Spec.Rules) &&
		equality.Semantic.DeepEqual(live.Spec.TLS, desired.Spec.TLS) {
		return live, false
	}
	out := live.DeepCopy()
	mergeChildMetadata(&out.ObjectMeta, live.ObjectMeta, desired.ObjectMeta)
	out.Spec.IngressClassName = desired.Spec.IngressClassName
	out.Spec.Rules = desired.Spec.Rules
	out.Spec.TLS = desired.Spec.TLS
	return out, true
}

// SlimIngress keeps the fields MergeIngress compares and the addresses the
// ingress controller gave the Ingress; their ports and errors are dropped.
func SlimIngress(ing *networkingv1.Ingress) *networkingv1.Ingress {
	ing.ObjectMeta = slimMetaOwning(ing.ObjectMeta)
	ing.Spec = networkingv1.IngressSpec{
		IngressClassName: ing.Spec.IngressClassName,
		Rules:            ing.Spec.Rules,
		TLS:              ing.Spec.TLS,
	}
	lb := ing.Status.LoadBalancer.Ingress
	for i := range lb {
		lb[i] = networkingv1.IngressLoadBalancerIngress{IP: lb[i].IP, Hostname: lb[i].Hostname}
	}
	ing.Status = networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: lb}}
	return ing
}

// IngressCondition reports the Ingress of dobj: why it is missing (problem,
// when the sync could not make it), or whether its ingress controller has
// taken it up, which it tells by giving it an address. An Ingress has no
// other status.
func IngressCondition(dobj *appv1.DeployObject, ing *networkingv1.Ingress, problem *Problem) metav1.Condition {
	c := metav1.Condition{Type: appv1.ConditionRoute, Status: metav1.ConditionFalse, Reason: appv1.ReasonProgressing}
	switch {
	case problem != nil:
		c.Reason, c.Message = problem.Reason, problem.Message
	case ing == nil:
		c.Message = fmt.Sprintf("%s %s does not exist yet", KindIngress, dobj.Name)
	case len(ing.Status.LoadBalancer.Ingress) == 0:
		c.Message = fmt.Sprintf("waiting for the ingress controller of class %s to give %s %s an address", ptr.Deref(ing.Spec.IngressClassName, ""), KindIngress, ing.Name)
	default:
		c.Status, c.Reason = metav1.ConditionTrue, appv1.ReasonAddressAssigned
		c.Message = fmt.Sprintf("%s %s has the address %s", KindIngress, ing.Name, strings.Join(IngressHosts(ing), ", "))
	}
	c.Message = BoundMessage(c.Message)
	return c
}

// IngressHosts are the IP addresses or host names the ingress controller
// gave ing.
func IngressHosts(ing *networkingv1.Ingress) []string {
	var out []string
	for _, lb := range ing.Status.LoadBalancer.Ingress {
		if h := LoadBalancerHost(lb.IP, lb.Hostname); h != "" {
			out = append(out, h)
		}
	}
	return out
}
