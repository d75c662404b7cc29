package monitoring

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
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
	// runbookPage is the runbooks' page as each alert's runbook_url names
	// it, by its path in the repository.
	runbookPage = "docs/monitoring.md"
	runbooks    = "../../" + runbookPage
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
// a runbook_url that leads to its runbook in docs/monitoring.md.
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
	headings := anchors(string(doc))
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
			if p := runbookProblem(r.Alert, r.Annotations["runbook_url"], headings); p != "" {
				t.Errorf("alert %s: %s", r.Alert, p)
			}
		}
	}
	for _, want := range []string{"DeployObjectSyncErrors", "DeployObjectWorkqueueDepthGrowing", "DeployObjectWorkqueueOldestItemAgeGrowing", "DeployObjectControllerNoLeader", "DeployObjectReconcileLatencyHigh"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("no alert %s (have %v)", want, alerts)
		}
	}
}

// runbookProblem says what is wrong with an alert's runbook_url, or "" when
// it names runbookPage and the anchor of a heading that is the alert's name,
// the alert's own runbook. anchorsOf is the page's anchors.
func runbookProblem(alert, url string, anchorsOf map[string]string) string {
	page, anchor, _ := strings.Cut(url, "#")
	heading, ok := anchorsOf[anchor]
	switch {
	case url == "":
		return "no runbook_url annotation"
	case page != runbookPage:
		return fmt.Sprintf("runbook_url %q is not on %s", url, runbookPage)
	case !ok:
		return fmt.Sprintf("runbook_url %q: %s has no heading with the anchor %q (a runbook is a heading `#### %s`)", url, runbookPage, anchor, alert)
	case heading != alert:
		return fmt.Sprintf("runbook_url %q leads to the section %q, not to the alert's runbook", url, heading)
	}
	return ""
}

// anchorChars are what GitHub and GitLab drop from a heading to make its
// anchor: everything but letters, digits, marks, spaces, - and _.
var anchorChars = regexp.MustCompile(`[^\p{L}\p{N}\p{M} _-]`)

// anchors maps the anchor of every heading of a Markdown page to the
// heading's text, made as GitHub and GitLab make them: lower case, without
// punctuation (the backticks of code too), a hyphen for each space, and -1,
// -2, ... after an anchor already taken. Lines in fenced code blocks are
// not headings.
func anchors(doc string) map[string]string {
	out := map[string]string{}
	seen := map[string]int{}
	fenced := false
	for line := range strings.Lines(doc) {
		line = strings.TrimRight(line, "\n")
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		level := len(line) - len(strings.TrimLeft(line, "#"))
		if fenced || level == 0 || level > 6 || !strings.HasPrefix(line[level:], " ") {
			continue
		}
		text := strings.TrimSpace(line[level:])
		anchor := strings.ReplaceAll(anchorChars.ReplaceAllString(strings.ToLower(text), ""), " ", "-")
		if n := seen[anchor]; n > 0 {
			seen[anchor]++
			anchor = fmt.Sprintf("%s-%d", anchor, n)
		} else {
			seen[anchor] = 1
		}
		out[anchor] = text
	}
	return out
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

// TestRunbookCheck: anchors makes GitHub's anchors (code, punctuation,
// repeats, code blocks), and runbookProblem refuses a missing runbook_url,
// another page, an anchor without a heading and another section's anchor.
func TestRunbookCheck(t *testing.T) {
	doc := "# Metrics and monitoring\n## Metrics\n```yaml\n# not a heading\n```\n" +
		"### Alerts and runbooks\n#### DeployObjectSyncErrors\n## `--metrics-secure` (HTTPS)\n## Metrics\n#no heading\n"
	got := anchors(doc)
	want := map[string]string{
		"metrics-and-monitoring": "Metrics and monitoring",
		"metrics":                "Metrics",
		"alerts-and-runbooks":    "Alerts and runbooks",
		"deployobjectsyncerrors": "DeployObjectSyncErrors",
		"--metrics-secure-https": "`--metrics-secure` (HTTPS)",
		"metrics-1":              "Metrics",
	}
	if !maps.Equal(got, want) {
		t.Errorf("anchors:\n got %v\nwant %v", got, want)
	}
	const alert = "DeployObjectSyncErrors"
	if p := runbookProblem(alert, runbookPage+"#deployobjectsyncerrors", got); p != "" {
		t.Errorf("the alert's own runbook: %s", p)
	}
	for url, want := range map[string]string{
		"": "no runbook_url",
		"docs/operating.md#deployobjectsyncerrors": "is not on",
		runbookPage:                            "no heading with the anchor",
		runbookPage + "#deployobjectsyncerror": "no heading with the anchor",
		runbookPage + "#alerts-and-runbooks":   "leads to the section",
	} {
		if p := runbookProblem(alert, url, got); !strings.Contains(p, want) {
			t.Errorf("runbook_url %q: got %q, want a problem containing %q", url, p, want)
		}
	}
}
