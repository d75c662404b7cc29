package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Canary makes a change of the pod template that the spec asks for
// (image, env, command, resources ...) reach the new pods step by step:
// a canary ReplicaSet of the new template runs beside the full stable
// Deployment, and its share of the traffic is raised by route weights
// (spec.route.parentRefs) or, with an Ingress or no route, approximated by
// its share of the pods. See docs/progressive-delivery.md.
//
// +kubebuilder:validation:XValidation:rule="self.steps.exists(s, has(s.setWeight))",message="steps must hold at least one setWeight step",fieldPath=".steps"
type Canary struct {
	// steps run in order; each sets exactly one of setWeight and pause.
	// After the last one the new revision is promoted.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Steps []CanaryStep `json:"steps"`

	// scaleDownDelaySeconds is how long pods stay after the traffic left
	// them (the Gateways accepted the route without them), so that
	// requests in flight finish. Default 30.
	// +optional
	// +kubebuilder:default=30
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	ScaleDownDelaySeconds *int32 `json:"scaleDownDelaySeconds,omitempty"`

	// autoAbort ends the canary, traffic back to the stable, when the new
	// revision fails. Unset, a step aborts after 600 seconds.
	// +optional
	AutoAbort *CanaryAutoAbort `json:"autoAbort,omitempty"`
}

// CanaryStep is one step of a canary.
//
// +kubebuilder:validation:XValidation:rule="has(self.setWeight) != has(self.pause)",message="a step sets exactly one of setWeight and pause"
type CanaryStep struct {
	// setWeight is the percentage of the traffic the new revision gets; the
	// step completes once its pods are available and every Gateway
	// accepted the weights.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	SetWeight *int32 `json:"setWeight,omitempty"`

	// pause waits for its duration or, without one, until the canary is
	// promoted (status.canary says how).
	// +optional
	Pause *CanaryPause `json:"pause,omitempty"`
}

// CanaryPause is a pause step.
type CanaryPause struct {
	// duration is how long the step waits, in the Gateway API's duration
	// format ("30s", "1h30m"), at most 24h.
	// +optional
	// +kubebuilder:validation:MaxLength=28
	// +kubebuilder:validation:Pattern=`^([0-9]{1,5}(h|m|s|ms)){1,4}$`
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('24h')",message="must be at most 24h"
	Duration *string `json:"duration,omitempty"`
}

