//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// TestChildMetadata: labels and annotations from service.metadata and
// route.metadata land on the Service and the Ingress, survive another
// writer's keys, and a key dropped from the spec goes alone; with others'
// keys present, resyncs write nothing.
func TestChildMetadata(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Service = &appv1.ServiceSettings{Metadata: &appv1.ChildMetadata{
			Labels:      map[string]string{"team": "shop"},
			Annotations: map[string]string{"service.beta.kubernetes.io/aws-load-balancer-scheme": "internal", "example.com/owner": "payments"},
		}}
		d.Spec.Route = &appv1.Route{Port: "http", Hostnames: []string{"shop.example.com"}, IngressClassName: ptr.To("nginx"), Metadata: &appv1.ChildMetadata{
			Annotations: map[string]string{"cert-manager.io/cluster-issuer": "letsencrypt", "external-dns.alpha.kubernetes.io/hostname": "shop.example.com"},
		}}
	}))
	waitReady(t, ns, "web")
	svc := getService(t, ns, "web")
	if svc.Labels["team"] != "shop" || svc.Annotations["service.beta.kubernetes.io/aws-load-balancer-scheme"] != "internal" || svc.Annotations["example.com/owner"] != "payments" {
		t.Fatalf("Service metadata: labels %v, annotations %v", svc.Labels, svc.Annotations)
	}
	ing := getIngress(t, ns, "web")
	if ing.Annotations["cert-manager.io/cluster-issuer"] != "letsencrypt" {
		t.Fatalf("Ingress annotations %v", ing.Annotations)
	}

	// Others write their keys, as a cloud provider and cert-manager do.
	kubectlPatch(t, ns, "service/web", `[{"op":"add","path":"/metadata/annotations/cloud.example.com~1lb-id","value":"lb-7"}]`)
	kubectlPatch(t, ns, "ingress/web", `[{"op":"add","path":"/metadata/annotations/cert-manager.io~1certificate-name","value":"web-tls"}]`)
	// The shared controller serves the other tests too: its retries are
	// theirs as much as this one's.
	expectQuiet(t, shared, ns, sharedResync+5*time.Second, false)

	updateDO(t, ns, "web", func(d *appv1.DeployObject) {
		delete(d.Spec.Service.Metadata.Annotations, "example.com/owner")
		delete(d.Spec.Route.Metadata.Annotations, "external-dns.alpha.kubernetes.io/hostname")
	})
	eventually(t, timeout, "the dropped keys removed", func() (bool, string, error) {
		svc, ing := getService(t, ns, "web"), getIngress(t, ns, "web")
		_, svcKept := svc.Annotations["example.com/owner"]
		_, ingKept := ing.Annotations["external-dns.alpha.kubernetes.io/hostname"]
		return !svcKept && !ingKept, "", nil
	})
	svc, ing = getService(t, ns, "web"), getIngress(t, ns, "web")
	if svc.Annotations["cloud.example.com/lb-id"] != "lb-7" || svc.Annotations["service.beta.kubernetes.io/aws-load-balancer-scheme"] != "internal" || svc.Labels["team"] != "shop" {
		t.Errorf("Service keys lost with the dropped one: labels %v, annotations %v", svc.Labels, svc.Annotations)
	}
	if ing.Annotations["cert-manager.io/certificate-name"] != "web-tls" || ing.Annotations["cert-manager.io/cluster-issuer"] != "letsencrypt" {
		t.Errorf("Ingress keys lost with the dropped one: %v", ing.Annotations)
	}
}

func getIngress(t *testing.T, ns, name string) *networkingv1.Ingress {
	t.Helper()
	i, err := env.kube.NetworkingV1().Ingresses(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// TestServiceOptions: spec.service's fields reach the Service and resyncs
// write nothing with the API server's defaults present; a field dropped
// from the spec goes back to the default; a new load balancer class and a
// switch to or from headless recreate the Service, as the API server
// allows no change of either in place.
func TestServiceOptions(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
		d.Spec.ServiceType = appv1.ServiceTypeLoadBalancer
		d.Spec.Service = &appv1.ServiceSettings{
			ExternalTrafficPolicy:    ptr.To(corev1.ServiceExternalTrafficPolicyLocal),
			InternalTrafficPolicy:    ptr.To(corev1.ServiceInternalTrafficPolicyLocal),
			TrafficDistribution:      ptr.To(corev1.ServiceTrafficDistributionPreferClose),
			LoadBalancerClass:        ptr.To("example.com/a"),
			LoadBalancerSourceRanges: []string{"10.0.0.0/8"},
		}
	}))
	waitReady(t, ns, "web")
	svc := getService(t, ns, "web")
	if s := svc.Spec; s.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal || *s.InternalTrafficPolicy != corev1.ServiceInternalTrafficPolicyLocal ||
		ptr.Deref(s.TrafficDistribution, "") != corev1.ServiceTrafficDistributionPreferClose || ptr.Deref(s.LoadBalancerClass, "") != "example.com/a" ||
		len(s.LoadBalancerSourceRanges) != 1 {
		t.Fatalf("Service spec %+v", s)
	}
	expectQuiet(t, shared, ns, sharedResync+5*time.Second, false)

	updateDO(t, ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Service = &appv1.ServiceSettings{LoadBalancerClass: ptr.To("example.com/a")}
	})
	eventually(t, timeout, "the dropped fields back to their defaults, in place", func() (bool, string, error) {
		s, err := env.kube.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		sp := s.Spec
		return s.UID == svc.UID && sp.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyCluster &&
				ptr.Deref(sp.InternalTrafficPolicy, "") == corev1.ServiceInternalTrafficPolicyCluster && sp.TrafficDistribution == nil && len(sp.LoadBalancerSourceRanges) == 0,
			fmt.Sprintf("uid %s, %+v", s.UID, sp), nil
	})
	updateDO(t, ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Service = &appv1.ServiceSettings{LoadBalancerClass: ptr.To("example.com/b")}
	})
	eventually(t, timeout, "the Service recreated with the new class", func() (bool, string, error) {
		s, err := env.kube.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return s.UID != svc.UID && ptr.Deref(s.Spec.LoadBalancerClass, "") == "example.com/b", fmt.Sprintf("uid %s, class %v", s.UID, s.Spec.LoadBalancerClass), nil
	})
	waitReady(t, ns, "web")

	create(t, newDO(ns, "peers", func(d *appv1.DeployObject) {
		d.Spec.ServiceType = appv1.ServiceTypeClusterIP
		d.Spec.Service = &appv1.ServiceSettings{Headless: ptr.To(true)}
	}))
	waitReady(t, ns, "peers")
	if ip := getService(t, ns, "peers").Spec.ClusterIP; ip != corev1.ClusterIPNone {
		t.Fatalf("clusterIP %q, want None", ip)
	}
	updateDO(t, ns, "peers", func(d *appv1.DeployObject) { d.Spec.Service = nil })
	eventually(t, timeout, "the Service recreated with a cluster IP", func() (bool, string, error) {
		s, err := env.kube.CoreV1().Services(ns).Get(ctx, "peers", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return s.Spec.ClusterIP != corev1.ClusterIPNone && s.Spec.ClusterIP != "", s.Spec.ClusterIP, nil
	})
	waitReady(t, ns, "peers")
}
