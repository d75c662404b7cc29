package caches

import (
	"fmt"
	"reflect"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"deployobject.dev/controller/pkg/children"
)

// ChildKinds are the typed kinds of child, one row each: the one list from
// which the informers, the readers of their caches, the caches-synced
// checks, the event handlers and the transforms are derived. A new typed
// kind is a row here (its file in pkg/children supplies the trim) and a step
// in pkg/reconcile. The Gateway API routes and prometheus-operator's
// monitors are not rows: their caches start only once the cluster serves
// them (see GatewayRoutes and Monitors).
func ChildKinds() Kinds {
	return Kinds{
		KindOf(appsv1.SchemeGroupVersion.WithResource("deployments"), func(c kubernetes.Interface, ns string) *cache.ListWatch {
			l := c.AppsV1().Deployments(ns)
			return listWatch(l.List, l.Watch, managedOnly)
		}, packed(children.SlimDeployment)),
		KindOf(corev1.SchemeGroupVersion.WithResource("services"), func(c kubernetes.Interface, ns string) *cache.ListWatch {
			l := c.CoreV1().Services(ns)
			return listWatch(l.List, l.Watch, managedOnly)
		}, packed(children.SlimService)),
		// A ServiceAccount the spec stopped naming is found by its owner.
		IndexedByController(KindOf(corev1.SchemeGroupVersion.WithResource("serviceaccounts"), func(c kubernetes.Interface, ns string) *cache.ListWatch {
			l := c.CoreV1().ServiceAccounts(ns)
			return listWatch(l.List, l.Watch, managedOnly)
		}, packed(children.SlimServiceAccount))),
		// Every ConfigMap, not only the children holding inline files: a
		// DeployObject may use any (see configrollout.Track). The cache
		// holds per-key hashes of the values (see slimConfigMap); the
		// ConfigMaps of inline files that older pod templates mount are
		// found by their owner.
		IndexedByController(KindOf(corev1.SchemeGroupVersion.WithResource("configmaps"), func(c kubernetes.Interface, ns string) *cache.ListWatch {
			l := c.CoreV1().ConfigMaps(ns)
			return listWatch(l.List, l.Watch, nil)
		}, slimConfigMap)),
		KindOf(policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets"), func(c kubernetes.Interface, ns string) *cache.ListWatch {
			l := c.PolicyV1().PodDisruptionBudgets(ns)
			return listWatch(l.List, l.Watch, managedOnly)
		}, packed(children.SlimPDB)),
		KindOf(autoscalingv2.SchemeGroupVersion.WithResource("horizontalpodautoscalers"), func(c kubernetes.Interface, ns string) *cache.ListWatch {
			l := c.AutoscalingV2().HorizontalPodAutoscalers(ns)
			return listWatch(l.List, l.Watch, managedOnly)
		}, packed(children.SlimHPA)),
		KindOf(networkingv1.SchemeGroupVersion.WithResource("ingresses"), func(c kubernetes.Interface, ns string) *cache.ListWatch {
			l := c.NetworkingV1().Ingresses(ns)
			return listWatch(l.List, l.Watch, managedOnly)
		}, packed(children.SlimIngress)),
		KindOf(networkingv1.SchemeGroupVersion.WithResource("networkpolicies"), func(c kubernetes.Interface, ns string) *cache.ListWatch {
			l := c.NetworkingV1().NetworkPolicies(ns)
			return listWatch(l.List, l.Watch, managedOnly)
		}, packed(children.SlimNetworkPolicy)),
		// Canary ReplicaSets only; one a canary no longer runs (a retry, a
		// new revision) is found by its owner.
		IndexedByController(KindOf(appsv1.SchemeGroupVersion.WithResource("replicasets"), func(c kubernetes.Interface, ns string) *cache.ListWatch {
			l := c.AppsV1().ReplicaSets(ns)
			return listWatch(l.List, l.Watch, canaryOnly)
		}, packed(children.SlimCanaryReplicaSet))),
	}
}

// Kind is one row of ChildKinds. KindOf makes one.
type Kind interface {
	// Resource names the kind's cache in the caches-synced check and in
	// client-go's informer metrics.
	Resource() schema.GroupVersionResource
	// objectType is the type the kind's informer delivers.
	objectType() reflect.Type
	// register returns the kind's informer in factory, adding it the
	// first time.
	register(factory kubeinformers.SharedInformerFactory, namespace string, id NamedInformers) cache.SharedIndexInformer
	// transform trims and packs an object of the kind for its cache.
	transform(obj any) (any, error)
	// byController tells whether the cache has the ControllerIndex.
	byController() bool
	indexedByController() Kind
}

// childObject is a pointer to a typed child object, *T.
type childObject[T any] interface {
	*T
	protoObject
	runtime.Object
}

// typedKind is the Kind of objects of type T, whose pointer type is P.
type typedKind[T any, P childObject[T]] struct {
	resource  schema.GroupVersionResource
	listWatch func(kubernetes.Interface, string) *cache.ListWatch
	trim      func(P) (*Packed, error)
	indexed   bool
}

