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
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
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
	informers "deployobject.dev/controller/pkg/generated/informers/externalversions/app/v1"
	listers "deployobject.dev/controller/pkg/generated/listers/app/v1"
	"deployobject.dev/controller/pkg/identity"
	"deployobject.dev/controller/pkg/metrics"
	"deployobject.dev/controller/pkg/status"
)

const queueName = "deployobject"

// Controller keeps, for every DeployObject, a Deployment, and a Service,
// ServiceAccount, PodDisruptionBudget, HorizontalPodAutoscaler,
// NetworkPolicy, Ingress, HTTPRoute or GRPCRoute, and ServiceMonitor or
// PodMonitor when it asks for them, that match it, and reports their state
// in the DeployObject's status.
type Controller struct {
	kubeClient kubernetes.Interface
	client     clientset.Interface

	deployObjects listers.DeployObjectLister
	// The child caches hold packed objects (see pkg/caches/packed.go).
	deployments caches.PackedLister[appsv1.Deployment, *appsv1.Deployment]
	services    caches.PackedLister[corev1.Service, *corev1.Service]
	// serviceAccounts and configMaps are indexed by their DeployObject;
	// configMaps holds every ConfigMap, as hashes of its values (see
	// pkg/caches/config.go).
	serviceAccounts caches.PackedLister[corev1.ServiceAccount, *corev1.ServiceAccount]
	configMaps      caches.PackedLister[corev1.ConfigMap, *corev1.ConfigMap]
	pdbs            caches.PackedLister[policyv1.PodDisruptionBudget, *policyv1.PodDisruptionBudget]
	hpas            caches.PackedLister[autoscalingv2.HorizontalPodAutoscaler, *autoscalingv2.HorizontalPodAutoscaler]
	ingresses       caches.PackedLister[networkingv1.Ingress, *networkingv1.Ingress]
	policies        caches.PackedLister[networkingv1.NetworkPolicy, *networkingv1.NetworkPolicy]
	// gateway holds the HTTPRoute and GRPCRoute caches once the cluster
	// serves them; nil runs without the Gateway API.
	gateway *caches.GatewayRoutes
	// monitors holds the ServiceMonitor and PodMonitor caches once the
	// cluster serves them; nil runs without prometheus-operator.
	monitors *caches.Monitors
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
	// admitted remembers what admission made of Deployment writes it
	// changed.
	admitted *children.AdmittedWrites

	// now is the clock for condition transition times; tests replace it.
	now func() metav1.Time
	// podSecurity is filled into every pod template (--pod-security-profile).
	podSecurity children.PodSecurityProfile
	// podSecurityCheck, when not nil, keeps a template that breaks the
	// profile from being applied.
	podSecurityCheck children.PodSecurityCheck
	// shutdownGrace bounds how long syncs in flight at shutdown may take.
	shutdownGrace time.Duration
	// childBatchPeriod delays syncs caused by child events, so that the
	// burst of status changes a rollout makes costs one status write.
	childBatchPeriod time.Duration
	// config follows the ConfigMaps and Secrets the pods use (see
	// trackConfig); its zero value follows none.
	config *configrollout.Tracking
	// configGrace is how long a missing ConfigMap or Secret is reported as
	// in progress before it stalls (--config-missing-grace-period); nil
	// stalls at once.
	configGrace *configrollout.MissingGrace
}

