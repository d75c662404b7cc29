package children_test

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/testobjects"
)

// fuzzDeployObject builds a DeployObject from fuzzed fields, including ones
// admission would reject: the builders must not panic on any of them.
func fuzzDeployObject(image string, replicas int32, cmd, envName, envValue, portName string, containerPort, svcPort int32, protocol, svcType, quantity string) *appv1.DeployObject {
	d := testobjects.NewDeployObject()
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
	live := testobjects.LiveDeployment(dobj)
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

		// Every DeployObject the controller sees went through JSON, which
		// replaces invalid UTF-8; so does every write of the Deployment.
		dobj = throughJSON(t, dobj)
		want := children.DesiredDeployment(dobj, children.ProfileNone)
		if !children.DeploymentInSync(storedByServer(t, dobj), want) {
			t.Fatalf("the Deployment as the API server stores it is not in line with desired: %v", dobj.Spec.Resources)
		}
		live := testobjects.LiveDeployment(dobj)
		live.Spec.Template.Spec.Containers[0].Image = driftImage
		live.Spec.Replicas = ptr.To(driftReplicas)
		if driftReplicas%2 == 0 {
			live.Spec.Template.Spec.Containers = append(live.Spec.Template.Spec.Containers, corev1.Container{Name: "injected", Image: driftImage})
		}
		applied := applyToFake(t, live, want)
		if !children.DeploymentInSync(applied, want) {
			t.Fatalf("an applied Deployment is still not in line with desired:\n%s", diff.Diff(want.Spec, applied.Spec))
		}
		if driftReplicas%2 == 0 && containerNamed(applied.Spec.Template.Spec.Containers, "injected") == nil {
			t.Fatal("apply removed a container someone else added")
		}
		// Judged against the spec itself too: DeploymentInSync is the code
		// under test, and a merge that ignored a field would pass it.
		specMatches(t, dobj, applied)

		wantSvc := children.DesiredService(dobj)
		if wantSvc == nil {
			if children.WantsService(dobj) {
				t.Fatal("ports set but no Service built")
			}
			return
		}
		if len(wantSvc.Spec.Ports) != len(dobj.Spec.Ports) {
			t.Fatalf("%d Service ports for %d ports", len(wantSvc.Spec.Ports), len(dobj.Spec.Ports))
		}
		liveSvc := testobjects.LiveService(dobj)
		liveSvc.Spec.Type = corev1.ServiceType(driftImage)
		liveSvc.Spec.Ports[0].NodePort = nodePort
		if liveAppProtocol != "" {
			liveSvc.Spec.Ports[0].AppProtocol = ptr.To(liveAppProtocol)
		}
		mergedSvc, _ := children.MergeService(liveSvc, wantSvc)
		if _, changed := children.MergeService(mergedSvc, wantSvc); changed {
			t.Fatalf("a merged Service still differs from desired: %+v", mergedSvc.Spec)
		}
		wantAppProtocol := ptr.Deref(liveSvc.Spec.Ports[0].AppProtocol, "")
		if specAppProtocol != "" {
			wantAppProtocol = *dobj.Spec.Ports[0].AppProtocol
		}
		if got := ptr.Deref(mergedSvc.Spec.Ports[0].AppProtocol, ""); got != wantAppProtocol {
			t.Fatalf("merged appProtocol %q, want %q (the spec's, else the live one)", got, wantAppProtocol)
		}
		if mergedSvc.Spec.ClusterIP != liveSvc.Spec.ClusterIP {
			t.Fatal("clusterIP not kept")
		}
		wantType := corev1.ServiceType(dobj.Spec.ServiceType)
		if wantType == "" {
			wantType = corev1.ServiceTypeClusterIP
		}
		if mergedSvc.Spec.Type != wantType {
			t.Fatalf("merged Service type %q, want the spec's %q", mergedSvc.Spec.Type, wantType)
		}
		for i, p := range dobj.Spec.Ports {
			got := mergedSvc.Spec.Ports[i]
			if got.Name != p.Name || got.Port != ptr.Deref(p.ServicePort, p.ContainerPort) || got.TargetPort != intstr.FromInt32(p.ContainerPort) || got.Protocol != cmp.Or(p.Protocol, corev1.ProtocolTCP) {
				t.Fatalf("merged Service port %+v, want the spec's %+v", got, p)
			}
		}
	})
}

// specMatches checks that the main container of d carries what dobj's spec
// says, field by field.
func specMatches(t *testing.T, dobj *appv1.DeployObject, d *appsv1.Deployment) {
	t.Helper()
	c := containerNamed(d.Spec.Template.Spec.Containers, appv1.ContainerName)
	if c == nil {
		t.Fatalf("the Deployment has no container %s", appv1.ContainerName)
	}
	spec := &dobj.Spec
	if ptr.Deref(d.Spec.Replicas, -1) != ptr.Deref(spec.Replicas, -1) {
		t.Fatalf("replicas %v, want the spec's %v", d.Spec.Replicas, spec.Replicas)
	}
	// An empty image is refused at admission; unset, it is not owned.
	if (spec.Image != "" && c.Image != spec.Image) || !slices.Equal(c.Command, spec.Command) || !slices.Equal(c.Args, spec.Args) {
		t.Fatalf("container image %q, command %q, args %q; want the spec's %q, %q, %q", c.Image, c.Command, c.Args, spec.Image, spec.Command, spec.Args)
	}
	if len(c.Env) != len(spec.Env) {
		t.Fatalf("container env %+v, want the spec's %+v", c.Env, spec.Env)
	}
	for i, e := range spec.Env {
		if c.Env[i].Name != e.Name || c.Env[i].Value != e.Value {
			t.Fatalf("container env %d is %s=%q, want the spec's %s=%q", i, c.Env[i].Name, c.Env[i].Value, e.Name, e.Value)
		}
	}
	if len(c.Ports) != len(spec.Ports) {
		t.Fatalf("container ports %+v, want the spec's %+v", c.Ports, spec.Ports)
	}
	for i, p := range spec.Ports {
		if got := c.Ports[i]; got.Name != p.Name || got.ContainerPort != p.ContainerPort || got.Protocol != cmp.Or(p.Protocol, corev1.ProtocolTCP) {
			t.Fatalf("container port %+v, want the spec's %+v", got, p)
		}
	}
}

// applyToFake creates live in a fake clientset, whose object tracker merges
// server-side apply requests with the API's real schema, and applies
// desired over it as the controller does.
func applyToFake(t *testing.T, live, desired *appsv1.Deployment) *appsv1.Deployment {
	t.Helper()
	client := k8sfake.NewClientset()
	deployments := client.AppsV1().Deployments(live.Namespace)
	created, err := deployments.Create(context.Background(), live.DeepCopy(), metav1.CreateOptions{FieldManager: "someone"})
	if err != nil {
		t.Fatalf("creating the live Deployment: %v", err)
	}
	applied, err := children.ApplyDeployment(context.Background(), deployments, created, desired)
	if err != nil && strings.Contains(err.Error(), "control characters are not allowed") {
		// Apply bodies are decoded as YAML, which refuses control
		// characters in strings; such a spec is reported, not converged.
		t.Skip("apply refuses control characters")
	}
	if err != nil {
		t.Fatalf("applying: %v", err)
	}
	return applied
}

func containerNamed(cs []corev1.Container, name string) *corev1.Container {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}

func throughJSON(t *testing.T, dobj *appv1.DeployObject) *appv1.DeployObject {
	t.Helper()
	data, err := json.Marshal(dobj)
	if err != nil {
		t.Fatal(err)
	}
	var out appv1.DeployObject
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}
