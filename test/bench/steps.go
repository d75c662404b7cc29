package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

const (
	// steadyResync makes two full resync periods fit in steadyWindow.
	steadyResync  = "--resync-period=30s"
	steadyWindow  = 65 * time.Second
	restartWindow = 20 * time.Second
	// unrelatedSettle is how long the controller gets to react, if it
	// wrongly does, to the unrelated objects before its heap is read.
	unrelatedSettle = 10 * time.Second
	// quietWindow spans one evaluation of every HorizontalPodAutoscaler:
	// kube-controller-manager makes one every 15 s.
	quietWindow   = 20 * time.Second
	trackSecrets  = "--track-secrets"
	settleTimeout = 3 * time.Minute
)

// limit times a logic-free writer making exactly the writes that take N
// DeployObjects to Ready, with no controller running: the fastest the API
// server lets any controller converge.
func (b *bench) limit(ctx context.Context) (*limitResult, error) {
	n := b.opts.n
	if err := b.freshNamespace(ctx, nsLimit); err != nil {
		return nil, err
	}
	dobjs, err := b.createDeployObjects(ctx, nsLimit, n, 1)
	if err != nil {
		return nil, err
	}
	b.logf("limit: %d DeployObjects created; writing their children and status", n)
	writeCtx, cancel := context.WithTimeout(ctx, waitTimeout(n))
	defer cancel()
	start := time.Now()
	err = forEach(writeCtx, n, b.opts.concurrency, func(ctx context.Context, i int) error {
		return b.writeMinimal(ctx, dobjs[i])
	})
	elapsed := time.Since(start).Seconds()
	if err != nil {
		return nil, err
	}
	return &limitResult{Seconds: elapsed, Writes: 3 * n, WritesPerSecond: float64(3*n) / elapsed}, nil
}

// backlog starts the controller over N DeployObjects created while it was
// stopped, as after an outage, and times from its process start.
func (b *bench) backlog(ctx context.Context) (*convergeResult, error) {
	return b.backlogWith(ctx, b.runLabel("backlog"))
}

// sweep runs the backlog once for each flag set of --sweep, in one cluster
// and against one limit, the last run's, to show what the flags' values
// buy.
func (b *bench) sweep(ctx context.Context) ([]*convergeResult, error) {
	var out []*convergeResult
	for i, flags := range b.opts.sweep {
		b.logf("sweep %d of %d: %s", i+1, len(b.opts.sweep), flagsString(flags))
		res, err := b.backlogWith(ctx, fmt.Sprintf("sweep-%d", i+1), flags...)
		if err != nil {
			return out, fmt.Errorf("with %s: %w", flagsString(flags), err)
		}
		out = append(out, res)
	}
	return out, nil
}

// backlogWith is the backlog with the controller run as label, with flags.
func (b *bench) backlogWith(ctx context.Context, label string, flags ...string) (*convergeResult, error) {
	return b.backlogIn(ctx, b.ours(), nsBacklog, label, flags...)
}

// backlogIn is the backlog of subj in ns. Before it, subj runs once over
// no DeployObjects, so that its memory once the backlog is Ready can be
// told per object, net of what it holds anyway.
func (b *bench) backlogIn(ctx context.Context, subj subject, ns, label string, flags ...string) (*convergeResult, error) {
	n := b.opts.n
	if err := b.freshNamespace(ctx, ns); err != nil {
		return nil, err
	}
	empty, err := b.idleMemory(ctx, subj, label+"-empty", flags...)
	if err != nil {
		return nil, err
	}
	if _, err := b.createDeployObjects(ctx, ns, n, 1); err != nil {
		return nil, err
	}
	obs, err := b.observe(ctx, ns)
	if err != nil {
		return nil, err
	}
	defer obs.close()
	apiBefore, err := b.apiServerCPU(ctx)
	if err != nil {
		return nil, err
	}
	ctrl, readyz, cpu, err := b.startBacklogController(ctx, subj, label, flags...)
	if err != nil {
		return nil, err
	}
	defer b.stopController(ctrl)
	defer cpu.finish()
	conv, err := waitConverged(ctx, obs, ctrl, n, ctrl.started, true)
	if err != nil {
		return nil, fmt.Errorf("waiting for the backlog: %w", err)
	}
	after, err := ctrl.scrape(ctx)
	if err != nil {
		return nil, err
	}
	apiAfter, err := b.apiServerCPU(ctx)
	if err != nil {
		return nil, err
	}
	// A fresh process has counted nothing yet: nil is its baseline.
	res := converged(ctrl, nil, after, n, conv)
	res.APIServerCPUSeconds = apiAfter - apiBefore
	res.ReadyzSeconds = readyz.Seconds()
	if l := b.report.Limit; l != nil {
		res.LimitOverReconciled = l.Seconds / res.ReconciledSeconds
	}
	// Before the heap profile, whose forced GC would count in the CPU
	// profile; without --cpu-profile it returns at once.
	cpu.finish()
	readyMem, err := ctrl.heap(ctx, filepath.Join(b.logDir, "heap-"+label+".pprof"))
	if err != nil {
		return nil, err
	}
	res.Memory = &backlogMemory{
		Empty:                      empty,
		Ready:                      readyMem,
		HeapInusePerObjectNetBytes: (readyMem.HeapInuseBytes - empty.HeapInuseBytes) / float64(n),
		RSSPerObjectNetBytes:       (readyMem.RSSBytes - empty.RSSBytes) / float64(n),
	}
	return res, nil
}

