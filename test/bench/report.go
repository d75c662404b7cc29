package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
)

// report is everything one run measured. Its JSON form is what runs are
// compared by, so fields are only ever added.
type report struct {
	Date              string   `json:"date"`
	Commit            string   `json:"commit"`
	GoVersion         string   `json:"goVersion"`
	NProc             int      `json:"nproc"`
	Cluster           string   `json:"cluster"`
	Nodes             int      `json:"nodes"`
	PodCapacity       int64    `json:"podCapacity"`
	KubernetesVersion string   `json:"kubernetesVersion"`
	ControllerVersion string   `json:"controllerVersion"`
	N                 int      `json:"n"`
	MemN              int      `json:"memN"`
	Concurrency       int      `json:"concurrency"`
	Steps             []string `json:"steps"`
	// ControllerFlags are the --controller-arg flags every controller ran
	// with, besides HarnessFlags and the flags of a step.
	ControllerFlags []string `json:"controllerFlags"`
	HarnessFlags    []string `json:"harnessFlags"`
	// ControllerBinaryBytes is the size of the controller's binary file,
	// whose pages count in its RSS as they are read.
	ControllerBinaryBytes int64 `json:"controllerBinaryBytes,omitempty"`
	// StepSeconds are the steps' wall times, summed over the runs of
	// those --runs repeats.
	StepSeconds map[string]float64 `json:"stepSeconds"`
	Error       string             `json:"error,omitempty"`
	// CPUProfiles says whether the backlogs ran profiled (--cpu-profile),
	// which costs the controller CPU.
	CPUProfiles bool `json:"cpuProfiles"`

	// Limit, Backlog and Peer.Backlog are those of run MedianRun (from 1)
	// of Runs, the repetitions of the limit, backlog and peer-backlog steps
	// (--runs); RunSpread has the median and range of their figures over
	// every run, by runFigures' keys. Results from before --runs have
	// neither: their one run is Limit, Backlog and Peer.Backlog.
	Limit     *limitResult      `json:"limit,omitempty"`
	Backlog   *convergeResult   `json:"backlog,omitempty"`
	Runs      []backlogRun      `json:"runs,omitempty"`
	MedianRun int               `json:"medianRun,omitempty"`
	RunSpread map[string]spread `json:"runSpread,omitempty"`
	// Sweep is the backlog once per --sweep flag set.
	Sweep  []*convergeResult `json:"sweep,omitempty"`
	Burst  *convergeResult   `json:"burst,omitempty"`
	Steady *steadyResult     `json:"steady,omitempty"`
	Update *convergeResult   `json:"update,omitempty"`
	// Children is a burst of DeployObjects that set every optional child.
	Children *childrenResult `json:"children,omitempty"`
	// Config is a change of one ConfigMap key that N DeployObjects use.
	Config *configResult `json:"config,omitempty"`
	Mem    *memResult    `json:"mem,omitempty"`
	// Peer is the peer's run of the same steps, with --peer.
	Peer *peerResults `json:"peer,omitempty"`

	ControllerLogDir string       `json:"controllerLogDir"`
	ControllerLogs   []logSummary `json:"controllerLogs"`
}

// limitResult is the logic-free writer: three writes per object, no
// controller.
type limitResult struct {
	Seconds         float64 `json:"seconds"`
	Writes          int     `json:"writes"`
	WritesPerSecond float64 `json:"writesPerSecond"`
}

// convergeResult is the controller taking N objects to Ready: from a
// backlog (times from process start), a burst of creations or an update
// wave (times from the first write).
type convergeResult struct {
	ControllerFlags []string `json:"controllerFlags"`
	// ReadyzSeconds is from process start to /readyz (backlog only).
	ReadyzSeconds float64 `json:"readyzSeconds,omitempty"`
	// LoadSeconds is how long creating (burst) or updating (update) took.
	LoadSeconds       float64 `json:"loadSeconds,omitempty"`
	ReconciledSeconds float64 `json:"reconciledSeconds"`
	// RolledOutSeconds is when every Deployment had rolled out and was
	// available, which Ready waits for: the cluster's share of ReadySeconds.
	RolledOutSeconds float64 `json:"rolledOutSeconds"`
	ReadySeconds     float64 `json:"readySeconds"`
	// LimitOverReconciled is the logic-free writer's seconds divided by
	// ReconciledSeconds (backlog only): 1 would be as fast as possible.
	LimitOverReconciled         float64 `json:"limitOverReconciled,omitempty"`
	Reconciles                  float64 `json:"reconciles"`
	ReconcileErrors             float64 `json:"reconcileErrors"`
	CPUSeconds                  float64 `json:"cpuSeconds"`
	CPUSecondsPer1000Reconciles float64 `json:"cpuSecondsPer1000Reconciles"`
	// APIServerCPUSeconds is the API server's CPU time over the same span,
	// the benchmark's own requests included.
	APIServerCPUSeconds float64 `json:"apiServerCPUSeconds,omitempty"`
	Writes              writes  `json:"writes"`
	// Memory is the controller's over no DeployObjects and once the N are
	// Ready (backlog only).
	Memory *backlogMemory `json:"memory,omitempty"`
}

