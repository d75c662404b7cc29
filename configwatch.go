package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
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

// configInformer is the informer of one kind of configuration object.
type configInformer struct {
	kind     configKind
	informer cache.SharedIndexInformer
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
	configMapsIn := newPackedLister[corev1.ConfigMap](configMaps.Informer().GetIndexer(), corev1.Resource("configmaps")).in
	var secretsIn func(namespace string) func(name string) (*corev1.Secret, error)
	informerList := []configInformer{{kindConfigMap, configMaps.Informer()}}
	if secrets != nil {
		secretsIn = newPackedLister[corev1.Secret](secrets.Informer().GetIndexer(), corev1.Resource("secrets")).in
		informerList = append(informerList, configInformer{kindSecret, secrets.Informer()})
	}
	c.config = configTracking{
		lookup: func(kind configKind, namespace, name string) (configData, error) {
			if kind != kindSecret {
				return configMapData(configMapsIn(namespace)(name))
			}
			if secretsIn == nil {
				return configData{}, errors.New("secrets are not tracked")
			}
			return secretData(secretsIn(namespace)(name))
		},
		secrets: secrets != nil,
		index:   dobjInformer.GetIndexer(),
		delay:   delay,
		limiter: newRolloutLimiter(maxRollouts, configRolloutTimeout, c.queue.Add),
	}
	logger := klog.FromContext(ctx)
	for _, i := range informerList {
		if _, err := i.informer.AddEventHandlerWithOptions(c.configHandler(i.kind), cache.HandlerOptions{Logger: &logger}); err != nil {
			return fmt.Errorf("adding the %s event handler: %w", i.kind, err)
		}
		c.cachesSynced = append(c.cachesSynced, i.informer.HasSynced)
	}
	return nil
}

// configHandler syncs the users of a ConfigMap or Secret, of kind, that
// appeared, disappeared, or whose data changed. The cached objects do not
// tell their kind (see slimConfigMap): each informer has its handler.
func (c *Controller) configHandler(kind configKind) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueueConfigUsers(kind, obj) },
		UpdateFunc: func(oldObj, newObj any) { c.updateConfig(kind, oldObj, newObj) },
		DeleteFunc: func(obj any) { c.enqueueConfigUsers(kind, obj) },
	}
}

// updateConfig syncs the users of a ConfigMap or Secret whose data
// changed. Resyncs, and changes of metadata alone (labels, annotations,
// owners), change no hash and are dropped: the packed bytes are the hashes
// alone.
func (c *Controller) updateConfig(kind configKind, oldObj, newObj any) {
	o, oldOK := oldObj.(*packed)
	n, newOK := newObj.(*packed)
	if oldOK && newOK && bytes.Equal(o.Protobuf, n.Protobuf) {
		return
	}
	c.enqueueConfigUsers(kind, newObj)
}

// enqueueConfigUsers enqueues, after the coalescing window, the
// DeployObjects that use a ConfigMap or Secret that appeared, changed or
// disappeared.
func (c *Controller) enqueueConfigUsers(kind configKind, obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	p, ok := obj.(*packed)
	if !ok {
		utilruntime.HandleError(fmt.Errorf("unexpected object of type %T in the %s informer", obj, kind))
		return
	}
	key := configIndexKey(kind, p.Namespace, p.Name)
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
