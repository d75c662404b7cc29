package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

func TestReadyz(t *testing.T) {
	synced := false
	var apiErr error
	h := healthHandler(nil, []cache.InformerSynced{func() bool { return synced }}, func(context.Context) error { return apiErr })
	probe := func(path string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code
	}
	if got := probe("/readyz"); got != http.StatusServiceUnavailable {
		t.Errorf("/readyz before the caches sync = %d, want 503", got)
	}
	synced = true
	if got := probe("/readyz"); got != http.StatusOK {
		t.Errorf("/readyz when synced = %d, want 200", got)
	}
	apiErr = errors.New("connection refused")
	if got := probe("/readyz"); got != http.StatusServiceUnavailable {
		t.Errorf("/readyz with the API server away = %d, want 503", got)
	}
	if got := probe("/healthz"); got != http.StatusOK {
		t.Errorf("/healthz without leader election = %d, want 200: the process is alive", got)
	}
}

// TestReadyzAsksTheAPIServerOncePerPeriod: a flood of probes makes at most
// one request to the API server's /readyz per second, on a client of its
// own.
func TestReadyzAsksTheAPIServerOncePerPeriod(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
			requests.Add(1)
			if !strings.HasSuffix(r.UserAgent(), "/readyz") {
				t.Errorf("/readyz asked with user agent %q, not the readiness client's", r.UserAgent())
			}
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	ready, err := NewAPIServerReadiness(&rest.Config{Host: srv.URL, UserAgent: "deployobject-controller/test"})
	if err != nil {
		t.Fatal(err)
	}
	h := healthHandler(nil, nil, ready)
	probes := func() {
		var wg sync.WaitGroup
		for range 50 {
			wg.Go(func() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
				if rec.Code != http.StatusOK {
					t.Errorf("/readyz = %d", rec.Code)
				}
			})
		}
		wg.Wait()
	}
	start := time.Now()
	probes()
	if got := requests.Load(); got != 1 || time.Since(start) >= time.Second {
		t.Fatalf("50 concurrent probes made %d requests to the API server in %s, want 1", got, time.Since(start))
	}
	time.Sleep(time.Second)
	probes()
	if got := requests.Load(); got != 2 {
		t.Errorf("%d requests after a second round a second later, want 2: the check is cached for a second only", got)
	}
}