// startBacklogController starts subj as label and waits for its /readyz.
// With --cpu-profile it also returns the profiler of the process, started
// before its caches sync so that decoding the initial lists is part of the
// profile; without, the profiler is nil and the process is started as by
// startReadyAs.
func (b *bench) startBacklogController(ctx context.Context, subj subject, label string, flags ...string) (*controller, time.Duration, *cpuProfiler, error) {
	if !b.opts.cpuProfile {
		ctrl, readyz, err := b.startReadyAs(ctx, subj, label, flags...)
		return ctrl, readyz, nil, err
	}
	ctrl, err := b.startController(subj, label, flags...)
	if err != nil {
		return nil, 0, nil, err
	}
	cpu := startCPUProfiler(ctx, ctrl, b.logDir, b.logf)
	readyz, err := ctrl.waitReady(ctx, readyzTimeout)
	if err != nil {
		cpu.finish()
		b.stopController(ctrl)
		return nil, 0, nil, err
	}
	return ctrl, readyz, cpu, nil
}

// idleMemory is subj's memory after a forced GC, started over no
// DeployObjects and left to settle its start-up allocations (event
// broadcaster, first scrapes).
func (b *bench) idleMemory(ctx context.Context, subj subject, label string, flags ...string) (memory, error) {
	ctrl, _, err := b.startReadyAs(ctx, subj, label, flags...)
	if err != nil {
		return memory{}, err
	}
	defer b.stopController(ctrl)
	if err := sleepAlive(ctx, ctrl, 2*time.Second); err != nil {
		return memory{}, err
	}
	return ctrl.heap(ctx, filepath.Join(b.logDir, "heap-"+label+".pprof"))
}

// burst creates N DeployObjects at once under a running controller and
// times from the first creation.
func (b *bench) burst(ctx context.Context) (*convergeResult, error) {
	return b.burstIn(ctx, b.ours(), nsBurst, "burst")
}

// burstIn is the burst of subj in ns, run as label.
func (b *bench) burstIn(ctx context.Context, subj subject, ns, label string) (*convergeResult, error) {
	n := b.opts.n
	if err := b.freshNamespace(ctx, ns); err != nil {
		return nil, err
	}
	obs, err := b.observe(ctx, ns)
	if err != nil {
		return nil, err
	}
	defer obs.close()
	ctrl, _, err := b.startReadyAs(ctx, subj, label)
	if err != nil {
		return nil, err
	}
	defer b.stopController(ctrl)
	return b.measureWave(ctx, obs, ctrl, func(ctx context.Context) error {
		_, err := b.createDeployObjects(ctx, ns, n, 1)
		return err
	})
}

// update changes the image of the N converged DeployObjects and times until
// each is Ready at its new generation with the new image rolled out.
func (b *bench) update(ctx context.Context) (*convergeResult, error) {
	n := b.opts.n
	if err := b.ensureConverged(ctx, nsBurst); err != nil {
		return nil, err
	}
	obs, err := b.observe(ctx, nsBurst)
	if err != nil {
		return nil, err
	}
	defer obs.close()
	ctrl, _, err := b.startReady(ctx, "update")
	if err != nil {
		return nil, err
	}
	defer b.stopController(ctrl)
	if err := waitIdle(ctx, ctrl, n); err != nil {
		return nil, err
	}
	return b.measureWave(ctx, obs, ctrl, func(ctx context.Context) error {
		return b.updateImages(ctx, nsBurst, n, updatedImage)
	})
}

