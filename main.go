// Command deployobject-controller keeps a Deployment and a Service in line
// with every DeployObject (app.deployobject.dev/v1) and reports their state in
// the DeployObject's status.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/discovery"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	kubescheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	logsapi "k8s.io/component-base/logs/api/v1"
	_ "k8s.io/component-base/logs/json/register" // --logging-format=json
	"k8s.io/klog/v2"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	clientset "deployobject.dev/controller/pkg/generated/clientset/versioned"
	appscheme "deployobject.dev/controller/pkg/generated/clientset/versioned/scheme"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	opts, sections, err := parseFlags(os.Args[1:])
	switch {
	case err != nil:
		fmt.Fprintf(os.Stderr, "Error: %v\nRun '%s --help' for usage.\n", err, os.Args[0])
		os.Exit(2)
	case opts.help:
		printUsage(os.Stdout, sections)
		return
	case opts.showVersion:
		fmt.Println(version)
		return
	}
	if err := opts.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "invalid flags:", err)
		os.Exit(2)
	}
	// Before anything logs: the format applies to every line.
	if err := logsapi.ValidateAndApply(opts.logs, opts.features); err != nil {
		fmt.Fprintln(os.Stderr, "invalid logging flags:", err)
		os.Exit(2)
	}

	ctx := klog.NewContext(signalContext(), klog.Background())
	if err := run(ctx, opts); err != nil {
		klog.FromContext(ctx).Error(err, "Controller failed")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
	klog.Flush()
}

// signalContext is cancelled on the first SIGTERM or SIGINT; a second one
// exits at once.
func signalContext() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGTERM, os.Interrupt)
	go func() {
		<-ch
		cancel()
		<-ch
		os.Exit(1)
	}()
	return ctx
}

func run(ctx context.Context, opts *options) error {
	logger := klog.FromContext(ctx)
	logger.Info("Starting", "version", version, "namespace", namespaceOrAll(opts.namespace), "workers", opts.workers, "trackSecrets", opts.trackSecrets)

	cfg, inCluster, err := restConfig(opts)
	if err != nil {
		return err
	}
	kubeClient, err := kubernetes.NewForConfig(builtInConfig(cfg, opts.contentType))
	if err != nil {
		return fmt.Errorf("creating Kubernetes client: %w", err)
	}
	client, err := clientset.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating DeployObject client: %w", err)
	}

	gatewayClient, err := gatewayclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating Gateway API client: %w", err)
	}

	registry := prometheus.NewRegistry()
	metrics := registerMetrics(registry)

	scheme := runtime.NewScheme()
	utilruntime.Must(kubescheme.AddToScheme(scheme))
	utilruntime.Must(appscheme.AddToScheme(scheme))
	// Events recorded by syncs that finish during the shutdown grace period
	// must still be sent: the broadcaster outlives the signal, until run returns.
	broadcaster := record.NewBroadcaster(record.WithContext(context.WithoutCancel(ctx)))
	broadcaster.StartStructuredLogging(3)
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kubeClient.CoreV1().Events("")})
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme, corev1.EventSource{Component: controllerName})

	informerName, err := cache.NewInformerName(controllerName)
	if err != nil {
		return fmt.Errorf("naming the informers: %w", err)
	}
	defer informerName.Release()
	dobjFactory, childFactory := newInformerFactories(kubeClient, client, opts.namespace, opts.resyncPeriod, namedInformers{informerName, metrics.informers})
	registerConfigInformers(childFactory, opts.namespace, opts.trackSecrets, namedInformers{informerName, metrics.informers})

	controller, err := NewController(ctx, kubeClient, client,
		dobjFactory.App().V1().DeployObjects(),
		childFactory.Apps().V1().Deployments(),
		childFactory.Core().V1().Services(),
		childFactory.Policy().V1().PodDisruptionBudgets(),
		childFactory.Autoscaling().V2().HorizontalPodAutoscalers(),
		childFactory.Networking().V1().Ingresses(),
		&gatewayRoutes{
			client:    gatewayClient,
			discovery: kubeClient.Discovery(),
			recheck:   gatewayAPIRecheck,
			informer: func() (cache.SharedIndexInformer, error) {
				return newHTTPRouteInformer(gatewayClient, opts.namespace, namedInformers{informerName, metrics.informers})
			},
		},
		recorder, metrics.reconcile)
	if err != nil {
		return err
	}
	controller.shutdownGrace = opts.shutdownGrace
	controller.childBatchPeriod = opts.childBatch
	controller.podSecurity = opts.podSecurity
	var secrets coreinformers.SecretInformer
	if opts.trackSecrets {
		secrets = childFactory.Core().V1().Secrets()
	}
	if err := controller.trackConfig(ctx, dobjFactory.App().V1().DeployObjects(), childFactory.Core().V1().ConfigMaps(), secrets, opts.maxConfigRollouts, opts.configRolloutDelay); err != nil {
		return err
	}
	registry.MustRegister(newRolloutCollector(controller.config.limiter))

	// Every replica fills its caches, leader or not, so that a new leader
	// starts working at once.
	dobjFactory.Start(ctx.Done())
	childFactory.Start(ctx.Done())
	defer dobjFactory.Shutdown()
	defer childFactory.Shutdown()
	// HTTPRoutes are watched once the cluster serves them, which it may
	// start doing at any time.
	go controller.watchGatewayAPI(ctx)

	// Lease renewal has a client of its own, so that a busy reconcile loop
	// cannot delay it.
	leaseClient, err := kubernetes.NewForConfig(builtInConfig(leaderElectionConfig(cfg, opts.renewDeadline), opts.contentType))
	if err != nil {
		return fmt.Errorf("creating the leader election client: %w", err)
	}
	elector, err := newLeaderElector(opts, inCluster, leaseClient)
	if err != nil {
		return err
	}
	apiServerReady, err := newAPIServerReadiness(cfg)
	if err != nil {
		return err
	}
	secure, err := newSecureMetrics(opts, kubeClient)
	if err != nil {
		return err
	}
	servers, err := startServers(ctx, opts, registry, secure, elector, controller.cachesSynced, apiServerReady)
	if err != nil {
		return err
	}
	defer servers.shutdown(logger)

	if elector == nil {
		metrics.leader.Set(1)
		return controller.Run(ctx, context.WithoutCancel(ctx), opts.workers)
	}
	err = runAsLeader(ctx, elector, metrics, func(ctx, writes context.Context) error {
		return controller.Run(ctx, writes, opts.workers)
	})
	if errors.Is(err, errLeaseLost) {
		// At once: the deferred shutdowns would wait for the informers,
		// which run until a signal.
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
	return err
}

