package metrics

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/client-go/tools/cache"
	clientmetrics "k8s.io/client-go/tools/metrics"
	"k8s.io/client-go/util/workqueue"
)

// Metrics are the controller's own metrics, and the provider of
// client-go's informer metrics, which is passed to each informer.
type Metrics struct {
	Reconcile *ReconcileMetrics
	Leader    prometheus.Gauge
	Informers cache.InformerMetricsProvider
}

// Register registers, on reg, the Go runtime and process metrics,
// client-go's work queue, REST client and informer metrics, and the
// controller's own. client-go accepts its work queue and REST client metric
// providers once per process, so this is called once, from main, before any
// client or queue exists.
func Register(reg prometheus.Registerer) *Metrics {
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	workqueue.SetProvider(newWorkqueueMetrics(reg))
	clientmetrics.Register(newClientMetrics(reg))
	leader := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "deployobject_controller_leader",
		Help: "1 while this replica holds the leader lease and reconciles, 0 otherwise.",
	})
	reg.MustRegister(leader)
	return &Metrics{Reconcile: newReconcileMetrics(reg), Leader: leader, Informers: NewInformerMetrics(reg)}
}

// ReconcileMetrics count and time syncs. A nil *ReconcileMetrics records
// nothing, which keeps tests free of registries.
type ReconcileMetrics struct {
	total    *prometheus.CounterVec
	duration prometheus.Histogram
}

func newReconcileMetrics(reg prometheus.Registerer) *ReconcileMetrics {
	m := &ReconcileMetrics{
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

func (m *ReconcileMetrics) Observe(d time.Duration, err error) {
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
// metric names and labels Kubernetes components use (component-base's
// workqueue package), labelled by queue name. The latency buckets reach
// 1000 s rather than upstream's 10 s: a backlog keeps keys queued longer.
type workqueueMetrics struct {
	depth, unfinished, longest *prometheus.GaugeVec
	adds, retries              *prometheus.CounterVec
	latency, workDuration      *prometheus.HistogramVec
}

func newWorkqueueMetrics(reg prometheus.Registerer) *workqueueMetrics {
	name := []string{"name"}
	buckets := prometheus.ExponentialBuckets(10e-9, 10, 12)
	m := &workqueueMetrics{
		depth:        prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_depth", Help: "Current depth of workqueue"}, name),
		adds:         prometheus.NewCounterVec(prometheus.CounterOpts{Name: "workqueue_adds_total", Help: "Total number of adds handled by workqueue"}, name),
		latency:      prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "workqueue_queue_duration_seconds", Help: "How long in seconds an item stays in workqueue before being requested.", Buckets: buckets}, name),
		workDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "workqueue_work_duration_seconds", Help: "How long in seconds processing an item from workqueue takes.", Buckets: buckets}, name),
		unfinished:   prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_unfinished_work_seconds", Help: "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads."}, name),
		longest:      prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_longest_running_processor_seconds", Help: "How many seconds has the longest running processor for workqueue been running."}, name),
		retries:      prometheus.NewCounterVec(prometheus.CounterOpts{Name: "workqueue_retries_total", Help: "Total number of retries handled by workqueue"}, name),
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

// informerMetrics implements client-go's cache.InformerMetricsProvider with
// the names and labels of component-base's clientgo/fifo package, for the
// informers that carry a name (see caches.NamedInformers).
type informerMetrics struct {
	queued, resourceVersion *prometheus.GaugeVec
	latency                 *prometheus.HistogramVec
}

func NewInformerMetrics(reg prometheus.Registerer) *informerMetrics {
	labels := []string{"name", "group", "version", "resource"}
	m := &informerMetrics{
		queued: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "informer_queued_items",
			Help: "Number of items currently queued in the FIFO.",
		}, labels),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "informer_processing_latency_seconds",
			Help:    "Time taken to process events after popping from the queue.",
			Buckets: []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
		}, labels),
		resourceVersion: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "informer_store_resource_version",
			Help: "The 15 least significant digits of the resource version of the store.",
		}, labels),
	}
	reg.MustRegister(m.queued, m.latency, m.resourceVersion)
	return m
}

