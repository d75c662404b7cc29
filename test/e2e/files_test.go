//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
)

// TestFiles: with the shared controller (--track-secrets), spec.files
// mounts an inline file, a ConfigMap key and a Secret key into the pods.
// The inline content lives in an immutable ConfigMap named by it; a
// change of it makes one new ConfigMap and one new ReplicaSet, and once
// the rollout is done only the ConfigMaps that the ReplicaSets kept by
// revisionHistoryLimit (1) mount stay, chosen by revision, not by age. A
// change of the Secret key rolls the pods through the configuration hash,
// which drops the last ReplicaSet of an older content; resyncs write
// nothing.
func TestFiles(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	if _, err := env.kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds"}, StringData: map[string]string{"token": "one", "unused": "a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"features.json": "{}"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	withContent := func(content string) func(*appv1.DeployObject) {
		return func(d *appv1.DeployObject) { d.Spec.Files[0].Content = ptr.To(content) }
	}
	create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
		d.Spec.RevisionHistoryLimit = ptr.To[int32](1)
		d.Spec.Sidecars = []corev1.Container{{Name: "proxy", Image: "envoy:1.32"}}
		d.Spec.Files = []appv1.File{
			{Path: "/etc/web/app.yaml", Sidecars: []string{"proxy"}},
			{Path: "/etc/web/token", SecretKeyRef: &appv1.FileKeyRef{Name: "creds", Key: "token"}, Mode: ptr.To[int32](0o400)},
			{Path: "/etc/web/features.json", ConfigMapKeyRef: &appv1.FileKeyRef{Name: "settings", Key: "features.json"}},
		}
	}, withContent("level: info\n")))
	waitReady(t, ns, "web")
	first := filesConfigMapOf(t, ns)
	cm := getConfigMap(t, ns, first)
	if !ptr.Deref(cm.Immutable, false) || cm.Data["0-app.yaml"] != "level: info\n" || len(cm.Data) != 1 {
		t.Fatalf("ConfigMap %s: immutable %v, data %v; want immutable, holding the inline file only", first, cm.Immutable, cm.Data)
	}
	d := getDeployment(t, ns, "web")
	if mounts := d.Spec.Template.Spec.Containers[0].VolumeMounts; len(mounts) != 3 || mounts[1].MountPath != "/etc/web/token" || mounts[1].SubPath != "1-token" {
		t.Errorf("main container mounts: %+v; want the three files", mounts)
	}
	pods := podsOf(t, ns, "web")
	if len(pods) == 0 || !slices.ContainsFunc(pods[0].Spec.Volumes, func(v corev1.Volume) bool { return v.Name == children.FilesVolumeName }) {
		t.Errorf("the pods have no files volume: %d pods", len(pods))
	}
	expectQuiet(t, shared, ns, sharedResync+5*time.Second, false)

	t.Log("The inline content changes: one new ConfigMap, one new ReplicaSet")
	updateDO(t, ns, "web", withContent("level: debug\n"))
	waitReady(t, ns, "web")
	second := filesConfigMapOf(t, ns)
	if second == first {
		t.Fatalf("the ConfigMap of files kept its name %s after a change of content", first)
	}
	if rs := replicaSets(t, ns, "web"); rs != 2 {
		t.Errorf("%d ReplicaSets after one change, want 2", rs)
	}
	if got := filesConfigMaps(t, ns); !slices.Equal(got, sorted(first, second)) {
		t.Errorf("ConfigMaps of files %v, want the previous one kept beside the new one (revisionHistoryLimit 1)", got)
	}

	t.Log("It changes again: the oldest goes once the rollout is done, the previous stays")
	updateDO(t, ns, "web", withContent("level: warn\n"))
	waitReady(t, ns, "web")
	third := filesConfigMapOf(t, ns)
	eventually(t, timeout, "the oldest ConfigMap of files deleted", func() (bool, string, error) {
		got := filesConfigMaps(t, ns)
		return slices.Equal(got, sorted(second, third)), fmt.Sprint(got), nil
	})
	for _, p := range podsOf(t, ns, "web") {
		if p.DeletionTimestamp == nil && slices.ContainsFunc(p.Spec.Volumes, func(v corev1.Volume) bool {
			return v.Name == children.FilesVolumeName && v.Projected.Sources[0].ConfigMap.Name == first
		}) {
			t.Errorf("ConfigMap %s was deleted while pod %s still mounts it", first, p.Name)
		}
	}

	t.Log("Back to the second content, then a fourth: the second stays, mounted by the ReplicaSet the history keeps")
	// The Deployment brings the second content's ReplicaSet back as the
	// newest revision; after the fourth, revisionHistoryLimit 1 keeps that
	// one and drops the third's, which was made later.
	updateDO(t, ns, "web", withContent("level: debug\n"))
	waitReady(t, ns, "web")
	if got := filesConfigMapOf(t, ns); got != second {
		t.Fatalf("back to the second content, the Deployment mounts %s, want %s", got, second)
	}
	updateDO(t, ns, "web", withContent("level: error\n"))
	waitReady(t, ns, "web")
	fourth := filesConfigMapOf(t, ns)
	eventually(t, timeout, "the third ConfigMap of files deleted, the second kept", func() (bool, string, error) {
		got := filesConfigMaps(t, ns)
		return slices.Equal(got, sorted(second, fourth)), fmt.Sprint(got), nil
	})

	t.Log("The Secret key changes: the pods roll through the configuration hash")
	hash := configHashOf(t, ns, "web")
	rs := replicaSets(t, ns, "web")
	secret, err := env.kube.CoreV1().Secrets(ns).Get(ctx, "creds", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secret.Data["token"] = []byte("two")
	if _, err := env.kube.CoreV1().Secrets(ns).Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, timeout, "a rollout for the new token", func() (bool, string, error) {
		n := replicaSets(t, ns, "web")
		return configHashOf(t, ns, "web") != hash && n > rs, fmt.Sprintf("%d ReplicaSets", n), nil
	})
	waitRolledOut(t, ns, "web")
	if got := filesConfigMapOf(t, ns); got != fourth {
		t.Errorf("a Secret change renamed the ConfigMap of files: %s, want %s", got, fourth)
	}
	// Both ReplicaSets the history keeps now mount the fourth ConfigMap: the
	// Deployment controller drops the second's ReplicaSet once the rollout
	// is complete, without the controller being told, so the second goes at
	// the DeployObject's next sync, at the latest its resync (docs/files.md).
	// Only then is the DeployObject in a steady state.
	eventually(t, sharedResync+timeout, "the second ConfigMap of files deleted once no kept ReplicaSet mounts it", func() (bool, string, error) {
		got := filesConfigMaps(t, ns)
		return slices.Equal(got, []string{fourth}), fmt.Sprint(got), nil
	})
	expectQuiet(t, shared, ns, sharedResync+5*time.Second, false)
}

// filesConfigMapOf is the ConfigMap of inline files that DeployObject web's
// Deployment mounts now.
func filesConfigMapOf(t *testing.T, ns string) string {
	t.Helper()
	for _, v := range getDeployment(t, ns, "web").Spec.Template.Spec.Volumes {
		if v.Name == children.FilesVolumeName && v.Projected != nil && v.Projected.Sources[0].ConfigMap != nil {
			return v.Projected.Sources[0].ConfigMap.Name
		}
	}
	t.Fatal("the Deployment mounts no ConfigMap of files")
	return ""
}

// filesConfigMaps are the names of the ConfigMaps of inline files in ns,
// sorted.
func filesConfigMaps(t *testing.T, ns string) []string {
	t.Helper()
	list, err := env.kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: appv1.LabelFiles + "=true"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, cm := range list.Items {
		if strings.HasPrefix(cm.Name, "web-files-") {
			names = append(names, cm.Name)
		}
	}
	slices.Sort(names)
	return names
}

func sorted(names ...string) []string {
	slices.Sort(names)
	return names
}

func getConfigMap(t *testing.T, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := env.kube.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading ConfigMap %s: %v", name, err)
	}
	return cm
}
