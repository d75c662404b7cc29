package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"deployobject.dev/controller/pkg/clients"
	"deployobject.dev/controller/pkg/leaderelection"
	"deployobject.dev/controller/pkg/options"
)

// NewAPIServerReadiness checks the API server's /readyz (readable by anyone
// authenticated) for the controller's /readyz. It has its own client, and
// asks at most once a second however often it is probed.
func NewAPIServerReadiness(cfg *rest.Config) (func(context.Context) error, error) {
	client, err := discovery.NewDiscoveryClientForConfig(clients.Dedicated(cfg, "readyz", 2*time.Second))
	if err != nil {
		return nil, fmt.Errorf("creating the readiness client: %w", err)
	}
	c := &cachedCheck{period: time.Second, check: func(ctx context.Context) error {
		return client.RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
	}}
	return c.run, nil
}

// Servers are the metrics and health probe HTTP servers.
type Servers struct {
	list []*http.Server
}

// Start serves the health probes and the metrics on the addresses opts
// name, until Shutdown.
func Start(ctx context.Context, opts *options.Options, registry *prometheus.Registry, secure *SecureMetrics, le *leaderelection.Election, synced []cache.InformerSynced, apiServerReady func(context.Context) error) (*Servers, error) {
	s := &Servers{}
	logger := klog.FromContext(ctx)
	if opts.MetricsAddr != "0" {
		srv := &http.Server{Addr: opts.MetricsAddr, Handler: metricsHandler(registry, opts.Profiling), ReadHeaderTimeout: 5 * time.Second}
		secure.protect(ctx, srv)
		s.list = append(s.list, srv)
	}
	if opts.HealthAddr != "0" {
		s.list = append(s.list, &http.Server{Addr: opts.HealthAddr, Handler: healthHandler(le, synced, apiServerReady), ReadHeaderTimeout: 5 * time.Second})
	}
	for _, srv := range s.list {
		ln, err := listen(srv.Addr)
		if err != nil {
			s.Shutdown(logger)
			return nil, err
		}
		if srv.TLSConfig != nil {
			ln = tls.NewListener(ln, srv.TLSConfig)
		}
		logger.Info("Serving", "address", ln.Addr().String())
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				logger.Error(err, "HTTP server failed", "address", srv.Addr)
			}
		}()
	}
	return s, nil
}

// Shutdown stops the servers, waiting at most 5 seconds for the requests
// in flight.
func (s *Servers) Shutdown(logger klog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range s.list {
		if err := srv.Shutdown(ctx); err != nil {
			logger.Error(err, "Shutting down HTTP server", "address", srv.Addr)
		}
	}
}

// healthHandler serves /healthz, which fails when this replica leads but has
// stopped renewing its lease, and /readyz, which fails until the informer
// caches have synced and whenever the API server does not answer: a
// controller that cannot reach it does no work, whatever its caches say.
func healthHandler(le *leaderelection.Election, synced []cache.InformerSynced, apiServerReady func(context.Context) error) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if le != nil {
			if err := le.Watchdog.Check(r); err != nil {
				http.Error(w, "leader election: "+err.Error(), http.StatusInternalServerError)
				return
			}
		}
		_, _ = w.Write([]byte("ok"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		for _, s := range synced {
			if !s() {
				http.Error(w, "informer caches not synced", http.StatusServiceUnavailable)
				return
			}
		}
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := apiServerReady(ctx); err != nil {
			http.Error(w, "API server: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	return mux
}

// cachedCheck runs check at most once per period, however many probes ask
// at once: the others get its last result. The check is detached from the
// probe that triggered it, so that a probe giving up does not fail the
// others; check bounds its own time.
type cachedCheck struct {
	check  func(context.Context) error
	period time.Duration

	mu  sync.Mutex
	at  time.Time
	err error
}

func (c *cachedCheck) run(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.IsZero() || time.Since(c.at) >= c.period {
		c.err = c.check(context.WithoutCancel(ctx))
		c.at = time.Now()
	}
	return c.err
}

func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	return ln, nil
}

// metricsHandler serves /metrics and, with profiling on, Go's pprof
// endpoints (/debug/pprof/heap?gc=1 forces a garbage collection first).
func metricsHandler(g prometheus.Gatherer, profiling bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	if profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}
