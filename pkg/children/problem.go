package children

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/identity"
)

// How a failed write of a child is handled depends on what failed:
//   - a problem that keeps the child from being made until something else
//     changes blocks the DeployObject: Ready=False with a reason saying what
//     it is, one Warning event per new problem, and the other children are
//     still brought in line. Input the API server rejects waits for the spec
//     to change; everything else (a foreign object holding the name, a quota,
//     RBAC, an admission policy) is retried with backoff, as its end is not
//     observable through the controller's caches.
//   - a terminating namespace ends the work for that DeployObject.
//   - anything else is transient and the sync is retried with backoff.

// ResourceConflictError: a child's name is taken by an object that the
// DeployObject does not control.
type ResourceConflictError struct {
	Kind, Name string
}

func (e *ResourceConflictError) Error() string {
	return fmt.Sprintf("%s %s exists and is not controlled by this DeployObject; it is left untouched", e.Kind, e.Name)
}

// PredecessorError: a child's name is held by the child of a deleted
// DeployObject of the same name (`kubectl delete --wait=false` and apply
// again, Argo CD's Replace=true), which the garbage collector has not
// removed yet. Nobody has to act: once it is gone the child is made, or
// adopted if it was orphaned.
type PredecessorError struct {
	Kind, Name string
	OwnerUID   types.UID
}

func (e *PredecessorError) Error() string {
	return fmt.Sprintf("%s %s still belongs to the deleted DeployObject of the same name (uid %s); waiting for the garbage collector to remove it", e.Kind, e.Name, e.OwnerUID)
}

// conflictOf is why live, which dobj does not control and may not adopt,
// keeps dobj's child of kind from being made.
func conflictOf(kind string, live metav1.Object, dobj *appv1.DeployObject) error {
	if ref := metav1.GetControllerOfNoCopy(live); ref != nil && ref.Kind == identity.DeployObjectKind.Kind &&
		ref.APIVersion == identity.DeployObjectKind.GroupVersion().String() && ref.Name == dobj.Name && ref.UID != dobj.UID {
		return &PredecessorError{Kind: kind, Name: live.GetName(), OwnerUID: ref.UID}
	}
	return &ResourceConflictError{Kind: kind, Name: live.GetName()}
}

// Problem is why one child could not be brought in line.
type Problem struct {
	// kind is the kind of the child.
	Kind string
	// Name is the child's name, when the error names it.
	Name string
	// reason is the Ready condition's reason for it.
	Reason  string
	Message string
	// retry: the problem can go away without a spec change.
	Retry bool
}

// ProblemOf classifies the error of syncing a child. It returns nil for an
// error that says nothing about the DeployObject (a server error, a stale
// cache, a terminating namespace).
func ProblemOf(err error) *Problem {
	p := problemOf(err)
	if p != nil {
		p.Name = childName(err)
	}
	return p
}

// childName is the name of the object err is about, when it says.
func childName(err error) string {
	var conflict *ResourceConflictError
	var predecessor *PredecessorError
	var status apierrors.APIStatus
	switch {
	case errors.As(err, &conflict):
		return conflict.Name
	case errors.As(err, &predecessor):
		return predecessor.Name
	case errors.As(err, &status) && status.Status().Details != nil:
		return status.Status().Details.Name
	}
	return ""
}

func problemOf(err error) *Problem {
	var conflict *ResourceConflictError
	var predecessor *PredecessorError
	var recreation *RecreationError
	switch {
	case errors.As(err, &conflict):
		return &Problem{Reason: appv1.ReasonResourceConflict, Message: conflict.Error(), Retry: true}
	case errors.As(err, &predecessor):
		return &Problem{Reason: appv1.ReasonProgressing, Message: predecessor.Error(), Retry: true}
	case errors.As(err, &recreation):
		return &Problem{Reason: appv1.ReasonProgressing, Message: recreation.Error(), Retry: true}
	case IsNamespaceTerminating(err) || isQuotaUnknown(err) || isClusterIPAllocationFailure(err):
		return nil
	case isQuotaExceeded(err):
		return &Problem{Reason: appv1.ReasonQuotaExceeded, Message: err.Error(), Retry: true}
	case apierrors.IsForbidden(err) || isAdmissionDenial(err):
		// A webhook that denies without a code answers 400, and a
		// ValidatingAdmissionPolicy 422: a policy refusal all the same,
		// which may change, unlike invalid input.
		return &Problem{Reason: appv1.ReasonForbidden, Message: err.Error(), Retry: true}
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
		return &Problem{Reason: appv1.ReasonInvalidSpec, Message: "the API server rejected a child built from the spec: " + err.Error()}
	}
	return nil
}

// BlockedError ends a sync whose children are blocked by problems that may
// go away by themselves, so that the key is retried with backoff. The
// problems are already reported in the status.
type BlockedError struct {
	Problems []Problem
}

func (e *BlockedError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Reason + ": " + p.Message
	}
	return "blocked: " + strings.Join(msgs, "; ")
}

// IsResourceNotServed reports whether err says that the API server does
// not serve the resource at all (a 404 naming no object), as for a custom
// resource whose CRD was removed, rather than that one object is missing.
func IsResourceNotServed(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d == nil || d.Name == ""
}

// IsNamespaceTerminating reports whether err refused a create in a
// namespace that is being deleted.
func IsNamespaceTerminating(err error) bool {
	return apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
}

// The ResourceQuota admission plugin refuses with 403 and one of these
// messages (k8s.io/apiserver's resourcequota controller).
var quotaRefusals = []string{"exceeded quota: ", "failed quota: ", "insufficient quota to "}

func isQuotaExceeded(err error) bool {
	if !apierrors.IsForbidden(err) {
		return false
	}
	for _, s := range quotaRefusals {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}

// isQuotaUnknown: the quota controller has not yet counted the usage of a
// new quota; the next try will know.
func isQuotaUnknown(err error) bool {
	return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "status unknown for quota: ")
}

// isClusterIPAllocationFailure: the API server could not allocate a Service's
// cluster IP for a reason other than a full range (which answers 500), for
// example while its own loopback client is not yet up after a restart. It
// answers 422 on spec.clusterIPs, but a DeployObject never asks for an IP,
// so the spec is not at fault and the next try may succeed.
func isClusterIPAllocationFailure(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	causes := status.Status().Details.Causes
	for _, c := range causes {
		if c.Field != "spec.clusterIPs" {
			return false
		}
	}
	return len(causes) > 0
}

// isAdmissionDenial reports a refusal by an admission webhook or a
// ValidatingAdmissionPolicy, whatever code it came with.
func isAdmissionDenial(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	msg := status.Status().Message
	return (strings.Contains(msg, "admission webhook ") && strings.Contains(msg, " denied the request")) ||
		(strings.Contains(msg, "ValidatingAdmissionPolicy '") && strings.Contains(msg, " denied request: "))
}

// IsExpectedRetry reports whether err is an ordinary part of running next to
// other writers: a write based on a stale cache, or children blocked by a
// problem already reported by event and condition.
func IsExpectedRetry(err error) bool {
	var blocked *BlockedError
	return apierrors.IsConflict(err) || errors.As(err, &blocked)
}