// measureWave runs load against an idle, ready controller and measures the
// convergence that follows, from the controller's metrics before and after.
func (b *bench) measureWave(ctx context.Context, obs *observer, ctrl *controller, load func(context.Context) error) (*convergeResult, error) {
	n := b.opts.n
	before, err := ctrl.scrape(ctx)
	if err != nil {
		return nil, err
	}
	apiBefore, err := b.apiServerCPU(ctx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := load(ctx); err != nil {
		return nil, err
	}
	loaded := time.Since(start)
	// Convergence cannot come before the last write of load, so waiting
	// only now still times it from start.
	conv, err := waitConverged(ctx, obs, ctrl, n, start, true)
	if err != nil {
		return nil, err
	}
	after, err := ctrl.scrape(ctx)
	if err != nil {
		return nil, err
	}
	apiAfter, err := b.apiServerCPU(ctx)
	if err != nil {
		return nil, err
	}
	res := converged(ctrl, before, after, n, conv)
	res.LoadSeconds = loaded.Seconds()
	res.APIServerCPUSeconds = apiAfter - apiBefore
	return res, nil
}

// children creates N DeployObjects that set every optional child (see
// withChildren) under a running controller and times them to Ready; then it restarts the
// controller over them and counts its writes, which should be none, with
// the autoscalers writing their status every 15 s meanwhile.
func (b *bench) children(ctx context.Context) (*childrenResult, error) {
	n := b.opts.n
	if err := b.freshNamespace(ctx, nsChildren); err != nil {
		return nil, err
	}
	obs, err := b.observe(ctx, nsChildren)
	if err != nil {
		return nil, err
	}
	defer obs.close()
	ctrl, _, err := b.startReady(ctx, "children")
	if err != nil {
		return nil, err
	}
	conv, err := b.measureWave(ctx, obs, ctrl, func(ctx context.Context) error {
		_, err := b.createDeployObjects(ctx, nsChildren, n, 1, withChildren)
		return err
	})
	if err != nil {
		b.stopController(ctrl)
		return nil, err
	}
	// Ready does not wait for the autoscalers, whose conditions change over
	// their first evaluations (kube-controller-manager learns the
	// DeployObject kind, then finds no metrics), and the DeployObjects report
	// each change: a restart before they settle would count that news as
	// writes of the restarted controller.
	settleStart := time.Now()
	settleBefore, settleAfter, err := b.settle(ctx, ctrl)
	settled := time.Since(settleStart)
	b.stopController(ctrl)
	if err != nil {
		return nil, err
	}
	restarted, _, err := b.startReady(ctx, "children-restart")
	if err != nil {
		return nil, err
	}
	defer b.stopController(restarted)
	b.logf("children: counting the writes of the restarted controller for %s", restartWindow)
	if err := sleepAlive(ctx, restarted, restartWindow); err != nil {
		return nil, err
	}
	after, err := restarted.scrape(ctx)
	if err != nil {
		return nil, err
	}
	return &childrenResult{
		Converge:             conv,
		SettleSeconds:        settled.Seconds(),
		SettleWrites:         writesBetween(settleBefore, settleAfter, n),
		RestartWindowSeconds: restartWindow.Seconds(),
		RestartReconciles:    after.sum("deployobject_reconcile_total"),
		RestartWrites:        writesBetween(nil, after, n),
	}, nil
}

// settle waits until ctrl has written nothing for a whole quietWindow, at
// most settleTimeout, and returns its metrics from before and after.
func (b *bench) settle(ctx context.Context, ctrl *controller) (first, last snapshot, err error) {
	first, err = ctrl.scrape(ctx)
	if err != nil {
		return nil, nil, err
	}
	last = first
	deadline := time.Now().Add(settleTimeout)
	for {
		b.logf("children: waiting %s for the DeployObjects' status to settle", quietWindow)
		if err := sleepAlive(ctx, ctrl, quietWindow); err != nil {
			return nil, nil, err
		}
		next, err := ctrl.scrape(ctx)
		if err != nil {
			return nil, nil, err
		}
		quiet := writesBetween(last, next, 1).Total == 0
		last = next
		if quiet || time.Now().After(deadline) {
			return first, last, nil
		}
	}
}

// steady counts the writes of a controller over N objects already in sync:
// restarted with a short resync period, across two resyncs; and restarted
// with default flags, right after its caches sync. Both should be zero.
func (b *bench) steady(ctx context.Context) (*steadyResult, error) {
	return b.steadyIn(ctx, b.ours(), nsBurst, "steady")
}

// steadyIn is the steady step of subj over ns, with runs labelled from
// label.
func (b *bench) steadyIn(ctx context.Context, subj subject, ns, label string) (*steadyResult, error) {
	n := b.opts.n
	if err := b.ensureConvergedBy(ctx, subj, ns, label+"-prepare"); err != nil {
		return nil, err
	}
	obs, err := b.observe(ctx, ns)
	if err != nil {
		return nil, err
	}
	defer obs.close()

	// Counting from process start (a nil baseline) includes the initial
	// sync, which is when a controller that disagrees with its own
	// writes would show it.
	windowFromReady := func(run string, window time.Duration, flags ...string) (*controller, snapshot, error) {
		ctrl, _, err := b.startReadyAs(ctx, subj, run, flags...)
		if err != nil {
			return nil, nil, err
		}
		defer b.stopController(ctrl)
		p, err := obs.progress()
		if err != nil {
			return nil, nil, err
		}
		if p.total != n || p.ready != n {
			return nil, nil, fmt.Errorf("objects not in sync before measuring: %s", p.describe(n, true))
		}
		b.logf("steady: counting the writes of controller %s for %s", run, window)
		if err := sleepAlive(ctx, ctrl, window); err != nil {
			return nil, nil, err
		}
		after, err := ctrl.scrape(ctx)
		return ctrl, after, err
	}

	resync, resyncAfter, err := windowFromReady(label+"-resync", steadyWindow, steadyResync)
	if err != nil {
		return nil, err
	}
	restart, restartAfter, err := windowFromReady(label+"-restart", restartWindow)
	if err != nil {
		return nil, err
	}
	return &steadyResult{
		ResyncControllerFlags:  nonNil(resync.flags),
		ResyncWindowSeconds:    steadyWindow.Seconds(),
		ResyncReconciles:       resyncAfter.sum("deployobject_reconcile_total"),
		ResyncWrites:           writesBetween(nil, resyncAfter, n),
		RestartControllerFlags: nonNil(restart.flags),
		RestartWindowSeconds:   restartWindow.Seconds(),
		RestartReconciles:      restartAfter.sum("deployobject_reconcile_total"),
		RestartWrites:          writesBetween(nil, restartAfter, n),
	}, nil
}

// ensureConverged makes ns hold N Ready DeployObjects: those burst left
// behind, or new ones taken to Ready by a controller of their own when
// steady or update runs without burst.
func (b *bench) ensureConverged(ctx context.Context, ns string) error {
	return b.ensureConvergedBy(ctx, b.ours(), ns, "prepare")
}

// ensureConvergedBy is ensureConverged with subj, run as label, taking new
// DeployObjects to Ready.
func (b *bench) ensureConvergedBy(ctx context.Context, subj subject, ns, label string) error {
	n := b.opts.n
	obs, err := b.observe(ctx, ns)
	if err != nil {
		return err
	}
	p, err := obs.progress()
	obs.close()
	if err != nil {
		return err
	}
	if p.total == n && p.ready == n {
		return nil
	}
	b.logf("preparing %d Ready DeployObjects in %s", n, ns)
	if err := b.freshNamespace(ctx, ns); err != nil {
		return err
	}
	if obs, err = b.observe(ctx, ns); err != nil {
		return err
	}
	defer obs.close()
	ctrl, _, err := b.startReadyAs(ctx, subj, label)
	if err != nil {
		return err
	}
	defer b.stopController(ctrl)
	start := time.Now()
	if _, err := b.createDeployObjects(ctx, ns, n, 1); err != nil {
		return err
	}
	if _, err := waitConverged(ctx, obs, ctrl, n, start, true); err != nil {
		return fmt.Errorf("preparing %s: %w", ns, err)
	}
	return nil
}

// mem measures the controller's heap and RSS over an empty cluster, over
// mem-n DeployObjects with replicas 0 (a Deployment and a Service each, no
// pods), and with as many unrelated Deployments, ConfigMaps and Secrets
// again; then how long a restart over all of them takes to sync its caches.
// The controller tracks Secrets, so that their cost is in the figures.
func (b *bench) mem(ctx context.Context) (*memResult, error) {
	n := b.opts.memN
	for _, ns := range []string{nsMem, nsUnrelated} {
		if err := b.freshNamespace(ctx, ns); err != nil {
			return nil, err
		}
	}
	obs, err := b.observe(ctx, nsMem)
	if err != nil {
		return nil, err
	}
	defer obs.close()
	ctrl, _, err := b.startReady(ctx, "mem", trackSecrets)
	if err != nil {
		return nil, err
	}
	defer b.stopController(ctrl)
	// Let start-up allocations (event broadcaster, first scrapes) settle.
	if err := sleepAlive(ctx, ctrl, 2*time.Second); err != nil {
		return nil, err
	}
	empty, err := ctrl.heap(ctx, filepath.Join(b.logDir, "heap-empty.pprof"))
	if err != nil {
		return nil, err
	}

	b.logf("mem: creating %d DeployObjects", n)
	start := time.Now()
	if _, err := b.createDeployObjects(ctx, nsMem, n, 0); err != nil {
		return nil, err
	}
	created := time.Since(start)
	conv, err := waitConverged(ctx, obs, ctrl, n, start, false)
	if err != nil {
		return nil, fmt.Errorf("waiting for %d DeployObjects: %w", n, err)
	}
	loaded, err := ctrl.heap(ctx, filepath.Join(b.logDir, "heap-loaded.pprof"))
	if err != nil {
		return nil, err
	}

	b.logf("mem: creating %d unrelated Deployments, ConfigMaps and Secrets each", n)
	if err := b.createUnrelated(ctx, nsUnrelated, n); err != nil {
		return nil, err
	}
	if err := sleepAlive(ctx, ctrl, unrelatedSettle); err != nil {
		return nil, err
	}
	withUnrelated, err := ctrl.heap(ctx, filepath.Join(b.logDir, "heap-unrelated.pprof"))
	if err != nil {
		return nil, err
	}
	b.stopController(ctrl)

	restarted, readyz, err := b.startReady(ctx, "mem-restart", trackSecrets)
	if err != nil {
		return nil, err
	}
	defer b.stopController(restarted)
	if err := waitIdle(ctx, restarted, n); err != nil {
		return nil, err
	}
	idle := time.Since(restarted.started)
	restartedMem, err := restarted.heap(ctx, filepath.Join(b.logDir, "heap-restarted.pprof"))
	if err != nil {
		return nil, err
	}

	return &memResult{
		ControllerFlags:            nonNil(ctrl.flags),
		Empty:                      empty,
		Loaded:                     loaded,
		CreateSeconds:              created.Seconds(),
		ReconciledSeconds:          conv.reconciled.Seconds(),
		HeapInusePerObjectBytes:    loaded.HeapInuseBytes / float64(n),
		HeapInusePerObjectNetBytes: (loaded.HeapInuseBytes - empty.HeapInuseBytes) / float64(n),
		RSSPerObjectBytes:          loaded.RSSBytes / float64(n),
		WithUnrelated:              withUnrelated,
		UnrelatedHeapChangePercent: (withUnrelated.HeapInuseBytes - loaded.HeapInuseBytes) / loaded.HeapInuseBytes * 100,
		RestartReadyzSeconds:       readyz.Seconds(),
		Restarted:                  restartedMem,
		RestartIdleSeconds:         idle.Seconds(),
	}, nil
}

// The config step's shared ConfigMap: every DeployObject reads usedKey
// through its environment; nobody reads unusedKey.
const (
	sharedConfig = "shared"
	usedKey      = "level"
	unusedKey    = "unused"
	// configLimit is --max-concurrent-config-rollouts for the config step,
	// the controller's default, given explicitly so that the report can
	// hold the peak against it.
	configLimit = 10
	// unusedKeyWindow covers the controller's --config-rollout-delay (5 s)
	// and the syncs that follow it.
	unusedKeyWindow = 15 * time.Second
)

// readsSharedConfig makes d's container read usedKey of the shared
// ConfigMap.
func readsSharedConfig(d *appv1.DeployObject) {
	d.Spec.Env = append(d.Spec.Env, corev1.EnvVar{Name: "LEVEL", ValueFrom: &corev1.EnvVarSource{
		ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: sharedConfig}, Key: usedKey},
	}})
}

