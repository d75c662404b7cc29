package v1

// Labels and names the controller puts on the children of a DeployObject.
// They are part of the API: tools select the children and pods by them.
const (
	// LabelManagedBy, set to ManagedByController, marks every child and pod
	// template the controller made; it watches only children carrying it.
	LabelManagedBy      = "app.kubernetes.io/managed-by"
	ManagedByController = "deployobject-controller"

	// LabelName, set to the DeployObject's name, selects its pods.
	LabelName = "app.deployobject.dev/name"

	// LabelFiles, set to "true", marks the ConfigMaps holding the inline
	// content of spec.files: the only ConfigMaps the controller makes, and
	// deletes once superseded.
	LabelFiles = "app.deployobject.dev/files"

	// AnnotationDeploymentHash on the Deployment holds the hash of the
	// Deployment the controller last created or applied, as
	// status.deploymentHash does; it lets a DeployObject that adopts an
	// orphaned Deployment tell whether that Deployment is already in line.
	AnnotationDeploymentHash = "app.deployobject.dev/deployment-hash"

	// AnnotationPodSpecHash on the Deployment holds the hash of what the
	// DeployObject's spec asked of the pod template when the controller
	// last applied it. A pod template change while it stays the same was
	// not asked for by the user (new configuration, the controller's pod
	// security profile or version) and waits for its turn under
	// --max-concurrent-config-rollouts.
	AnnotationPodSpecHash = "app.deployobject.dev/pod-spec-hash"

	// AnnotationTemplateHash on the Deployment holds the hash of the pod
	// template the controller last applied. A live template that differs
	// from the desired one while both hashes are unchanged was changed by
	// someone else: drift, corrected at once.
	AnnotationTemplateHash = "app.deployobject.dev/template-hash"

	// AnnotationLimitedRollout on the Deployment marks a pod template
	// written by a rollout under --max-concurrent-config-rollouts; a
	// controller that starts while that rollout is still going counts it
	// against the limit.
	AnnotationLimitedRollout = "app.deployobject.dev/limited-rollout"

	// AnnotationConfigHash on the pod template holds a hash of the data of
	// the ConfigMaps and Secrets the pods consume (the keys they use, or
	// whether an optional one exists), as status.configHash does: a change
	// of that data changes the template and so rolls the pods, while a
	// change of a key no pod uses changes nothing.
	AnnotationConfigHash = "app.deployobject.dev/config-hash"

	// AnnotationAutoscalerHash on the HorizontalPodAutoscaler holds the
	// hash of the spec the controller last wrote to it. The API server fills
	// defaults into a scaling behavior, so a field the DeployObject stops
	// setting cannot be told from a default by comparing; the hash tells
	// that the spec changed.
	AnnotationAutoscalerHash = "app.deployobject.dev/autoscaler-hash"

	// LabelCanary on the canary ReplicaSet (not on its pods) holds the
	// canary's id (status.canary.id); the controller watches only the
	// ReplicaSets carrying it.
	LabelCanary = "app.deployobject.dev/canary"
	// The canary operations: annotations on the DeployObject whose value
	// names the canary they act on (status.canary.id; for promote also the
	// step, "ID/STEP"). The controller acts on each value once and never
	// removes the annotation, so a value a GitOps tool applies again, or
	// one naming an earlier canary, does nothing.
	//
	// AnnotationCanaryPromote ends the paused step STEP of canary ID.
	AnnotationCanaryPromote = "app.deployobject.dev/canary-promote"
	// AnnotationCanaryPromoteFull promotes canary ID at once, skipping the
	// remaining steps.
	AnnotationCanaryPromoteFull = "app.deployobject.dev/canary-promote-full"
	// AnnotationCanaryAbort aborts canary ID: all traffic back to the
	// stable revision, then the canary's pods removed.
	AnnotationCanaryAbort = "app.deployobject.dev/canary-abort"
	// AnnotationCanaryRetry starts aborted canary ID again as a new
	// attempt, from the first step.
	AnnotationCanaryRetry = "app.deployobject.dev/canary-retry"
	// ContainerName is the container the controller owns in the pod template.
	ContainerName = "app"
)

// AnnotationOwnedMetadata on a Service, ServiceAccount, Ingress, HTTPRoute,
// GRPCRoute, NetworkPolicy, ServiceMonitor or PodMonitor records the label
// and annotation keys the controller set on it from the spec's
// service.metadata, serviceAccount.metadata, route.metadata,
// networkPolicy.metadata or monitoring.metadata ("l:" or "a:" before each
// key), and on a Service
// the spec.service fields it set and the ports whose appProtocol it set
// ("s:" before each, a port as "ports[NAME].appProtocol"), sorted,
// comma-separated: a key or field the spec drops is removed, every other
// one is someone else's and kept.
const AnnotationOwnedMetadata = "app.deployobject.dev/owned-metadata"

// AnnotationRouteHash on an HTTPRoute or GRPCRoute holds the hash of the spec the
// controller last wrote to it. The Gateway API CRDs fill defaults into an
// HTTPRoute (parent and backend kinds and groups, weights, match types),
// so, as for the HorizontalPodAutoscaler, a field the DeployObject stops
// setting is told from a default by the hash.
const AnnotationRouteHash = "app.deployobject.dev/route-hash"

// AnnotationMonitorHash on a ServiceMonitor or PodMonitor holds the hash of
// the spec the controller last wrote to it. prometheus-operator's CRDs may
// default fields of a monitor in a later release, so, as for the
// HorizontalPodAutoscaler, a field the DeployObject stops setting is told
// from a default by the hash.
const AnnotationMonitorHash = "app.deployobject.dev/monitor-hash"
