package children_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/testobjects"
)

func TestCanaryServiceName(t *testing.T) {
	if got := children.CanaryServiceName(testobjects.NewDeployObject()); got != "web-canary" {
		t.Errorf("name %q, want web-canary", got)
	}
}

func TestDesiredCanaryService(t *testing.T) {
	childLabels := map[string]string{"app.kubernetes.io/managed-by": "deployobject-controller", "app.deployobject.dev/name": "web"}
	selector := map[string]string{"app.deployobject.dev/name": "web", "pod-template-hash": "5d8f7c9b6d-1"}
	http := corev1.ServicePort{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)}
	for _, tc := range []struct {
		name   string
		mutate func(*appv1.DeployObject)
		want   *corev1.Service
	}{
		{"no ports, no Service", func(d *appv1.DeployObject) { d.Spec.Ports = nil }, nil},
		{"the Service's ports, selecting the canary's pods", func(*appv1.DeployObject) {}, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "web-canary", Namespace: "apps", Labels: childLabels, OwnerReferences: canaryOwner},
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: selector, Ports: []corev1.ServicePort{http}},
		}},
		{"ClusterIP without the Service's settings and metadata", func(d *appv1.DeployObject) {
			d.Spec.ServiceType = appv1.ServiceTypeLoadBalancer
			d.Spec.Service = &appv1.ServiceSettings{
				Metadata:                 &appv1.ChildMetadata{Labels: map[string]string{"team": "shop"}, Annotations: map[string]string{"lb.example.com/internal": "true"}},
				ExternalTrafficPolicy:    ptr.To(corev1.ServiceExternalTrafficPolicyLocal),
				InternalTrafficPolicy:    ptr.To(corev1.ServiceInternalTrafficPolicyLocal),
				TrafficDistribution:      ptr.To("PreferClose"),
				LoadBalancerClass:        ptr.To("example.com/lb"),
				LoadBalancerSourceRanges: []string{"192.0.2.0/24"},
				Headless:                 ptr.To(true),
			}
		}, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "web-canary", Namespace: "apps", Labels: childLabels, OwnerReferences: canaryOwner},
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: selector, Ports: []corev1.ServicePort{http}},
		}},
		{"appProtocols, recorded as the Service records them", func(d *appv1.DeployObject) {
			d.Spec.Ports[0].AppProtocol = ptr.To("kubernetes.io/h2c")
			d.Spec.Ports = append(d.Spec.Ports, appv1.Port{Name: "grpc", ContainerPort: 9090, AppProtocol: ptr.To("grpc")})
		}, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{
				Name: "web-canary", Namespace: "apps", Labels: childLabels, OwnerReferences: canaryOwner,
				Annotations: map[string]string{"app.deployobject.dev/owned-metadata": "s:ports[grpc].appProtocol,s:ports[http].appProtocol"},
			},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: selector, Ports: []corev1.ServicePort{
				{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080), AppProtocol: ptr.To("kubernetes.io/h2c")},
				{Name: "grpc", Protocol: corev1.ProtocolTCP, Port: 9090, TargetPort: intstr.FromInt32(9090), AppProtocol: ptr.To("grpc")},
			}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject(tc.mutate)
			got := children.DesiredCanaryService(dobj, "5d8f7c9b6d-1")
			if !testobjects.EqualObjects(got, tc.want) {
				t.Fatalf("got\n%+v\nwant\n%+v", got, tc.want)
			}
			if got != nil && got.Spec.Ports[0].AppProtocol != nil && got.Spec.Ports[0].AppProtocol == dobj.Spec.Ports[0].AppProtocol {
				t.Error("the canary Service points into the DeployObject")
			}
		})
	}
}

// TestCanaryServiceRidesTheServiceKind: the canary Service as the API
// server holds it, and as the cache keeps it, is in line with the desired
// one; a drift is brought in line by one write, after which it is in line.
func TestCanaryServiceRidesTheServiceKind(t *testing.T) {
	dobj := testobjects.NewDeployObject(func(d *appv1.DeployObject) { d.Spec.Ports[0].AppProtocol = ptr.To("kubernetes.io/h2c") })
	desired := children.DesiredCanaryService(dobj, "5d8f7c9b6d-1")
	for _, tc := range []struct {
		name         string
		drift        func(*corev1.Service)
		wantChange   bool
		wantSelector map[string]string
	}{
		{"in sync", func(*corev1.Service) {}, false, map[string]string{"app.deployobject.dev/name": "web", "pod-template-hash": "5d8f7c9b6d-1"}},
		{"the previous attempt's pods", func(s *corev1.Service) { s.Spec.Selector["pod-template-hash"] = "5d8f7c9b6d-0" }, true,
			map[string]string{"app.deployobject.dev/name": "web", "pod-template-hash": "5d8f7c9b6d-1"}},
		{"selector widened", func(s *corev1.Service) { delete(s.Spec.Selector, "pod-template-hash") }, true,
			map[string]string{"app.deployobject.dev/name": "web", "pod-template-hash": "5d8f7c9b6d-1"}},
		{"made a NodePort", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.Ports[0].NodePort = 30001
		}, true, map[string]string{"app.deployobject.dev/name": "web", "pod-template-hash": "5d8f7c9b6d-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live := desired.DeepCopy()
			live.UID, live.ResourceVersion = "uid-canary-svc", "31"
			live.Spec.ClusterIP, live.Spec.ClusterIPs = "10.96.0.11", []string{"10.96.0.11"}
			live.Spec.SessionAffinity = corev1.ServiceAffinityNone
			live.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyCluster)
			live.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
			tc.drift(live)
			got, changed := children.MergeService(live, desired)
			if changed != tc.wantChange {
				t.Fatalf("changed = %v, want %v", changed, tc.wantChange)
			}
			if _, slimChanged := children.MergeService(children.SlimService(live.DeepCopy()), desired); slimChanged != tc.wantChange {
				t.Errorf("from the cache: changed = %v, want %v", slimChanged, tc.wantChange)
			}
			if !testobjects.EqualObjects(got.Spec.Selector, tc.wantSelector) || got.Spec.Type != corev1.ServiceTypeClusterIP || got.Spec.Ports[0].NodePort != 0 || got.Spec.ClusterIP != "10.96.0.11" {
				t.Errorf("merged spec %+v", got.Spec)
			}
			if _, again := children.MergeService(got, desired); again {
				t.Error("the merged canary Service is not in line")
			}
			if children.ServiceNeedsRecreation(live, desired) {
				t.Error("the canary Service would be recreated")
			}
		})
	}
}

