package children

func PtrTo[T any](v T) *T { return &v }

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func cloneSlice[S ~[]E, E any](s S) S {
	if len(s) == 0 {
		return nil
	}
	return append(S(nil), s...)
}

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