// NewController wires the informers' event handlers to the work queue. The
// child informers must be restricted to objects carrying identity.ManagedByLabel.
func NewController(
	ctx context.Context,
	kubeClient kubernetes.Interface,
	client clientset.Interface,
	inf caches.Informers,
	gateway *caches.GatewayRoutes,
	monitors *caches.Monitors,
	recorder events.EventRecorderLogger,
	metrics *metrics.ReconcileMetrics,
) (*Controller, error) {
	// A ServiceAccount the spec stopped naming, and the ConfigMaps of
	// inline files that older pod templates mount, are found by their
	// owner.
	if err := inf.ServiceAccounts.Informer().AddIndexers(caches.ControllerIndexers()); err != nil {
		return nil, fmt.Errorf("indexing ServiceAccounts by their DeployObject: %w", err)
	}
	if err := inf.ConfigMaps.Informer().AddIndexers(caches.ControllerIndexers()); err != nil {
		return nil, fmt.Errorf("indexing ConfigMaps by their DeployObject: %w", err)
	}
	c := &Controller{
		kubeClient:      kubeClient,
		client:          client,
		deployObjects:   inf.DeployObjects.Lister(),
		deployments:     caches.NewPackedLister[appsv1.Deployment](inf.Deployments.Informer().GetIndexer(), appsv1.Resource("deployments")),
		services:        caches.NewPackedLister[corev1.Service](inf.Services.Informer().GetIndexer(), corev1.Resource("services")),
		serviceAccounts: caches.NewPackedLister[corev1.ServiceAccount](inf.ServiceAccounts.Informer().GetIndexer(), corev1.Resource("serviceaccounts")),
		configMaps:      caches.NewPackedLister[corev1.ConfigMap](inf.ConfigMaps.Informer().GetIndexer(), corev1.Resource("configmaps")),
		pdbs:            caches.NewPackedLister[policyv1.PodDisruptionBudget](inf.PDBs.Informer().GetIndexer(), policyv1.Resource("poddisruptionbudgets")),
		hpas:            caches.NewPackedLister[autoscalingv2.HorizontalPodAutoscaler](inf.HPAs.Informer().GetIndexer(), autoscalingv2.Resource("horizontalpodautoscalers")),
		ingresses:       caches.NewPackedLister[networkingv1.Ingress](inf.Ingresses.Informer().GetIndexer(), networkingv1.Resource("ingresses")),
		policies:        caches.NewPackedLister[networkingv1.NetworkPolicy](inf.NetworkPolicies.Informer().GetIndexer(), networkingv1.Resource("networkpolicies")),
		gateway:         gateway,
		monitors:        monitors,
		caches: map[string]cache.InformerSynced{
			"deployobjects":            inf.DeployObjects.Informer().HasSynced,
			"deployments":              inf.Deployments.Informer().HasSynced,
			"services":                 inf.Services.Informer().HasSynced,
			"serviceaccounts":          inf.ServiceAccounts.Informer().HasSynced,
			"configmaps":               inf.ConfigMaps.Informer().HasSynced,
			"poddisruptionbudgets":     inf.PDBs.Informer().HasSynced,
			"horizontalpodautoscalers": inf.HPAs.Informer().HasSynced,
			"ingresses":                inf.Ingresses.Informer().HasSynced,
			"networkpolicies":          inf.NetworkPolicies.Informer().HasSynced,
			"httproutes":               gateway.HasSynced,
			"monitors":                 monitors.HasSynced,
		},
		cacheSyncTimeout: 2 * time.Minute,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			newRateLimiter(),
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: queueName},
		),
		recorder:      recorder,
		metrics:       metrics,
		written:       status.NewWrittenStatuses(inf.DeployObjects.Lister()),
		progress:      status.NewProgressReports(time.Now),
		admitted:      children.NewAdmittedWrites(),
		now:           metav1.Now,
		shutdownGrace: 10 * time.Second,
		podSecurity:   children.ProfileNone,
		config:        &configrollout.Tracking{},
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
	for _, child := range []cache.SharedIndexInformer{inf.Deployments.Informer(), inf.Services.Informer(), inf.ServiceAccounts.Informer(), inf.ConfigMaps.Informer(), inf.PDBs.Informer(), inf.HPAs.Informer(), inf.Ingresses.Informer(), inf.NetworkPolicies.Informer()} {
		if _, err := child.AddEventHandlerWithOptions(childHandler, cache.HandlerOptions{Logger: &logger}); err != nil {
			return nil, fmt.Errorf("adding child event handler: %w", err)
		}
	}
	return c, nil
}

// trackConfig makes c follow the ConfigMaps, and the Secrets when secrets
// is not nil, that DeployObjects' pods use (see configrollout.Track). It
// must be called before the informers start.
func (c *Controller) trackConfig(ctx context.Context, deployObjectInformer informers.DeployObjectInformer, configMaps coreinformers.ConfigMapInformer, secrets coreinformers.SecretInformer, maxRollouts int, delay time.Duration) error {
	var secretInformer cache.SharedIndexInformer
	if secrets != nil {
		secretInformer = secrets.Informer()
	}
	t, synced, err := configrollout.Track(ctx, deployObjectInformer.Informer(), configMaps.Informer(), secretInformer, maxRollouts, delay, c.queue.Add, c.queue.AddAfter)
	if err != nil {
		return err
	}
	c.config = t
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
	if c.gateway == nil {
		return
	}
	c.gateway.Run(ctx, c.childEventHandler(), c.enqueueWanting(ctx, children.WantsGatewayRoute))
}

