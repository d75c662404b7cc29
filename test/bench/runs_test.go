package main

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSpreadOf(t *testing.T) {
	tests := []struct {
		values []float64
		want   spread
	}{
		{[]float64{0.8}, spread{Median: 0.8, Min: 0.8, Max: 0.8, Runs: 1}},
		{[]float64{0.93, 0.74, 0.79}, spread{Median: 0.79, Min: 0.74, Max: 0.93, Runs: 3}},
		{[]float64{4, 1, 3, 2}, spread{Median: 2.5, Min: 1, Max: 4, Runs: 4}},
		{[]float64{2, 2, 1}, spread{Median: 2, Min: 1, Max: 2, Runs: 3}},
	}
	for _, tt := range tests {
		values := slices.Clone(tt.values)
		if got := spreadOf(values); got != tt.want {
			t.Errorf("spreadOf(%v) = %+v, want %+v", tt.values, got, tt.want)
		}
		if !slices.Equal(values, tt.values) {
			t.Errorf("spreadOf(%v) reordered its argument: %v", tt.values, values)
		}
	}
}

// ratioRun is a run of the limit and backlog whose limit / reconciled is
// ratio, the backlog reconciled in 50 s with 4 writes per object and
// 1.2 s of CPU per 1000 reconciles, and, with peer, the peer's backlog
// reconciled peer times slower.
func ratioRun(ratio, peer float64) backlogRun {
	run := backlogRun{
		Limit:   &limitResult{Seconds: 50 * ratio},
		Backlog: &convergeResult{ReconciledSeconds: 50, ReadySeconds: 60, LimitOverReconciled: ratio, Writes: writes{PerObject: 4}, CPUSecondsPer1000Reconciles: 1.2},
	}
	if peer > 0 {
		run.PeerBacklog = &convergeResult{ReconciledSeconds: 50 * peer, ReadySeconds: 60 * peer, Writes: writes{PerObject: 10}}
	}
	return run
}

// runsReport is goodReport at size n with runs in place of its limit and
// backlog, the median one kept as a run does.
func runsReport(n int, runs ...backlogRun) *report {
	r := goodReport()
	r.N = n
	if slices.ContainsFunc(runs, func(run backlogRun) bool { return run.PeerBacklog != nil }) {
		withPeer(150, 10)(r)
	}
	r.Runs = runs
	r.keepMedianRun()
	return r
}

