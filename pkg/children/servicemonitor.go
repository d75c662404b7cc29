package children

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// The ServiceMonitor and the PodMonitor (monitoring.coreos.com/v1,
// prometheus-operator's): what the controller asks of them, how a live one
// is judged in line, what the cache keeps and how it is reported. One of
// the two exists while spec.monitoring is set: a ServiceMonitor when its
// port is one of spec.ports, which the Service exposes; a PodMonitor when
// it is a sidecar's, which the Service does not.
//
// They are unstructured objects, read and written with the dynamic client:
// prometheus-operator's Go module would bring its own k8s.io versions,
// which must stay at one release, for two small objects whose whole spec
// the controller owns. The controller owns the spec and its labels; the
// keys of spec.monitoring.metadata are recorded as for the routes. A live
// monitor is in line when it carries the hash of the desired spec and
// holds every value the desired one sets (CoversJSON), so that a field
// the CRDs come to default is no drift, and a field the spec stops setting
// changes the hash. Writes are updates that replace the spec.

// The kinds of monitors, naming them in problems and events.
const (
	KindServiceMonitor = "ServiceMonitor"
	KindPodMonitor     = "PodMonitor"
)

// MonitoringGroupVersion is what discovery must serve, with servicemonitors
// and podmonitors.
var MonitoringGroupVersion = schema.GroupVersion{Group: "monitoring.coreos.com", Version: "v1"}

// The monitors' resources, for the dynamic client.
var (
	ServiceMonitorResource = MonitoringGroupVersion.WithResource("servicemonitors")
	PodMonitorResource     = MonitoringGroupVersion.WithResource("podmonitors")
)

// MonitorResource is the resource of monitors of kind.
func MonitorResource(kind string) schema.GroupVersionResource {
	if kind == KindPodMonitor {
		return PodMonitorResource
	}
	return ServiceMonitorResource
}

// DefaultMetricsPath is where Prometheus scrapes when spec.monitoring.path
// is unset. It is read here rather than defaulted by the CRD, as route
// paths are, so that the desired monitor states it whatever the API server
// stored.
const DefaultMetricsPath = "/metrics"

// WantsMonitoring reports whether dobj asks for a monitor of either kind.
func WantsMonitoring(dobj *appv1.DeployObject) bool {
	return dobj.Spec.Monitoring != nil
}

// MonitorKind is the kind of monitor dobj asks for: KindServiceMonitor
// when monitoring.port names one of spec.ports (admission makes sure it
// names that or a sidecar's port), KindPodMonitor otherwise; "" when dobj
// asks for none.
func MonitorKind(dobj *appv1.DeployObject) string {
	m := dobj.Spec.Monitoring
	if m == nil {
		return ""
	}
	for _, p := range dobj.Spec.Ports {
		if p.Name == m.Port {
			return KindServiceMonitor
		}
	}
	return KindPodMonitor
}

// DesiredMonitor is the monitor of kind dobj asks for, stamped with the
// hash of its spec; nil when dobj asks for none of that kind. It selects
// dobj's Service (a ServiceMonitor) or pods (a PodMonitor) by the name
// label, in its own namespace, and scrapes the port by name.
func DesiredMonitor(dobj *appv1.DeployObject, kind string) (*unstructured.Unstructured, error) {
	if MonitorKind(dobj) != kind || kind == "" {
		return nil, nil
	}
	m := dobj.Spec.Monitoring
	endpoint := map[string]any{"port": m.Port, "path": DefaultMetricsPath}
	if m.Path != "" {
		endpoint["path"] = string(m.Path)
	}
	if m.Interval != nil {
		endpoint["interval"] = string(*m.Interval)
	}
	if m.ScrapeTimeout != nil {
		endpoint["scrapeTimeout"] = string(*m.ScrapeTimeout)
	}
	endpoints := "endpoints"
	if kind == KindPodMonitor {
		endpoints = "podMetricsEndpoints"
	}
	spec := map[string]any{
		"selector": map[string]any{"matchLabels": map[string]any{NameLabel: dobj.Name}},
		endpoints:  []any{endpoint},
	}
	meta := childMeta(dobj)
	hash, err := desiredHash(spec)
	if err != nil {
		return nil, fmt.Errorf("hashing the desired %s: %w", kind, err)
	}
	meta.Annotations = map[string]string{appv1.AnnotationMonitorHash: hash}
	withChildMetadata(&meta, m.Metadata)
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion(MonitoringGroupVersion.String())
	u.SetKind(kind)
	u.SetName(meta.Name)
	u.SetNamespace(meta.Namespace)
	u.SetLabels(meta.Labels)
	u.SetAnnotations(meta.Annotations)
	u.SetOwnerReferences(meta.OwnerReferences)
	return u, nil
}

// labelsAndAnnotations are u's labels and annotations, as the metadata
// helpers shared with the typed children take them.
func labelsAndAnnotations(u *unstructured.Unstructured) metav1.ObjectMeta {
	return metav1.ObjectMeta{Labels: u.GetLabels(), Annotations: u.GetAnnotations()}
}

