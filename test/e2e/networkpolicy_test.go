//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
)

// TestNetworkPolicy: spec.networkPolicy makes a NetworkPolicy that the
// real API server stores as the controller asked (its defaulting present,
// resyncs write nothing, another writer's label kept); a change of the
// spec changes it in place; removing the field deletes it.
func TestNetworkPolicy(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Route = &appv1.Route{Port: "http", IngressClassName: ptr.To("nginx")}
		d.Spec.NetworkPolicy = &appv1.NetworkPolicy{
			From: []appv1.NetworkPeer{
				{DeployObject: ptr.To("frontend")},
				{NamespaceSelector: &appv1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "monitoring"}},
					PodSelector: &appv1.LabelSelector{MatchExpressions: []appv1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"prometheus"}}}}},
				{IPBlock: &appv1.IPBlock{CIDR: "192.0.2.0/24", Except: []string{"192.0.2.128/25"}}},
			},
			RouteFrom: &appv1.NetworkPeer{NamespaceSelector: &appv1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "ingress-nginx"}}},
			Metadata:  &appv1.ChildMetadata{Labels: map[string]string{"policy-tier": "app"}},
		}
	}))
	waitReady(t, ns, "web")
	policy := getNetworkPolicy(t, ns, "web")
	dobj, err := env.client.AppV1().DeployObjects(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := children.DesiredNetworkPolicy(dobj); !equality.Semantic.DeepEqual(policy.Spec, want.Spec) || policy.Labels["policy-tier"] != "app" {
		t.Fatalf("NetworkPolicy as stored:\n%+v\nlabels %v\nwant:\n%+v", policy.Spec, policy.Labels, want.Spec)
	}

	kubectlPatch(t, ns, "networkpolicy/web", `[{"op":"add","path":"/metadata/labels/audit","value":"done"}]`)
	// The shared controller serves the other tests too: its retries are
	// theirs as much as this one's.
	expectQuiet(t, shared, ns, sharedResync+5*time.Second, false)

	updateDO(t, ns, "web", func(d *appv1.DeployObject) {
		d.Spec.NetworkPolicy.From = d.Spec.NetworkPolicy.From[:1]
		d.Spec.NetworkPolicy.Egress = &appv1.NetworkEgress{To: []appv1.NetworkPeer{{DeployObject: ptr.To("db")}}}
		d.Spec.NetworkPolicy.Metadata = nil
	})
	eventually(t, timeout, "the NetworkPolicy changed in place, the audit label kept", func() (bool, string, error) {
		p := getNetworkPolicy(t, ns, "web")
		_, tier := p.Labels["policy-tier"]
		return p.UID == policy.UID && len(p.Spec.Ingress) == 2 && len(p.Spec.Ingress[0].From) == 1 && len(p.Spec.Egress) == 2 &&
				len(p.Spec.PolicyTypes) == 2 && !tier && p.Labels["audit"] == "done",
			fmt.Sprintf("uid %s, labels %v, %+v", p.UID, p.Labels, p.Spec), nil
	})
	expectQuiet(t, shared, ns, sharedResync+5*time.Second, false)

	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.NetworkPolicy = nil })
	eventually(t, timeout, "the NetworkPolicy deleted", func() (bool, string, error) {
		_, err := env.kube.NetworkingV1().NetworkPolicies(ns).Get(ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err), nil
	})
	waitReady(t, ns, "web")
}

func getNetworkPolicy(t *testing.T, ns, name string) *networkingv1.NetworkPolicy {
	t.Helper()
	p, err := env.kube.NetworkingV1().NetworkPolicies(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
