package monitoring

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// docBlock returns the fenced code block of doc, the text of page, whose
// first line is first.
func docBlock(t *testing.T, page, doc, first string) string {
	t.Helper()
	_, after, ok := strings.Cut(doc, "```yaml\n"+first+"\n")
	if !ok {
		t.Fatalf("%s has no yaml block beginning %q", page, first)
	}
	block, _, ok := strings.Cut(after, "\n```\n")
	if !ok {
		t.Fatalf("%s: the block beginning %q does not end", page, first)
	}
	return first + "\n" + block + "\n"
}

// docDir writes files, by name, into a directory next to a link named
// deployobject-controller to this repository, as the docs' kustomizations
// have it, and returns the directory.
func docDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(repo, filepath.Join(dir, "deployobject-controller")); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestRunbookLinks builds the two files of "Runbook links" in
// docs/monitoring.md as they stand there, next to a link named
// deployobject-controller to this repository, as the page has them. Every
// alert's runbook_url must become the page's address from runbooks.yaml
// followed by the anchor the component gives it, and the local-config
// ConfigMap must stay out of what is applied.
func TestRunbookLinks(t *testing.T) {
	raw, err := os.ReadFile(runbooks)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	kustomization := docBlock(t, runbookPage, doc, "# kustomization.yaml: the monitoring component with runbook links")
	runbooksFile := docBlock(t, runbookPage, doc, "# runbooks.yaml: read by kustomize only (local-config), never applied")
	var cm object
	if err := yaml.Unmarshal([]byte(runbooksFile), &cm); err != nil {
		t.Fatal(err)
	}
	url := cm.Data["url"]
	if url == "" {
		t.Fatal("runbooks.yaml in docs/monitoring.md has no data.url")
	}

	objs := kustomize(t, docDir(t, map[string]string{"kustomization.yaml": kustomization, "runbooks.yaml": runbooksFile}))
	for _, o := range objs {
		if o.Kind == cm.Kind && o.Metadata.Name == cm.Metadata.Name {
			t.Errorf("the build holds %s %s, which is only for kustomize", o.Kind, o.Metadata.Name)
		}
	}

	var source, built struct {
		Spec struct {
			Groups []struct {
				Rules []struct {
					Alert       string            `json:"alert"`
					Annotations map[string]string `json:"annotations"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	loadComponentFile(t, "prometheusrule.yaml", &source)
	spec(t, find(t, objs, "PrometheusRule", "deployobject-controller"), &built.Spec)
	want := map[string]string{}
	for _, g := range source.Spec.Groups {
		for _, r := range g.Rules {
			_, anchor, _ := strings.Cut(r.Annotations["runbook_url"], "#")
			want[r.Alert] = url + "#" + anchor
		}
	}
	got := map[string]string{}
	for _, g := range built.Spec.Groups {
		for _, r := range g.Rules {
			got[r.Alert] = r.Annotations["runbook_url"]
		}
	}
	if len(want) == 0 {
		t.Fatal("the component's PrometheusRule has no alert")
	}
	for alert, w := range want {
		if got[alert] != w {
			t.Errorf("alert %s: runbook_url %q, want %q", alert, got[alert], w)
		}
	}
}
