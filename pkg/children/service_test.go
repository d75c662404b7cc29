package children_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/testobjects"
)

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
			s := children.DesiredService(testobjects.NewDeployObject(tc.mutate))
			if tc.wantNil {
				if s != nil {
					t.Fatalf("Service = %+v, want none", s)
				}
				return
			}
			if s.Spec.Type != tc.wantType || s.Spec.Selector[children.NameLabel] != "web" || len(s.Spec.Selector) != 1 {
				t.Errorf("type = %s selector = %v", s.Spec.Type, s.Spec.Selector)
			}
			if !testobjects.EqualObjects(s.Spec.Ports, tc.want) {
				t.Errorf("ports = %+v, want %+v", s.Spec.Ports, tc.want)
			}
			if s.Spec.ClusterIP != "" || s.Spec.Ports[0].NodePort != 0 {
				t.Error("clusterIP and nodePort are the API server's to allocate")
			}
		})
	}
}

func TestDesiredServiceDoesNotAlias(t *testing.T) {
	dobj := testobjects.NewDeployObject(func(d *appv1.DeployObject) { d.Spec.Ports[0].AppProtocol = ptr.To("http") })
	s := children.DesiredService(dobj)
	if s.Spec.Ports[0].AppProtocol == dobj.Spec.Ports[0].AppProtocol {
		t.Error("the desired Service's appProtocol points into the DeployObject, which is the informer's cached copy")
	}
}

func TestMergeServiceNodePorts(t *testing.T) {
	for _, tc := range []struct {
		name         string
		liveType     corev1.ServiceType
		liveNodePort int32
		want         appv1.ServiceType
		wantNodePort int32
		wantChange   bool
	}{
		{"NodePort keeps its nodePort", corev1.ServiceTypeNodePort, 30080, appv1.ServiceTypeNodePort, 30080, false},
		{"ClusterIP to NodePort lets the server allocate", corev1.ServiceTypeClusterIP, 0, appv1.ServiceTypeNodePort, 0, true},
		{"NodePort to LoadBalancer keeps the nodePort", corev1.ServiceTypeNodePort, 30080, appv1.ServiceTypeLoadBalancer, 30080, true},
		{"NodePort to ClusterIP drops the nodePort", corev1.ServiceTypeNodePort, 30080, appv1.ServiceTypeClusterIP, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject(func(d *appv1.DeployObject) { d.Spec.ServiceType = tc.want })
			live := testobjects.LiveService(dobj)
			live.Spec.Type = tc.liveType
			live.Spec.Ports[0].NodePort = tc.liveNodePort
			got, changed := children.MergeService(live, children.DesiredService(dobj))
			if changed != tc.wantChange || got.Spec.Ports[0].NodePort != tc.wantNodePort || got.Spec.Type != corev1.ServiceType(tc.want) {
				t.Errorf("changed=%v type=%s nodePort=%d; want %v %s %d", changed, got.Spec.Type, got.Spec.Ports[0].NodePort, tc.wantChange, tc.want, tc.wantNodePort)
			}
			if got.Spec.ClusterIP != live.Spec.ClusterIP {
				t.Error("clusterIP not kept")
			}
		})
	}
}

func TestMergeServicePortRenamedGetsNewNodePort(t *testing.T) {
	dobj := testobjects.NewDeployObject(func(d *appv1.DeployObject) { d.Spec.ServiceType = appv1.ServiceTypeNodePort })
	live := testobjects.LiveService(dobj)
	live.Spec.Ports[0].NodePort = 30080
	dobj.Spec.Ports[0].Name = "web"
	got, changed := children.MergeService(live, children.DesiredService(dobj))
	if !changed || got.Spec.Ports[0].NodePort != 0 {
		t.Errorf("changed=%v nodePort=%d, want a change with the nodePort left to the server", changed, got.Spec.Ports[0].NodePort)
	}
}

