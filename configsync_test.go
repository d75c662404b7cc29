package main

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// configMap is the ConfigMap cfg of the test namespace with data.
func configMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testKey.Namespace, UID: types.UID("uid-" + name), ResourceVersion: "5"}, Data: data}
}

// usingConfig is a DeployObject whose container reads key level of the
// ConfigMap cfg.
func usingConfig(mutate ...func(*appv1.DeployObject)) *appv1.DeployObject {
	return newDeployObject(append([]func(*appv1.DeployObject){func(d *appv1.DeployObject) {
		d.Spec.Env = append(d.Spec.Env, cmKeyRef("cfg", "level", false))
	}}, mutate...)...)
}

// configHashFor is the config hash of dobj's pods with the ConfigMaps cms.
func configHashFor(t *testing.T, dobj *appv1.DeployObject, cms ...*corev1.ConfigMap) string {
	t.Helper()
	lookup := func(_ configKind, _, name string) (configData, error) {
		for _, cm := range cms {
			if cm.Name == name {
				return configMapData(throughCache(t, cm.DeepCopy(), corev1.Resource("configmaps"), newPackedLister[corev1.ConfigMap]), nil)
			}
		}
		return configData{}, nil
	}
	st, err := configStateOf(dobj.Namespace, configRefs(&dobj.Spec, false), lookup)
	if err != nil {
		t.Fatal(err)
	}
	return st.hash
}

// rolledOutWithConfig gives f dobj and its children in line with the pod
// template carrying configHash ("" for none), as a sync before left them.
func (f *fixture) rolledOutWithConfig(dobj *appv1.DeployObject, configHash string) *appsv1.Deployment {
	inSync(dobj)
	desired := desiredDeployment(dobj, profileNone)
	withConfigHash(&desired.Spec.Template, configHash)
	_, hash, err := stampedDeployment(desired)
	if err != nil {
		f.t.Fatal(err)
	}
	dobj.Status.DeploymentHash, dobj.Status.ConfigHash = hash, configHash
	live := liveDeployment(dobj)
	live.Annotations[appv1.AnnotationDeploymentHash] = hash
	withConfigHash(&live.Spec.Template, configHash)
	f.dobjs = []*appv1.DeployObject{dobj}
	f.deployments = []*appsv1.Deployment{live}
	f.services = []*corev1.Service{liveService(dobj)}
	f.trackConfig = true
	return live
}

