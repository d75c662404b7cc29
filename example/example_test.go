package example_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// TestExamplesDecodeStrictly catches examples that drift from the API: an
// unknown or misspelt field fails strict decoding.
func TestExamplesDecodeStrictly(t *testing.T) {
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) < 2 {
		t.Fatalf("want at least two examples, found %v (%v)", files, err)
	}
	found := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			if !strings.Contains(doc, "kind: DeployObject") {
				continue
			}
			var d appv1.DeployObject
			if err := yaml.UnmarshalStrict([]byte(doc), &d); err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			if d.Spec.Image == "" {
				t.Errorf("%s: no image", f)
			}
			found++
		}
	}
	if found < 2 {
		t.Errorf("found %d DeployObjects in the examples, want at least 2", found)
	}
}
