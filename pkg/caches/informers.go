package caches

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	clientset "deployobject.dev/controller/pkg/generated/clientset/versioned"
	informers "deployobject.dev/controller/pkg/generated/informers/externalversions"
	appinformers "deployobject.dev/controller/pkg/generated/informers/externalversions/app/v1"
	"deployobject.dev/controller/pkg/identity"
)

// Scope is the part of the cluster's DeployObjects one controller
// reconciles: those in Namespace (every namespace if empty) whose labels
// match LabelSelector (all if empty).
type Scope struct {
	Namespace     string
	LabelSelector string
}

// NewInformers returns the controller's informers, which decide what the
// caches hold: every DeployObject in the scope, resynced every
// resync period; of each kind of ChildKinds what its row lists (only
// objects carrying the controller's managed-by label, but every ConfigMap
// and only canary ReplicaSets),
// never resynced (the handlers drop child resyncs anyway); all trimmed by
// their transform. A kind no DeployObject asks for costs an empty cache and
// one watch, nothing per DeployObject. The label selector applies to
// DeployObjects only: the children of DeployObjects outside it are cached
// too (a label selector cannot name their owners), and their events lead to
// a key the DeployObject cache does not hold, whose sync does nothing.
//
// The informers are registered without the namespace index that the
// generated ones add: the controller only ever reads by key, and at 10,000
// DeployObjects dropping them saved about 3 MiB of heap in use. The one
// indexes it needs are added by their users: of DeployObjects by the
// ConfigMaps and Secrets their pods use by configrollout.Track, of
// ServiceAccounts, ConfigMaps and canary ReplicaSets by their controller
// by their rows.
//
// Each informer carries id's name, under which client-go reports its
// metrics (see NamedInformers).
func NewInformers(kubeClient kubernetes.Interface, client clientset.Interface, scope Scope, resync time.Duration, id NamedInformers) (Informers, error) {
	namespace := scope.Namespace
	dobjFactory := informers.NewSharedInformerFactoryWithOptions(client, resync,
		informers.WithNamespace(namespace),
		informers.WithTransform(Transform))
	dobjFactory.InformerFor(&appv1.DeployObject{}, func(c clientset.Interface, resync time.Duration) cache.SharedIndexInformer {
		l := c.AppV1().DeployObjects(namespace)
		selected := func(o *metav1.ListOptions) { o.LabelSelector = scope.LabelSelector }
		return id.informer(c, &appv1.DeployObject{}, appv1.SchemeGroupVersion.WithResource("deployobjects"), resync, listWatch(l.List, l.Watch, selected))
	})

	kinds := ChildKinds()
	childFactory := kubeinformers.NewSharedInformerFactoryWithOptions(kubeClient, 0,
		kubeinformers.WithNamespace(namespace),
		kubeinformers.WithTransform(kinds.Transform))
	children, err := registerKinds(kinds, childFactory, namespace, id)
	if err != nil {
		return Informers{}, err
	}
	return Informers{
		DeployObjectFactory: dobjFactory,
		ChildFactory:        childFactory,
		DeployObjects:       dobjFactory.App().V1().DeployObjects(),
		Children:            children,
	}, nil
}

// managedOnly restricts a child informer's list and watch to objects with
// the managed-by label.
func managedOnly(o *metav1.ListOptions) {
	o.LabelSelector = labels.Set{identity.ManagedByLabel: identity.ManagedByValue}.String()
}

// canaryOnly restricts the ReplicaSet informer to canary ReplicaSets,
// which carry the managed-by and canary labels. The Deployment
// controller's ReplicaSets copy the pod template's labels, managed-by
// among them, but never the canary label, which pods do not carry: a
// DeployObject without a canary costs this cache nothing.
func canaryOnly(o *metav1.ListOptions) {
	managedOnly(o)
	o.LabelSelector += "," + appv1.LabelCanary
}

// NewHTTPRouteInformer is the informer of HTTPRoutes, built as the child
// informers of NewInformerFactories are: labelled objects only, trimmed,
// never resynced, without indexes. It is not in a factory, because it is
// started only once the cluster serves HTTPRoutes (see GatewayRoutes).
func NewHTTPRouteInformer(client gatewayclient.Interface, namespace string, id NamedInformers) (cache.SharedIndexInformer, error) {
	l := client.GatewayV1().HTTPRoutes(namespace)
	inf := id.informer(client, &gatewayv1.HTTPRoute{}, gatewayv1.SchemeGroupVersion.WithResource("httproutes"), 0, listWatch(l.List, l.Watch, managedOnly))
	if err := inf.SetTransform(Transform); err != nil {
		return nil, fmt.Errorf("setting the HTTPRoute informer's transform: %w", err)
	}
	return inf, nil
}