// CanaryAutoAbort says when a canary aborts by itself. Each check runs
// before any traffic step.
type CanaryAutoAbort struct {
	// progressDeadlineSeconds bounds each setWeight step: its pods
	// available and, with a route, its weight accepted by every Gateway.
	// Default 600.
	// +optional
	// +kubebuilder:default=600
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`

	// maxRestarts aborts once the container restarts of the canary's pods,
	// summed, exceed it. Unset, restarts are not checked.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	MaxRestarts *int32 `json:"maxRestarts,omitempty"`

	// notReadySeconds aborts once a canary pod has not been Ready for this
	// long. Unset, readiness is not checked.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	NotReadySeconds *int32 `json:"notReadySeconds,omitempty"`
}

// CanaryMode is how the traffic is split.
// +kubebuilder:validation:Enum=Route;ReplicaRatio
type CanaryMode string

const (
	// CanaryModeRoute: route weights of the HTTPRoute or GRPCRoute.
	CanaryModeRoute CanaryMode = "Route"
	// CanaryModeReplicaRatio: the Service spreads requests over stable and
	// canary pods, so the share is approximately the canary's share of the
	// available pods.
	CanaryModeReplicaRatio CanaryMode = "ReplicaRatio"
)

// CanaryPhase is where a canary is.
// +kubebuilder:validation:Enum=Progressing;Paused;Promoting;Aborting;Aborted
type CanaryPhase string

const (
	CanaryProgressing CanaryPhase = "Progressing"
	CanaryPaused      CanaryPhase = "Paused"
	CanaryPromoting   CanaryPhase = "Promoting"
	CanaryAborting    CanaryPhase = "Aborting"
	CanaryAborted     CanaryPhase = "Aborted"
)

// CanaryStatus is the state of the canary under way.
type CanaryStatus struct {
	// id names this attempt of the canary (revision-attempt): the
	// operation annotations name it, so a stale one does nothing.
	// +required
	// +kubebuilder:validation:MaxLength=32
	ID string `json:"id"`

	// revision identifies the new pod template (the hash of what the spec
	// asks of it).
	// +required
	// +kubebuilder:validation:MaxLength=16
	Revision string `json:"revision"`

	// attempt counts the tries of this revision, from 1; a retry adds one.
	// +required
	// +kubebuilder:validation:Minimum=1
	Attempt int32 `json:"attempt"`

	// stableRevision is the pod-template-hash of the stable ReplicaSet,
	// which the stable Service selects during a canary in Route mode.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	StableRevision string `json:"stableRevision,omitempty"`

	// mode is how the traffic is split.
	// +required
	Mode CanaryMode `json:"mode"`

	// phase is Progressing, Paused, Promoting, Aborting or Aborted.
	// +required
	Phase CanaryPhase `json:"phase"`

	// step is the index of the current step in spec.canary.steps.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Step int32 `json:"step"`

	// stepStartTime is when the current step (or phase) began; the pause
	// and the progress deadline count from it, also after a restart.
	// +optional
	StepStartTime *metav1.Time `json:"stepStartTime,omitempty"`

	// trafficShiftTime is when the Gateways accepted the last change of
	// the weights; scaleDownDelaySeconds counts from it.
	// +optional
	TrafficShiftTime *metav1.Time `json:"trafficShiftTime,omitempty"`

	// desiredWeight is the percentage of the traffic the current step
	// gives the new revision.
	// +optional
	DesiredWeight int32 `json:"desiredWeight"`

	// observedWeight is the percentage the Gateways accepted (Route mode)
	// or the canary's share of the available pods (ReplicaRatio).
	// +optional
	ObservedWeight int32 `json:"observedWeight"`

	// replicas counts the canary's pods.
	// +optional
	Replicas int32 `json:"replicas"`

	// availableReplicas counts the canary's available pods.
	// +optional
	AvailableReplicas int32 `json:"availableReplicas"`

	// restarts is the highest sum of the container restarts of the
	// canary's pods seen in this attempt.
	// +optional
	Restarts int32 `json:"restarts"`

	// abortReason says why an Aborting or Aborted canary was aborted.
	// +optional
	AbortReason CanaryAbortReason `json:"abortReason,omitempty"`
}

// CanaryAbortReason says why a canary was aborted.
// +kubebuilder:validation:Enum=ProgressDeadline;Restarts;NotReady;Operator;Superseded;Reverted;CanaryRemoved
type CanaryAbortReason string

const (
	// AbortProgressDeadline: a step did not complete within
	// autoAbort.progressDeadlineSeconds.
	AbortProgressDeadline CanaryAbortReason = "ProgressDeadline"
	// AbortRestarts: the canary's pods restarted more than
	// autoAbort.maxRestarts times.
	AbortRestarts CanaryAbortReason = "Restarts"
	// AbortNotReady: a canary pod was not Ready for
	// autoAbort.notReadySeconds.
	AbortNotReady CanaryAbortReason = "NotReady"
	// AbortOperator: the canary-abort annotation named this canary.
	AbortOperator CanaryAbortReason = "Operator"
	// AbortSuperseded: the spec asks for another new revision, whose
	// canary starts once this one is gone.
	AbortSuperseded CanaryAbortReason = "Superseded"
	// AbortReverted: the spec asks for the stable revision again.
	AbortReverted CanaryAbortReason = "Reverted"
	// AbortCanaryRemoved: spec.canary was removed; the new revision then
	// rolls out as an ordinary rolling update.
	AbortCanaryRemoved CanaryAbortReason = "CanaryRemoved"
)
