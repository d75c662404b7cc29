package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// configWorld is a set of ConfigMaps and Secrets as the caches hold them,
// by kind/name, with their values (hashed by lookup as the transforms
// hash them).
type configWorld map[string]map[string]string

func (w configWorld) lookup(kind configKind, _, name string) (configData, error) {
	data, ok := w[string(kind)+"/"+name]
	if !ok {
		return configData{}, nil
	}
	hashes := make(map[string]string, len(data))
	for k, v := range data {
		hashes[k] = hex.EncodeToString(valueHash("", []byte(v)))
	}
	return configData{found: true, hashes: hashes}, nil
}

// with is a copy of w with the value of key of obj set, or with obj or key
// removed when value is "<absent>".
func (w configWorld) with(obj, key, value string) configWorld {
	out := configWorld{}
	for k, v := range w {
		out[k] = maps.Clone(v)
	}
	switch {
	case key == "" && value == "<absent>":
		delete(out, obj)
	case value == "<absent>":
		delete(out[obj], key)
	default:
		if out[obj] == nil {
			out[obj] = map[string]string{}
		}
		out[obj][key] = value
	}
	return out
}

func cmKeyRef(name, key string, optional bool) corev1.EnvVar {
	return corev1.EnvVar{Name: strings.ToUpper(key), ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: optionalPtr(optional)}}}
}

func secretKeyRef(name, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: strings.ToUpper(key), ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}}}
}

func optionalPtr(b bool) *bool {
	if !b {
		return nil
	}
	return ptr.To(true)
}

// baseWorld has a ConfigMap "cfg" and a Secret "creds" with a used and an
// unused key each.
var baseWorld = configWorld{
	"ConfigMap/cfg": {"level": "info", "unused": "a"},
	"Secret/creds":  {"password": "s3cret", "unused": "b"},
}

func specWith(mutate func(*appv1.DeployObjectSpec)) *appv1.DeployObjectSpec {
	s := &appv1.DeployObjectSpec{Image: "nginx:1.27"}
	mutate(s)
	return s
}

func stateOf(t *testing.T, spec *appv1.DeployObjectSpec, secrets bool, w configWorld) configState {
	t.Helper()
	st, err := configStateOf("apps", configRefs(spec, secrets), w.lookup)
	if err != nil {
		t.Fatalf("configStateOf: %v", err)
	}
	return st
}

