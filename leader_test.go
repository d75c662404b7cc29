package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	k8sfake "k8s.io/client-go/kubernetes/fake"
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
