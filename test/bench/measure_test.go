package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// At 10,000 DeployObjects the backlog was reconciled in about 31 minutes
// and its pods came at about 3 a second: the wait for Ready must outlast
// them, or the step fails before it can report the ratio it exists for.
func TestConvergeTimeoutWaitsForThePods(t *testing.T) {
	for _, tc := range []struct {
		name      string
		n         int
		wantReady bool
		slowdown  int
		atLeast   time.Duration
		want      time.Duration
	}{
		{name: "reconciled only: no pods to wait for", n: 10000, slowdown: 1, want: waitTimeout(10000)},
		{name: "ready at 10,000: every pod at 3 a second", n: 10000, wantReady: true, slowdown: 1, atLeast: 10000 * time.Second / 3},
		{name: "ready at 1000", n: 1000, wantReady: true, slowdown: 1, atLeast: 1000 * time.Second / 3},
		{name: "the peer's slowdown stretches it all", n: 1000, wantReady: true, slowdown: 4, want: 4 * convergeTimeout(1000, true, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := convergeTimeout(tc.n, tc.wantReady, tc.slowdown)
			if tc.want != 0 && got != tc.want {
				t.Errorf("convergeTimeout(%d, %v, %d) = %s, want %s", tc.n, tc.wantReady, tc.slowdown, got, tc.want)
			}
			if got < tc.atLeast+waitTimeout(tc.n) && tc.atLeast != 0 {
				t.Errorf("convergeTimeout(%d, %v, %d) = %s, want at least %s for the pods beyond the writes' %s", tc.n, tc.wantReady, tc.slowdown, got, tc.atLeast, waitTimeout(tc.n))
			}
		})
	}
}

// The observer's pass over its caches costs the machine CPU per object;
// polled every 100 ms at 10,000 it took 0.4 of a core from the cluster being
// timed. Objects walked per second must not grow past 1000's.
func TestPollIntervalKeepsTheObserverCheap(t *testing.T) {
	perSecond := func(n int) float64 { return float64(n) / pollInterval(n).Seconds() }
	base := perSecond(1000)
	for _, n := range []int{1, 50, 1000, 2500, 10000, 20000} {
		if got := perSecond(n); got > base {
			t.Errorf("pollInterval(%d) = %s walks %.0f objects a second, more than the %.0f at 1000", n, pollInterval(n), got, base)
		}
		if pollInterval(n) < 100*time.Millisecond {
			t.Errorf("pollInterval(%d) = %s, below the 100 ms that small runs time with", n, pollInterval(n))
		}
	}
	if got := pollInterval(10000); got > 2*time.Second {
		t.Errorf("pollInterval(10000) = %s: the ratio at 10,000 is read on about 20 minutes and wants a finer resolution", got)
	}
}

func TestParseVmHWM(t *testing.T) {
	const status = "Name:\tdeployobject-co\nUmask:\t0022\nState:\tS (sleeping)\nVmPeak:\t 1290880 kB\nVmSize:\t 1290880 kB\nVmLck:\t       0 kB\nVmPin:\t       0 kB\nVmHWM:\t   46872 kB\nVmRSS:\t   31660 kB\nRssAnon:\t    7620 kB\n"
	for _, tc := range []struct {
		name, status string
		want         float64
		wantErr      bool
	}{
		{"a process's status", status, 46872 * 1024, false},
		{"the peak, not the current RSS", "VmRSS:\t   31660 kB\nVmHWM:\t   46872 kB\n", 46872 * 1024, false},
		{"a kernel thread has no VmHWM", "Name:\tkthreadd\nState:\tS (sleeping)\n", 0, true},
		{"another unit", "VmHWM:\t   46 MB\n", 0, true},
		{"no unit", "VmHWM:\t   46872\n", 0, true},
		{"not a number", "VmHWM:\t   4x872 kB\n", 0, true},
	} {
		got, err := parseVmHWM(strings.NewReader(tc.status))
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("%s: parseVmHWM = %v, %v; want %v, error %v", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
}

// The peak RSS is read from the process itself, as the bench reads its
// controllers'.
func TestPeakRSSOfARunningProcess(t *testing.T) {
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep to run: %v", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	peak, err := (&controller{label: "sleep", cmd: cmd}).peakRSS()
	if err != nil || peak < 4096 || peak > 1<<30 {
		t.Errorf("peakRSS of sleep = %v, %v; want a few pages", peak, err)
	}
}
