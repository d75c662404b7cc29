package main

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

func TestDesiredDeployment(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*appv1.DeployObject)
		check  func(t *testing.T, c corev1.Container, replicas int32)
	}{
		{"replicas unset defaults to 1", func(d *appv1.DeployObject) { d.Spec.Replicas = nil }, func(t *testing.T, _ corev1.Container, r int32) {
			if r != 1 {
				t.Errorf("replicas = %d, want 1", r)
			}
		}},
		{"zero replicas kept", func(d *appv1.DeployObject) { d.Spec.Replicas = ptr.To[int32](0) }, func(t *testing.T, _ corev1.Container, r int32) {
			if r != 0 {
				t.Errorf("replicas = %d, want 0", r)
			}
		}},
		{"fieldRef apiVersion left for the API server to default", func(*appv1.DeployObject) {}, func(t *testing.T, c corev1.Container, _ int32) {
			if got := c.Env[1].ValueFrom.FieldRef.APIVersion; got != "" {
				t.Errorf("fieldRef.apiVersion = %q, want it unset as in the spec: covers ignores what the spec leaves unset", got)
			}
		}},
		{"port protocol defaults to TCP", func(d *appv1.DeployObject) { d.Spec.Ports[0].Protocol = "" }, func(t *testing.T, c corev1.Container, _ int32) {
			if c.Ports[0].Protocol != corev1.ProtocolTCP || c.Ports[0].ContainerPort != 8080 || c.Ports[0].Name != "http" {
				t.Errorf("port = %+v", c.Ports[0])
			}
		}},
		{"command, args, image and resources copied", func(*appv1.DeployObject) {}, func(t *testing.T, c corev1.Container, _ int32) {
			if c.Name != containerName || c.Image != "nginx:1.27" || c.Command[0] != "nginx" || len(c.Args) != 2 || c.Resources.Requests.Cpu().MilliValue() != 100 {
				t.Errorf("container = %+v", c)
			}
		}},
		{"no ports, no container ports", func(d *appv1.DeployObject) { d.Spec.Ports = nil }, func(t *testing.T, c corev1.Container, _ int32) {
			if c.Ports != nil {
				t.Errorf("ports = %v, want none", c.Ports)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dobj := newDeployObject(tc.mutate)
			d := desiredDeployment(dobj, profileNone)
			if d.Name != "web" || d.Namespace != "apps" {
				t.Errorf("name = %s/%s", d.Namespace, d.Name)
			}
			if ref := metav1.GetControllerOf(d); ref == nil || ref.UID != dobj.UID || ref.Kind != "DeployObject" || !*ref.BlockOwnerDeletion {
				t.Errorf("controller ref = %+v", ref)
			}
			wantLabels := map[string]string{managedByLabel: managedByValue, nameLabel: "web"}
			if !equalObjects(d.Labels, wantLabels) || !equalObjects(d.Spec.Template.Labels, wantLabels) ||
				!equalObjects(d.Spec.Selector.MatchLabels, map[string]string{nameLabel: "web"}) {
				t.Errorf("labels = %v selector = %v template = %v", d.Labels, d.Spec.Selector, d.Spec.Template.Labels)
			}
			if n := len(d.Spec.Template.Spec.Containers); n != 1 {
				t.Fatalf("%d containers, want 1", n)
			}
			tc.check(t, d.Spec.Template.Spec.Containers[0], *d.Spec.Replicas)
		})
	}
}

func TestDesiredDeploymentDoesNotAlias(t *testing.T) {
	dobj := newDeployObject()
	d := desiredDeployment(dobj, profileNone)
	d.Spec.Template.Spec.Containers[0].Env[1].ValueFrom.FieldRef.FieldPath = "changed"
	d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("1Gi")
	if dobj.Spec.Env[1].ValueFrom.FieldRef.FieldPath != "metadata.name" || dobj.Spec.Resources.Limits.Memory().String() != "128Mi" {
		t.Error("changing the built Deployment changed the DeployObject in the cache")
	}
}

func TestDesiredService(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mutate   func(*appv1.DeployObject)
		wantNil  bool
		wantType corev1.ServiceType
		want     []corev1.ServicePort
	}{
		{name: "no ports, no Service", mutate: func(d *appv1.DeployObject) { d.Spec.Ports = nil }, wantNil: true},
		{name: "servicePort set", mutate: func(*appv1.DeployObject) {}, wantType: corev1.ServiceTypeClusterIP,
			want: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}},
		{name: "servicePort defaults to containerPort", mutate: func(d *appv1.DeployObject) {
			d.Spec.Ports = []appv1.Port{{Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP}}
		}, wantType: corev1.ServiceTypeClusterIP,
			want: []corev1.ServicePort{{Name: "dns", Port: 53, TargetPort: intstr.FromInt32(53), Protocol: corev1.ProtocolUDP}}},
		{name: "empty serviceType is ClusterIP", mutate: func(d *appv1.DeployObject) { d.Spec.ServiceType = "" }, wantType: corev1.ServiceTypeClusterIP,
			want: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}},
		{name: "LoadBalancer", mutate: func(d *appv1.DeployObject) { d.Spec.ServiceType = appv1.ServiceTypeLoadBalancer }, wantType: corev1.ServiceTypeLoadBalancer,
			want: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}},
		{name: "appProtocol set", mutate: func(d *appv1.DeployObject) { d.Spec.Ports[0].AppProtocol = ptr.To("kubernetes.io/h2c") }, wantType: corev1.ServiceTypeClusterIP,
			want: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP, AppProtocol: ptr.To("kubernetes.io/h2c")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := desiredService(newDeployObject(tc.mutate))
			if tc.wantNil {
				if s != nil {
					t.Fatalf("Service = %+v, want none", s)
				}
				return
			}
			if s.Spec.Type != tc.wantType || s.Spec.Selector[nameLabel] != "web" || len(s.Spec.Selector) != 1 {
				t.Errorf("type = %s selector = %v", s.Spec.Type, s.Spec.Selector)
			}
			if !equalObjects(s.Spec.Ports, tc.want) {
				t.Errorf("ports = %+v, want %+v", s.Spec.Ports, tc.want)
			}
			if s.Spec.ClusterIP != "" || s.Spec.Ports[0].NodePort != 0 {
				t.Error("clusterIP and nodePort are the API server's to allocate")
			}
		})
	}
}

func TestDesiredServiceDoesNotAlias(t *testing.T) {
	dobj := newDeployObject(func(d *appv1.DeployObject) { d.Spec.Ports[0].AppProtocol = ptr.To("http") })
	s := desiredService(dobj)
	if s.Spec.Ports[0].AppProtocol == dobj.Spec.Ports[0].AppProtocol {
		t.Error("the desired Service's appProtocol points into the DeployObject, which is the informer's cached copy")
	}
}
