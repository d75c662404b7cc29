package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	core "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
)

// testElection is a leader election on a fake API server whose lease
// requests fail once the lease is "lost", with timings short enough for a
// unit test.
func testElection(t *testing.T) (*leaderElection, *atomic.Bool) {
	t.Helper()
	client := k8sfake.NewClientset()
	var lost atomic.Bool
	client.PrependReactor("*", "leases", func(core.Action) (bool, runtime.Object, error) {
		if lost.Load() {
			return true, nil, errors.New("the API server is away")
		}
		return false, nil, nil
	})
	opts := &options{leaseName: "test", leaseNamespace: "default",
		leaseDuration: time.Second, renewDeadline: 500 * time.Millisecond, retryPeriod: 100 * time.Millisecond}
	opts.leaderElect.set, opts.leaderElect.val = true, true
	le, err := newLeaderElector(opts, false, client)
	if err != nil {
		t.Fatal(err)
	}
	return le, &lost
}

func testMetrics() *controllerMetrics {
	return &controllerMetrics{leader: prometheus.NewGauge(prometheus.GaugeOpts{Name: "leader"})}
}

// TestLeaseLostCancelsSyncs: when the lease is lost, while working or while
// the syncs in flight finish after SIGTERM, another replica may take over,
// so the syncs' requests are cancelled at once, not at the end of the grace
// period, and runAsLeader reports the loss for the process to exit 1.
func TestLeaseLostCancelsSyncs(t *testing.T) {
	for _, duringShutdown := range []bool{false, true} {
		t.Run(fmt.Sprintf("during shutdown %v", duringShutdown), func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			ctx, stop := context.WithCancel(ctx)
			defer stop()
			le, lost := testElection(t)
			const workers = 2
			c, api := backlogController(t, ctx, 10)
			c.shutdownGrace = time.Minute
			done := make(chan error)
			go func() {
				done <- runAsLeader(ctx, le, testMetrics(), func(ctx, writes context.Context) error { return c.Run(ctx, writes, workers) })
			}()
			waitFor(t, api.started, workers, "the syncs in flight")

			if duringShutdown {
				stop()
			}
			lost.Store(true)
			waitFor(t, api.cancelled, workers, "the requests of the syncs in flight to be cancelled")
			select {
			case err := <-done:
				if !errors.Is(err, errLeaseLost) {
					t.Errorf("runAsLeader returned %v, want errLeaseLost", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("runAsLeader did not return after the lease was lost")
			}
			if got := api.creates.Load(); got != workers {
				t.Errorf("%d syncs started, want only the %d in flight when the lease was lost", got, workers)
			}
		})
	}
}

// TestLeaderElectionClientIsItsOwn: the lease's client has its own rate
// limiter, so that the controller's requests never delay a renewal, and a
// request timeout shorter than the renew deadline, so that a stuck request
// leaves time to retry.
func TestLeaderElectionClientIsItsOwn(t *testing.T) {
	base := &rest.Config{Host: "https://api.example:6443", QPS: 200, Burst: 400, UserAgent: "deployobject-controller/test"}
	const renewDeadline = 10 * time.Second
	cfg := leaderElectionConfig(base, renewDeadline)
	if cfg.Timeout <= 0 || cfg.Timeout >= renewDeadline {
		t.Errorf("request timeout %s, want more than 0 and less than the renew deadline %s", cfg.Timeout, renewDeadline)
	}
	if base.Timeout != 0 || base.RateLimiter != nil {
		t.Errorf("the controller's configuration was modified: timeout %s, rate limiter %v", base.Timeout, base.RateLimiter)
	}
	controllerClient, err := kubernetes.NewForConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	leaseClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if controllerClient.CoordinationV1().RESTClient().GetRateLimiter() == leaseClient.CoordinationV1().RESTClient().GetRateLimiter() {
		t.Error("the lease's client shares the controller's rate limiter")
	}
	if !strings.HasSuffix(cfg.UserAgent, "/leader-election") {
		t.Errorf("user agent %q does not name the leader election client", cfg.UserAgent)
	}
}