func TestMergeServiceAppProtocol(t *testing.T) {
	for _, tc := range []struct {
		name       string
		svcType    appv1.ServiceType
		rename     bool
		live, spec *string
		want       *string
		wantChange bool
	}{
		{name: "neither sets it", wantChange: false},
		{name: "someone else's is kept", live: ptr.To("kubernetes.io/h2c"), want: ptr.To("kubernetes.io/h2c"), wantChange: false},
		{name: "someone else's is kept on a NodePort Service", svcType: appv1.ServiceTypeNodePort, live: ptr.To("http"), want: ptr.To("http"), wantChange: false},
		{name: "the spec's is set", spec: ptr.To("http"), want: ptr.To("http"), wantChange: true},
		{name: "the spec's replaces drift", live: ptr.To("grpc"), spec: ptr.To("http"), want: ptr.To("http"), wantChange: true},
		{name: "the spec's in sync", live: ptr.To("http"), spec: ptr.To("http"), want: ptr.To("http"), wantChange: false},
		{name: "a renamed port does not inherit it", rename: true, live: ptr.To("http"), wantChange: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject(func(d *appv1.DeployObject) {
				if tc.svcType != "" {
					d.Spec.ServiceType = tc.svcType
				}
			})
			live := testobjects.LiveService(dobj)
			live.Spec.Ports[0].AppProtocol = tc.live
			dobj.Spec.Ports[0].AppProtocol = tc.spec
			if tc.rename {
				dobj.Spec.Ports[0].Name = "web"
			}
			got, changed := children.MergeService(live, children.DesiredService(dobj))
			if gotAP := got.Spec.Ports[0].AppProtocol; changed != tc.wantChange || ptr.Deref(gotAP, "<nil>") != ptr.Deref(tc.want, "<nil>") {
				t.Errorf("changed=%v appProtocol=%s; want %v %s", changed, ptr.Deref(gotAP, "<nil>"), tc.wantChange, ptr.Deref(tc.want, "<nil>"))
			}
			if _, again := children.MergeService(got, children.DesiredService(dobj)); again {
				t.Error("merging the merged Service changes it again")
			}
		})
	}
}

func TestLabelsHelpers(t *testing.T) {
	if !children.HasLabels(map[string]string{"a": "1", "b": "2"}, map[string]string{"a": "1"}) {
		t.Error("a superset has the labels")
	}
	if children.HasLabels(map[string]string{"a": "2"}, map[string]string{"a": "1"}) || children.HasLabels(nil, map[string]string{"a": "1"}) {
		t.Error("a different or missing value is not the label")
	}
	got := children.WithLabels(map[string]string{"a": "0", "x": "y"}, map[string]string{"a": "1"})
	if len(got) != 2 || got["a"] != "1" || got["x"] != "y" {
		t.Errorf("withLabels = %v", got)
	}
}

// TestMergeServiceTypeChangeDropsForbiddenFields: the fields others set for
// one type are dropped when the type changes to one the API server rejects
// them for, and kept otherwise. The end-to-end test TestServiceTypeChanges
// runs every transition against the real API server.
func TestMergeServiceTypeChangeDropsForbiddenFields(t *testing.T) {
	types := []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer}
	for _, from := range types {
		for _, to := range types {
			t.Run(string(from)+" to "+string(to), func(t *testing.T) {
				dobj := testobjects.NewDeployObject(func(d *appv1.DeployObject) { d.Spec.ServiceType = appv1.ServiceType(to) })
				live := testobjects.LiveService(dobj)
				live.Spec.Type = from
				if from != corev1.ServiceTypeClusterIP {
					live.Spec.Ports[0].NodePort = 30080
					live.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
				}
				if from == corev1.ServiceTypeLoadBalancer {
					live.Annotations = map[string]string{corev1.AnnotationLoadBalancerSourceRangesKey: "10.0.0.0/8", "keep": "me"}
					live.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0/8"}
					live.Spec.LoadBalancerClass = ptr.To("example.com/lb")
					live.Spec.AllocateLoadBalancerNodePorts = ptr.To(true)
					live.Spec.HealthCheckNodePort = 31000
				}
				got, changed := children.MergeService(live, children.DesiredService(dobj))
				if changed != (from != to) {
					t.Fatalf("changed = %v, want %v", changed, from != to)
				}
				if from == to {
					return
				}
				s := got.Spec
				lbOnly := len(s.LoadBalancerSourceRanges) > 0 || got.Annotations[corev1.AnnotationLoadBalancerSourceRangesKey] != "" ||
					s.LoadBalancerClass != nil || s.AllocateLoadBalancerNodePorts != nil || s.HealthCheckNodePort != 0
				if to != corev1.ServiceTypeLoadBalancer && lbOnly {
					t.Errorf("fields only a LoadBalancer may have are kept: %+v %v", s, got.Annotations)
				}
				if to == corev1.ServiceTypeClusterIP && (s.ExternalTrafficPolicy != "" || s.Ports[0].NodePort != 0) {
					t.Errorf("a ClusterIP Service keeps externalTrafficPolicy %q and nodePort %d", s.ExternalTrafficPolicy, s.Ports[0].NodePort)
				}
				if to == corev1.ServiceTypeNodePort && from == corev1.ServiceTypeLoadBalancer && (s.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal || s.Ports[0].NodePort != 30080) {
					t.Errorf("NodePort lost what it may keep: externalTrafficPolicy %q, nodePort %d", s.ExternalTrafficPolicy, s.Ports[0].NodePort)
				}
				if from == corev1.ServiceTypeLoadBalancer && got.Annotations["keep"] != "me" {
					t.Error("other annotations are dropped")
				}
			})
		}
	}
}
