package v1

// ConditionReady is True when the Deployment has rolled out the current
// generation with every desired replica available and the Service matches the
// spec. Its reason is one of the Reason constants below.
const ConditionReady = "Ready"

// Reasons of the Ready condition; they are part of the API, so that tools can
// act on them.
const (
	// ReasonAvailable: the current generation is rolled out and available.
	ReasonAvailable = "Available"
	// ReasonProgressing: the Deployment is rolling out or scaling.
	ReasonProgressing = "Progressing"
	// ReasonProgressDeadlineExceeded: the Deployment reported that its rollout
	// is stuck.
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	// ReasonReplicaFailure: the Deployment cannot create or delete pods, for
	// example because Pod Security admission or a quota refuses them; the
	// message carries the Deployment's reason and message.
	ReasonReplicaFailure = "ReplicaFailure"
	// ReasonPaused: the Deployment is paused (`kubectl rollout pause`), so
	// changes to the pod template are not rolled out until it is resumed.
	ReasonPaused = "Paused"
	// ReasonResourceConflict: a Deployment or Service of the same name exists
	// and is not controlled by this DeployObject; it is left untouched.
	ReasonResourceConflict = "ResourceConflict"
	// ReasonInvalidSpec: the API server rejected a child built from the spec;
	// the spec must change before the controller tries again.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonQuotaExceeded: a ResourceQuota of the namespace refused a child.
	// The controller retries with backoff, as the quota may be raised.
	ReasonQuotaExceeded = "QuotaExceeded"
	// ReasonForbidden: the API server refused to write a child: RBAC, an
	// admission webhook or a ValidatingAdmissionPolicy. The controller
	// retries with backoff, as permissions and policies may change.
	ReasonForbidden = "Forbidden"
)
