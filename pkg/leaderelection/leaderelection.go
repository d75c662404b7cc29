package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"deployobject.dev/controller/pkg/metrics"
	"deployobject.dev/controller/pkg/options"
)

// Election holds the elector and the state Run shares with
// its callbacks.
type Election struct {
	config   leaderelection.LeaderElectionConfig
	Watchdog *leaderelection.HealthzAdaptor
}

// New is the leader election opts ask for, or nil when the controller
// runs without one.
func New(opts *options.Options, inCluster bool, kubeClient kubernetes.Interface) (*Election, error) {
	if !opts.LeaderElect.Value(inCluster) {
		return nil, nil
	}
	hostname, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("reading hostname for the leader election identity: %w", err)
	}
	ns := opts.LeaseNamespace
	if ns == "" {
		ns = ownNamespace(inCluster)
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, ns, opts.LeaseName,
		kubeClient.CoreV1(), kubeClient.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: hostname + "_" + string(uuid.NewUUID())})
	if err != nil {
		return nil, fmt.Errorf("creating the leader election lock: %w", err)
	}
	// The watchdog fails /healthz when this replica leads but has not renewed
	// its lease for longer than this after the deadline.
	watchdog := leaderelection.NewLeaderHealthzAdaptor(20 * time.Second)
	return &Election{
		Watchdog: watchdog,
		config: leaderelection.LeaderElectionConfig{
			Lock:            lock,
			LeaseDuration:   opts.LeaseDuration,
			RenewDeadline:   opts.RenewDeadline,
			RetryPeriod:     opts.RetryPeriod,
			ReleaseOnCancel: true,
			WatchDog:        watchdog,
			Name:            opts.LeaseName,
		},
	}, nil
}

// ownNamespace is the namespace the controller runs in, from its
// ServiceAccount, or "default" outside a cluster.
func ownNamespace(inCluster bool) string {
	if inCluster {
		if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
			if ns := strings.TrimSpace(string(b)); ns != "" {
				return ns
			}
		}
	}
	return metav1.NamespaceDefault
}

// ErrLeaseLost is returned when the lease was lost rather than released.
var ErrLeaseLost = errors.New("lost the leader lease")

// Run runs work while this replica holds the lease. work gets ctx,
// whose end asks it to finish its syncs in flight, and a context for its
// writes, cancelled when the lease is lost. On ctx's end the lease is only
// released after work has returned, so the successor never writes alongside
// it. Losing the lease, also during a shutdown, cancels the writes at once
// and returns ErrLeaseLost once work has returned: another replica may
// already be writing, so the caller exits at once.
func Run(ctx context.Context, le *Election, metrics *metrics.Metrics, work func(ctx, writes context.Context) error) error {
	logger := klog.FromContext(ctx)
	electionCtx, stopElection := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElection()

	var (
		mu       sync.Mutex
		leading  bool
		stopping bool
		finished bool
		lost     bool
		workErr  error
	)
	workDone := make(chan struct{})
	go func() {
		<-ctx.Done()
		mu.Lock()
		stopping = true
		l := leading
		mu.Unlock()
		if !l {
			stopElection()
		}
	}()

	le.config.Callbacks = leaderelection.LeaderCallbacks{
		OnStartedLeading: func(leaderCtx context.Context) {
			defer close(workDone)
			mu.Lock()
			if stopping {
				mu.Unlock()
				return
			}
			leading = true
			mu.Unlock()
			logger.Info("Became leader, starting workers")
			metrics.Leader.Set(1)
			err := work(ctx, leaderCtx)
			mu.Lock()
			workErr = err
			finished = true
			// Until stopElection below, only the elector cancels leaderCtx,
			// and only when the lease is lost. It calls OnStoppedLeading
			// right after, which the work may beat to this point.
			if leaderCtx.Err() != nil {
				lost = true
			}
			mu.Unlock()
			stopElection()
		},
		OnStoppedLeading: func() {
			metrics.Leader.Set(0)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case leading && (!finished || lost):
				lost = true
				logger.Error(nil, "Lost the leader lease, stopping at once so that no two replicas write")
			case leading:
				logger.Info("Released the leader lease")
			}
		},
		OnNewLeader: func(identity string) {
			logger.Info("Leader", "identity", identity)
		},
	}
	elector, err := leaderelection.NewLeaderElector(le.config)
	if err != nil {
		return fmt.Errorf("creating the leader elector: %w", err)
	}
	elector.Run(electionCtx)
	mu.Lock()
	wasLeading := leading
	mu.Unlock()
	if wasLeading {
		// Whether released or lost, no write may follow this return.
		<-workDone
	}
	mu.Lock()
	defer mu.Unlock()
	if lost {
		return ErrLeaseLost
	}
	return workErr
}
