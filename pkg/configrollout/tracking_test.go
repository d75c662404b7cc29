package configrollout

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/caches"
	"deployobject.dev/controller/pkg/testobjects"
)

// TestConfigHashOfCachedObjects: the config hash of a DeployObject is a
// function of the data its pods use that no version of the cache may
// change, or upgrading the controller would roll every DeployObject using
// a ConfigMap or Secret. The hashes are those of the version that
// introduced configuration rollouts, which cached 16 hex digits per key.
func TestConfigHashOfCachedObjects(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, obj := range []any{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "apps"}, Data: map[string]string{"level": "info"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "apps", UID: "u1"}, Data: map[string][]byte{"password": []byte("s3cret")}},
	} {
		cached, err := caches.ChildKinds().Transform(obj)
		if err != nil {
			t.Fatal(err)
		}
		if err := indexer.Add(cached); err != nil {
			t.Fatal(err)
		}
	}
	lookup := func(kind Kind, namespace, name string) (Data, error) {
		if kind == KindSecret {
			return SecretData(caches.NewPackedLister[corev1.Secret](indexer, corev1.Resource("secrets")).In(namespace)(name))
		}
		return ConfigMapData(caches.NewPackedLister[corev1.ConfigMap](indexer, corev1.Resource("configmaps")).In(namespace)(name))
	}
	for _, tc := range []struct {
		name string
		env  []corev1.EnvVar
		want string
	}{
		{"ConfigMap key", []corev1.EnvVar{testobjects.ConfigMapKeyRef("cfg", "level", false)}, "1df558d64a8da01a"},
		{"Secret key", []corev1.EnvVar{testobjects.SecretKeyRef("creds", "password")}, "1d00b5f2a09807cc"},
	} {
		st, err := StateOf("apps", Refs(specWith(func(s *appv1.DeployObjectSpec) { s.Env = tc.env }), true), lookup)
		if err != nil || st.Hash != tc.want {
			t.Errorf("%s: config hash %q, %v; want %q", tc.name, st.Hash, err, tc.want)
		}
	}
}

func TestConfigDataFromCache(t *testing.T) {
	notFound := apierrors.NewNotFound(corev1.Resource("configmaps"), "cfg")
	if d, err := ConfigMapData(nil, notFound); err != nil || d.found {
		t.Errorf("not found: %+v, %v", d, err)
	}
	if _, err := SecretData(nil, fmt.Errorf("boom")); err == nil {
		t.Error("want the cache's error")
	}
	d, err := SecretData(&corev1.Secret{Data: map[string][]byte{"k": {0xab, 0x01}}}, nil)
	if err != nil || !d.found || d.hashes["k"] != "ab01" {
		t.Errorf("secret: %+v, %v", d, err)
	}
	d, err = ConfigMapData(&corev1.ConfigMap{BinaryData: map[string][]byte{"k": {0xcd}}}, nil)
	if err != nil || !d.found || d.hashes["k"] != "cd" {
		t.Errorf("ConfigMap: %+v, %v", d, err)
	}
}

// TestUnrequested: which writes of a Deployment are rollouts the spec did
// not ask for, and so wait for a slot.
func TestUnrequested(t *testing.T) {
	deployment := func(podSpec, template, configHash string) *appsv1.Deployment {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			appv1.AnnotationPodSpecHash: podSpec, appv1.AnnotationTemplateHash: template}}}
		WithHash(&d.Spec.Template, configHash)
		return d
	}
	written := deployment("spec1", "tmpl1", "a")
	preAnnotation := &appsv1.Deployment{}
	WithHash(&preAnnotation.Spec.Template, "a")
	observed := &appv1.DeployObject{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Status: appv1.DeployObjectStatus{ObservedGeneration: 3}}
	newGen := &appv1.DeployObject{ObjectMeta: metav1.ObjectMeta{Generation: 4}, Status: appv1.DeployObjectStatus{ObservedGeneration: 3}}
	for _, tc := range []struct {
		name          string
		dobj          *appv1.DeployObject
		live, desired *appsv1.Deployment
		want          bool
	}{
		{"configuration changed", observed, written, deployment("spec1", "tmpl2", "b"), true},
		{"the controller's template changed (profile, version)", observed, written, deployment("spec1", "tmpl2", "a"), true},
		{"a scale: the template is the same", newGen, written, deployment("spec1", "tmpl1", "a"), false},
		{"configuration changed with a scale", newGen, written, deployment("spec1", "tmpl2", "b"), true},
		{"the spec's template changed", newGen, written, deployment("spec2", "tmpl2", "b"), false},
		{"drift: someone else changed the template", observed, written, deployment("spec1", "tmpl1", "a"), false},
		{"no Deployment yet", observed, nil, deployment("spec1", "tmpl1", "a"), false},
		{"written by an earlier version, configuration changed", observed, preAnnotation, deployment("spec1", "tmpl2", "b"), true},
		{"written by an earlier version, new generation", newGen, preAnnotation, deployment("spec1", "tmpl2", "b"), false},
	} {
		if got := Unrequested(tc.dobj, tc.live, tc.desired); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