// backlogMemory is a controller's memory after a forced GC, started over no
// DeployObjects and once a backlog of N is Ready, and what that makes per
// DeployObject, with its Deployment and Service.
type backlogMemory struct {
	Empty                      memory  `json:"empty"`
	Ready                      memory  `json:"ready"`
	HeapInusePerObjectNetBytes float64 `json:"heapInusePerObjectNetBytes"`
	RSSPerObjectNetBytes       float64 `json:"rssPerObjectNetBytes"`
}

// writes are the controller's write requests (POST, PUT, PATCH, DELETE),
// events included, and its failed requests of any method.
type writes struct {
	Total     float64 `json:"total"`
	PerObject float64 `json:"perObject"`
	Events    float64 `json:"events"`
	// MeanLatencySeconds is the API server's mean answer time to these
	// writes, as the controller saw it.
	MeanLatencySeconds float64            `json:"meanLatencySeconds"`
	EventsPerObject    float64            `json:"eventsPerObject"`
	ByMethod           map[string]float64 `json:"byMethod"`
	// ByVerbResource is keyed by "VERB resource[/subresource]".
	ByVerbResource       map[string]float64 `json:"byVerbResource"`
	FailedRequestsByCode map[string]float64 `json:"failedRequestsByCode"`
}

// childrenResult is N DeployObjects with every optional child taken to
// Ready from a burst of creations, and the writes of a controller restarted
// over them.
type childrenResult struct {
	Converge *convergeResult `json:"converge"`
	// SettleWrites are the first controller's writes after Ready, until a
	// window without any: the autoscalers' first evaluations.
	SettleSeconds        float64 `json:"settleSeconds"`
	SettleWrites         writes  `json:"settleWrites"`
	RestartWindowSeconds float64 `json:"restartWindowSeconds"`
	RestartReconciles    float64 `json:"restartReconciles"`
	RestartWrites        writes  `json:"restartWrites"`
}

// configResult is N Ready DeployObjects whose pods read one key of a shared
// ConfigMap: first a key they do not use changes, then the one they use.
type configResult struct {
	ControllerFlags []string `json:"controllerFlags"`
	// UnusedKeyWrites are the writes in the window after the unused key
	// changed: there should be none.
	UnusedKeyWindowSeconds float64 `json:"unusedKeyWindowSeconds"`
	UnusedKeyWrites        writes  `json:"unusedKeyWrites"`
	// RolledOutSeconds is from the change of the used key until every
	// DeployObject is Ready with its pods on the new configuration.
	RolledOutSeconds float64 `json:"rolledOutSeconds"`
	// PeakActive and PeakPending are the most DeployObjects the controller
	// reported in a configuration rollout, and waiting for one, at once.
	PeakActive  float64 `json:"peakActive"`
	PeakPending float64 `json:"peakPending"`
	// Limit is the controller's --max-concurrent-config-rollouts.
	Limit                       int     `json:"limit"`
	Writes                      writes  `json:"writes"`
	CPUSecondsPer1000Reconciles float64 `json:"cpuSecondsPer1000Reconciles"`
	// SecondRolledOutSeconds and SecondWrites are those of a second change
	// of the used key: the first rollout of a Deployment the controller
	// created also moves the create's fields to its server-side apply
	// (csaupgrade), which later ones do not.
	SecondRolledOutSeconds float64 `json:"secondRolledOutSeconds"`
	SecondWrites           writes  `json:"secondWrites"`
	// PeakInFlight is the most Deployments rolling out new configuration
	// at once in the first two changes, counted from the cluster rather
	// than from the controller's gauge.
	PeakInFlight int `json:"peakInFlight"`
	// The third change restarts the controller once rollouts are under
	// way: its time, writes (the first controller's until its SIGTERM, then
	// the second's), the most rollouts in flight at once across the
	// restart, and how many the restarted controller counted as in flight.
	RestartRolledOutSeconds float64 `json:"restartRolledOutSeconds"`
	RestartWrites           writes  `json:"restartWrites"`
	RestartPeakInFlight     int     `json:"restartPeakInFlight"`
	RestartAdopted          int     `json:"restartAdopted"`
}

