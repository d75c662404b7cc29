package children

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// The Service: what the controller asks of it, how a live one is brought in
// line, and what the cache keeps. The controller owns its labels (not
// others' labels), type, selector and ports, the ports' appProtocols and
// the spec.service fields the DeployObject sets (recorded in
// appv1.AnnotationOwnedMetadata) and the keys of spec.service.metadata; clusterIP, nodePorts and everything else
// belong to the API server or to someone else and are carried over from
// the live object on update. Its surface is small and fixed, so it is
// compared field by field and written with an update; a change the API
// server refuses in place (loadBalancerClass, headless) recreates it.

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
	ports := servicePorts(dobj)
	svc := &corev1.Service{
		ObjectMeta: childMeta(dobj),
		Spec: corev1.ServiceSpec{
			Type:     svcType,
			Selector: SelectorLabels(dobj),
			Ports:    ports,
		},
	}
	owned := appProtocolFields(ports)
	var metadata *appv1.ChildMetadata
	if settings := dobj.Spec.Service; settings != nil {
		metadata = settings.Metadata
		owned = append(owned, setServiceFields(&svc.Spec, settings)...)
	}
	withChildMetadata(&svc.ObjectMeta, metadata, owned...)
	return svc
}

// servicePorts are the ports of dobj's Services.
func servicePorts(dobj *appv1.DeployObject) []corev1.ServicePort {
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
	return ports
}

// A port's appProtocol is the controller's while the spec sets it, and
// someone else's otherwise (a mesh or a Gateway controller may set it).
// Which ports the controller set it on, the record of owned fields (see
// metadata.go) tells, as for spec.service's fields: when the spec drops
// it, the next write removes the controller's value, and keeps a value
// someone else set on a port whose appProtocol the controller never set.
// managedFields could tell the same, but the cache drops them (see
// SlimService): the record is in the cache, so that telling whether a
// Service is in line needs no read. A Service an earlier release wrote
// has no record of its appProtocols; it gets one with the first write
// from a spec that sets one, and until then an appProtocol the spec
// dropped cannot be told from someone else's and is kept.
//
// appProtocolField is the record's name of the appProtocol of the port
// named port (port names hold no comma).
func appProtocolField(port string) string {
	return "ports[" + port + "].appProtocol"
}

