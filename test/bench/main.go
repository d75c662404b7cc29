// Command bench measures the deployobject-controller binary, run as a
// separate process, against a real API server: how fast it converges
// compared with a logic-free writer, how many writes it makes, its CPU and
// its memory. It prints a table and writes the results as JSON so that runs
// can be compared. `make bench` runs it against a dedicated local cluster
// (hack/bench.sh); every step works in namespaces of its own and removes
// them before the next one starts.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	clientset "deployobject.dev/controller/pkg/generated/clientset/versioned"
	"deployobject.dev/controller/test/crdinstall"
)

// stepNames are the steps in the order they run. limit comes first so that
// it measures the API server before anything else has loaded it; limit,
// backlog and peer-backlog, which --runs repeats, come before the others.
// sweep is not run unless asked for: it repeats the backlog once per flag
// set, against the limit of the last run.
//
// The peer steps run the peer (--peer) where the controller's steps of the
// same name leave off. The peer watches every namespace, as a scaffold does,
// so each runs once the namespaces of the steps before it are gone (runSteps
// keeps a step's namespaces only for the step right after it) and its own go
// before the controller's next step: peer-backlog right after the backlog it
// is compared with, before the sweep reuses the backlog's namespace, and
// peer-burst and peer-steady after the update, which shares the burst's.
var stepNames = []string{"limit", "backlog", "peer-backlog", "sweep", "burst", "steady", "update", "peer-burst", "peer-steady", "children", "config", "mem"}

// peerSteps are the peer's counterparts of the controller's steps, which
// --peer adds to those selected.
var peerSteps = map[string]string{"backlog": "peer-backlog", "burst": "peer-burst", "steady": "peer-steady"}

func isPeerStep(s string) bool { return slices.Contains(slices.Collect(maps.Values(peerSteps)), s) }

// defaultSweep brackets the default --workers, --kube-api-qps and
// --kube-api-burst: the controller's defaults first, then fewer and more
// workers, then lower client limits.
const defaultSweep = "; --workers=2; --workers=4; --workers=8; --workers=32; " +
	"--kube-api-qps=50 --kube-api-burst=100; --kube-api-qps=100 --kube-api-burst=200"

func stepIndex(name string) int { return slices.Index(stepNames, name) }

type options struct {
	kubeconfig     string
	controller     string
	peer           string
	crdDir         string
	out            string
	baseline       string
	commit         string
	cluster        string
	n              int
	memN           int
	runs           int
	concurrency    int
	cpuProfile     bool
	steps          []string
	controllerArgs []string
	sweep          [][]string
}

