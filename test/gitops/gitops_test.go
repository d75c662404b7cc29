package gitops

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// checkDir holds the Argo CD health check, in the layout of Argo CD's
// resource_customizations.
const checkDir = "../../deploy/argocd/resource_customizations/app.deployobject.dev/DeployObject"

// healthStatus is what an Argo CD health check returns.
type healthStatus struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// healthTests is health_test.yaml.
type healthTests struct {
	Tests []struct {
		HealthStatus healthStatus `json:"healthStatus"`
		InputPath    string       `json:"inputPath"`
	} `json:"tests"`
}

func loadObject(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Through JSON, as the API server serves it: integers stay int64.
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(js); err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	return obj
}

// fixtures are the names of the files in testdata/.
func fixtures(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(checkDir, "testdata", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in %s/testdata (%v)", checkDir, err)
	}
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = strings.TrimSuffix(filepath.Base(p), ".yaml")
	}
	return names
}

// runHealthCheck runs health.lua on obj the way Argo CD runs a check from
// argocd-cm without useOpenLibs: only the base, package and table libraries
// are open, and obj is a Lua table built from the object's JSON form.
func runHealthCheck(t *testing.T, obj *unstructured.Unstructured) healthStatus {
	t.Helper()
	script, err := os.ReadFile(filepath.Join(checkDir, "health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for name, open := range map[string]lua.LGFunction{lua.BaseLibName: lua.OpenBase, lua.LoadLibName: lua.OpenPackage, lua.TabLibName: lua.OpenTable} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(open), Protect: true}, lua.LString(name)); err != nil {
			t.Fatalf("opening Lua library %q: %v", name, err)
		}
	}
	l.SetGlobal("obj", luaValue(l, obj.Object))
	if err := l.DoString(string(script)); err != nil {
		t.Fatalf("health.lua: %v", err)
	}
	ret, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("health.lua returned %s, want a table", l.Get(-1).Type())
	}
	return healthStatus{Status: lua.LVAsString(ret.RawGetString("status")), Message: lua.LVAsString(ret.RawGetString("message"))}
}

// luaValue is v, a value of an object's JSON form, as a Lua value.
func luaValue(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		tbl := l.CreateTable(0, len(v))
		for k, item := range v {
			tbl.RawSetString(k, luaValue(l, item))
		}
		return tbl
	case []any:
		arr := l.CreateTable(len(v), 0)
		for _, item := range v {
			arr.Append(luaValue(l, item))
		}
		return arr
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case int64:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	}
	return lua.LNil
}

// TestArgoCDHealthCheck runs health_test.yaml as Argo CD's tests of its
// built-in checks do, and requires it to cover every fixture.
func TestArgoCDHealthCheck(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(checkDir, "health_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tests healthTests
	if err := yaml.UnmarshalStrict(raw, &tests); err != nil {
		t.Fatalf("decoding health_test.yaml: %v", err)
	}
	var covered []string
	for _, tc := range tests.Tests {
		t.Run(tc.InputPath, func(t *testing.T) {
			got := runHealthCheck(t, loadObject(t, filepath.Join(checkDir, tc.InputPath)))
			if got != tc.HealthStatus {
				t.Errorf("health = %+v, want %+v", got, tc.HealthStatus)
			}
		})
		covered = append(covered, strings.TrimSuffix(filepath.Base(tc.InputPath), ".yaml"))
	}
	for _, f := range fixtures(t) {
		if !slices.Contains(covered, f) {
			t.Errorf("health_test.yaml has no test of testdata/%s.yaml", f)
		}
	}
}

// kstatusWant is what Flux's status library must make of each fixture:
// Current when Ready, InProgress while the rollout goes on (paused
// included, as kstatus says of a paused Deployment), Failed when someone
// must act.
var kstatusWant = map[string]status.Status{
	"healthy-minimal":   status.CurrentStatus,
	"healthy-full":      status.CurrentStatus,
	"progressing":       status.InProgressStatus,
	"paused":            status.InProgressStatus,
	"invalid-spec":      status.FailedStatus,
	"resource-conflict": status.FailedStatus,
	"replica-failure":   status.FailedStatus,
	// A canary goes on, waits for someone to promote it (InProgress, as a
	// paused rollout), or is aborted until someone retries it or changes
	// the spec.
	"canary-progressing": status.InProgressStatus,
	"canary-paused":      status.InProgressStatus,
	"canary-aborted":     status.FailedStatus,
}

// TestKstatus computes the status of each fixture as Flux's health
// assessment and `flux` do; a Failed one carries the Stalled message.
func TestKstatus(t *testing.T) {
	for _, f := range fixtures(t) {
		t.Run(f, func(t *testing.T) {
			want, ok := kstatusWant[f]
			if !ok {
				t.Fatalf("no expected kstatus for testdata/%s.yaml", f)
			}
			obj := loadObject(t, filepath.Join(checkDir, "testdata", f+".yaml"))
			res, err := status.Compute(obj)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != want {
				t.Errorf("kstatus = %s (%s), want %s", res.Status, res.Message, want)
			}
			if want == status.FailedStatus && res.Message != stalledMessage(t, obj) {
				t.Errorf("kstatus message %q, want the Stalled condition's", res.Message)
			}
		})
	}
}

func stalledMessage(t *testing.T, obj *unstructured.Unstructured) string {
	t.Helper()
	conds, _, err := unstructured.NestedSlice(obj.Object, "status", "conditions")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Stalled" {
			return fmt.Sprint(m["message"])
		}
	}
	t.Fatal("no Stalled condition")
	return ""
}

