package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/caches"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/configrollout"
	clientset "deployobject.dev/controller/pkg/generated/clientset/versioned"
	listers "deployobject.dev/controller/pkg/generated/listers/app/v1"
	"deployobject.dev/controller/pkg/identity"
	"deployobject.dev/controller/pkg/metrics"
	"deployobject.dev/controller/pkg/reconcile"
	"deployobject.dev/controller/pkg/status"
)

const queueName = "deployobject"

// Controller keeps, for every DeployObject, a Deployment, and a Service,
// ServiceAccount, PodDisruptionBudget, HorizontalPodAutoscaler,
// NetworkPolicy, Ingress, HTTPRoute or GRPCRoute, and ServiceMonitor or
// PodMonitor when it asks for them, that match it, and reports their state
// in the DeployObject's status. Running the children is pkg/reconcile's.
type Controller struct {
	client clientset.Interface

	deployObjects listers.DeployObjectLister
	// children makes the children of one DeployObject in a sync.
	children *reconcile.Children
	// rollouts follows the ConfigMaps and Secrets the pods use and
	// decides whether configuration holds a Deployment.
	rollouts *configrollout.Rollouts
	// caches are the informers' HasSynced, by the resource each holds.
	caches map[string]cache.InformerSynced
	// cacheSyncTimeout bounds the wait for the caches in Run.
	cacheSyncTimeout time.Duration

	queue    workqueue.TypedRateLimitingInterface[cache.ObjectName]
	recorder events.EventRecorderLogger
	metrics  *metrics.ReconcileMetrics
	// written holds status writes the DeployObject cache has not shown yet.
	written *status.WrittenStatuses
	// progress paces the status writes that only report a rollout's
	// progress.
	progress *status.ProgressReports

	// now is the clock for condition transition times; tests replace it.
	now func() metav1.Time
	// shutdownGrace bounds how long syncs in flight at shutdown may take.
	shutdownGrace time.Duration
	// childBatchPeriod delays syncs caused by child events, so that the
	// burst of status changes a rollout makes costs one status write.
	childBatchPeriod time.Duration
}

// Config is what the controller takes from the command line (main builds
// it from the options, where each field's flag is described).
type Config struct {
	// ShutdownGrace bounds how long syncs in flight at shutdown may take.
	ShutdownGrace time.Duration
	// CacheSyncTimeout bounds the wait for the caches in Run.
	CacheSyncTimeout time.Duration
	// ChildBatchPeriod delays syncs caused by child events.
	ChildBatchPeriod time.Duration
	// PodSecurity is filled into every pod template; a template that
	// breaks it is not applied.
	PodSecurity children.PodSecurityProfile

	// TrackConfig follows the ConfigMaps, and the Secrets when Secrets is
	// not nil, that DeployObjects' pods use (see configrollout.Track);
	// without it none is followed.
	TrackConfig bool
	Secrets     coreinformers.SecretInformer
	// MaxConfigRollouts bounds the rollouts configuration alone starts; 0
	// does not.
	MaxConfigRollouts int
	// ConfigRolloutDelay gathers the changes of a ConfigMap or Secret
	// into one rollout.
	ConfigRolloutDelay time.Duration
	// ConfigMissingGrace is how long missing configuration is reported as
	// in progress before it stalls.
	ConfigMissingGrace time.Duration
}

