// Command deployobject-controller keeps, for every DeployObject
// (app.deployobject.dev/v1), a Deployment and, when the DeployObject asks
// for them, a Service, ServiceAccount, PodDisruptionBudget,
// HorizontalPodAutoscaler, NetworkPolicy, Ingress, HTTPRoute or GRPCRoute,
// and ServiceMonitor or PodMonitor in line with it, and
// reports their state in the DeployObject's status.
//
// main.go wires the process (flags, clients, informers, leader election,
// servers); controller.go holds the controller itself: its event handlers,
// queue, workers and sync, which runs the children through pkg/reconcile.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	kubeinformers "k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	kubescheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"

	"deployobject.dev/controller/pkg/caches"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/clients"
	appscheme "deployobject.dev/controller/pkg/generated/clientset/versioned/scheme"
	"deployobject.dev/controller/pkg/identity"
	"deployobject.dev/controller/pkg/leaderelection"
	"deployobject.dev/controller/pkg/metrics"
	"deployobject.dev/controller/pkg/options"
	"deployobject.dev/controller/pkg/server"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	opts, flags, err := options.Parse(os.Args[1:])
	switch {
	case err != nil:
		fmt.Fprintf(os.Stderr, "Error: %v\nRun '%s --help' for usage.\n", err, os.Args[0])
		os.Exit(2)
	case opts.Help:
		options.PrintUsage(os.Stdout, flags, terminalWidth(os.Stdout))
		return
	case opts.ShowVersion:
		fmt.Println(version)
		return
	}
	if err := opts.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, "invalid flags:", err)
		os.Exit(2)
	}
	// Before anything logs: the format applies to every line.
	if err := logsapi.ValidateAndApply(opts.Logs, opts.Features); err != nil {
		fmt.Fprintln(os.Stderr, "invalid logging flags:", err)
		os.Exit(2)
	}
	options.PrintFlags(flags)

	ctx := klog.NewContext(signalContext(), klog.Background())
	if err := run(ctx, opts); err != nil {
		klog.FromContext(ctx).Error(err, "Controller failed")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
	klog.Flush()
}

