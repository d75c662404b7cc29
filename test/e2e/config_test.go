//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// configKeyRef is an env var from key of the ConfigMap or Secret name.
func configKeyRef(env, kind, name, key string) corev1.EnvVar {
	ref := corev1.LocalObjectReference{Name: name}
	if kind == "Secret" {
		return corev1.EnvVar{Name: env, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: ref, Key: key}}}
	}
	return corev1.EnvVar{Name: env, ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: ref, Key: key}}}
}

// replicaSets counts the ReplicaSets of DeployObject name: one per pod
// template rolled out.
func replicaSets(t *testing.T, ns, name string) int {
	t.Helper()
	list, err := env.kube.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: appv1.LabelName + "=" + name})
	if err != nil {
		t.Fatalf("listing ReplicaSets: %v", err)
	}
	return len(list.Items)
}

func configHashOf(t *testing.T, ns, name string) string {
	t.Helper()
	return getDeployment(t, ns, name).Spec.Template.Annotations[appv1.AnnotationConfigHash]
}

// waitRolledOut waits until DeployObject name is Ready with the pod
// template's config hash in status.configHash, and returns the hash. A
// configuration rollout changes no generation, so Ready at the current
// generation alone may still be the status from before it.
func waitRolledOut(t *testing.T, ns, name string) string {
	t.Helper()
	hash := configHashOf(t, ns, name)
	eventually(t, timeout, name+" Ready with the new configuration", func() (bool, string, error) {
		d := getDO(t, ns, name)
		ok, state := readyState(d)
		return ok && d.Status.ConfigHash == hash, fmt.Sprintf("%s, status.configHash %q, pod template %q", state, d.Status.ConfigHash, hash), nil
	})
	return hash
}

