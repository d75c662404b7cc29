package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	informers "deployobject.dev/controller/pkg/generated/informers/externalversions/app/v1"
)

// configIndex is the DeployObject informer's index from a referenced
// ConfigMap or Secret (configIndexKey) to the DeployObjects whose pods use
// it.
const configIndex = "config"

// configRolloutTimeout bounds how long one configuration rollout holds its
// slot: well past the Deployment's default progress deadline (600 s), after
// which a stuck rollout reports ProgressDeadlineExceeded and gives its slot
// up anyway.
const configRolloutTimeout = 15 * time.Minute

// configTracking is the controller's view of the ConfigMaps and Secrets
// the pods use. Its zero value tracks nothing: no config hash, no
// ConfigMissing.
type configTracking struct {
	// lookup reads a tracked ConfigMap or Secret from the cache; nil when
	// nothing is tracked.
	lookup configLookup
	// secrets: Secret references are tracked (--track-secrets).
	secrets bool
	// index finds the DeployObjects that use an object.
	index cache.Indexer
	// delay is the coalescing window: a DeployObject is synced this long
	// after the first change of its configuration, and the further changes
	// meanwhile are part of the same sync (--config-rollout-delay).
	delay time.Duration
	// limiter bounds the configuration rollouts under way.
	limiter *rolloutLimiter
}

// trackConfig makes c follow the ConfigMaps, and the Secrets when secrets
// is not nil, that DeployObjects' pods use: it indexes the DeployObjects by
// what they use and syncs exactly those that use an object whose data
// changed. It must be called before the informers start.
func (c *Controller) trackConfig(ctx context.Context, deployObjectInformer informers.DeployObjectInformer, configMaps coreinformers.ConfigMapInformer, secrets coreinformers.SecretInformer, maxRollouts int, delay time.Duration) error {
	dobjInformer := deployObjectInformer.Informer()
	if err := dobjInformer.AddIndexers(cache.Indexers{configIndex: configIndexFunc(secrets != nil)}); err != nil {
		return fmt.Errorf("adding the DeployObject index of ConfigMaps and Secrets: %w", err)
	}
	cmLister := configMaps.Lister()
	var secretLister corelisters.SecretLister
	informerList := []cache.SharedIndexInformer{configMaps.Informer()}
	if secrets != nil {
		secretLister = secrets.Lister()
		informerList = append(informerList, secrets.Informer())
	}
	c.config = configTracking{
		lookup: func(kind configKind, namespace, name string) (configData, error) {
			if kind != kindSecret {
				return configMapData(cmLister.ConfigMaps(namespace).Get(name))
			}
			if secretLister == nil {
				return configData{}, errors.New("secrets are not tracked")
			}
			return secretData(secretLister.Secrets(namespace).Get(name))
		},
		secrets: secrets != nil,
		index:   dobjInformer.GetIndexer(),
		delay:   delay,
		limiter: newRolloutLimiter(maxRollouts, configRolloutTimeout, c.queue.Add),
	}
	logger := klog.FromContext(ctx)
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueConfigUsers,
		UpdateFunc: c.updateConfig,
		DeleteFunc: c.enqueueConfigUsers,
	}
	for _, inf := range informerList {
		if _, err := inf.AddEventHandlerWithOptions(handler, cache.HandlerOptions{Logger: &logger}); err != nil {
			return fmt.Errorf("adding ConfigMap or Secret event handler: %w", err)
		}
		c.cachesSynced = append(c.cachesSynced, inf.HasSynced)
	}
	return nil
}

// updateConfig syncs the users of a ConfigMap or Secret whose data
// changed. Resyncs, and changes of metadata alone (labels, annotations,
// owners), change no hash and are dropped.
func (c *Controller) updateConfig(oldObj, newObj any) {
	switch o := oldObj.(type) {
	case *corev1.ConfigMap:
		if n, ok := newObj.(*corev1.ConfigMap); ok && maps.Equal(o.Data, n.Data) {
			return
		}
	case *corev1.Secret:
		if n, ok := newObj.(*corev1.Secret); ok && maps.EqualFunc(o.Data, n.Data, func(a, b []byte) bool { return string(a) == string(b) }) {
			return
		}
	}
	c.enqueueConfigUsers(newObj)
}

// enqueueConfigUsers enqueues, after the coalescing window, the
// DeployObjects that use a ConfigMap or Secret that appeared, changed or
// disappeared.
func (c *Controller) enqueueConfigUsers(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	var key string
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		key = configIndexKey(kindConfigMap, o.Namespace, o.Name)
	case *corev1.Secret:
		key = configIndexKey(kindSecret, o.Namespace, o.Name)
	default:
		utilruntime.HandleError(fmt.Errorf("unexpected object of type %T in a ConfigMap or Secret informer", obj))
		return
	}
	users, err := c.config.index.ByIndex(configIndex, key)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("looking up the users of %s: %w", key, err))
		return
	}
	for _, u := range users {
		if dobj, ok := u.(*appv1.DeployObject); ok {
			c.queue.AddAfter(cache.MetaObjectToName(dobj), c.config.delay)
		}
	}
}
