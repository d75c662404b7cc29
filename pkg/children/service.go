package children

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/intstr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// WantsService reports whether dobj asks for a Service: only when it has ports.
func WantsService(dobj *appv1.DeployObject) bool {
	return len(dobj.Spec.Ports) > 0
}

// DesiredService is the Service dobj asks for, holding only the fields the
// controller owns; nil when dobj has no ports. clusterIP and nodePorts are
// left to the API server to allocate.
func DesiredService(dobj *appv1.DeployObject) *corev1.Service {
	if !WantsService(dobj) {
		return nil
	}
	svcType := corev1.ServiceType(dobj.Spec.ServiceType)
	if svcType == "" {
		svcType = corev1.ServiceTypeClusterIP
	}
	ports := make([]corev1.ServicePort, 0, len(dobj.Spec.Ports))
	for _, p := range dobj.Spec.Ports {
		ports = append(ports, corev1.ServicePort{
			Name:       p.Name,
			Protocol:   portProtocol(p),
			Port:       ServicePort(p),
			TargetPort: intstr.FromInt32(p.ContainerPort),
			// A copy: the desired Service must not point into the cache.
			AppProtocol: copyPtr(p.AppProtocol),
		})
	}
	svc := &corev1.Service{
		ObjectMeta: childMeta(dobj),
		Spec: corev1.ServiceSpec{
			Type:     svcType,
			Selector: SelectorLabels(dobj),
			Ports:    ports,
		},
	}
	if settings := dobj.Spec.Service; settings != nil {
		withChildMetadata(&svc.ObjectMeta, settings.Metadata, setServiceFields(&svc.Spec, settings)...)
	}
	return svc
}

// MergeService returns live with the owned fields of desired applied, and
// whether that changed anything. When nothing changed it returns live itself.
func MergeService(live, desired *corev1.Service) (*corev1.Service, bool) {
	ports := servicePortsFor(live, desired)
	if childMetadataInSync(live.ObjectMeta, desired.ObjectMeta) &&
		live.Spec.Type == desired.Spec.Type &&
		equality.Semantic.DeepEqual(live.Spec.Selector, desired.Spec.Selector) &&
		equality.Semantic.DeepEqual(live.Spec.Ports, ports) &&
		serviceFieldsInSync(live, desired) {
		return live, false
	}
	out := live.DeepCopy()
	mergeChildMetadata(&out.ObjectMeta, live.ObjectMeta, desired.ObjectMeta)
	out.Spec.Type = desired.Spec.Type
	out.Spec.Selector = desired.Spec.Selector
	out.Spec.Ports = ports
	mergeServiceFields(&out.Spec, live, desired)
	dropFieldsForbiddenByType(out)
	return out, true
}

// dropFieldsForbiddenByType clears the fields others may have set on s that
// the API server rejects for s's type. A Service of the right type never
// holds any; after a type change, fields set for the old type would make
// the update fail. The API server itself drops some of them on a type
// change (nodePorts, healthCheckNodePort, allocateLoadBalancerNodePorts,
// loadBalancerClass, externalTrafficPolicy), but not the source ranges, and
// only when they were left unchanged, so the controller drops them all.
func dropFieldsForbiddenByType(s *corev1.Service) {
	if s.Spec.Type != corev1.ServiceTypeLoadBalancer {
		s.Spec.LoadBalancerSourceRanges = nil
		delete(s.Annotations, corev1.AnnotationLoadBalancerSourceRangesKey)
		s.Spec.AllocateLoadBalancerNodePorts = nil
		s.Spec.LoadBalancerClass = nil
	}
	if s.Spec.Type != corev1.ServiceTypeLoadBalancer || s.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal {
		s.Spec.HealthCheckNodePort = 0
	}
	if s.Spec.Type == corev1.ServiceTypeClusterIP {
		s.Spec.ExternalTrafficPolicy = ""
	}
}

// servicePortsFor is desired's ports with each port's nodePort, and its
// appProtocol when desired sets none, carried over by port name from live:
// updates keep the nodePorts clients already use and the appProtocol
// someone else set. A ClusterIP Service has no nodePorts, so none are
// carried over: the API server rejects them there.
func servicePortsFor(live, desired *corev1.Service) []corev1.ServicePort {
	ports := make([]corev1.ServicePort, len(desired.Spec.Ports))
	copy(ports, desired.Spec.Ports)
	for i := range ports {
		for _, lp := range live.Spec.Ports {
			if lp.Name != ports[i].Name {
				continue
			}
			if desired.Spec.Type != corev1.ServiceTypeClusterIP {
				ports[i].NodePort = lp.NodePort
			}
			if ports[i].AppProtocol == nil {
				ports[i].AppProtocol = lp.AppProtocol
			}
			break
		}
	}
	return ports
}

// SlimService keeps the fields MergeService compares (with the annotations
// the controller owns) and the addresses a
// load balancer was given.
func SlimService(s *corev1.Service) *corev1.Service {
	s.ObjectMeta = slimMetaOwning(s.ObjectMeta)
	s.Spec = corev1.ServiceSpec{
		Type:                     s.Spec.Type,
		Selector:                 s.Spec.Selector,
		Ports:                    s.Spec.Ports,
		ClusterIP:                headlessOnly(s.Spec.ClusterIP),
		ExternalTrafficPolicy:    s.Spec.ExternalTrafficPolicy,
		InternalTrafficPolicy:    s.Spec.InternalTrafficPolicy,
		TrafficDistribution:      s.Spec.TrafficDistribution,
		LoadBalancerClass:        s.Spec.LoadBalancerClass,
		LoadBalancerSourceRanges: s.Spec.LoadBalancerSourceRanges,
	}
	// Only a load balancer's addresses are read, for status.addresses.
	lb := s.Status.LoadBalancer.Ingress
	for i := range lb {
		lb[i] = corev1.LoadBalancerIngress{IP: lb[i].IP, Hostname: lb[i].Hostname}
	}
	s.Status = corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: lb}}
	return s
}
