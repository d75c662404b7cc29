//go:build e2e

package e2e

import (
	"strconv"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/test/cases"
)

// serverMinor is the API server's Kubernetes minor version.
func serverMinor(t *testing.T) int {
	t.Helper()
	v, err := env.kube.Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("the API server's version: %v", err)
	}
	minor, err := strconv.Atoi(strings.TrimSuffix(v.Minor, "+"))
	if err != nil {
		t.Fatalf("the API server's minor version %q: %v", v.Minor, err)
	}
	return minor
}

// TestEdgeCasesAreAccepted sends the table of valid values close to a
// rule's edge to the real API server, with strict field validation so that
// a field the CRD does not know fails instead of being dropped. What the
// CRD accepts must make a Deployment the Pod API accepts too, under either
// pod security profile, and a Service, an Ingress, a NetworkPolicy and a
// HorizontalPodAutoscaler their APIs accept:
// else admission passed what the sync can only report as InvalidSpec.
func TestEdgeCasesAreAccepted(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	res := env.dynamic.Resource(appv1.SchemeGroupVersion.WithResource("deployobjects")).Namespace(ns)
	rows := append([]cases.Accepted{{Name: "valid", Mutate: func(map[string]any) {}}}, cases.AcceptedTable()...)
	minor := serverMinor(t)
	for _, tc := range rows {
		t.Run(tc.Name, func(t *testing.T) {
			obj := cases.Valid("web")
			tc.Mutate(obj)
			opts := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict}
			admitted, err := res.Create(ctx, &unstructured.Unstructured{Object: obj}, opts)
			if err != nil {
				t.Fatalf("rejected: %v", err)
			}
			var dobj appv1.DeployObject
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(admitted.Object, &dobj); err != nil {
				t.Fatal(err)
			}
			for _, profile := range []children.PodSecurityProfile{children.ProfileNone, children.ProfileRestricted} {
				d := children.DesiredDeployment(&dobj, profile)
				d.Namespace = ns
				_, err := env.kube.AppsV1().Deployments(ns).Create(ctx, d, opts)
				switch needs := cases.MinMinor[tc.Name]; {
				case minor < needs && !apierrors.IsInvalid(err):
					t.Errorf("Kubernetes 1.%d, older than the 1.%d this value needs: its Deployment (profile %s) is not refused as invalid, as docs/installing.md says: %v", minor, needs, profile, err)
				case minor >= needs && err != nil:
					t.Errorf("admitted, but its Deployment (profile %s) is refused: %v", profile, err)
				}
			}
			if svc := children.DesiredService(&dobj); svc != nil {
				svc.Namespace = ns
				if _, err := env.kube.CoreV1().Services(ns).Create(ctx, svc, opts); err != nil {
					t.Errorf("admitted, but its Service is refused: %v", err)
				}
			}
			if ing := children.DesiredIngress(&dobj); ing != nil {
				ing.Namespace = ns
				if _, err := env.kube.NetworkingV1().Ingresses(ns).Create(ctx, ing, opts); err != nil {
					t.Errorf("admitted, but its Ingress is refused: %v", err)
				}
			}
			if cm := children.DesiredFilesConfigMap(&dobj); cm != nil {
				cm.Namespace = ns
				if _, err := env.kube.CoreV1().ConfigMaps(ns).Create(ctx, cm, opts); err != nil {
					t.Errorf("admitted, but its ConfigMap of files is refused: %v", err)
				}
			}
			if sa := children.DesiredServiceAccount(&dobj); sa != nil {
				sa.Namespace = ns
				if _, err := env.kube.CoreV1().ServiceAccounts(ns).Create(ctx, sa, opts); err != nil {
					t.Errorf("admitted, but its ServiceAccount is refused: %v", err)
				}
			}
			hpa, err := children.DesiredHPA(&dobj)
			if err != nil {
				t.Fatal(err)
			}
			if hpa != nil {
				hpa.Namespace = ns
				if _, err := env.kube.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, hpa, opts); err != nil {
					t.Errorf("admitted, but its HorizontalPodAutoscaler is refused: %v", err)
				}
			}
			if policy := children.DesiredNetworkPolicy(&dobj); policy != nil {
				policy.Namespace = ns
				if _, err := env.kube.NetworkingV1().NetworkPolicies(ns).Create(ctx, policy, opts); err != nil {
					t.Errorf("admitted, but its NetworkPolicy is refused: %v", err)
				}
			}
		})
	}
}
