package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// pollInterval is how often a wait over n objects looks at the observer's
// caches; it bounds the resolution of the convergence times. Each look
// walks all n objects, on the machine the cluster runs on: every 100 ms at
// 10,000 the benchmark took 0.4 of a core (221 s of CPU in the first 9
// minutes of the backlog) from the API server it was timing, while the
// logic-free writer it is compared with ran without it. So the interval
// grows with n, keeping the cost per second that of 1000 objects.
func pollInterval(n int) time.Duration {
	return max(100*time.Millisecond, time.Duration(n)*100*time.Microsecond)
}

// readyzTimeout bounds a controller's start until its caches have synced,
// over the largest step's objects.
const readyzTimeout = 5 * time.Minute

// waitTimeout bounds a wait involving n objects: generous for a loaded
// 2-core machine, but finite, so that a stuck run fails and says what it
// was waiting for.
func waitTimeout(n int) time.Duration {
	return 2*time.Minute + time.Duration(n)*200*time.Millisecond
}

// podsPerSecond is the rate at which the bench cluster's
// kube-controller-manager was seen to make pods with 10,000 Deployments
// rolling out at once: about 3 a second, so their last pod comes about 55
// minutes after the first, longer than waitTimeout allows on its own.
const podsPerSecond = 3

// convergeTimeout bounds waitConverged over n objects: with wantReady it also
// waits for one pod per object, at podsPerSecond, and slowdown stretches it
// for a slower controller.
func convergeTimeout(n int, wantReady bool, slowdown int) time.Duration {
	timeout := waitTimeout(n)
	if wantReady {
		timeout += time.Duration(n) * time.Second / podsPerSecond
	}
	return timeout * time.Duration(slowdown)
}

var writeMethods = map[string]bool{"POST": true, "PUT": true, "PATCH": true, "DELETE": true}

// convergence is how long after a start every object was first
// reconciled, had its Deployment rolled out (the cluster's part of Ready),
// and was first Ready.
type convergence struct {
	reconciled, rolledOut, ready time.Duration
}

// waitConverged waits until all n DeployObjects the observer sees are
// reconciled and, with wantReady, Ready, and returns when each stage first
// held, measured from start. It fails early when ctrl exits.
func waitConverged(ctx context.Context, obs *observer, ctrl *controller, n int, start time.Time, wantReady bool) (convergence, error) {
	timeout := convergeTimeout(n, wantReady, ctrl.slowdown)
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(pollInterval(n))
	defer tick.Stop()
	var c convergence
	for {
		p, err := obs.progress()
		if err != nil {
			return c, err
		}
		since := time.Since(start)
		all := func(count int) bool { return p.total == n && count == n }
		if c.reconciled == 0 && all(p.reconciled) {
			c.reconciled = since
			if !wantReady {
				return c, nil
			}
		}
		if c.rolledOut == 0 && all(p.rolledOut) {
			c.rolledOut = since
		}
		if all(p.ready) {
			// Ready means rolled out: a lag of the observer's Deployment
			// watch behind its DeployObject watch is not worth a poll.
			c.rolledOut = cmp.Or(c.rolledOut, since)
			c.ready = since
			return c, nil
		}
		if err := ctrl.exited(); err != nil {
			return c, err
		}
		if time.Now().After(deadline) {
			return c, fmt.Errorf("timed out after %s: %s", timeout, p.describe(n, wantReady))
		}
		select {
		case <-ctx.Done():
			return c, context.Cause(ctx)
		case <-tick.C:
		}
	}
}

// waitIdle waits until a freshly started controller has synced every one of
// the n objects it found and its queue is empty, so that what is measured
// next is not its initial sync.
func waitIdle(ctx context.Context, ctrl *controller, n int) error {
	timeout := waitTimeout(n)
	deadline := time.Now().Add(timeout)
	for {
		s, err := ctrl.scrape(ctx)
		if err != nil {
			return err
		}
		reconciles := s.sum("deployobject_reconcile_total")
		depth := s.sum("workqueue_depth", "name", "deployobject")
		if reconciles >= float64(n) && depth == 0 {
			return nil
		}
		if err := ctrl.exited(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("controller %s not idle after %s: %.0f of %d initial syncs, queue depth %.0f", ctrl.label, timeout, reconciles, n, depth)
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return err
		}
	}
}

// sleepAlive waits for d, failing as soon as ctrl exits.
func sleepAlive(ctx context.Context, ctrl *controller, d time.Duration) error {
	end := time.Now().Add(d)
	for {
		if err := ctrl.exited(); err != nil {
			return err
		}
		left := time.Until(end)
		if left <= 0 {
			return nil
		}
		if err := sleep(ctx, min(left, time.Second)); err != nil {
			return err
		}
	}
}