// TestNewGenerationIsProgressing: right after a spec change, before the
// controller has observed it, the conditions describe the old spec and
// neither tool may trust them.
func TestNewGenerationIsProgressing(t *testing.T) {
	for _, f := range fixtures(t) {
		t.Run(f, func(t *testing.T) {
			obj := loadObject(t, filepath.Join(checkDir, "testdata", f+".yaml"))
			obj.SetGeneration(obj.GetGeneration() + 1)
			if got := runHealthCheck(t, obj).Status; got != "Progressing" {
				t.Errorf("Argo CD health = %s, want Progressing", got)
			}
			res, err := status.Compute(obj)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != status.InProgressStatus {
				t.Errorf("kstatus = %s, want InProgress", res.Status)
			}
		})
	}
}

// TestNotYetSynced: a DeployObject the controller has not synced yet has
// the status the CRD defaults (observedGeneration 0), or none where an older
// CRD is installed.
func TestNotYetSynced(t *testing.T) {
	obj := loadObject(t, filepath.Join(checkDir, "testdata", "healthy-minimal.yaml"))
	if err := unstructured.SetNestedMap(obj.Object, map[string]any{"observedGeneration": int64(0)}, "status"); err != nil {
		t.Fatal(err)
	}
	if got := runHealthCheck(t, obj).Status; got != "Progressing" {
		t.Errorf("defaulted status: Argo CD health = %s, want Progressing", got)
	}
	res, err := status.Compute(obj)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != status.InProgressStatus {
		t.Errorf("defaulted status: kstatus = %s, want InProgress", res.Status)
	}
	unstructured.RemoveNestedField(obj.Object, "status")
	if got := runHealthCheck(t, obj).Status; got != "Progressing" {
		t.Errorf("no status: Argo CD health = %s, want Progressing", got)
	}
}

// TestDocsSnippetIsTheHealthCheck: the argocd-cm snippet in docs/gitops.md is
// health.lua, so that what users copy is what is tested.
func TestDocsSnippetIsTheHealthCheck(t *testing.T) {
	const key = "  resource.customizations.health.app.deployobject.dev_DeployObject: |\n"
	const indent = "    "
	doc, err := os.ReadFile("../../docs/gitops.md")
	if err != nil {
		t.Fatal(err)
	}
	_, snippet, found := strings.Cut(string(doc), key)
	if !found {
		t.Fatalf("docs/gitops.md has no %q", strings.TrimSpace(key))
	}
	var lines []string
	for line := range strings.Lines(snippet) {
		if !strings.HasPrefix(line, indent) && line != "\n" {
			break
		}
		lines = append(lines, strings.TrimPrefix(line, indent))
	}
	script, err := os.ReadFile(filepath.Join(checkDir, "health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(lines, ""); got != string(script) {
		t.Errorf("the argocd-cm snippet in docs/gitops.md differs from health.lua:\n%s", got)
	}
}
