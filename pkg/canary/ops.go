package canary

import (
	"strconv"
	"strings"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// Ops are the values of the operation annotations on the DeployObject
// (appv1.AnnotationCanaryPromote and the others), "" when absent. Each
// names the canary it acts on; a value naming another canary, an earlier
// step, or malformed, matches nothing, so that an annotation a GitOps tool
// applies again does nothing once acted on.
type Ops struct {
	Promote, PromoteFull, Abort, Retry string
}

// OpsFrom reads the operations from the DeployObject's annotations.
func OpsFrom(annotations map[string]string) Ops {
	return Ops{
		Promote:     strings.TrimSpace(annotations[appv1.AnnotationCanaryPromote]),
		PromoteFull: strings.TrimSpace(annotations[appv1.AnnotationCanaryPromoteFull]),
		Abort:       strings.TrimSpace(annotations[appv1.AnnotationCanaryAbort]),
		Retry:       strings.TrimSpace(annotations[appv1.AnnotationCanaryRetry]),
	}
}

// promotes reports whether the promote value names step step of canary id.
func (o Ops) promotes(id string, step int32) bool {
	return o.Promote == PromoteValue(id, step)
}

// PromoteValue is the value of the promote annotation that ends step step
// of canary id.
func PromoteValue(id string, step int32) string {
	return id + "/" + strconv.Itoa(int(step))
}