// TestSyncConfigChanges: what one sync writes after the ConfigMap a
// DeployObject uses changed in one way, with configuration rollouts
// enabled or disabled.
func TestSyncConfigChanges(t *testing.T) {
	before := configMap("cfg", map[string]string{"level": "info", "unused": "a"})
	for _, tc := range []struct {
		name     string
		disabled bool
		after    *corev1.ConfigMap // nil: deleted
		want     []string
		// reason is the Ready reason written, if any.
		reason, message string
	}{
		{name: "unchanged", after: before},
		{name: "unused key changed", after: configMap("cfg", map[string]string{"level": "info", "unused": "b"})},
		{name: "used key changed", after: configMap("cfg", map[string]string{"level": "debug", "unused": "a"}),
			want: []string{"get deployments", "patch deployments", "patch deployobjects/status"}, reason: appv1.ReasonAvailable},
		{name: "used key removed", after: configMap("cfg", map[string]string{"unused": "a"}),
			want: []string{"patch deployobjects/status"}, reason: appv1.ReasonConfigMissing, message: "key level of ConfigMap cfg"},
		{name: "ConfigMap deleted",
			want: []string{"patch deployobjects/status"}, reason: appv1.ReasonConfigMissing, message: "ConfigMap cfg"},
		{name: "disabled: used key changed", disabled: true, after: configMap("cfg", map[string]string{"level": "debug", "unused": "a"})},
		{name: "disabled: ConfigMap deleted", disabled: true,
			want: []string{"patch deployobjects/status"}, reason: appv1.ReasonConfigMissing, message: "ConfigMap cfg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			dobj := usingConfig(func(d *appv1.DeployObject) {
				if tc.disabled {
					d.Spec.ConfigRollout = appv1.ConfigRolloutDisabled
				}
			})
			oldHash := ""
			if !tc.disabled {
				oldHash = configHashFor(t, dobj, before)
			}
			f.rolledOutWithConfig(dobj, oldHash)
			if tc.after != nil {
				f.configMaps = []*corev1.ConfigMap{tc.after}
			}
			err, actions := f.sync()
			if err != nil {
				t.Fatalf("sync: %v", err)
			}
			expectActions(t, actions, tc.want...)
			if len(actions) == 0 {
				return
			}
			last := actions[len(actions)-1]
			ready := readyOf(t, last)
			if ready.Reason != tc.reason || !strings.Contains(ready.Message, tc.message) {
				t.Errorf("Ready = %s %q, want %s naming %q", ready.Reason, ready.Message, tc.reason, tc.message)
			}
			if tc.reason == appv1.ReasonConfigMissing {
				if stalled := conditionOf(t, last, appv1.ConditionStalled); stalled == nil || stalled.Reason != appv1.ReasonConfigMissing {
					t.Errorf("Stalled = %+v, want True with ConfigMissing: someone has to create the object", stalled)
				}
				if ev := events(f.recorder); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning ConfigMissing") {
					t.Errorf("events = %q, want one Warning ConfigMissing", ev)
				}
				if got := statusOf(t, last).ConfigHash; got != oldHash {
					t.Errorf("status.configHash = %q, want %q kept: the pods still run it", got, oldHash)
				}
				return
			}
			newHash := configHashFor(t, dobj, tc.after)
			if got := appliedDeployment(t, actions[1]).Spec.Template.Annotations[appv1.AnnotationConfigHash]; got != newHash || got == oldHash {
				t.Errorf("applied config hash %q, want the new %q (was %q)", got, newHash, oldHash)
			}
			if got := statusOf(t, last).ConfigHash; got != newHash {
				t.Errorf("status.configHash = %q, want %q", got, newHash)
			}
			if ev := events(f.recorder); len(ev) != 0 {
				t.Errorf("events = %q, want none: a configuration rollout is no drift", ev)
			}
		})
	}
}

// TestSyncConfigMissingCreatesNoDeployment: a new DeployObject whose
// ConfigMap does not exist gets no Deployment, whose pods could not start.
func TestSyncConfigMissingCreatesNoDeployment(t *testing.T) {
	f := newFixture(t)
	f.dobjs = []*appv1.DeployObject{usingConfig()}
	f.trackConfig = true
	err, actions := f.sync()
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	expectActions(t, actions, "create services", "patch deployobjects/status")
	if ready := readyOf(t, actions[1]); ready.Reason != appv1.ReasonConfigMissing || !strings.Contains(ready.Message, "ConfigMap cfg") {
		t.Errorf("Ready = %s %q, want ConfigMissing naming ConfigMap cfg", ready.Reason, ready.Message)
	}
}

