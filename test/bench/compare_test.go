package main

import (
	"io"
	"slices"
	"strings"
	"testing"
)

// goodReport is a full-size run that meets every target.
func goodReport() *report {
	converge := func() *convergeResult {
		return &convergeResult{ReconciledSeconds: 50, ReadySeconds: 60, LimitOverReconciled: 0.9, Writes: writes{PerObject: 4}, CPUSecondsPer1000Reconciles: 1.2}
	}
	return &report{
		N: targetN, MemN: targetMemN,
		Limit:   &limitResult{Seconds: 45},
		Backlog: converge(),
		Burst:   converge(),
		Steady:  &steadyResult{ResyncReconciles: 4000, RestartReconciles: 2000},
		Update:  converge(),
		Mem:     &memResult{HeapInusePerObjectBytes: 5.9 * 1024, UnrelatedHeapChangePercent: -1.4},
	}
}

// withPeer adds a peer whose backlog took reconciled seconds to the 50 of
// goodReport, with writesPerObject in the backlog and the burst.
func withPeer(reconciled, writesPerObject float64) func(*report) {
	return func(r *report) {
		peer := func() *convergeResult {
			return &convergeResult{ReconciledSeconds: reconciled, ReadySeconds: reconciled + 10, Writes: writes{PerObject: writesPerObject}}
		}
		r.Peer = &peerResults{Backlog: peer(), Burst: peer(), Steady: &steadyResult{}}
	}
}

// The committed results must stay readable as the report type grows.
func TestCommittedResultsDecode(t *testing.T) {
	for _, path := range []string{"results.json", "results-sweep.json", "results-runs3.json", "results-10k.json"} {
		r, err := readBaseline(path)
		if err != nil || r == nil || r.Limit == nil || r.Commit == "" {
			t.Errorf("%s: %v, %+v", path, err, r)
		}
	}
	// The layout's before and after ran the backlog, steady and mem steps
	// only.
	for _, path := range []string{"results-layout-before.json", "results-layout-after.json"} {
		r, err := readBaseline(path)
		if err != nil || r == nil || r.Backlog == nil || r.Steady == nil || r.Mem == nil || r.ControllerVersion == "" {
			t.Errorf("%s: %v, %+v", path, err, r)
		}
	}
}

// TestPrintComparisonJudgesTargets breaks one figure of a good run at a time.
func TestPrintComparisonJudgesTargets(t *testing.T) {
	good := goodReport()
	tests := []struct {
		name   string
		change func(r *report)
		missed []string
	}{
		{"a good run", func(*report) {}, nil},
		{"a fifth write", func(r *report) { r.Backlog.Writes.PerObject = 5 },
			[]string{"backlog writes/object to Ready = 5.000, target ≤ 4"}},
		{"a write in steady state", func(r *report) { r.Steady.RestartWrites.Total = 1 },
			[]string{"steady writes after restart = 1, target 0"}},
		{"a restart window without a reconcile", func(r *report) { r.Steady.RestartReconciles = 0 },
			[]string{"steady reconciles after restart = 0, target > 0"}},
		{"heap over 6 KiB and unrelated objects costing", func(r *report) {
			r.Mem.HeapInusePerObjectBytes = 6.5 * 1024
			r.Mem.UnrelatedHeapChangePercent = -12
		}, []string{
			"mem heap in use per DeployObject = 6.50 KiB, target ≤ 6 KiB",
			"mem heap change with unrelated objects = -12.0 %, target within 10 %",
		}},
		{"CPU over 1.3 s per 1000 reconciles", func(r *report) { r.Backlog.CPUSecondsPer1000Reconciles = 2.6 },
			[]string{"backlog CPU per 1000 reconciles = 2.60 s, target ≤ 1.3 s"}},
		{"slow backlog", func(r *report) { r.Backlog.LimitOverReconciled = 0.85 },
			[]string{"backlog limit / reconciled = 0.85, target ≥ 0.9 (1 run, not a median of 3)"}},
		{"a backlog without the limit step has no ratio to judge", func(r *report) {
			r.Limit = nil
			r.Backlog.LimitOverReconciled = 0
		}, nil},
		{"a small run is not held to the size-bound targets", func(r *report) {
			r.N, r.MemN = 50, 200
			r.Backlog.LimitOverReconciled = 0.5
			r.Backlog.CPUSecondsPer1000Reconciles = 9
			r.Mem.HeapInusePerObjectBytes = 30 * 1024
		}, nil},
		{"one extra write in a thousand objects", func(r *report) { r.Backlog.Writes.PerObject = 4001.0 / 1000 },
			[]string{"backlog writes/object to Ready = 4.001, target ≤ 4"}},
		{"a small run is held to the write targets", func(r *report) {
			r.N = 50
			r.Burst.Writes.PerObject = 4.2
		}, []string{"burst writes/object to Ready = 4.200, target ≤ 4"}},
		{"a good run beside the peer", withPeer(150, 10), nil},
		{"under 2.5 times the peer's throughput", withPeer(120, 10),
			[]string{"peer backlog throughput / the peer's = 2.40×, target ≥ 2.5×"}},
		{"more than half the peer's writes", withPeer(150, 7.9),
			[]string{"peer backlog writes/object / the peer's = 0.51, target ≤ 0.5", "peer burst writes/object / the peer's = 0.51, target ≤ 0.5"}},
		{"a small run beside the peer is held to the write share only", func(r *report) {
			withPeer(60, 7.9)(r)
			r.N = 30
		}, []string{"peer backlog writes/object / the peer's = 0.51, target ≤ 0.5", "peer burst writes/object / the peer's = 0.51, target ≤ 0.5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := goodReport()
			tt.change(now)
			missed, err := printComparison(io.Discard, now, good)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(missed, tt.missed) {
				t.Errorf("missed = %q, want %q", missed, tt.missed)
			}
		})
	}
}

