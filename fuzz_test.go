package main

import (
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// fuzzDeployObject builds a DeployObject from fuzzed fields, including ones
// admission would reject: the builders must not panic on any of them.
func fuzzDeployObject(image string, replicas int32, cmd, envName, envValue, portName string, containerPort, svcPort int32, protocol, svcType, quantity string) *appv1.DeployObject {
	d := newDeployObject()
	d.Spec.Image = image
	d.Spec.Replicas = ptr.To(replicas)
	d.Spec.Command = strings.Fields(cmd)
	d.Spec.Args = strings.Split(cmd, ",")
	d.Spec.Env = []corev1.EnvVar{{Name: envName, Value: envValue}, {Name: envName + "_REF", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: envValue}}}}
	d.Spec.Ports = []appv1.Port{{Name: portName, ContainerPort: containerPort, ServicePort: ptr.To(svcPort), Protocol: corev1.Protocol(protocol)}}
	if svcPort == 0 {
		d.Spec.Ports[0].ServicePort = nil
	}
	if containerPort%3 == 0 {
		d.Spec.Ports = nil
	}
	d.Spec.ServiceType = appv1.ServiceType(svcType)
	if q, err := resource.ParseQuantity(quantity); err == nil {
		d.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: q}
		d.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: q}
	}
	return d
}

// storedByServer is the Deployment of dobj as the API server would store it:
// the spec's own values sent as JSON, read back, and defaulted as
// SetDefaults_ResourceList does (every quantity rounded up to a thousandth).
// The end-to-end test TestServerCanonicalValuesCauseNoWrites checks the same
// against the real API server.
func storedByServer(t *testing.T, dobj *appv1.DeployObject) *appsv1.Deployment {
	t.Helper()
	live := liveDeployment(dobj)
	raw, err := json.Marshal(dobj.Spec.Resources)
	if err != nil {
		t.Fatal(err)
	}
	var r corev1.ResourceRequirements
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	for _, list := range []corev1.ResourceList{r.Requests, r.Limits} {
		for name, q := range list {
			q.RoundUp(-3)
			list[name] = q
		}
	}
	live.Spec.Template.Spec.Containers[0].Resources = r
	return live
}