func parseFlags(args []string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "Kubeconfig of the cluster to measure against; it should be dedicated to the benchmark (required).")
	fs.StringVar(&o.controller, "controller", "bin/deployobject-controller", "Controller binary to measure.")
	fs.StringVar(&o.peer, "peer", "", "Binary of the peer (test/bench/peer) to run the backlog, burst and steady steps of too, on the same cluster, and to compare with; empty runs no peer.")
	fs.StringVar(&o.crdDir, "crd-dir", "crd", "Directory of the CRD to install.")
	fs.StringVar(&o.out, "out", "test/bench/results.json", "Where to write the results as JSON.")
	fs.StringVar(&o.baseline, "baseline", "", "Results JSON to compare this run with (default: the --out file as it was before this run; \"none\" compares with nothing).")
	fs.StringVar(&o.commit, "commit", "unknown", "Commit of the controller, recorded in the results.")
	fs.StringVar(&o.cluster, "cluster", "", "How the cluster was set up, recorded in the results.")
	fs.IntVar(&o.n, "n", 1000, "DeployObjects of the limit, backlog, sweep, burst, steady and update steps.")
	fs.IntVar(&o.runs, "runs", limitRatioRuns, "Times to run the limit, backlog and peer-backlog steps (those selected), in turn and before the other steps: "+
		"each backlog right after a limit of its own, the peer's right after it. "+
		"The comparison judges the median of the runs' limit / reconciled (at least 0.9 at --n 1000, where a single run is judged but said to be one, 0.8 at 10000) "+
		"and of the backlog throughput over the peer's, and holds every run to the other targets. "+
		"The results keep every run; their limit and backlog are those of the run of median limit / reconciled, the slower middle one of an even count.")
	fs.IntVar(&o.memN, "mem-n", 10000, "DeployObjects, and unrelated Deployments, ConfigMaps and Secrets each, of the mem step.")
	fs.IntVar(&o.concurrency, "concurrency", 32, "Concurrent requests of the benchmark's own writers.")
	fs.BoolVar(&o.cpuProfile, "cpu-profile", false, "Keep CPU profiles of the controller (and the peer) during every backlog, from its start to all Ready, "+
		"as consecutive 10 s profiles cpu-<run>-NN.pprof (cpu-backlog-01.pprof, ...; cpu-backlog-run1-01.pprof, ... with --runs above 1) in the controller log directory. "+
		"Profiling costs the controller CPU, counted in its figures, so it is off by default and a run with it has its CPU per 1000 reconciles not judged.")
	// `make bench` runs every step but the sweep; --peer adds the peer's.
	defaultSteps := slices.DeleteFunc(slices.Clone(stepNames), func(s string) bool { return s == "sweep" || isPeerStep(s) })
	steps := fs.String("steps", strings.Join(defaultSteps, ","), "Comma-separated steps to run, of: "+strings.Join(stepNames, ", ")+
		". With --peer, peer-backlog, peer-burst and peer-steady join backlog, burst and steady.")
	sweep := fs.String("sweep", defaultSweep, "Controller flag sets of the sweep step, separated by semicolons; an empty set is the defaults.")
	fs.Func("controller-arg", "Flag for every controller run, such as --workers=32 (repeatable).", func(s string) error {
		o.controllerArgs = append(o.controllerArgs, s)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	var errs []error
	if o.baseline == "" {
		o.baseline = o.out
	}
	if o.kubeconfig == "" {
		errs = append(errs, errors.New("--kubeconfig is required"))
	}
	if o.n < 1 || o.memN < 1 || o.concurrency < 1 || o.runs < 1 {
		errs = append(errs, errors.New("--n, --mem-n, --concurrency and --runs must be at least 1"))
	}
	for _, s := range strings.Split(*steps, ",") {
		s = strings.TrimSpace(s)
		switch {
		case s == "":
		case stepIndex(s) < 0:
			errs = append(errs, fmt.Errorf("unknown step %q in --steps; the steps are %s", s, strings.Join(stepNames, ",")))
		case !slices.Contains(o.steps, s):
			o.steps = append(o.steps, s)
		}
	}
	if o.peer != "" {
		for _, s := range o.steps {
			if p, ok := peerSteps[s]; ok && !slices.Contains(o.steps, p) {
				o.steps = append(o.steps, p)
			}
		}
	} else if i := slices.IndexFunc(o.steps, isPeerStep); i >= 0 {
		errs = append(errs, fmt.Errorf("step %s needs --peer", o.steps[i]))
	}
	for _, set := range strings.Split(*sweep, ";") {
		o.sweep = append(o.sweep, strings.Fields(set))
	}
	if len(o.steps) == 0 {
		errs = append(errs, errors.New("--steps selects no step"))
	}
	slices.SortFunc(o.steps, func(a, b string) int { return stepIndex(a) - stepIndex(b) })
	return o, errors.Join(errs...)
}

// bench is the state shared by the steps.
type bench struct {
	opts *options
	cfg  *rest.Config
	// kube and client write with the controller's defaults (JSON) but
	// without its rate limit; watchKube reads core types as protobuf, which
	// costs the shared CPUs less while watching tens of thousands of
	// objects.
	kube      kubernetes.Interface
	watchKube kubernetes.Interface
	client    clientset.Interface
	report    *report

	logDir         string
	controllers    []*controller
	controllerRuns int
	// rep is the repetition (--runs) of the step running, from 1; 0 for
	// the steps that run once.
	rep int
}

func main() {
	os.Exit(run())
}

func run() int {
	opts, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 2
	}
	var base *report
	if opts.baseline != "none" {
		// Read before the run: by default it is the file the run overwrites.
		if base, err = readBaseline(opts.baseline); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	b, err := newBench(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	runErr := b.runSteps(ctx)
	b.stopAll()
	b.report.keepMedianRun()
	for _, c := range b.controllers {
		b.report.ControllerLogs = append(b.report.ControllerLogs, summarizeLog(c))
	}
	if runErr != nil {
		b.report.Error = runErr.Error()
	}
	code := 0
	if err := printTable(os.Stdout, b.report); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		code = 1
	}
	if err := printRuns(os.Stdout, b.report); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		code = 1
	}
	if err := printPeerComparison(os.Stdout, b.report); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		code = 1
	}
	missed, err := printComparison(os.Stdout, b.report, base)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		code = 1
	}
	for _, m := range missed {
		fmt.Fprintln(os.Stderr, "bench: target missed:", m)
		code = 1
	}
	if err := writeJSON(opts.out, b.report); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		code = 1
	} else {
		b.logf("results written to %s", opts.out)
	}
	if runErr != nil {
		fmt.Fprintln(os.Stderr, "bench: FAILED:", runErr)
		code = 1
	}
	if p := b.report.Peer; p != nil {
		for _, e := range p.Errors {
			fmt.Fprintln(os.Stderr, "bench: FAILED:", e)
			code = 1
		}
	}
	return code
}