// TestConfigHashFollowsTheDataThePodsUse: each row changes the world in
// one way and says whether the pods would see the change.
func TestConfigHashFollowsTheDataThePodsUse(t *testing.T) {
	envKey := func(s *appv1.DeployObjectSpec) { s.Env = []corev1.EnvVar{cmKeyRef("cfg", "level", false)} }
	envSecret := func(s *appv1.DeployObjectSpec) { s.Env = []corev1.EnvVar{secretKeyRef("creds", "password")} }
	envFrom := func(s *appv1.DeployObjectSpec) {
		s.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}}
	}
	volume := func(items ...string) func(*appv1.DeployObjectSpec) {
		return func(s *appv1.DeployObjectSpec) {
			src := &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}
			for _, it := range items {
				src.Items = append(src.Items, corev1.KeyToPath{Key: it, Path: it})
			}
			s.Volumes = []appv1.Volume{{Name: "c", ConfigMap: src}}
		}
	}
	projectedSecret := func(s *appv1.DeployObjectSpec) {
		s.Volumes = []appv1.Volume{{Name: "p", Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Items: []corev1.KeyToPath{{Key: "password", Path: "p"}}}},
		}}}}
	}
	sidecar := func(s *appv1.DeployObjectSpec) {
		s.Sidecars = []corev1.Container{{Name: "proxy", Image: "envoy", Env: []corev1.EnvVar{cmKeyRef("cfg", "level", false)}}}
	}
	initContainer := func(s *appv1.DeployObjectSpec) {
		s.InitContainers = []corev1.Container{{Name: "migrate", Image: "m", EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}}}}}}
	}
	optionalEnv := func(s *appv1.DeployObjectSpec) { s.Env = []corev1.EnvVar{cmKeyRef("cfg", "level", true)} }

	for _, tc := range []struct {
		name     string
		spec     func(*appv1.DeployObjectSpec)
		secrets  bool
		obj, key string
		value    string
		changes  bool
	}{
		{"env key: the used key changes", envKey, false, "ConfigMap/cfg", "level", "debug", true},
		{"env key: another key changes", envKey, false, "ConfigMap/cfg", "unused", "z", false},
		{"env key: a key is added", envKey, false, "ConfigMap/cfg", "new", "z", false},
		{"env key: another object changes", envKey, false, "ConfigMap/other", "level", "debug", false},
		{"envFrom: any key changes", envFrom, false, "ConfigMap/cfg", "unused", "z", true},
		{"envFrom: a key is added", envFrom, false, "ConfigMap/cfg", "new", "z", true},
		{"envFrom: a key is removed", envFrom, false, "ConfigMap/cfg", "unused", "<absent>", true},
		{"whole volume: any key changes", volume(), false, "ConfigMap/cfg", "unused", "z", true},
		{"volume items: a listed key changes", volume("level"), false, "ConfigMap/cfg", "level", "debug", true},
		{"volume items: an unlisted key changes", volume("level"), false, "ConfigMap/cfg", "unused", "z", false},
		{"secret key, tracked: the used key changes", envSecret, true, "Secret/creds", "password", "new", true},
		{"secret key, tracked: another key changes", envSecret, true, "Secret/creds", "unused", "z", false},
		{"secret key, untracked: the used key changes", envSecret, false, "Secret/creds", "password", "new", false},
		{"projected secret item changes", projectedSecret, true, "Secret/creds", "password", "new", true},
		{"projected secret, another key changes", projectedSecret, true, "Secret/creds", "unused", "z", false},
		{"sidecar env key changes", sidecar, false, "ConfigMap/cfg", "level", "debug", true},
		{"init container envFrom secret changes", initContainer, true, "Secret/creds", "unused", "z", true},
		{"optional key disappears", optionalEnv, false, "ConfigMap/cfg", "level", "<absent>", true},
		{"optional object disappears", optionalEnv, false, "ConfigMap/cfg", "", "<absent>", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := specWith(tc.spec)
			before := stateOf(t, spec, tc.secrets, baseWorld)
			after := stateOf(t, spec, tc.secrets, baseWorld.with(tc.obj, tc.key, tc.value))
			if len(before.missing)+len(after.missing) > 0 {
				t.Fatalf("missing: before %q, after %q", before.missing, after.missing)
			}
			if changed := before.hash != after.hash; changed != tc.changes {
				t.Errorf("hash changed = %v (%q -> %q), want %v", changed, before.hash, after.hash, tc.changes)
			}
		})
	}
}

func TestConfigStateMissing(t *testing.T) {
	for _, tc := range []struct {
		name        string
		spec        func(*appv1.DeployObjectSpec)
		world       configWorld
		wantMissing []string
		wantHash    bool
	}{
		{"nothing used", func(*appv1.DeployObjectSpec) {}, baseWorld, nil, false},
		{"env key of a missing ConfigMap", func(s *appv1.DeployObjectSpec) { s.Env = []corev1.EnvVar{cmKeyRef("gone", "level", false)} },
			baseWorld, []string{"ConfigMap gone"}, true},
		{"missing key", func(s *appv1.DeployObjectSpec) { s.Env = []corev1.EnvVar{cmKeyRef("cfg", "nope", false)} },
			baseWorld, []string{"key nope of ConfigMap cfg"}, true},
		{"optional missing ConfigMap", func(s *appv1.DeployObjectSpec) { s.Env = []corev1.EnvVar{cmKeyRef("gone", "level", true)} },
			baseWorld, nil, true},
		{"missing volume item", func(s *appv1.DeployObjectSpec) {
			s.Volumes = []appv1.Volume{{Name: "c", ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Items: []corev1.KeyToPath{{Key: "nope", Path: "x"}}}}}
		}, baseWorld, []string{"key nope of ConfigMap cfg"}, true},
		{"missing Secret, tracked", func(s *appv1.DeployObjectSpec) { s.Env = []corev1.EnvVar{secretKeyRef("gone", "k")} },
			baseWorld, []string{"Secret gone"}, true},
		{"the same missing object twice, named once", func(s *appv1.DeployObjectSpec) {
			s.Env = []corev1.EnvVar{cmKeyRef("gone", "a", false), cmKeyRef("gone", "b", false)}
			s.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}}}}
		}, baseWorld, []string{"ConfigMap gone"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := stateOf(t, specWith(tc.spec), true, tc.world)
			if !slices.Equal(st.missing, tc.wantMissing) {
				t.Errorf("missing = %q, want %q", st.missing, tc.wantMissing)
			}
			if (st.hash != "") != tc.wantHash {
				t.Errorf("hash = %q, want one: %v", st.hash, tc.wantHash)
			}
		})
	}
}