// NewController wires the informers' event handlers to the work queue. The
// child informers must be restricted to objects carrying
// identity.ManagedByLabel. With cfg.TrackConfig it must be called before
// the informers start.
func NewController(
	ctx context.Context,
	kubeClient kubernetes.Interface,
	client clientset.Interface,
	inf caches.Informers,
	gateway *caches.GatewayRoutes,
	monitors *caches.Monitors,
	recorder events.EventRecorderLogger,
	metrics *metrics.ReconcileMetrics,
	cfg Config,
) (*Controller, error) {
	podSecurityCheck, err := children.NewPodSecurityCheck(cfg.PodSecurity)
	if err != nil {
		return nil, err
	}
	rollouts := &configrollout.Rollouts{Tracking: &configrollout.Tracking{}, Grace: configrollout.NewMissingGrace(cfg.ConfigMissingGrace, time.Now)}
	c := &Controller{
		client:        client,
		deployObjects: inf.DeployObjects.Lister(),
		children: &reconcile.Children{
			KubeClient:       kubeClient,
			Client:           client,
			Caches:           inf.Children,
			Gateway:          gateway,
			Monitors:         monitors,
			Admitted:         children.NewAdmittedWrites(),
			PodSecurity:      cfg.PodSecurity,
			PodSecurityCheck: podSecurityCheck,
			Rollouts:         rollouts,
			Now:              time.Now,
		},
		rollouts:         rollouts,
		caches:           cachesSynced(inf, gateway, monitors),
		cacheSyncTimeout: cfg.CacheSyncTimeout,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			newRateLimiter(),
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: queueName},
		),
		recorder:         recorder,
		metrics:          metrics,
		written:          status.NewWrittenStatuses(inf.DeployObjects.Lister()),
		progress:         status.NewProgressReports(time.Now),
		now:              metav1.Now,
		shutdownGrace:    cfg.ShutdownGrace,
		childBatchPeriod: cfg.ChildBatchPeriod,
	}

	logger := klog.FromContext(ctx)
	if _, err := inf.DeployObjects.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: c.updateDeployObject,
		DeleteFunc: c.enqueue,
	}, cache.HandlerOptions{Logger: &logger}); err != nil {
		return nil, fmt.Errorf("adding DeployObject event handler: %w", err)
	}
	childHandler := c.childEventHandler()
	for _, child := range inf.Children.Informers() {
		if _, err := child.AddEventHandlerWithOptions(childHandler, cache.HandlerOptions{Logger: &logger}); err != nil {
			return nil, fmt.Errorf("adding child event handler: %w", err)
		}
	}
	if cfg.TrackConfig {
		if err := c.trackConfig(ctx, inf, cfg); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// cachesSynced are the HasSynced of the informers, by the resource each
// holds: those of the kinds of caches.ChildKinds, and of the discovered
// kinds, the Gateway API routes and the monitors (see caches.GatewayRoutes
// and caches.Monitors).
func cachesSynced(inf caches.Informers, gateway *caches.GatewayRoutes, monitors *caches.Monitors) map[string]cache.InformerSynced {
	synced := inf.Children.Synced()
	synced["deployobjects"] = inf.DeployObjects.Informer().HasSynced
	synced["httproutes"] = gateway.HasSynced
	synced["monitors"] = monitors.HasSynced
	return synced
}

// trackConfig makes c follow the ConfigMaps, and the Secrets when
// cfg.Secrets is not nil, that DeployObjects' pods use (see
// configrollout.Track).
func (c *Controller) trackConfig(ctx context.Context, inf caches.Informers, cfg Config) error {
	var secretInformer cache.SharedIndexInformer
	if cfg.Secrets != nil {
		secretInformer = cfg.Secrets.Informer()
	}
	t, synced, err := configrollout.Track(ctx, inf.DeployObjects.Informer(), caches.InformerOf[corev1.ConfigMap](inf.Children), secretInformer, cfg.MaxConfigRollouts, cfg.ConfigRolloutDelay, c.queue.Add, c.queue.AddAfter)
	if err != nil {
		return err
	}
	c.rollouts.Tracking = t
	for kind, hasSynced := range synced {
		c.caches[strings.ToLower(string(kind))+"s"] = hasSynced
	}
	return nil
}

// childEventHandler enqueues the owner of a child that changed.
func (c *Controller) childEventHandler() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueOwner,
		UpdateFunc: c.updateChild,
		DeleteFunc: c.enqueueOwner,
	}
}

// watchGatewayAPI starts the HTTPRoute and GRPCRoute caches once the
// cluster serves them (see caches.GatewayRoutes), then syncs every
// DeployObject that asks for a Gateway API route: each was left Ready=False
// GatewayAPIUnavailable without a retry, waiting for this. It returns when
// ctx ends.
func (c *Controller) watchGatewayAPI(ctx context.Context) {
	if c.children.Gateway == nil {
		return
	}
	c.children.Gateway.Run(ctx, c.childEventHandler(), c.enqueueWanting(ctx, children.WantsGatewayRoute))
}

// watchMonitoring starts the ServiceMonitor and PodMonitor caches once
// the cluster serves them (see caches.Monitors), then syncs every
// DeployObject that asks for a monitor: each was left with its Monitoring
// condition False MonitoringAPIUnavailable, without a retry, waiting for
// this. It returns when ctx ends.
func (c *Controller) watchMonitoring(ctx context.Context) {
	if c.children.Monitors == nil {
		return
	}
	c.children.Monitors.Run(ctx, c.childEventHandler(), c.enqueueWanting(ctx, children.WantsMonitoring))
}

