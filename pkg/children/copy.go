package children

// The builders copy what they take from a DeployObject, so that a desired
// object never shares a slice, map or pointer with the cached DeployObject
// (the cache must not be changed through it). Empty slices and maps become
// nil, as the API server stores them, which slices.Clone and maps.Clone do
// not do: a desired object then compares and hashes like a live one.

// copyPtr is a copy of *p, or nil.
func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// cloneSlice is a shallow copy of s, nil when s is empty.
func cloneSlice[S ~[]E, E any](s S) S {
	if len(s) == 0 {
		return nil
	}
	return append(S(nil), s...)
}

// cloneMap is a copy of m, nil when m is empty.
func cloneMap[M ~map[K]V, K comparable, V any](m M) M {
	if len(m) == 0 {
		return nil
	}
	out := make(M, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// deepCopier is a Kubernetes API type with its generated DeepCopy.
type deepCopier[E any] interface{ DeepCopy() *E }

// deepCopySlice is a deep copy of s, nil when s is empty.
func deepCopySlice[E any, PE interface {
	*E
	deepCopier[E]
}](s []E) []E {
	if len(s) == 0 {
		return nil
	}
	out := make([]E, len(s))
	for i := range s {
		out[i] = *PE(&s[i]).DeepCopy()
	}
	return out
}