// steadyResult is the writes of a controller over objects already in sync:
// across resyncs, and after a restart. Both count from process start.
type steadyResult struct {
	ResyncControllerFlags  []string `json:"resyncControllerFlags"`
	ResyncWindowSeconds    float64  `json:"resyncWindowSeconds"`
	ResyncReconciles       float64  `json:"resyncReconciles"`
	ResyncWrites           writes   `json:"resyncWrites"`
	RestartControllerFlags []string `json:"restartControllerFlags"`
	RestartWindowSeconds   float64  `json:"restartWindowSeconds"`
	RestartReconciles      float64  `json:"restartReconciles"`
	RestartWrites          writes   `json:"restartWrites"`
}

type memory struct {
	HeapInuseBytes float64 `json:"heapInuseBytes"`
	HeapAllocBytes float64 `json:"heapAllocBytes"`
	RSSBytes       float64 `json:"rssBytes"`
	// PeakRSSBytes is the most the process had resident since it started
	// (VmHWM), read before the forced GC: the peak of listing, decoding and
	// syncing, which the RSS after the GC no longer shows.
	PeakRSSBytes float64 `json:"peakRSSBytes,omitempty"`
}

// memResult is the controller's memory after a forced GC: over an empty
// cluster, over MemN DeployObjects with their children, and with as many
// unrelated Deployments, ConfigMaps and Secrets again.
type memResult struct {
	ControllerFlags   []string `json:"controllerFlags"`
	Empty             memory   `json:"empty"`
	Loaded            memory   `json:"loaded"`
	CreateSeconds     float64  `json:"createSeconds"`
	ReconciledSeconds float64  `json:"reconciledSeconds"`
	// Per DeployObject, with its Deployment and Service; Net subtracts
	// the heap of the controller over an empty cluster.
	HeapInusePerObjectBytes    float64 `json:"heapInusePerObjectBytes"`
	HeapInusePerObjectNetBytes float64 `json:"heapInusePerObjectNetBytes"`
	RSSPerObjectBytes          float64 `json:"rssPerObjectBytes"`
	WithUnrelated              memory  `json:"withUnrelated"`
	UnrelatedHeapChangePercent float64 `json:"unrelatedHeapInuseChangePercent"`
	RestartReadyzSeconds       float64 `json:"restartReadyzSeconds"`
	// Restarted is the restarted controller once idle: the same objects
	// listed once, without the churn of their creation.
	Restarted memory `json:"restarted"`
	// RestartIdleSeconds is from process start until the restarted
	// controller has re-checked every DeployObject and its queue is empty.
	RestartIdleSeconds float64 `json:"restartIdleSeconds"`
}

// logSummary points at one controller run's log and what went wrong in it.
type logSummary struct {
	Controller   string   `json:"controller"`
	Flags        []string `json:"flags"`
	Path         string   `json:"path"`
	ErrorLines   int      `json:"errorLines"`
	WarningLines int      `json:"warningLines"`
	FirstError   string   `json:"firstError,omitempty"`
}

// summarizeLog counts the error and warning lines of a controller's log.
func summarizeLog(c *controller) logSummary {
	s := logSummary{Controller: c.label, Flags: nonNil(c.flags), Path: c.logPath}
	f, err := os.Open(c.logPath)
	if err != nil {
		s.FirstError = "reading log: " + err.Error()
		return s
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch logSeverity(line) {
		case 'E':
			s.ErrorLines++
			if s.FirstError == "" {
				s.FirstError = truncate(line, 400)
			}
		case 'W':
			s.WarningLines++
		}
	}
	return s
}