// MonitorInSync reports whether live is in line with desired: the same
// hash of the spec, the owned labels and annotations, and every value the
// desired spec sets.
func MonitorInSync(live, desired *unstructured.Unstructured) bool {
	return live.GetAnnotations()[appv1.AnnotationMonitorHash] == desired.GetAnnotations()[appv1.AnnotationMonitorHash] &&
		childMetadataInSync(labelsAndAnnotations(live), labelsAndAnnotations(desired)) &&
		CoversJSON(live.Object["spec"], desired.Object["spec"])
}

// MergeMonitor returns live with desired's labels, annotations and spec,
// and whether that changed anything; others' labels and annotations are
// kept. When nothing changed it returns live itself.
func MergeMonitor(live, desired *unstructured.Unstructured) (*unstructured.Unstructured, bool) {
	if MonitorInSync(live, desired) {
		return live, false
	}
	out := live.DeepCopy()
	meta := labelsAndAnnotations(live)
	if mergeChildMetadata(&meta, meta, labelsAndAnnotations(desired)) {
		out.SetLabels(meta.Labels)
		out.SetAnnotations(meta.Annotations)
	}
	out.Object["spec"] = runtime.DeepCopyJSONValue(desired.Object["spec"])
	return out, true
}

// SlimMonitor keeps what SlimMeta keeps of the metadata, the annotations
// MonitorInSync reads (the hash, the record of owned keys and the keys it
// lists), the kind and API version (a dynamic list's items carry them as a
// watch's objects do) and the spec, which is small and read whole; a
// monitor has no status.
func SlimMonitor(u *unstructured.Unstructured) *unstructured.Unstructured {
	meta := SlimMeta(metav1.ObjectMeta{
		Name:              u.GetName(),
		Namespace:         u.GetNamespace(),
		UID:               u.GetUID(),
		ResourceVersion:   u.GetResourceVersion(),
		Generation:        u.GetGeneration(),
		Labels:            u.GetLabels(),
		OwnerReferences:   u.GetOwnerReferences(),
		DeletionTimestamp: u.GetDeletionTimestamp(),
	})
	kept := slimMetaOwning(metav1.ObjectMeta{Annotations: u.GetAnnotations()}, appv1.AnnotationMonitorHash).Annotations
	out := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": Intern(u.GetAPIVersion()),
		"kind":       Intern(u.GetKind()),
	}}
	if spec, ok := u.Object["spec"]; ok {
		out.Object["spec"] = spec
	}
	out.SetName(meta.Name)
	out.SetNamespace(meta.Namespace)
	out.SetUID(meta.UID)
	out.SetResourceVersion(meta.ResourceVersion)
	out.SetGeneration(meta.Generation)
	out.SetLabels(meta.Labels)
	out.SetOwnerReferences(meta.OwnerReferences)
	out.SetDeletionTimestamp(meta.DeletionTimestamp)
	out.SetAnnotations(kept)
	return out
}

// MonitoringCondition reports dobj's monitor: why it is missing (problem,
// when the sync could not make it; unavailable, the reason the cluster
// does not serve its kind), that dobj's NetworkPolicy keeps its scraper
// out (see ScrapeBlocked), or that it exists and may scrape. A blocked
// scrape is told whether the cluster serves monitors or not: it is the
// spec's to fix either way.
func MonitoringCondition(dobj *appv1.DeployObject, monitor *unstructured.Unstructured, problem *Problem, unavailable string) metav1.Condition {
	c := metav1.Condition{Type: appv1.ConditionMonitoring, Status: metav1.ConditionFalse, Reason: appv1.ReasonProgressing}
	kind := MonitorKind(dobj)
	blocked := ScrapeBlocked(dobj)
	switch {
	case problem != nil:
		c.Reason, c.Message = problem.Reason, BoundMessage(problem.Message)
	case blocked != "":
		c.Reason, c.Message = appv1.ReasonNetworkPolicyBlocksScraping, BoundMessage(blocked)
	case unavailable != "":
		c.Reason, c.Message = appv1.ReasonMonitoringAPIUnavailable, BoundMessage(unavailable)
	case monitor == nil:
		c.Message = fmt.Sprintf("%s %s does not exist yet", kind, dobj.Name)
	default:
		m := dobj.Spec.Monitoring
		path := DefaultMetricsPath
		if m.Path != "" {
			path = string(m.Path)
		}
		target := "Service " + dobj.Name
		if kind == KindPodMonitor {
			target = "the pods"
		}
		c.Status, c.Reason = metav1.ConditionTrue, appv1.ReasonMonitorCreated
		c.Message = BoundMessage(fmt.Sprintf("%s %s scrapes port %s of %s at %s", kind, monitor.GetName(), m.Port, target, path))
	}
	return c
}

// MonitoringUnavailableMessage says that the cluster does not serve the
// monitors of kind, which dobj asks for.
func MonitoringUnavailableMessage(dobj *appv1.DeployObject, kind string) string {
	return fmt.Sprintf("the cluster does not serve %s %ss (prometheus-operator's CRDs are not installed): metrics are not scraped; the controller makes %s %s once it does",
		MonitoringGroupVersion, kind, kind, dobj.Name)
}
