package configrollout

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/caches"
)

// ConfigMapData and SecretData are Data from a cached object, or
// from its absence.
func ConfigMapData(cm *corev1.ConfigMap, err error) (Data, error) {
	if err != nil {
		return absentConfig(err)
	}
	return hexHashes(cm.BinaryData), nil
}

func SecretData(s *corev1.Secret, err error) (Data, error) {
	if err != nil {
		return absentConfig(err)
	}
	return hexHashes(s.Data), nil
}

// absentConfig is Data for an object the cache does not have, or
// the cache's error.
func absentConfig(err error) (Data, error) {
	if apierrors.IsNotFound(err) {
		return Data{}, nil
	}
	return Data{}, err
}

// hexHashes is Data of a cached object's hashes, as 16 hex digits
// each: the form the config hash has been computed from since it exists,
// so that the bytes held in the cache change no DeployObject's config hash.
func hexHashes(hashes map[string][]byte) Data {
	d := Data{found: true, hashes: make(map[string]string, len(hashes))}
	for k, v := range hashes {
		d.hashes[k] = hex.EncodeToString(v)
	}
	return d
}

// Unrequested reports whether writing desired over live, the Deployment
// dobj controls as the cache shows it, would roll the pods although the
// spec did not ask for it: the template the controller makes changed
// (appv1.AnnotationTemplateHash) while what the spec asks of it
// (appv1.AnnotationPodSpecHash) did not. New configuration, and a new pod
// security profile or controller version, are such rollouts, and wait for
// a slot. A change of the spec's pod template, a Deployment to create and
// drift (someone else changed the template) never wait, and a scale is no
// rollout. A Deployment written before the annotations existed counts as
// such a rollout when its config hash changes while the generation was
// already observed.
func Unrequested(dobj *appv1.DeployObject, live, desired *appsv1.Deployment) bool {
	if live == nil {
		return false
	}
	asked, ok := live.Annotations[appv1.AnnotationPodSpecHash]
	if !ok {
		return dobj.Status.ObservedGeneration == dobj.Generation &&
			live.Spec.Template.Annotations[appv1.AnnotationConfigHash] != desired.Spec.Template.Annotations[appv1.AnnotationConfigHash]
	}
	return asked == desired.Annotations[appv1.AnnotationPodSpecHash] &&
		live.Annotations[appv1.AnnotationTemplateHash] != desired.Annotations[appv1.AnnotationTemplateHash]
}

// Tracking is the controller's view of the ConfigMaps and Secrets the pods
// use. Its zero value tracks nothing: no config hash, no ConfigMissing, no
// limit.
type Tracking struct {
	// Lookup reads a tracked ConfigMap or Secret from the cache; nil when
	// nothing is tracked.
	Lookup Lookup
	// Secrets: Secret references are tracked (--track-secrets).
	Secrets bool
	// Limiter bounds the configuration rollouts under way.
	Limiter *Limiter
	// index finds the DeployObjects that use an object.
	index cache.Indexer
	// delay is the coalescing window: a DeployObject is synced this long
	// after the first change of its configuration, and the further changes
	// meanwhile are part of the same sync (--config-rollout-delay).
	delay time.Duration
	// enqueueAfter syncs a DeployObject after a delay.
	enqueueAfter func(cache.ObjectName, time.Duration)
}