// logSeverity is 'E' for an error line and 'W' for a warning, of klog,
// which starts lines with the letter and the date ("E1122 05:30:00.000000
// ..."), or of zap's console encoder, which the peer logs with (time, tab,
// level, tab: "2026-11-22T05:30:00Z\tERROR\t...").
func logSeverity(line string) byte {
	if len(line) >= 5 && strings.Trim(line[1:5], "0123456789") == "" {
		return line[0]
	}
	if _, rest, ok := strings.Cut(line, "\t"); ok {
		level, _, _ := strings.Cut(rest, "\t")
		switch level {
		case "ERROR", "DPANIC", "PANIC", "FATAL":
			return 'E'
		case "WARN":
			return 'W'
		}
	}
	return 0
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func writeJSON(path string, r *report) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding results: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating directory for results: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	return nil
}

// printTable writes the report for people: one row per number, in step
// order, with writes per object to make runs of any N comparable.
func printTable(out io.Writer, r *report) error {
	fmt.Fprintf(out, "deployobject-controller benchmark, %s, commit %s, controller %s (binary %s)\n", r.Date, r.Commit, r.ControllerVersion, megabytes(r.ControllerBinaryBytes))
	fmt.Fprintf(out, "N=%d mem-n=%d concurrency=%d, %s, %d CPUs, Kubernetes %s (%s, %d nodes), controller flags: %s\n",
		r.N, r.MemN, r.Concurrency, r.GoVersion, r.NProc, r.KubernetesVersion, r.Cluster, r.Nodes, flagsString(r.ControllerFlags))
	if r.CPUProfiles {
		fmt.Fprintln(out, "CPU profiles of every backlog (--cpu-profile): the controller's CPU in them includes the profiling")
	}
	fmt.Fprintln(out)
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	row := func(step, metric, format string, args ...any) {
		fmt.Fprintf(w, "%s\t%s\t%s\n", step, metric, fmt.Sprintf(format, args...))
	}
	row("STEP", "METRIC", "VALUE")
	if l := r.Limit; l != nil {
		row("limit", "logic-free writer, 3 writes/object", "%.2f s (%.0f writes/s)", l.Seconds, l.WritesPerSecond)
	}
	if c := r.Backlog; c != nil {
		backlogRows(row, "backlog", r.N, c)
	}
	for _, c := range r.Sweep {
		row("sweep", flagsString(c.ControllerFlags), "reconciled %.2f s (limit / reconciled %.2f), Ready %.2f s, %.2f writes/object, %.2f CPU s per 1000 reconciles, mean write latency %.0f ms",
			c.ReconciledSeconds, c.LimitOverReconciled, c.ReadySeconds, c.Writes.PerObject, c.CPUSecondsPer1000Reconciles, c.Writes.MeanLatencySeconds*1000)
	}
	if c := r.Burst; c != nil {
		burstRows(row, "burst", r.N, c)
	}
	if s := r.Steady; s != nil {
		steadyRows(row, "steady", s)
	}
	if c := r.Update; c != nil {
		row("update", "updating images", "%.2f s", c.LoadSeconds)
		row("update", "first update → all reconciled", "%.2f s", c.ReconciledSeconds)
		row("update", "first update → all Deployments rolled out", "%.2f s", c.RolledOutSeconds)
		row("update", "first update → all Ready, new image", "%.2f s", c.ReadySeconds)
		convergeRows(row, "update", r.N, c)
	}
	if c := r.Children; c != nil {
		row("children", "creating", "%.2f s", c.Converge.LoadSeconds)
		row("children", "first create → all Ready", "%.2f s", c.Converge.ReadySeconds)
		convergeRows(row, "children", r.N, c.Converge)
		row("children", fmt.Sprintf("writes after Ready until none for %s (%.0f s: the autoscalers' first evaluations)", quietWindow, c.SettleSeconds),
			"%.0f (%s)", c.SettleWrites.Total, perResource(c.SettleWrites.ByVerbResource, 1))
		row("children", fmt.Sprintf("writes after restart, %.0f s after /readyz", c.RestartWindowSeconds),
			"%.0f (%s), %.0f reconciles", c.RestartWrites.Total, perResource(c.RestartWrites.ByVerbResource, 1), c.RestartReconciles)
	}
	if c := r.Config; c != nil {
		row("config", fmt.Sprintf("writes in %.0f s after an unused key changed", c.UnusedKeyWindowSeconds),
			"%.0f (%s)", c.UnusedKeyWrites.Total, perResource(c.UnusedKeyWrites.ByVerbResource, 1))
		row("config", "used key changed → all Ready on the new configuration", "%.2f s", c.RolledOutSeconds)
		row("config", "peak config rollouts at once (pending)", "%.0f of at most %d (%.0f)", c.PeakActive, c.Limit, c.PeakPending)
		row("config", "writes/object", "%.3f (%s)", c.Writes.PerObject, perResource(c.Writes.ByVerbResource, r.N))
		row("config", "CPU per 1000 reconciles", "%.3f s", c.CPUSecondsPer1000Reconciles)
		row("config", "changed again → all Ready on it", "%.2f s", c.SecondRolledOutSeconds)
		row("config", "writes/object of the second rollout", "%.3f (%s)", c.SecondWrites.PerObject, perResource(c.SecondWrites.ByVerbResource, r.N))
	}
	if m := r.Mem; m != nil {
		row("mem", "empty cluster: heap in use / RSS / peak RSS", "%s / %s / %s", mib(m.Empty.HeapInuseBytes), mib(m.Empty.RSSBytes), mib(m.Empty.PeakRSSBytes))
		row("mem", "creating", "%.2f s", m.CreateSeconds)
		row("mem", "first create → all reconciled", "%.2f s", m.ReconciledSeconds)
		row("mem", fmt.Sprintf("%d DeployObjects: heap in use / alloc / RSS / peak RSS", r.MemN), "%s / %s / %s / %s",
			mib(m.Loaded.HeapInuseBytes), mib(m.Loaded.HeapAllocBytes), mib(m.Loaded.RSSBytes), mib(m.Loaded.PeakRSSBytes))
		row("mem", "heap in use per DeployObject (net of empty)", "%s (%s)", kib(m.HeapInusePerObjectBytes), kib(m.HeapInusePerObjectNetBytes))
		row("mem", "RSS per DeployObject", "%s", kib(m.RSSPerObjectBytes))
		row("mem", fmt.Sprintf("+%d unrelated Deployments, ConfigMaps and Secrets: heap in use / RSS / peak RSS", r.MemN), "%s / %s / %s (heap %+.1f%%)",
			mib(m.WithUnrelated.HeapInuseBytes), mib(m.WithUnrelated.RSSBytes), mib(m.WithUnrelated.PeakRSSBytes), m.UnrelatedHeapChangePercent)
		row("mem", "restart → /readyz over all of them", "%.2f s", m.RestartReadyzSeconds)
		row("mem", "restart → every DeployObject re-checked", "%.2f s", m.RestartIdleSeconds)
		row("mem", "restarted, idle: heap in use / alloc / RSS / peak RSS", "%s / %s / %s / %s (%s in use per DeployObject)",
			mib(m.Restarted.HeapInuseBytes), mib(m.Restarted.HeapAllocBytes), mib(m.Restarted.RSSBytes), mib(m.Restarted.PeakRSSBytes), kib(m.Restarted.HeapInuseBytes/float64(r.MemN)))
	}
	if p := r.Peer; p != nil {
		for _, e := range p.Errors {
			row("peer", "FAILED", "%s", e)
		}
		if c := p.Backlog; c != nil {
			backlogRows(row, "peer-backlog", r.N, c)
		}
		if c := p.Burst; c != nil {
			burstRows(row, "peer-burst", r.N, c)
		}
		if s := p.Steady; s != nil {
			steadyRows(row, "peer-steady", s)
		}
	}
	steps := slices.Sorted(maps.Keys(r.StepSeconds))
	slices.SortStableFunc(steps, func(a, b string) int { return cmp.Compare(stepIndex(a), stepIndex(b)) })
	for _, s := range steps {
		row(s, "step wall time", "%.0f s", r.StepSeconds[s])
	}
	for _, l := range r.ControllerLogs {
		row("logs", l.Controller, "%d errors, %d warnings: %s", l.ErrorLines, l.WarningLines, l.Path)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("printing table: %w", err)
	}
	for _, l := range r.ControllerLogs {
		if l.FirstError != "" {
			fmt.Fprintf(out, "\nfirst error of controller %s:\n  %s\n", l.Controller, l.FirstError)
		}
	}
	return nil
}

