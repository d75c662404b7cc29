package configrollout

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/testobjects"
)

func TestConfigIndex(t *testing.T) {
	dobj := &appv1.DeployObject{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps"}, Spec: *specWith(func(s *appv1.DeployObjectSpec) {
		s.Env = []corev1.EnvVar{testobjects.ConfigMapKeyRef("cfg", "a", false), testobjects.ConfigMapKeyRef("cfg", "b", false), testobjects.SecretKeyRef("creds", "p")}
		s.Volumes = []appv1.Volume{{Name: "v", ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "files"}}}}
	})}
	for _, tc := range []struct {
		secrets bool
		want    []string
	}{
		{false, []string{"configmap/apps/cfg", "configmap/apps/files"}},
		{true, []string{"configmap/apps/cfg", "configmap/apps/files", "secret/apps/creds"}},
	} {
		got, err := IndexFunc(tc.secrets)(dobj)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("secrets=%v: index keys %q, %v; want %q", tc.secrets, got, err, tc.want)
		}
	}
	if got, err := IndexFunc(true)("not a DeployObject"); err != nil || got != nil {
		t.Errorf("garbage: %q, %v", got, err)
	}
}
