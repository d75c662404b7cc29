package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseFlagsPeer(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		steps   []string
		wantErr string
	}{
		{"no peer", []string{"--steps", "backlog,burst,steady,mem"}, []string{"backlog", "burst", "steady", "mem"}, ""},
		{"the peer joins backlog, burst and steady, in step order",
			[]string{"--steps", "mem,steady,burst,backlog", "--peer", "bin/peer-controller"},
			[]string{"backlog", "peer-backlog", "burst", "steady", "peer-burst", "peer-steady", "mem"}, ""},
		{"right after the backlog, before the sweep reuses its namespace",
			[]string{"--steps", "sweep,backlog", "--peer", "bin/peer-controller"},
			[]string{"backlog", "peer-backlog", "sweep"}, ""},
		{"only the steps it has", []string{"--steps", "limit,update", "--peer", "bin/peer-controller"}, []string{"limit", "update"}, ""},
		{"a peer step alone", []string{"--steps", "peer-burst", "--peer", "bin/peer-controller"}, []string{"peer-burst"}, ""},
		{"a peer step without a peer", []string{"--steps", "burst,peer-burst"}, nil, "step peer-burst needs --peer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseFlags(append([]string{"--kubeconfig", "kc"}, tt.args...))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(o.steps, tt.steps) {
				t.Errorf("steps = %q, want %q", o.steps, tt.steps)
			}
		})
	}
}

// `make bench` without --peer runs no peer step.
func TestDefaultStepsHaveNoPeer(t *testing.T) {
	o, err := parseFlags([]string{"--kubeconfig", "kc"})
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(o.steps, isPeerStep) || slices.Contains(o.steps, "sweep") || !slices.Contains(o.steps, "backlog") {
		t.Errorf("default steps = %q", o.steps)
	}
}

func TestPeerComparison(t *testing.T) {
	r := goodReport()
	if rows := peerComparison(r); rows != nil {
		t.Errorf("rows without a peer: %v", rows)
	}
	withPeer(150, 10)(r)
	r.Backlog.Memory = &backlogMemory{HeapInusePerObjectNetBytes: 4 << 10}
	r.Peer.Backlog.Memory = &backlogMemory{HeapInusePerObjectNetBytes: 16 << 10}
	r.Peer.Steady.RestartWrites.Total = 1000
	got := map[string]string{}
	for _, s := range peerComparison(r) {
		got[s.step+" "+s.name] = strings.Join([]string{s.ours, s.peer, s.ratio, s.about}, " | ")
	}
	for key, want := range map[string]string{
		"backlog start → all reconciled":            "50.00 s | 150.00 s | 3.00 | × the peer's throughput",
		"backlog start → all Ready":                 "60.00 s | 160.00 s | 2.67 | × the peer's throughput",
		"backlog writes/object to Ready":            "4.000 | 10.000 | 0.40 | of the peer's",
		"backlog heap in use per DeployObject, net": "4.0 KiB | 16.0 KiB | 0.25 | of the peer's",
		"burst writes/object to Ready":              "4.000 | 10.000 | 0.40 | of the peer's",
		"steady writes after restart":               "0 | 1000 | 0.00 | of the peer's",
		"steady writes across resyncs":              "0 | 0 | - | of the peer's",
	} {
		if got[key] != want {
			t.Errorf("%s: %q, want %q", key, got[key], want)
		}
	}
	var out strings.Builder
	if err := printPeerComparison(&out, r); err != nil {
		t.Fatal(err)
	}
	if words := strings.Join(strings.Fields(out.String()), " "); !strings.Contains(words, "backlog start → all reconciled 50.00 s 150.00 s 3.00 × the peer's throughput") {
		t.Errorf("side-by-side table:\n%s", out.String())
	}
}

func TestLogSeverity(t *testing.T) {
	for line, want := range map[string]byte{
		"E1122 05:30:00.000000       1 sync.go:10] failed":                  'E',
		"W1122 05:30:00.000000       1 sync.go:10] slow":                    'W',
		"I1122 05:30:00.000000       1 sync.go:10] fine":                    'I',
		"2026-11-22T05:30:00Z\tERROR\tReconciler error\t{\"error\": \"x\"}": 'E',
		"2026-11-22T05:30:00Z\tWARN\tslow":                                  'W',
		"2026-11-22T05:30:00Z\tINFO\tstarting manager":                      0,
		"\tat main.go:10": 0,
		"":                0,
	} {
		if got := logSeverity(line); got != want {
			t.Errorf("logSeverity(%q) = %q, want %q", line, got, want)
		}
	}
}

// A failed peer step is recorded and the run goes on; an interrupted one
// stops the run.
func TestPeerFailed(t *testing.T) {
	b := &bench{report: &report{Peer: &peerResults{}}}
	ctx := context.Background()
	if err := b.peerFailed(ctx, "peer-burst", nil); err != nil || len(b.report.Peer.Errors) != 0 {
		t.Errorf("success: %v, errors %q", err, b.report.Peer.Errors)
	}
	if err := b.peerFailed(ctx, "peer-burst", errors.New("timed out")); err != nil {
		t.Errorf("failure stops the run: %v", err)
	}
	if want := []string{"step peer-burst: timed out"}; !slices.Equal(b.report.Peer.Errors, want) {
		t.Errorf("errors = %q, want %q", b.report.Peer.Errors, want)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := b.peerFailed(cancelled, "peer-steady", context.Canceled); !errors.Is(err, context.Canceled) {
		t.Errorf("interruption = %v, want it returned", err)
	}
}