func TestPrintComparisonShowsChange(t *testing.T) {
	base := &report{Commit: "abc", Backlog: &convergeResult{ReconciledSeconds: 50, Writes: writes{PerObject: 4}}, Steady: &steadyResult{},
		Mem: &memResult{UnrelatedHeapChangePercent: -0.4}}
	now := &report{Backlog: &convergeResult{ReconciledSeconds: 40, Writes: writes{PerObject: 4}}, Steady: &steadyResult{RestartWrites: writes{Total: 3}},
		Mem: &memResult{UnrelatedHeapChangePercent: 2.1}}
	var out strings.Builder
	if _, err := printComparison(&out, now, base); err != nil {
		t.Fatal(err)
	}
	// Rows compared by words, whatever the column widths.
	words := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{"compared with commit abc", "reconciled 50.00 s 40.00 s -20.0 %", "after restart 0 3 was 0 0: MISSED",
		"unrelated objects -0.4 % +2.1 % +2.5 points"} {
		if !strings.Contains(words, want) {
			t.Errorf("comparison lacks %q:\n%s", want, out.String())
		}
	}
	// A change smaller than the printed precision is none.
	base.Backlog.Writes.PerObject, now.Backlog.Writes.PerObject = 4, 3.9999999
	out.Reset()
	if _, err := printComparison(&out, now, base); err != nil {
		t.Fatal(err)
	}
	if words := strings.Join(strings.Fields(out.String()), " "); !strings.Contains(words, "to Ready 4.000 4.000 0 % ≤ 4: met") {
		t.Errorf("a change below the printed precision is shown:\n%s", out.String())
	}
	// Without a baseline every row still shows the run and its target.
	out.Reset()
	if _, err := printComparison(&out, now, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "no baseline") || !strings.Contains(out.String(), "MISSED") {
		t.Errorf("comparison without a baseline:\n%s", out.String())
	}
}