func newBench(opts *options) (*bench, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", opts.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig: %w", err)
	}
	// High enough never to throttle: the limit step must measure the API
	// server, not client-side rate limiting.
	cfg.QPS, cfg.Burst = 5000, 5000
	cfg.UserAgent = "deployobject-bench"
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating Kubernetes client: %w", err)
	}
	client, err := clientset.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating DeployObject client: %w", err)
	}
	watchCfg := rest.CopyConfig(cfg)
	watchCfg.ContentType = "application/vnd.kubernetes.protobuf"
	watchCfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	watchKube, err := kubernetes.NewForConfig(watchCfg)
	if err != nil {
		return nil, fmt.Errorf("creating Kubernetes watch client: %w", err)
	}
	logDir, err := os.MkdirTemp("", "deployobject-bench-")
	if err != nil {
		return nil, fmt.Errorf("creating the controller log directory: %w", err)
	}
	b := &bench{opts: opts, cfg: cfg, kube: kube, watchKube: watchKube, client: client, logDir: logDir}
	b.report = &report{
		Date:              time.Now().UTC().Format(time.RFC3339),
		Commit:            opts.commit,
		Cluster:           opts.cluster,
		GoVersion:         runtime.Version(),
		NProc:             runtime.NumCPU(),
		ControllerVersion: controllerVersion(opts.controller),
		N:                 opts.n,
		MemN:              opts.memN,
		Concurrency:       opts.concurrency,
		CPUProfiles:       opts.cpuProfile,
		Steps:             opts.steps,
		ControllerFlags:   nonNil(opts.controllerArgs),
		HarnessFlags:      harnessFlags,
		StepSeconds:       map[string]float64{},
		ControllerLogDir:  logDir,
		ControllerLogs:    []logSummary{},
	}
	if b.report.ControllerBinaryBytes, err = fileSize(opts.controller); err != nil {
		return nil, err
	}
	if opts.peer != "" {
		b.report.Peer = &peerResults{Binary: opts.peer}
		if b.report.Peer.BinaryBytes, err = fileSize(opts.peer); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// fileSize is the size of the binary at path.
func fileSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("reading the size of %s: %w", path, err)
	}
	return fi.Size(), nil
}

