package v1

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
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
//
// +kubebuilder:validation:XValidation:rule="self.?minReplicas.orValue(1) <= self.maxReplicas",message="autoscaling.minReplicas must not exceed autoscaling.maxReplicas"
// +kubebuilder:validation:XValidation:rule="has(self.targetCPUUtilizationPercentage) || has(self.targetMemoryUtilizationPercentage)",message="autoscaling must set targetCPUUtilizationPercentage, targetMemoryUtilizationPercentage or both"
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

	// behavior configures how fast the autoscaler scales up and down, as
	// in a HorizontalPodAutoscaler; unset fields take the
	// HorizontalPodAutoscaler's defaults. Stabilization windows are 0 to
	// 3600 seconds, policy periods 1 to 1800 seconds, policy values at
	// least 1 (see hack/crdpost).
	// +optional
	Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
}
