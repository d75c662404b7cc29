package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// harnessFlags are added to every controller run; they only expose what the
// benchmark reads and do not change the controller's behaviour.
var harnessFlags = []string{"--kubeconfig", "--metrics-bind-address", "--metrics-secure", "--health-probe-bind-address", "--profiling"}

// httpClient talks to the controller's metrics and probe servers. Scraping a
// controller that holds tens of thousands of objects under load can be slow,
// but never this slow.
var httpClient = &http.Client{Timeout: 30 * time.Second}

// controller is one run of the controller binary as a separate process, with
// its metrics and probe servers on free local ports.
type controller struct {
	label      string
	flags      []string // the flags besides harnessFlags
	slowdown   int
	logPath    string
	metricsURL string
	healthURL  string
	started    time.Time
	cmd        *exec.Cmd
	done       chan struct{}
	exitErr    error
}

// subject is a binary the steps measure: the controller, or the peer.
type subject struct {
	binary string
	// flags are given to every run, before the step's.
	flags []string
	// slowdown multiplies the time a wait for its convergence allows.
	slowdown int
}

// ours is the controller, with the --controller-arg flags.
func (b *bench) ours() subject {
	return subject{binary: b.opts.controller, flags: b.opts.controllerArgs, slowdown: 1}
}

// peer is the kubebuilder-style peer of --peer. The --controller-arg flags
// are the controller's, which the peer does not have. Its one worker makes
// several reconciles of a few sequential requests per object, so it may
// take several times as long as the controller: a timeout should tell a
// stuck peer, not a slow one.
func (b *bench) peer() subject { return subject{binary: b.opts.peer, slowdown: 4} }

// startController starts subj's binary with the harness flags, subj's
// flags and then stepFlags (later flags win), logging to a file of its own
// in the log directory. It does not wait for readiness.
func (b *bench) startController(subj subject, label string, stepFlags ...string) (*controller, error) {
	metricsAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	healthAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	b.controllerRuns++
	logPath := filepath.Join(b.logDir, fmt.Sprintf("%02d-%s.log", b.controllerRuns, label))
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating controller log: %w", err)
	}
	c := &controller{
		label:      label,
		flags:      append(slices.Clone(subj.flags), stepFlags...),
		slowdown:   subj.slowdown,
		logPath:    logPath,
		metricsURL: "http://" + metricsAddr,
		healthURL:  "http://" + healthAddr,
		done:       make(chan struct{}),
	}
	args := append([]string{
		"--kubeconfig=" + b.opts.kubeconfig,
		"--metrics-bind-address=" + metricsAddr,
		"--metrics-secure=false",
		"--health-probe-bind-address=" + healthAddr,
		"--profiling",
	}, c.flags...)
	c.cmd = exec.Command(subj.binary, args...)
	c.cmd.Stdout = logFile
	c.cmd.Stderr = logFile
	c.started = time.Now()
	if err := c.cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting controller %s: %w", subj.binary, err)
	}
	go func() {
		c.exitErr = c.cmd.Wait()
		logFile.Close()
		close(c.done)
	}()
	b.controllers = append(b.controllers, c)
	b.logf("controller %s started (pid %d, flags %v, log %s)", label, c.cmd.Process.Pid, c.flags, logPath)
	return c, nil
}

// freeAddr returns a local address that was free a moment ago. Another
// process could take it before the controller binds it, in which case the
// controller exits and the wait for it reports that.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// exited returns an error once the process has ended: a controller is only
// ever supposed to stop when the benchmark stops it.
func (c *controller) exited() error {
	select {
	case <-c.done:
		return fmt.Errorf("controller %s exited unexpectedly (%w); log: %s", c.label, c.exitErr, c.logPath)
	default:
		return nil
	}
}

// waitReady polls /readyz, which answers 200 once the informer caches have
// synced, and returns the time from process start to the first 200.
func (c *controller) waitReady(ctx context.Context, timeout time.Duration) (time.Duration, error) {
	deadline := time.Now().Add(timeout)
	for {
		if err := c.exited(); err != nil {
			return 0, err
		}
		code, body, err := c.get(ctx, c.healthURL+"/readyz")
		if err == nil && code == http.StatusOK {
			return time.Since(c.started), nil
		}
		last := fmt.Sprintf("%d %s", code, strings.TrimSpace(body))
		if err != nil {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("controller %s not ready after %s: /readyz says %s; log: %s", c.label, timeout, last, c.logPath)
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return 0, err
		}
	}
}