// rowFunc adds a row to the table.
type rowFunc func(step, metric, format string, args ...any)

func backlogRows(row rowFunc, step string, n int, c *convergeResult) {
	row(step, "start → /readyz", "%.2f s", c.ReadyzSeconds)
	row(step, "start → all reconciled", "%.2f s", c.ReconciledSeconds)
	if c.LimitOverReconciled > 0 {
		row(step, "limit / reconciled", "%.2f", c.LimitOverReconciled)
	}
	row(step, "start → all Deployments rolled out", "%.2f s", c.RolledOutSeconds)
	row(step, "start → all Ready", "%.2f s", c.ReadySeconds)
	convergeRows(row, step, n, c)
	if m := c.Memory; m != nil {
		row(step, "no DeployObjects: heap in use / RSS / peak RSS", "%s / %s / %s", mib(m.Empty.HeapInuseBytes), mib(m.Empty.RSSBytes), mib(m.Empty.PeakRSSBytes))
		row(step, fmt.Sprintf("%d Ready: heap in use / RSS / peak RSS", n), "%s / %s / %s", mib(m.Ready.HeapInuseBytes), mib(m.Ready.RSSBytes), mib(m.Ready.PeakRSSBytes))
		row(step, "per DeployObject, net of none: heap in use / RSS", "%s / %s", kib(m.HeapInusePerObjectNetBytes), kib(m.RSSPerObjectNetBytes))
	}
}