// KindOf is the row of the kind of child of type T: its resource, how its
// informer lists and watches the objects of a namespace, and what its
// cache keeps of each object (the cache holds packed objects, see
// packed.go).
func KindOf[T any, P childObject[T]](resource schema.GroupVersionResource, listWatch func(c kubernetes.Interface, namespace string) *cache.ListWatch, trim func(P) (*Packed, error)) Kind {
	return typedKind[T, P]{resource: resource, listWatch: listWatch, trim: trim}
}

// IndexedByController is k with the ControllerIndex, for a kind whose
// children a sync cannot name (those a spec stopped naming).
func IndexedByController(k Kind) Kind { return k.indexedByController() }

func (k typedKind[T, P]) Resource() schema.GroupVersionResource { return k.resource }
func (k typedKind[T, P]) objectType() reflect.Type              { return reflect.TypeFor[P]() }
func (k typedKind[T, P]) byController() bool                    { return k.indexed }

func (k typedKind[T, P]) indexedByController() Kind {
	k.indexed = true
	return k
}

func (k typedKind[T, P]) register(factory kubeinformers.SharedInformerFactory, namespace string, id NamedInformers) cache.SharedIndexInformer {
	return factory.InformerFor(P(new(T)), func(c kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		return id.informer(c, P(new(T)), k.resource, resync, k.listWatch(c, namespace))
	})
}

func (k typedKind[T, P]) transform(obj any) (any, error) {
	o, ok := obj.(P)
	if !ok {
		return nil, fmt.Errorf("the %s transform got a %T", k.resource.Resource, obj)
	}
	p, err := k.trim(o)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// packed is the trim of a kind whose cache holds the object trimmed by
// slim, packed.
func packed[P protoObject](slim func(P) P) func(P) (*Packed, error) {
	return func(obj P) (*Packed, error) { return pack(slim(obj)) }
}

// Kinds is a table of kinds of child, as ChildKinds returns it.
type Kinds []Kind

// Transform trims an object of one of ks for its cache; any other object
// as Transform does. It is the transform of the informers of ks.
func (ks Kinds) Transform(obj any) (any, error) {
	t := reflect.TypeOf(obj)
	for _, k := range ks {
		if k.objectType() == t {
			return k.transform(obj)
		}
	}
	return Transform(obj)
}

// ChildCaches are the informers of a table of kinds, as a sync, the event
// handlers and the caches-synced check use them.
type ChildCaches struct {
	kinds     Kinds
	informers []cache.SharedIndexInformer
}

// registerKinds adds to factory the informers of ks, restricted to
// namespace, named by id, with the ControllerIndex where a row asks for it.
func registerKinds(ks Kinds, factory kubeinformers.SharedInformerFactory, namespace string, id NamedInformers) (ChildCaches, error) {
	c := ChildCaches{kinds: ks}
	for _, k := range ks {
		inf := k.register(factory, namespace, id)
		if k.byController() {
			if err := inf.AddIndexers(ControllerIndexers()); err != nil {
				return ChildCaches{}, fmt.Errorf("indexing %s by their DeployObject: %w", k.Resource().Resource, err)
			}
		}
		c.informers = append(c.informers, inf)
	}
	return c, nil
}

// Informers are the informers of the kinds, in the table's order.
func (c ChildCaches) Informers() []cache.SharedIndexInformer { return slices.Clone(c.informers) }

// Synced are the informers' HasSynced, by the resource each holds.
func (c ChildCaches) Synced() map[string]cache.InformerSynced {
	synced := make(map[string]cache.InformerSynced, len(c.kinds))
	for i, k := range c.kinds {
		synced[k.Resource().Resource] = c.informers[i].HasSynced
	}
	return synced
}

// InformerFor is the informer of the kind of obj, for seeding a cache in a
// test; false when obj is of no kind of the table.
func (c ChildCaches) InformerFor(obj any) (cache.SharedIndexInformer, bool) {
	t := reflect.TypeOf(obj)
	for i, k := range c.kinds {
		if k.objectType() == t {
			return c.informers[i], true
		}
	}
	return nil, false
}

// InformerOf is the informer of the kind T of c; nil when c has none.
func InformerOf[T any](c ChildCaches) cache.SharedIndexInformer {
	inf, _ := c.InformerFor(new(T))
	return inf
}

// ListerOf reads the cache of the kind T of c. When c has no such kind,
// its reads fail.
func ListerOf[T any, P childObject[T]](c ChildCaches) PackedLister[T, P] {
	t := reflect.TypeFor[P]()
	for i, k := range c.kinds {
		if k.objectType() == t {
			return NewPackedLister[T, P](c.informers[i].GetIndexer(), k.Resource().GroupResource())
		}
	}
	return PackedLister[T, P]{resource: schema.GroupResource{Resource: t.Elem().Name()}}
}