func restConfig(opts *options) (*rest.Config, bool, error) {
	inCluster := opts.kubeconfig == "" && opts.master == ""
	cfg, err := clientcmd.BuildConfigFromFlags(opts.master, opts.kubeconfig)
	if err != nil {
		return nil, false, fmt.Errorf("building client configuration: %w", err)
	}
	cfg.QPS = opts.qps
	cfg.Burst = opts.burst
	cfg.UserAgent = fmt.Sprintf("%s/%s", controllerName, version)
	return cfg, inCluster, nil
}

const (
	contentTypeProtobuf = "application/vnd.kubernetes.protobuf"
	contentTypeJSON     = "application/json"
)

// builtInConfig is cfg for clients of built-in kinds, which speak
// contentType. The content type is set even when it is protobuf, which
// client-go's generated clients would pick by themselves: an explicit
// JSON would otherwise be the only way the flag showed, and the choice
// would depend on client-go's version. Protobuf answers still fall back to
// JSON for a kind that has no protobuf form.
func builtInConfig(cfg *rest.Config, contentType string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.ContentType = contentType
	if contentType == contentTypeProtobuf {
		c.AcceptContentTypes = contentTypeProtobuf + "," + contentTypeJSON
	}
	return c
}

// dedicatedConfig is cfg for a client of its own: requests of the
// controller's clients never hold it back, and each of its requests gives
// up after timeout.
func dedicatedConfig(cfg *rest.Config, name string, timeout time.Duration) *rest.Config {
	c := rest.CopyConfig(cfg)
	// client-go's default limits are plenty for a few requests per second.
	c.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(rest.DefaultQPS, rest.DefaultBurst)
	c.Timeout = timeout
	return rest.AddUserAgent(c, name)
}

// leaderElectionConfig is the configuration of the lease's client. A request
// gives up after half the renew deadline, so that one request stuck on a
// dead connection leaves time to retry before the lease is given up.
func leaderElectionConfig(cfg *rest.Config, renewDeadline time.Duration) *rest.Config {
	return dedicatedConfig(cfg, "leader-election", renewDeadline/2)
}

// newAPIServerReadiness checks the API server's /readyz (readable by anyone
// authenticated) for the controller's /readyz. It has its own client, and
// asks at most once a second however often it is probed.
func newAPIServerReadiness(cfg *rest.Config) (func(context.Context) error, error) {
	client, err := discovery.NewDiscoveryClientForConfig(dedicatedConfig(cfg, "readyz", 2*time.Second))
	if err != nil {
		return nil, fmt.Errorf("creating the readiness client: %w", err)
	}
	c := &cachedCheck{period: time.Second, check: func(ctx context.Context) error {
		return client.RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
	}}
	return c.run, nil
}

func namespaceOrAll(ns string) string {
	if ns == "" {
		return "(all)"
	}
	return ns
}