// config takes N DeployObjects that read one key of a shared ConfigMap to
// Ready, changes a key they do not read, then the one they read, twice, and
// times until every one is Ready with its pods on the new configuration,
// with the controller's count of rollouts in flight sampled meanwhile.
func (b *bench) config(ctx context.Context) (*configResult, error) {
	n := b.opts.n
	if err := b.freshNamespace(ctx, nsConfig); err != nil {
		return nil, err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: sharedConfig, Namespace: nsConfig},
		Data:       map[string]string{usedKey: "1", unusedKey: "1"},
	}
	if _, err := b.kube.CoreV1().ConfigMaps(nsConfig).Create(ctx, cm, metav1.CreateOptions{FieldManager: fieldManager}); err != nil {
		return nil, fmt.Errorf("creating ConfigMap %s/%s: %w", nsConfig, sharedConfig, err)
	}
	obs, err := b.observe(ctx, nsConfig)
	if err != nil {
		return nil, err
	}
	defer obs.close()
	ctrl, _, err := b.startReady(ctx, "config", fmt.Sprintf("--max-concurrent-config-rollouts=%d", configLimit))
	if err != nil {
		return nil, err
	}
	defer b.stopController(ctrl)
	start := time.Now()
	if _, err := b.createDeployObjects(ctx, nsConfig, n, 1, readsSharedConfig); err != nil {
		return nil, err
	}
	if _, err := waitConverged(ctx, obs, ctrl, n, start, true); err != nil {
		return nil, fmt.Errorf("preparing %s: %w", nsConfig, err)
	}

	before, err := ctrl.scrape(ctx)
	if err != nil {
		return nil, err
	}
	b.logf("config: changing the key nobody reads")
	if err := b.setSharedConfig(ctx, unusedKey, "2"); err != nil {
		return nil, err
	}
	if err := sleepAlive(ctx, ctrl, unusedKeyWindow); err != nil {
		return nil, err
	}
	unused, err := ctrl.scrape(ctx)
	if err != nil {
		return nil, err
	}

	res := &configResult{ControllerFlags: nonNil(ctrl.flags), UnusedKeyWindowSeconds: unusedKeyWindow.Seconds(), Limit: configLimit,
		UnusedKeyWrites: writesBetween(before, unused, n)}
	b.logf("config: changing the key every DeployObject reads")
	first, afterFirst, err := b.configRollout(ctx, obs, ctrl, n, "2", unused)
	if err != nil {
		return nil, err
	}
	res.RolledOutSeconds, res.PeakActive, res.PeakPending, res.Writes, res.CPUSecondsPer1000Reconciles =
		first.seconds, first.peakActive, first.peakPending, first.writes, first.cpuPer1000
	b.logf("config: changing it again")
	second, _, err := b.configRollout(ctx, obs, ctrl, n, "3", afterFirst)
	if err != nil {
		return nil, err
	}
	res.SecondRolledOutSeconds, res.SecondWrites = second.seconds, second.writes
	res.PeakActive, res.PeakPending = max(res.PeakActive, second.peakActive), max(res.PeakPending, second.peakPending)
	res.PeakInFlight = max(first.peakInFlight, second.peakInFlight)
	b.logf("config: changing it a third time, restarting the controller once rollouts are under way")
	third, err := b.configRolloutRestarted(ctx, obs, ctrl, n, "4")
	if err != nil {
		return nil, err
	}
	res.RestartRolledOutSeconds, res.RestartWrites, res.RestartPeakInFlight = third.seconds, third.writes, third.peakInFlight
	res.RestartAdopted = third.adopted
	return res, nil
}

