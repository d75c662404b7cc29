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
	// ReasonResourceConflict: a Deployment or Service of the same name exists
	// and is not controlled by this DeployObject; it is left untouched.
	ReasonResourceConflict = "ResourceConflict"
	// ReasonInvalidSpec: the API server rejected a child built from the spec;
	// the spec must change before the controller tries again.
	ReasonInvalidSpec = "InvalidSpec"
)
