package main

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// How a failed sync is handled depends on what failed:
//   - a child of the same name that the DeployObject does not control, or a
//     child the API server rejects, blocks the DeployObject: Ready=False with a
//     reason, one Warning event. Rejected input waits for the spec to change;
//     a conflict is retried with backoff, as its end is not observable.
//   - a terminating namespace ends the work for that DeployObject.
//   - anything else is transient and retried with backoff.

// resourceConflictError: a child's name is taken by an object that the
// DeployObject does not control.
type resourceConflictError struct {
	kind, name string
}

func (e *resourceConflictError) Error() string {
	return fmt.Sprintf("%s %s exists and is not controlled by this DeployObject; it is left untouched", e.kind, e.name)
}

// blockingCondition is the Ready condition for an error that keeps the
// DeployObject from being reconciled until something else changes, or nil for
// an error worth retrying as it is.
func blockingCondition(err error) *metav1.Condition {
	var conflict *resourceConflictError
	switch {
	case errors.As(err, &conflict):
		c := notReady(appv1.ReasonResourceConflict, "%s", conflict.Error())
		return &c
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
		c := notReady(appv1.ReasonInvalidSpec, "the API server rejected a child built from the spec: %v", err)
		return &c
	}
	return nil
}

func isNamespaceTerminating(err error) bool {
	return apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
}

// isExpectedRetry reports whether err is an ordinary part of running next to
// other writers: a write based on a stale cache, or a name taken by a foreign
// object (already reported by event and condition).
func isExpectedRetry(err error) bool {
	var conflict *resourceConflictError
	return apierrors.IsConflict(err) || errors.As(err, &conflict)
}