// The controller's CPU of a run with --cpu-profile includes the profiling:
// it is shown, and said not to be judged; without profiling, 2.6 s misses
// the target.
func TestPrintComparisonCPUProfiled(t *testing.T) {
	for _, profiled := range []bool{false, true} {
		now := goodReport()
		now.Backlog.CPUSecondsPer1000Reconciles = 2.6
		now.CPUProfiles = profiled
		var out strings.Builder
		missed, err := printComparison(&out, now, nil)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		if !profiled {
			want = []string{"backlog CPU per 1000 reconciles = 2.60 s, target ≤ 1.3 s"}
		}
		if !slices.Equal(missed, want) {
			t.Errorf("profiled %v: missed = %q, want %q", profiled, missed, want)
		}
		words := strings.Join(strings.Fields(out.String()), " ")
		row := "CPU per 1000 reconciles - 2.60 s - ≤ 1.3 s: not judged: run with --cpu-profile, whose profiling costs the controller CPU"
		if got := strings.Contains(words, row); got != profiled {
			t.Errorf("profiled %v: the CPU row says not judged: %v:\n%s", profiled, got, out.String())
		}
		if !strings.Contains(words, "CPU per 1000 reconciles - 2.60 s") {
			t.Errorf("profiled %v: no CPU row:\n%s", profiled, out.String())
		}
	}
}

// The peak RSS and the binary's size are reported beside a baseline that
// has them, and are no row at all for results from before they were
// recorded.
func TestPeakRSSAndBinarySize(t *testing.T) {
	const mb = 1 << 20
	withPeaks := func(backlog, loaded, restarted float64, binary int64) *report {
		r := goodReport()
		r.Backlog.Memory = &backlogMemory{Ready: memory{PeakRSSBytes: backlog * mb}}
		r.Mem.Loaded.PeakRSSBytes = loaded * mb
		r.Mem.Restarted.PeakRSSBytes = restarted * mb
		r.ControllerBinaryBytes = binary
		return r
	}
	for _, tc := range []struct {
		name      string
		now, base *report
		rows      []string
		absent    []string
	}{
		{"against a baseline with them", withPeaks(46, 48, 44, 33_714_338), withPeaks(68.5, 70, 66, 64_921_762),
			[]string{
				"backlog peak RSS to Ready 68.50 MiB 46.00 MiB -32.8 %",
				"mem peak RSS, created and reconciled 70.00 MiB 48.00 MiB -31.4 %",
				"mem peak RSS, restarted over all 66.00 MiB 44.00 MiB -33.3 %",
				"binary controller binary size 64.92 MB 33.71 MB -48.1 %",
			}, nil},
		{"against results from before", withPeaks(46, 48, 44, 33_714_338), goodReport(),
			[]string{"backlog peak RSS to Ready - 46.00 MiB -", "binary controller binary size - 33.71 MB -"}, nil},
		{"results from before", goodReport(), nil,
			nil, []string{"peak RSS", "binary size"}},
	} {
		var out strings.Builder
		missed, err := printComparison(&out, tc.now, tc.base)
		if err != nil || len(missed) > 0 {
			t.Fatalf("%s: missed %q, %v", tc.name, missed, err)
		}
		words := strings.Join(strings.Fields(out.String()), " ")
		for _, want := range tc.rows {
			if !strings.Contains(words, want) {
				t.Errorf("%s: comparison lacks %q:\n%s", tc.name, want, out.String())
			}
		}
		for _, no := range tc.absent {
			if strings.Contains(words, no) {
				t.Errorf("%s: comparison has %q:\n%s", tc.name, no, out.String())
			}
		}
	}
	r := withPeaks(46, 48, 44, 33_714_338)
	r.Peer = &peerResults{Binary: "peer", BinaryBytes: 70_000_000, Backlog: &convergeResult{Memory: &backlogMemory{Ready: memory{PeakRSSBytes: 92 * mb}}}}
	var rows []string
	for _, s := range peerComparison(r) {
		rows = append(rows, strings.Join([]string{s.step, s.name, s.ours, s.peer, s.ratio}, " "))
	}
	for _, want := range []string{"backlog peak RSS to Ready 46.0 MiB 92.0 MiB 0.50", "binary size 33.7 MB 70.0 MB 0.48"} {
		if !slices.Contains(rows, want) {
			t.Errorf("side by side with the peer lacks %q: %q", want, rows)
		}
	}
	var table strings.Builder
	if err := printTable(&table, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"(binary 33.7 MB)", "1000 Ready: heap in use / RSS / peak RSS 0.0 MiB / 0.0 MiB / 46.0 MiB", "peak RSS 0.0 MiB / 0.0 MiB / 0.0 MiB / 48.0 MiB"} {
		if words := strings.Join(strings.Fields(table.String()), " "); !strings.Contains(words, want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
}
