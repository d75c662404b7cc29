package children_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	k8sfake "k8s.io/client-go/kubernetes/fake"
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

// TestMergeServiceAppProtocol: a port's appProtocol is the controller's
// while the spec sets it and until the write that follows the spec's
// dropping it, which removes it; one someone else set on a port whose
// appProtocol the controller never set is kept. wrote is the appProtocol
// the spec set when the controller last wrote the Service (its record of
// owned fields), live what the port holds now; noRecord is a Service an
// earlier release wrote, without the record of appProtocols.
func TestMergeServiceAppProtocol(t *testing.T) {
	for _, tc := range []struct {
		name              string
		svcType           appv1.ServiceType
		rename, noRecord  bool
		wrote, live, spec *string
		want              *string
		wantChange        bool
	}{
		{name: "neither sets it", wantChange: false},
		{name: "someone else's is kept", live: ptr.To("kubernetes.io/h2c"), want: ptr.To("kubernetes.io/h2c"), wantChange: false},
		{name: "someone else's is kept on a NodePort Service", svcType: appv1.ServiceTypeNodePort, live: ptr.To("http"), want: ptr.To("http"), wantChange: false},
		{name: "the spec's is set", spec: ptr.To("http"), want: ptr.To("http"), wantChange: true},
		{name: "the spec's replaces someone else's", live: ptr.To("grpc"), spec: ptr.To("http"), want: ptr.To("http"), wantChange: true},
		{name: "the spec's replaces drift", wrote: ptr.To("http"), live: ptr.To("grpc"), spec: ptr.To("http"), want: ptr.To("http"), wantChange: true},
		{name: "the spec's in sync", wrote: ptr.To("http"), live: ptr.To("http"), spec: ptr.To("http"), want: ptr.To("http"), wantChange: false},
		{name: "the spec's changed", wrote: ptr.To("kubernetes.io/h2c"), live: ptr.To("kubernetes.io/h2c"), spec: ptr.To("http"), want: ptr.To("http"), wantChange: true},
		{name: "the controller's, dropped from the spec, is removed", wrote: ptr.To("kubernetes.io/h2c"), live: ptr.To("kubernetes.io/h2c"), wantChange: true},
		{name: "the controller's, dropped from the spec and drifted, is removed", wrote: ptr.To("kubernetes.io/h2c"), live: ptr.To("http"), wantChange: true},
		{name: "the controller's, dropped from the spec and already gone", wrote: ptr.To("kubernetes.io/h2c"), wantChange: true},
		{name: "a renamed port does not inherit it", rename: true, live: ptr.To("http"), wantChange: true},
		{name: "a renamed port does not inherit the controller's", rename: true, wrote: ptr.To("http"), live: ptr.To("http"), wantChange: true},
		{name: "written by an earlier release: the record is added", noRecord: true, wrote: ptr.To("http"), live: ptr.To("http"), spec: ptr.To("http"), want: ptr.To("http"), wantChange: true},
		{name: "written by an earlier release and dropped: not told from someone else's", noRecord: true, wrote: ptr.To("http"), live: ptr.To("http"), want: ptr.To("http"), wantChange: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withType := func(d *appv1.DeployObject) {
				if tc.svcType != "" {
					d.Spec.ServiceType = tc.svcType
				}
			}
			live := testobjects.LiveService(testobjects.NewDeployObject(withType, func(d *appv1.DeployObject) { d.Spec.Ports[0].AppProtocol = tc.wrote }))
			live.Spec.Ports[0].AppProtocol = tc.live
			if tc.noRecord {
				live.Annotations = nil
			}
			dobj := testobjects.NewDeployObject(withType, func(d *appv1.DeployObject) { d.Spec.Ports[0].AppProtocol = tc.spec })
			if tc.rename {
				dobj.Spec.Ports[0].Name = "web"
			}
			desired := children.DesiredService(dobj)
			got, changed := children.MergeService(live.DeepCopy(), desired)
			if gotAP := got.Spec.Ports[0].AppProtocol; changed != tc.wantChange || ptr.Deref(gotAP, "<nil>") != ptr.Deref(tc.want, "<nil>") {
				t.Errorf("changed=%v appProtocol=%s; want %v %s", changed, ptr.Deref(gotAP, "<nil>"), tc.wantChange, ptr.Deref(tc.want, "<nil>"))
			}
			if _, slimChanged := children.MergeService(children.SlimService(live.DeepCopy()), desired); slimChanged != changed {
				t.Errorf("as the cache keeps it: changed=%v, whole: %v", slimChanged, changed)
			}
			if _, again := children.MergeService(got, desired); again {
				t.Error("merging the merged Service changes it again")
			}
		})
	}
}

