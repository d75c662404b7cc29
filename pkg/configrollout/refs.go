package configrollout

import (
	corev1 "k8s.io/api/core/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// Configuration rollouts: which ConfigMaps and Secrets, and which of their
// keys, the pods of a DeployObject consume; a hash of that data for the pod
// template, so that a change of a used key rolls the pods and a change of
// any other key rolls nothing; and what the caches keep of ConfigMaps and
// Secrets: per-key hashes, never a value.

// Kind is the kind of object a pod template reads configuration from.
type Kind string

const (
	KindConfigMap Kind = "ConfigMap"
	KindSecret    Kind = "Secret"
)

// Ref is one reference of the pod template to a ConfigMap or Secret.
type Ref struct {
	kind Kind
	name string
	// keys are the keys the pods read; nil means every key the object has
	// (envFrom, or a volume without items).
	keys []string
	// optional: the pods start without the object (or the key).
	optional bool
}

// Refs are the references of spec's pod template to the kinds
// tracked: env valueFrom and envFrom of the main container, the init
// containers and the sidecars, the keys files take, and ConfigMap, secret
// and projected volumes. The ConfigMap of inline files is not one: it is
// named by its content, so its change is a spec change.
// Secrets count only when secrets is set (--track-secrets).
func Refs(spec *appv1.DeployObjectSpec, secrets bool) []Ref {
	var refs []Ref
	add := func(kind Kind, name string, keys []string, optional *bool) {
		if kind == KindSecret && !secrets {
			return
		}
		refs = append(refs, Ref{kind: kind, name: name, keys: keys, optional: optional != nil && *optional})
	}
	container := func(env []corev1.EnvVar, envFrom []corev1.EnvFromSource) {
		for _, e := range env {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				add(KindConfigMap, r.Name, []string{r.Key}, r.Optional)
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				add(KindSecret, r.Name, []string{r.Key}, r.Optional)
			}
		}
		for _, e := range envFrom {
			if r := e.ConfigMapRef; r != nil {
				add(KindConfigMap, r.Name, nil, r.Optional)
			}
			if r := e.SecretRef; r != nil {
				add(KindSecret, r.Name, nil, r.Optional)
			}
		}
	}
	container(spec.Env, spec.EnvFrom)
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Sidecars} {
		for i := range cs {
			container(cs[i].Env, cs[i].EnvFrom)
		}
	}
	for i := range spec.Files {
		f := &spec.Files[i]
		if r := f.ConfigMapKeyRef; r != nil {
			add(KindConfigMap, r.Name, []string{r.Key}, r.Optional)
		}
		if r := f.SecretKeyRef; r != nil {
			add(KindSecret, r.Name, []string{r.Key}, r.Optional)
		}
	}
	for i := range spec.Volumes {
		v := &spec.Volumes[i]
		if s := v.ConfigMap; s != nil {
			add(KindConfigMap, s.Name, itemKeys(s.Items), s.Optional)
		}
		if s := v.Secret; s != nil {
			add(KindSecret, s.SecretName, itemKeys(s.Items), s.Optional)
		}
		if v.Projected == nil {
			continue
		}
		for _, p := range v.Projected.Sources {
			if s := p.ConfigMap; s != nil {
				add(KindConfigMap, s.Name, itemKeys(s.Items), s.Optional)
			}
			if s := p.Secret; s != nil {
				add(KindSecret, s.Name, itemKeys(s.Items), s.Optional)
			}
		}
	}
	return refs
}

// itemKeys are the keys a volume projects; nil (every key) without items.
func itemKeys(items []corev1.KeyToPath) []string {
	if len(items) == 0 {
		return nil
	}
	keys := make([]string, len(items))
	for i, it := range items {
		keys[i] = it.Key
	}
	return keys
}

// Enabled reports whether dobj's pod template carries the config
// hash, which makes configuration changes roll its pods.
func Enabled(dobj *appv1.DeployObject) bool {
	return dobj.Spec.ConfigRollout != appv1.ConfigRolloutDisabled
}

// WithHash adds hash to desired's pod template, unless it is empty.
func WithHash(desired *corev1.PodTemplateSpec, hash string) {
	if hash == "" {
		return
	}
	if desired.Annotations == nil {
		desired.Annotations = map[string]string{}
	}
	desired.Annotations[appv1.AnnotationConfigHash] = hash
}