func TestConfigHashIgnoresTheOrderOfReferences(t *testing.T) {
	a := specWith(func(s *appv1.DeployObjectSpec) {
		s.Env = []corev1.EnvVar{cmKeyRef("cfg", "level", false), secretKeyRef("creds", "password")}
	})
	b := specWith(func(s *appv1.DeployObjectSpec) {
		s.Env = []corev1.EnvVar{secretKeyRef("creds", "password"), cmKeyRef("cfg", "level", false)}
	})
	if ha, hb := stateOf(t, a, true, baseWorld).hash, stateOf(t, b, true, baseWorld).hash; ha != hb || len(ha) != 16 {
		t.Errorf("hashes %q and %q, want the same 16 hex digits", ha, hb)
	}
}

func TestConfigStateLookupError(t *testing.T) {
	refs := configRefs(specWith(func(s *appv1.DeployObjectSpec) { s.Env = []corev1.EnvVar{cmKeyRef("cfg", "level", false)} }), false)
	failing := func(configKind, string, string) (configData, error) { return configData{}, fmt.Errorf("boom") }
	if _, err := configStateOf("apps", refs, failing); err == nil || !strings.Contains(err.Error(), "ConfigMap cfg") {
		t.Errorf("err = %v, want one naming ConfigMap cfg", err)
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
	cached := func(obj any) *packed {
		t.Helper()
		p, err := transformObject(obj)
		if err != nil {
			t.Fatal(err)
		}
		return p.(*packed)
	}
	cmPacked, secretPacked := cached(cmIn.DeepCopy()), cached(secretIn.DeepCopy())

	for _, p := range []*packed{cmPacked, secretPacked} {
		if got := (packed{Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion, Protobuf: p.Protobuf}); !equality.Semantic.DeepEqual(*p, got) || p.Name != "cfg" || p.Namespace != "apps" || p.UID != "u1" || p.ResourceVersion != "7" {
			t.Errorf("metadata kept: %+v; want only the name, namespace, UID and resourceVersion", p)
		}
		for _, value := range []string{"s3cret", "info"} {
			if bytes.Contains(p.Protobuf, []byte(value)) || strings.Contains(fmt.Sprintf("%+v", p), value) {
				t.Errorf("the value %q is cached: %+v", value, p)
			}
		}
	}
	cm := throughCache(t, cmIn.DeepCopy(), corev1.Resource("configmaps"), newPackedLister[corev1.ConfigMap])
	s := throughCache(t, secretIn.DeepCopy(), corev1.Resource("secrets"), newPackedLister[corev1.Secret])
	wantCM := &corev1.ConfigMap{BinaryData: map[string][]byte{"level": valueHash("", []byte("info")), "bin": valueHash("", []byte("s3cret"))}}
	wantSecret := &corev1.Secret{Data: map[string][]byte{"password": valueHash("u1", []byte("s3cret"))}}
	if !equality.Semantic.DeepEqual(cm, wantCM) || !equality.Semantic.DeepEqual(s, wantSecret) {
		t.Errorf("want a hash per key and nothing else: %+v, %+v", cm, s)
	}
	// The same value in another Secret (another UID) hashes otherwise: the
	// pod template, which more people may read than the Secret, must not
	// reveal a short secret to whoever tries every value.
	other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cfg", UID: "u2"}, Data: map[string][]byte{"password": []byte("s3cret")}}
	if bytes.Equal(cached(other).Protobuf, secretPacked.Protobuf) {
		t.Errorf("a Secret's value hash does not depend on its UID")
	}
}

// TestConfigHashOfCachedObjects: the config hash of a DeployObject is a
// function of the data its pods use that no version of the cache may
// change, or upgrading the controller would roll every DeployObject using
// a ConfigMap or Secret. The hashes are those of the version that
// introduced configuration rollouts, which cached 16 hex digits per key.
func TestConfigHashOfCachedObjects(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	mustAdd(t, indexer, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "apps"}, Data: map[string]string{"level": "info"}})
	mustAdd(t, indexer, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "apps", UID: "u1"}, Data: map[string][]byte{"password": []byte("s3cret")}})
	lookup := func(kind configKind, namespace, name string) (configData, error) {
		if kind == kindSecret {
			return secretData(newPackedLister[corev1.Secret](indexer, corev1.Resource("secrets")).in(namespace)(name))
		}
		return configMapData(newPackedLister[corev1.ConfigMap](indexer, corev1.Resource("configmaps")).in(namespace)(name))
	}
	for _, tc := range []struct {
		name string
		env  []corev1.EnvVar
		want string
	}{
		{"ConfigMap key", []corev1.EnvVar{cmKeyRef("cfg", "level", false)}, "1df558d64a8da01a"},
		{"Secret key", []corev1.EnvVar{secretKeyRef("creds", "password")}, "1d00b5f2a09807cc"},
	} {
		st, err := configStateOf("apps", configRefs(specWith(func(s *appv1.DeployObjectSpec) { s.Env = tc.env }), true), lookup)
		if err != nil || st.hash != tc.want {
			t.Errorf("%s: config hash %q, %v; want %q", tc.name, st.hash, err, tc.want)
		}
	}
}

