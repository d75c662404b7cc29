package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	autoscalinginformers "k8s.io/client-go/informers/autoscaling/v2"
	coreinformers "k8s.io/client-go/informers/core/v1"
	networkinginformers "k8s.io/client-go/informers/networking/v1"
	policyinformers "k8s.io/client-go/informers/policy/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	clientset "deployobject.dev/controller/pkg/generated/clientset/versioned"
	informers "deployobject.dev/controller/pkg/generated/informers/externalversions/app/v1"
	listers "deployobject.dev/controller/pkg/generated/listers/app/v1"
)

const (
	controllerName = "deployobject-controller"
	// fieldManager names the controller in managedFields of what it writes.
	fieldManager = controllerName
	queueName    = "deployobject"
)

// Controller keeps, for every DeployObject, a Deployment, and a Service,
// PodDisruptionBudget, HorizontalPodAutoscaler and Ingress or HTTPRoute when
// it asks for them, that match it, and reports their state in the
// DeployObject's status.
type Controller struct {
	kubeClient kubernetes.Interface
	client     clientset.Interface

	deployObjects listers.DeployObjectLister
	// The child caches hold packed objects (see packed.go).
	deployments packedLister[appsv1.Deployment, *appsv1.Deployment]
	services    packedLister[corev1.Service, *corev1.Service]
	pdbs        packedLister[policyv1.PodDisruptionBudget, *policyv1.PodDisruptionBudget]
	hpas        packedLister[autoscalingv2.HorizontalPodAutoscaler, *autoscalingv2.HorizontalPodAutoscaler]
	ingresses   packedLister[networkingv1.Ingress, *networkingv1.Ingress]
	// gateway holds the HTTPRoute cache once the cluster serves
	// HTTPRoutes; nil runs without the Gateway API.
	gateway      *gatewayRoutes
	cachesSynced []cache.InformerSynced

	queue    workqueue.TypedRateLimitingInterface[cache.ObjectName]
	recorder record.EventRecorder
	metrics  *reconcileMetrics
	// written holds status writes the DeployObject cache has not shown yet.
	written *writtenStatuses

	// now is the clock for condition transition times; tests replace it.
	now func() metav1.Time
	// podSecurity is filled into every pod template (--pod-security-profile).
	podSecurity podSecurityProfile
	// shutdownGrace bounds how long syncs in flight at shutdown may take.
	shutdownGrace time.Duration
	// childBatchPeriod delays syncs caused by child events, so that the
	// burst of status changes a rollout makes costs one status write.
	childBatchPeriod time.Duration
	// config follows the ConfigMaps and Secrets the pods use (see
	// trackConfig); its zero value follows none.
	config configTracking
}

