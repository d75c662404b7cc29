package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// Configuration rollouts: which ConfigMaps and Secrets, and which of their
// keys, the pods of a DeployObject consume; a hash of that data for the pod
// template, so that a change of a used key rolls the pods and a change of
// any other key rolls nothing; and what the caches keep of ConfigMaps and
// Secrets: per-key hashes, never a value.

// configKind is the kind of object a pod template reads configuration from.
type configKind string

const (
	kindConfigMap configKind = "ConfigMap"
	kindSecret    configKind = "Secret"
)

// configRef is one reference of the pod template to a ConfigMap or Secret.
type configRef struct {
	kind configKind
	name string
	// keys are the keys the pods read; nil means every key the object has
	// (envFrom, or a volume without items).
	keys []string
	// optional: the pods start without the object (or the key).
	optional bool
}

// configRefs are the references of spec's pod template to the kinds
// tracked: env valueFrom and envFrom of the main container, the init
// containers and the sidecars, and configMap, secret and projected volumes.
// Secrets count only when secrets is set (--track-secrets).
func configRefs(spec *appv1.DeployObjectSpec, secrets bool) []configRef {
	var refs []configRef
	add := func(kind configKind, name string, keys []string, optional *bool) {
		if kind == kindSecret && !secrets {
			return
		}
		refs = append(refs, configRef{kind: kind, name: name, keys: keys, optional: optional != nil && *optional})
	}
	container := func(env []corev1.EnvVar, envFrom []corev1.EnvFromSource) {
		for _, e := range env {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				add(kindConfigMap, r.Name, []string{r.Key}, r.Optional)
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				add(kindSecret, r.Name, []string{r.Key}, r.Optional)
			}
		}
		for _, e := range envFrom {
			if r := e.ConfigMapRef; r != nil {
				add(kindConfigMap, r.Name, nil, r.Optional)
			}
			if r := e.SecretRef; r != nil {
				add(kindSecret, r.Name, nil, r.Optional)
			}
		}
	}
	container(spec.Env, spec.EnvFrom)
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Sidecars} {
		for i := range cs {
			container(cs[i].Env, cs[i].EnvFrom)
		}
	}
	for i := range spec.Volumes {
		v := &spec.Volumes[i]
		if s := v.ConfigMap; s != nil {
			add(kindConfigMap, s.Name, itemKeys(s.Items), s.Optional)
		}
		if s := v.Secret; s != nil {
			add(kindSecret, s.SecretName, itemKeys(s.Items), s.Optional)
		}
		if v.Projected == nil {
			continue
		}
		for _, p := range v.Projected.Sources {
			if s := p.ConfigMap; s != nil {
				add(kindConfigMap, s.Name, itemKeys(s.Items), s.Optional)
			}
			if s := p.Secret; s != nil {
				add(kindSecret, s.Name, itemKeys(s.Items), s.Optional)
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

// configData is what the cache knows of one ConfigMap or Secret: whether it
// exists, and the hash of each key's value.
type configData struct {
	found  bool
	hashes map[string]string
}

// configLookup reads a ConfigMap or Secret of a namespace from the cache.
type configLookup func(kind configKind, namespace, name string) (configData, error)

// configState is what the pods of a DeployObject would get from the
// ConfigMaps and Secrets they use.
type configState struct {
	// hash identifies the data the pods consume; empty when they use no
	// tracked object.
	hash string
	// missing names each required object or key that does not exist.
	missing []string
}

// configStateOf hashes, for the refs of a DeployObject in namespace, the
// data the pods consume: for a key reference that key's value, for a
// whole-object reference every key's value, and for an optional reference
// whether the object, or key, exists. It does not depend on the order of
// refs, and a key no reference reads does not enter it.
func configStateOf(namespace string, refs []configRef, lookup configLookup) (configState, error) {
	if len(refs) == 0 {
		return configState{}, nil
	}
	var lines, missing []string
	for _, r := range refs {
		d, err := lookup(r.kind, namespace, r.name)
		if err != nil {
			return configState{}, fmt.Errorf("reading %s %s from cache: %w", r.kind, r.name, err)
		}
		obj := string(r.kind) + "/" + r.name
		if !d.found {
			if !r.optional {
				missing = append(missing, fmt.Sprintf("%s %s", r.kind, r.name))
			}
			lines = append(lines, obj+" absent")
			continue
		}
		keys := r.keys
		if keys == nil {
			keys = make([]string, 0, len(d.hashes))
			for k := range d.hashes {
				keys = append(keys, k)
			}
			// An object without keys still exists, which is data too.
			lines = append(lines, obj+" present")
		}
		for _, k := range keys {
			h, ok := d.hashes[k]
			switch {
			case ok:
				lines = append(lines, obj+"/"+k+"="+h)
			case !r.optional:
				missing = append(missing, fmt.Sprintf("key %s of %s %s", k, r.kind, r.name))
			default:
				lines = append(lines, obj+"/"+k+" absent")
			}
		}
	}
	slices.Sort(lines)
	lines = slices.Compact(lines)
	slices.Sort(missing)
	return configState{hash: shortHash(strings.Join(lines, "\n")), missing: slices.Compact(missing)}, nil
}

// shortHash is 16 hex digits of the SHA-256 of s: 64 bits, plenty to tell
// one configuration from the next, and short enough for an annotation.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// valueHash is the hash the cache keeps of one value: the first 8 bytes of
// its SHA-256, held as bytes (configData shows them as 16 hex digits). A
// Secret's values are hashed together with its UID, which only those who
// may read the Secret know: the hash lands in the pod template, which many
// more may read, and a plain hash of a short secret could be reversed by
// trying every value. The price is one rollout when a Secret is deleted and
// created again with the same data.
func valueHash(salt string, value []byte) []byte {
	h := sha256.New()
	h.Write([]byte(salt))
	h.Write([]byte{0})
	h.Write(value)
	return h.Sum(nil)[:8]
}

// configRefs are the references of dobj's pods to what c tracks.
func (c *Controller) configRefs(dobj *appv1.DeployObject) []configRef {
	if c.config.lookup == nil {
		return nil
	}
	return configRefs(&dobj.Spec, c.config.secrets)
}

// rollsOutConfig reports whether dobj's pod template carries the config
// hash, which makes configuration changes roll its pods.
func rollsOutConfig(dobj *appv1.DeployObject) bool {
	return dobj.Spec.ConfigRollout != appv1.ConfigRolloutDisabled
}

// withConfigHash adds hash to desired's pod template, unless it is empty.
func withConfigHash(desired *corev1.PodTemplateSpec, hash string) {
	if hash == "" {
		return
	}
	if desired.Annotations == nil {
		desired.Annotations = map[string]string{}
	}
	desired.Annotations[appv1.AnnotationConfigHash] = hash
}

// The caches keep of a ConfigMap or Secret its identity and the hash of
// each key's value: the values themselves, which can be large and, for
// Secrets, must not sit in the controller's memory or reach its logs, are
// dropped as soon as the object is decoded. Every ConfigMap and Secret of
// the watched namespaces is cached, used or not, so each is packed (see
// packed.go) as small as it goes: its identity in the packed metadata
// only, and as protobuf an object holding nothing but the hashes, in
// binaryData for a ConfigMap (its data keys join its binaryData keys: the
// API server refuses a key in both) and in data for a Secret. A read
// returns that object, without metadata. Equal bytes are equal hashes
// (the encoding sorts the keys), which is how updateConfig tells a data
// change from any other.
//
// client-go may pass an object that is already in the cache to the
// transform again (its TransformFunc must be idempotent): a packed object
// passes transformObject unchanged. Hashing the hashes would change the
// config hash of every DeployObject using the object, rolling out pods
// whose data did not change.

func slimConfigMap(cm *corev1.ConfigMap) (*packed, error) {
	hashes := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
	for k, v := range cm.Data {
		hashes[k] = valueHash("", []byte(v))
	}
	for k, v := range cm.BinaryData {
		hashes[k] = valueHash("", v)
	}
	return packHashes(cm.ObjectMeta, &corev1.ConfigMap{BinaryData: hashes})
}

func slimSecret(s *corev1.Secret) (*packed, error) {
	hashes := make(map[string][]byte, len(s.Data))
	for k, v := range s.Data {
		hashes[k] = valueHash(string(s.UID), v)
	}
	return packHashes(s.ObjectMeta, &corev1.Secret{Data: hashes})
}

// packHashes packs hashes, an object holding only the hashes, under the
// identity of m: no labels, annotations or owners, which the controller
// never reads of a ConfigMap or Secret. The UID stays although the
// controller does not read it either: client-go's watch-list consistency
// detector matches cached objects to listed ones by UID.
func packHashes(m metav1.ObjectMeta, hashes protoObject) (*packed, error) {
	data, err := hashes.Marshal()
	if err != nil {
		return nil, fmt.Errorf("encoding the key hashes of %s/%s for the cache: %w", m.Namespace, m.Name, err)
	}
	return &packed{Name: m.Name, Namespace: intern(m.Namespace), UID: m.UID, ResourceVersion: m.ResourceVersion, Protobuf: data}, nil
}

// configMapData and secretData are configData from a cached object, or
// from its absence.
func configMapData(cm *corev1.ConfigMap, err error) (configData, error) {
	if err != nil {
		return absentConfig(err)
	}
	return hexHashes(cm.BinaryData), nil
}

func secretData(s *corev1.Secret, err error) (configData, error) {
	if err != nil {
		return absentConfig(err)
	}
	return hexHashes(s.Data), nil
}

// absentConfig is configData for an object the cache does not have, or
// the cache's error.
func absentConfig(err error) (configData, error) {
	if apierrors.IsNotFound(err) {
		return configData{}, nil
	}
	return configData{}, err
}

// hexHashes is configData of a cached object's hashes, as 16 hex digits
// each: the form the config hash has been computed from since it exists,
// so that the bytes held in the cache change no DeployObject's config hash.
func hexHashes(hashes map[string][]byte) configData {
	d := configData{found: true, hashes: make(map[string]string, len(hashes))}
	for k, v := range hashes {
		d.hashes[k] = hex.EncodeToString(v)
	}
	return d
}

// configIndexKey names a ConfigMap or Secret in the DeployObject
// informer's index of references, as "configmap/<namespace>/<name>" or
// "secret/<namespace>/<name>".
func configIndexKey(kind configKind, namespace, name string) string {
	return strings.ToLower(string(kind)) + "/" + namespace + "/" + name
}

// configIndexFunc indexes a DeployObject by every tracked ConfigMap and
// Secret its pods use, so that a change of one finds the DeployObjects to
// sync without a scan.
func configIndexFunc(secrets bool) func(obj any) ([]string, error) {
	return func(obj any) ([]string, error) {
		dobj, ok := obj.(*appv1.DeployObject)
		if !ok {
			return nil, nil
		}
		refs := configRefs(&dobj.Spec, secrets)
		keys := make([]string, 0, len(refs))
		for _, r := range refs {
			keys = append(keys, configIndexKey(r.kind, dobj.Namespace, r.name))
		}
		slices.Sort(keys)
		return slices.Compact(keys), nil
	}
}

// configTriggered reports whether writing desired over live, the
// Deployment dobj controls as the cache shows it, would be a rollout caused
// by configuration alone: the spec's generation was already brought in
// line, and only the config hash of the pod template differs. Such a
// rollout waits for a slot; a new generation, or a Deployment to create,
// never does.
func configTriggered(dobj *appv1.DeployObject, live, desired *appsv1.Deployment) bool {
	return live != nil && dobj.Status.ObservedGeneration == dobj.Generation &&
		live.Spec.Template.Annotations[appv1.AnnotationConfigHash] != desired.Spec.Template.Annotations[appv1.AnnotationConfigHash]
}

// configMissingMessage is the Ready message for missing, the required
// objects and keys that do not exist.
func configMissingMessage(missing []string) string {
	return fmt.Sprintf("the pods need %s, which does not exist; the Deployment is left as it is until it does", strings.Join(missing, ", "))
}