// appProtocolFields are the record's names of the appProtocols ports set.
func appProtocolFields(ports []corev1.ServicePort) []string {
	var fields []string
	for _, p := range ports {
		if p.AppProtocol != nil {
			fields = append(fields, appProtocolField(p.Name))
		}
	}
	return fields
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
// appProtocol when desired sets none and live's record does not say the
// controller set it, carried over by port name from live: updates keep the
// nodePorts clients already use and the appProtocol someone else set. A
// ClusterIP Service has no nodePorts, so none are carried over: the API
// server rejects them there.
func servicePortsFor(live, desired *corev1.Service) []corev1.ServicePort {
	ports := make([]corev1.ServicePort, len(desired.Spec.Ports))
	copy(ports, desired.Spec.Ports)
	owned := ownedFields(live)
	for i := range ports {
		for _, lp := range live.Spec.Ports {
			if lp.Name != ports[i].Name {
				continue
			}
			if desired.Spec.Type != corev1.ServiceTypeClusterIP {
				ports[i].NodePort = lp.NodePort
			}
			if ports[i].AppProtocol == nil && !owned[appProtocolField(ports[i].Name)] {
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

// The Service fields spec.service sets beyond the type and ports. The
// controller owns each one only while the spec sets it; the record of
// owned keys (see metadata.go) tells a field the spec stopped setting,
// which goes back to the API server's default, from one someone else set,
// which is kept.

// Names of the owned fields in the record.
const (
	fieldExternalTrafficPolicy = "externalTrafficPolicy"
	fieldInternalTrafficPolicy = "internalTrafficPolicy"
	fieldTrafficDistribution   = "trafficDistribution"
	fieldLoadBalancerClass     = "loadBalancerClass"
	fieldSourceRanges          = "loadBalancerSourceRanges"
	fieldHeadless              = "headless"
)

// setServiceFields sets in spec the fields settings sets, and returns
// their names.
func setServiceFields(spec *corev1.ServiceSpec, settings *appv1.ServiceSettings) []string {
	var set []string
	if settings.ExternalTrafficPolicy != nil {
		spec.ExternalTrafficPolicy = *settings.ExternalTrafficPolicy
		set = append(set, fieldExternalTrafficPolicy)
	}
	if settings.InternalTrafficPolicy != nil {
		spec.InternalTrafficPolicy = ptr.To(*settings.InternalTrafficPolicy)
		set = append(set, fieldInternalTrafficPolicy)
	}
	if settings.TrafficDistribution != nil {
		spec.TrafficDistribution = ptr.To(*settings.TrafficDistribution)
		set = append(set, fieldTrafficDistribution)
	}
	if settings.LoadBalancerClass != nil {
		spec.LoadBalancerClass = ptr.To(*settings.LoadBalancerClass)
		set = append(set, fieldLoadBalancerClass)
	}
	if len(settings.LoadBalancerSourceRanges) > 0 {
		spec.LoadBalancerSourceRanges = append([]string(nil), settings.LoadBalancerSourceRanges...)
		set = append(set, fieldSourceRanges)
	}
	if ptr.Deref(settings.Headless, false) {
		spec.ClusterIP = corev1.ClusterIPNone
		set = append(set, fieldHeadless)
	}
	return set
}

// serviceFieldsInSync reports whether live holds every field desired sets
// and is headless exactly when desired is. The fields the spec stopped
// setting show in the record, which childMetadataInSync compares.
func serviceFieldsInSync(live, desired *corev1.Service) bool {
	l, d := live.Spec, desired.Spec
	return (d.ExternalTrafficPolicy == "" || l.ExternalTrafficPolicy == d.ExternalTrafficPolicy) &&
		(d.InternalTrafficPolicy == nil || equality.Semantic.DeepEqual(l.InternalTrafficPolicy, d.InternalTrafficPolicy)) &&
		(d.TrafficDistribution == nil || equality.Semantic.DeepEqual(l.TrafficDistribution, d.TrafficDistribution)) &&
		(d.LoadBalancerSourceRanges == nil || equality.Semantic.DeepEqual(l.LoadBalancerSourceRanges, d.LoadBalancerSourceRanges)) &&
		!ServiceNeedsRecreation(live, desired)
}

// mergeServiceFields sets in out, live's spec, the fields desired sets,
// and resets those live's record says the controller set and desired no
// longer does to what the API server fills in.
func mergeServiceFields(out *corev1.ServiceSpec, live, desired *corev1.Service) {
	owned := ownedFields(live)
	d := desired.Spec
	switch {
	case d.ExternalTrafficPolicy != "":
		out.ExternalTrafficPolicy = d.ExternalTrafficPolicy
	case owned[fieldExternalTrafficPolicy] && out.Type != corev1.ServiceTypeClusterIP:
		out.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	switch {
	case d.InternalTrafficPolicy != nil:
		out.InternalTrafficPolicy = d.InternalTrafficPolicy
	case owned[fieldInternalTrafficPolicy]:
		out.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyCluster)
	}
	switch {
	case d.TrafficDistribution != nil:
		out.TrafficDistribution = d.TrafficDistribution
	case owned[fieldTrafficDistribution]:
		out.TrafficDistribution = nil
	}
	switch {
	case d.LoadBalancerSourceRanges != nil:
		out.LoadBalancerSourceRanges = d.LoadBalancerSourceRanges
	case owned[fieldSourceRanges]:
		out.LoadBalancerSourceRanges = nil
	}
	if d.LoadBalancerClass != nil {
		out.LoadBalancerClass = d.LoadBalancerClass
	}
}

// ServiceNeedsRecreation reports whether live can become desired only by
// being created again: the API server allows no change of the cluster IP
// (to or from headless) and of a load balancer's class. Only a value the
// spec sets, or set before (live's record), is the controller's to change:
// an adopted Service keeps what its maker chose.
func ServiceNeedsRecreation(live, desired *corev1.Service) bool {
	owned := ownedFields(live)
	wantHeadless := desired.Spec.ClusterIP == corev1.ClusterIPNone
	if (live.Spec.ClusterIP == corev1.ClusterIPNone) != wantHeadless && (wantHeadless || owned[fieldHeadless]) {
		return true
	}
	return live.Spec.Type == corev1.ServiceTypeLoadBalancer && desired.Spec.Type == corev1.ServiceTypeLoadBalancer &&
		(desired.Spec.LoadBalancerClass != nil || owned[fieldLoadBalancerClass]) &&
		!equality.Semantic.DeepEqual(live.Spec.LoadBalancerClass, desired.Spec.LoadBalancerClass)
}

// RecreationError: the Service was deleted, to be created again by the
// next sync, as a change the spec asks for cannot be made in place.
type RecreationError struct {
	Name, Why string
}

func (e *RecreationError) Error() string {
	return fmt.Sprintf("recreating Service %s: %s cannot change on a live Service", e.Name, e.Why)
}

// recreationReason says which field forces the recreation.
func recreationReason(live, desired *corev1.Service) string {
	if (live.Spec.ClusterIP == corev1.ClusterIPNone) != (desired.Spec.ClusterIP == corev1.ClusterIPNone) {
		return "headless (clusterIP None)"
	}
	return "loadBalancerClass"
}

// headlessOnly keeps a cluster IP only when it says the Service is
// headless, the one value the controller compares.
func headlessOnly(clusterIP string) string {
	if clusterIP == corev1.ClusterIPNone {
		return clusterIP
	}
	return ""
}

// ServiceOps are UpdatedOps for the Service whose write deletes a live
// Service that cannot become desired in place, with a UID precondition,
// and returns a *RecreationError: the next sync, which the deletion
// triggers, creates it again.
func ServiceOps(cached func(string) (*corev1.Service, error), client Client[*corev1.Service], recheckOwner func(context.Context) error) Ops[*corev1.Service] {
	ops := UpdatedOps("Service", cached, client, MergeService, recheckOwner)
	update := ops.Write
	ops.Write = func(ctx context.Context, live, desired *corev1.Service) (*corev1.Service, error) {
		if !ServiceNeedsRecreation(live, desired) {
			return update(ctx, live, desired)
		}
		uid := live.UID
		if err := client.Delete(ctx, live.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("deleting Service %s to recreate it: %w", live.Name, err)
		}
		return nil, &RecreationError{Name: live.Name, Why: recreationReason(live, desired)}
	}
	return ops
}