// controllerVersion is what the binary says with --version.
func controllerVersion(bin string) string {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return strings.TrimSpace(string(out))
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: %s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// step is one selectable measurement and the namespaces it leaves behind.
type step struct {
	name       string
	namespaces []string
	run        func(context.Context) error
}

func (b *bench) allSteps() []step {
	r := b.report
	return []step{
		{"limit", []string{nsLimit}, func(ctx context.Context) (err error) { r.Limit, err = b.limit(ctx); return err }},
		{"backlog", []string{nsBacklog}, func(ctx context.Context) (err error) { r.Backlog, err = b.backlog(ctx); return err }},
		{"sweep", []string{nsBacklog}, func(ctx context.Context) (err error) { r.Sweep, err = b.sweep(ctx); return err }},
		{"burst", []string{nsBurst}, func(ctx context.Context) (err error) { r.Burst, err = b.burst(ctx); return err }},
		{"steady", []string{nsBurst}, func(ctx context.Context) (err error) { r.Steady, err = b.steady(ctx); return err }},
		{"update", []string{nsBurst}, func(ctx context.Context) (err error) { r.Update, err = b.update(ctx); return err }},
		{"children", []string{nsChildren}, func(ctx context.Context) (err error) { r.Children, err = b.children(ctx); return err }},
		{"config", []string{nsConfig}, func(ctx context.Context) (err error) { r.Config, err = b.config(ctx); return err }},
		{"mem", []string{nsMem, nsUnrelated}, func(ctx context.Context) (err error) { r.Mem, err = b.mem(ctx); return err }},
		{"peer-backlog", []string{nsPeerBacklog}, func(ctx context.Context) (err error) {
			r.Peer.Backlog, err = b.peerBacklog(ctx)
			return b.peerFailed(ctx, b.runLabel("peer-backlog"), err)
		}},
		{"peer-burst", []string{nsPeerBurst}, func(ctx context.Context) (err error) {
			r.Peer.Burst, err = b.peerBurst(ctx)
			return b.peerFailed(ctx, "peer-burst", err)
		}},
		{"peer-steady", []string{nsPeerBurst}, func(ctx context.Context) (err error) {
			r.Peer.Steady, err = b.peerSteady(ctx)
			return b.peerFailed(ctx, "peer-steady", err)
		}},
	}
}

func (b *bench) runSteps(ctx context.Context) error {
	b.logf("controller logs go to %s", b.logDir)
	if v, err := b.kube.Discovery().ServerVersion(); err == nil {
		b.report.KubernetesVersion = v.GitVersion
	} else {
		return fmt.Errorf("reading the server version: %w", err)
	}
	installCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := crdinstall.Install(installCtx, b.cfg, b.opts.crdDir); err != nil {
		return fmt.Errorf("installing the CRD: %w", err)
	}
	if err := b.checkPodCapacity(ctx); err != nil {
		return err
	}

	var selected []step
	for _, s := range b.allSteps() {
		if slices.Contains(b.opts.steps, s.name) {
			selected = append(selected, s)
		}
	}
	planned := plan(selected, b.opts.runs)
	for i, s := range planned {
		b.rep = s.rep
		if s.rep > 0 && (i == 0 || planned[i-1].rep != s.rep) {
			b.startRun()
		}
		b.logf("step %s", b.runLabel(s.name))
		start := time.Now()
		err := s.run(ctx)
		b.report.StepSeconds[s.name] += time.Since(start).Seconds()
		if s.rep > 0 {
			b.recordRun()
		}
		if err != nil {
			return fmt.Errorf("step %s: %w", b.runLabel(s.name), err)
		}
		for _, ns := range leftBehind(planned, i) {
			// After the last step nothing is left to disturb, and the
			// cluster goes away with the run.
			if err := b.deleteNamespace(ctx, ns, i+1 < len(planned)); err != nil {
				return fmt.Errorf("cleaning up after step %s: %w", b.runLabel(s.name), err)
			}
		}
	}
	return nil
}

// plannedStep is a step in the order of the run, with its repetition of
// --runs: from 1 for the steps repeated, 0 for those that run once.
type plannedStep struct {
	step
	rep int
}

// plan orders the selected steps for the run, as stepNames does: those of
// repeatedSteps runs times over, then the others once.
func plan(selected []step, runs int) []plannedStep {
	sorted := slices.SortedFunc(slices.Values(selected), func(a, b step) int { return stepIndex(a.name) - stepIndex(b.name) })
	var repeated, once []plannedStep
	for _, s := range sorted {
		if slices.Contains(repeatedSteps, s.name) {
			repeated = append(repeated, plannedStep{step: s})
		} else {
			once = append(once, plannedStep{step: s})
		}
	}
	var out []plannedStep
	for rep := 1; rep <= runs && len(repeated) > 0; rep++ {
		for _, s := range repeated {
			s.rep = rep
			out = append(out, s)
		}
	}
	return append(out, once...)
}

// leftBehind are the namespaces of planned step i to remove once it is
// done: all but those the next step works on. Keeping them longer would
// leave DeployObjects to the controller or the peer of a step in between,
// or to the next repetition's limit.
func leftBehind(planned []plannedStep, i int) []string {
	if i+1 == len(planned) {
		return planned[i].namespaces
	}
	return slices.DeleteFunc(slices.Clone(planned[i].namespaces), func(ns string) bool {
		return slices.Contains(planned[i+1].namespaces, ns)
	})
}

// startRun begins a repetition of --runs: the limit, backlog and peer
// backlog of the report are those of the repetition running, where the
// backlog finds its limit, until keepMedianRun picks one run's.
func (b *bench) startRun() {
	r := b.report
	r.Runs = append(r.Runs, backlogRun{})
	r.Limit, r.Backlog = nil, nil
	if r.Peer != nil {
		r.Peer.Backlog = nil
	}
}

// recordRun keeps what the repetition running has measured so far.
func (b *bench) recordRun() {
	r := b.report
	run := &r.Runs[len(r.Runs)-1]
	run.Limit, run.Backlog = r.Limit, r.Backlog
	if r.Peer != nil {
		run.PeerBacklog = r.Peer.Backlog
	}
}

// runLabel names a step's controllers, profiles and errors: with --runs
// above 1, the repetition's number is in it.
func (b *bench) runLabel(name string) string {
	if b.rep == 0 || b.opts.runs == 1 {
		return name
	}
	return fmt.Sprintf("%s-run%d", name, b.rep)
}

// checkPodCapacity records the nodes and fails early when they cannot run
// the pods the selected steps need: N at a time, twice that during the
// update's rolling update (maxSurge rounds up to one extra pod per
// Deployment).
func (b *bench) checkPodCapacity(ctx context.Context) error {
	nodes, err := b.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	var capacity int64
	for _, n := range nodes.Items {
		if n.Spec.Unschedulable || !nodeReady(&n) {
			continue
		}
		capacity += n.Status.Allocatable.Pods().Value()
	}
	b.report.Nodes, b.report.PodCapacity = len(nodes.Items), capacity
	need := 0
	for _, s := range []string{"limit", "backlog", "sweep", "burst", "steady", "peer-backlog", "peer-burst", "peer-steady"} {
		if slices.Contains(b.opts.steps, s) {
			need = b.opts.n
		}
	}
	if slices.Contains(b.opts.steps, "update") {
		need = 2 * b.opts.n
	}
	if capacity < int64(need) {
		return fmt.Errorf("the %d schedulable nodes hold %d pods, the selected steps need %d: add nodes (CLUSTER_NODES for hack/cluster.sh) or lower --n",
			len(nodes.Items), capacity, need)
	}
	return nil
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
