package caches

import (
	"crypto/sha256"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/identity"
)

// ValueHash is the hash the cache keeps of one value: the first 8 bytes of
// its SHA-256, held as bytes (configrollout.Data shows them as 16 hex digits). A
// Secret's values are hashed together with its UID, which only those who
// may read the Secret know: the hash lands in the pod template, which many
// more may read, and a plain hash of a short secret could be reversed by
// trying every value. The price is one rollout when a Secret is deleted and
// created again with the same data.
func ValueHash(salt string, value []byte) []byte {
	h := sha256.New()
	h.Write([]byte(salt))
	h.Write([]byte{0})
	h.Write(value)
	return h.Sum(nil)[:8]
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
// returns that object with the packed identity (see PackedLister); the
// controller's own ConfigMaps of inline files, and the orphans carrying its
// managed-by label, keep their owners, labels and age besides. Equal bytes are equal hashes
// (the encoding sorts the keys), which is how updateConfig tells a data
// change from any other.
//
// client-go may pass an object that is already in the cache to the
// transform again (its TransformFunc must be idempotent): a packed object
// passes Transform unchanged. Hashing the hashes would change the
// config hash of every DeployObject using the object, rolling out pods
// whose data did not change.

func slimConfigMap(cm *corev1.ConfigMap) (*Packed, error) {
	hashes := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
	for k, v := range cm.Data {
		hashes[k] = ValueHash("", []byte(v))
	}
	for k, v := range cm.BinaryData {
		hashes[k] = ValueHash("", v)
	}
	packed := &corev1.ConfigMap{BinaryData: hashes}
	ref := metav1.GetControllerOfNoCopy(cm)
	ours := ref != nil && ref.Kind == identity.DeployObjectKind.Kind && ref.APIVersion == appv1.SchemeGroupVersion.String()
	orphan := ref == nil && cm.Labels[identity.ManagedByLabel] == identity.ManagedByValue
	if !ours && !orphan {
		return packHashes(cm.ObjectMeta, packed)
	}
	// The controller's own ConfigMaps of inline files: which DeployObject
	// they belong to, and their age, tell which may be deleted (see
	// children.SupersededFilesConfigMaps); their labels, whether they are
	// in line. Told by the owner, not the labels, which someone may
	// remove: the sync puts them back. And an orphan with the managed-by
	// label, as `kubectl delete --cascade=orphan` of its DeployObject
	// leaves it: its labels tell which DeployObject may adopt it, to the
	// sync (children.Sync) and to the event handlers (Packed.Labels, as
	// pack keeps them), and its other owners stay in the adoption patch.
	// Both are rare among the ConfigMaps of a namespace; the others'
	// owners and labels are never read.
	packed.CreationTimestamp, packed.Labels = cm.CreationTimestamp, cm.Labels
	p, err := packHashes(cm.ObjectMeta, packed)
	if err != nil {
		return nil, err
	}
	p.OwnerReferences = cm.OwnerReferences
	if orphan {
		p.Labels = cm.Labels
	}
	return p, nil
}

func slimSecret(s *corev1.Secret) (*Packed, error) {
	hashes := make(map[string][]byte, len(s.Data))
	for k, v := range s.Data {
		hashes[k] = ValueHash(string(s.UID), v)
	}
	return packHashes(s.ObjectMeta, &corev1.Secret{Data: hashes})
}

// packHashes packs hashes, an object holding only the hashes, under the
// identity of m: no labels, annotations or owners, which the controller
// never reads of others' ConfigMaps and Secrets. The UID stays although the
// controller does not read it either: client-go's watch-list consistency
// detector matches cached objects to listed ones by UID.
func packHashes(m metav1.ObjectMeta, hashes protoObject) (*Packed, error) {
	data, err := hashes.Marshal()
	if err != nil {
		return nil, fmt.Errorf("encoding the key hashes of %s/%s for the cache: %w", m.Namespace, m.Name, err)
	}
	return &Packed{Name: m.Name, Namespace: children.Intern(m.Namespace), UID: m.UID, ResourceVersion: m.ResourceVersion, Protobuf: data}, nil
}