func burstRows(row rowFunc, step string, n int, c *convergeResult) {
	row(step, "creating", "%.2f s", c.LoadSeconds)
	row(step, "first create → all reconciled", "%.2f s", c.ReconciledSeconds)
	row(step, "first create → all Deployments rolled out", "%.2f s", c.RolledOutSeconds)
	row(step, "first create → all Ready", "%.2f s", c.ReadySeconds)
	convergeRows(row, step, n, c)
}

func steadyRows(row rowFunc, step string, s *steadyResult) {
	row(step, fmt.Sprintf("writes, %s, %.0f s after /readyz", flagsString(s.ResyncControllerFlags), s.ResyncWindowSeconds),
		"%.0f (%s), %.0f reconciles", s.ResyncWrites.Total, perResource(s.ResyncWrites.ByVerbResource, 1), s.ResyncReconciles)
	row(step, fmt.Sprintf("writes after restart, %.0f s after /readyz", s.RestartWindowSeconds),
		"%.0f (%s), %.0f reconciles", s.RestartWrites.Total, perResource(s.RestartWrites.ByVerbResource, 1), s.RestartReconciles)
}

func convergeRows(row rowFunc, step string, n int, c *convergeResult) {
	row(step, "writes/object to Ready", "%.3f (%s)", c.Writes.PerObject, perResource(c.Writes.ByMethod, n))
	row(step, "  by verb and resource, per object", "%s", perResource(c.Writes.ByVerbResource, n))
	row(step, "  of which events, per object", "%.2f", c.Writes.EventsPerObject)
	row(step, "mean write latency", "%.1f ms", c.Writes.MeanLatencySeconds*1000)
	if len(c.Writes.FailedRequestsByCode) > 0 {
		row(step, "failed requests (any method)", "%s", perResource(c.Writes.FailedRequestsByCode, 1))
	}
	row(step, "reconciles/object (errors)", "%.2f (%.0f)", c.Reconciles/float64(n), c.ReconcileErrors)
	row(step, "CPU per 1000 reconciles", "%.3f s (%.2f s in all)", c.CPUSecondsPer1000Reconciles, c.CPUSeconds)
	row(step, "API server CPU (with the benchmark's own load)", "%.2f s", c.APIServerCPUSeconds)
}

// perResource lists counts divided by n, largest first.
func perResource(m map[string]float64, n int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := slices.Sorted(maps.Keys(m))
	slices.SortStableFunc(keys, func(a, b string) int { return cmp.Compare(m[b], m[a]) })
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		if n == 1 {
			parts = append(parts, fmt.Sprintf("%s %.0f", k, m[k]))
		} else {
			parts = append(parts, fmt.Sprintf("%s %.2f", k, m[k]/float64(n)))
		}
	}
	return strings.Join(parts, ", ")
}

func flagsString(flags []string) string {
	if len(flags) == 0 {
		return "defaults"
	}
	return strings.Join(flags, " ")
}

func mib(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }
func kib(b float64) string { return fmt.Sprintf("%.1f KiB", b/(1<<10)) }

// megabytes is a file's size in decimal megabytes, as ls and size print
// it.
func megabytes(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }
