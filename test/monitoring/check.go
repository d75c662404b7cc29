package monitoring

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/prometheus/prometheus/promql/parser"
)

// exported are the series the controller exports, by name (a histogram as
// its _bucket, _sum and _count series), with the label names they carry.
type exported map[string]map[string]bool

// loadExported reads a metric-names.txt: a series name a line, then a
// space and its label names, separated by commas; # starts a comment.
func loadExported(path string) (exported, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := exported{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, labels, _ := strings.Cut(line, " ")
		out[name] = map[string]bool{}
		for _, l := range strings.Split(labels, ",") {
			if l != "" {
				out[name][l] = true
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s lists no metric", path)
	}
	return out, nil
}

// targetLabels are the labels Prometheus and the Prometheus Operator attach
// to every series of a ServiceMonitor's targets.
var targetLabels = []string{"job", "instance", "namespace", "pod", "service", "endpoint", "container"}

// grafanaIntervals replaces the interval variables Grafana substitutes
// before it sends a query, which are not PromQL. Label values such as
// "$namespace" are strings to the parser and need no replacing.
var grafanaIntervals = strings.NewReplacer(
	"${__rate_interval}", "5m", "$__rate_interval", "5m",
	"${__interval}", "1m", "$__interval", "1m",
	"${__range}", "1h", "$__range", "1h",
)

// problems parses expr with Prometheus's parser and returns what in it the
// controller does not export: a series name that is not exported, a
// selector without a name, or a label, selected or grouped or matched on,
// that the selected series do not carry.
func (m exported) problems(expr string) ([]string, error) {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(grafanaIntervals.Replace(expr))
	if err != nil {
		return nil, err
	}
	var out []string
	parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
		switch n := node.(type) {
		case *parser.VectorSelector:
			out = append(out, m.selectorProblems(n)...)
		case *parser.AggregateExpr:
			if !n.Without {
				out = append(out, m.labelProblems(n.Expr, n.Grouping, "by")...)
			}
		case *parser.BinaryExpr:
			if n.VectorMatching != nil && n.VectorMatching.On {
				out = append(out, m.labelProblems(n.LHS, n.VectorMatching.MatchingLabels, "on")...)
				out = append(out, m.labelProblems(n.RHS, n.VectorMatching.MatchingLabels, "on")...)
			}
		}
		return nil
	})
	return out, nil
}

func (m exported) selectorProblems(s *parser.VectorSelector) []string {
	if s.Name == "" {
		return []string{fmt.Sprintf("%s selects no metric by name", s)}
	}
	labels, ok := m[s.Name]
	if !ok {
		if _, hist := m[s.Name+"_bucket"]; hist {
			return []string{fmt.Sprintf("%s is a histogram: select its %[1]s_bucket, %[1]s_sum or %[1]s_count series", s.Name)}
		}
		return []string{fmt.Sprintf("%s is not exported by the controller", s.Name)}
	}
	var out []string
	for _, matcher := range s.LabelMatchers {
		if matcher.Name != "__name__" && !labels[matcher.Name] && !slices.Contains(targetLabels, matcher.Name) {
			out = append(out, fmt.Sprintf("%s has no label %s (it has %s)", s.Name, matcher.Name, labelList(labels)))
		}
	}
	return out
}

// labelProblems checks that every series e selects carries each of labels,
// which an aggregation groups by or a binary operation matches on.
func (m exported) labelProblems(e parser.Expr, labels []string, clause string) []string {
	var out []string
	parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
		s, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		have, ok := m[s.Name]
		if !ok {
			return nil
		}
		for _, l := range labels {
			if !have[l] && !slices.Contains(targetLabels, l) {
				out = append(out, fmt.Sprintf("%s (%s): %s has no label %s (it has %s)", clause, strings.Join(labels, ", "), s.Name, l, labelList(have)))
			}
		}
		return nil
	})
	return out
}

func labelList(labels map[string]bool) string {
	if len(labels) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(maps.Keys(labels)), ", ")
}
