//go:build e2e

package e2e

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/test/cases"
)

// TestEdgeCasesAreAccepted sends the table of valid values close to a
// rule's edge to the real API server, with strict field validation so that
// a field the CRD does not know fails instead of being dropped.
func TestEdgeCasesAreAccepted(t *testing.T) {
	ns := newNamespace(t)
	res := env.dynamic.Resource(appv1.SchemeGroupVersion.WithResource("deployobjects")).Namespace(ns)
	for _, tc := range cases.AcceptedTable() {
		t.Run(tc.Name, func(t *testing.T) {
			obj := cases.Valid("web")
			tc.Mutate(obj)
			opts := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict}
			if _, err := res.Create(ctx, &unstructured.Unstructured{Object: obj}, opts); err != nil {
				t.Fatalf("rejected: %v", err)
			}
		})
	}
}