func informerLabels(id cache.InformerNameAndResource) []string {
	gvr := id.GroupVersionResource()
	return []string{id.Name(), gvr.Group, gvr.Version, gvr.Resource}
}

func (m *informerMetrics) NewQueuedItemMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	return reservedMetric{id, m.queued.WithLabelValues(informerLabels(id)...).Set}
}

func (m *informerMetrics) NewProcessingLatencyMetric(id cache.InformerNameAndResource) cache.HistogramMetric {
	return reservedMetric{id, m.latency.WithLabelValues(informerLabels(id)...).Observe}
}

func (m *informerMetrics) NewStoreResourceVersionMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	return reservedMetric{id, m.resourceVersion.WithLabelValues(informerLabels(id)...).Set}
}

// reservedMetric is a gauge or a histogram that records only while its
// informer's name is reserved, as client-go asks: a released name may be
// taken by another informer.
type reservedMetric struct {
	id     cache.InformerNameAndResource
	record func(float64)
}

func (r reservedMetric) Set(v float64) { r.Observe(v) }

func (r reservedMetric) Observe(v float64) {
	if r.id.Reserved() {
		r.record(v)
	}
}

// Client-go's REST client metrics, under the names, labels and buckets
// Kubernetes components register them with (k8s.io/component-base's
// restclient package), so that dashboards and alerts written for
// kube-controller-manager work unchanged. That package registers them in
// component-base's global registry; the controller keeps its own.
//
// Upstream labels latencies by host alone, which does not tell which
// writes the controller makes: deployobject_api_request_duration_seconds
// adds them by verb and resource, from the same observations.
var upstreamLatencyBuckets = []float64{0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60}

// newClientMetrics registers client-go's REST client metrics on reg and
// returns the hooks that feed them, for clientmetrics.Register.
func newClientMetrics(reg prometheus.Registerer) clientmetrics.RegisterOpts {
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rest_client_requests_total",
		Help: "Number of HTTP requests, partitioned by status code, method, and host.",
	}, []string{"code", "method", "host"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rest_client_request_duration_seconds",
		Help:    "Request latency in seconds. Broken down by verb, and host.",
		Buckets: upstreamLatencyBuckets,
	}, []string{"verb", "host"})
	rateLimiter := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rest_client_rate_limiter_duration_seconds",
		Help:    "Client side rate limiter latency in seconds. Broken down by verb, and host.",
		Buckets: upstreamLatencyBuckets,
	}, []string{"verb", "host"})
	retries := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rest_client_request_retries_total",
		Help: "Number of request retries, partitioned by status code, verb, and host.",
	}, []string{"code", "verb", "host"})
	byResource := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "deployobject_api_request_duration_seconds",
		Help:    "Latency of requests to the API server, by verb and resource (with subresource).",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
	}, []string{"verb", "resource"})
	reg.MustRegister(requests, latency, rateLimiter, retries, byResource)
	return clientmetrics.RegisterOpts{
		RequestResult:      resultMetric{requests},
		RequestLatency:     latencyMetric{byHost: latency, byResource: byResource},
		RateLimiterLatency: latencyMetric{byHost: rateLimiter},
		RequestRetry:       retryMetric{retries},
	}
}

type resultMetric struct{ v *prometheus.CounterVec }

func (r resultMetric) Increment(_ context.Context, code, method, host string) {
	r.v.WithLabelValues(code, method, host).Inc()
}

type retryMetric struct{ v *prometheus.CounterVec }

func (r retryMetric) IncrementRetry(_ context.Context, code, verb, host string) {
	r.v.WithLabelValues(code, verb, host).Inc()
}

// latencyMetric observes into byHost and, when set, byResource.
type latencyMetric struct{ byHost, byResource *prometheus.HistogramVec }

func (l latencyMetric) Observe(_ context.Context, verb string, u url.URL, d time.Duration) {
	l.byHost.WithLabelValues(verb, u.Host).Observe(d.Seconds())
	if l.byResource != nil {
		l.byResource.WithLabelValues(verb, resourceOf(u.Path)).Observe(d.Seconds())
	}
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