// enqueueWanting returns what enqueues every DeployObject for which wants
// is true, for when a kind of child comes or goes.
func (c *Controller) enqueueWanting(ctx context.Context, wants func(*appv1.DeployObject) bool) func() {
	return func() {
		all, err := c.deployObjects.List(labels.Everything())
		if err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Listing DeployObjects from the cache")
			return
		}
		for _, d := range all {
			if wants(d) {
				c.enqueue(d)
			}
		}
	}
}

// newRateLimiter backs off each failing key exponentially (5ms doubling up to
// 5 minutes, so a conflict with a foreign object is retried for a while but
// never hot) and caps retries of all keys together at 10/s with bursts of 100,
// so a storm of failures cannot flood the API server.
func newRateLimiter() workqueue.TypedRateLimiter[cache.ObjectName] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](5*time.Millisecond, 5*time.Minute),
		&workqueue.TypedBucketRateLimiter[cache.ObjectName]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}

// Run waits for the caches, then runs workers until ctx is cancelled (a
// signal) or writes is (the lease is lost). On ctx's end the workers take no
// further key and finish the syncs in flight, for at most shutdownGrace,
// after which their requests are cancelled. Keys still queued are left to
// the next leader: its initial list enqueues every object. Every sync runs
// in writes, so losing the lease cancels the syncs in flight at once, also
// during the grace period: another replica may already be writing.
func (c *Controller) Run(ctx, writes context.Context, workers int) error {
	defer utilruntime.HandleCrashWithContext(ctx)
	logger := klog.FromContext(ctx)
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	defer context.AfterFunc(writes, stopRun)()

	logger.Info("Waiting for informer caches to sync")
	syncCtx, cancelSync := context.WithTimeout(runCtx, c.cacheSyncTimeout)
	defer cancelSync()
	if !cache.WaitForNamedCacheSyncWithContext(syncCtx, c.cachesSynced()...) {
		if runCtx.Err() != nil {
			// Asked to stop before the caches synced: nothing was started.
			return nil
		}
		// Holding the lease without working would stop every DeployObject
		// silently: give it up, so that another replica or a restart takes
		// over, and say what failed.
		return fmt.Errorf("the caches of %s did not sync within %s: listing them fails (the reflector's errors above say why; a permission missing from the controller's role is the usual cause)",
			strings.Join(c.unsynced(), ", "), c.cacheSyncTimeout)
	}

	if err := c.adoptRollouts(logger); err != nil {
		return err
	}

	workCtx, cancelWork := context.WithCancel(writes)
	defer cancelWork()

	logger.Info("Starting workers", "count", workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for c.processNextWorkItem(workCtx) {
			}
		})
	}

	<-runCtx.Done()
	logger.Info("Shutting down: finishing syncs in flight", "grace", c.shutdownGrace)
	c.queue.ShutDown()
	stop := time.AfterFunc(c.shutdownGrace, cancelWork)
	defer stop.Stop()
	wg.Wait()
	logger.Info("Workers stopped")
	return nil
}

// adoptRollouts counts against the rollout limit the rollouts under it
// that an earlier leader started and that are still going (see
// configrollout.Rollouts.Adopt), and syncs their DeployObjects, which free
// the slots once the rollouts are done. It runs once the caches have
// synced, before any worker.
func (c *Controller) adoptRollouts(logger klog.Logger) error {
	adopted, err := c.rollouts.Adopt(caches.ListerOf[appsv1.Deployment](c.children.Caches).List)
	if err != nil {
		return err
	}
	for _, key := range adopted {
		c.queue.Add(key)
	}
	if len(adopted) > 0 {
		logger.Info("Rollouts under the limit still going", "count", len(adopted))
	}
	return nil
}

// cachesSynced are the HasSynced of every cache c reads.
func (c *Controller) cachesSynced() []cache.InformerSynced {
	return slices.Collect(maps.Values(c.caches))
}

