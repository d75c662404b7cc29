package main

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	clientmetrics "k8s.io/client-go/tools/metrics"
	"k8s.io/client-go/util/workqueue"
)

// controllerMetrics are the controller's own metrics.
type controllerMetrics struct {
	reconcile *reconcileMetrics
	leader    prometheus.Gauge
}

// registerMetrics registers, on reg, the Go runtime and process metrics,
// client-go's work queue and REST client metrics, and the controller's own.
// client-go accepts its metric providers once per process, so this is called
// once, from main.
func registerMetrics(reg prometheus.Registerer) *controllerMetrics {
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	workqueue.SetProvider(newWorkqueueMetrics(reg))
	registerClientMetrics(reg)
	leader := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "deployobject_controller_leader",
		Help: "1 while this replica holds the leader lease and reconciles, 0 otherwise.",
	})
	reg.MustRegister(leader)
	return &controllerMetrics{reconcile: newReconcileMetrics(reg), leader: leader}
}

// reconcileMetrics count and time syncs. A nil *reconcileMetrics records
// nothing, which keeps tests free of registries.
type reconcileMetrics struct {
	total    *prometheus.CounterVec
	duration prometheus.Histogram
}

func newReconcileMetrics(reg prometheus.Registerer) *reconcileMetrics {
	m := &reconcileMetrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "deployobject_reconcile_total",
			Help: "Syncs of a DeployObject, by result: success, or error (retried with backoff).",
		}, []string{"result"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "deployobject_reconcile_duration_seconds",
			Help:    "Time taken by one sync of a DeployObject.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}),
	}
	reg.MustRegister(m.total, m.duration)
	return m
}

func (m *reconcileMetrics) observe(d time.Duration, err error) {
	if m == nil {
		return
	}
	m.duration.Observe(d.Seconds())
	result := "success"
	if err != nil {
		result = "error"
	}
	m.total.WithLabelValues(result).Inc()
}

// workqueueMetrics implements client-go's workqueue.MetricsProvider with the
// metric names Kubernetes components use, labelled by queue name.
type workqueueMetrics struct {
	depth, unfinished, longest *prometheus.GaugeVec
	adds, retries              *prometheus.CounterVec
	latency, workDuration      *prometheus.HistogramVec
}

func newWorkqueueMetrics(reg prometheus.Registerer) *workqueueMetrics {
	name := []string{"name"}
	buckets := prometheus.ExponentialBuckets(10e-9, 10, 12)
	m := &workqueueMetrics{
		depth:        prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_depth", Help: "Current depth of the work queue."}, name),
		adds:         prometheus.NewCounterVec(prometheus.CounterOpts{Name: "workqueue_adds_total", Help: "Adds handled by the work queue."}, name),
		latency:      prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "workqueue_queue_duration_seconds", Help: "Seconds an item stays in the work queue before it is processed.", Buckets: buckets}, name),
		workDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "workqueue_work_duration_seconds", Help: "Seconds processing an item from the work queue takes.", Buckets: buckets}, name),
		unfinished:   prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_unfinished_work_seconds", Help: "Seconds of work in progress not yet observed by work_duration; large values mean stuck workers."}, name),
		longest:      prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_longest_running_processor_seconds", Help: "Seconds the longest running processor of the work queue has been running."}, name),
		retries:      prometheus.NewCounterVec(prometheus.CounterOpts{Name: "workqueue_retries_total", Help: "Retries handled by the work queue."}, name),
	}
	reg.MustRegister(m.depth, m.adds, m.latency, m.workDuration, m.unfinished, m.longest, m.retries)
	return m
}

func (m *workqueueMetrics) NewDepthMetric(name string) workqueue.GaugeMetric {
	return m.depth.WithLabelValues(name)
}
func (m *workqueueMetrics) NewAddsMetric(name string) workqueue.CounterMetric {
	return m.adds.WithLabelValues(name)
}
func (m *workqueueMetrics) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return m.latency.WithLabelValues(name)
}
func (m *workqueueMetrics) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return m.workDuration.WithLabelValues(name)
}
func (m *workqueueMetrics) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return m.unfinished.WithLabelValues(name)
}
func (m *workqueueMetrics) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return m.longest.WithLabelValues(name)
}
func (m *workqueueMetrics) NewRetriesMetric(name string) workqueue.CounterMetric {
	return m.retries.WithLabelValues(name)
}

// registerClientMetrics feeds client-go's REST client metrics into reg:
// request counts by status code and HTTP method, and latencies by verb and
// resource, which tell which writes the controller makes.
func registerClientMetrics(reg prometheus.Registerer) {
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rest_client_requests_total",
		Help: "Requests to the API server, by status code, HTTP method and host.",
	}, []string{"code", "method", "host"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rest_client_request_duration_seconds",
		Help:    "Latency of requests to the API server, by verb and resource (with subresource).",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
	}, []string{"verb", "resource"})
	reg.MustRegister(requests, latency)
	clientmetrics.Register(clientmetrics.RegisterOpts{
		RequestResult:  resultMetric{requests},
		RequestLatency: latencyMetric{latency},
	})
}

type resultMetric struct{ v *prometheus.CounterVec }

func (r resultMetric) Increment(_ context.Context, code, method, host string) {
	r.v.WithLabelValues(code, method, host).Inc()
}

type latencyMetric struct{ v *prometheus.HistogramVec }

func (l latencyMetric) Observe(_ context.Context, verb string, u url.URL, d time.Duration) {
	l.v.WithLabelValues(verb, resourceOf(u.Path)).Observe(d.Seconds())
}

// resourceOf extracts "resource" or "resource/subresource" from an API path
// such as /apis/apps/v1/namespaces/ns/deployments/name/status.
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	default:
		return "other"
	}
	if len(parts) >= 2 && parts[0] == "namespaces" && len(parts) != 2 {
		parts = parts[2:]
	}
	switch {
	case len(parts) == 0 || parts[0] == "":
		return "other"
	case len(parts) <= 2 || parts[2] == "":
		return parts[0]
	default:
		return parts[0] + "/" + parts[2]
	}
}