// FuzzChildrenConverge: for any spec and any drift of the live children, one
// merge brings them in line, and merging again changes nothing. A failure
// here would be a hot loop of writes in production.
func FuzzChildrenConverge(f *testing.F) {
	f.Add("nginx:1.27", int32(2), "nginx -g daemon", "MODE", "prod", "http", int32(8080), int32(80), "TCP", "ClusterIP", "500m", "drift:1", int32(5), int32(30080), "", "kubernetes.io/h2c")
	f.Add("", int32(0), "", "", "", "", int32(0), int32(0), "", "", "", "", int32(-1), int32(0), "", "")
	f.Add("img", int32(-5), ",,,", "A=B", "metadata.name", "UPPER--", int32(70000), int32(-1), "SCTP", "NodePort", "1Gi", "x", int32(0), int32(65535), "kubernetes.io/h2c", "")
	f.Add("a b", int32(1<<30), "sh -c", "é", "\x00", "dns", int32(53), int32(53), "UDP", "LoadBalancer", "-1", "", int32(1), int32(-30000), "http", "grpc")
	f.Add("nginx", int32(1), "", "A", "", "http", int32(80), int32(0), "TCP", "", "0.5m", "nginx", int32(1), int32(0), "", "")
	f.Add("nginx", int32(1), "", "A", "", "http", int32(80), int32(0), "TCP", "", "1.0001", "nginx", int32(1), int32(0), "", "")
	f.Fuzz(func(t *testing.T, image string, replicas int32, cmd, envName, envValue, portName string, containerPort, svcPort int32, protocol, svcType, quantity, driftImage string, driftReplicas, nodePort int32, specAppProtocol, liveAppProtocol string) {
		dobj := fuzzDeployObject(image, replicas, cmd, envName, envValue, portName, containerPort, svcPort, protocol, svcType, quantity)
		if specAppProtocol != "" && len(dobj.Spec.Ports) > 0 {
			dobj.Spec.Ports[0].AppProtocol = ptr.To(specAppProtocol)
		}

		want := desiredDeployment(dobj)
		if _, changed := mergeDeployment(storedByServer(t, dobj), want); changed {
			t.Fatalf("the Deployment as the API server stores it differs from desired: %v", dobj.Spec.Resources)
		}
		live := liveDeployment(dobj)
		live.Spec.Template.Spec.Containers[0].Image = driftImage
		live.Spec.Replicas = ptr.To(driftReplicas)
		if driftReplicas%2 == 0 {
			live.Spec.Template.Spec.Containers = nil
		}
		merged, _ := mergeDeployment(live, want)
		if again, changed := mergeDeployment(merged, want); changed || again != merged {
			t.Fatalf("a merged Deployment still differs from desired: %+v", merged.Spec.Template.Spec.Containers)
		}

		wantSvc := desiredService(dobj)
		if wantSvc == nil {
			if wantsService(dobj) {
				t.Fatal("ports set but no Service built")
			}
			return
		}
		if len(wantSvc.Spec.Ports) != len(dobj.Spec.Ports) {
			t.Fatalf("%d Service ports for %d ports", len(wantSvc.Spec.Ports), len(dobj.Spec.Ports))
		}
		liveSvc := liveService(dobj)
		liveSvc.Spec.Type = corev1.ServiceType(driftImage)
		liveSvc.Spec.Ports[0].NodePort = nodePort
		if liveAppProtocol != "" {
			liveSvc.Spec.Ports[0].AppProtocol = ptr.To(liveAppProtocol)
		}
		mergedSvc, _ := mergeService(liveSvc, wantSvc)
		if _, changed := mergeService(mergedSvc, wantSvc); changed {
			t.Fatalf("a merged Service still differs from desired: %+v", mergedSvc.Spec)
		}
		wantAppProtocol := ptr.Deref(liveSvc.Spec.Ports[0].AppProtocol, "")
		if specAppProtocol != "" {
			wantAppProtocol = specAppProtocol
		}
		if got := ptr.Deref(mergedSvc.Spec.Ports[0].AppProtocol, ""); got != wantAppProtocol {
			t.Fatalf("merged appProtocol %q, want %q (the spec's, else the live one)", got, wantAppProtocol)
		}
		if mergedSvc.Spec.ClusterIP != liveSvc.Spec.ClusterIP {
			t.Fatal("clusterIP not kept")
		}
	})
}

// FuzzResourceOf: the API path parser behind the request metrics takes any
// path without panicking and never yields an empty label.
func FuzzResourceOf(f *testing.F) {
	for _, p := range []string{
		"/apis/apps/v1/namespaces/ns/deployments/web",
		"/apis/app.deployobject.dev/v1/namespaces/ns/deployobjects/web/status",
		"/api/v1/namespaces/ns/services",
		"/api/v1/namespaces/ns",
		"/api/v1/namespaces",
		"/readyz", "", "/", "//", "/apis", "/api/v1", "/apis/a/b/namespaces",
	} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, path string) {
		if r := resourceOf(path); r == "" {
			t.Fatalf("resourceOf(%q) is empty", path)
		}
	})
}

func TestResourceOf(t *testing.T) {
	for path, want := range map[string]string{
		"/apis/apps/v1/namespaces/ns/deployments/web":                          "deployments",
		"/apis/apps/v1/namespaces/ns/deployments":                              "deployments",
		"/apis/app.deployobject.dev/v1/namespaces/ns/deployobjects/web/status": "deployobjects/status",
		"/api/v1/namespaces/ns/services/web":                                   "services",
		"/api/v1/namespaces/ns/events":                                         "events",
		"/api/v1/namespaces/ns":                                                "namespaces",
		"/apis/coordination.k8s.io/v1/namespaces/ns/leases/x":                  "leases",
		"/readyz": "other",
	} {
		if got := resourceOf(path); got != want {
			t.Errorf("resourceOf(%q) = %q, want %q", path, got, want)
		}
	}
}
