package monitoring

import (
	"encoding/json"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"
)

const (
	component   = "../../deploy/components/monitoring"
	metricNames = component + "/testdata/metric-names.txt"
	runbooks    = "../../docs/monitoring.md"
)

func loadFixture(t *testing.T) exported {
	t.Helper()
	m, err := loadExported(metricNames)
	if err != nil {
		t.Fatalf("%v (TestMonitoringMetricNames in test/e2e writes it with E2E_UPDATE_FIXTURES=1)", err)
	}
	return m
}

// loadComponentFile decodes the component's file name, YAML or JSON, into
// into.
func loadComponentFile(t *testing.T, name string, into any) {
	t.Helper()
	raw, err := os.ReadFile(component + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// checkExpr fails t when expr does not parse or uses what the controller
// does not export.
func checkExpr(t *testing.T, m exported, where, expr string) {
	t.Helper()
	problems, err := m.problems(expr)
	if err != nil {
		t.Errorf("%s: %v\n%s", where, err, expr)
		return
	}
	for _, p := range problems {
		t.Errorf("%s: %s", where, p)
	}
}

// prometheusRule is the part of the PrometheusRule the tests read.
type prometheusRule struct {
	Spec struct {
		Groups []json.RawMessage `json:"groups"`
	} `json:"spec"`
}

// TestAlertRules validates the PrometheusRule's groups as Prometheus loads
// a rules file (promtool check rules: the expressions, durations, labels
// and annotation templates), checks every expression against the exported
// metrics, and that each alert has a severity, a summary, a description and
// a runbook in docs/monitoring.md.
func TestAlertRules(t *testing.T) {
	m := loadFixture(t)
	var pr prometheusRule
	loadComponentFile(t, "prometheusrule.yaml", &pr)
	if len(pr.Spec.Groups) == 0 {
		t.Fatal("the PrometheusRule has no groups")
	}
	groupsJSON, err := json.Marshal(map[string]any{"groups": pr.Spec.Groups})
	if err != nil {
		t.Fatal(err)
	}
	// rulefmt reads YAML; JSON is YAML.
	groups, errs := rulefmt.Parse(groupsJSON, false, model.UTF8Validation, parser.NewParser(parser.Options{}), slog.New(slog.DiscardHandler))
	for _, err := range errs {
		t.Errorf("the PrometheusRule's groups are not a valid Prometheus rules file: %v", err)
	}
	if groups == nil {
		return
	}
	doc, err := os.ReadFile(runbooks)
	if err != nil {
		t.Fatal(err)
	}
	var alerts []string
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				t.Errorf("group %s: the record rule %s: the component ships alerts only, and test/e2e knows no recorded series", g.Name, r.Record)
				continue
			}
			alerts = append(alerts, r.Alert)
			checkExpr(t, m, "alert "+r.Alert, r.Expr)
			if r.For == 0 {
				t.Errorf("alert %s has no `for`: a single bad evaluation would page", r.Alert)
			}
			if s := r.Labels["severity"]; s != "warning" && s != "critical" {
				t.Errorf("alert %s: severity %q, want warning or critical", r.Alert, s)
			}
			for _, a := range []string{"summary", "description"} {
				if strings.TrimSpace(r.Annotations[a]) == "" {
					t.Errorf("alert %s has no %s annotation", r.Alert, a)
				}
			}
			if !strings.Contains(string(doc), "\n#### "+r.Alert+"\n") {
				t.Errorf("alert %s has no runbook in docs/monitoring.md (a heading `#### %s`)", r.Alert, r.Alert)
			}
		}
	}
	for _, want := range []string{"DeployObjectSyncErrors", "DeployObjectWorkqueueDepthGrowing", "DeployObjectWorkqueueOldestItemAgeGrowing", "DeployObjectControllerNoLeader", "DeployObjectReconcileLatencyHigh"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("no alert %s (have %v)", want, alerts)
		}
	}
}

// dashboard is the part of a Grafana dashboard the tests read.
type dashboard struct {
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	Title   string `json:"title"`
	Type    string `json:"type"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	// Panels are a collapsed row's.
	Panels []panel `json:"panels"`
}

// labelValues is the query of a Grafana variable listing a label's values.
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$`)

// TestDashboard checks every query of the dashboard: each panel's targets
// and each variable's label_values.
func TestDashboard(t *testing.T) {
	m := loadFixture(t)
	var d dashboard
	loadComponentFile(t, "dashboard.json", &d)
	queries := 0
	var walk func([]panel)
	walk = func(panels []panel) {
		for _, p := range panels {
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			for _, target := range p.Targets {
				queries++
				checkExpr(t, m, "panel "+p.Title, target.Expr)
			}
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			if err := json.Unmarshal(v.Query, &q.Query); err != nil {
				t.Fatalf("variable %s: query %s: %v", v.Name, v.Query, err)
			}
		}
		match := labelValues.FindStringSubmatch(q.Query)
		if match == nil {
			t.Errorf("variable %s: %q is not label_values(selector, label)", v.Name, q.Query)
			continue
		}
		queries++
		// The label must be on the selected series: group by it.
		checkExpr(t, m, "variable "+v.Name, "count by ("+match[2]+") ("+match[1]+")")
	}
	if queries == 0 {
		t.Fatal("the dashboard has no query")
	}
}

// TestCheckerRejects: the checks above fail on a query that does not parse,
// a metric the controller does not export, a histogram without its suffix,
// and a label its series do not carry.
func TestCheckerRejects(t *testing.T) {
	m := exported{
		"workqueue_depth": {"name": true},
		"deployobject_reconcile_duration_seconds_bucket": {"le": true},
		"rest_client_requests_total":                     {"code": true, "method": true, "host": true},
	}
	for _, tc := range []struct {
		expr, want string
	}{
		{`rate(workqueue_depth[5m]`, "unclosed"},
		{`workqueue_dept{name="deployobject"}`, "workqueue_dept is not exported"},
		{`rate(deployobject_reconcile_duration_seconds[5m])`, "is a histogram"},
		{`workqueue_depth{queue="deployobject"}`, "has no label queue"},
		{`sum by (verb) (rate(rest_client_requests_total[$__rate_interval]))`, "has no label verb"},
		{`workqueue_depth * on (name, host) rest_client_requests_total`, "workqueue_depth has no label host"},
		{`{__name__=~"workqueue_.*"}`, "selects no metric by name"},
	} {
		problems, err := m.problems(tc.expr)
		got := strings.Join(problems, "; ")
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: got %q, want a problem containing %q", tc.expr, got, tc.want)
		}
	}
	for _, ok := range []string{
		`histogram_quantile(0.99, sum by (le, namespace) (rate(deployobject_reconcile_duration_seconds_bucket{job="x"}[$__rate_interval])))`,
		`max by (namespace) (workqueue_depth{name="deployobject", namespace="$namespace"})`,
	} {
		if problems, err := m.problems(ok); err != nil || len(problems) > 0 {
			t.Errorf("%s: %v %v, want no problem", ok, err, problems)
		}
	}
}
