package children_test

import (
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
)

// The errors below are built as the API server builds them (k8s.io/apiserver
// and kube-apiserver's registries), wrapped as the sync wraps them.
func TestProblemOf(t *testing.T) {
	services := schema.GroupKind{Kind: "Service"}
	deployments := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	terminating := apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "web", errors.New("unable to create new content in namespace ns because it is being terminated"))
	terminating.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause, Message: "namespace ns is being terminated", Field: "metadata.namespace"}}
	tests := []struct {
		name   string
		err    error
		reason string // "" for no problem
		retry  bool
	}{
		{"foreign object", &children.ResourceConflictError{Kind: "Service", Name: "web"}, appv1.ReasonResourceConflict, true},
		{"child of a deleted DeployObject of the same name", &children.PredecessorError{Kind: "Deployment", Name: "web", OwnerUID: "old"}, appv1.ReasonProgressing, true},
		{"terminating namespace", terminating, "", false},
		{"quota not yet counted", apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "web", errors.New("status unknown for quota: q, resources: services")), "", false},
		{"quota exceeded", apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "web", errors.New("exceeded quota: q, requested: services=1, used: services=1, limited: services=1")), appv1.ReasonQuotaExceeded, true},
		{"RBAC", apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "web", errors.New(`User "x" cannot create resource "services"`)), appv1.ReasonForbidden, true},
		{"webhook without a code", apierrors.NewBadRequest(`admission webhook "policy.example.com" denied the request: no`), appv1.ReasonForbidden, true},
		{"invalid port name", apierrors.NewInvalid(services, "web", field.ErrorList{field.Invalid(field.NewPath("spec", "ports").Index(0).Child("name"), "A", "must be lower case")}), appv1.ReasonInvalidSpec, false},
		{"invalid replicas", apierrors.NewInvalid(deployments, "web", field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), -1, "must be >= 0")}), appv1.ReasonInvalidSpec, false},
		// kube-apiserver's allocator could not reach its own API while it
		// started (seen in TestAPIServerRestart): the spec asked for no IP.
		{"cluster IP allocation failed", apierrors.NewInvalid(services, "web", field.ErrorList{field.Invalid(field.NewPath("spec", "clusterIPs"), []string{""}, `failed to allocate IP: Post "https://[::1]:6443/apis/networking.k8s.io/v1/ipaddresses": connect: connection refused`)}), "", false},
		{"cluster IP and another field", apierrors.NewInvalid(services, "web", field.ErrorList{
			field.Invalid(field.NewPath("spec", "clusterIPs"), []string{""}, "failed to allocate IP"),
			field.Invalid(field.NewPath("spec", "ports").Index(0).Child("name"), "A", "must be lower case"),
		}), appv1.ReasonInvalidSpec, false},
		{"invalid, naming no field", apierrors.NewInvalid(services, "web", nil), appv1.ReasonInvalidSpec, false},
		{"server error", apierrors.NewInternalError(errors.New("etcd timeout")), "", false},
		{"conflict", apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web", errors.New("modified")), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := children.ProblemOf(fmt.Errorf("creating Service web: %w", tt.err))
			switch {
			case tt.reason == "" && p != nil:
				t.Fatalf("got problem %+v, want none (retried with backoff)", *p)
			case tt.reason == "":
			case p == nil:
				t.Fatalf("got no problem, want %s", tt.reason)
			case p.Reason != tt.reason || p.Retry != tt.retry:
				t.Fatalf("got %s (retry %v), want %s (retry %v)", p.Reason, p.Retry, tt.reason, tt.retry)
			}
		})
	}
}

func TestIsResourceNotServed(t *testing.T) {
	routes := schema.GroupResource{Group: "gateway.networking.k8s.io", Resource: "httproutes"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		// What kube-apiserver answers for a resource it does not serve.
		{"no such resource", apierrors.NewNotFound(schema.GroupResource{}, ""), true},
		{"no such object", apierrors.NewNotFound(routes, "web"), false},
		{"another error", apierrors.NewInternalError(errors.New("x")), false},
		{"no error", nil, false},
	} {
		if got := children.IsResourceNotServed(fmt.Errorf("creating HTTPRoute web: %w", tc.err)); tc.err != nil && got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		if tc.err == nil && children.IsResourceNotServed(nil) {
			t.Errorf("%s: true for nil", tc.name)
		}
	}
}
