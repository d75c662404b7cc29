package v1

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// DisruptionBudget asks for a PodDisruptionBudget (policy/v1) of the same
// name selecting the DeployObject's pods, which limits how many of them
// voluntary disruptions, such as a node drain, may evict at once. Exactly
// one of minAvailable and maxUnavailable is set. A budget that could never
// allow an eviction at the declared replicas (spec.autoscaling.minReplicas
// when autoscaling is set) is refused: it would block every drain.
//
// +kubebuilder:validation:XValidation:rule="has(self.minAvailable) != has(self.maxUnavailable)",message="disruptionBudget must set exactly one of minAvailable and maxUnavailable"
type DisruptionBudget struct {
	// minAvailable is how many pods must stay available during an
	// eviction: a number from 0 to 10000, or a percentage of the replicas
	// from 0% to 100%, rounded up. It must leave at least one pod evictable
	// at the declared replicas.
	// +optional
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 && self <= 10000 : self.matches('^(100|[1-9]?[0-9])%$')",message="minAvailable must be a number from 0 to 10000 or a percentage from 0% to 100%"
	MinAvailable *intstr.IntOrString `json:"minAvailable,omitempty"`

	// maxUnavailable is how many pods may be unavailable during an
	// eviction: a number from 1 to 10000, or a percentage of the replicas
	// from 1% to 100%, rounded up. 0 is refused: it never allows an
	// eviction.
	// +optional
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 1 && self <= 10000 : self.matches('^(100|[1-9][0-9]?)%$')",message="maxUnavailable must be a number from 1 to 10000 or a percentage from 1% to 100%: 0 would never allow an eviction, and a node drain would wait forever"
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// Autoscaling asks for a HorizontalPodAutoscaler (autoscaling/v2) of the
// same name that scales the DeployObject itself through its scale
// subresource: it writes spec.replicas, and the controller passes that on
// to the Deployment. Utilization is measured against the main container's
// resource requests, so a target needs a request (or a limit, which the
// request defaults to) for its resource; every sidecar needs one too, or
// the HorizontalPodAutoscaler reports that it cannot compute utilization.
// It scales on the CPU and memory shortcuts, on metrics, or both: the
// autoscaler computes a replica count for each and takes the largest.
//
// +kubebuilder:validation:XValidation:rule="self.?minReplicas.orValue(1) <= self.maxReplicas",message="autoscaling.minReplicas must not exceed autoscaling.maxReplicas"
// +kubebuilder:validation:XValidation:rule="has(self.targetCPUUtilizationPercentage) || has(self.targetMemoryUtilizationPercentage) || has(self.metrics) && size(self.metrics) > 0",message="autoscaling must set targetCPUUtilizationPercentage, targetMemoryUtilizationPercentage or at least one of metrics"
// +kubebuilder:validation:XValidation:rule="!has(self.metrics) || self.metrics.all(m, !has(m.resource) || !(m.resource.name == 'cpu' && has(self.targetCPUUtilizationPercentage) || m.resource.name == 'memory' && has(self.targetMemoryUtilizationPercentage)))",message="a Resource metric may not target a resource that targetCPUUtilizationPercentage or targetMemoryUtilizationPercentage already targets: set one target per resource",fieldPath=".metrics"
type Autoscaling struct {
	// minReplicas is the fewest replicas the autoscaler scales to: 1 to
	// 10000, 1 when unset.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// maxReplicas is the most replicas the autoscaler scales to: 1 to
	// 10000, at least minReplicas.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	MaxReplicas int32 `json:"maxReplicas"`

	// targetCPUUtilizationPercentage is the average CPU use of the pods the
	// autoscaler aims at, in percent of their CPU request: 1 to 1000.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	TargetCPUUtilizationPercentage *int32 `json:"targetCPUUtilizationPercentage,omitempty"`

	// targetMemoryUtilizationPercentage is the average memory use of the
	// pods the autoscaler aims at, in percent of their memory request: 1 to
	// 1000.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	TargetMemoryUtilizationPercentage *int32 `json:"targetMemoryUtilizationPercentage,omitempty"`

	// metrics are further metrics to scale on, as in a
	// HorizontalPodAutoscaler's spec.metrics: at most 8, after the CPU and
	// memory shortcuts in the autoscaler, in this order. Each is checked at
	// admission as the HorizontalPodAutoscaler API checks it. Two Resource
	// metrics of one resource, or two ContainerResource metrics of one
	// resource of one container, are refused.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:XValidation:rule="self.all(m, !has(m.resource) || self.exists_one(n, has(n.resource) && n.resource.name == m.resource.name))",message="two Resource metrics of one resource: set one target per resource"
	// +kubebuilder:validation:XValidation:rule="self.all(m, !has(m.containerResource) || self.exists_one(n, has(n.containerResource) && n.containerResource.name == m.containerResource.name && n.containerResource.container == m.containerResource.container))",message="two ContainerResource metrics of one resource of one container: set one target per container and resource"
	Metrics []MetricSpec `json:"metrics,omitempty"`

	// behavior configures how fast the autoscaler scales up and down, as
	// in a HorizontalPodAutoscaler; unset fields take the
	// HorizontalPodAutoscaler's defaults. It is checked at admission as the
	// HorizontalPodAutoscaler API checks it (see hack/crdpost):
	// stabilization windows are 0 to 3600 seconds; selectPolicy is Max,
	// Min or Disabled; policies, when present, are not empty, each of type
	// Pods or Percent, a value of at least 1 and a period of 1 to 1800
	// seconds; tolerance is at least 0. tolerance needs Kubernetes 1.35: an
	// older API server drops it (docs/autoscaling.md).
	// +optional
	Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
}

// ServiceSettings are the Service's settings beyond spec.serviceType and
// spec.ports. The fields map one to one to those of the Service's spec.
// loadBalancerClass and headless cannot change on a live Service: a change
// recreates it (Ready says so meanwhile), which gives it a new cluster IP
// or load balancer.
//
// +kubebuilder:validation:XValidation:rule="!has(self.headless) || !self.headless || !has(self.internalTrafficPolicy) && !has(self.trafficDistribution)",message="a headless Service has no cluster IP to route: internalTrafficPolicy and trafficDistribution do not apply",fieldPath=".headless"
type ServiceSettings struct {
	// metadata are labels and annotations for the Service, such as a cloud
	// provider's load balancer annotations; see ChildMetadata for who owns
	// which key.
	// +optional
	Metadata *ChildMetadata `json:"metadata,omitempty"`

	// externalTrafficPolicy is Cluster (the default: any node forwards) or
	// Local (only nodes with a pod, which keeps the client's source IP).
	// NodePort and LoadBalancer only.
	// +optional
	// +kubebuilder:validation:Enum=Cluster;Local
	ExternalTrafficPolicy *corev1.ServiceExternalTrafficPolicy `json:"externalTrafficPolicy,omitempty"`

	// internalTrafficPolicy is Cluster (the default) or Local (traffic from
	// a node goes only to pods on that node).
	// +optional
	// +kubebuilder:validation:Enum=Cluster;Local
	InternalTrafficPolicy *corev1.ServiceInternalTrafficPolicy `json:"internalTrafficPolicy,omitempty"`

	// trafficDistribution prefers close endpoints: PreferClose (topology-
	// aware routing), PreferSameZone or PreferSameNode.
	// +optional
	// +kubebuilder:validation:Enum=PreferClose;PreferSameZone;PreferSameNode
	TrafficDistribution *string `json:"trafficDistribution,omitempty"`

	// loadBalancerClass names the load balancer implementation (a
	// qualified name such as "service.k8s.aws/nlb"); LoadBalancer only.
	// Changing it recreates the Service.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	LoadBalancerClass *string `json:"loadBalancerClass,omitempty"`

	// loadBalancerSourceRanges are the client CIDRs the load balancer
	// admits, at most 32; LoadBalancer only.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=43
	// +kubebuilder:validation:items:XValidation:rule="isCIDR(self)",message="each source range must be a CIDR such as 10.0.0.0/8"
	LoadBalancerSourceRanges []string `json:"loadBalancerSourceRanges,omitempty"`

	// headless makes the Service headless (clusterIP None): its DNS name
	// resolves to the pods' addresses, for peers that find each other.
	// ClusterIP only. Changing it recreates the Service.
	// +optional
	Headless *bool `json:"headless,omitempty"`
}

// ChildMetadata are labels and annotations the controller sets on one of
// its children, for the controllers that read them there: cert-manager and
// external-dns on an Ingress or HTTPRoute, a cloud provider's load
// balancer annotations on a Service. The controller owns exactly the keys
// listed: keys others set on the child are never touched, and a key
// removed from the list is removed from the child. Keys are label keys (an
// optional DNS-subdomain prefix of at most 253 characters and "/", then a
// name of at most 63 letters, digits, '-', '_' and '.'); keys under
// app.deployobject.dev/ and app.kubernetes.io/managed-by are the
// controller's own and refused.
type ChildMetadata struct {
	// labels are set on the child: at most 16, each value a label value (at
	// most 63 letters, digits, '-', '_' and '.', starting and ending with a
	// letter or digit, or empty).
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 317 && k.matches('^([^/]{1,253}/)?[^/]{1,63}$') && k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'))",message="label keys must be an optional DNS-subdomain prefix and '/', then a name of at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('app.deployobject.dev/') && k != 'app.kubernetes.io/managed-by')",message="keys under app.deployobject.dev/ and app.kubernetes.io/managed-by are the controller's own"
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(self[k]) <= 63 && self[k].matches('^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$'))",message="label values must be at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
	Labels map[string]string `json:"labels,omitempty"`

	// annotations are set on the child: at most 32, values of at most 4096
	// characters.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 317 && k.matches('^([^/]{1,253}/)?[^/]{1,63}$') && k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'))",message="annotation keys must be an optional DNS-subdomain prefix and '/', then a name of at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('app.deployobject.dev/') && k != 'app.kubernetes.io/managed-by')",message="keys under app.deployobject.dev/ and app.kubernetes.io/managed-by are the controller's own"
	Annotations map[string]string `json:"annotations,omitempty"`
}