// TestDesiredServiceRecordsAppProtocols: the record of owned fields lists
// the ports whose appProtocol the spec sets, beside spec.service's keys
// and fields; a Service that sets none of them carries no record, as
// before appProtocols were recorded (no write on upgrade).
func TestDesiredServiceRecordsAppProtocols(t *testing.T) {
	twoPorts := func(d *appv1.DeployObject) {
		d.Spec.Ports = []appv1.Port{{Name: "http", ContainerPort: 8080}, {Name: "grpc", ContainerPort: 9090, AppProtocol: ptr.To("grpc")}}
	}
	for _, tc := range []struct {
		name   string
		mutate []func(*appv1.DeployObject)
		want   map[string]string
	}{
		{"nothing to record", nil, nil},
		{"appProtocol of one port", []func(*appv1.DeployObject){twoPorts}, map[string]string{appv1.AnnotationOwnedMetadata: "s:ports[grpc].appProtocol"}},
		{"with spec.service", []func(*appv1.DeployObject){twoPorts, withService(appv1.ServiceTypeClusterIP, appv1.ServiceSettings{
			InternalTrafficPolicy: ptr.To(corev1.ServiceInternalTrafficPolicyLocal),
			Metadata:              &appv1.ChildMetadata{Labels: map[string]string{"team": "shop"}},
		})}, map[string]string{appv1.AnnotationOwnedMetadata: "l:team,s:internalTrafficPolicy,s:ports[grpc].appProtocol"}},
		{"a label and one appProtocol", []func(*appv1.DeployObject){twoPorts, withService(appv1.ServiceTypeClusterIP, appv1.ServiceSettings{
			Metadata: &appv1.ChildMetadata{Labels: map[string]string{"team": "shop"}},
		})}, map[string]string{appv1.AnnotationOwnedMetadata: "l:team,s:ports[grpc].appProtocol"}},
		{"a label and an annotation", []func(*appv1.DeployObject){withService(appv1.ServiceTypeClusterIP, appv1.ServiceSettings{
			Metadata: &appv1.ChildMetadata{Labels: map[string]string{"team": "shop"}, Annotations: map[string]string{"owner": "shop-team"}},
		})}, map[string]string{"owner": "shop-team", appv1.AnnotationOwnedMetadata: "a:owner,l:team"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := children.DesiredService(testobjects.NewDeployObject(tc.mutate...)).Annotations; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("annotations %v, want %v", got, tc.want)
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

// TestMergeServiceHealthCheckNodePort: a LoadBalancer Service whose
// external traffic policy is Local keeps the health check node port the
// API server allocated when the controller writes it for another reason;
// under any other policy the port is dropped, which the API server requires.
func TestMergeServiceHealthCheckNodePort(t *testing.T) {
	for _, tc := range []struct {
		policy corev1.ServiceExternalTrafficPolicy
		want   int32
	}{
		{corev1.ServiceExternalTrafficPolicyLocal, 31000},
		{corev1.ServiceExternalTrafficPolicyCluster, 0},
	} {
		dobj := testobjects.NewDeployObject(func(d *appv1.DeployObject) { d.Spec.ServiceType = appv1.ServiceTypeLoadBalancer })
		live := testobjects.LiveService(dobj)
		live.Spec.ExternalTrafficPolicy, live.Spec.HealthCheckNodePort = tc.policy, 31000
		dobj.Spec.Ports[0].ServicePort = ptr.To[int32](81)
		got, changed := children.MergeService(live, children.DesiredService(dobj))
		if !changed || got.Spec.Ports[0].Port != 81 || got.Spec.HealthCheckNodePort != tc.want {
			t.Errorf("%s: changed %v, port %d, healthCheckNodePort %d, want changed, port 81 and %d", tc.policy, changed, got.Spec.Ports[0].Port, got.Spec.HealthCheckNodePort, tc.want)
		}
	}
}

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

// TestServiceFieldDriftIsCorrected: a field spec.service sets that
// someone else changed on the Service is set back in one write, which
// leaves the Service in line.
func TestServiceFieldDriftIsCorrected(t *testing.T) {
	dobj := testobjects.NewDeployObject(withService(appv1.ServiceTypeLoadBalancer, appv1.ServiceSettings{
		ExternalTrafficPolicy:    ptr.To(corev1.ServiceExternalTrafficPolicyLocal),
		InternalTrafficPolicy:    ptr.To(corev1.ServiceInternalTrafficPolicyLocal),
		TrafficDistribution:      ptr.To(corev1.ServiceTrafficDistributionPreferClose),
		LoadBalancerSourceRanges: []string{"10.0.0.0/8"},
	}))
	for _, tc := range []struct {
		name  string
		drift func(*corev1.ServiceSpec)
		field func(corev1.ServiceSpec) any
		want  any
	}{
		{"externalTrafficPolicy",
			func(s *corev1.ServiceSpec) { s.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster },
			func(s corev1.ServiceSpec) any { return string(s.ExternalTrafficPolicy) }, "Local"},
		{"internalTrafficPolicy",
			func(s *corev1.ServiceSpec) {
				s.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyCluster)
			},
			func(s corev1.ServiceSpec) any { return string(ptr.Deref(s.InternalTrafficPolicy, "<nil>")) }, "Local"},
		{"trafficDistribution",
			func(s *corev1.ServiceSpec) {
				s.TrafficDistribution = ptr.To(corev1.ServiceTrafficDistributionPreferSameNode)
			},
			func(s corev1.ServiceSpec) any { return ptr.Deref(s.TrafficDistribution, "<nil>") }, "PreferClose"},
		{"loadBalancerSourceRanges",
			func(s *corev1.ServiceSpec) { s.LoadBalancerSourceRanges = []string{"0.0.0.0/0"} },
			func(s corev1.ServiceSpec) any { return s.LoadBalancerSourceRanges }, []string{"10.0.0.0/8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live := testobjects.LiveService(dobj)
			tc.drift(&live.Spec)
			got, changed := children.MergeService(live, children.DesiredService(dobj))
			if !changed || !reflect.DeepEqual(tc.field(got.Spec), tc.want) {
				t.Errorf("changed=%v %s=%v; want a change to %v", changed, tc.name, tc.field(got.Spec), tc.want)
			}
			if _, again := children.MergeService(got, children.DesiredService(dobj)); again {
				t.Error("merging the merged Service changes it again")
			}
		})
	}
}

// TestMergeServiceTypeChangeToLoadBalancerSetsClass: the API server takes
// loadBalancerClass only with a change of type to LoadBalancer, so the
// write that changes the type sets the spec's class; a later write could
// only recreate the Service.
func TestMergeServiceTypeChangeToLoadBalancerSetsClass(t *testing.T) {
	dobj := testobjects.NewDeployObject(withService(appv1.ServiceTypeLoadBalancer, appv1.ServiceSettings{LoadBalancerClass: ptr.To("example.com/lb")}))
	for _, from := range []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort} {
		t.Run(string(from), func(t *testing.T) {
			live := testobjects.LiveService(dobj)
			live.Spec.Type, live.Spec.LoadBalancerClass = from, nil
			got, changed := children.MergeService(live, children.DesiredService(dobj))
			if !changed || got.Spec.Type != corev1.ServiceTypeLoadBalancer || ptr.Deref(got.Spec.LoadBalancerClass, "<nil>") != "example.com/lb" {
				t.Errorf("changed=%v type=%s loadBalancerClass=%s; want LoadBalancer with example.com/lb in the same write",
					changed, got.Spec.Type, ptr.Deref(got.Spec.LoadBalancerClass, "<nil>"))
			}
			if children.ServiceNeedsRecreation(got, children.DesiredService(dobj)) {
				t.Error("the Service written by the type change must be recreated for its class")
			}
		})
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
		// The cache holds the Service slim, with an allocated cluster IP.
		live := tc.live.DeepCopy()
		if live.Spec.ClusterIP == "" {
			live.Spec.ClusterIP = "10.96.0.10"
		}
		if got := children.ServiceNeedsRecreation(children.SlimService(live), tc.desired); got != tc.want {
			t.Errorf("%s, from the cache: %v, want %v", tc.name, got, tc.want)
		}
	}

	// The write deletes the live Service, with its UID, and says why.
	for _, tc := range []struct {
		live, desired *corev1.Service
		want          string
	}{
		{children.DesiredService(plain), children.DesiredService(headless), "recreating Service web: headless (clusterIP None) cannot change on a live Service"},
		{children.DesiredService(lb("example.com/a")), children.DesiredService(lb("example.com/b")), "recreating Service web: loadBalancerClass cannot change on a live Service"},
	} {
		live := tc.live
		live.UID = "uid-svc"
		client := k8sfake.NewClientset(live)
		ops := children.ServiceOps(nil, client.CoreV1().Services(live.Namespace), nil)
		_, err := ops.Write(context.Background(), live, tc.desired)
		var recreation *children.RecreationError
		if !errors.As(err, &recreation) || recreation.Error() != tc.want {
			t.Fatalf("write: %v, want a RecreationError: %s", err, tc.want)
		}
		if _, err := client.CoreV1().Services(live.Namespace).Get(context.Background(), live.Name, metav1.GetOptions{}); err == nil {
			t.Error("the Service was not deleted")
		}
		if p := children.ProblemOf(err); p == nil || p.Reason != appv1.ReasonProgressing || !p.Retry {
			t.Errorf("problem %+v, want Progressing and retried", p)
		}
	}
}