// terminalWidth is the width of the terminal f shows, for wrapping --help
// there; 0, which does not wrap, when f is no terminal (a pipe, a file), so
// that what a script reads does not depend on where it runs.
func terminalWidth(f *os.File) int {
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return width
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

func run(ctx context.Context, opts *options.Options) error {
	logger := klog.FromContext(ctx)
	logger.Info("Starting", "version", version, "namespace", namespaceOrAll(opts.Namespace), "labelSelector", opts.WatchLabelSelector, "workers", opts.Workers, "trackSecrets", opts.TrackSecrets)

	cfg, inCluster, err := restConfig(opts)
	if err != nil {
		return err
	}
	apiClients, err := clients.New(cfg, opts.ContentType, opts.RenewDeadline)
	if err != nil {
		return err
	}
	kubeClient, client, gatewayClient := apiClients.Kube, apiClients.DeployObjects, apiClients.Gateway

	registry := prometheus.NewRegistry()
	controllerMetrics := metrics.Register(registry)

	recorder, stopEvents, err := startEvents(ctx, kubeClient)
	if err != nil {
		return err
	}
	defer stopEvents()

	informerName, err := cache.NewInformerName(identity.ControllerName)
	if err != nil {
		return fmt.Errorf("naming the informers: %w", err)
	}
	defer informerName.Release()
	inf, err := caches.NewInformers(kubeClient, client, caches.Scope{Namespace: opts.Namespace, LabelSelector: opts.WatchLabelSelector}, opts.ResyncPeriod, caches.NamedInformers{Name: informerName, Metrics: controllerMetrics.Informers})
	if err != nil {
		return err
	}
	dobjFactory, childFactory := inf.DeployObjectFactory, inf.ChildFactory
	if opts.TrackSecrets {
		caches.RegisterSecretInformer(childFactory, opts.Namespace, caches.NamedInformers{Name: informerName, Metrics: controllerMetrics.Informers})
	}

	controller, err := NewController(ctx, kubeClient, client, inf,
		&caches.GatewayRoutes{
			Client:    gatewayClient,
			Discovery: kubeClient.Discovery(),
			Recheck:   caches.GatewayAPIRecheck,
			Informer: func() (cache.SharedIndexInformer, error) {
				return caches.NewHTTPRouteInformer(gatewayClient, opts.Namespace, caches.NamedInformers{Name: informerName, Metrics: controllerMetrics.Informers})
			},
			GRPCInformer: func() (cache.SharedIndexInformer, error) {
				return caches.NewGRPCRouteInformer(gatewayClient, opts.Namespace, caches.NamedInformers{Name: informerName, Metrics: controllerMetrics.Informers})
			},
		},
		&caches.Monitors{
			Client:    apiClients.Dynamic,
			Discovery: kubeClient.Discovery(),
			Recheck:   caches.MonitoringRecheck,
			Informer: func(resource schema.GroupVersionResource) (cache.SharedIndexInformer, error) {
				return caches.NewMonitorInformer(apiClients.Dynamic, resource, opts.Namespace, caches.NamedInformers{Name: informerName, Metrics: controllerMetrics.Informers})
			},
		},
		recorder, controllerMetrics.Reconcile, controllerConfig(opts, childFactory))
	if err != nil {
		return err
	}
	registry.MustRegister(metrics.NewRolloutCollector(controller.rollouts.Limiter))

	// Every replica fills its caches, leader or not, so that a new leader
	// starts working at once.
	dobjFactory.Start(ctx.Done())
	childFactory.Start(ctx.Done())
	defer dobjFactory.Shutdown()
	defer childFactory.Shutdown()
	// HTTPRoutes are watched once the cluster serves them, which it may
	// start doing at any time.
	go controller.watchGatewayAPI(ctx)
	// So are ServiceMonitors and PodMonitors.
	go controller.watchMonitoring(ctx)

	elector, err := leaderelection.New(opts, inCluster, apiClients.Lease)
	if err != nil {
		return err
	}
	apiServerReady, err := server.NewAPIServerReadiness(cfg)
	if err != nil {
		return err
	}
	secure, err := server.NewSecureMetrics(opts, kubeClient)
	if err != nil {
		return err
	}
	servers, err := server.Start(ctx, opts, registry, secure, elector, controller.cachesSynced(), apiServerReady)
	if err != nil {
		return err
	}
	defer servers.Shutdown(logger)

	if elector == nil {
		controllerMetrics.Leader.Set(1)
		err = controller.Run(ctx, context.WithoutCancel(ctx), opts.Workers)
	} else {
		err = leaderelection.Run(ctx, elector, controllerMetrics, func(ctx, writes context.Context) error {
			return controller.Run(ctx, writes, opts.Workers)
		})
	}
	if err != nil {
		// The lease lost, or caches that never synced (the lease, if any,
		// released): exit at once, as the deferred shutdowns would wait
		// for the informers, which run until a signal.
		logger.Error(err, "Controller failed")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
	return nil
}

// controllerConfig is what the controller takes from opts; the Secrets it
// tracks come from childFactory (see caches.RegisterSecretInformer).
func controllerConfig(opts *options.Options, childFactory kubeinformers.SharedInformerFactory) Config {
	var secrets coreinformers.SecretInformer
	if opts.TrackSecrets {
		secrets = childFactory.Core().V1().Secrets()
	}
	return Config{
		ShutdownGrace:      opts.ShutdownGrace,
		CacheSyncTimeout:   opts.CacheSyncTimeout,
		ChildBatchPeriod:   opts.ChildBatch,
		PodSecurity:        children.PodSecurityProfile(opts.PodSecurity),
		TrackConfig:        true,
		Secrets:            secrets,
		MaxConfigRollouts:  opts.MaxConfigRollouts,
		ConfigRolloutDelay: opts.ConfigRolloutDelay,
		ConfigMissingGrace: opts.ConfigMissingGrace,
	}
}

// startEvents starts sending what the returned recorder records to the API
// server, through events.k8s.io/v1, until stop is called. Events recorded by
// syncs that finish during the shutdown grace period must still be sent: the
// broadcaster outlives the cancellation of ctx.
func startEvents(ctx context.Context, kubeClient kubernetes.Interface) (recorder events.EventRecorderLogger, stop func(), err error) {
	// Events name the DeployObject they are about by its kind, which the
	// recorder finds in the scheme.
	scheme := runtime.NewScheme()
	utilruntime.Must(kubescheme.AddToScheme(scheme))
	utilruntime.Must(appscheme.AddToScheme(scheme))
	sendCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: kubeClient.EventsV1()})
	stop = func() {
		broadcaster.Shutdown()
		cancel()
	}
	if _, err := broadcaster.StartLogging(klog.FromContext(ctx).V(3)); err != nil {
		stop()
		return nil, nil, fmt.Errorf("logging events: %w", err)
	}
	if err := broadcaster.StartRecordingToSinkWithContext(sendCtx); err != nil {
		stop()
		return nil, nil, fmt.Errorf("recording events: %w", err)
	}
	return broadcaster.NewRecorder(scheme, identity.ControllerName), stop, nil
}

func restConfig(opts *options.Options) (*rest.Config, bool, error) {
	cfg, inCluster, err := clients.Config(opts.Kubeconfig, opts.Master)
	if err != nil {
		return nil, false, err
	}
	cfg.QPS = opts.QPS
	cfg.Burst = opts.Burst
	cfg.UserAgent = fmt.Sprintf("%s/%s", identity.ControllerName, version)
	return cfg, inCluster, nil
}

func namespaceOrAll(ns string) string {
	if ns == "" {
		return "(all)"
	}
	return ns
}
