package caches

import (
	"bytes"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/identity"
	"deployobject.dev/controller/pkg/testobjects"
)

// TestFilesConfigMapKeepsItsOwner: of the controller's own ConfigMaps of
// inline files the cache keeps, beside the hashes, the owners, labels and
// age that deciding which may go reads; no value.
func TestFilesConfigMapKeepsItsOwner(t *testing.T) {
	dobj := testobjects.NewDeployObject(testobjects.WithFiles)
	cm := children.DesiredFilesConfigMap(dobj)
	cm.UID, cm.ResourceVersion, cm.CreationTimestamp = "u-files", "9", metav1.NewTime(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	cm.Annotations = map[string]string{"note": "dropped"}
	got := throughCache(t, cm.DeepCopy(), corev1.Resource("configmaps"), NewPackedLister[corev1.ConfigMap])
	if !equality.Semantic.DeepEqual(got.OwnerReferences, cm.OwnerReferences) || !maps.Equal(got.Labels, cm.Labels) ||
		!got.CreationTimestamp.Equal(&cm.CreationTimestamp) || got.Name != cm.Name || got.Annotations != nil {
		t.Errorf("cached files ConfigMap: %+v; want its owners, labels and creation time, and no annotation", got.ObjectMeta)
	}
	for k, v := range cm.Data {
		if string(got.BinaryData[k]) == v || got.Data[k] != "" || !bytes.Equal(got.BinaryData[k], ValueHash("", []byte(v))) {
			t.Errorf("key %s: cached %q, want only the hash of the value", k, got.BinaryData[k])
		}
	}
	// One whose labels someone removed is still the controller's: the
	// sync finds it its own, and puts them back.
	unlabelled := cm.DeepCopy()
	unlabelled.Labels = nil
	if got := throughCache(t, unlabelled, corev1.Resource("configmaps"), NewPackedLister[corev1.ConfigMap]); !equality.Semantic.DeepEqual(got.OwnerReferences, cm.OwnerReferences) {
		t.Errorf("an unlabelled files ConfigMap lost its owner in the cache: %v", got.OwnerReferences)
	}
	// Anyone else's ConfigMap with the same labels, controlled by
	// something else, keeps no owner and no label: it is no orphan to
	// adopt. (An orphan, controlled by nothing, keeps both: see
	// TestOrphansKeepWhatAdoptionReads.)
	foreign := cm.DeepCopy()
	foreign.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "u", Controller: ptr.To(true)}}
	if got := throughCache(t, foreign, corev1.Resource("configmaps"), NewPackedLister[corev1.ConfigMap]); got.OwnerReferences != nil || got.Labels != nil {
		t.Errorf("a ConfigMap another controller controls keeps %v, %v", got.OwnerReferences, got.Labels)
	}
	// Nor does one controlled by nothing without the managed-by label.
	unmanaged := cm.DeepCopy()
	unmanaged.OwnerReferences = nil
	delete(unmanaged.Labels, identity.ManagedByLabel)
	if got := throughCache(t, unmanaged, corev1.Resource("configmaps"), NewPackedLister[corev1.ConfigMap]); got.OwnerReferences != nil || got.Labels != nil {
		t.Errorf("a ConfigMap without the managed-by label keeps %v, %v", got.OwnerReferences, got.Labels)
	}
}

