package main

// What a scaffold does not have and the benchmark reads: the harness flags
// it starts every controller with, pprof on the metrics server, a readyz
// that waits for the caches, and two metrics of deployobject-controller.
// The metrics exist only so that one harness reads both controllers; they
// are registered the way kubebuilder's book adds custom metrics, in
// controller-runtime's registry from init.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

var (
	reconcileTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "deployobject_reconcile_total",
		Help: "Reconciles of a DeployObject, by result: success or error. For the benchmark only: controller_runtime_reconcile_total counts the same.",
	}, []string{"result"})
	requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "deployobject_api_request_duration_seconds",
		Help:    "Latency of requests to the API server, by verb and resource (with subresource). For the benchmark only.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
	}, []string{"verb", "resource"})
)

func init() {
	metrics.Registry.MustRegister(reconcileTotal, requestDuration)
}

// harnessFlags are the flags the benchmark passes besides the scaffold's.
type harnessFlags struct {
	profiling    bool
	resyncPeriod time.Duration
}

func bindHarnessFlags(fs *flag.FlagSet) *harnessFlags {
	h := &harnessFlags{}
	fs.BoolVar(&h.profiling, "profiling", false, "Serve /debug/pprof/ on the metrics server.")
	fs.DurationVar(&h.resyncPeriod, "resync-period", 0, "How often the informers resync; 0 keeps controller-runtime's default (10 hours with jitter).")
	return h
}

func (h *harnessFlags) metricsHandlers() map[string]http.Handler {
	if !h.profiling {
		return nil
	}
	return map[string]http.Handler{
		"/debug/pprof/":        http.HandlerFunc(pprof.Index),
		"/debug/pprof/cmdline": http.HandlerFunc(pprof.Cmdline),
		"/debug/pprof/profile": http.HandlerFunc(pprof.Profile),
		"/debug/pprof/symbol":  http.HandlerFunc(pprof.Symbol),
		"/debug/pprof/trace":   http.HandlerFunc(pprof.Trace),
	}
}

func (h *harnessFlags) cacheOptions() cache.Options {
	if h.resyncPeriod == 0 {
		return cache.Options{}
	}
	return cache.Options{SyncPeriod: &h.resyncPeriod}
}

// instrument times every request of cfg's clients by verb and resource.
func (h *harnessFlags) instrument(cfg *rest.Config) *rest.Config {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return timedTransport{rt} })
	return cfg
}

type timedTransport struct{ next http.RoundTripper }

func (t timedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	requestDuration.WithLabelValues(req.Method, apiResource(req.URL.Path)).Observe(time.Since(start).Seconds())
	return resp, err
}

// apiResource names the resource of an API path, with its subresource:
// /apis/app.deployobject.dev/v1/namespaces/ns/deployobjects/x/status is
// "deployobjects/status", /api/v1/namespaces/ns/services is "services".
func apiResource(path string) string {
	tail, ok := strings.CutPrefix(path, "/api/v1/")
	if !ok {
		// /apis/<group>/<version>/...
		parts := strings.SplitN(strings.TrimPrefix(path, "/apis/"), "/", 3)
		if !strings.HasPrefix(path, "/apis/") || len(parts) < 3 {
			return "other"
		}
		tail = parts[2]
	}
	segs := strings.Split(strings.Trim(tail, "/"), "/")
	// namespaces/<ns>/<resource>/... names a namespaced resource; a bare
	// namespaces or namespaces/<ns> is the namespace itself.
	if segs[0] == "namespaces" && len(segs) > 2 {
		segs = segs[2:]
	}
	switch {
	case segs[0] == "":
		return "other"
	case len(segs) > 2:
		return segs[0] + "/" + segs[2]
	}
	return segs[0]
}

// countReconciles counts the reconciles of r by result.
func countReconciles(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		res, err := r.Reconcile(ctx, req)
		result := "success"
		if err != nil {
			result = "error"
		}
		reconcileTotal.WithLabelValues(result).Inc()
		return res, err
	})
}

// cachesSynced is ready once the informers of objs have synced, as
// deployobject-controller's /readyz is: the benchmark times a start up to
// it. The scaffold's readyz is healthz.Ping, ready before the caches are.
func cachesSynced(c cache.Cache, objs ...client.Object) healthz.Checker {
	return func(req *http.Request) error {
		var errs []error
		for _, obj := range objs {
			inf, err := c.GetInformer(req.Context(), obj, cache.BlockUntilSynced(false))
			if err != nil {
				errs = append(errs, fmt.Errorf("informer of %T: %w", obj, err))
				continue
			}
			if !inf.HasSynced() {
				errs = append(errs, fmt.Errorf("informer of %T has not synced", obj))
			}
		}
		return errors.Join(errs...)
	}
}
