package main

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// The controller owns a fixed set of fields in each child: its labels (not
// other labels), the Deployment's replicas and pod template labels, the
// fields of the "app" container that the spec sets, and the Service's type,
// selector and ports. Everything else, such as annotations, other containers,
// the annotation `kubectl rollout restart` adds, clusterIP and nodePorts,
// belongs to someone else and is carried over from the live object.

// mergeDeployment returns live with the owned fields of desired applied, and
// whether that changed anything. When nothing changed it returns live itself,
// without copying.
func mergeDeployment(live, desired *appsv1.Deployment) (*appsv1.Deployment, bool) {
	if deploymentMatches(live, desired) {
		return live, false
	}
	out := live.DeepCopy()
	out.Labels = withLabels(out.Labels, desired.Labels)
	out.Spec.Replicas = desired.Spec.Replicas
	out.Spec.Template.Labels = withLabels(out.Spec.Template.Labels, desired.Spec.Template.Labels)
	want := desired.Spec.Template.Spec.Containers[0]
	if i := containerIndex(out.Spec.Template.Spec.Containers, want.Name); i >= 0 {
		c := &out.Spec.Template.Spec.Containers[i]
		c.Image = want.Image
		c.Command = want.Command
		c.Args = want.Args
		c.Env = want.Env
		c.Resources = want.Resources
		c.Ports = want.Ports
	} else {
		out.Spec.Template.Spec.Containers = append(out.Spec.Template.Spec.Containers, want)
	}
	return out, true
}

func deploymentMatches(live, desired *appsv1.Deployment) bool {
	if !hasLabels(live.Labels, desired.Labels) ||
		!hasLabels(live.Spec.Template.Labels, desired.Spec.Template.Labels) ||
		live.Spec.Replicas == nil || *live.Spec.Replicas != *desired.Spec.Replicas {
		return false
	}
	want := desired.Spec.Template.Spec.Containers[0]
	i := containerIndex(live.Spec.Template.Spec.Containers, want.Name)
	if i < 0 {
		return false
	}
	got := live.Spec.Template.Spec.Containers[i]
	return got.Image == want.Image &&
		equality.Semantic.DeepEqual(got.Command, want.Command) &&
		equality.Semantic.DeepEqual(got.Args, want.Args) &&
		equality.Semantic.DeepEqual(got.Env, want.Env) &&
		equality.Semantic.DeepEqual(got.Resources, want.Resources) &&
		equality.Semantic.DeepEqual(got.Ports, want.Ports)
}

// mergeService returns live with the owned fields of desired applied, and
// whether that changed anything. When nothing changed it returns live itself.
func mergeService(live, desired *corev1.Service) (*corev1.Service, bool) {
	ports := servicePortsFor(live, desired)
	if hasLabels(live.Labels, desired.Labels) &&
		live.Spec.Type == desired.Spec.Type &&
		equality.Semantic.DeepEqual(live.Spec.Selector, desired.Spec.Selector) &&
		equality.Semantic.DeepEqual(live.Spec.Ports, ports) {
		return live, false
	}
	out := live.DeepCopy()
	out.Labels = withLabels(out.Labels, desired.Labels)
	out.Spec.Type = desired.Spec.Type
	out.Spec.Selector = desired.Spec.Selector
	out.Spec.Ports = ports
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

func containerIndex(cs []corev1.Container, name string) int {
	for i := range cs {
		if cs[i].Name == name {
			return i
		}
	}
	return -1
}

// hasLabels reports whether every label in want is set in got with the same value.
func hasLabels(got, want map[string]string) bool {
	for k, v := range want {
		if gv, ok := got[k]; !ok || gv != v {
			return false
		}
	}
	return true
}

// withLabels returns a copy of got with every label of want set.
func withLabels(got, want map[string]string) map[string]string {
	out := make(map[string]string, len(got)+len(want))
	for k, v := range got {
		out[k] = v
	}
	for k, v := range want {
		out[k] = v
	}
	return out
}
