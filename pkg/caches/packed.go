package caches

import (
	"fmt"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// The caches of the children with a protobuf encoding (Deployments,
// Services, PodDisruptionBudgets, HorizontalPodAutoscalers, Ingresses) hold
// each object packed: the trimmed object (see transform.go) encoded as
// protobuf, beside the little metadata the store and the event handlers
// read. A decoded Deployment costs its 1.2 KiB struct before any of its
// contents, and each of its label maps over 300 bytes; packed, the whole
// trimmed Deployment is a few hundred bytes. Reading one costs a decode of
// about 10 µs, which a sync does once or twice per child, against the
// milliseconds its requests take; the event handlers never decode.
// ConfigMaps and Secrets are packed too, as an object holding only their
// per-key hashes, with no metadata in the bytes (see slimConfigMap).
//
// A read returns a fresh object, owned by the caller, so that no cached
// object can be changed through it.

// protoObject is a built-in kind with its generated protobuf encoding.
type protoObject interface {
	metav1.Object
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// Packed is what a cache holds of one object. Its metadata is what the
// store's key, the event handlers (ownerName) and client-go's cache checks
// read: the name, namespace, UID, resourceVersion and owner references,
// and the labels only of an object without a controller, where ownerName
// looks for the DeployObject that would adopt it. It is not a
// metav1.ObjectMeta, whose 232 bytes would be most of a small packed
// object: client-go reads it through GetObjectMeta. Its fields are
// exported so that equality.Semantic.DeepEqual, which refuses unexported
// fields, can compare packed objects.
type Packed struct {
	Name, Namespace, ResourceVersion string
	UID                              types.UID
	OwnerReferences                  []metav1.OwnerReference
	Labels                           map[string]string
	Protobuf                         []byte
}

var (
	_ runtime.Object            = &Packed{}
	_ metav1.ObjectMetaAccessor = &Packed{}
)

// GetObjectKind: a packed object has no kind of its own, as objects from a
// watch have none once decoded.
func (p *Packed) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject is what client-go's cache mutation detector keeps to
// compare the cache against later.
func (p *Packed) DeepCopyObject() runtime.Object {
	c := *p
	c.OwnerReferences = nil
	for _, ref := range p.OwnerReferences {
		c.OwnerReferences = append(c.OwnerReferences, *ref.DeepCopy())
	}
	c.Labels = maps.Clone(p.Labels)
	c.Protobuf = slices.Clone(p.Protobuf)
	return &c
}

// GetObjectMeta is p's metadata as client-go's meta.Accessor reads it,
// built on each call, with the encoding beside it: the watch-list
// consistency detector compares what it returns for cached and listed
// objects, which then covers what the cache holds.
func (p *Packed) GetObjectMeta() metav1.Object {
	return &packedMeta{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion, OwnerReferences: p.OwnerReferences, Labels: p.Labels},
		Protobuf:   p.Protobuf,
	}
}

// packedMeta is a packed object's metadata as a metav1.Object.
type packedMeta struct {
	metav1.ObjectMeta
	Protobuf []byte
}

// pack encodes obj, already trimmed.
func pack(obj protoObject) (*Packed, error) {
	data, err := obj.Marshal()
	if err != nil {
		return nil, fmt.Errorf("encoding %T %s/%s for the cache: %w", obj, obj.GetNamespace(), obj.GetName(), err)
	}
	p := &Packed{
		Name:            obj.GetName(),
		Namespace:       obj.GetNamespace(),
		UID:             obj.GetUID(),
		ResourceVersion: obj.GetResourceVersion(),
		OwnerReferences: obj.GetOwnerReferences(),
		Protobuf:        data,
	}
	if metav1.GetControllerOfNoCopy(obj) == nil {
		p.Labels = obj.GetLabels()
	}
	return p, nil
}

// PackedLister reads a cache of packed objects of one kind, T, whose
// pointer type is P.
type PackedLister[T any, P interface {
	*T
	protoObject
}] struct {
	indexer  cache.Indexer
	resource schema.GroupResource
}

// NewPackedLister reads the packed objects of resource in indexer.
func NewPackedLister[T any, P interface {
	*T
	protoObject
}](indexer cache.Indexer, resource schema.GroupResource) PackedLister[T, P] {
	return PackedLister[T, P]{indexer: indexer, resource: resource}
}

// In returns the reader of the objects in namespace, by name, as the typed
// listers' Get does: a NotFound error for an object the cache lacks.
func (l PackedLister[T, P]) In(namespace string) func(name string) (P, error) {
	return func(name string) (P, error) {
		if l.indexer == nil {
			return nil, l.noCache()
		}
		item, exists, err := l.indexer.GetByKey(cache.ObjectName{Namespace: namespace, Name: name}.String())
		if err != nil {
			return nil, err
		}
		if !exists {
			return nil, apierrors.NewNotFound(l.resource, name)
		}
		p, ok := item.(*Packed)
		if !ok {
			return nil, fmt.Errorf("the %s cache holds a %T", l.resource, item)
		}
		return l.unpack(p)
	}
}

// unpack decodes p. An object packed as hashes (a ConfigMap or Secret, see
// config.go) gets its identity from p, as it does not carry it.
func (l PackedLister[T, P]) unpack(p *Packed) (P, error) {
	obj := P(new(T))
	if err := obj.Unmarshal(p.Protobuf); err != nil {
		return nil, fmt.Errorf("decoding %s %s/%s from the cache: %w", l.resource, p.Namespace, p.Name, err)
	}
	if obj.GetName() == "" {
		obj.SetName(p.Name)
		obj.SetNamespace(p.Namespace)
		obj.SetUID(p.UID)
		obj.SetResourceVersion(p.ResourceVersion)
		obj.SetOwnerReferences(slices.Clone(p.OwnerReferences))
	}
	return obj, nil
}

// ControlledBy decodes the objects the DeployObject namespace/name
// controls; the cache must have the ControllerIndex.
func (l PackedLister[T, P]) ControlledBy(namespace, name string) ([]P, error) {
	if l.indexer == nil {
		return nil, l.noCache()
	}
	items, err := l.indexer.ByIndex(ControllerIndex, cache.ObjectName{Namespace: namespace, Name: name}.String())
	if err != nil {
		return nil, fmt.Errorf("reading the %s that %s/%s controls from the cache: %w", l.resource, namespace, name, err)
	}
	return l.decode(items)
}

// List decodes every object the cache holds, for the rare pass over all of
// them (a start-up); a sync reads one object with In.
func (l PackedLister[T, P]) List() ([]P, error) {
	if l.indexer == nil {
		return nil, l.noCache()
	}
	return l.decode(l.indexer.List())
}

func (l PackedLister[T, P]) decode(items []any) ([]P, error) {
	out := make([]P, 0, len(items))
	for _, item := range items {
		p, ok := item.(*Packed)
		if !ok {
			return nil, fmt.Errorf("the %s cache holds a %T", l.resource, item)
		}
		obj, err := l.unpack(p)
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

// noCache is the error of a lister of a kind its caches lack (see
// ListerOf): a kind missing from ChildKinds.
func (l PackedLister[T, P]) noCache() error {
	return fmt.Errorf("no cache of %s: the kind is not in the table of kinds", l.resource)
}
