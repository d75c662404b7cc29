package metrics

import (
	"context"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	clientmetrics "k8s.io/client-go/tools/metrics"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-base/metrics/legacyregistry"
	_ "k8s.io/component-base/metrics/prometheus/clientgo/fifo"
	_ "k8s.io/component-base/metrics/prometheus/restclient"
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
)

// FuzzResourceOf: the API path parser behind the request metrics takes any
// path without panicking and never yields an empty label.
func FuzzResourceOf(f *testing.F) {
	for _, p := range []string{
		"/apis/apps/v1/namespaces/ns/deployments/web",
		"/apis/app.deployobject.dev/v1/namespaces/ns/deployobjects/web/status",
		"/api/v1/namespaces/ns/services",
		"/api/v1/namespaces/ns",
		"/api/v1/namespaces",
		"/readyz", "", "/", "//", "/apis", "/api/v1", "/apis/a/b/namespaces",
	} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, path string) {
		if r := resourceOf(path); r == "" {
			t.Fatalf("resourceOf(%q) is empty", path)
		}
	})
}

// FuzzResourceOfNeverNamesAnObject: the resource label of the request
// metrics is bounded: the resource and subresource of a path, never the
// name of an object or a namespace, of which a cluster has without bound.
func FuzzResourceOfNeverNamesAnObject(f *testing.F) {
	f.Add("ns", "deployments", "web", "status")
	f.Add("kube-system", "services", "deployments", "")
	f.Fuzz(func(t *testing.T, namespace, resource, name, subresource string) {
		for _, s := range []string{namespace, resource, name, subresource} {
			if strings.Contains(s, "/") {
				t.Skip("a segment of a path holds no slash")
			}
		}
		if namespace == "" || resource == "" || name == "" {
			t.Skip("empty segments are not a request for an object")
		}
		want := resource
		if subresource != "" {
			want += "/" + subresource
		}
		for _, path := range []string{
			"/apis/apps/v1/namespaces/" + namespace + "/" + resource + "/" + name + "/" + subresource,
			"/api/v1/namespaces/" + namespace + "/" + resource + "/" + name + "/" + subresource,
		} {
			if got := resourceOf(path); got != want {
				t.Errorf("resourceOf(%q) = %q, want %q", path, got, want)
			}
		}
		for _, path := range []string{
			"/apis/apps/v1/namespaces/" + namespace + "/" + resource,
			"/apis/apps/v1/" + resource + "/" + name,
		} {
			if got := resourceOf(path); got != resource {
				t.Errorf("resourceOf(%q) = %q, want %q", path, got, resource)
			}
		}
	})
}

func TestResourceOf(t *testing.T) {
	for path, want := range map[string]string{
		"/apis/apps/v1/namespaces/ns/deployments/web":                          "deployments",
		"/apis/apps/v1/namespaces/ns/deployments":                              "deployments",
		"/apis/app.deployobject.dev/v1/namespaces/ns/deployobjects/web/status": "deployobjects/status",
		"/api/v1/namespaces/ns/services/web":                                   "services",
		"/api/v1/namespaces/ns/events":                                         "events",
		"/api/v1/namespaces/ns":                                                "namespaces",
		"/apis/coordination.k8s.io/v1/namespaces/ns/leases/x":                  "leases",
		"/readyz": "other",
	} {
		if got := resourceOf(path); got != want {
			t.Errorf("resourceOf(%q) = %q, want %q", path, got, want)
		}
	}
}

// shape is what a dashboard or an alert depends on: a metric's type and
// label names.
type shape struct {
	kind   dto.MetricType
	labels string
}

func shapes(t *testing.T, g prometheus.Gatherer) map[string]shape {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]shape{}
	for _, f := range families {
		var names []string
		for _, l := range f.GetMetric()[0].GetLabel() {
			names = append(names, l.GetName())
		}
		slices.Sort(names)
		out[f.GetName()] = shape{f.GetType(), strings.Join(names, ",")}
	}
	return out
}