// NewController wires the informers' event handlers to the work queue. The
// child informers must be restricted to objects carrying managedByLabel.
func NewController(
	ctx context.Context,
	kubeClient kubernetes.Interface,
	client clientset.Interface,
	deployObjectInformer informers.DeployObjectInformer,
	deploymentInformer appsinformers.DeploymentInformer,
	serviceInformer coreinformers.ServiceInformer,
	pdbInformer policyinformers.PodDisruptionBudgetInformer,
	hpaInformer autoscalinginformers.HorizontalPodAutoscalerInformer,
	ingressInformer networkinginformers.IngressInformer,
	gateway *gatewayRoutes,
	recorder record.EventRecorder,
	metrics *reconcileMetrics,
) (*Controller, error) {
	c := &Controller{
		kubeClient:    kubeClient,
		client:        client,
		deployObjects: deployObjectInformer.Lister(),
		deployments:   newPackedLister[appsv1.Deployment](deploymentInformer.Informer().GetIndexer(), appsv1.Resource("deployments")),
		services:      newPackedLister[corev1.Service](serviceInformer.Informer().GetIndexer(), corev1.Resource("services")),
		pdbs:          newPackedLister[policyv1.PodDisruptionBudget](pdbInformer.Informer().GetIndexer(), policyv1.Resource("poddisruptionbudgets")),
		hpas:          newPackedLister[autoscalingv2.HorizontalPodAutoscaler](hpaInformer.Informer().GetIndexer(), autoscalingv2.Resource("horizontalpodautoscalers")),
		ingresses:     newPackedLister[networkingv1.Ingress](ingressInformer.Informer().GetIndexer(), networkingv1.Resource("ingresses")),
		gateway:       gateway,
		cachesSynced: []cache.InformerSynced{
			deployObjectInformer.Informer().HasSynced,
			deploymentInformer.Informer().HasSynced,
			serviceInformer.Informer().HasSynced,
			pdbInformer.Informer().HasSynced,
			hpaInformer.Informer().HasSynced,
			ingressInformer.Informer().HasSynced,
			gateway.hasSynced,
		},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			newRateLimiter(),
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: queueName},
		),
		recorder:      recorder,
		metrics:       metrics,
		written:       newWrittenStatuses(deployObjectInformer.Lister()),
		now:           metav1.Now,
		shutdownGrace: 10 * time.Second,
		podSecurity:   profileNone,
	}

	logger := klog.FromContext(ctx)
	if _, err := deployObjectInformer.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: c.updateDeployObject,
		DeleteFunc: c.enqueue,
	}, cache.HandlerOptions{Logger: &logger}); err != nil {
		return nil, fmt.Errorf("adding DeployObject event handler: %w", err)
	}
	childHandler := c.childEventHandler()
	for _, inf := range []cache.SharedIndexInformer{deploymentInformer.Informer(), serviceInformer.Informer(), pdbInformer.Informer(), hpaInformer.Informer(), ingressInformer.Informer()} {
		if _, err := inf.AddEventHandlerWithOptions(childHandler, cache.HandlerOptions{Logger: &logger}); err != nil {
			return nil, fmt.Errorf("adding child event handler: %w", err)
		}
	}
	return c, nil
}

// childEventHandler enqueues the owner of a child that changed.
func (c *Controller) childEventHandler() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueOwner,
		UpdateFunc: c.updateChild,
		DeleteFunc: c.enqueueOwner,
	}
}

// watchGatewayAPI starts the HTTPRoute cache once the cluster serves
// HTTPRoutes (see gatewayRoutes), then syncs every DeployObject that asks
// for an HTTPRoute: each was left Ready=False GatewayAPIUnavailable without
// a retry, waiting for this. It returns when ctx ends.
func (c *Controller) watchGatewayAPI(ctx context.Context) {
	if c.gateway == nil {
		return
	}
	c.gateway.run(ctx, c.childEventHandler(), func() {
		all, err := c.deployObjects.List(labels.Everything())
		if err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Listing DeployObjects from the cache")
			return
		}
		for _, d := range all {
			if wantsHTTPRoute(d) {
				c.enqueue(d)
			}
		}
	})
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
	if !cache.WaitForNamedCacheSyncWithContext(runCtx, c.cachesSynced...) {
		if runCtx.Err() != nil {
			// Asked to stop before the caches synced: nothing was started.
			return nil
		}
		return errors.New("informer caches did not sync")
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
	c.metrics.observe(time.Since(start), err)

	switch {
	case err == nil:
		c.queue.Forget(key)
	case isExpectedRetry(err):
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
	c.written.observe(cache.MetaObjectToName(newDO), newDO.ResourceVersion)
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
	case *packed:
		return o.GetObjectMeta(), nil
	case *gatewayv1.HTTPRoute:
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
		if labels := obj.GetLabels(); labels[managedByLabel] == managedByValue && labels[nameLabel] != "" {
			return &cache.ObjectName{Namespace: obj.GetNamespace(), Name: labels[nameLabel]}
		}
		return nil
	}
	if ref.Kind != deployObjectKind.Kind {
		return nil
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != deployObjectKind.Group {
		return nil
	}
	return &cache.ObjectName{Namespace: obj.GetNamespace(), Name: ref.Name}
}