// Track follows the ConfigMaps, and the Secrets when secrets is not nil,
// that DeployObjects' pods use: it indexes the DeployObjects by what they
// use and syncs (enqueueAfter) exactly those that use an object whose data
// changed; enqueue wakes a DeployObject whose turn to roll out came. It
// returns the tracking and the HasSynced of the informers it follows, by
// kind, and must be called before the informers start.
func Track(ctx context.Context, deployObjects, configMaps, secrets cache.SharedIndexInformer, maxRollouts int, delay time.Duration, enqueue func(cache.ObjectName), enqueueAfter func(cache.ObjectName, time.Duration)) (*Tracking, map[Kind]cache.InformerSynced, error) {
	if err := deployObjects.AddIndexers(cache.Indexers{IndexName: IndexFunc(secrets != nil)}); err != nil {
		return nil, nil, fmt.Errorf("adding the DeployObject index of ConfigMaps and Secrets: %w", err)
	}
	configMapsIn := caches.NewPackedLister[corev1.ConfigMap](configMaps.GetIndexer(), corev1.Resource("configmaps")).In
	var secretsIn func(namespace string) func(name string) (*corev1.Secret, error)
	informers := map[Kind]cache.SharedIndexInformer{KindConfigMap: configMaps}
	if secrets != nil {
		secretsIn = caches.NewPackedLister[corev1.Secret](secrets.GetIndexer(), corev1.Resource("secrets")).In
		informers[KindSecret] = secrets
	}
	t := &Tracking{
		Lookup: func(kind Kind, namespace, name string) (Data, error) {
			if kind != KindSecret {
				return ConfigMapData(configMapsIn(namespace)(name))
			}
			if secretsIn == nil {
				return Data{}, errors.New("secrets are not tracked")
			}
			return SecretData(secretsIn(namespace)(name))
		},
		Secrets:      secrets != nil,
		Limiter:      NewLimiter(maxRollouts, Timeout, enqueue),
		index:        deployObjects.GetIndexer(),
		delay:        delay,
		enqueueAfter: enqueueAfter,
	}
	logger := klog.FromContext(ctx)
	synced := map[Kind]cache.InformerSynced{}
	for kind, inf := range informers {
		if _, err := inf.AddEventHandlerWithOptions(t.Handler(kind), cache.HandlerOptions{Logger: &logger}); err != nil {
			return nil, nil, fmt.Errorf("adding the %s event handler: %w", kind, err)
		}
		synced[kind] = inf.HasSynced
	}
	return t, synced, nil
}

// RefsOf are the references of dobj's pods to what t tracks.
func (t *Tracking) RefsOf(dobj *appv1.DeployObject) []Ref {
	if t.Lookup == nil {
		return nil
	}
	return Refs(&dobj.Spec, t.Secrets)
}

// Handler is the event handler Track registers for kind: it syncs the users of a ConfigMap or Secret, of kind, that
// appeared, disappeared, or whose data changed. The cached objects do not
// tell their kind (see caches.slimConfigMap): each informer has its
// handler.
func (t *Tracking) Handler(kind Kind) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { t.enqueueUsers(kind, obj) },
		UpdateFunc: func(oldObj, newObj any) { t.update(kind, oldObj, newObj) },
		DeleteFunc: func(obj any) { t.enqueueUsers(kind, obj) },
	}
}

// update syncs the users of a ConfigMap or Secret whose data changed.
// Resyncs, and changes of metadata alone (labels, annotations, owners),
// change no hash and are dropped: the packed bytes are the hashes alone.
func (t *Tracking) update(kind Kind, oldObj, newObj any) {
	o, oldOK := oldObj.(*caches.Packed)
	n, newOK := newObj.(*caches.Packed)
	if oldOK && newOK && bytes.Equal(o.Protobuf, n.Protobuf) {
		return
	}
	t.enqueueUsers(kind, newObj)
}

// enqueueUsers enqueues, after the coalescing window, the DeployObjects
// that use a ConfigMap or Secret that appeared, changed or disappeared.
func (t *Tracking) enqueueUsers(kind Kind, obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	p, ok := obj.(*caches.Packed)
	if !ok {
		utilruntime.HandleError(fmt.Errorf("unexpected object of type %T in the %s informer", obj, kind))
		return
	}
	key := IndexKey(kind, p.Namespace, p.Name)
	users, err := t.index.ByIndex(IndexName, key)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("looking up the users of %s: %w", key, err))
		return
	}
	for _, u := range users {
		if dobj, ok := u.(*appv1.DeployObject); ok {
			t.enqueueAfter(cache.MetaObjectToName(dobj), t.delay)
		}
	}
}
