//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
)

// collectorKnowsKinds waits until the garbage collector knows the kinds of
// the CRDs named: it learns new kinds from discovery every 30 s, and a
// dependent of a kind it does not know yet is not orphaned with the others
// by an orphaning delete; once it knows the kind, it finds the owner gone
// and deletes the dependent. The CRDs may be minutes old (installed by
// TestRoutesHTTPRoute and TestScraping) or seconds.
func collectorKnowsKinds(t *testing.T, crds ...string) {
	t.Helper()
	const resync = 30 * time.Second
	resource := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	var newest time.Time
	for _, name := range crds {
		crd, err := env.dynamic.Resource(resource).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("reading CRD %s: %v", name, err)
		}
		if c := crd.GetCreationTimestamp().Time; c.After(newest) {
			newest = c
		}
	}
	// One resync, and as long again for the collector's informers of
	// the new kinds to sync.
	if wait := time.Until(newest.Add(2 * resync)); wait > 0 {
		t.Logf("waiting %s for the garbage collector to learn of CRDs made at %s", wait.Round(time.Second), newest.Format(time.TimeOnly))
		time.Sleep(wait)
	}
}

// orphanedChild is one child of a DeployObject of TestEveryKindIsAdopted.
type orphanedChild struct {
	resource schema.GroupVersionResource
	name     string
	owner    string
}

func (c orphanedChild) String() string { return c.resource.Resource + " " + c.name }

