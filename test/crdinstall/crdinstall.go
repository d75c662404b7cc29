// Package crdinstall installs CustomResourceDefinitions from YAML files and
// waits until the API server serves them. The local cluster (make run, via
// hack/install-crd), the end-to-end tests and the benchmark use it; the
// controller binary does not, so it lives beside the tests rather than under
// pkg/. In production, `kubectl apply --server-side -k deploy/` does the same
// job.
package crdinstall

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

const fieldManager = "deployobject-crdinstall"

// Install server-side applies every CRD in dir (*.yaml) and waits, until ctx
// ends, for each to be Established and its names accepted.
func Install(ctx context.Context, cfg *rest.Config, dir string) error {
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating apiextensions client: %w", err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return err
	}
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	installed := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var kind metav1.TypeMeta
		if err := yaml.Unmarshal(data, &kind); err != nil {
			return fmt.Errorf("decoding %s: %w", f, err)
		}
		if kind.Kind != "CustomResourceDefinition" {
			// Anything else beside the CRDs is skipped.
			continue
		}
		installed++
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(data, &crd); err != nil {
			return fmt.Errorf("decoding %s: %w", f, err)
		}
		body, err := yaml.YAMLToJSON(data)
		if err != nil {
			return fmt.Errorf("converting %s to JSON: %w", f, err)
		}
		force := true
		if _, err := crds.Patch(ctx, crd.Name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: fieldManager, Force: &force}); err != nil {
			return fmt.Errorf("applying CRD %s: %w", crd.Name, err)
		}
		err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			live, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
			if err != nil {
				// Not served yet or a passing error: retried until ctx ends.
				return false, nil
			}
			return established(live), nil
		})
		if err != nil {
			return fmt.Errorf("waiting for CRD %s to be Established: %w", crd.Name, err)
		}
	}
	if installed == 0 {
		return fmt.Errorf("no CustomResourceDefinition in %s", dir)
	}
	return nil
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	var est, names bool
	for _, c := range crd.Status.Conditions {
		switch c.Type {
		case apiextensionsv1.Established:
			est = c.Status == apiextensionsv1.ConditionTrue
		case apiextensionsv1.NamesAccepted:
			names = c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return est && names
}