// NewGRPCRouteInformer is the informer of GRPCRoutes, built as
// NewHTTPRouteInformer builds that of HTTPRoutes.
func NewGRPCRouteInformer(client gatewayclient.Interface, namespace string, id NamedInformers) (cache.SharedIndexInformer, error) {
	l := client.GatewayV1().GRPCRoutes(namespace)
	inf := id.informer(client, &gatewayv1.GRPCRoute{}, gatewayv1.SchemeGroupVersion.WithResource("grpcroutes"), 0, listWatch(l.List, l.Watch, managedOnly))
	if err := inf.SetTransform(Transform); err != nil {
		return nil, fmt.Errorf("setting the GRPCRoute informer's transform: %w", err)
	}
	return inf, nil
}

// NamedInformers gives informers a name and a metrics provider, for
// client-go's informer metrics: informer_queued_items and
// informer_processing_latency_seconds need the name, and
// informer_store_resource_version also needs the provider passed to the
// informer (client-go v0.36 gives a store no metrics from the global
// provider). The generated constructors take the name but not the
// provider, so the informers are built here as they build them.
type NamedInformers struct {
	Name    *cache.InformerName
	Metrics cache.InformerMetricsProvider
}

// informer is what the generated NewXInformerWithOptions return, without
// indexes, with n's name and metrics provider. client is the clientset the
// list and watch go through, which tells whether it supports watch lists.
func (n NamedInformers) informer(client any, example runtime.Object, gvr schema.GroupVersionResource, resync time.Duration, lw *cache.ListWatch) cache.SharedIndexInformer {
	return cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, client), example, cache.SharedIndexInformerOptions{
		ResyncPeriod:            resync,
		Indexers:                cache.Indexers{},
		Identifier:              n.Name.WithResource(gvr),
		InformerMetricsProvider: n.Metrics,
	})
}

// listWatch lists and watches with a typed client's List and Watch, with
// the options tweak changes.
func listWatch[L runtime.Object](list func(context.Context, metav1.ListOptions) (L, error), watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error), tweak func(*metav1.ListOptions)) *cache.ListWatch {
	tweaked := func(o metav1.ListOptions) metav1.ListOptions {
		if tweak != nil {
			tweak(&o)
		}
		return o
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return list(ctx, tweaked(o))
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return watchFn(ctx, tweaked(o))
		},
	}
}

// RegisterSecretInformer adds to childFactory the Secret informer, for
// --track-secrets. Unlike the children, it watches every object of the
// watched namespaces: a DeployObject may use any Secret. What it caches is
// per-key hashes of the values (see slimSecret), so unrelated objects cost
// little memory and no value is ever held. The typed accessor Secrets()
// returns it.
func RegisterSecretInformer(childFactory kubeinformers.SharedInformerFactory, namespace string, id NamedInformers) {
	childFactory.InformerFor(&corev1.Secret{}, func(c kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		l := c.CoreV1().Secrets(namespace)
		return id.informer(c, &corev1.Secret{}, corev1.SchemeGroupVersion.WithResource("secrets"), resync, listWatch(l.List, l.Watch, nil))
	})
}

// Informers are the controller's informers, as NewInformers makes them.
type Informers struct {
	// The factories start the informers.
	DeployObjectFactory informers.SharedInformerFactory
	ChildFactory        kubeinformers.SharedInformerFactory
	DeployObjects       appinformers.DeployObjectInformer
	// Children are the informers of ChildKinds.
	Children ChildCaches
}

// ControllerIndex is the name of the index of children by the DeployObject
// that controls them, "namespace/name"; ControllerIndexers make it.
const ControllerIndex = "controller"

// ControllerIndexers index children by the DeployObject that controls
// them, for the children a sync cannot name: those a spec stopped naming.
func ControllerIndexers() cache.Indexers {
	return cache.Indexers{ControllerIndex: controllerOf}
}

func controllerOf(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	ref := metav1.GetControllerOfNoCopy(m)
	if ref == nil || ref.Kind != identity.DeployObjectKind.Kind || ref.APIVersion != appv1.SchemeGroupVersion.String() {
		return nil, nil
	}
	return []string{cache.ObjectName{Namespace: m.GetNamespace(), Name: ref.Name}.String()}, nil
}
