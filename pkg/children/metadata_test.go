package children_test

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/testobjects"
)

// metadataKind is one child kind that carries spec metadata, seen through
// its exported desired, merge and slim functions.
type metadataKind struct {
	name string
	// with sets m as the kind's metadata in the spec.
	with    func(*appv1.DeployObject, *appv1.ChildMetadata)
	desired func(*appv1.DeployObject) metav1.Object
	merge   func(live, desired metav1.Object) (metav1.Object, bool)
	slim    func(metav1.Object) metav1.Object
	copy    func(metav1.Object) metav1.Object
}

var metadataKinds = []metadataKind{
	{
		name: "Service",
		with: func(d *appv1.DeployObject, m *appv1.ChildMetadata) {
			d.Spec.Service = &appv1.ServiceSettings{Metadata: m}
		},
		desired: func(d *appv1.DeployObject) metav1.Object {
			return children.DesiredService(d)
		},
		merge: func(l, d metav1.Object) (metav1.Object, bool) {
			return children.MergeService(l.(*corev1.Service), d.(*corev1.Service))
		},
		slim: func(o metav1.Object) metav1.Object { return children.SlimService(o.(*corev1.Service)) },
		copy: func(o metav1.Object) metav1.Object { return o.(*corev1.Service).DeepCopy() },
	},
	{
		name: "Ingress",
		with: func(d *appv1.DeployObject, m *appv1.ChildMetadata) {
			testobjects.WithIngress(d)
			d.Spec.Route.Metadata = m
		},
		desired: func(d *appv1.DeployObject) metav1.Object {
			return children.DesiredIngress(d)
		},
		merge: func(l, d metav1.Object) (metav1.Object, bool) {
			return children.MergeIngress(l.(*networkingv1.Ingress), d.(*networkingv1.Ingress))
		},
		slim: func(o metav1.Object) metav1.Object { return children.SlimIngress(o.(*networkingv1.Ingress)) },
		copy: func(o metav1.Object) metav1.Object { return o.(*networkingv1.Ingress).DeepCopy() },
	},
	{
		name: "HTTPRoute",
		with: func(d *appv1.DeployObject, m *appv1.ChildMetadata) {
			testobjects.WithHTTPRoute(d)
			d.Spec.Route.Metadata = m
		},
		desired: func(d *appv1.DeployObject) metav1.Object {
			return testobjects.MustDesiredHTTPRoute(d)
		},
		merge: func(l, d metav1.Object) (metav1.Object, bool) {
			return children.MergeHTTPRoute(l.(*gatewayv1.HTTPRoute), d.(*gatewayv1.HTTPRoute))
		},
		slim: func(o metav1.Object) metav1.Object { return children.SlimHTTPRoute(o.(*gatewayv1.HTTPRoute)) },
		copy: func(o metav1.Object) metav1.Object { return o.(*gatewayv1.HTTPRoute).DeepCopy() },
	},
}

// TestChildMetadataOwnership: the controller sets the keys the spec lists,
// removes exactly a key the spec drops, never touches a key someone else
// set, and judges a child in line from what the cache keeps of it.
func TestChildMetadataOwnership(t *testing.T) {
	first := &appv1.ChildMetadata{
		Labels:      map[string]string{"team": "shop"},
		Annotations: map[string]string{"cert-manager.io/cluster-issuer": "letsencrypt", "external-dns.alpha.kubernetes.io/hostname": "shop.example.com"},
	}
	second := &appv1.ChildMetadata{Annotations: map[string]string{"cert-manager.io/cluster-issuer": "internal-ca"}}
	for _, k := range metadataKinds {
		t.Run(k.name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject()
			k.with(dobj, first)
			live := k.desired(dobj)
			// Others add their keys: a cloud provider, cert-manager.
			maps.Copy(live.GetAnnotations(), map[string]string{"cloud.example.com/lb-id": "lb-7", "cert-manager.io/certificate-name": "web-tls"})
			live.GetLabels()["their-label"] = "x"

			if _, changed := k.merge(k.copy(live), k.desired(dobj)); changed {
				t.Error("a child carrying the spec's metadata and others' keys is not in line")
			}
			if _, changed := k.merge(k.slim(k.copy(live)), k.desired(dobj)); changed {
				t.Error("a child as the cache keeps it is not in line: every resync would write")
			}

			k.with(dobj, second)
			merged, changed := k.merge(k.copy(live), k.desired(dobj))
			if !changed {
				t.Fatal("a metadata change of the spec changes nothing")
			}
			a, l := merged.GetAnnotations(), merged.GetLabels()
			if a["cert-manager.io/cluster-issuer"] != "internal-ca" {
				t.Errorf("the changed annotation is %q, want internal-ca", a["cert-manager.io/cluster-issuer"])
			}
			if _, ok := a["external-dns.alpha.kubernetes.io/hostname"]; ok {
				t.Error("the annotation the spec dropped is still there")
			}
			if _, ok := l["team"]; ok {
				t.Error("the label the spec dropped is still there")
			}
			if a["cloud.example.com/lb-id"] != "lb-7" || a["cert-manager.io/certificate-name"] != "web-tls" || l["their-label"] != "x" {
				t.Errorf("others' keys were touched: labels %v, annotations %v", l, a)
			}
			if _, changed := k.merge(merged, k.desired(dobj)); changed {
				t.Error("the merged child is not in line with the spec it was merged from")
			}

			k.with(dobj, nil)
			none, changed := k.merge(merged, k.desired(dobj))
			if _, ok := none.GetAnnotations()["cert-manager.io/cluster-issuer"]; !changed || ok {
				t.Errorf("metadata removed from the spec: changed %v, annotations %v", changed, none.GetAnnotations())
			}
			if _, ok := none.GetAnnotations()[appv1.AnnotationOwnedMetadata]; ok {
				t.Error("the record of owned keys outlives the metadata")
			}
			if none.GetAnnotations()["cloud.example.com/lb-id"] != "lb-7" {
				t.Errorf("others' keys were touched: %v", none.GetAnnotations())
			}
		})
	}
}