// configRolloutRestarted is a configuration rollout during which the
// controller is stopped (SIGTERM) once rollouts are under way, and a new
// one started at once, as a leader change would do. The rollouts in flight
// are counted from the cluster throughout; the writes are the first
// controller's until just before its SIGTERM plus the second's.
func (b *bench) configRolloutRestarted(ctx context.Context, obs *observer, first *controller, n int, value string) (rollout, error) {
	var second *controller
	defer func() {
		if second != nil {
			b.stopController(second)
		}
	}()
	before, err := first.scrape(ctx)
	if err != nil {
		return rollout{}, err
	}
	var firstWrites writes
	restart := func(ctx context.Context, inFlight int) (*controller, snapshot, error) {
		if inFlight < configLimit/2 {
			return nil, nil, nil
		}
		last, err := first.scrape(ctx)
		if err != nil {
			return nil, nil, err
		}
		firstWrites = writesBetween(before, last, n)
		b.logf("config: %d rollouts in flight; restarting the controller", inFlight)
		b.stopController(first)
		second, _, err = b.startReady(ctx, "config-restarted", fmt.Sprintf("--max-concurrent-config-rollouts=%d", configLimit))
		if err != nil {
			return nil, nil, err
		}
		return second, snapshot{}, nil
	}
	r, after, err := b.configRolloutWith(ctx, obs, first, n, value, before, restart)
	if err != nil {
		return r, err
	}
	if second == nil {
		return r, fmt.Errorf("the rollout ended before %d rollouts were in flight at once: nothing was restarted", configLimit/2)
	}
	r.writes = addWrites(firstWrites, writesBetween(snapshot{}, after, n), n)
	r.adopted = adoptedRollouts(second.logPath)
	return r, nil
}

