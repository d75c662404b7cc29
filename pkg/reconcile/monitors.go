package reconcile

import (
	"context"
	"slices"

	"deployobject.dev/controller/pkg/caches"
	"deployobject.dev/controller/pkg/children"
)

// monitors brings dobj's ServiceMonitor or PodMonitor in line, as the other
// children are, the kind the spec asks for first, so that a switch of kind
// deletes the other one only once the new one is made. A kind the cluster
// does not serve has no monitor to delete either; that the one asked for
// is not served is reported in the Monitoring condition alone (Ready does
// not wait for scraping that cannot be set up), and not retried: the
// controller syncs dobj again once the kind is served.
func (p *pass) monitors(ctx context.Context) error {
	dobj, out := p.dobj, p.out
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
		lister := p.Monitors.Lister(kind)
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
		client := children.DynamicClient{ResourceInterface: p.Monitors.Client.Resource(children.MonitorResource(kind)).Namespace(ns)}
		synced, action, err := children.SyncOptional(ctx, dobj, kind == want, desired,
			children.UpdatedOps(kind, caches.MonitorsIn(lister, ns), client, children.MergeMonitor, p.recheckOwner))
		if children.IsResourceNotServed(err) {
			// The CRD was removed since the cache was built.
			p.Monitors.Lost(kind)
			if kind == want {
				out.MonitoringUnavailable = children.MonitoringUnavailableMessage(dobj, kind)
			}
			continue
		}
		if kind == want {
			out.Monitor = synced
		}
		if err := p.record(kind, action, err); err != nil {
			return err
		}
	}
	return nil
}