// TestSyncConfigRolloutWaitsForASlot: with every slot taken, a rollout
// caused by configuration alone waits and says so; a spec change does not
// wait.
func TestSyncConfigRolloutWaitsForASlot(t *testing.T) {
	before := configMap("cfg", map[string]string{"level": "info"})
	after := configMap("cfg", map[string]string{"level": "debug"})
	for _, tc := range []struct {
		name       string
		specChange bool
		want       []string
		reason     string
	}{
		{"configuration change waits", false, []string{"patch deployobjects/status"}, appv1.ReasonConfigRolloutPending},
		{"spec change does not wait", true, []string{"get deployments", "patch deployments", "patch deployobjects/status"}, appv1.ReasonAvailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			dobj := usingConfig()
			f.rolledOutWithConfig(dobj, configHashFor(t, dobj, before))
			if tc.specChange {
				dobj.Generation++
				dobj.Spec.Image = "nginx:1.28"
			}
			f.configMaps = []*corev1.ConfigMap{after}
			f.maxConfigRollouts = 1
			_, ctx := ktesting.NewTestContext(t)
			c := f.newController(ctx)
			other := cache.ObjectName{Namespace: "apps", Name: "other"}
			if !c.config.limiter.acquire(other) {
				t.Fatal("the only slot was not free")
			}
			if err := c.syncHandler(ctx, testKey); err != nil {
				t.Fatalf("sync: %v", err)
			}
			actions := writes(f.kubeClient.Actions(), f.client.Actions())
			expectActions(t, actions, tc.want...)
			if ready := conditionOf(t, actions[len(actions)-1], appv1.ConditionReady); ready == nil || ready.Reason != tc.reason {
				t.Errorf("Ready = %s %q, want %s", ready.Reason, ready.Message, tc.reason)
			}
			active, pending := c.config.limiter.counts()
			if wantPending := map[bool]int{false: 1, true: 0}[tc.specChange]; active != 1 || pending != wantPending {
				t.Errorf("limiter: %d active, %d pending; want 1, %d", active, pending, wantPending)
			}
			if tc.specChange {
				return
			}
			// The slot is freed: the waiting DeployObject is woken, and
			// its next sync rolls out.
			c.config.limiter.finish(other, true)
			if c.queue.Len() != 1 {
				t.Fatalf("queue holds %d keys, want the waiting DeployObject", c.queue.Len())
			}
			f.kubeClient.ClearActions()
			f.client.ClearActions()
			if err := c.syncHandler(ctx, testKey); err != nil {
				t.Fatalf("sync: %v", err)
			}
			// The status write of the first sync is not in the cache: the
			// controller judges against what it wrote.
			expectActions(t, writes(f.kubeClient.Actions(), f.client.Actions()), "get deployments", "patch deployments", "patch deployobjects/status")
			// The fake Deployment is rolled out at once: Ready, and the
			// slot is free again.
			if active, pending := c.config.limiter.counts(); active != 0 || pending != 0 {
				t.Errorf("after the rollout: %d active, %d pending; want 0, 0", active, pending)
			}
		})
	}
}

// TestConfigEventHandlers: a ConfigMap or Secret event enqueues exactly the
// DeployObjects that use the object, and only when its data changed.
func TestConfigEventHandlers(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	users := usingConfig(func(d *appv1.DeployObject) {
		d.Spec.Env = append(d.Spec.Env, secretKeyRef("creds", "password"))
	})
	other := usingConfig(func(d *appv1.DeployObject) {
		d.Name = "other"
		d.Spec.Env = []corev1.EnvVar{cmKeyRef("elsewhere", "level", false)}
	})
	f.dobjs = []*appv1.DeployObject{users, other}
	f.trackConfig, f.trackSecrets = true, true
	c := f.newController(ctx)

	expect := expectEnqueued(t, c)
	slim := func(obj any) any {
		o, err := transformObject(obj)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	cm := slim(configMap("cfg", map[string]string{"level": "info", "unused": "a"}))
	relabelled := configMap("cfg", map[string]string{"level": "info", "unused": "a"})
	relabelled.ResourceVersion, relabelled.Labels = "6", map[string]string{"team": "x"}
	changed := slim(configMap("cfg", map[string]string{"level": "info", "unused": "b"}))

	configMaps, secrets := c.configHandler(kindConfigMap), c.configHandler(kindSecret)
	configMaps.OnAdd(cm, false)
	expect("ConfigMap added", testKey)
	configMaps.OnUpdate(cm, cm)
	expect("ConfigMap resync")
	configMaps.OnUpdate(cm, slim(relabelled))
	expect("ConfigMap labels changed")
	configMaps.OnUpdate(cm, changed)
	expect("ConfigMap data changed", testKey)
	configMaps.OnDelete(cache.DeletedFinalStateUnknown{Key: "apps/cfg", Obj: changed})
	expect("ConfigMap tombstone", testKey)
	configMaps.OnAdd(slim(configMap("unused-by-anyone", nil)), false)
	expect("ConfigMap nobody uses")
	configMaps.OnAdd("garbage", false)
	expect("garbage")
	// A ConfigMap and a Secret of the same name are different objects.
	secrets.OnAdd(slim(configMap("cfg", nil)), false)
	expect("Secret cfg, which nobody uses")

	secret := func(v string) any {
		return slim(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "apps", UID: "u"}, Data: map[string][]byte{"password": []byte(v)}})
	}
	secrets.OnUpdate(secret("a"), secret("a"))
	expect("Secret resync")
	secrets.OnUpdate(secret("a"), secret("b"))
	expect("Secret data changed", testKey)
	secrets.OnDelete(secret("b"))
	expect("Secret deleted", testKey)
}
