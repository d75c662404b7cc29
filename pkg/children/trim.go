package children

import (
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SlimMeta keeps the identity, labels and owners of an object.
func SlimMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	for i := range m.OwnerReferences {
		ref := &m.OwnerReferences[i]
		ref.APIVersion, ref.Kind, ref.Name = Intern(ref.APIVersion), Intern(ref.Kind), share(ref.Name, m.Name)
	}
	return metav1.ObjectMeta{
		Name:              m.Name,
		Namespace:         Intern(m.Namespace),
		UID:               m.UID,
		ResourceVersion:   m.ResourceVersion,
		Generation:        m.Generation,
		Labels:            shareLabels(m.Labels, m.Name),
		OwnerReferences:   m.OwnerReferences,
		DeletionTimestamp: m.DeletionTimestamp,
	}
}

// SlimMetaKeeping is SlimMeta that also keeps the annotations named keys
// that m has: the hash a child was last written from, which its in-sync
// check reads, and the like.
func SlimMetaKeeping(m metav1.ObjectMeta, keys ...string) metav1.ObjectMeta {
	out := SlimMeta(m)
	for _, key := range keys {
		if value, ok := m.Annotations[key]; ok {
			if out.Annotations == nil {
				out.Annotations = make(map[string]string, len(keys))
			}
			out.Annotations[key] = value
		}
	}
	return out
}

// Intern returns the one shared copy of s.
func Intern[S ~string](s S) S {
	return S(unique.Make(string(s)).Value())
}

// share returns name when s equals it, so that the two share their bytes,
// and the shared copy of s otherwise. An object's own name is not interned:
// it is unique, and interning it would only add an entry per object to the
// interning table.
func share(s, name string) string {
	if s == name {
		return name
	}
	return Intern(s)
}

// shareLabels shares the keys and values of labels, in place. Assigning
// to an existing key replaces the stored key too (Go does this for string
// keys so that the old one can be freed); TestTransformSharesStrings checks
// that this still holds.
func shareLabels(labels map[string]string, name string) map[string]string {
	for k, v := range labels {
		labels[Intern(k)] = share(v, name)
	}
	return labels
}