// TestEveryKindIsAdopted: after `kubectl delete dobj --cascade=orphan`,
// once the garbage collector has removed their ownerReferences, the same
// DeployObjects applied again adopt every kind of child they made (the
// same objects, now controlled by the new DeployObjects), become Ready
// again, and a later change of the image reaches the Deployment. "web" has
// the kinds that go together (Deployment, Service, ServiceAccount,
// ConfigMap of inline files, PodDisruptionBudget, HorizontalPodAutoscaler,
// HTTPRoute with its https redirect, ServiceMonitor); "ing" and "rpc" the
// alternatives to its route and monitor (Ingress and PodMonitor;
// GRPCRoute), and "rpc" the NetworkPolicy, kept apart from the monitors so
// that the test does not depend on how a policy and scraping combine.
//
// It runs in parallel against the shared controller. The Gateway API's
// and prometheus-operator's CRDs are cluster-wide; in the whole suite the
// serial TestRoutesHTTPRoute and TestScraping have installed them before
// any parallel test runs, so this test installs them only when run alone,
// as TestRouteRules and TestGRPCRoute do.
func TestEveryKindIsAdopted(t *testing.T) {
	t.Parallel()
	if !gatewayAPIServed(t) {
		installGatewayAPI(t)
	}
	if !monitoringServed(t) {
		installMonitoringCRDs(t)
	}
	collectorKnowsKinds(t, "httproutes.gateway.networking.k8s.io", "grpcroutes.gateway.networking.k8s.io",
		children.ServiceMonitorResource.GroupResource().String(), children.PodMonitorResource.GroupResource().String())
	ns := newNamespace(t)
	specs := map[string]func(*appv1.DeployObject){
		"web": func(d *appv1.DeployObject) {
			d.Spec.Replicas = ptr.To[int32](1)
			d.Spec.ServiceAccount = &appv1.OwnedServiceAccount{}
			d.Spec.Files = []appv1.File{{Path: "/etc/web/app.yaml", Content: ptr.To("level: info\n")}}
			d.Spec.DisruptionBudget = &appv1.DisruptionBudget{MaxUnavailable: ptr.To(intstr.FromInt32(1))}
			d.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}
			d.Spec.Autoscaling = &appv1.Autoscaling{MinReplicas: ptr.To[int32](1), MaxReplicas: 2, TargetCPUUtilizationPercentage: ptr.To[int32](80)}
			d.Spec.Route = &appv1.Route{Port: "http", Hostnames: []string{"shop.example.com"},
				ParentRefs:    []appv1.GatewayRef{{Name: "public", Namespace: ptr.To("infra"), SectionName: ptr.To("https")}},
				HTTPSRedirect: &appv1.HTTPSRedirect{ParentRefs: []appv1.GatewayRef{{Name: "public", Namespace: ptr.To("infra"), SectionName: ptr.To("http")}}}}
			d.Spec.Monitoring = &appv1.Monitoring{Port: "http"}
		},
		"ing": func(d *appv1.DeployObject) {
			d.Spec.Replicas = ptr.To[int32](1)
			d.Spec.Route = &appv1.Route{Port: "http", IngressClassName: ptr.To("nginx")}
			d.Spec.Sidecars = []corev1.Container{{Name: "exporter", Image: "prom/nginx-prometheus-exporter:1.4",
				Ports: []corev1.ContainerPort{{Name: "exporter", ContainerPort: 9113}}}}
			d.Spec.Monitoring = &appv1.Monitoring{Port: "exporter"}
		},
		"rpc": func(d *appv1.DeployObject) {
			d.Spec.Replicas = ptr.To[int32](1)
			d.Spec.Ports = []appv1.Port{{Name: "grpc", ContainerPort: 9090, AppProtocol: ptr.To(children.AppProtocolGRPC)}}
			d.Spec.Route = &appv1.Route{Port: "grpc", ParentRefs: []appv1.GatewayRef{{Name: "public", Namespace: ptr.To("infra")}}}
			d.Spec.NetworkPolicy = &appv1.NetworkPolicy{From: []appv1.NetworkPeer{{DeployObject: ptr.To("frontend")}}}
		},
	}
	names := []string{"web", "ing", "rpc"}

	gv := func(group, version, resource string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
	}
	var kids []orphanedChild
	for _, name := range names {
		kids = append(kids,
			orphanedChild{gv("apps", "v1", "deployments"), name, name},
			orphanedChild{gv("", "v1", "services"), name, name})
	}
	kids = append(kids,
		orphanedChild{gv("", "v1", "serviceaccounts"), "web", "web"},
		orphanedChild{gv("", "v1", "configmaps"), children.FilesConfigMapName(newDO(ns, "web", specs["web"])), "web"},
		orphanedChild{gv("policy", "v1", "poddisruptionbudgets"), "web", "web"},
		orphanedChild{gv("autoscaling", "v2", "horizontalpodautoscalers"), "web", "web"},
		orphanedChild{gatewayv1.SchemeGroupVersion.WithResource("httproutes"), "web", "web"},
		orphanedChild{gatewayv1.SchemeGroupVersion.WithResource("httproutes"), "web.https-redirect", "web"},
		orphanedChild{children.ServiceMonitorResource, "web", "web"},
		orphanedChild{gv("networking.k8s.io", "v1", "ingresses"), "ing", "ing"},
		orphanedChild{children.PodMonitorResource, "ing", "ing"},
		orphanedChild{gatewayv1.SchemeGroupVersion.WithResource("grpcroutes"), "rpc", "rpc"},
		orphanedChild{gv("networking.k8s.io", "v1", "networkpolicies"), "rpc", "rpc"},
	)
	get := func(c orphanedChild) (metav1.Object, error) {
		return env.dynamic.Resource(c.resource).Namespace(ns).Get(ctx, c.name, metav1.GetOptions{})
	}
	// every waits until each child satisfies cond, and returns them by
	// their String.
	every := func(what string, cond func(c orphanedChild, obj metav1.Object) bool) map[string]metav1.Object {
		t.Helper()
		got := map[string]metav1.Object{}
		eventually(t, 2*timeout, what, func() (bool, string, error) {
			var waiting []string
			for _, c := range kids {
				obj, err := get(c)
				if err != nil {
					waiting = append(waiting, fmt.Sprintf("%s: %v", c, err))
					continue
				}
				got[c.String()] = obj
				if !cond(c, obj) {
					waiting = append(waiting, fmt.Sprintf("%s: owners %v", c, obj.GetOwnerReferences()))
				}
			}
			return len(waiting) == 0, strings.Join(waiting, "; "), nil
		})
		return got
	}

	owners := map[string]*appv1.DeployObject{}
	for _, name := range names {
		create(t, newDO(ns, name, specs[name]))
	}
	for _, name := range names {
		owners[name] = waitReady(t, ns, name)
	}
	// The monitors and routes come once the shared controller has seen
	// their CRDs (it asks discovery every 20 s).
	before := every("every child made, controlled by its DeployObject", func(c orphanedChild, obj metav1.Object) bool {
		return controlledBy(obj, owners[c.owner])
	})

	if out, err := kubectl("-n", ns, "delete", "deployobject/web", "deployobject/ing", "deployobject/rpc", "--cascade=orphan", "--wait=true"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	every("the garbage collector to remove every ownerReference", func(_ orphanedChild, obj metav1.Object) bool {
		return len(obj.GetOwnerReferences()) == 0
	})

	for _, name := range names {
		owners[name] = create(t, newDO(ns, name, specs[name]))
	}
	for _, name := range names {
		waitReady(t, ns, name)
	}
	after := every("every child adopted by the new DeployObject", func(c orphanedChild, obj metav1.Object) bool {
		return controlledBy(obj, owners[c.owner])
	})
	for key, obj := range after {
		if obj.GetUID() != before[key].GetUID() {
			t.Errorf("%s was replaced (UID %s, was %s), not adopted", key, obj.GetUID(), before[key].GetUID())
		}
	}

	// The adopted Deployment follows the spec again.
	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.Image = "nginx:1.28" })
	eventually(t, timeout, "the image change to reach the adopted Deployment", func() (bool, string, error) {
		d := getDeployment(t, ns, "web")
		image := d.Spec.Template.Spec.Containers[0].Image
		return image == "nginx:1.28" && controlledBy(d, owners["web"]), image, nil
	})
	waitReady(t, ns, "web")
}