// TestClientGoMetricsMatchUpstream: the controller exports client-go's REST
// client, work queue and informer metrics under the names, types and label
// names kube-controller-manager exports them with (component-base), so that
// dashboards and alerts written for Kubernetes components apply.
func TestClientGoMetricsMatchUpstream(t *testing.T) {
	reg := prometheus.NewRegistry()
	ours := newClientMetrics(reg)
	queues := newWorkqueueMetrics(reg)
	informers := NewInformerMetrics(reg)

	// The same observations through the controller's hooks and through
	// upstream's, which the imports above made client-go's globals.
	ctx := context.Background()
	u := url.URL{Scheme: "https", Host: "10.0.0.1:6443", Path: "/api/v1/namespaces/{namespace}/services/{name}"}
	for _, o := range []clientmetrics.RegisterOpts{ours, {
		RequestResult:      clientmetrics.RequestResult,
		RequestLatency:     clientmetrics.RequestLatency,
		RateLimiterLatency: clientmetrics.RateLimiterLatency,
		RequestRetry:       clientmetrics.RequestRetry,
	}} {
		o.RequestResult.Increment(ctx, "200", "GET", u.Host)
		o.RequestLatency.Observe(ctx, "GET", u, time.Millisecond)
		o.RateLimiterLatency.Observe(ctx, "GET", u, time.Millisecond)
		o.RequestRetry.IncrementRetry(ctx, "500", "GET", u.Host)
	}

	queues.NewDepthMetric("q").Inc()
	queues.NewAddsMetric("q").Inc()
	queues.NewLatencyMetric("q").Observe(1)
	queues.NewWorkDurationMetric("q").Observe(1)
	queues.NewUnfinishedWorkSecondsMetric("q").Set(1)
	queues.NewLongestRunningProcessorSecondsMetric("q").Set(1)
	queues.NewRetriesMetric("q").Inc()
	upstreamQueue := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "upstream-queue"})
	defer upstreamQueue.ShutDown()
	upstreamQueue.AddRateLimited("a")

	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", ResourceVersion: "7"}}
	runNamedInformer(t, "upstream-informer", svc, nil)
	runNamedInformer(t, "our-informer", svc, informers)

	want := []string{
		"rest_client_requests_total", "rest_client_request_duration_seconds",
		"rest_client_rate_limiter_duration_seconds", "rest_client_request_retries_total",
		"workqueue_depth", "workqueue_adds_total", "workqueue_queue_duration_seconds",
		"workqueue_work_duration_seconds", "workqueue_unfinished_work_seconds",
		"workqueue_longest_running_processor_seconds", "workqueue_retries_total",
		"informer_queued_items", "informer_processing_latency_seconds", "informer_store_resource_version",
	}
	got, upstream := shapes(t, reg), shapes(t, legacyregistry.DefaultGatherer)
	// client-go gives a store metrics only from a provider passed to its
	// informer, which upstream's unexported one cannot be; component-base
	// declares the store's gauge with the labels of the queue's.
	upstream["informer_store_resource_version"] = shape{dto.MetricType_GAUGE, upstream["informer_queued_items"].labels}
	for _, name := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("%s is not exported", name)
			continue
		}
		if u, ok := upstream[name]; !ok {
			t.Errorf("%s: upstream exported nothing to compare with", name)
		} else if g != u {
			t.Errorf("%s is %v with labels %s; upstream it is %v with labels %s", name, g.kind, g.labels, u.kind, u.labels)
		}
	}
	for name := range got {
		if !slices.Contains(want, name) && !strings.HasPrefix(name, "deployobject_") {
			t.Errorf("%s is exported without being checked here", name)
		}
	}
}

// runNamedInformer runs an informer of Services, named name, over a fake
// clientset holding svc until it has synced, with provider as its metrics
// provider (nil: client-go's global one).
func runNamedInformer(t *testing.T, name string, svc *corev1.Service, provider cache.InformerMetricsProvider) {
	t.Helper()
	client := k8sfake.NewClientset(svc)
	informerName, err := cache.NewInformerName(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(informerName.Release)
	services := client.CoreV1().Services(metav1.NamespaceAll)
	inf := cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return services.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return services.Watch(ctx, o)
		},
	}, client), &corev1.Service{}, cache.SharedIndexInformerOptions{
		Identifier:              informerName.WithResource(corev1.SchemeGroupVersion.WithResource("services")),
		InformerMetricsProvider: provider,
	})
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go inf.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatalf("informer %s did not sync", name)
	}
}

// TestRequestLatencyLabels: request latencies are labelled upstream's way,
// by verb and host, and the controller's own histogram tells the resource
// written, from the path template client-go reports.
func TestRequestLatencyLabels(t *testing.T) {
	reg := prometheus.NewRegistry()
	opts := newClientMetrics(reg)
	u := url.URL{Scheme: "https", Host: "10.0.0.1:6443", Path: "/apis/app.deployobject.dev/v1/namespaces/{namespace}/deployobjects/{name}/status"}
	opts.RequestLatency.Observe(context.Background(), "PATCH", u, 20*time.Millisecond)
	opts.RateLimiterLatency.Observe(context.Background(), "PATCH", u, time.Millisecond)
	opts.RequestRetry.IncrementRetry(context.Background(), "429", "PATCH", u.Host)

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]map[string]string{}
	var resourceCount uint64
	for _, f := range families {
		for _, m := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			labels[f.GetName()] = l
			if f.GetName() == "deployobject_api_request_duration_seconds" {
				resourceCount += m.GetHistogram().GetSampleCount()
			}
		}
	}
	for name, want := range map[string]map[string]string{
		"rest_client_request_duration_seconds":      {"verb": "PATCH", "host": "10.0.0.1:6443"},
		"rest_client_rate_limiter_duration_seconds": {"verb": "PATCH", "host": "10.0.0.1:6443"},
		"rest_client_request_retries_total":         {"code": "429", "verb": "PATCH", "host": "10.0.0.1:6443"},
		"deployobject_api_request_duration_seconds": {"verb": "PATCH", "resource": "deployobjects/status"},
	} {
		if got := labels[name]; !maps.Equal(got, want) {
			t.Errorf("%s has labels %v, want %v", name, got, want)
		}
	}
	if resourceCount != 1 {
		t.Errorf("deployobject_api_request_duration_seconds counted %d requests, want 1: time in the rate limiter is no request", resourceCount)
	}
}
