package children_test

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/testobjects"
)

// withService gives dobj the Service settings s and type t.
func withService(t appv1.ServiceType, s appv1.ServiceSettings) func(*appv1.DeployObject) {
	return func(d *appv1.DeployObject) { d.Spec.ServiceType, d.Spec.Service = t, &s }
}

// TestServiceFields: the fields spec.service sets reach the Service, a
// Service carrying them (as the cache keeps it) is in line, a field the
// spec stops setting goes back to the API server's default, and one
// someone else set is kept.
func TestServiceFields(t *testing.T) {
	local := ptr.To(corev1.ServiceExternalTrafficPolicyLocal)
	set := testobjects.NewDeployObject(withService(appv1.ServiceTypeLoadBalancer, appv1.ServiceSettings{
		ExternalTrafficPolicy:    local,
		InternalTrafficPolicy:    ptr.To(corev1.ServiceInternalTrafficPolicyLocal),
		TrafficDistribution:      ptr.To(corev1.ServiceTrafficDistributionPreferClose),
		LoadBalancerClass:        ptr.To("example.com/lb"),
		LoadBalancerSourceRanges: []string{"10.0.0.0/8"},
	}))
	live := children.DesiredService(set)
	live.Spec.ClusterIP, live.Spec.Ports[0].NodePort = "10.96.0.7", 30080
	if _, changed := children.MergeService(live.DeepCopy(), children.DesiredService(set)); changed {
		t.Error("a Service with the spec's fields is not in line")
	}
	if _, changed := children.MergeService(children.SlimService(live.DeepCopy()), children.DesiredService(set)); changed {
		t.Error("a Service as the cache keeps it is not in line: every resync would write")
	}

	unset := testobjects.NewDeployObject(withService(appv1.ServiceTypeLoadBalancer, appv1.ServiceSettings{LoadBalancerClass: ptr.To("example.com/lb")}))
	got, changed := children.MergeService(live.DeepCopy(), children.DesiredService(unset))
	s := got.Spec
	if !changed || s.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster || *s.InternalTrafficPolicy != corev1.ServiceInternalTrafficPolicyCluster ||
		s.TrafficDistribution != nil || s.LoadBalancerSourceRanges != nil {
		t.Errorf("fields the spec stopped setting: changed %v, %+v; want the API server's defaults", changed, s)
	}
	if _, again := children.MergeService(got, children.DesiredService(unset)); again {
		t.Error("merging the merged Service changes it again")
	}

	// Someone else's externalTrafficPolicy on a Service whose spec never
	// set it is theirs.
	plain := testobjects.NewDeployObject(func(d *appv1.DeployObject) { d.Spec.ServiceType = appv1.ServiceTypeNodePort })
	theirs := children.DesiredService(plain)
	theirs.Spec.ExternalTrafficPolicy = *local
	if _, changed := children.MergeService(theirs, children.DesiredService(plain)); changed {
		t.Error("someone else's externalTrafficPolicy was taken back")
	}
}

// TestServiceRecreation: the cluster IP (headless or not) and a load
// balancer's class change only by recreating the Service; what an adopted
// Service's maker chose is kept.
func TestServiceRecreation(t *testing.T) {
	headless := testobjects.NewDeployObject(withService(appv1.ServiceTypeClusterIP, appv1.ServiceSettings{Headless: ptr.To(true)}))
	plain := testobjects.NewDeployObject()
	lb := func(class string) *appv1.DeployObject {
		return testobjects.NewDeployObject(withService(appv1.ServiceTypeLoadBalancer, appv1.ServiceSettings{LoadBalancerClass: ptr.To(class)}))
	}
	adoptedHeadless := children.DesiredService(plain)
	adoptedHeadless.Spec.ClusterIP = corev1.ClusterIPNone
	for _, tc := range []struct {
		name          string
		live, desired *corev1.Service
		want          bool
	}{
		{"to headless", children.DesiredService(plain), children.DesiredService(headless), true},
		{"from headless", children.DesiredService(headless), children.DesiredService(plain), true},
		{"headless kept", children.DesiredService(headless), children.DesiredService(headless), false},
		{"an adopted headless Service", adoptedHeadless, children.DesiredService(plain), false},
		{"another load balancer class", children.DesiredService(lb("example.com/a")), children.DesiredService(lb("example.com/b")), true},
		{"the same class", children.DesiredService(lb("example.com/a")), children.DesiredService(lb("example.com/a")), false},
	} {
		if got := children.ServiceNeedsRecreation(tc.live, tc.desired); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}

	// The write deletes the live Service, with its UID, and says why.
	live := children.DesiredService(plain)
	live.UID = "uid-svc"
	client := k8sfake.NewClientset(live)
	ops := children.ServiceOps(nil, client.CoreV1().Services(live.Namespace), nil)
	_, err := ops.Write(context.Background(), live, children.DesiredService(headless))
	var recreation *children.RecreationError
	if !errors.As(err, &recreation) {
		t.Fatalf("write: %v, want a RecreationError", err)
	}
	if _, err := client.CoreV1().Services(live.Namespace).Get(context.Background(), live.Name, metav1.GetOptions{}); err == nil {
		t.Error("the Service was not deleted")
	}
	if p := children.ProblemOf(err); p == nil || p.Reason != appv1.ReasonProgressing || !p.Retry {
		t.Errorf("problem %+v, want Progressing and retried", p)
	}
}