func (c *controller) get(ctx context.Context, url string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", fmt.Errorf("building request for %s: %w", url, err)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", fmt.Errorf("reading %s: %w", url, err)
	}
	return resp.StatusCode, string(body), nil
}

// scrape reads and parses the controller's /metrics.
func (c *controller) scrape(ctx context.Context) (snapshot, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.metricsURL+"/metrics", nil)
	if err != nil {
		return nil, fmt.Errorf("building metrics request: %w", err)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping controller %s: %w", c.label, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping controller %s: status %s", c.label, resp.Status)
	}
	return parseText(resp.Body)
}

// heap forces a garbage collection, through the heap profile endpoint with
// gc=1, and reads the memory metrics right after it, so that they show what
// is live rather than what the collector has not reached yet. The profile
// itself is kept as profilePath, for `go tool pprof -sample_index=inuse_space`.
func (c *controller) heap(ctx context.Context, profilePath string) (memory, error) {
	// Before the profile and the scrape, whose own allocations could
	// raise it.
	peak, err := c.peakRSS()
	if err != nil {
		return memory{}, err
	}
	code, profile, err := c.get(ctx, c.metricsURL+"/debug/pprof/heap?gc=1")
	if err != nil {
		return memory{}, fmt.Errorf("forcing a GC in controller %s: %w", c.label, err)
	}
	if code != http.StatusOK {
		return memory{}, fmt.Errorf("forcing a GC in controller %s: /debug/pprof/heap answered %d (is --profiling on?)", c.label, code)
	}
	if err := os.WriteFile(profilePath, []byte(profile), 0o644); err != nil {
		return memory{}, fmt.Errorf("keeping the heap profile: %w", err)
	}
	s, err := c.scrape(ctx)
	if err != nil {
		return memory{}, err
	}
	m := memoryOf(s)
	m.PeakRSSBytes = peak
	return m, nil
}

// peakRSS is the most memory the process has had resident since it
// started, from /proc (VmHWM).
func (c *controller) peakRSS() (float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("reading the peak RSS of controller %s: %w", c.label, err)
	}
	defer f.Close()
	peak, err := parseVmHWM(f)
	if err != nil {
		return 0, fmt.Errorf("reading the peak RSS of controller %s: %w", c.label, err)
	}
	return peak, nil
}

// parseVmHWM reads the VmHWM line of a /proc/PID/status, in bytes.
func parseVmHWM(status io.Reader) (float64, error) {
	sc := bufio.NewScanner(status)
	for sc.Scan() {
		value, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !ok {
			continue
		}
		fields := strings.Fields(value)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("unexpected VmHWM line %q", sc.Text())
		}
		kb, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing VmHWM: %w", err)
		}
		return float64(kb) * 1024, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("reading the process status: %w", err)
	}
	return 0, errors.New("no VmHWM in the process status")
}

// startReady starts a controller and waits for its /readyz, returning how
// long that took. The caller stops it; if it never becomes ready, it is
// stopped here.
func (b *bench) startReady(ctx context.Context, label string, stepFlags ...string) (*controller, time.Duration, error) {
	return b.startReadyAs(ctx, b.ours(), label, stepFlags...)
}

// startReadyAs is startReady for either subject.
func (b *bench) startReadyAs(ctx context.Context, subj subject, label string, stepFlags ...string) (*controller, time.Duration, error) {
	ctrl, err := b.startController(subj, label, stepFlags...)
	if err != nil {
		return nil, 0, err
	}
	readyz, err := ctrl.waitReady(ctx, readyzTimeout)
	if err != nil {
		b.stopController(ctrl)
		return nil, 0, err
	}
	return ctrl, readyz, nil
}

// stopController ends the process with SIGTERM, as a rollout would, and
// kills it if it has not exited 30 s later (the controller's shutdown grace
// is 10 s).
func (b *bench) stopController(c *controller) {
	select {
	case <-c.done:
		return
	default:
	}
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		b.logf("controller %s: sending SIGTERM: %v", c.label, err)
	}
	select {
	case <-c.done:
		if c.exitErr != nil {
			b.logf("controller %s exited with %v; log: %s", c.label, c.exitErr, c.logPath)
		}
	case <-time.After(30 * time.Second):
		b.logf("controller %s did not exit 30s after SIGTERM; killing it", c.label)
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// stopAll stops every controller still running, for the exit paths.
func (b *bench) stopAll() {
	for _, c := range b.controllers {
		b.stopController(c)
	}
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}