// unsynced are the resources whose caches have not synced, sorted.
func (c *Controller) unsynced() []string {
	var names []string
	for name, hasSynced := range c.caches {
		if !hasSynced() {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// processNextWorkItem syncs one key and decides whether it is retried. It
// returns false when the queue is shut down.
func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	if c.queue.ShuttingDown() {
		// A queue being shut down still hands out every queued key; a
		// shutdown only finishes the syncs already in flight.
		return false
	}

	logger := klog.LoggerWithValues(klog.FromContext(ctx), "deployobject", key)
	ctx = klog.NewContext(ctx, logger)

	start := time.Now()
	err := c.syncHandler(ctx, key)
	c.metrics.Observe(time.Since(start), err)

	switch {
	case err == nil:
		c.queue.Forget(key)
	case children.IsExpectedRetry(err):
		// Stale caches and foreign children resolve themselves; they are
		// retried with backoff but are not errors worth an operator's time.
		logger.V(2).Info("Retrying", "reason", err.Error())
		c.queue.AddRateLimited(key)
	default:
		logger.Error(err, "Sync failed, retrying with backoff", "retries", c.queue.NumRequeues(key))
		c.queue.AddRateLimited(key)
	}
	return true
}

func (c *Controller) enqueue(obj any) {
	key, err := cache.DeletionHandlingObjectToName(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

// updateDeployObject enqueues a DeployObject when its spec changed (a new
// generation) or on a periodic resync (same resourceVersion), which re-checks
// the children. Changes to status or metadata alone, such as the controller's
// own status writes, do not affect the children and are skipped; they only
// tell that the cache has caught up with a status write.
func (c *Controller) updateDeployObject(oldObj, newObj any) {
	oldDO, ok1 := oldObj.(*appv1.DeployObject)
	newDO, ok2 := newObj.(*appv1.DeployObject)
	if !ok1 || !ok2 {
		return
	}
	c.written.Observe(cache.MetaObjectToName(newDO), newDO.ResourceVersion)
	// A status write is no news; a resync, a spec change and a canary
	// operation (the only annotations the cache keeps) are.
	if oldDO.ResourceVersion == newDO.ResourceVersion || oldDO.Generation != newDO.Generation || !maps.Equal(oldDO.Annotations, newDO.Annotations) {
		c.enqueue(newDO)
	}
}

// updateChild enqueues the owner of a changed child. Resyncs of a child
// (same resourceVersion) carry no news and are dropped.
func (c *Controller) updateChild(oldObj, newObj any) {
	oldMeta, err1 := metaOf(oldObj)
	newMeta, err2 := metaOf(newObj)
	if err1 != nil || err2 != nil || oldMeta.GetResourceVersion() == newMeta.GetResourceVersion() {
		return
	}
	if oldOwner, newOwner := ownerName(oldMeta), ownerName(newMeta); oldOwner != nil && (newOwner == nil || *oldOwner != *newOwner) {
		c.queue.AddAfter(*oldOwner, c.childBatchPeriod)
	}
	c.enqueueOwner(newObj)
}

// enqueueOwner enqueues the DeployObject that controls a child, if any.
func (c *Controller) enqueueOwner(obj any) {
	m, err := metaOf(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	if owner := ownerName(m); owner != nil {
		c.queue.AddAfter(*owner, c.childBatchPeriod)
	}
}

// metaOf returns the object metadata of an informer event's object,
// unwrapping the tombstone a missed delete leaves behind.
func metaOf(obj any) (metav1.Object, error) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	switch o := obj.(type) {
	case *caches.Packed:
		return o.GetObjectMeta(), nil
	case *gatewayv1.HTTPRoute:
		return o, nil
	case *gatewayv1.GRPCRoute:
		return o, nil
	case *unstructured.Unstructured:
		return o, nil
	default:
		return nil, fmt.Errorf("unexpected object of type %T in a child informer", obj)
	}
}

// ownerName is the DeployObject named by obj's controller ownerReference;
// for an object without a controller that carries the labels of a
// DeployObject's children, the DeployObject that would adopt it; otherwise
// nil.
func ownerName(obj metav1.Object) *cache.ObjectName {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil {
		if labels := obj.GetLabels(); labels[identity.ManagedByLabel] == identity.ManagedByValue && labels[children.NameLabel] != "" {
			return &cache.ObjectName{Namespace: obj.GetNamespace(), Name: labels[children.NameLabel]}
		}
		return nil
	}
	if ref.Kind != identity.DeployObjectKind.Kind {
		return nil
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != identity.DeployObjectKind.Group {
		return nil
	}
	return &cache.ObjectName{Namespace: obj.GetNamespace(), Name: ref.Name}
}

// eventDriftCorrected is the reason of the Normal event for writes that undo
// someone else's change; Warning events carry the Ready condition's reason.
const eventDriftCorrected = "DriftCorrected"

// eventAction is the action of every event: the one thing the controller
// does to a DeployObject is bring its children in line. What came of it is
// the reason, and which children the note.
const eventAction = "Reconcile"

// syncHandler brings the children of one DeployObject in line with its spec
// and writes its status. It reads only from the informer caches and is the one
// place where the controller writes to the cluster. A nil error means done; an
// error means retry with backoff.
func (c *Controller) syncHandler(ctx context.Context, key cache.ObjectName) error {
	logger := klog.FromContext(ctx)
	dobj, err := c.deployObjects.DeployObjects(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		// Deleted: garbage collection removes the children through their
		// controller ownerReferences.
		logger.V(4).Info("DeployObject no longer exists")
		c.written.Forget(key)
		c.progress.Forget(key)
		c.children.Admitted.Forget(key)
		c.rollouts.Forget(key)
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading DeployObject from cache: %w", err)
	}
	basedOn := dobj.ResourceVersion
	if written, ok := c.written.NewerThanCache(key, basedOn); ok {
		// The watch has not delivered the last status write yet: judge the
		// status against what was written, not against the cache, and base
		// the next write on the version it made.
		dobj = dobj.DeepCopy()
		dobj.Status = written.Status
		dobj.ResourceVersion = written.ResourceVersion
	}
	if dobj.DeletionTimestamp != nil {
		// Going away (held by someone's finalizer, or with its namespace):
		// children made now would only be garbage-collected again.
		logger.V(4).Info("DeployObject is being deleted")
		return nil
	}

	result, err := c.children.Sync(ctx, dobj)
	if result.After > 0 {
		// Configuration or a canary decided when to look again (see
		// configrollout.Gate and canary.Decision).
		c.queue.AddAfter(key, result.After)
	}
	out, actions := result.Outcome, result.Actions
	if children.IsNamespaceTerminating(err) {
		// Nothing can be created there any more and the DeployObject goes
		// with the namespace: retrying would only hot-loop.
		logger.V(2).Info("Namespace is terminating, not retrying", "reason", err.Error())
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range result.Events {
		// The canary's steps, promotion and abort.
		eventType := corev1.EventTypeNormal
		if e.Warning {
			eventType = corev1.EventTypeWarning
		}
		c.recorder.WithLogger(logger).Eventf(dobj, nil, eventType, e.Reason, eventAction, "%s", children.BoundNote(e.Message))
	}
	if len(actions) > 0 && dobj.Status.ObservedGeneration == dobj.Generation {
		// The children were in line with this generation before, so someone
		// else changed them. Creating children and rolling out a new spec
		// are told by the Ready condition and cost no event.
		c.recorder.WithLogger(logger).Eventf(dobj, nil, corev1.EventTypeNormal, eventDriftCorrected, eventAction, "%s", children.BoundNote(strings.Join(actions, "; ")))
	}

	newStatus := status.Compute(dobj, out, c.now())
	c.rollouts.Done(key, out.ConfigPending, out.Deployment)
	// One Warning per new problem: later retries of the same problem find
	// it already reported.
	for _, p := range status.NewProblems(dobj.Status.Conditions, out.Problems) {
		c.recorder.WithLogger(logger).Eventf(dobj, related(dobj, p), corev1.EventTypeWarning, p.Reason, eventAction, "%s", children.BoundNote(p.Message))
	}
	if !status.Equal(dobj.Status, newStatus) {
		if wait := c.progress.Wait(key, dobj.Status, newStatus); wait > 0 {
			// Only progress changed, and it was reported moments ago: the
			// next report carries it, or whatever comes first.
			c.queue.AddAfter(key, wait)
		} else {
			written, err := c.client.AppV1().DeployObjects(dobj.Namespace).ApplyStatus(ctx, status.ApplyConfiguration(dobj, newStatus), metav1.ApplyOptions{FieldManager: identity.FieldManager, Force: true})
			if err != nil {
				return fmt.Errorf("writing status: %w", err)
			}
			c.written.Record(key, basedOn, written)
			c.progress.Wrote(key, newStatus)
			logger.V(2).Info("Wrote status", "ready", status.ReadyReason(newStatus))
		}
	}

	// Most blocking problems end without an event the controller sees (a
	// quota raised, a policy changed, a foreign object without the
	// managed-by label deleted): poll with backoff.
	var retry []children.Problem
	for _, p := range out.Problems {
		if p.Retry {
			retry = append(retry, p)
		}
	}
	if len(retry) > 0 {
		return &children.BlockedError{Problems: retry}
	}
	return nil
}

// related is the child a problem is about, as an event's related object, or
// nil when the problem names none. events.k8s.io/v1 merges repeats of an
// event by regarding, related, reason and action, and keeps the first note:
// without it, two children refused for the same reason in one sync (a quota
// refusing the Deployment and the Service) would be one event telling of
// one.
func related(dobj *appv1.DeployObject, p children.Problem) runtime.Object {
	if p.Kind == "" || p.Name == "" {
		return nil
	}
	return &corev1.ObjectReference{Kind: p.Kind, Namespace: dobj.Namespace, Name: p.Name}
}
