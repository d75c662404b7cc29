package caches

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"deployobject.dev/controller/pkg/children"
)

// MonitoringRecheck is how often the controller asks discovery whether the
// cluster serves ServiceMonitors and PodMonitors, as GatewayAPIRecheck is
// for the routes. Tests set Monitors.Recheck instead.
const MonitoringRecheck = 20 * time.Second

// Monitors are the ServiceMonitor and PodMonitor caches, each of which
// exists only once the cluster serves its kind (prometheus-operator's
// CRDs; see discovered). The monitors are unstructured objects, read and
// written with the dynamic client (see pkg/children/servicemonitor.go).
type Monitors struct {
	Client    dynamic.Interface
	Discovery discovery.DiscoveryInterface
	// Informer builds the informer of the monitors of resource, with its
	// transform.
	Informer func(resource schema.GroupVersionResource) (cache.SharedIndexInformer, error)
	// Recheck is MonitoringRecheck, or shorter in tests.
	Recheck time.Duration

	// ServiceMonitorLister and PodMonitorLister are read and set with d.mu
	// held, except by tests that set them before any sync.
	ServiceMonitorLister, PodMonitorLister cache.GenericLister
	// sm and pm follow the two informers; made by kinds.
	sm, pm *discoveredKind
	once   sync.Once
	d      discovered
}

// kinds are the two monitor kinds, made once, with the discovery that
// follows them.
func (m *Monitors) kinds() (*discoveredKind, *discoveredKind) {
	m.once.Do(func() {
		kind := func(kind string, lister *cache.GenericLister) *discoveredKind {
			resource := children.MonitorResource(kind)
			k := &discoveredKind{resource: resource.Resource, kind: kind,
				set: func(i cache.Indexer) {
					*lister = nil
					if i != nil {
						*lister = cache.NewGenericLister(i, resource.GroupResource())
					}
				},
				listed: func() bool { return *lister != nil }}
			if m.Informer != nil {
				k.build = func() (cache.SharedIndexInformer, error) { return m.Informer(resource) }
			}
			return k
		}
		m.sm = kind(children.KindServiceMonitor, &m.ServiceMonitorLister)
		m.pm = kind(children.KindPodMonitor, &m.PodMonitorLister)
		m.d.groupVersion, m.d.discovery, m.d.recheck = children.MonitoringGroupVersion, m.Discovery, m.Recheck
		m.d.kinds = []*discoveredKind{m.sm, m.pm}
	})
	return m.sm, m.pm
}

// HasSynced reports whether syncs may start: whether the cluster serves
// ServiceMonitors and PodMonitors is known, and the caches of those it
// serves have synced.
func (m *Monitors) HasSynced() bool {
	return m == nil || m.d.hasSynced()
}

// Lister is the lister of the monitors of kind, or nil while the cluster
// does not serve them or the cache has not synced yet.
func (m *Monitors) Lister(kind string) cache.GenericLister {
	if m == nil {
		return nil
	}
	m.d.mu.RLock()
	defer m.d.mu.RUnlock()
	if kind == children.KindPodMonitor {
		return m.PodMonitorLister
	}
	return m.ServiceMonitorLister
}

// Run follows whether the cluster serves ServiceMonitors and PodMonitors,
// asking discovery every Recheck, until ctx ends, starting and
// withdrawing their caches (see discovered.run).
func (m *Monitors) Run(ctx context.Context, handler cache.ResourceEventHandler, changed func()) {
	m.kinds()
	m.d.run(ctx, handler, changed)
}

// Lost reports that a write of a monitor of kind was answered as if the
// cluster did not serve them (404 for the resource: prometheus-operator's
// CRDs removed); its cache is withdrawn until discovery shows the kind
// again (see GatewayRoutes.Lost).
func (m *Monitors) Lost(kind string) {
	if m == nil {
		return
	}
	sm, pm := m.kinds()
	if kind == children.KindPodMonitor {
		m.d.lose(pm)
		return
	}
	m.d.lose(sm)
}

// MonitorsIn reads the monitors of namespace ns from lister by name, as
// children.Ops' Cached does.
func MonitorsIn(lister cache.GenericLister, ns string) func(string) (*unstructured.Unstructured, error) {
	return func(name string) (*unstructured.Unstructured, error) {
		obj, err := lister.ByNamespace(ns).Get(name)
		if err != nil {
			return nil, err
		}
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return nil, fmt.Errorf("unexpected object of type %T in a monitor cache", obj)
		}
		return u, nil
	}
}

// NewMonitorInformer is the informer of the monitors of resource
// (servicemonitors or podmonitors), built as NewHTTPRouteInformer builds
// that of HTTPRoutes: labelled objects only, trimmed, never resynced,
// without indexes.
func NewMonitorInformer(client dynamic.Interface, resource schema.GroupVersionResource, namespace string, id NamedInformers) (cache.SharedIndexInformer, error) {
	l := client.Resource(resource).Namespace(namespace)
	inf := id.informer(client, &unstructured.Unstructured{}, resource, 0, listWatch(l.List, l.Watch, managedOnly))
	if err := inf.SetTransform(Transform); err != nil {
		return nil, fmt.Errorf("setting the %s informer's transform: %w", resource.Resource, err)
	}
	return inf, nil
}