// rollout is what one configuration rollout of the config step cost.
type rollout struct {
	seconds                 float64
	peakActive, peakPending float64
	// peakInFlight is the most Deployments seen rolling out the new
	// configuration at once, counted from the cluster.
	peakInFlight int
	writes       writes
	cpuPer1000   float64
	// adopted: the rollouts in flight the restarted controller counted.
	adopted int
}

// configRollout sets the key every DeployObject of the config step reads to
// value and waits until all n are Ready on it, watching the controller's
// rollout gauge meanwhile. It returns what the rollout cost since the
// scrape since, and the scrape at its end.
func (b *bench) configRollout(ctx context.Context, obs *observer, ctrl *controller, n int, value string, since snapshot) (rollout, snapshot, error) {
	return b.configRolloutWith(ctx, obs, ctrl, n, value, since, nil)
}

// configRolloutWith is configRollout with a hook called at each poll with
// the rollouts in flight; when it returns a controller, that one is
// watched from then on, from the snapshot it returns.
func (b *bench) configRolloutWith(ctx context.Context, obs *observer, ctrl *controller, n int, value string, since snapshot,
	hook func(ctx context.Context, inFlight int) (*controller, snapshot, error)) (rollout, snapshot, error) {
	var r rollout
	old, err := obs.configHashes()
	if err != nil {
		return r, snapshot{}, err
	}
	start := time.Now()
	if err := b.setSharedConfig(ctx, usedKey, value); err != nil {
		return r, snapshot{}, err
	}
	timeout := waitTimeout(n)
	for {
		s, err := ctrl.scrape(ctx)
		if err != nil {
			return r, snapshot{}, err
		}
		r.peakActive = max(r.peakActive, s.sum("deployobject_config_rollouts", "state", "active"))
		r.peakPending = max(r.peakPending, s.sum("deployobject_config_rollouts", "state", "pending"))
		inFlight, err := obs.rollingOut(old)
		if err != nil {
			return r, snapshot{}, err
		}
		r.peakInFlight = max(r.peakInFlight, inFlight)
		if hook != nil {
			next, from, err := hook(ctx, inFlight)
			if err != nil {
				return r, snapshot{}, err
			}
			if next != nil {
				ctrl, since, hook = next, from, nil
				continue
			}
		}
		done, example, err := obs.onNewConfig(old)
		if err != nil {
			return r, snapshot{}, err
		}
		if done == n {
			break
		}
		if err := ctrl.exited(); err != nil {
			return r, snapshot{}, err
		}
		if time.Since(start) > timeout {
			return r, snapshot{}, fmt.Errorf("timed out after %s: %d of %d Ready on the new configuration (e.g. %s)", timeout, done, n, example)
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return r, snapshot{}, err
		}
	}
	r.seconds = time.Since(start).Seconds()
	after, err := ctrl.scrape(ctx)
	if err != nil {
		return r, snapshot{}, err
	}
	r.writes = writesBetween(since, after, n)
	r.cpuPer1000 = cpuPer1000Reconciles(since, after)
	return r, after, nil
}

// setSharedConfig sets key of the config step's ConfigMap to value.
func (b *bench) setSharedConfig(ctx context.Context, key, value string) error {
	patch := fmt.Appendf(nil, `{"data":{%q:%q}}`, key, value)
	_, err := b.kube.CoreV1().ConfigMaps(nsConfig).Patch(ctx, sharedConfig, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
	if err != nil {
		return fmt.Errorf("changing %s of ConfigMap %s/%s: %w", key, nsConfig, sharedConfig, err)
	}
	return nil
}
