package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

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