func TestPinnedService(t *testing.T) {
	unpinned := map[string]string{"app.deployobject.dev/name": "web"}
	pinned := map[string]string{"app.deployobject.dev/name": "web", "pod-template-hash": "7b9c6d5f4"}
	for _, tc := range []struct {
		name         string
		svc          *corev1.Service
		hash         string
		wantSelector map[string]string
	}{
		{"pinned to the stable ReplicaSet", children.DesiredService(testobjects.NewDeployObject()), "7b9c6d5f4", pinned},
		{"no hash: unpinned", children.DesiredService(testobjects.NewDeployObject()), "", unpinned},
		{"no Service", nil, "7b9c6d5f4", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.svc.DeepCopy()
			got := children.PinnedService(tc.svc, tc.hash)
			if tc.svc == nil {
				if got != nil {
					t.Fatalf("got %+v for no Service", got)
				}
				return
			}
			if !testobjects.EqualObjects(got.Spec.Selector, tc.wantSelector) {
				t.Errorf("selector %v, want %v", got.Spec.Selector, tc.wantSelector)
			}
			if !testobjects.EqualObjects(tc.svc, before) {
				t.Error("PinnedService changed its argument")
			}
			got.Spec.Selector["x"] = "y"
			got.Labels["x"] = "y"
			if !testobjects.EqualObjects(tc.svc, before) {
				t.Error("the pinned Service points into its argument")
			}
			got.Labels, got.Spec.Selector = before.Labels, before.Spec.Selector
			if !testobjects.EqualObjects(got, before) {
				t.Errorf("PinnedService changed more than the selector: %+v", got)
			}
		})
	}
}

// TestPinningIsOneWrite: MergeService owns the whole selector, so that
// pinning the stable Service and unpinning it are each one write, in line
// afterwards, and a Service already as asked is not written.
func TestPinningIsOneWrite(t *testing.T) {
	dobj := testobjects.NewDeployObject()
	unpinned := testobjects.LiveService(dobj)
	pinned := children.PinnedService(unpinned, "7b9c6d5f4")
	for _, tc := range []struct {
		name         string
		live         *corev1.Service
		hash         string
		wantChange   bool
		wantSelector map[string]string
	}{
		{"pin", unpinned, "7b9c6d5f4", true, map[string]string{"app.deployobject.dev/name": "web", "pod-template-hash": "7b9c6d5f4"}},
		{"unpin", pinned, "", true, map[string]string{"app.deployobject.dev/name": "web"}},
		{"pinned, as asked", pinned, "7b9c6d5f4", false, map[string]string{"app.deployobject.dev/name": "web", "pod-template-hash": "7b9c6d5f4"}},
		{"unpinned, as asked", unpinned, "", false, map[string]string{"app.deployobject.dev/name": "web"}},
		{"pinned to another ReplicaSet", pinned, "6c8d", true, map[string]string{"app.deployobject.dev/name": "web", "pod-template-hash": "6c8d"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			desired := children.PinnedService(children.DesiredService(dobj), tc.hash)
			got, changed := children.MergeService(tc.live, desired)
			if changed != tc.wantChange {
				t.Fatalf("changed = %v, want %v", changed, tc.wantChange)
			}
			if _, slimChanged := children.MergeService(children.SlimService(tc.live.DeepCopy()), desired); slimChanged != tc.wantChange {
				t.Errorf("from the cache: changed = %v, want %v", slimChanged, tc.wantChange)
			}
			if !testobjects.EqualObjects(got.Spec.Selector, tc.wantSelector) {
				t.Errorf("selector %v, want %v", got.Spec.Selector, tc.wantSelector)
			}
			if _, again := children.MergeService(got, desired); again {
				t.Error("not in line after the write")
			}
		})
	}
}
