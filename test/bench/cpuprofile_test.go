package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeProfiles stands in for a controller's metrics server: it answers the
// n-th profile request with answer(n, r).
type fakeProfiles struct {
	mu       sync.Mutex
	requests int
	answer   func(n int, w http.ResponseWriter, r *http.Request)
}

func (f *fakeProfiles) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/debug/pprof/profile" || r.URL.Query().Get("seconds") != "10" {
		http.Error(w, "unexpected request "+r.URL.String(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.requests++
	n := f.requests
	f.mu.Unlock()
	f.answer(n, w, r)
}

func (f *fakeProfiles) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

// logLines collects what the profiler logs, from its goroutine.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func fakeController(metricsURL string) *controller {
	return &controller{label: "backlog", metricsURL: metricsURL, done: make(chan struct{})}
}

func readFiles(t *testing.T, paths []string) []string {
	t.Helper()
	var out []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, filepath.Base(p)+": "+string(b))
	}
	return out
}

// A controller starts its metrics server a moment after its process: the
// profiler waits for it, then keeps consecutive profiles, and at finish
// completes the one in flight and starts no other.
func TestCPUProfilerFromStartToFinish(t *testing.T) {
	addr, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	profilers := make(chan *cpuProfiler, 1)
	fake := &fakeProfiles{answer: func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 3 {
			p := <-profilers
			select {
			case <-p.stop:
			case <-r.Context().Done():
				return
			}
		}
		fmt.Fprintf(w, "profile %d", n)
	}}
	dir := t.TempDir()
	var logs logLines
	p := startCPUProfiler(context.Background(), fakeController("http://"+addr), dir, logs.logf)
	profilers <- p

	time.Sleep(100 * time.Millisecond)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(fake)
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	for deadline := time.Now().Add(10 * time.Second); fake.count() < 3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d profile requests after 10s, want 3; log:\n%s", fake.count(), &logs)
		}
	}

	files := p.finish()
	want := []string{"cpu-backlog-01.pprof: profile 1", "cpu-backlog-02.pprof: profile 2", "cpu-backlog-03.pprof: profile 3"}
	if got := readFiles(t, files); !slices.Equal(got, want) {
		t.Errorf("profiles kept = %q, want %q", got, want)
	}
	if got := fake.count(); got != 3 {
		t.Errorf("%d profile requests, want 3", got)
	}
	wantLog := "controller backlog: CPU profile in 3 files of 10s: `go tool pprof -top " + filepath.Join(dir, "cpu-backlog-*.pprof") + "` merges them"
	if got := logs.String(); got != wantLog {
		t.Errorf("log:\n%s\nwant:\n%s", got, wantLog)
	}
	if again := p.finish(); again != nil {
		t.Errorf("second finish = %q, want nothing", again)
	}
}

// A profile that fails ends the profiling: the profiles already kept stay,
// and the failure is logged, not returned.
func TestCPUProfilerFailure(t *testing.T) {
	tests := []struct {
		name    string
		answers []int
		want    []string
		wantLog string
	}{
		{"profiling off", []int{http.StatusNotFound}, nil, "CPU profile 1 not kept, and no further one taken: http://"},
		{"another profile running", []int{http.StatusOK, http.StatusInternalServerError}, []string{"cpu-backlog-01.pprof: profile 1"},
			"CPU profile 2 not kept, and no further one taken: http://"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeProfiles{answer: func(n int, w http.ResponseWriter, _ *http.Request) {
				if n > len(tt.answers) {
					t.Errorf("profile request %d after a failure", n)
					return
				}
				w.WriteHeader(tt.answers[n-1])
				fmt.Fprintf(w, "profile %d", n)
			}}
			srv := httptest.NewServer(fake)
			defer srv.Close()
			var logs logLines
			p := startCPUProfiler(context.Background(), fakeController(srv.URL), t.TempDir(), logs.logf)
			<-p.done
			if got := readFiles(t, p.finish()); !slices.Equal(got, tt.want) {
				t.Errorf("profiles kept = %q, want %q", got, tt.want)
			}
			log := logs.String()
			if !strings.Contains(log, tt.wantLog) || !strings.Contains(log, fmt.Sprintf("answered %d", tt.answers[len(tt.answers)-1])) {
				t.Errorf("log %q does not report the failure", log)
			}
		})
	}
}

// A controller that exits before it serves is not waited for.
func TestCPUProfilerControllerExited(t *testing.T) {
	addr, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	ctrl := fakeController("http://" + addr)
	close(ctrl.done)
	var logs logLines
	p := startCPUProfiler(context.Background(), ctrl, t.TempDir(), logs.logf)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the profiler still waits for a controller that exited")
	}
	if files := p.finish(); files != nil {
		t.Errorf("profiles kept = %q, want none", files)
	}
	if log := logs.String(); !strings.Contains(log, "connection refused") {
		t.Errorf("log %q does not report the failure", log)
	}
}

// Profiling costs the controller CPU, a judged figure: a run profiles only
// when asked to.
func TestCPUProfileIsOptIn(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"--cpu-profile"}, true},
		{[]string{"--cpu-profile=false"}, false},
	} {
		o, err := parseFlags(append([]string{"--kubeconfig", "kc"}, tt.args...))
		if err != nil {
			t.Fatal(err)
		}
		if o.cpuProfile != tt.want {
			t.Errorf("%q: cpuProfile = %v, want %v", tt.args, o.cpuProfile, tt.want)
		}
	}
}

// Without --cpu-profile a backlog has no profiler, and finishing it must
// not hold up the heap profile that follows.
func TestCPUProfilerNilFinish(t *testing.T) {
	var p *cpuProfiler
	if files := p.finish(); files != nil {
		t.Errorf("finish of no profiler = %q", files)
	}
}
