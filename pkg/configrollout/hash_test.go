package configrollout

import (
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/caches"
	"deployobject.dev/controller/pkg/testobjects"
)

// configWorld is a set of ConfigMaps and Secrets as the caches hold them,
// by kind/name, with their values (hashed by lookup as the transforms
// hash them).
type configWorld map[string]map[string]string

func (w configWorld) lookup(kind Kind, _, name string) (Data, error) {
	data, ok := w[string(kind)+"/"+name]
	if !ok {
		return Data{}, nil
	}
	hashes := make(map[string]string, len(data))
	for k, v := range data {
		hashes[k] = hex.EncodeToString(caches.ValueHash("", []byte(v)))
	}
	return Data{found: true, hashes: hashes}, nil
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

func stateOf(t *testing.T, spec *appv1.DeployObjectSpec, secrets bool, w configWorld) State {
	t.Helper()
	st, err := StateOf("apps", Refs(spec, secrets), w.lookup)
	if err != nil {
		t.Fatalf("configStateOf: %v", err)
	}
	return st
}

// TestConfigHashFollowsTheDataThePodsUse: each row changes the world in
// one way and says whether the pods would see the change.
func TestConfigHashFollowsTheDataThePodsUse(t *testing.T) {
	envKey := func(s *appv1.DeployObjectSpec) {
		s.Env = []corev1.EnvVar{testobjects.ConfigMapKeyRef("cfg", "level", false)}
	}
	envSecret := func(s *appv1.DeployObjectSpec) {
		s.Env = []corev1.EnvVar{testobjects.SecretKeyRef("creds", "password")}
	}
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
		s.Sidecars = []corev1.Container{{Name: "proxy", Image: "envoy", Env: []corev1.EnvVar{testobjects.ConfigMapKeyRef("cfg", "level", false)}}}
	}
	initContainer := func(s *appv1.DeployObjectSpec) {
		s.InitContainers = []corev1.Container{{Name: "migrate", Image: "m", EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}}}}}}
	}
	fileKeys := func(s *appv1.DeployObjectSpec) {
		s.Files = []appv1.File{
			{Path: "/etc/app/level", ConfigMapKeyRef: &appv1.FileKeyRef{Name: "cfg", Key: "level"}},
			{Path: "/etc/app/password", SecretKeyRef: &appv1.FileKeyRef{Name: "creds", Key: "password"}},
			{Path: "/etc/app/inline", Content: ptr.To("inline content is in the spec")},
		}
	}
	optionalEnv := func(s *appv1.DeployObjectSpec) {
		s.Env = []corev1.EnvVar{testobjects.ConfigMapKeyRef("cfg", "level", true)}
	}

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
		{"file from a ConfigMap key: the key changes", fileKeys, false, "ConfigMap/cfg", "level", "debug", true},
		{"file from a ConfigMap key: another key changes", fileKeys, false, "ConfigMap/cfg", "unused", "z", false},
		{"file from a Secret key, tracked: the key changes", fileKeys, true, "Secret/creds", "password", "new", true},
		{"file from a Secret key, tracked: another key changes", fileKeys, true, "Secret/creds", "unused", "z", false},
		{"file from a Secret key, untracked: the key changes", fileKeys, false, "Secret/creds", "password", "new", false},
		{"optional key disappears", optionalEnv, false, "ConfigMap/cfg", "level", "<absent>", true},
		{"optional object disappears", optionalEnv, false, "ConfigMap/cfg", "", "<absent>", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := specWith(tc.spec)
			before := stateOf(t, spec, tc.secrets, baseWorld)
			after := stateOf(t, spec, tc.secrets, baseWorld.with(tc.obj, tc.key, tc.value))
			if len(before.Missing)+len(after.Missing) > 0 {
				t.Fatalf("missing: before %q, after %q", before.Missing, after.Missing)
			}
			if changed := before.Hash != after.Hash; changed != tc.changes {
				t.Errorf("hash changed = %v (%q -> %q), want %v", changed, before.Hash, after.Hash, tc.changes)
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
		{"env key of a missing ConfigMap", func(s *appv1.DeployObjectSpec) {
			s.Env = []corev1.EnvVar{testobjects.ConfigMapKeyRef("gone", "level", false)}
		},
			baseWorld, []string{"ConfigMap gone"}, true},
		{"missing key", func(s *appv1.DeployObjectSpec) {
			s.Env = []corev1.EnvVar{testobjects.ConfigMapKeyRef("cfg", "nope", false)}
		},
			baseWorld, []string{"key nope of ConfigMap cfg"}, true},
		{"optional missing ConfigMap", func(s *appv1.DeployObjectSpec) {
			s.Env = []corev1.EnvVar{testobjects.ConfigMapKeyRef("gone", "level", true)}
		},
			baseWorld, nil, true},
		{"missing volume item", func(s *appv1.DeployObjectSpec) {
			s.Volumes = []appv1.Volume{{Name: "c", ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Items: []corev1.KeyToPath{{Key: "nope", Path: "x"}}}}}
		}, baseWorld, []string{"key nope of ConfigMap cfg"}, true},
		{"missing Secret, tracked", func(s *appv1.DeployObjectSpec) { s.Env = []corev1.EnvVar{testobjects.SecretKeyRef("gone", "k")} },
			baseWorld, []string{"Secret gone"}, true},
		{"the same missing object twice, named once", func(s *appv1.DeployObjectSpec) {
			s.Env = []corev1.EnvVar{testobjects.ConfigMapKeyRef("gone", "a", false), testobjects.ConfigMapKeyRef("gone", "b", false)}
			s.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}}}}
		}, baseWorld, []string{"ConfigMap gone"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := stateOf(t, specWith(tc.spec), true, tc.world)
			if !slices.Equal(st.Missing, tc.wantMissing) {
				t.Errorf("missing = %q, want %q", st.Missing, tc.wantMissing)
			}
			if (st.Hash != "") != tc.wantHash {
				t.Errorf("hash = %q, want one: %v", st.Hash, tc.wantHash)
			}
		})
	}
}

func TestConfigHashIgnoresTheOrderOfReferences(t *testing.T) {
	a := specWith(func(s *appv1.DeployObjectSpec) {
		s.Env = []corev1.EnvVar{testobjects.ConfigMapKeyRef("cfg", "level", false), testobjects.SecretKeyRef("creds", "password")}
	})
	b := specWith(func(s *appv1.DeployObjectSpec) {
		s.Env = []corev1.EnvVar{testobjects.SecretKeyRef("creds", "password"), testobjects.ConfigMapKeyRef("cfg", "level", false)}
	})
	if ha, hb := stateOf(t, a, true, baseWorld).Hash, stateOf(t, b, true, baseWorld).Hash; ha != hb || len(ha) != 16 {
		t.Errorf("hashes %q and %q, want the same 16 hex digits", ha, hb)
	}
}

func TestConfigStateLookupError(t *testing.T) {
	refs := Refs(specWith(func(s *appv1.DeployObjectSpec) {
		s.Env = []corev1.EnvVar{testobjects.ConfigMapKeyRef("cfg", "level", false)}
	}), false)
	failing := func(Kind, string, string) (Data, error) { return Data{}, fmt.Errorf("boom") }
	if _, err := StateOf("apps", refs, failing); err == nil || !strings.Contains(err.Error(), "ConfigMap cfg") {
		t.Errorf("err = %v, want one naming ConfigMap cfg", err)
	}
}