func TestMedianRun(t *testing.T) {
	backlogOnly := func(seconds float64) backlogRun {
		return backlogRun{Backlog: &convergeResult{ReconciledSeconds: seconds}}
	}
	limitOnly := func(seconds float64) backlogRun { return backlogRun{Limit: &limitResult{Seconds: seconds}} }
	tests := []struct {
		name string
		runs []backlogRun
		want int
	}{
		{"none", nil, -1},
		{"one", []backlogRun{ratioRun(0.7, 0)}, 0},
		{"the middle ratio of three", []backlogRun{ratioRun(0.74, 0), ratioRun(0.93, 0), ratioRun(0.79, 0)}, 2},
		{"the lower of the two middle ratios of four", []backlogRun{ratioRun(0.8, 0), ratioRun(0.9, 0), ratioRun(0.7, 0), ratioRun(1, 0)}, 0},
		{"the slower of two", []backlogRun{ratioRun(0.9, 0), ratioRun(0.8, 0)}, 1},
		{"a run whose backlog failed is not ranked", []backlogRun{ratioRun(0.8, 0), ratioRun(0.9, 0), limitOnly(30)}, 0},
		{"without the limit, by the backlog's time", []backlogRun{backlogOnly(50), backlogOnly(60), backlogOnly(55)}, 2},
		{"without the backlog, by the limit's time", []backlogRun{limitOnly(40), limitOnly(30), limitOnly(35)}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := medianRun(tt.runs); got != tt.want {
				t.Errorf("medianRun = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestKeepMedianRun(t *testing.T) {
	runs := []backlogRun{ratioRun(0.74, 2.66), ratioRun(0.93, 2.23), ratioRun(0.79, 2.5)}
	runs[1].Backlog.CPUSecondsPer1000Reconciles = 1.5
	r := runsReport(targetN, runs...)
	if r.MedianRun != 3 || r.Limit != runs[2].Limit || r.Backlog != runs[2].Backlog || r.Peer.Backlog != runs[2].PeerBacklog {
		t.Errorf("kept run %d: limit %+v, backlog %+v, peer backlog %+v; want run 3's", r.MedianRun, r.Limit, r.Backlog, r.Peer.Backlog)
	}
	round := func(s spread) string { return fmt.Sprintf("%.2f %.2f %.2f %d", s.Median, s.Min, s.Max, s.Runs) }
	want := map[string]string{
		"limitSeconds":                "39.50 37.00 46.50 3",
		"reconciledSeconds":           "50.00 50.00 50.00 3",
		"limitOverReconciled":         "0.79 0.74 0.93 3",
		"cpuSecondsPer1000Reconciles": "1.20 1.20 1.50 3",
		"writesPerObject":             "4.00 4.00 4.00 3",
		"peerReconciledSeconds":       "125.00 111.50 133.00 3",
		"peerThroughput":              "2.50 2.23 2.66 3",
	}
	got := map[string]string{}
	for k, s := range r.RunSpread {
		got[k] = round(s)
	}
	if !maps.Equal(got, want) {
		t.Errorf("spread = %v, want %v", got, want)
	}
	// Without the peer there is no peer figure to spread.
	r = runsReport(targetN, ratioRun(0.8, 0), ratioRun(0.9, 0))
	if _, ok := r.RunSpread["peerThroughput"]; ok || r.MedianRun != 1 || len(r.RunSpread) != 5 {
		t.Errorf("without the peer: run %d, spread %v", r.MedianRun, r.RunSpread)
	}
}

// TestPrintComparisonJudgesRuns judges the backlog ratio at both sizes,
// the peer's throughput on the median of the runs, and the other targets
// in every run.
func TestPrintComparisonJudgesRuns(t *testing.T) {
	// threeRuns are three good runs at N=1000, with peer times the peer's
	// throughput, as change leaves them.
	threeRuns := func(peer float64, change func([]backlogRun)) *report {
		runs := []backlogRun{ratioRun(0.95, peer), ratioRun(0.95, peer), ratioRun(0.95, peer)}
		change(runs)
		return runsReport(targetN, runs...)
	}
	tests := []struct {
		name    string
		report  *report
		verdict string
		missed  []string
	}{
		{"three runs at 1000, median over 0.9", runsReport(targetN, ratioRun(0.74, 0), ratioRun(0.93, 0), ratioRun(0.95, 0)),
			"limit / reconciled - 0.93 (0.74–0.95) - ≥ 0.9 (median of 3 runs): met", nil},
		{"three runs at 1000, median under 0.9", runsReport(targetN, ratioRun(0.74, 0), ratioRun(0.85, 0), ratioRun(0.95, 0)),
			"limit / reconciled - 0.85 (0.74–0.95) - ≥ 0.9 (median of 3 runs): MISSED",
			[]string{"backlog limit / reconciled = 0.85 (0.74–0.95), target ≥ 0.9 (median of 3 runs)"}},
		{"one run at 1000 is judged, and said to be one", runsReport(targetN, ratioRun(0.95, 0)),
			"limit / reconciled - 0.95 - ≥ 0.9 (1 run, not a median of 3): met", nil},
		{"one slow run at 1000", runsReport(targetN, ratioRun(0.85, 0)),
			"limit / reconciled - 0.85 - ≥ 0.9 (1 run, not a median of 3): MISSED",
			[]string{"backlog limit / reconciled = 0.85, target ≥ 0.9 (1 run, not a median of 3)"}},
		{"two runs at 1000", runsReport(targetN, ratioRun(0.92, 0), ratioRun(0.94, 0)),
			"limit / reconciled - 0.93 (0.92–0.94) - ≥ 0.9 (median of 2 runs, not of 3): met", nil},
		{"one run at 10,000 needs 0.8", runsReport(largeN, ratioRun(0.85, 0)),
			"limit / reconciled - 0.85 - ≥ 0.8: met", nil},
		{"one slow run at 10,000", runsReport(largeN, ratioRun(0.75, 0)),
			"limit / reconciled - 0.75 - ≥ 0.8: MISSED",
			[]string{"backlog limit / reconciled = 0.75, target ≥ 0.8"}},
		{"three runs at 10,000", runsReport(largeN, ratioRun(0.7, 0), ratioRun(0.82, 0), ratioRun(0.9, 0)),
			"limit / reconciled - 0.82 (0.70–0.90) - ≥ 0.8 (median of 3 runs): met", nil},
		{"a small run is not held to the ratio", runsReport(50, ratioRun(0.5, 0), ratioRun(0.6, 0), ratioRun(0.7, 0)),
			"limit / reconciled - 0.60 (0.50–0.70) - ≥ 0.9: not judged at this size", nil},
		{"the peer's throughput, median over 2.5", runsReport(targetN, ratioRun(0.95, 2.2), ratioRun(0.95, 2.6), ratioRun(0.95, 2.7)),
			"throughput / the peer's - 2.60× (2.20×–2.70×) - ≥ 2.5× (median of 3 runs): met", nil},
		{"the peer's throughput, median under 2.5", runsReport(targetN, ratioRun(0.95, 2.2), ratioRun(0.95, 2.4), ratioRun(0.95, 2.7)),
			"throughput / the peer's - 2.40× (2.20×–2.70×) - ≥ 2.5× (median of 3 runs): MISSED",
			[]string{"peer backlog throughput / the peer's = 2.40× (2.20×–2.70×), target ≥ 2.5× (median of 3 runs)"}},
		{"an extra write in one run of three", threeRuns(0, func(runs []backlogRun) { runs[2].Backlog.Writes.PerObject = 4.001 }),
			"writes/object to Ready - 4.000 (4.000–4.001) - ≤ 4 (each of 3 runs): MISSED",
			[]string{"backlog writes/object to Ready = 4.001 in 1 of 3 runs, target ≤ 4 (each of 3 runs)"}},
		{"CPU over 1.3 s in two runs of three", threeRuns(0, func(runs []backlogRun) {
			runs[0].Backlog.CPUSecondsPer1000Reconciles = 1.4
			runs[2].Backlog.CPUSecondsPer1000Reconciles = 2.6
		}),
			"CPU per 1000 reconciles - 1.40 s (1.20 s–2.60 s) - ≤ 1.3 s (each of 3 runs): MISSED",
			[]string{"backlog CPU per 1000 reconciles = 1.40 s, 2.60 s in 2 of 3 runs, target ≤ 1.3 s (each of 3 runs)"}},
		{"more than half the peer's writes in one run", threeRuns(3, func(runs []backlogRun) { runs[1].PeerBacklog.Writes.PerObject = 7.9 }),
			"writes/object / the peer's - 0.40 (0.40–0.51) - ≤ 0.5 (each of 3 runs): MISSED",
			[]string{"peer backlog writes/object / the peer's = 0.51 in 1 of 3 runs, target ≤ 0.5 (each of 3 runs)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			missed, err := printComparison(&out, tt.report, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(missed, tt.missed) {
				t.Errorf("missed = %q, want %q", missed, tt.missed)
			}
			if words := strings.Join(strings.Fields(out.String()), " "); !strings.Contains(words, tt.verdict) {
				t.Errorf("comparison lacks %q:\n%s", tt.verdict, out.String())
			}
		})
	}
}

// Results from before --runs (testdata holds the results.json of c261d02)
// have one run: their limit and backlog; they still serve as the baseline.
func TestResultsWithoutRunsAsBaseline(t *testing.T) {
	const path = "testdata/results-before-runs.json"
	base, err := readBaseline(path)
	if err != nil || base == nil {
		t.Fatalf("reading %s: %v, %v", path, err, base)
	}
	if len(base.Runs) != 0 {
		t.Fatalf("%s has runs: this test needs results from before --runs", path)
	}
	if runs := runsOf(base); len(runs) != 1 || runs[0].Limit != base.Limit || runs[0].Backlog != base.Backlog || runs[0].PeerBacklog != base.Peer.Backlog {
		t.Errorf("runs of results without runs = %+v", runs)
	}
	now := runsReport(base.N, ratioRun(0.74, 2.2), ratioRun(0.93, 2.6), ratioRun(0.95, 2.7))
	var out strings.Builder
	if _, err := printComparison(&out, now, base); err != nil {
		t.Fatal(err)
	}
	words := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{
		fmt.Sprintf("limit / reconciled %.2f 0.93 (0.74–0.95)", base.Backlog.LimitOverReconciled),
		fmt.Sprintf("logic-free writer %.2f s 46.50 s (37.00 s–47.50 s)", base.Limit.Seconds),
		fmt.Sprintf("throughput / the peer's %.2f× 2.60× (2.20×–2.70×)", base.Peer.Backlog.ReconciledSeconds/base.Backlog.ReconciledSeconds),
	} {
		if !strings.Contains(words, want) {
			t.Errorf("comparison lacks %q:\n%s", want, out.String())
		}
	}
}

// The runs, their median run and spread survive the results file, and
// read back as the same figures.
func TestRunsRoundTrip(t *testing.T) {
	r := runsReport(targetN, ratioRun(0.74, 2.2), ratioRun(0.93, 2.6), ratioRun(0.95, 2.7))
	path := filepath.Join(t.TempDir(), "results.json")
	if err := writeJSON(path, r); err != nil {
		t.Fatal(err)
	}
	back, err := readBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Runs) != 3 || back.MedianRun != 2 || !maps.Equal(back.RunSpread, r.RunSpread) ||
		back.Backlog.LimitOverReconciled != 0.93 || back.Peer.Backlog.ReconciledSeconds != 130 {
		t.Errorf("read back: %d runs, median run %d, spread %v, backlog %+v", len(back.Runs), back.MedianRun, back.RunSpread, back.Backlog)
	}
	for _, f := range figures {
		now, _, ok := f.read(r)
		was, _, hadBase := f.read(back)
		if ok != hadBase || now != was {
			t.Errorf("%s %s: %v (%v) read back as %v (%v)", f.step, f.name, now, ok, was, hadBase)
		}
	}
}

func TestPrintRuns(t *testing.T) {
	var out strings.Builder
	if err := printRuns(&out, runsReport(targetN, ratioRun(0.9, 0))); err != nil || out.Len() > 0 {
		t.Errorf("one run printed %q, %v", out.String(), err)
	}
	r := runsReport(targetN, ratioRun(0.74, 2.2), ratioRun(0.93, 2.6), ratioRun(0.95, 2.7))
	r.Runs[0].PeerBacklog = nil
	r.keepMedianRun()
	if err := printRuns(&out, r); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for i, want := range []string{
		"3 runs of the limit and backlog (--runs), in turn; the other tables show run 2, the median one:",
		"RUN LIMIT RECONCILED LIMIT / RECONCILED CPU PER 1000 RECONCILES WRITES/OBJECT PEER RECONCILED THROUGHPUT / THE PEER'S",
		"1 37.00 s 50.00 s 0.74 1.20 s 4.000 - -",
		"2 46.50 s 50.00 s 0.93 1.20 s 4.000 130.00 s 2.60×",
		"3 47.50 s 50.00 s 0.95 1.20 s 4.000 135.00 s 2.70×",
		"median 46.50 s 50.00 s 0.93 1.20 s 4.000 132.50 s 2.65×",
		"min–max 37.00 s–47.50 s 50.00 s–50.00 s 0.74–0.95 1.20 s–1.20 s 4.000–4.000 130.00 s–135.00 s 2.60×–2.70×",
	} {
		if i >= len(lines) || strings.Join(strings.Fields(lines[i]), " ") != want {
			t.Errorf("line %d: want %q in:\n%s", i+1, want, out.String())
		}
	}
}

func TestPlan(t *testing.T) {
	all := (&bench{report: &report{}}).allSteps()
	pick := func(names ...string) []step {
		return slices.DeleteFunc(slices.Clone(all), func(s step) bool { return !slices.Contains(names, s.name) })
	}
	name := func(p plannedStep) string {
		if p.rep == 0 {
			return p.name
		}
		return fmt.Sprintf("%s#%d", p.name, p.rep)
	}
	tests := []struct {
		name     string
		selected []step
		runs     int
		want     []string
	}{
		{"one run", pick("limit", "backlog", "peer-backlog", "burst"), 1, []string{"limit#1", "backlog#1", "peer-backlog#1", "burst"}},
		{"each repetition a limit, the backlog and the peer's, before the steps run once",
			pick("limit", "backlog", "peer-backlog", "sweep", "burst", "mem"), 3,
			[]string{"limit#1", "backlog#1", "peer-backlog#1", "limit#2", "backlog#2", "peer-backlog#2", "limit#3", "backlog#3", "peer-backlog#3", "sweep", "burst", "mem"}},
		{"the backlog without the limit", pick("backlog", "burst"), 2, []string{"backlog#1", "backlog#2", "burst"}},
		{"nothing to repeat", pick("burst", "steady"), 3, []string{"burst", "steady"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range plan(tt.selected, tt.runs) {
				got = append(got, name(p))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("plan = %q, want %q", got, tt.want)
			}
		})
	}
}

// A step's namespaces are removed unless the next step works on them: the
// peer would take over DeployObjects kept for a later step, and the next
// repetition's limit would run beside them.
func TestLeftBehind(t *testing.T) {
	steps := (&bench{report: &report{}}).allSteps()
	planned := plan(steps, 2)
	got := map[string][]string{}
	for i, p := range planned {
		if ns := leftBehind(planned, i); len(ns) > 0 {
			key := p.name
			if p.rep > 0 {
				key = fmt.Sprintf("%s#%d", p.name, p.rep)
			}
			got[key] = ns
		}
	}
	want := map[string][]string{
		"limit#1": {nsLimit}, "backlog#1": {nsBacklog}, "peer-backlog#1": {nsPeerBacklog},
		"limit#2": {nsLimit}, "backlog#2": {nsBacklog}, "peer-backlog#2": {nsPeerBacklog},
		"sweep": {nsBacklog}, "update": {nsBurst}, "peer-steady": {nsPeerBurst},
		"children": {nsChildren}, "config": {nsConfig}, "mem": {nsMem, nsUnrelated},
	}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("namespaces removed after each step = %v, want %v", got, want)
	}
}

func TestParseFlagsRuns(t *testing.T) {
	o, err := parseFlags([]string{"--kubeconfig", "kc"})
	if err != nil || o.runs != 3 {
		t.Errorf("default --runs = %d, %v; want 3", o.runs, err)
	}
	if _, err := parseFlags([]string{"--kubeconfig", "kc", "--runs", "0"}); err == nil || !strings.Contains(err.Error(), "--runs must be at least 1") {
		t.Errorf("--runs 0: %v", err)
	}
}