// TestConfigCacheHoldsNoValue: the transforms keep the identity and
// per-key hashes; no value, label, annotation or managedFields, neither in
// the packed metadata nor in the packed bytes.
func TestConfigCacheHoldsNoValue(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "cfg", Namespace: "apps", UID: "u1", ResourceVersion: "7",
		Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{...s3cret...}"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}
	cmIn := &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"level": "info"}, BinaryData: map[string][]byte{"bin": []byte("s3cret")}}
	secretIn := &corev1.Secret{ObjectMeta: meta, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"password": []byte("s3cret")}}
	cached := func(obj any) *Packed {
		t.Helper()
		p, err := ChildKinds().Transform(obj)
		if err != nil {
			t.Fatal(err)
		}
		return p.(*Packed)
	}
	cmPacked, secretPacked := cached(cmIn.DeepCopy()), cached(secretIn.DeepCopy())

	for _, p := range []*Packed{cmPacked, secretPacked} {
		if got := (Packed{Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion, Protobuf: p.Protobuf}); !equality.Semantic.DeepEqual(*p, got) || p.Name != "cfg" || p.Namespace != "apps" || p.UID != "u1" || p.ResourceVersion != "7" {
			t.Errorf("metadata kept: %+v; want only the name, namespace, UID and resourceVersion", p)
		}
		for _, value := range []string{"s3cret", "info"} {
			if bytes.Contains(p.Protobuf, []byte(value)) || strings.Contains(fmt.Sprintf("%+v", p), value) {
				t.Errorf("the value %q is cached: %+v", value, p)
			}
		}
	}
	cm := throughCache(t, cmIn.DeepCopy(), corev1.Resource("configmaps"), NewPackedLister[corev1.ConfigMap])
	s := throughCache(t, secretIn.DeepCopy(), corev1.Resource("secrets"), NewPackedLister[corev1.Secret])
	identity := metav1.ObjectMeta{Name: "cfg", Namespace: "apps", UID: "u1", ResourceVersion: "7"}
	wantCM := &corev1.ConfigMap{ObjectMeta: identity, BinaryData: map[string][]byte{"level": ValueHash("", []byte("info")), "bin": ValueHash("", []byte("s3cret"))}}
	wantSecret := &corev1.Secret{ObjectMeta: identity, Data: map[string][]byte{"password": ValueHash("u1", []byte("s3cret"))}}
	if !equality.Semantic.DeepEqual(cm, wantCM) || !equality.Semantic.DeepEqual(s, wantSecret) {
		t.Errorf("want the identity and a hash per key, nothing else: %+v, %+v", cm, s)
	}
	// The same value in another Secret (another UID) hashes otherwise: the
	// pod template, which more people may read than the Secret, must not
	// reveal a short secret to whoever tries every value.
	other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cfg", UID: "u2"}, Data: map[string][]byte{"password": []byte("s3cret")}}
	if bytes.Equal(cached(other).Protobuf, secretPacked.Protobuf) {
		t.Errorf("a Secret's value hash does not depend on its UID")
	}
}

// TestConfigTransformSharesStrings: the default every DeployObject holds in
// configRollout, and the namespace of cached ConfigMaps, are one copy.
func TestConfigTransformSharesStrings(t *testing.T) {
	var a, b appv1.DeployObject
	src := testobjects.NewDeployObject(func(d *appv1.DeployObject) { d.Spec.ConfigRollout = appv1.ConfigRolloutEnabled })
	roundTrip(t, src, &a)
	roundTrip(t, src, &b)
	var c1, c2 corev1.ConfigMap
	roundTrip(t, testobjects.ConfigMap("cfg", map[string]string{"k": "v"}), &c1)
	roundTrip(t, testobjects.ConfigMap("cfg", map[string]string{"k": "v"}), &c2)
	if unsafe.StringData(string(a.Spec.ConfigRollout)) == unsafe.StringData(string(b.Spec.ConfigRollout)) {
		t.Fatal("decoding already shares strings; this test would prove nothing")
	}
	slimDeployObject(&a)
	slimDeployObject(&b)
	s1, err1 := slimConfigMap(&c1)
	s2, err2 := slimConfigMap(&c2)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if unsafe.StringData(string(a.Spec.ConfigRollout)) != unsafe.StringData(string(b.Spec.ConfigRollout)) || a.Spec.ConfigRollout != appv1.ConfigRolloutEnabled {
		t.Error("configRollout is not one shared copy")
	}
	if unsafe.StringData(s1.Namespace) != unsafe.StringData(s2.Namespace) {
		t.Error("the namespace of cached ConfigMaps is not one shared copy")
	}
}

// TestConfigTransformIsIdempotent: client-go may hand an object already in
// the cache to the transform again, and its TransformFunc documentation
// asks for idempotence. Hashing the hashes would change the config hash of
// every DeployObject without any data changing, and roll them all out.
func TestConfigTransformIsIdempotent(t *testing.T) {
	for _, obj := range []any{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: "ns", UID: "u1", ResourceVersion: "7"},
			Data: map[string]string{"level": "1"}, BinaryData: map[string][]byte{"blob": {0, 1}}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "token", Namespace: "ns", UID: "u2", ResourceVersion: "8"},
			Data: map[string][]byte{"token": []byte("s3cret")}},
	} {
		once, err := ChildKinds().Transform(obj)
		if err != nil {
			t.Fatal(err)
		}
		twice, err := ChildKinds().Transform(once)
		if err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(once, twice) {
			t.Errorf("transformed twice:\n%+v\nonce:\n%+v", twice, once)
		}
	}
}
