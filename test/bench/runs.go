package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// repeatedSteps are the steps --runs repeats, in the order one repetition
// runs them: a logic-free limit right before the backlog it is the ratio
// of, and the peer's backlog right after, which it is compared with. Every
// repetition runs before the steps that run once, as stepNames lists them.
var repeatedSteps = []string{"limit", "backlog", "peer-backlog"}

// backlogRun is one repetition of the limit, backlog and peer-backlog steps
// (--runs), with the results of those that ran.
type backlogRun struct {
	Limit       *limitResult    `json:"limit,omitempty"`
	Backlog     *convergeResult `json:"backlog,omitempty"`
	PeerBacklog *convergeResult `json:"peerBacklog,omitempty"`
}

// spread is a figure over the runs that have it.
type spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Runs   int     `json:"runs"`
}

// spreadOf is the spread of values, of which there is at least one. The
// median of an even count is the mean of the two middle values.
func spreadOf(values []float64) spread {
	s := slices.Sorted(slices.Values(values))
	mid := len(s) / 2
	median := s[mid]
	if len(s)%2 == 0 {
		median = (s[mid-1] + s[mid]) / 2
	}
	return spread{Median: median, Min: s[0], Max: s[len(s)-1], Runs: len(s)}
}

// runFigure is a figure of one run that the runs table lists and the
// results hold the spread of, under key.
type runFigure struct {
	key, name, unit string
	value           func(backlogRun) (float64, bool)
}

var runFigures = []runFigure{
	{"limitSeconds", "limit", "s", runLimit},
	{"reconciledSeconds", "reconciled", "s", ofBacklog(reconciled)},
	{"limitOverReconciled", "limit / reconciled", "", runRatio},
	{"cpuSecondsPer1000Reconciles", "CPU per 1000 reconciles", "s", ofBacklog(cpuPer1000)},
	{"writesPerObject", "writes/object", "/object", ofBacklog(writesPerObject)},
	{"peerReconciledSeconds", "peer reconciled", "s",
		func(run backlogRun) (float64, bool) { return fromPtr(run.PeerBacklog, reconciled) }},
	{"peerThroughput", "throughput / the peer's", "×", runPeerThroughput},
}

func runLimit(run backlogRun) (float64, bool) {
	return fromPtr(run.Limit, func(l *limitResult) float64 { return l.Seconds })
}

// runRatio is the run's limit / reconciled; a run without the limit step
// has none.
func runRatio(run backlogRun) (float64, bool) {
	if run.Limit == nil {
		return 0, false
	}
	return fromPtr(run.Backlog, func(c *convergeResult) float64 { return c.LimitOverReconciled })
}

// runPeerThroughput is the peer's time to all reconciled over the
// controller's, in the same run.
func runPeerThroughput(run backlogRun) (float64, bool) {
	return compared(run.Backlog, run.PeerBacklog, func(c, pc *convergeResult) float64 { return pc.ReconciledSeconds / c.ReconciledSeconds })
}

func ofBacklog(get func(*convergeResult) float64) func(backlogRun) (float64, bool) {
	return func(run backlogRun) (float64, bool) { return fromPtr(run.Backlog, get) }
}

// runsOf are r's runs of the limit and backlog: those recorded or, in
// results from before --runs, the one its limit and backlog are.
func runsOf(r *report) []backlogRun {
	if len(r.Runs) > 0 {
		return r.Runs
	}
	run := backlogRun{Limit: r.Limit, Backlog: r.Backlog}
	if r.Peer != nil {
		run.PeerBacklog = r.Peer.Backlog
	}
	if run == (backlogRun{}) {
		return nil
	}
	return []backlogRun{run}
}

// runValues are the values of a figure in the runs that have it.
func runValues(runs []backlogRun, value func(backlogRun) (float64, bool)) []float64 {
	var out []float64
	for _, run := range runs {
		if v, ok := value(run); ok {
			out = append(out, v)
		}
	}
	return out
}

// runSpeeds rank runs from slowest to fastest: by limit / reconciled or,
// when no run has it (the limit or the backlog not selected), by the time
// of the step that ran. medianRun ranks by the first that some run has.
var runSpeeds = []func(backlogRun) (float64, bool){
	runRatio,
	negated(ofBacklog(reconciled)),
	negated(runLimit),
}

func negated(value func(backlogRun) (float64, bool)) func(backlogRun) (float64, bool) {
	return func(run backlogRun) (float64, bool) {
		v, ok := value(run)
		return -v, ok
	}
}

// medianRun is the index of the run of median speed, -1 for none. Of an
// even count it is the slower of the two middle ones, so that the run kept
// never flatters the controller.
func medianRun(runs []backlogRun) int {
	for _, speed := range runSpeeds {
		var ranked []int
		for i, run := range runs {
			if _, ok := speed(run); ok {
				ranked = append(ranked, i)
			}
		}
		if len(ranked) == 0 {
			continue
		}
		slices.SortStableFunc(ranked, func(a, b int) int {
			va, _ := speed(runs[a])
			vb, _ := speed(runs[b])
			return cmp.Compare(va, vb)
		})
		return ranked[(len(ranked)-1)/2]
	}
	return -1
}

// keepMedianRun makes the limit, the backlog and the peer's backlog of r
// those of its median run, which results from before --runs compare with,
// and records the spread of every run figure.
func (r *report) keepMedianRun() {
	i := medianRun(r.Runs)
	if i < 0 {
		return
	}
	run := r.Runs[i]
	r.MedianRun = i + 1
	r.Limit, r.Backlog = run.Limit, run.Backlog
	if r.Peer != nil {
		r.Peer.Backlog = run.PeerBacklog
	}
	r.RunSpread = map[string]spread{}
	for _, f := range runFigures {
		if vs := runValues(r.Runs, f.value); len(vs) > 0 {
			r.RunSpread[f.key] = spreadOf(vs)
		}
	}
}

// printRuns writes every run of the limit and backlog, and their median
// and range as keepMedianRun recorded them, when there were several.
func printRuns(out io.Writer, r *report) error {
	if len(r.Runs) < 2 {
		return nil
	}
	cols := slices.DeleteFunc(slices.Clone(runFigures), func(f runFigure) bool {
		_, ok := r.RunSpread[f.key]
		return !ok
	})
	fmt.Fprintf(out, "\n%d runs of the limit and backlog (--runs), in turn", len(r.Runs))
	if r.MedianRun > 0 {
		fmt.Fprintf(out, "; the other tables show run %d, the median one", r.MedianRun)
	}
	fmt.Fprintln(out, ":")
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	line := func(first string, cell func(runFigure) string) {
		cells := []string{first}
		for _, f := range cols {
			cells = append(cells, cell(f))
		}
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	line("RUN", func(f runFigure) string { return strings.ToUpper(f.name) })
	for i, run := range r.Runs {
		line(fmt.Sprint(i+1), func(f runFigure) string {
			if v, ok := f.value(run); ok {
				return formatFigure(v, f.unit)
			}
			return "-"
		})
	}
	line("median", func(f runFigure) string { return formatFigure(r.RunSpread[f.key].Median, f.unit) })
	line("min–max", func(f runFigure) string { return formatRange(r.RunSpread[f.key], f.unit) })
	if err := w.Flush(); err != nil {
		return fmt.Errorf("printing the runs: %w", err)
	}
	return nil
}

func formatRange(s spread, unit string) string {
	return formatFigure(s.Min, unit) + "–" + formatFigure(s.Max, unit)
}