// writesBetween is what the controller wrote between two scrapes, from
// client-go's REST client metrics, and per object over n objects.
func writesBetween(before, after snapshot, n int) writes {
	w := writes{
		ByMethod:             map[string]float64{},
		ByVerbResource:       map[string]float64{},
		FailedRequestsByCode: map[string]float64{},
	}
	for method, v := range deltaBy(before, after, "rest_client_requests_total", byLabel("method")) {
		if writeMethods[method] {
			w.ByMethod[method] = v
			w.Total += v
		}
	}
	verbResource := func(l map[string]string) (string, bool) {
		return l["verb"] + " " + l["resource"], writeMethods[l["verb"]]
	}
	var count, seconds float64
	for key, v := range deltaBy(before, after, "deployobject_api_request_duration_seconds_count", verbResource) {
		w.ByVerbResource[key] = v
		count += v
		if strings.HasSuffix(key, " events") {
			w.Events += v
		}
	}
	for _, v := range deltaBy(before, after, "deployobject_api_request_duration_seconds_sum", verbResource) {
		seconds += v
	}
	if count > 0 {
		w.MeanLatencySeconds = seconds / count
	}
	for code, v := range deltaBy(before, after, "rest_client_requests_total", byLabel("code")) {
		if !strings.HasPrefix(code, "2") {
			w.FailedRequestsByCode[code] = v
		}
	}
	w.PerObject = w.Total / float64(n)
	w.EventsPerObject = w.Events / float64(n)
	return w
}

// deltaBy is after minus before, grouped by key, without the groups that
// did not change.
func deltaBy(before, after snapshot, name string, key func(map[string]string) (string, bool)) map[string]float64 {
	out := after.sumBy(name, key)
	for k, v := range before.sumBy(name, key) {
		out[k] -= v
	}
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	return out
}

func memoryOf(s snapshot) memory {
	return memory{
		HeapInuseBytes: s.sum("go_memstats_heap_inuse_bytes"),
		HeapAllocBytes: s.sum("go_memstats_heap_alloc_bytes"),
		RSSBytes:       s.sum("process_resident_memory_bytes"),
	}
}

// converged is the result of a convergence of n objects by ctrl, from the
// controller's metrics before and after it.
func converged(ctrl *controller, before, after snapshot, n int, c convergence) *convergeResult {
	reconciles := after.sum("deployobject_reconcile_total") - before.sum("deployobject_reconcile_total")
	r := &convergeResult{
		ControllerFlags:   nonNil(ctrl.flags),
		ReconciledSeconds: c.reconciled.Seconds(),
		RolledOutSeconds:  c.rolledOut.Seconds(),
		ReadySeconds:      c.ready.Seconds(),
		Reconciles:        reconciles,
		ReconcileErrors:   after.sum("deployobject_reconcile_total", "result", "error") - before.sum("deployobject_reconcile_total", "result", "error"),
		CPUSeconds:        after.sum("process_cpu_seconds_total") - before.sum("process_cpu_seconds_total"),
		Writes:            writesBetween(before, after, n),
	}
	r.CPUSecondsPer1000Reconciles = cpuPer1000Reconciles(before, after)
	return r
}

// cpuPer1000Reconciles is the controller's CPU time per 1000 reconciles
// between two scrapes, 0 when it reconciled nothing.
func cpuPer1000Reconciles(before, after snapshot) float64 {
	reconciles := after.sum("deployobject_reconcile_total") - before.sum("deployobject_reconcile_total")
	if reconciles <= 0 {
		return 0
	}
	return (after.sum("process_cpu_seconds_total") - before.sum("process_cpu_seconds_total")) / reconciles * 1000
}

// apiServerCPU is the CPU time the API server process has used so far,
// from its own metrics. It includes the load the benchmark itself puts on
// the API server (its writes and observers' watches), which is the same
// whatever the controller's flags.
func (b *bench) apiServerCPU(ctx context.Context) (float64, error) {
	raw, err := b.kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	s, err := parseText(bytes.NewReader(raw))
	if err != nil {
		return 0, fmt.Errorf("the API server's metrics: %w", err)
	}
	return s.sum("process_cpu_seconds_total"), nil
}

// nonNil keeps an empty flag list an empty list in the JSON, not null.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// addWrites is the writes of two controllers one after the other, over n
// objects.
func addWrites(a, b writes, n int) writes {
	sum := writes{
		Total:                a.Total + b.Total,
		Events:               a.Events + b.Events,
		ByMethod:             map[string]float64{},
		ByVerbResource:       map[string]float64{},
		FailedRequestsByCode: map[string]float64{},
	}
	for _, w := range []writes{a, b} {
		for k, v := range w.ByMethod {
			sum.ByMethod[k] += v
		}
		for k, v := range w.ByVerbResource {
			sum.ByVerbResource[k] += v
		}
		for k, v := range w.FailedRequestsByCode {
			sum.FailedRequestsByCode[k] += v
		}
	}
	if sum.Total > 0 {
		sum.MeanLatencySeconds = (a.MeanLatencySeconds*a.Total + b.MeanLatencySeconds*b.Total) / sum.Total
	}
	sum.PerObject = sum.Total / float64(n)
	sum.EventsPerObject = sum.Events / float64(n)
	return sum
}

// adoptedLine is what the controller logs when it starts with rollouts
// under the limit still going.
var adoptedLine = regexp.MustCompile(`"Rollouts under the limit still going" count=(\d+)`)

// adoptedRollouts is how many rollouts in flight the controller that wrote
// the log at path counted at its start: 0 when it logged none.
func adoptedRollouts(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	m := adoptedLine.FindSubmatch(data)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}