// watchMonitoring starts the ServiceMonitor and PodMonitor caches once
// the cluster serves them (see caches.Monitors), then syncs every
// DeployObject that asks for a monitor: each was left with its Monitoring
// condition False MonitoringAPIUnavailable, without a retry, waiting for
// this. It returns when ctx ends.
func (c *Controller) watchMonitoring(ctx context.Context) {
	if c.monitors == nil {
		return
	}
	c.monitors.Run(ctx, c.childEventHandler(), c.enqueueWanting(ctx, children.WantsMonitoring))
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
// that an earlier leader started and that are still going, so that a
// failover mid-rollout never exceeds the limit. It runs once the caches
// have synced, before any worker.
func (c *Controller) adoptRollouts(logger klog.Logger) error {
	if c.config.Limiter == nil {
		return nil
	}
	deployments, err := c.deployments.List()
	if err != nil {
		return fmt.Errorf("finding the rollouts under way: %w", err)
	}
	adopted := 0
	for _, d := range deployments {
		owner := metav1.GetControllerOf(d)
		if d.Annotations[appv1.AnnotationLimitedRollout] == "" || owner == nil || owner.Kind != "DeployObject" || children.RolloutDone(d) {
			continue
		}
		key := cache.ObjectName{Namespace: d.Namespace, Name: owner.Name}
		c.config.Limiter.Adopt(key)
		// Its sync frees the slot once the rollout is done.
		c.queue.Add(key)
		adopted++
	}
	if adopted > 0 {
		logger.Info("Rollouts under the limit still going", "count", adopted)
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
	if oldDO.ResourceVersion == newDO.ResourceVersion || oldDO.Generation != newDO.Generation {
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
		c.admitted.Forget(key)
		c.configGrace.Found(key)
		c.config.Limiter.Finish(key, true)
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

	out, actions, err := c.syncChildren(ctx, dobj)
	if children.IsNamespaceTerminating(err) {
		// Nothing can be created there any more and the DeployObject goes
		// with the namespace: retrying would only hot-loop.
		logger.V(2).Info("Namespace is terminating, not retrying", "reason", err.Error())
		return nil
	}
	if err != nil {
		return err
	}
	if len(actions) > 0 && dobj.Status.ObservedGeneration == dobj.Generation {
		// The children were in line with this generation before, so someone
		// else changed them. Creating children and rolling out a new spec
		// are told by the Ready condition and cost no event.
		c.recorder.WithLogger(logger).Eventf(dobj, nil, corev1.EventTypeNormal, eventDriftCorrected, eventAction, "%s", children.BoundNote(strings.Join(actions, "; ")))
	}

	newStatus := status.Compute(dobj, out, c.now())
	// A rollout under the limit holds its slot until the Deployment has
	// rolled it out or given up, whatever the other children do; one that
	// waits keeps its place in line.
	c.config.Limiter.Finish(key, !out.ConfigPending && (out.Deployment == nil || children.RolloutDone(out.Deployment)))
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

// syncChildren creates, updates or deletes the children of dobj as needed,
// one kind after the other: the Deployment, and the Service,
// PodDisruptionBudget, HorizontalPodAutoscaler, NetworkPolicy, Ingress
// or Gateway API routes (see syncGatewayRoutes) and the ServiceMonitor or
// PodMonitor (see syncMonitors) when the spec asks for them (pkg/children
// has a file for each). It
// returns the children as they are afterwards, with the problems that kept
// any of them from being made, and a short description of each write, for
// the event. A child that is blocked does not keep the others from being
// made; any other error ends the sync.
func (c *Controller) syncChildren(ctx context.Context, dobj *appv1.DeployObject) (status.Outcome, []string, error) {
	var out status.Outcome
	var actions []string
	// record notes the action of one child, and err as a problem of dobj
	// with that child, or returns err when it is not one.
	record := func(kind, action string, err error) error {
		actions = children.AppendAction(actions, action)
		if err == nil {
			return nil
		}
		p := children.ProblemOf(err)
		if p == nil {
			return err
		}
		p.Kind = kind
		out.Problems = append(out.Problems, *p)
		return nil
	}
	recheckOwner := c.ownerRecheck(dobj)

	ns := dobj.Namespace
	// The pods cannot run before the ServiceAccount they run as and the
	// ConfigMap of their inline files exist: while either could not be
	// made, the Deployment is left as it is (prerequisite), so that its
	// running pods are not replaced by pods that cannot start, or that run
	// as a ServiceAccount someone else owns. The ones the spec stopped
	// asking for go only after the Deployment's rollout (deleteSuperseded).
	var action string
	var err error
	prerequisite := ""
	if children.WantsServiceAccount(dobj) {
		out.ServiceAccount, action, err = children.Sync(ctx, dobj, children.DesiredServiceAccount(dobj),
			children.UpdatedOps(children.KindServiceAccount, c.serviceAccounts.In(ns), c.kubeClient.CoreV1().ServiceAccounts(ns), children.MergeServiceAccount, recheckOwner))
		if err := record(children.KindServiceAccount, action, err); err != nil {
			return out, actions, err
		}
		if out.ServiceAccount == nil {
			prerequisite = children.KindServiceAccount + " " + children.PodServiceAccountName(dobj)
		}
	}
	// The name of the ConfigMap of inline files, named by a hash of them:
	// hashed once here for the sync and the clean-up after it.
	filesName := ""
	if desiredFiles := children.DesiredFilesConfigMap(dobj); desiredFiles != nil {
		filesName = desiredFiles.Name
		files, action, err := children.Sync(ctx, dobj, desiredFiles,
			children.UpdatedOps(children.KindFilesConfigMap, c.configMaps.In(ns), c.kubeClient.CoreV1().ConfigMaps(ns), children.MergeFilesConfigMap, recheckOwner))
		if err := record(children.KindFilesConfigMap, action, err); err != nil {
			return out, actions, err
		}
		if files == nil {
			prerequisite = children.KindFilesConfigMap + " " + desiredFiles.Name
		}
	}

	cfg, err := configrollout.StateOf(ns, c.config.RefsOf(dobj), c.config.Lookup)
	if err != nil {
		return out, actions, err
	}
	desired := children.DesiredDeployment(dobj, c.podSecurity)
	if configrollout.Enabled(dobj) {
		configrollout.WithHash(&desired.Spec.Template, cfg.Hash)
	}
	desired, hash, err := children.StampedDeployment(desired)
	if err != nil {
		return out, actions, err
	}
	// Both the hold and the sync read the cached Deployment: one decode
	// of it serves both (see pkg/caches/packed.go).
	cachedDeployment, cachedErr := c.deployments.In(dobj.Namespace)(dobj.Name)
	cached := func(string) (*appsv1.Deployment, error) { return cachedDeployment, cachedErr }
	held := prerequisite != ""
	if held {
		klog.FromContext(ctx).V(2).Info("The Deployment waits for what its pods need", "missing", prerequisite)
		if cachedErr == nil && metav1.IsControlledBy(cachedDeployment, dobj) {
			out.Deployment = cachedDeployment
		}
	} else if held, err = c.holdDeployment(ctx, dobj, cached, desired, cfg, &out); err != nil {
		return out, actions, err
	}
	if !held {
		if err := c.syncDeployment(ctx, dobj, cached, desired, hash, &out, record, recheckOwner); err != nil {
			return out, actions, err
		}
	}

	// Without a Deployment in the cache there is no telling whether pods
	// of an older one (orphaned, or not labelled as the controller's)
	// still use what it used: nothing goes.
	if cachedErr == nil && metav1.IsControlledBy(cachedDeployment, dobj) {
		if err := c.deleteSuperseded(ctx, dobj, cachedDeployment, filesName, record); err != nil {
			return out, actions, err
		}
	}

	out.Service, action, err = children.SyncOptional(ctx, dobj, children.WantsService(dobj), children.DesiredService(dobj),
		children.ServiceOps(c.services.In(ns), c.kubeClient.CoreV1().Services(ns), recheckOwner))
	if err := record("Service", action, err); err != nil {
		return out, actions, err
	}

	out.PDB, action, err = children.SyncOptional(ctx, dobj, children.WantsDisruptionBudget(dobj), children.DesiredPDB(dobj),
		children.UpdatedOps(children.KindPDB, c.pdbs.In(ns), c.kubeClient.PolicyV1().PodDisruptionBudgets(ns), children.MergePDB, recheckOwner))
	if err := record(children.KindPDB, action, err); err != nil {
		return out, actions, err
	}

	desiredAutoscaler, err := children.DesiredHPA(dobj)
	if err != nil {
		return out, actions, err
	}
	out.HPA, action, err = children.SyncOptional(ctx, dobj, children.WantsAutoscaling(dobj), desiredAutoscaler,
		children.UpdatedOps(children.KindHPA, c.hpas.In(ns), c.kubeClient.AutoscalingV2().HorizontalPodAutoscalers(ns), children.MergeHPA, recheckOwner))
	if err := record(children.KindHPA, action, err); err != nil {
		return out, actions, err
	}

	out.NetworkPolicy, action, err = children.SyncOptional(ctx, dobj, children.WantsNetworkPolicy(dobj), children.DesiredNetworkPolicy(dobj),
		children.UpdatedOps(children.KindNetworkPolicy, c.policies.In(ns), c.kubeClient.NetworkingV1().NetworkPolicies(ns), children.MergeNetworkPolicy, recheckOwner))
	if err := record(children.KindNetworkPolicy, action, err); err != nil {
		return out, actions, err
	}

	if kept := keptRoute(dobj, children.WantsGatewayRoute(dobj), children.KindIngress, c.ingresses.In(ns), func() bool {
		return children.KeepsIngress(dobj, c.gatewayRouteAccepted(dobj))
	}); kept != "" {
		out.KeptRoute = kept
	} else {
		out.Ingress, action, err = children.SyncOptional(ctx, dobj, children.WantsIngress(dobj), children.DesiredIngress(dobj),
			children.UpdatedOps(children.KindIngress, c.ingresses.In(ns), c.kubeClient.NetworkingV1().Ingresses(ns), children.MergeIngress, recheckOwner))
		if err := record(children.KindIngress, action, err); err != nil {
			return out, actions, err
		}
	}
	if err := c.syncGatewayRoutes(ctx, dobj, &out, record, recheckOwner); err != nil {
		return out, actions, err
	}
	if err := c.syncMonitors(ctx, dobj, &out, record, recheckOwner); err != nil {
		return out, actions, err
	}
	return out, actions, nil
}

// syncMonitors brings dobj's ServiceMonitor or PodMonitor in line, as
// syncChildren does its other children, the kind the spec asks for first,
// so that a switch of kind deletes the other one only once the new one is
// made. A kind the cluster does not serve has no monitor to delete either;
// that the one asked for is not served is reported in the Monitoring
// condition alone (Ready does not wait for scraping that cannot be set
// up), and not retried: watchMonitoring syncs dobj again once the kind is
// served.
func (c *Controller) syncMonitors(ctx context.Context, dobj *appv1.DeployObject, out *status.Outcome, record func(kind, action string, err error) error, recheckOwner func(context.Context) error) error {
	ns := dobj.Namespace
	want := children.MonitorKind(dobj)
	kinds := []string{children.KindServiceMonitor, children.KindPodMonitor}
	if want == children.KindPodMonitor {
		slices.Reverse(kinds)
	}
	for _, kind := range kinds {
		if kind != want && want != "" && out.Monitor == nil {
			// The new kind could not be made (a problem, or not
			// served): scraping goes on through the old one.
			continue
		}
		lister := c.monitors.Lister(kind)
		if lister == nil {
			if kind == want {
				out.MonitoringUnavailable = children.MonitoringUnavailableMessage(dobj, kind)
			}
			continue
		}
		desired, err := children.DesiredMonitor(dobj, kind)
		if err != nil {
			return err
		}
		client := children.DynamicClient{ResourceInterface: c.monitors.Client.Resource(children.MonitorResource(kind)).Namespace(ns)}
		synced, action, err := children.SyncOptional(ctx, dobj, kind == want, desired,
			children.UpdatedOps(kind, caches.MonitorsIn(lister, ns), client, children.MergeMonitor, recheckOwner))
		if children.IsResourceNotServed(err) {
			// The CRD was removed since the cache was built.
			c.monitors.Lost(kind)
			if kind == want {
				out.MonitoringUnavailable = children.MonitoringUnavailableMessage(dobj, kind)
			}
			continue
		}
		if kind == want {
			out.Monitor = synced
		}
		if err := record(kind, action, err); err != nil {
			return err
		}
	}
	return nil
}

// deleteSuperseded deletes what older pod templates of dobj used and no
// pod of d, its Deployment as cached, can still use: ServiceAccounts the
// spec no longer names (see children.SupersededServiceAccounts), and
// ConfigMaps of inline files beyond the history a rollback may need (see
// children.SupersededFilesConfigMaps). Until then they stay, and a later
// event of the Deployment (its rollout ending) brings dobj back. filesName
// is the ConfigMap of inline files the spec asks for, "" for none.
func (c *Controller) deleteSuperseded(ctx context.Context, dobj *appv1.DeployObject, d *appsv1.Deployment, filesName string, record func(kind, action string, err error) error) error {
	accounts, err := c.serviceAccounts.ControlledBy(dobj.Namespace, dobj.Name)
	if err != nil {
		return err
	}
	err = deleteChildren(ctx, children.KindServiceAccount, children.SupersededServiceAccounts(dobj, accounts, d), c.kubeClient.CoreV1().ServiceAccounts(dobj.Namespace).Delete, record)
	if err != nil {
		return err
	}
	files, err := c.configMaps.ControlledBy(dobj.Namespace, dobj.Name)
	if err != nil {
		return err
	}
	superseded := children.SupersededFilesConfigMaps(dobj, files, d, filesName, children.FilesHistory(dobj))
	return deleteChildren(ctx, children.KindFilesConfigMap, superseded, c.kubeClient.CoreV1().ConfigMaps(dobj.Namespace).Delete, record)
}

// deleteChildren deletes objs, each with a UID precondition: one that was
// deleted, or made again under its name, meanwhile is left alone.
func deleteChildren[T metav1.Object](ctx context.Context, kind string, objs []T, del func(context.Context, string, metav1.DeleteOptions) error, record func(kind, action string, err error) error) error {
	for _, obj := range objs {
		uid := obj.GetUID()
		err := del(ctx, obj.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			continue
		}
		action := "deleted " + kind + " " + obj.GetName()
		if err != nil {
			action, err = "", fmt.Errorf("deleting %s %s: %w", kind, obj.GetName(), err)
		}
		if err := record(kind, action, err); err != nil {
			return err
		}
	}
	return nil
}

// syncGatewayRoutes brings dobj's Gateway API routes in line, as
// syncChildren does its other children: the GRPCRoute, then the HTTPRoute
// and the one that redirects to https. Without the Gateway API, or
// without one of the two kinds, there is no route of that kind to delete
// either; the problem is not retried: watchGatewayAPI syncs dobj again
// once the kind is served. An HTTPRoute that a GRPCRoute replaces (a port
// turned to gRPC) is deleted only once the GRPCRoute exists: the two may
// not serve one hostname on a listener, so the switch cannot wait for the
// GRPCRoute to be accepted.
func (c *Controller) syncGatewayRoutes(ctx context.Context, dobj *appv1.DeployObject, out *status.Outcome, record func(kind, action string, err error) error, recheckOwner func(context.Context) error) error {
	ns := dobj.Namespace
	unavailable := func(key, kind, name string) {
		out.Problems = append(out.Problems, children.Problem{Kind: key, Reason: appv1.ReasonGatewayAPIUnavailable,
			Message: fmt.Sprintf("the cluster does not serve %s %ss (the Gateway API CRDs are not installed); the controller makes %s %s once it does", children.GatewayAPIGroupVersion, kind, kind, name)})
	}

	if grpcRoutes := c.gateway.GRPCRoutes(); grpcRoutes == nil {
		if children.WantsGRPCRoute(dobj) {
			unavailable(children.KindGRPCRoute, children.KindGRPCRoute, dobj.Name)
		}
	} else if kept := keptRoute(dobj, children.WantsIngress(dobj), children.KindGRPCRoute, grpcRoutes.GRPCRoutes(ns).Get, func() bool {
		return children.KeepsGatewayRoute(dobj, out.Ingress)
	}); kept != "" {
		out.KeptRoute = kept
	} else {
		desired, err := children.DesiredGRPCRoute(dobj)
		if err != nil {
			return err
		}
		synced, action, err := children.SyncOptional(ctx, dobj, children.WantsGRPCRoute(dobj), desired,
			children.UpdatedOps(children.KindGRPCRoute, grpcRoutes.GRPCRoutes(ns).Get, c.gateway.Client.GatewayV1().GRPCRoutes(ns), children.MergeGRPCRoute, recheckOwner))
		switch {
		case children.IsResourceNotServed(err):
			// The CRD was removed since the cache was built.
			c.gateway.LostGRPC()
			if children.WantsGRPCRoute(dobj) {
				unavailable(children.KindGRPCRoute, children.KindGRPCRoute, dobj.Name)
			}
		default:
			out.GRPCRoute = synced
			if err := record(children.KindGRPCRoute, action, err); err != nil {
				return err
			}
		}
	}

	routes := c.gateway.Routes()
	if routes == nil {
		if children.WantsHTTPRoute(dobj) {
			unavailable(children.KindHTTPRoute, children.KindHTTPRoute, dobj.Name)
		}
		if children.WantsHTTPSRedirect(dobj) {
			unavailable(children.KindHTTPSRedirect, children.KindHTTPRoute, children.HTTPSRedirectName(dobj))
		}
		return nil
	}
	if kept := keptRoute(dobj, children.WantsIngress(dobj), children.KindHTTPRoute, routes.HTTPRoutes(ns).Get, func() bool {
		return children.KeepsGatewayRoute(dobj, out.Ingress)
	}); kept != "" {
		out.KeptRoute = kept
		return nil
	}
	for _, r := range []struct {
		key, name string
		want      bool
		desired   func(*appv1.DeployObject) (*gatewayv1.HTTPRoute, error)
		synced    **gatewayv1.HTTPRoute
	}{
		{children.KindHTTPRoute, dobj.Name, children.WantsHTTPRoute(dobj), children.DesiredHTTPRoute, &out.HTTPRoute},
		{children.KindHTTPSRedirect, children.HTTPSRedirectName(dobj), children.WantsHTTPSRedirect(dobj), children.DesiredHTTPSRedirect, &out.HTTPSRedirect},
	} {
		if r.name == dobj.Name && children.WantsGRPCRoute(dobj) && out.GRPCRoute == nil {
			// Its replacement is not made yet.
			continue
		}
		desired, err := r.desired(dobj)
		if err != nil {
			return err
		}
		synced, action, err := children.SyncOptionalNamed(ctx, dobj, r.name, r.want, desired,
			children.UpdatedOps(children.KindHTTPRoute, routes.HTTPRoutes(ns).Get, c.gateway.Client.GatewayV1().HTTPRoutes(ns), children.MergeHTTPRoute, recheckOwner))
		if children.IsResourceNotServed(err) {
			// The Gateway API CRDs were removed since the cache was built.
			c.gateway.Lost()
			out.HTTPRoute, out.HTTPSRedirect = nil, nil
			if r.want {
				unavailable(r.key, children.KindHTTPRoute, r.name)
			}
			return nil
		}
		*r.synced = synced
		if err := record(r.key, action, err); err != nil {
			return err
		}
	}
	return nil
}

// gatewayRouteAccepted reports whether the Gateway API route dobj asks for
// exists, as the cache holds it, and every Gateway has accepted it.
func (c *Controller) gatewayRouteAccepted(dobj *appv1.DeployObject) bool {
	if children.WantsGRPCRoute(dobj) {
		routes := c.gateway.GRPCRoutes()
		if routes == nil {
			return false
		}
		r, err := routes.GRPCRoutes(dobj.Namespace).Get(dobj.Name)
		return err == nil && metav1.IsControlledBy(r, dobj) && children.GRPCRouteCondition(dobj, r, nil).Status == metav1.ConditionTrue
	}
	routes := c.gateway.Routes()
	if routes == nil {
		return false
	}
	r, err := routes.HTTPRoutes(dobj.Namespace).Get(dobj.Name)
	return err == nil && metav1.IsControlledBy(r, dobj) && children.HTTPRouteCondition(dobj, r, nil).Status == metav1.ConditionTrue
}

// keptRoute names dobj's route of kind, which its spec no longer asks for,
// when keep says it must stay until the route the spec asks for instead
// (switching: the spec asks for the other kind) carries traffic (see
// children.KeepsIngress); "" when there is no such route to keep, or it may
// go.
func keptRoute[T metav1.Object](dobj *appv1.DeployObject, switching bool, kind string, cached func(string) (T, error), keep func() bool) string {
	if !switching {
		return ""
	}
	live, err := cached(dobj.Name)
	if err != nil || !metav1.IsControlledBy(live, dobj) || !keep() {
		return ""
	}
	return kind + " " + live.GetName()
}

// syncDeployment brings the Deployment in line with desired, whose hash
// is hash, and records the outcome in out; cached is the Deployment as the
// cache holds it.
func (c *Controller) syncDeployment(ctx context.Context, dobj *appv1.DeployObject, cached func(string) (*appsv1.Deployment, error), desired *appsv1.Deployment, hash string, out *status.Outcome, record func(kind, action string, err error) error, recheckOwner func(context.Context) error) error {
	deployments := c.kubeClient.AppsV1().Deployments(dobj.Namespace)
	key := cache.MetaObjectToName(dobj)
	stamped := func() error { return children.StampTemplateHashes(desired, &dobj.Spec) }
	d, action, err := children.Sync(ctx, dobj, desired, children.Ops[*appsv1.Deployment]{
		Kind:   "Deployment",
		Cached: cached,
		Create: func(ctx context.Context, desired *appsv1.Deployment, opts metav1.CreateOptions) (*appsv1.Deployment, error) {
			if err := stamped(); err != nil {
				return nil, err
			}
			return deployments.Create(ctx, desired, opts)
		},
		Get:   deployments.Get,
		Patch: deployments.Patch,
		InSync: func(live, desired *appsv1.Deployment) bool {
			return children.DeploymentApplied(live, desired, hash, dobj.Status.DeploymentHash) || c.admitted.Admitted(key, hash, live)
		},
		Write: func(ctx context.Context, live, desired *appsv1.Deployment) (*appsv1.Deployment, error) {
			if err := stamped(); err != nil {
				return nil, err
			}
			return children.ApplyDeployment(ctx, deployments, live, desired)
		},
		RecheckOwner: recheckOwner,
	})
	if err == nil && action != "" {
		c.admitted.Record(key, hash, d, desired)
	}
	if out.ConfigRollout {
		// Rolling out new configuration is told by the Ready condition, as
		// a spec rollout is: it is no drift, and costs no event.
		action = ""
	}
	if err := record("Deployment", action, err); err != nil {
		return err
	}
	if d != nil {
		out.Deployment, out.DeploymentHash = d, hash
		out.ConfigHash = desired.Spec.Template.Annotations[appv1.AnnotationConfigHash]
	}
	return nil
}

// holdDeployment decides whether the Deployment must not be written now,
// and records why in out: a ConfigMap or Secret the pods need is missing
// (the pods could not start: they would be stuck in
// CreateContainerConfigError), or the write would start a rollout caused
// by configuration alone and no slot is free for it under
// --max-concurrent-config-rollouts. A new generation of the spec is
// never held by the limit. The Deployment as the cache shows it still
// tells the status.
func (c *Controller) holdDeployment(ctx context.Context, dobj *appv1.DeployObject, cached func(string) (*appsv1.Deployment, error), desired *appsv1.Deployment, cfg configrollout.State, out *status.Outcome) (bool, error) {
	live, err := cached(dobj.Name)
	switch {
	case apierrors.IsNotFound(err):
		live = nil
	case err != nil:
		return false, fmt.Errorf("reading Deployment %s from cache: %w", dobj.Name, err)
	case !metav1.IsControlledBy(live, dobj):
		// Adoption or a conflict: children.Sync knows what to do.
		live = nil
	}
	if c.podSecurityCheck != nil {
		if violations := c.podSecurityCheck(&desired.Spec.Template); len(violations) > 0 {
			out.Deployment = live
			out.Problems = append(out.Problems, children.Problem{Kind: "Deployment", Reason: appv1.ReasonPodSecurityViolation, Message: children.PodSecurityMessage(violations)})
			return true, nil
		}
	}
	key := cache.MetaObjectToName(dobj)
	if len(cfg.Missing) > 0 {
		out.Deployment = live
		out.Problems = append(out.Problems, children.Problem{Kind: "Deployment", Reason: appv1.ReasonConfigMissing, Message: configrollout.MissingMessage(cfg.Missing)})
		if left := c.configGrace.Left(key); left > 0 {
			// Applied together with its configuration, or with what
			// another controller makes it from: Reconciling until the
			// grace is over, then Stalled.
			out.ConfigMissingGrace = true
			c.queue.AddAfter(key, left)
		}
		return true, nil
	}
	c.configGrace.Found(key)
	if live == nil || desired.Annotations[appv1.AnnotationDeploymentHash] == dobj.Status.DeploymentHash {
		// Created, or what was last applied: no rollout to hold.
		return false, nil
	}
	if err := children.StampTemplateHashes(desired, &dobj.Spec); err != nil {
		return false, err
	}
	if !configrollout.Unrequested(dobj, live, desired) {
		return false, nil
	}
	if !c.config.Limiter.Acquire(key) {
		klog.FromContext(ctx).V(2).Info("Rollout not asked for by the spec waits for a slot")
		out.Deployment, out.ConfigPending = live, true
		// A scale is no rollout, and does not wait with the template.
		if patch := children.ScalePatch(live, desired); patch != nil {
			scaled, err := c.kubeClient.AppsV1().Deployments(dobj.Namespace).Patch(ctx, dobj.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: identity.FieldManager})
			if err != nil {
				return true, fmt.Errorf("scaling Deployment %s while its rollout waits: %w", dobj.Name, err)
			}
			out.Deployment = scaled
		}
		return true, nil
	}
	// Should the rollout never be seen finishing, a sync at the timeout
	// frees the slot.
	c.queue.AddAfter(key, configrollout.Timeout)
	out.ConfigRollout = true
	desired.Annotations[appv1.AnnotationLimitedRollout] = "true"
	return false, nil
}

// ownerRecheck returns a check, made at most once per sync, that dobj is
// still the DeployObject the cache shows and is not being deleted, read
// fresh from the API server: a child is adopted only by a live owner, as
// the Deployment controller's controller-ref manager does.
func (c *Controller) ownerRecheck(dobj *appv1.DeployObject) func(context.Context) error {
	var once sync.Once
	var err error
	return func(ctx context.Context) error {
		once.Do(func() {
			fresh, getErr := c.client.AppV1().DeployObjects(dobj.Namespace).Get(ctx, dobj.Name, metav1.GetOptions{})
			switch {
			case getErr != nil:
				err = fmt.Errorf("reading DeployObject before adopting: %w", getErr)
			case fresh.UID != dobj.UID:
				err = fmt.Errorf("DeployObject %s was replaced (UID %s, cached %s); not adopting", dobj.Name, fresh.UID, dobj.UID)
			case fresh.DeletionTimestamp != nil:
				err = fmt.Errorf("DeployObject %s is being deleted; not adopting", dobj.Name)
			}
		})
		return err
	}
}
