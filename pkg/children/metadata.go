package children

import (
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// The labels and annotations a spec asks for on a Service, an Ingress, an
// HTTPRoute or a NetworkPolicy (appv1.ChildMetadata). The controller owns exactly those
// keys: it records them in the child's appv1.AnnotationOwnedMetadata, so
// that a key the spec drops is removed and every other key, whoever set
// it, is kept.

// withChildMetadata adds m's labels and annotations to meta, the desired
// child's, with the record of their keys and of fields, the spec fields of
// the child the spec sets (see service.go).
func withChildMetadata(meta *metav1.ObjectMeta, m *appv1.ChildMetadata, fields ...string) {
	if m == nil {
		m = &appv1.ChildMetadata{}
	}
	if len(m.Labels)+len(m.Annotations)+len(fields) == 0 {
		return
	}
	for k, v := range m.Labels {
		if _, own := meta.Labels[k]; !own {
			meta.Labels[k] = v
		}
	}
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	maps.Copy(meta.Annotations, m.Annotations)
	meta.Annotations[appv1.AnnotationOwnedMetadata] = ownedKeys(m, fields)
}

// ownedKeys is the record of m's keys and of fields: "l:" before each
// label key, "a:" before each annotation key, "s:" before each spec field,
// sorted, comma-separated (keys hold no commas).
func ownedKeys(m *appv1.ChildMetadata, fields []string) string {
	keys := make([]string, 0, len(m.Labels)+len(m.Annotations)+len(fields))
	for k := range m.Labels {
		keys = append(keys, "l:"+k)
	}
	for k := range m.Annotations {
		keys = append(keys, "a:"+k)
	}
	for _, f := range fields {
		keys = append(keys, "s:"+f)
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}

// ownedFields are the spec fields live's record says the controller set.
func ownedFields(live metav1.Object) map[string]bool {
	owned := map[string]bool{}
	for _, k := range strings.Split(live.GetAnnotations()[appv1.AnnotationOwnedMetadata], ",") {
		if f, ok := strings.CutPrefix(k, "s:"); ok {
			owned[f] = true
		}
	}
	return owned
}

// mergeChildMetadata makes out's labels and annotations, a copy of live's,
// those of desired: the keys live's record lists that desired no longer
// has are removed, desired's are set, other keys are kept. It reports
// whether anything changed.
func mergeChildMetadata(out *metav1.ObjectMeta, live, desired metav1.ObjectMeta) bool {
	if childMetadataInSync(live, desired) {
		return false
	}
	labels, annotations := maps.Clone(live.Labels), maps.Clone(live.Annotations)
	if labels == nil {
		labels = map[string]string{}
	}
	if annotations == nil {
		annotations = map[string]string{}
	}
	for _, k := range strings.Split(live.Annotations[appv1.AnnotationOwnedMetadata], ",") {
		switch {
		case strings.HasPrefix(k, "l:"):
			if _, keep := desired.Labels[k[2:]]; !keep {
				delete(labels, k[2:])
			}
		case strings.HasPrefix(k, "a:"):
			if _, keep := desired.Annotations[k[2:]]; !keep {
				delete(annotations, k[2:])
			}
		}
	}
	delete(annotations, appv1.AnnotationOwnedMetadata)
	maps.Copy(labels, desired.Labels)
	maps.Copy(annotations, desired.Annotations)
	if len(annotations) == 0 {
		annotations = nil
	}
	out.Labels, out.Annotations = labels, annotations
	return true
}

// childMetadataInSync reports whether live carries desired's labels and
// annotations, with the same record of owned keys, which tells that no key
// the spec dropped is left.
func childMetadataInSync(live, desired metav1.ObjectMeta) bool {
	return HasLabels(live.Labels, desired.Labels) && HasLabels(live.Annotations, desired.Annotations) &&
		live.Annotations[appv1.AnnotationOwnedMetadata] == desired.Annotations[appv1.AnnotationOwnedMetadata]
}

// slimMetaOwning is SlimMetaKeeping that also keeps the annotations m's
// record of owned keys lists, which childMetadataInSync compares.
func slimMetaOwning(m metav1.ObjectMeta, keys ...string) metav1.ObjectMeta {
	record := m.Annotations[appv1.AnnotationOwnedMetadata]
	if record == "" {
		return SlimMetaKeeping(m, keys...)
	}
	keys = append(keys, appv1.AnnotationOwnedMetadata)
	for _, k := range strings.Split(record, ",") {
		if strings.HasPrefix(k, "a:") {
			keys = append(keys, k[2:])
		}
	}
	return SlimMetaKeeping(m, keys...)
}
