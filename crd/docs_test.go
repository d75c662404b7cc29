package crd_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// docsWithExamples are the manual pages whose DeployObject examples must
// be valid, with the fewest each must hold, so that an example whose kind
// was mistyped (and so skipped) does not go unnoticed.
var docsWithExamples = map[string]int{
	"networking.md":              10,
	"identity.md":                5,
	"autoscaling.md":             6,
	"files.md":                   2,
	"monitoring-applications.md": 3,
}

// TestDocsExamples: every DeployObject in a ```yaml block of the manual
// pages above is one the API server accepts as it is: no field the schema
// does not know (which the API server would drop, or refuse with kubectl's
// strict field validation), and every OpenAPI and CEL rule holds.
func TestDocsExamples(t *testing.T) {
	_, s := loadCRD(t)
	for doc, least := range docsWithExamples {
		t.Run(doc, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "docs", doc))
			if err != nil {
				t.Fatal(err)
			}
			found := 0
			for _, b := range yamlBlocks(data) {
				for _, d := range b.docs {
					where := fmt.Sprintf("docs/%s:%d", doc, d.line)
					obj, err := decodeYAML([]byte(d.text))
					if err != nil {
						t.Errorf("%s: %v", where, err)
						continue
					}
					if obj == nil || obj["kind"] != "DeployObject" {
						continue
					}
					found++
					if obj["apiVersion"] != "app.deployobject.dev/v1" {
						t.Errorf("%s: apiVersion %v, want app.deployobject.dev/v1", where, obj["apiVersion"])
					}
					if unknown := s.unknownFields(obj); len(unknown) > 0 {
						t.Errorf("%s: unknown fields %s", where, strings.Join(unknown, ", "))
					}
					if errs := s.validate(obj); len(errs) > 0 {
						t.Errorf("%s: rejected: %v", where, errs.ToAggregate())
					}
				}
			}
			if found < least {
				t.Errorf("docs/%s holds %d DeployObject examples in ```yaml blocks, want at least %d", doc, found, least)
			}
		})
	}
}

// yamlDoc is one YAML document of a fenced block, and the line of the
// page it starts on: the opening fence's for the first document, the
// "---" separator's for the others.
type yamlDoc struct {
	line int
	text string
}

// yamlBlock is a ```yaml fenced block of a Markdown page, without its
// fences and their indentation, split into documents.
type yamlBlock struct {
	docs []yamlDoc
}

// yamlBlocks are the ```yaml fenced blocks of a Markdown page, including
// those indented in a list item.
func yamlBlocks(page []byte) []yamlBlock {
	var blocks []yamlBlock
	var cur *yamlBlock
	indent := ""
	for i, line := range strings.Split(string(page), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case cur == nil && trimmed == "```yaml":
			cur = &yamlBlock{docs: []yamlDoc{{line: i + 1}}}
			indent = line[:len(line)-len(trimmed)]
		case cur != nil && strings.TrimSpace(line) == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil && strings.TrimRight(strings.TrimPrefix(line, indent), " ") == "---":
			cur.docs = append(cur.docs, yamlDoc{line: i + 1})
		case cur != nil:
			d := &cur.docs[len(cur.docs)-1]
			d.text += strings.TrimPrefix(line, indent) + "\n"
		}
	}
	return blocks
}

// decodeYAML decodes one YAML document as the API server decodes JSON:
// integers as int64, which the schema's integer types and CEL expect.
// Duplicate keys are an error. An empty document is nil.
func decodeYAML(doc []byte) (map[string]any, error) {
	asJSON, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(asJSON, &obj); err != nil {
		return nil, err
	}
	return obj, nil
}