func TestConfigDataFromCache(t *testing.T) {
	notFound := apierrors.NewNotFound(corev1.Resource("configmaps"), "cfg")
	if d, err := configMapData(nil, notFound); err != nil || d.found {
		t.Errorf("not found: %+v, %v", d, err)
	}
	if _, err := secretData(nil, fmt.Errorf("boom")); err == nil {
		t.Error("want the cache's error")
	}
	d, err := secretData(&corev1.Secret{Data: map[string][]byte{"k": {0xab, 0x01}}}, nil)
	if err != nil || !d.found || d.hashes["k"] != "ab01" {
		t.Errorf("secret: %+v, %v", d, err)
	}
	d, err = configMapData(&corev1.ConfigMap{BinaryData: map[string][]byte{"k": {0xcd}}}, nil)
	if err != nil || !d.found || d.hashes["k"] != "cd" {
		t.Errorf("ConfigMap: %+v, %v", d, err)
	}
}

func TestConfigIndex(t *testing.T) {
	dobj := &appv1.DeployObject{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps"}, Spec: *specWith(func(s *appv1.DeployObjectSpec) {
		s.Env = []corev1.EnvVar{cmKeyRef("cfg", "a", false), cmKeyRef("cfg", "b", false), secretKeyRef("creds", "p")}
		s.Volumes = []appv1.Volume{{Name: "v", ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "files"}}}}
	})}
	for _, tc := range []struct {
		secrets bool
		want    []string
	}{
		{false, []string{"configmap/apps/cfg", "configmap/apps/files"}},
		{true, []string{"configmap/apps/cfg", "configmap/apps/files", "secret/apps/creds"}},
	} {
		got, err := configIndexFunc(tc.secrets)(dobj)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("secrets=%v: index keys %q, %v; want %q", tc.secrets, got, err, tc.want)
		}
	}
	if got, err := configIndexFunc(true)("not a DeployObject"); err != nil || got != nil {
		t.Errorf("garbage: %q, %v", got, err)
	}
}

func TestConfigTriggered(t *testing.T) {
	withHash := func(h string) *appsv1.Deployment {
		d := &appsv1.Deployment{}
		withConfigHash(&d.Spec.Template, h)
		return d
	}
	observed := &appv1.DeployObject{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Status: appv1.DeployObjectStatus{ObservedGeneration: 3}}
	newGen := &appv1.DeployObject{ObjectMeta: metav1.ObjectMeta{Generation: 4}, Status: appv1.DeployObjectStatus{ObservedGeneration: 3}}
	for _, tc := range []struct {
		name          string
		dobj          *appv1.DeployObject
		live, desired *appsv1.Deployment
		want          bool
	}{
		{"configuration changed", observed, withHash("a"), withHash("b"), true},
		{"configuration appears (upgrade of the controller)", observed, withHash(""), withHash("b"), true},
		{"unchanged", observed, withHash("a"), withHash("a"), false},
		{"new generation: never waits", newGen, withHash("a"), withHash("b"), false},
		{"no Deployment yet", observed, nil, withHash("b"), false},
	} {
		if got := configTriggered(tc.dobj, tc.live, tc.desired); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestConfigTransformSharesStrings: the default every DeployObject holds in
// configRollout, and the namespace of cached ConfigMaps, are one copy.
func TestConfigTransformSharesStrings(t *testing.T) {
	var a, b appv1.DeployObject
	src := newDeployObject(func(d *appv1.DeployObject) { d.Spec.ConfigRollout = appv1.ConfigRolloutEnabled })
	roundTrip(t, src, &a)
	roundTrip(t, src, &b)
	var c1, c2 corev1.ConfigMap
	roundTrip(t, configMap("cfg", map[string]string{"k": "v"}), &c1)
	roundTrip(t, configMap("cfg", map[string]string{"k": "v"}), &c2)
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
		once, err := transformObject(obj)
		if err != nil {
			t.Fatal(err)
		}
		twice, err := transformObject(once)
		if err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(once, twice) {
			t.Errorf("transformed twice:\n%+v\nonce:\n%+v", twice, once)
		}
	}
}