// TestConfigRollouts: with the shared controller (--track-secrets), a
// change of a used ConfigMap key rolls the pods of exactly the
// DeployObjects that use it, a change of an unused key writes nothing, a
// Secret change rolls only the DeployObject that uses the Secret, a
// deleted ConfigMap is reported as ConfigMissing without a Deployment
// write, and re-creating it recovers.
func TestConfigRollouts(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	cms, secrets := env.kube.CoreV1().ConfigMaps(ns), env.kube.CoreV1().Secrets(ns)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"level": "info", "unused": "a"}}
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds"}, StringData: map[string]string{"password": "one"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	level := configKeyRef("LEVEL", "ConfigMap", "cfg", "level")
	one := func(d *appv1.DeployObject) { d.Spec.Replicas = ptr.To[int32](1) }
	create(t, newDO(ns, "uses-cfg", one, func(d *appv1.DeployObject) { d.Spec.Env = append(d.Spec.Env, level) }))
	create(t, newDO(ns, "uses-secret", one, func(d *appv1.DeployObject) {
		d.Spec.Env = append(d.Spec.Env, level, configKeyRef("PASSWORD", "Secret", "creds", "password"))
	}))
	create(t, newDO(ns, "disabled", one, func(d *appv1.DeployObject) {
		d.Spec.Env = append(d.Spec.Env, level)
		d.Spec.ConfigRollout = appv1.ConfigRolloutDisabled
	}))
	names := []string{"uses-cfg", "uses-secret", "disabled"}
	for _, n := range names {
		waitReady(t, ns, n)
	}
	if h := configHashOf(t, ns, "disabled"); h != "" {
		t.Errorf("configRollout: Disabled, yet the pod template carries config hash %q", h)
	}
	hashes := map[string]string{}
	for _, n := range names[:2] {
		hashes[n] = configHashOf(t, ns, n)
		if d := getDO(t, ns, n); hashes[n] == "" || d.Status.ConfigHash != hashes[n] {
			t.Fatalf("%s: pod template config hash %q, status.configHash %q; want the same, not empty", n, hashes[n], d.Status.ConfigHash)
		}
	}
	setConfig := func(key, value string) {
		t.Helper()
		live, err := cms.Get(ctx, "cfg", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		live.Data[key] = value
		if _, err := cms.Update(ctx, live, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Past --config-rollout-delay (5 s): a sync that was to come has come.
	const settle = 10 * time.Second

	t.Log("A key no pod uses changes: nothing is written")
	since := time.Now()
	setConfig("unused", "b")
	time.Sleep(settle)
	if w := controllerWrites(t, ns, "deployments", "write", since); len(w) != 0 {
		t.Errorf("Deployment writes after a change of an unused key: %v, want none", w)
	}

	t.Log("The used key changes: the two DeployObjects that roll out get a new ReplicaSet and are Ready again")
	since = time.Now()
	setConfig("level", "debug")
	for _, n := range names[:2] {
		eventually(t, timeout, n+" to roll out a new pod template", func() (bool, string, error) {
			rs := replicaSets(t, ns, n)
			return rs == 2 && configHashOf(t, ns, n) != hashes[n], fmt.Sprintf("%d ReplicaSets", rs), nil
		})
		hashes[n] = waitRolledOut(t, ns, n)
	}
	time.Sleep(settle)
	// Two each: the first apply to a Deployment the controller created
	// also moves the create's fields to its apply entry (csaupgrade), once
	// per Deployment; the Secret change below costs one.
	if w := controllerWrites(t, ns, "deployments", "write", since); w["uses-cfg"] != 2 || w["uses-secret"] != 2 || w["disabled"] != 0 {
		t.Errorf("Deployment writes after a change of the used key: %v, want two each (migration and apply) for uses-cfg and uses-secret, none for disabled", w)
	}
	if rs := replicaSets(t, ns, "disabled"); rs != 1 {
		t.Errorf("disabled has %d ReplicaSets, want 1", rs)
	}

	t.Log("The Secret changes: only the DeployObject that uses it rolls out")
	since = time.Now()
	s, err := secrets.Get(ctx, "creds", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Data["password"] = []byte("two")
	if _, err := secrets.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, timeout, "uses-secret to roll out a new pod template", func() (bool, string, error) {
		rs := replicaSets(t, ns, "uses-secret")
		return rs == 3, fmt.Sprintf("%d ReplicaSets", rs), nil
	})
	waitRolledOut(t, ns, "uses-secret")
	time.Sleep(settle)
	if w := controllerWrites(t, ns, "deployments", "write", since); len(w) != 1 || w["uses-secret"] != 1 {
		t.Errorf("Deployment writes after a Secret change: %v, want one, for uses-secret", w)
	}

	t.Log("The ConfigMap is deleted: ConfigMissing, and the Deployments are left alone")
	since = time.Now()
	if err := cms.Delete(ctx, "cfg", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		c := waitReason(t, ns, n, metav1.ConditionFalse, appv1.ReasonConfigMissing)
		if !strings.Contains(c.Message, "ConfigMap cfg") {
			t.Errorf("%s: ConfigMissing message %q does not name ConfigMap cfg", n, c.Message)
		}
	}
	// Within the shared controller's --config-missing-grace-period it may
	// still come (Reconciling: Flux waits); after it, Stalled.
	for _, n := range names {
		if s := meta.FindStatusCondition(getDO(t, ns, n).Status.Conditions, appv1.ConditionReconciling); s == nil || s.Reason != appv1.ReasonConfigMissing {
			if time.Since(since) < sharedConfigGrace {
				t.Errorf("%s: Reconciling = %+v %s after the deletion, want True with ConfigMissing within the grace of %s", n, s, time.Since(since).Round(time.Second), sharedConfigGrace)
			}
		}
	}
	for _, n := range names {
		waitChildCondition(t, ns, n, appv1.ConditionStalled, metav1.ConditionTrue, appv1.ReasonConfigMissing)
	}
	if waited := time.Since(since); waited < sharedConfigGrace {
		t.Errorf("Stalled %s after the deletion, before the grace of %s was over", waited.Round(time.Second), sharedConfigGrace)
	}

	t.Log("The ConfigMap is created again with the same data: Ready again, and the pods were never touched")
	cm.Data = map[string]string{"level": "debug", "unused": "b"}
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		waitReady(t, ns, n)
	}
	if w := controllerWrites(t, ns, "deployments", "write", since); len(w) != 0 {
		t.Errorf("Deployment writes while the ConfigMap was missing and after it came back: %v, want none", w)
	}
}
