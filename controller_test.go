package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	logsapi "k8s.io/component-base/logs/api/v1"
	logsjson "k8s.io/component-base/logs/json"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/caches"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/configrollout"
	"deployobject.dev/controller/pkg/generated/clientset/versioned/fake"
	"deployobject.dev/controller/pkg/leaderelection"
	"deployobject.dev/controller/pkg/metrics"
	"deployobject.dev/controller/pkg/options"
	"deployobject.dev/controller/pkg/status"
	"deployobject.dev/controller/pkg/testobjects"
)

// inSync is dobj with the status the controller writes when its children
// are live and rolled out.
func inSync(dobj *appv1.DeployObject) *appv1.DeployObject {
	dobj.Status = status.Compute(dobj, status.Outcome{Deployment: testobjects.LiveDeployment(dobj), Service: testobjects.LiveService(dobj), PDB: testobjects.LivePDB(dobj), HPA: testobjects.LiveHPA(dobj), DeploymentHash: testobjects.MustHash(dobj)}, testobjects.Earlier)
	return dobj
}

type fixture struct {
	t *testing.T

	dobjs       []*appv1.DeployObject
	deployments []*appsv1.Deployment
	services    []*corev1.Service
	pdbs        []*policyv1.PodDisruptionBudget
	hpas        []*autoscalingv2.HorizontalPodAutoscaler
	// unlisted are objects the API server has but the informers do not,
	// like children without the managed-by label.
	unlisted []runtime.Object
	// configMaps and secrets are cached and tracked when trackConfig is
	// set, as main sets it up, with Secrets only when trackSecrets is.
	configMaps                []*corev1.ConfigMap
	secrets                   []*corev1.Secret
	trackConfig, trackSecrets bool
	maxConfigRollouts         int
	// podSecurity is --pod-security-profile; none when empty.
	podSecurity children.PodSecurityProfile

	client     *fake.Clientset
	kubeClient *k8sfake.Clientset
	recorder   *events.FakeRecorder
	// dobjIndexer and deployIndexer are the DeployObject and Deployment
	// caches of the last newController.
	dobjIndexer, deployIndexer cache.Indexer
}

func newFixture(t *testing.T) *fixture {
	return &fixture{t: t}
}

func (f *fixture) newController(ctx context.Context) *Controller {
	f.t.Helper()
	var objs, kubeObjs []runtime.Object
	for _, d := range f.dobjs {
		objs = append(objs, d)
	}
	kubeObjs = append(kubeObjs, f.children()...)
	kubeObjs = append(kubeObjs, f.unlisted...)
	// The fake tracker cannot server-side apply custom resources
	// (kubernetes/kubernetes#126850), so status applies are accepted as they
	// come and answered with the applied status; the tests assert what was
	// sent.
	f.client = fake.NewSimpleClientset(objs...)
	f.client.PrependReactor("patch", "deployobjects", func(a core.Action) (bool, runtime.Object, error) {
		p, ok := a.(core.PatchAction)
		if !ok || p.GetPatchType() != types.ApplyPatchType || a.GetSubresource() != "status" {
			return false, nil, nil
		}
		applied := &appv1.DeployObject{}
		if err := yamlOrJSON(p.GetPatch(), applied); err != nil {
			return true, nil, err
		}
		// A write makes a new version.
		applied.ResourceVersion += "-written"
		return true, applied, nil
	})
	f.kubeClient = k8sfake.NewClientset(kubeObjs...)
	f.recorder = events.NewFakeRecorder(10)

	inf, err := caches.NewInformers(f.kubeClient, f.client, caches.Scope{}, 0, caches.NamedInformers{})
	if err != nil {
		f.t.Fatal(err)
	}
	podSecurity := f.podSecurity
	if podSecurity == "" {
		podSecurity = children.ProfileNone
	}
	var secrets coreinformers.SecretInformer
	if f.trackSecrets {
		secrets = inf.ChildFactory.Core().V1().Secrets()
		for _, s := range f.secrets {
			mustAdd(f.t, secrets.Informer().GetIndexer(), s.DeepCopy())
		}
	}
	// As NewController's defaults were before main passed the flags: no
	// batching, configuration tracked only when the test asks, without a
	// delay or a grace for missing configuration.
	// The cluster serves neither the Gateway API nor prometheus-operator's
	// monitors: their children are pkg/reconcile's to test.
	c, err := NewController(ctx, f.kubeClient, f.client, inf,
		nil, nil,
		f.recorder, nil, Config{
			ShutdownGrace:     10 * time.Second,
			CacheSyncTimeout:  2 * time.Minute,
			PodSecurity:       podSecurity,
			TrackConfig:       f.trackConfig,
			Secrets:           secrets,
			MaxConfigRollouts: f.maxConfigRollouts,
		})
	if err != nil {
		f.t.Fatalf("NewController: %v", err)
	}
	c.now = func() metav1.Time { return testobjects.FixedNow }
	// The caches hold what the informers' transform keeps, as in
	// production; the fake API server holds the whole objects.
	f.dobjIndexer = inf.DeployObjects.Informer().GetIndexer()
	for _, d := range f.dobjs {
		mustAdd(f.t, f.dobjIndexer, d.DeepCopy())
	}
	f.deployIndexer = caches.InformerOf[appsv1.Deployment](inf.Children).GetIndexer()
	for _, obj := range f.children() {
		child, ok := inf.Children.InformerFor(obj)
		if !ok {
			f.t.Fatalf("no cache of %T", obj)
		}
		mustAdd(f.t, child.GetIndexer(), obj.DeepCopyObject())
	}
	return c
}

// children are the fixture's typed children, in the API server and in the
// caches of caches.ChildKinds.
func (f *fixture) children() []runtime.Object {
	return slices.Concat(objects(f.deployments), objects(f.services), objects(f.configMaps), objects(f.pdbs), objects(f.hpas))
}

func objects[T runtime.Object](items []T) []runtime.Object {
	objs := make([]runtime.Object, 0, len(items))
	for _, item := range items {
		objs = append(objs, item)
	}
	return objs
}

// mustAdd adds or replaces obj in indexer, transformed as the informer would.
func mustAdd(t *testing.T, indexer cache.Indexer, obj any) {
	t.Helper()
	obj, err := caches.ChildKinds().Transform(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := indexer.Update(obj); err != nil {
		t.Fatalf("seeding indexer: %v", err)
	}
}

// sync runs one sync of testobjects.TestKey and returns the write actions
// the clients saw (reads by the informers are not part of what is tested)
// and its error.
func (f *fixture) sync() ([]core.Action, error) {
	f.t.Helper()
	_, ctx := ktesting.NewTestContext(f.t)
	c := f.newController(ctx)
	err := c.syncHandler(ctx, testobjects.TestKey)
	return writes(f.kubeClient.Actions(), f.client.Actions()), err
}

func writes(lists ...[]core.Action) []core.Action {
	var out []core.Action
	for _, l := range lists {
		for _, a := range l {
			switch a.GetVerb() {
			case "list", "watch":
			default:
				out = append(out, a)
			}
		}
	}
	return out
}

// describe renders actions as "verb resource[/subresource]" for messages.
func describe(actions []core.Action) string {
	var s []string
	for _, a := range actions {
		r := a.GetResource().Resource
		if a.GetSubresource() != "" {
			r += "/" + a.GetSubresource()
		}
		s = append(s, a.GetVerb()+" "+r)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

func expectActions(t *testing.T, got []core.Action, want ...string) {
	t.Helper()
	if g, w := describe(got), "["+strings.Join(want, ", ")+"]"; g != w {
		t.Fatalf("actions:\n got %s\nwant %s", g, w)
	}
}

func readyOf(t *testing.T, a core.Action) metav1.Condition {
	t.Helper()
	status := statusOf(t, a)
	c := meta.FindStatusCondition(status.Conditions, appv1.ConditionReady)
	if c == nil {
		t.Fatalf("status patch has no Ready condition: %+v", status)
	}
	if status.ObservedGeneration != 2 {
		t.Errorf("observedGeneration = %d, want 2", status.ObservedGeneration)
	}
	return *c
}

// statusOf is the status a's server-side apply of the status writes.
func statusOf(t *testing.T, a core.Action) appv1.DeployObjectStatus {
	t.Helper()
	patch, ok := a.(core.PatchAction)
	if !ok || patch.GetPatchType() != types.ApplyPatchType || a.GetSubresource() != "status" {
		t.Fatalf("want a server-side apply of the status, got %#v", a)
	}
	var status struct {
		Status appv1.DeployObjectStatus `json:"status"`
	}
	if err := yamlOrJSON(patch.GetPatch(), &status); err != nil {
		t.Fatalf("decoding status patch: %v", err)
	}
	return status.Status
}

func recorded(r *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestSyncCreatesChildren(t *testing.T) {
	f := newFixture(t)
	f.dobjs = []*appv1.DeployObject{testobjects.NewDeployObject()}
	actions, err := f.sync()
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	expectActions(t, actions, "create deployments", "create services", "patch deployobjects/status")

	dobj := f.dobjs[0]
	gotD := actions[0].(core.CreateAction).GetObject().(*appsv1.Deployment)
	if want, _ := testobjects.MustStamp(dobj); !testobjects.EqualObjects(gotD, want) {
		t.Errorf("created Deployment differs from desired:\n%s", diff.Diff(want, gotD))
	}
	gotS := actions[1].(core.CreateAction).GetObject().(*corev1.Service)
	if !testobjects.EqualObjects(gotS, children.DesiredService(dobj)) {
		t.Errorf("created Service differs from desired:\n%s", diff.Diff(children.DesiredService(dobj), gotS))
	}
	ready := readyOf(t, actions[2])
	if ready.Status != metav1.ConditionFalse || ready.Reason != appv1.ReasonProgressing {
		t.Errorf("Ready = %s/%s, want False/Progressing", ready.Status, ready.Reason)
	}
	if ev := recorded(f.recorder); len(ev) != 0 {
		t.Errorf("events = %q, want none: creation is told by the Ready condition", ev)
	}
}

func TestSyncNoopWhenInSync(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*appv1.DeployObject)
	}{
		{"with ports", func(*appv1.DeployObject) {}},
		{"without ports", func(d *appv1.DeployObject) { d.Spec.Ports = nil }},
		{"NodePort", func(d *appv1.DeployObject) { d.Spec.ServiceType = appv1.ServiceTypeNodePort }},
		{"zero replicas", func(d *appv1.DeployObject) { d.Spec.Replicas = ptr.To[int32](0) }},
		{"budget and autoscaler", func(d *appv1.DeployObject) {
			testobjects.WithBudget(d)
			testobjects.WithAutoscaling(d)
		}},
		{"autoscaler with a behavior the server defaulted", func(d *appv1.DeployObject) {
			testobjects.WithAutoscaling(d)
			d.Spec.Autoscaling.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60)}}
		}},
		{"budget as a percentage", func(d *appv1.DeployObject) {
			d.Spec.DisruptionBudget = &appv1.DisruptionBudget{MaxUnavailable: ptr.To(intstr.FromString("25%"))}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			dobj := inSync(testobjects.NewDeployObject(tc.mutate))
			f.dobjs = []*appv1.DeployObject{dobj}
			if p := testobjects.LivePDB(dobj); p != nil {
				f.pdbs = []*policyv1.PodDisruptionBudget{p}
			}
			if h := testobjects.LiveHPA(dobj); h != nil {
				f.hpas = []*autoscalingv2.HorizontalPodAutoscaler{h}
			}
			f.deployments = []*appsv1.Deployment{testobjects.LiveDeployment(dobj)}
			if s := testobjects.LiveService(dobj); s != nil {
				if dobj.Spec.ServiceType == appv1.ServiceTypeNodePort {
					s.Spec.Ports[0].NodePort = 30080
				}
				f.services = []*corev1.Service{s}
			}
			actions, err := f.sync()
			if err != nil {
				t.Fatalf("sync: %v", err)
			}
			expectActions(t, actions)
			if ev := recorded(f.recorder); len(ev) != 0 {
				t.Errorf("events = %q, want none", ev)
			}
		})
	}
}

func TestSyncSpecRolloutRecordsNoEvent(t *testing.T) {
	f := newFixture(t)
	dobj := inSync(testobjects.NewDeployObject())
	live := testobjects.LiveDeployment(dobj)
	dobj.Generation = 3
	dobj.Spec.Image = "nginx:1.28"
	f.dobjs = []*appv1.DeployObject{dobj}
	f.deployments = []*appsv1.Deployment{live}
	f.services = []*corev1.Service{testobjects.LiveService(dobj)}
	actions, err := f.sync()
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	expectActions(t, actions, "get deployments", "patch deployments", "patch deployobjects/status")
	if ev := recorded(f.recorder); len(ev) != 0 {
		t.Errorf("events = %q, want none: a spec rollout is told by the Ready condition", ev)
	}
}

// TestSyncDriftCorrectedIsAnEvent: children someone else changed since
// the last sync of this generation are set back, and that is told by one
// Normal DriftCorrected event whose note names every write.
func TestSyncDriftCorrectedIsAnEvent(t *testing.T) {
	f := newFixture(t)
	dobj := testobjects.NewDeployObject(testobjects.WithBudget)
	f.withLiveChildren(dobj)
	f.deployments[0].Spec.Template.Spec.Containers[0].Image = "evil:1"
	f.pdbs[0].Spec.MinAvailable = ptr.To(intstr.FromInt32(0))
	actions, err := f.sync()
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	expectActions(t, actions, "get deployments", "patch deployments", "get poddisruptionbudgets", "update poddisruptionbudgets")
	if ev, want := recorded(f.recorder), "Normal DriftCorrected updated Deployment web; updated PodDisruptionBudget web"; len(ev) != 1 || ev[0] != want {
		t.Errorf("events = %q, want %q", ev, want)
	}
}

func TestSyncConflictWithUnownedObject(t *testing.T) {
	for _, tc := range []struct {
		name string
		// asks are what the DeployObject asks for beyond the defaults.
		asks []func(*appv1.DeployObject)
		set  func(f *fixture, dobj *appv1.DeployObject)
		want []string
		// condType is a condition that must report the conflict too.
		condType string
	}{
		{
			// Without the managed-by label the object never reaches the cache:
			// the create finds it, the live read shows whose it is.
			name: "unlabelled Deployment not in the cache",
			set: func(f *fixture, dobj *appv1.DeployObject) {
				f.unlisted = []runtime.Object{&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: dobj.Name, Namespace: dobj.Namespace}}}
			},
			want: []string{"create deployments", "get deployments", "create services", "patch deployobjects/status"},
		},
		{
			name: "Deployment controlled by another owner",
			set: func(f *fixture, dobj *appv1.DeployObject) {
				d := testobjects.LiveDeployment(dobj)
				d.OwnerReferences[0].Name, d.OwnerReferences[0].UID = "other", "uid-of-other"
				f.deployments = []*appsv1.Deployment{d}
			},
			want: []string{"create services", "patch deployobjects/status"},
		},
		{
			name: "labelled Service controlled by another kind",
			set: func(f *fixture, dobj *appv1.DeployObject) {
				f.deployments = []*appsv1.Deployment{testobjects.LiveDeployment(dobj)}
				s := testobjects.LiveService(dobj)
				s.OwnerReferences[0].Kind, s.OwnerReferences[0].UID = "Application", "uid-app"
				f.services = []*corev1.Service{s}
			},
			want: []string{"patch deployobjects/status"},
		},
		{
			name: "unlabelled PodDisruptionBudget not in the cache",
			asks: []func(*appv1.DeployObject){testobjects.WithBudget, testobjects.WithAutoscaling},
			set: func(f *fixture, dobj *appv1.DeployObject) {
				f.deployments = []*appsv1.Deployment{testobjects.LiveDeployment(dobj)}
				f.services = []*corev1.Service{testobjects.LiveService(dobj)}
				f.unlisted = []runtime.Object{&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: dobj.Name, Namespace: dobj.Namespace}}}
				f.hpas = []*autoscalingv2.HorizontalPodAutoscaler{testobjects.LiveHPA(dobj)}
			},
			want:     []string{"create poddisruptionbudgets", "get poddisruptionbudgets", "patch deployobjects/status"},
			condType: appv1.ConditionDisruptionBudget,
		},
		{
			name: "HorizontalPodAutoscaler controlled by another owner",
			asks: []func(*appv1.DeployObject){testobjects.WithBudget, testobjects.WithAutoscaling},
			set: func(f *fixture, dobj *appv1.DeployObject) {
				f.deployments = []*appsv1.Deployment{testobjects.LiveDeployment(dobj)}
				f.services = []*corev1.Service{testobjects.LiveService(dobj)}
				f.pdbs = []*policyv1.PodDisruptionBudget{testobjects.LivePDB(dobj)}
				h := testobjects.LiveHPA(dobj)
				h.OwnerReferences[0].Name, h.OwnerReferences[0].UID = "other", "uid-of-other"
				h.Spec.MaxReplicas = 100
				f.hpas = []*autoscalingv2.HorizontalPodAutoscaler{h}
			},
			want:     []string{"patch deployobjects/status"},
			condType: appv1.ConditionAutoscaling,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			dobj := testobjects.NewDeployObject(tc.asks...)
			f.dobjs = []*appv1.DeployObject{dobj}
			tc.set(f, dobj)
			actions, err := f.sync()
			var blocked *children.BlockedError
			if !errors.As(err, &blocked) || blocked.Problems[0].Reason != appv1.ReasonResourceConflict {
				t.Fatalf("sync error = %v, want a resource conflict so the key is retried with backoff", err)
			}
			expectActions(t, actions, tc.want...)
			if ready := readyOf(t, actions[len(actions)-1]); ready.Status != metav1.ConditionFalse || ready.Reason != appv1.ReasonResourceConflict {
				t.Errorf("Ready = %s/%s, want False/ResourceConflict", ready.Status, ready.Reason)
			}
			if ev := recorded(f.recorder); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning ResourceConflict") {
				t.Errorf("events = %q, want one Warning ResourceConflict", ev)
			}
			if tc.condType == "" {
				return
			}
			if c := conditionOf(t, actions[len(actions)-1], tc.condType); c == nil || c.Status != metav1.ConditionFalse || c.Reason != appv1.ReasonResourceConflict || !strings.Contains(c.Message, "not controlled by this DeployObject") {
				t.Errorf("condition %s = %+v, want False/ResourceConflict saying why", tc.condType, c)
			}
		})
	}
}

// TestSyncWaitsForThePredecessorsChildren: after `kubectl delete dobj web
// --wait=false` and a new apply of web, the children of the deleted object
// hold the names until the garbage collector removes them: Progressing
// (Reconciling), retried, without a Warning; not a ResourceConflict.
func TestSyncWaitsForThePredecessorsChildren(t *testing.T) {
	f := newFixture(t)
	old := testobjects.NewDeployObject()
	old.UID = "uid-of-the-deleted-one"
	f.deployments = []*appsv1.Deployment{testobjects.LiveDeployment(old)}
	f.services = []*corev1.Service{testobjects.LiveService(old)}
	f.dobjs = []*appv1.DeployObject{testobjects.NewDeployObject()}
	actions, err := f.sync()
	if !children.IsExpectedRetry(err) {
		t.Fatalf("sync: %v, want a retry: the garbage collector will remove them", err)
	}
	expectActions(t, actions, "patch deployobjects/status")
	ready := readyOf(t, actions[0])
	if ready.Reason != appv1.ReasonProgressing || !strings.Contains(ready.Message, "Deployment web still belongs to the deleted DeployObject") {
		t.Errorf("Ready = %s %q, want Progressing, waiting for the garbage collector", ready.Reason, ready.Message)
	}
	if c := conditionOf(t, actions[0], appv1.ConditionStalled); c != nil {
		t.Errorf("Stalled = %+v, want none: nobody has to act", c)
	}
	if ev := recorded(f.recorder); len(ev) != 0 {
		t.Errorf("events = %q, want none", ev)
	}
}

func TestSyncConflictReportedOnce(t *testing.T) {
	f := newFixture(t)
	dobj := testobjects.NewDeployObject()
	d := testobjects.LiveDeployment(dobj)
	d.OwnerReferences[0].Name, d.OwnerReferences[0].UID = "other", "uid-of-other"
	// The status as the last sync left it: the Service made, the
	// Deployment in conflict.
	dobj.Status = status.Compute(dobj, status.Outcome{Service: testobjects.LiveService(dobj), Problems: []children.Problem{*children.ProblemOf(&children.ResourceConflictError{Kind: "Deployment", Name: "web"})}}, testobjects.Earlier)
	f.dobjs = []*appv1.DeployObject{dobj}
	f.deployments = []*appsv1.Deployment{d}
	f.services = []*corev1.Service{testobjects.LiveService(dobj)}
	actions, err := f.sync()
	if err == nil {
		t.Fatal("want the conflict retried")
	}
	expectActions(t, actions)
	if ev := recorded(f.recorder); len(ev) != 0 {
		t.Errorf("events = %q, want none for a conflict already reported", ev)
	}
}

func TestSyncStatusThroughRollout(t *testing.T) {
	steps := []struct {
		name   string
		status appsv1.DeploymentStatus
		gen    int64
		want   metav1.ConditionStatus
		reason string
		counts [4]int32 // replicas, ready, available, updated
		// conditions are the types of the conditions applied.
		conditions []string
	}{
		{"not observed", appsv1.DeploymentStatus{ObservedGeneration: 1}, 2, metav1.ConditionFalse, appv1.ReasonProgressing, [4]int32{}, []string{appv1.ConditionReady, appv1.ConditionReconciling}},
		{"surging", appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 1, ReadyReplicas: 2, AvailableReplicas: 2}, 2, metav1.ConditionFalse, appv1.ReasonProgressing, [4]int32{3, 2, 2, 1}, []string{appv1.ConditionReady, appv1.ConditionReconciling}},
		{"old pods terminating", appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}, 2, metav1.ConditionFalse, appv1.ReasonProgressing, [4]int32{3, 2, 2, 2}, []string{appv1.ConditionReady, appv1.ConditionReconciling}},
		{"not yet available", appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 1, AvailableReplicas: 1}, 2, metav1.ConditionFalse, appv1.ReasonProgressing, [4]int32{2, 1, 1, 2}, []string{appv1.ConditionReady, appv1.ConditionReconciling}},
		{"stuck", appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 1, Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}}, 2, metav1.ConditionFalse, appv1.ReasonProgressDeadlineExceeded, [4]int32{2, 0, 0, 1}, []string{appv1.ConditionReady, appv1.ConditionStalled}},
		{"rolled out", appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}, 2, metav1.ConditionTrue, appv1.ReasonAvailable, [4]int32{2, 2, 2, 2}, []string{appv1.ConditionReady}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			f := newFixture(t)
			dobj := testobjects.NewDeployObject()
			d := testobjects.LiveDeployment(dobj)
			d.Generation = s.gen
			d.Status = s.status
			f.dobjs = []*appv1.DeployObject{dobj}
			f.deployments = []*appsv1.Deployment{d}
			f.services = []*corev1.Service{testobjects.LiveService(dobj)}
			actions, err := f.sync()
			if err != nil {
				t.Fatalf("sync: %v", err)
			}
			expectActions(t, actions, "patch deployobjects/status")
			ready := readyOf(t, actions[0])
			if ready.Status != s.want || ready.Reason != s.reason {
				t.Errorf("Ready = %s/%s (%s), want %s/%s", ready.Status, ready.Reason, ready.Message, s.want, s.reason)
			}
			var st struct {
				Status appv1.DeployObjectStatus `json:"status"`
			}
			if err := yamlOrJSON(actions[0].(core.PatchAction).GetPatch(), &st); err != nil {
				t.Fatal(err)
			}
			got := [4]int32{st.Status.Replicas, st.Status.ReadyReplicas, st.Status.AvailableReplicas, st.Status.UpdatedReplicas}
			if got != s.counts || st.Status.Selector != children.NameLabel+"=web" {
				t.Errorf("counts = %v selector %q, want %v %q", got, st.Status.Selector, s.counts, children.NameLabel+"=web")
			}
			var types []string
			for _, c := range st.Status.Conditions {
				types = append(types, c.Type)
			}
			if !slices.Equal(types, s.conditions) {
				t.Errorf("applied conditions %v, want %v", types, s.conditions)
			}
		})
	}
}

func TestSyncInvalidSpecIsNotRetried(t *testing.T) {
	f := newFixture(t)
	f.dobjs = []*appv1.DeployObject{testobjects.NewDeployObject()}
	_, ctx := ktesting.NewTestContext(t)
	c := f.newController(ctx)
	f.kubeClient.PrependReactor("create", "deployments", func(core.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web", nil)
	})
	c.queue.Add(testobjects.TestKey)
	c.processNextWorkItem(ctx)
	if n := c.queue.NumRequeues(testobjects.TestKey); n != 0 {
		t.Errorf("requeues = %d, want 0: rejected input waits for a new spec", n)
	}
	// The Service does not depend on the Deployment: it is made all the same.
	acts := writes(f.kubeClient.Actions(), f.client.Actions())
	expectActions(t, acts, "create deployments", "create services", "patch deployobjects/status")
	if ready := readyOf(t, acts[2]); ready.Reason != appv1.ReasonInvalidSpec {
		t.Errorf("Ready reason = %s, want InvalidSpec", ready.Reason)
	}
	if ev := recorded(f.recorder); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning InvalidSpec") {
		t.Errorf("events = %q, want one Warning InvalidSpec", ev)
	}
}

// TestEventsGoThroughEventsV1: the recorder main starts sends a Warning
// through events.k8s.io/v1, about the DeployObject, with the controller as
// reporting controller and this host as its instance, and a note cut to the
// 1024 bytes that API accepts: a longer one would be refused and lost.
func TestEventsGoThroughEventsV1(t *testing.T) {
	f := newFixture(t)
	dobj := testobjects.NewDeployObject()
	f.dobjs = []*appv1.DeployObject{dobj}
	_, ctx := ktesting.NewTestContext(t)
	c := f.newController(ctx)
	recorder, stop, err := startEvents(ctx, f.kubeClient)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	c.recorder = recorder
	f.kubeClient.PrependReactor("create", "deployments", func(core.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web",
			field.ErrorList{field.Invalid(field.NewPath("spec", "template", "metadata", "annotations"), strings.Repeat("x", 2000), "too long")})
	})
	if err := c.syncHandler(ctx, testobjects.TestKey); err != nil {
		t.Fatalf("sync: %v", err)
	}

	var sent []eventsv1.Event
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := f.kubeClient.EventsV1().Events(dobj.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		sent = list.Items
		return len(sent) > 0, nil
	}); err != nil {
		t.Fatalf("no event reached events.k8s.io/v1: %v", err)
	}
	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	if len(sent) != 1 {
		t.Fatalf("%d events, want 1", len(sent))
	}
	e := sent[0]
	wantRegarding := corev1.ObjectReference{Kind: "DeployObject", APIVersion: "app.deployobject.dev/v1", Namespace: dobj.Namespace, Name: dobj.Name, UID: dobj.UID, ResourceVersion: dobj.ResourceVersion}
	wantRelated := corev1.ObjectReference{Kind: "Deployment", Namespace: dobj.Namespace, Name: dobj.Name}
	if e.Regarding != wantRegarding || e.Related == nil || *e.Related != wantRelated {
		t.Errorf("regarding %+v, related %+v; want %+v and the refused Deployment %+v", e.Regarding, e.Related, wantRegarding, wantRelated)
	}
	if e.Type != corev1.EventTypeWarning || e.Reason != appv1.ReasonInvalidSpec || e.Action != "Reconcile" ||
		e.ReportingController != "deployobject-controller" || e.ReportingInstance != "deployobject-controller-"+hostname ||
		e.EventTime.IsZero() || e.Series != nil {
		t.Errorf("event %s/%s action %q by %q/%q at %v, series %v; want Warning/InvalidSpec action Reconcile by deployobject-controller/deployobject-controller-%s, timed, no series",
			e.Type, e.Reason, e.Action, e.ReportingController, e.ReportingInstance, e.EventTime, e.Series, hostname)
	}
	if len(e.Note) > 1024 || !strings.HasPrefix(e.Note, "the API server rejected a child built from the spec: ") || !strings.HasSuffix(e.Note, " [truncated]") {
		t.Errorf("note of %d bytes %q, want the problem cut to at most 1024 bytes", len(e.Note), e.Note)
	}
}

func TestSyncTransientErrorRequeues(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"server error", apierrors.NewInternalError(errors.New("etcd timeout"))},
		{"stale cache", apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web", errors.New("the object has been modified"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			dobj := inSync(testobjects.NewDeployObject())
			live := testobjects.LiveDeployment(dobj)
			live.Spec.Template.Spec.Containers[0].Image = "drifted"
			f.dobjs = []*appv1.DeployObject{dobj}
			f.deployments = []*appsv1.Deployment{live}
			f.services = []*corev1.Service{testobjects.LiveService(dobj)}
			_, ctx := ktesting.NewTestContext(t)
			c := f.newController(ctx)
			f.kubeClient.PrependReactor("patch", "deployments", func(core.Action) (bool, runtime.Object, error) {
				return true, nil, tc.err
			})
			c.queue.Add(testobjects.TestKey)
			c.processNextWorkItem(ctx)
			if n := c.queue.NumRequeues(testobjects.TestKey); n != 1 {
				t.Errorf("requeues = %d, want 1", n)
			}
			// A transient failure says nothing about the DeployObject: its
			// status is not touched and no event is recorded.
			expectActions(t, writes(f.kubeClient.Actions(), f.client.Actions()), "get deployments", "patch deployments")
			if ev := recorded(f.recorder); len(ev) != 0 {
				t.Errorf("events = %q, want none", ev)
			}
		})
	}
}

func TestSyncNamespaceTerminatingIsNotRetried(t *testing.T) {
	f := newFixture(t)
	f.dobjs = []*appv1.DeployObject{testobjects.NewDeployObject()}
	_, ctx := ktesting.NewTestContext(t)
	c := f.newController(ctx)
	f.kubeClient.PrependReactor("create", "deployments", func(core.Action) (bool, runtime.Object, error) {
		err := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web", errors.New("namespace apps is being terminated"))
		err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}
		return true, nil, err
	})
	c.queue.Add(testobjects.TestKey)
	c.processNextWorkItem(ctx)
	if n := c.queue.NumRequeues(testobjects.TestKey); n != 0 {
		t.Errorf("requeues = %d, want 0", n)
	}
}

func TestSyncDeployObjectBeingDeleted(t *testing.T) {
	f := newFixture(t)
	dobj := testobjects.NewDeployObject()
	dobj.DeletionTimestamp = &testobjects.FixedNow
	dobj.Finalizers = []string{"example.com/hold"}
	f.dobjs = []*appv1.DeployObject{dobj}
	actions, err := f.sync()
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	expectActions(t, actions)
}

func TestSyncDeletedDeployObject(t *testing.T) {
	f := newFixture(t)
	actions, err := f.sync()
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	expectActions(t, actions)
}

// TestSyncStatusWriteNotYetInCache: a sync that runs before the watch has
// delivered the controller's own status write must not write it again, and
// once the cache moves on, the cache is the reference again.
func TestSyncStatusWriteNotYetInCache(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	dobj := testobjects.NewDeployObject()
	f.dobjs = []*appv1.DeployObject{dobj}
	f.deployments = []*appsv1.Deployment{testobjects.LiveDeployment(dobj)}
	f.services = []*corev1.Service{testobjects.LiveService(dobj)}
	c := f.newController(ctx)
	statusWrites := func() int {
		t.Helper()
		return len(writes(f.client.Actions()))
	}

	if err := c.syncHandler(ctx, testobjects.TestKey); err != nil {
		t.Fatalf("first sync: %v", err)
	}
	if n := statusWrites(); n != 1 {
		t.Fatalf("first sync made %d status writes, want 1", n)
	}
	// The cache still holds resourceVersion 10 without the status.
	if err := c.syncHandler(ctx, testobjects.TestKey); err != nil {
		t.Fatalf("second sync: %v", err)
	}
	if n := statusWrites(); n != 1 {
		t.Errorf("a sync before the watch delivered the write wrote the status again: %d writes", n)
	}

	// The watch delivers the write: the entry goes, and the cache alone
	// says the status is current.
	applied := readyOf(t, writes(f.client.Actions())[0])
	seen := dobj.DeepCopy()
	seen.ResourceVersion = "11"
	seen.Status = status.Compute(dobj, status.Outcome{Deployment: testobjects.LiveDeployment(dobj), Service: testobjects.LiveService(dobj)}, applied.LastTransitionTime)
	c.updateDeployObject(dobj, seen)
	if n := c.written.Len(); n != 0 {
		t.Errorf("%d written statuses kept after the cache caught up, want 0", n)
	}

	// Someone else then resets the status: the cache is the reference, so
	// the controller writes again.
	reset := seen.DeepCopy()
	reset.ResourceVersion = "12"
	reset.Status = appv1.DeployObjectStatus{}
	c.updateDeployObject(seen, reset)
	for _, obj := range []*appv1.DeployObject{seen, reset} {
		if err := f.dobjIndexer.Update(obj); err != nil {
			t.Fatal(err)
		}
		if err := c.syncHandler(ctx, testobjects.TestKey); err != nil {
			t.Fatalf("sync over resourceVersion %s: %v", obj.ResourceVersion, err)
		}
	}
	if n := statusWrites(); n != 2 {
		t.Errorf("%d status writes after the cache held a reset status, want 2", n)
	}

	// A deleted DeployObject leaves nothing behind.
	if err := f.dobjIndexer.Delete(reset); err != nil {
		t.Fatal(err)
	}
	if err := c.syncHandler(ctx, testobjects.TestKey); err != nil {
		t.Fatalf("sync after deletion: %v", err)
	}
	if n := c.written.Len(); n != 0 {
		t.Errorf("%d written statuses kept after the DeployObject was deleted, want 0", n)
	}
}

// expectEnqueued returns a check that c's queue holds exactly want (the
// keys added without delay), emptying it.
func expectEnqueued(t *testing.T, c *Controller) func(name string, want ...cache.ObjectName) {
	return func(name string, want ...cache.ObjectName) {
		t.Helper()
		var got []cache.ObjectName
		for c.queue.Len() > 0 {
			k, _ := c.queue.Get()
			got = append(got, k)
			c.queue.Done(k)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: enqueued %v, want %v", name, got, want)
		}
	}
}

func TestEventHandlers(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	c := f.newController(ctx)
	dobj := testobjects.NewDeployObject()
	// Child events carry the objects as the cache holds them.
	cached := func(d *appsv1.Deployment) any {
		t.Helper()
		obj, err := caches.ChildKinds().Transform(d)
		if err != nil {
			t.Fatal(err)
		}
		return obj
	}
	child := cached(testobjects.LiveDeployment(dobj))
	withChange := func(change func(*appsv1.Deployment)) any {
		d := testobjects.LiveDeployment(dobj)
		change(d)
		return cached(d)
	}

	expect := expectEnqueued(t, c)

	c.enqueueOwner(child)
	expect("child add", testobjects.TestKey)

	c.enqueueOwner(cache.DeletedFinalStateUnknown{Key: "apps/web", Obj: child})
	expect("child tombstone", testobjects.TestKey)

	c.enqueueOwner(cache.DeletedFinalStateUnknown{Key: "apps/web", Obj: "not an object"})
	expect("tombstone of garbage")

	c.updateChild(child, child)
	expect("child resync (same resourceVersion)")

	c.updateChild(child, withChange(func(d *appsv1.Deployment) { d.ResourceVersion = "21" }))
	expect("child update", testobjects.TestKey)

	c.enqueueOwner(withChange(func(d *appsv1.Deployment) { d.OwnerReferences = nil }))
	expect("orphan with the children's labels: the DeployObject that would adopt it", testobjects.TestKey)

	c.enqueueOwner(withChange(func(d *appsv1.Deployment) { d.OwnerReferences = nil; delete(d.Labels, children.NameLabel) }))
	expect("orphan without the name label")

	c.enqueueOwner(withChange(func(d *appsv1.Deployment) { d.OwnerReferences[0].Kind = "ReplicaSet" }))
	expect("child of another kind")

	c.enqueueOwner(testobjects.LiveDeployment(dobj))
	expect("a Deployment the transform did not pack")

	// The Gateway API routes, cached unpacked.
	for _, route := range []any{
		testobjects.LiveHTTPRoute(testobjects.NewDeployObject(testobjects.WithHTTPRoute)),
		testobjects.LiveGRPCRoute(testobjects.NewDeployObject(testobjects.WithGRPCRoute)),
	} {
		route, err := caches.ChildKinds().Transform(route)
		if err != nil {
			t.Fatal(err)
		}
		c.enqueueOwner(route)
		expect(fmt.Sprintf("%T add", route), testobjects.TestKey)
	}

	statusOnly := dobj.DeepCopy()
	statusOnly.ResourceVersion = "11"
	statusOnly.Status.ReadyReplicas = 2
	c.updateDeployObject(dobj, statusOnly)
	expect("status-only update of the DeployObject")

	specChange := dobj.DeepCopy()
	specChange.ResourceVersion = "11"
	specChange.Generation = 3
	c.updateDeployObject(dobj, specChange)
	expect("spec update of the DeployObject", testobjects.TestKey)

	c.updateDeployObject(dobj, dobj)
	expect("periodic resync of the DeployObject", testobjects.TestKey)

	promoted := dobj.DeepCopy()
	promoted.ResourceVersion = "11"
	promoted.Annotations = map[string]string{appv1.AnnotationCanaryPromote: "a-1/3"}
	c.updateDeployObject(dobj, promoted)
	expect("a canary operation on the DeployObject", testobjects.TestKey)

	c.enqueue(cache.DeletedFinalStateUnknown{Key: "apps/web", Obj: dobj})
	expect("DeployObject tombstone", testobjects.TestKey)
}

func yamlOrJSON(data []byte, into any) error {
	return yaml.Unmarshal(data, into)
}

func TestSyncBlockedChildrenAreReported(t *testing.T) {
	gr := schema.GroupResource{Resource: "services"}
	quota := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web",
		errors.New("exceeded quota: q, requested: count/deployments.apps=1, used: count/deployments.apps=0, limited: count/deployments.apps=0"))
	webhook := apierrors.NewBadRequest(`admission webhook "policy.example.com" denied the request: LoadBalancer Services are not allowed`)
	vap := apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, "web", nil)
	vap.ErrStatus.Message = `services "web" is forbidden: ValidatingAdmissionPolicy 'no-lb' with binding 'no-lb' denied request: no LoadBalancer`
	rbac := apierrors.NewForbidden(gr, "web", errors.New(`User "system:serviceaccount:x:y" cannot create resource "services"`))
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web", nil)
	serviceQuota := apierrors.NewForbidden(gr, "web", errors.New("exceeded quota: q, requested: services.loadbalancers=1"))
	for _, tc := range []struct {
		name                  string
		deployErr, serviceErr error
		reason                string
		retried               bool
		// related are the kinds of the events' related objects, in order:
		// events.k8s.io/v1 merges events that differ in nothing else.
		related []string
	}{
		{"quota refuses the Deployment, the Service is made", quota, nil, appv1.ReasonQuotaExceeded, true, []string{"Deployment"}},
		{"quota refuses both", quota, serviceQuota, appv1.ReasonQuotaExceeded, true, []string{"Deployment", "Service"}},
		{"webhook denial without a code", nil, webhook, appv1.ReasonForbidden, true, []string{""}},
		{"ValidatingAdmissionPolicy denial", nil, vap, appv1.ReasonForbidden, true, []string{"Service"}},
		{"RBAC", nil, rbac, appv1.ReasonForbidden, true, []string{"Service"}},
		{"invalid Deployment, refused Service", invalid, rbac, appv1.ReasonInvalidSpec, true, []string{"Deployment", "Service"}},
		{"invalid Deployment only", invalid, nil, appv1.ReasonInvalidSpec, false, []string{"Deployment"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.dobjs = []*appv1.DeployObject{testobjects.NewDeployObject()}
			_, ctx := ktesting.NewTestContext(t)
			c := f.newController(ctx)
			f.recorder.Verbose = true
			for resource, err := range map[string]error{"deployments": tc.deployErr, "services": tc.serviceErr} {
				if err != nil {
					f.kubeClient.PrependReactor("create", resource, func(core.Action) (bool, runtime.Object, error) { return true, nil, err })
				}
			}
			c.queue.Add(testobjects.TestKey)
			c.processNextWorkItem(ctx)
			acts := writes(f.kubeClient.Actions(), f.client.Actions())
			// Every child is tried, whatever happened to the other.
			expectActions(t, acts, "create deployments", "create services", "patch deployobjects/status")
			if ready := readyOf(t, acts[2]); ready.Status != metav1.ConditionFalse || ready.Reason != tc.reason {
				t.Errorf("Ready = %s/%s %q, want False/%s", ready.Status, ready.Reason, ready.Message, tc.reason)
			}
			if n := c.queue.NumRequeues(testobjects.TestKey); (n == 1) != tc.retried {
				t.Errorf("requeues = %d, want retried with backoff: %v", n, tc.retried)
			}
			ev := recorded(f.recorder)
			if len(ev) != len(tc.related) || !strings.HasPrefix(ev[0], "Warning "+tc.reason) {
				t.Fatalf("events = %q, want %d Warning, the first %s", ev, len(tc.related), tc.reason)
			}
			for i, kind := range tc.related {
				// The fake prints the kinds of the regarding object (none:
				// a typed object from a lister has no TypeMeta) and of the
				// related one.
				if got := strings.Contains(ev[i], " {kind="); got != (kind != "") || kind != "" && !strings.HasSuffix(ev[i], " {kind="+kind+",apiVersion=}") {
					t.Errorf("event %d = %q, want the related kind %q", i, ev[i], kind)
				}
			}
		})
	}
}

func TestSyncBlockedChildReportedOnce(t *testing.T) {
	f := newFixture(t)
	dobj := testobjects.NewDeployObject()
	refused := apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "web", errors.New("exceeded quota: q, requested: services.loadbalancers=1"))
	dobj.Status = status.Compute(dobj, status.Outcome{Deployment: testobjects.LiveDeployment(dobj), Problems: []children.Problem{*children.ProblemOf(fmt.Errorf("creating Service web: %w", refused))}}, testobjects.Earlier)
	f.dobjs = []*appv1.DeployObject{dobj}
	f.deployments = []*appsv1.Deployment{testobjects.LiveDeployment(dobj)}
	_, ctx := ktesting.NewTestContext(t)
	c := f.newController(ctx)
	f.kubeClient.PrependReactor("create", "services", func(core.Action) (bool, runtime.Object, error) { return true, nil, refused })
	err := c.syncHandler(ctx, testobjects.TestKey)
	if !children.IsExpectedRetry(err) {
		t.Errorf("sync error = %v, want a blocked retry", err)
	}
	expectActions(t, writes(f.kubeClient.Actions(), f.client.Actions()), "create services")
	if ev := recorded(f.recorder); len(ev) != 0 {
		t.Errorf("events = %q, want none for a problem already reported", ev)
	}
}

func TestSyncLongRejectionKeepsStatusValid(t *testing.T) {
	f := newFixture(t)
	f.dobjs = []*appv1.DeployObject{testobjects.NewDeployObject()}
	_, ctx := ktesting.NewTestContext(t)
	c := f.newController(ctx)
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web", nil)
	invalid.ErrStatus.Message = strings.Repeat(`env[0].name: Invalid value: "A=B": a valid environment variable name; `, 2000)
	f.kubeClient.PrependReactor("create", "deployments", func(core.Action) (bool, runtime.Object, error) { return true, nil, invalid })
	if err := c.syncHandler(ctx, testobjects.TestKey); err != nil {
		t.Fatalf("sync: %v", err)
	}
	acts := writes(f.kubeClient.Actions(), f.client.Actions())
	if ready := readyOf(t, acts[len(acts)-1]); ready.Reason != appv1.ReasonInvalidSpec || len(ready.Message) > children.MaxConditionMessage {
		t.Errorf("Ready = %s with a message of %d bytes, want InvalidSpec with at most %d", ready.Reason, len(ready.Message), children.MaxConditionMessage)
	}
}

func TestSyncStatusIsConditionalOnTheCachedVersion(t *testing.T) {
	f := newFixture(t)
	f.dobjs = []*appv1.DeployObject{testobjects.NewDeployObject()}
	actions, err := f.sync()
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	var applied appv1.DeployObject
	if err := yamlOrJSON(actions[len(actions)-1].(core.PatchAction).GetPatch(), &applied); err != nil {
		t.Fatal(err)
	}
	if applied.ResourceVersion != "10" {
		t.Errorf("the status apply carries resourceVersion %q, want the cached 10: without it a status could land on a re-created DeployObject", applied.ResourceVersion)
	}
}

// TestSyncStatusAfterAnUnseenWriteIsBasedOnIt: a status write made before
// the cache shows the previous one is conditional on the version that write
// made, not on the stale cached one, which would only earn a conflict.
func TestSyncStatusAfterAnUnseenWriteIsBasedOnIt(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	dobj := testobjects.NewDeployObject()
	rolling := testobjects.LiveDeployment(dobj)
	rolling.Status.AvailableReplicas = 1
	f.dobjs = []*appv1.DeployObject{dobj}
	f.deployments = []*appsv1.Deployment{rolling}
	f.services = []*corev1.Service{testobjects.LiveService(dobj)}
	c := f.newController(ctx)
	if err := c.syncHandler(ctx, testobjects.TestKey); err != nil {
		t.Fatalf("first sync: %v", err)
	}
	// The rollout finishes before the watch delivers the first write.
	mustAdd(t, f.deployIndexer, testobjects.LiveDeployment(dobj))
	if err := c.syncHandler(ctx, testobjects.TestKey); err != nil {
		t.Fatalf("second sync: %v", err)
	}
	var versions []string
	for _, a := range writes(f.client.Actions()) {
		var applied appv1.DeployObject
		if err := yamlOrJSON(a.(core.PatchAction).GetPatch(), &applied); err != nil {
			t.Fatal(err)
		}
		versions = append(versions, applied.ResourceVersion)
	}
	if fmt.Sprint(versions) != "[10 10-written]" {
		t.Errorf("status writes conditional on versions %v, want [10 10-written]", versions)
	}
}

// blockingAPIServer is an API server whose Deployment creates hang until
// released or cancelled by the client, so that a test can hold syncs in
// flight and see whether their requests are cancelled.
type blockingAPIServer struct {
	started   chan struct{}
	release   chan struct{}
	cancelled chan struct{}
	creates   atomic.Int32
	unblock   sync.Once
}

// unblockAll answers every create, held or future, with an error.
func (s *blockingAPIServer) unblockAll() {
	s.unblock.Do(func() { close(s.release) })
}

func newBlockingAPIServer(t *testing.T) (*blockingAPIServer, kubernetes.Interface) {
	t.Helper()
	s := &blockingAPIServer{started: make(chan struct{}, 100), release: make(chan struct{}), cancelled: make(chan struct{}, 100)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/deployments") {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		// The server notices a cancelled request only once the body is read.
		_, _ = io.Copy(io.Discard, r.Body)
		s.creates.Add(1)
		s.started <- struct{}{}
		select {
		case <-s.release:
			http.Error(w, "released", http.StatusServiceUnavailable)
		case <-r.Context().Done():
			s.cancelled <- struct{}{}
		}
	}))
	t.Cleanup(func() {
		// Close waits for the handlers, so none may still hang.
		s.unblockAll()
		srv.Close()
	})
	// No client-side rate limit: the test counts syncs, not waits.
	client, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return s, client
}

// backlogController is a controller whose caches hold n DeployObjects
// without children, all queued, writing to a blocking API server.
func backlogController(t *testing.T, ctx context.Context, n int) (*Controller, *blockingAPIServer) {
	t.Helper()
	f := newFixture(t)
	for i := range n {
		f.dobjs = append(f.dobjs, testobjects.NewDeployObject(func(d *appv1.DeployObject) { d.Name = fmt.Sprintf("web-%d", i) }))
	}
	c := f.newController(ctx)
	api, client := newBlockingAPIServer(t)
	c.children.KubeClient = client
	c.caches = nil
	for _, d := range f.dobjs {
		c.queue.Add(cache.MetaObjectToName(d))
	}
	return c, api
}

func waitFor(t *testing.T, ch <-chan struct{}, n int, what string) {
	t.Helper()
	for range n {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestRunGivesUpWhenCachesDoNotSync: a leader whose caches never fill,
// as when its role lacks a list or watch, does not hold the lease without
// working: after the cache sync timeout Run returns an error naming the
// resources whose caches did not sync, and only those.
func TestRunGivesUpWhenCachesDoNotSync(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	c := newFixture(t).newController(ctx)
	c.caches = map[string]cache.InformerSynced{
		"deployobjects": func() bool { return true },
		"secrets":       func() bool { return false },
	}
	c.cacheSyncTimeout = 200 * time.Millisecond
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, context.WithoutCancel(ctx), 1) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "secrets") || strings.Contains(err.Error(), "deployobjects") {
			t.Errorf("Run returned %v, want an error naming the secrets cache alone", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run still waits for a cache that never syncs")
	}
}

// TestShutdownStartsNoNewSync: after the stop signal, the workers finish the
// syncs in flight and take no further key, however many are queued.
func TestShutdownStartsNoNewSync(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, stop := context.WithCancel(ctx)
	const workers = 4
	c, api := backlogController(t, ctx, 50)
	c.shutdownGrace = time.Minute
	done := make(chan error)
	go func() { done <- c.Run(ctx, context.WithoutCancel(ctx), workers) }()
	waitFor(t, api.started, workers, "the syncs in flight")

	stop()
	for !c.queue.ShuttingDown() {
		time.Sleep(10 * time.Millisecond)
	}
	api.unblockAll()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the syncs in flight finished")
	}
	if got := api.creates.Load(); got != workers {
		t.Errorf("%d syncs ran, want only the %d in flight at the stop signal: queued keys were still handed out", got, workers)
	}
}

// usingConfig is a DeployObject whose container reads key level of the
// ConfigMap cfg.
func usingConfig(mutate ...func(*appv1.DeployObject)) *appv1.DeployObject {
	return testobjects.NewDeployObject(append([]func(*appv1.DeployObject){func(d *appv1.DeployObject) {
		d.Spec.Env = append(d.Spec.Env, testobjects.ConfigMapKeyRef("cfg", "level", false))
	}}, mutate...)...)
}

// configHashFor is the config hash of dobj's pods with the ConfigMaps cms.
func configHashFor(t *testing.T, dobj *appv1.DeployObject, cms ...*corev1.ConfigMap) string {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, cm := range cms {
		mustAdd(t, indexer, cm.DeepCopy())
	}
	configMaps := caches.NewPackedLister[corev1.ConfigMap](indexer, corev1.Resource("configmaps")).In(dobj.Namespace)
	lookup := func(_ configrollout.Kind, _, name string) (configrollout.Data, error) {
		return configrollout.ConfigMapData(configMaps(name))
	}
	st, err := configrollout.StateOf(dobj.Namespace, configrollout.Refs(&dobj.Spec, false), lookup)
	if err != nil {
		t.Fatal(err)
	}
	return st.Hash
}

// rolledOutWithConfig gives f dobj and its children in line with the pod
// template carrying configHash ("" for none), as a sync before left them.
func (f *fixture) rolledOutWithConfig(dobj *appv1.DeployObject, configHash string) *appsv1.Deployment {
	inSync(dobj)
	desired := children.DesiredDeployment(dobj, children.ProfileNone)
	configrollout.WithHash(&desired.Spec.Template, configHash)
	_, hash, err := children.StampedDeployment(desired)
	if err == nil {
		err = children.StampTemplateHashes(desired, &dobj.Spec)
	}
	if err != nil {
		f.t.Fatal(err)
	}
	dobj.Status.DeploymentHash, dobj.Status.ConfigHash = hash, configHash
	live := testobjects.LiveDeployment(dobj)
	live.Annotations = desired.Annotations
	configrollout.WithHash(&live.Spec.Template, configHash)
	f.dobjs = []*appv1.DeployObject{dobj}
	f.deployments = []*appsv1.Deployment{live}
	f.services = []*corev1.Service{testobjects.LiveService(dobj)}
	f.trackConfig = true
	return live
}

// TestSyncConfigChanges: what one sync writes after the ConfigMap a
// DeployObject uses changed in one way, with configuration rollouts
// enabled or disabled.
func TestSyncConfigChanges(t *testing.T) {
	before := testobjects.ConfigMap("cfg", map[string]string{"level": "info", "unused": "a"})
	for _, tc := range []struct {
		name     string
		disabled bool
		after    *corev1.ConfigMap // nil: deleted
		want     []string
		// reason is the Ready reason written, if any.
		reason, message string
	}{
		{name: "unchanged", after: before},
		{name: "unused key changed", after: testobjects.ConfigMap("cfg", map[string]string{"level": "info", "unused": "b"})},
		{name: "used key changed", after: testobjects.ConfigMap("cfg", map[string]string{"level": "debug", "unused": "a"}),
			want: []string{"get deployments", "patch deployments", "patch deployobjects/status"}, reason: appv1.ReasonAvailable},
		{name: "used key removed", after: testobjects.ConfigMap("cfg", map[string]string{"unused": "a"}),
			want: []string{"patch deployobjects/status"}, reason: appv1.ReasonConfigMissing, message: "key level of ConfigMap cfg"},
		{name: "ConfigMap deleted",
			want: []string{"patch deployobjects/status"}, reason: appv1.ReasonConfigMissing, message: "ConfigMap cfg"},
		{name: "disabled: used key changed", disabled: true, after: testobjects.ConfigMap("cfg", map[string]string{"level": "debug", "unused": "a"})},
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
			actions, err := f.sync()
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
				if ev := recorded(f.recorder); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning ConfigMissing") {
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
			if ev := recorded(f.recorder); len(ev) != 0 {
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
	actions, err := f.sync()
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	expectActions(t, actions, "create services", "patch deployobjects/status")
	if ready := readyOf(t, actions[1]); ready.Reason != appv1.ReasonConfigMissing || !strings.Contains(ready.Message, "ConfigMap cfg") {
		t.Errorf("Ready = %s %q, want ConfigMissing naming ConfigMap cfg", ready.Reason, ready.Message)
	}
}

// TestSyncConfigMissingHasAGracePeriod: a ConfigMap applied together with
// its DeployObject may arrive moments later: Reconciling, not Stalled, until
// the grace is over.
func TestSyncConfigMissingHasAGracePeriod(t *testing.T) {
	for _, tc := range []struct {
		name     string
		elapsed  time.Duration
		progress string
	}{
		{"within the grace", 0, appv1.ConditionReconciling},
		{"after the grace", 3 * time.Minute, appv1.ConditionStalled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.dobjs = []*appv1.DeployObject{usingConfig()}
			f.trackConfig = true
			_, ctx := ktesting.NewTestContext(t)
			c := f.newController(ctx)
			now := time.Now()
			c.rollouts.Grace = configrollout.NewMissingGrace(2*time.Minute, func() time.Time { return now })
			c.rollouts.Grace.Left(testobjects.TestKey)
			now = now.Add(tc.elapsed)
			if err := c.syncHandler(ctx, testobjects.TestKey); err != nil {
				t.Fatalf("sync: %v", err)
			}
			actions := writes(f.kubeClient.Actions(), f.client.Actions())
			expectActions(t, actions, "create services", "patch deployobjects/status")
			if ready := readyOf(t, actions[1]); ready.Reason != appv1.ReasonConfigMissing {
				t.Errorf("Ready = %s, want ConfigMissing", ready.Reason)
			}
			for _, ct := range []string{appv1.ConditionReconciling, appv1.ConditionStalled} {
				if got := conditionOf(t, actions[1], ct) != nil; got != (ct == tc.progress) {
					t.Errorf("%s present: %v, want %v", ct, got, ct == tc.progress)
				}
			}
		})
	}
}

// TestSyncConfigRolloutWaitsForASlot: with every slot taken, a rollout
// caused by configuration alone waits and says so; a spec change does not
// wait.
func TestSyncConfigRolloutWaitsForASlot(t *testing.T) {
	before := testobjects.ConfigMap("cfg", map[string]string{"level": "info"})
	after := testobjects.ConfigMap("cfg", map[string]string{"level": "debug"})
	for _, tc := range []struct {
		name string
		// change is what happened since the Deployment was written;
		// configChange: the ConfigMap's data changed too.
		change       func(*fixture, *appv1.DeployObject)
		configChange bool
		want         []string
		reason       string
		waits        bool
	}{
		{"configuration change waits", nil, true, []string{"patch deployobjects/status"}, appv1.ReasonConfigRolloutPending, true},
		{"spec change does not wait", func(_ *fixture, d *appv1.DeployObject) {
			d.Generation++
			d.Spec.Image = "nginx:1.28"
		}, true, []string{"get deployments", "patch deployments", "patch deployobjects/status"}, appv1.ReasonAvailable, false},
		// The spec's generation was observed while it waited for its
		// ConfigMap: it is still the user's rollout.
		{"spec change that waited for ConfigMissing does not wait", func(_ *fixture, d *appv1.DeployObject) {
			d.Generation++
			d.Spec.Image = "nginx:1.28"
			d.Status.ObservedGeneration = d.Generation
		}, true, []string{"get deployments", "patch deployments", "patch deployobjects/status"}, appv1.ReasonAvailable, false},
		// kubectl scale or an autoscaler: the replicas are written, the
		// template keeps waiting.
		{"scale during a waiting rollout changes only the replicas", func(_ *fixture, d *appv1.DeployObject) {
			d.Generation++
			d.Spec.Replicas = ptr.To[int32](5)
		}, true, []string{"patch deployments", "patch deployobjects/status"}, appv1.ReasonConfigRolloutPending, true},
		{"the controller's own template change waits", func(f *fixture, _ *appv1.DeployObject) {
			f.podSecurity = children.ProfileRestricted
		}, false, []string{"patch deployobjects/status"}, appv1.ReasonConfigRolloutPending, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			dobj := usingConfig()
			f.rolledOutWithConfig(dobj, configHashFor(t, dobj, before))
			if tc.change != nil {
				tc.change(f, dobj)
			}
			f.configMaps = []*corev1.ConfigMap{before}
			if tc.configChange {
				f.configMaps = []*corev1.ConfigMap{after}
			}
			f.maxConfigRollouts = 1
			_, ctx := ktesting.NewTestContext(t)
			c := f.newController(ctx)
			other := cache.ObjectName{Namespace: "apps", Name: "other"}
			if !c.rollouts.Limiter.Acquire(other) {
				t.Fatal("the only slot was not free")
			}
			if err := c.syncHandler(ctx, testobjects.TestKey); err != nil {
				t.Fatalf("sync: %v", err)
			}
			actions := writes(f.kubeClient.Actions(), f.client.Actions())
			expectActions(t, actions, tc.want...)
			if ready := conditionOf(t, actions[len(actions)-1], appv1.ConditionReady); ready == nil {
				t.Errorf("no Ready condition, want reason %s", tc.reason)
			} else if ready.Reason != tc.reason {
				t.Errorf("Ready = %s %q, want %s", ready.Reason, ready.Message, tc.reason)
			}
			if actions[0].GetVerb() == "patch" && actions[0].GetResource().Resource == "deployments" && tc.waits {
				if patch := string(actions[0].(core.PatchAction).GetPatch()); patch != `{"spec":{"replicas":5}}` {
					t.Errorf("the Deployment was patched with %s, want its replicas only", patch)
				}
			}
			active, pending := c.rollouts.Limiter.Counts()
			if wantPending := map[bool]int{true: 1, false: 0}[tc.waits]; active != 1 || pending != wantPending {
				t.Errorf("limiter: %d active, %d pending; want 1, %d", active, pending, wantPending)
			}
			if !tc.waits {
				return
			}
			// The slot is freed: the waiting DeployObject is woken, and
			// its next sync rolls out.
			c.rollouts.Limiter.Finish(other, true)
			if c.queue.Len() != 1 {
				t.Fatalf("queue holds %d keys, want the waiting DeployObject", c.queue.Len())
			}
			f.kubeClient.ClearActions()
			f.client.ClearActions()
			if err := c.syncHandler(ctx, testobjects.TestKey); err != nil {
				t.Fatalf("sync: %v", err)
			}
			// The status write of the first sync is not in the cache: the
			// controller judges against what it wrote.
			expectActions(t, writes(f.kubeClient.Actions(), f.client.Actions()), "get deployments", "patch deployments", "patch deployobjects/status")
			// The fake Deployment is rolled out at once, and the slot is
			// free again, unless it was scaled up too: then the slot is
			// held until the new replicas are available.
			wantActive := 0
			if *dobj.Spec.Replicas == 5 {
				wantActive = 1
			}
			if active, pending := c.rollouts.Limiter.Counts(); active != wantActive || pending != 0 {
				t.Errorf("after the rollout: %d active, %d pending; want %d, 0", active, pending, wantActive)
			}
		})
	}
}

// TestSyncRolloutSlotIsTheDeployments: a slot is held while the
// Deployment rolls out and a place in line is kept while the rollout
// waits, whatever problem another child has.
func TestSyncRolloutSlotIsTheDeployments(t *testing.T) {
	before := testobjects.ConfigMap("cfg", map[string]string{"level": "info"})
	after := testobjects.ConfigMap("cfg", map[string]string{"level": "debug"})
	for _, tc := range []struct {
		name                  string
		slotTaken             bool
		wantActive, wantLined int
	}{
		{"rolling out", false, 1, 0},
		{"waiting", true, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			dobj := usingConfig()
			live := f.rolledOutWithConfig(dobj, configHashFor(t, dobj, before))
			// The Deployment controller has not rolled the new template out
			// yet.
			live.Status.UpdatedReplicas = 0
			f.services = nil
			f.configMaps = []*corev1.ConfigMap{after}
			f.maxConfigRollouts = 1
			_, ctx := ktesting.NewTestContext(t)
			c := f.newController(ctx)
			f.kubeClient.PrependReactor("create", "services", func(core.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "web", errors.New("exceeded quota: q, requested: services=1"))
			})
			if tc.slotTaken && !c.rollouts.Limiter.Acquire(cache.ObjectName{Namespace: "apps", Name: "other"}) {
				t.Fatal("the only slot was not free")
			}
			if err := c.syncHandler(ctx, testobjects.TestKey); err == nil {
				t.Fatal("sync succeeded; want the Service's quota problem retried")
			}
			actions := writes(f.kubeClient.Actions(), f.client.Actions())
			if ready := conditionOf(t, actions[len(actions)-1], appv1.ConditionReady); ready == nil || ready.Reason != appv1.ReasonQuotaExceeded {
				t.Fatalf("Ready = %+v, want QuotaExceeded from the Service", ready)
			}
			if active, lined := c.rollouts.Limiter.Counts(); active != tc.wantActive || lined != tc.wantLined {
				t.Errorf("limiter: %d active, %d waiting; want %d, %d", active, lined, tc.wantActive, tc.wantLined)
			}
		})
	}
}

// TestAdoptRollouts: a controller that starts while a rollout under the
// limit is still going counts it, and frees its slot once it is done.
func TestAdoptRollouts(t *testing.T) {
	f := newFixture(t)
	going := usingConfig()
	live := f.rolledOutWithConfig(going, "h")
	live.Annotations[appv1.AnnotationLimitedRollout] = "true"
	live.Status.UpdatedReplicas = 0
	done := usingConfig(func(d *appv1.DeployObject) { d.Name = "done" })
	finished := testobjects.LiveDeployment(done)
	finished.Annotations[appv1.AnnotationLimitedRollout] = "true"
	spec := usingConfig(func(d *appv1.DeployObject) { d.Name = "spec" })
	userRollout := testobjects.LiveDeployment(spec)
	userRollout.Status.UpdatedReplicas = 0
	f.deployments = append(f.deployments, finished, userRollout)
	f.maxConfigRollouts = 1
	_, ctx := ktesting.NewTestContext(t)
	c := f.newController(ctx)
	if err := c.adoptRollouts(klog.FromContext(ctx)); err != nil {
		t.Fatal(err)
	}
	if active, _ := c.rollouts.Limiter.Counts(); active != 1 {
		t.Fatalf("%d rollouts counted, want the one still going", active)
	}
	if c.rollouts.Limiter.Acquire(cache.ObjectName{Namespace: "apps", Name: "next"}) {
		t.Error("a new rollout got a slot while the adopted one holds the only one")
	}
	if c.queue.Len() != 1 {
		t.Errorf("queue holds %d keys, want the adopted DeployObject, whose sync frees the slot when done", c.queue.Len())
	}
}

// TestConfigEventHandlers: a ConfigMap or Secret event enqueues exactly the
// DeployObjects that use the object, and only when its data changed.
func TestConfigEventHandlers(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	users := usingConfig(func(d *appv1.DeployObject) {
		d.Spec.Env = append(d.Spec.Env, testobjects.SecretKeyRef("creds", "password"))
	})
	other := usingConfig(func(d *appv1.DeployObject) {
		d.Name = "other"
		d.Spec.Env = []corev1.EnvVar{testobjects.ConfigMapKeyRef("elsewhere", "level", false)}
	})
	f.dobjs = []*appv1.DeployObject{users, other}
	f.trackConfig, f.trackSecrets = true, true
	c := f.newController(ctx)

	expect := expectEnqueued(t, c)
	slim := func(obj any) any {
		o, err := caches.ChildKinds().Transform(obj)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	cm := slim(testobjects.ConfigMap("cfg", map[string]string{"level": "info", "unused": "a"}))
	relabelled := testobjects.ConfigMap("cfg", map[string]string{"level": "info", "unused": "a"})
	relabelled.ResourceVersion, relabelled.Labels = "6", map[string]string{"team": "x"}
	changed := slim(testobjects.ConfigMap("cfg", map[string]string{"level": "info", "unused": "b"}))

	configMaps, secrets := c.rollouts.Handler(configrollout.KindConfigMap), c.rollouts.Handler(configrollout.KindSecret)
	configMaps.OnAdd(cm, false)
	expect("ConfigMap added", testobjects.TestKey)
	configMaps.OnUpdate(cm, cm)
	expect("ConfigMap resync")
	configMaps.OnUpdate(cm, slim(relabelled))
	expect("ConfigMap labels changed")
	configMaps.OnUpdate(cm, changed)
	expect("ConfigMap data changed", testobjects.TestKey)
	configMaps.OnDelete(cache.DeletedFinalStateUnknown{Key: "apps/cfg", Obj: changed})
	expect("ConfigMap tombstone", testobjects.TestKey)
	configMaps.OnAdd(slim(testobjects.ConfigMap("unused-by-anyone", nil)), false)
	expect("ConfigMap nobody uses")
	configMaps.OnAdd("garbage", false)
	expect("garbage")
	// A ConfigMap and a Secret of the same name are different objects.
	secrets.OnAdd(slim(testobjects.ConfigMap("cfg", nil)), false)
	expect("Secret cfg, which nobody uses")

	secret := func(v string) any {
		return slim(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "apps", UID: "u"}, Data: map[string][]byte{"password": []byte(v)}})
	}
	secrets.OnUpdate(secret("a"), secret("a"))
	expect("Secret resync")
	secrets.OnUpdate(secret("a"), secret("b"))
	expect("Secret data changed", testobjects.TestKey)
	secrets.OnDelete(secret("b"))
	expect("Secret deleted", testobjects.TestKey)
}

// appliedDeployment is the Deployment a server-side apply action sent.
func appliedDeployment(t *testing.T, a core.Action) *appsv1.Deployment {
	t.Helper()
	p, ok := a.(core.PatchAction)
	if !ok || p.GetPatchType() != types.ApplyPatchType {
		t.Fatalf("action %s %s is not a server-side apply", a.GetVerb(), a.GetResource().Resource)
	}
	var d appsv1.Deployment
	if err := json.Unmarshal(p.GetPatch(), &d); err != nil {
		t.Fatalf("decoding the apply request: %v", err)
	}
	return &d
}

// withLiveChildren gives f the live children of dobj, and dobj the
// status of a sync that found them.
func (f *fixture) withLiveChildren(dobj *appv1.DeployObject) {
	inSync(dobj)
	f.dobjs = []*appv1.DeployObject{dobj}
	f.deployments = []*appsv1.Deployment{testobjects.LiveDeployment(dobj)}
	f.services = []*corev1.Service{testobjects.LiveService(dobj)}
	if p := testobjects.LivePDB(dobj); p != nil {
		f.pdbs = []*policyv1.PodDisruptionBudget{p}
	}
	if h := testobjects.LiveHPA(dobj); h != nil {
		f.hpas = []*autoscalingv2.HorizontalPodAutoscaler{h}
	}
}

func conditionOf(t *testing.T, a core.Action, condType string) *metav1.Condition {
	t.Helper()
	return meta.FindStatusCondition(statusOf(t, a).Conditions, condType)
}

// testElection is a leader election on a fake API server whose lease
// requests fail once the lease is "lost", with timings short enough for a
// unit test.
func testElection(t *testing.T) (*leaderelection.Election, *atomic.Bool) {
	t.Helper()
	client := k8sfake.NewClientset()
	var lost atomic.Bool
	client.PrependReactor("*", "leases", func(core.Action) (bool, runtime.Object, error) {
		if lost.Load() {
			return true, nil, errors.New("the API server is away")
		}
		return false, nil, nil
	})
	opts := &options.Options{LeaseName: "test", LeaseNamespace: "default",
		LeaseDuration: time.Second, RenewDeadline: 500 * time.Millisecond, RetryPeriod: 100 * time.Millisecond}
	if err := opts.LeaderElect.Set("true"); err != nil {
		t.Fatal(err)
	}
	le, err := leaderelection.New(opts, false, client)
	if err != nil {
		t.Fatal(err)
	}
	return le, &lost
}

func testMetrics() *metrics.Metrics {
	return &metrics.Metrics{Leader: prometheus.NewGauge(prometheus.GaugeOpts{Name: "leader"})}
}

// TestLeaseLostCancelsSyncs: when the lease is lost, while working or while
// the syncs in flight finish after SIGTERM, another replica may take over,
// so the syncs' requests are cancelled at once, not at the end of the grace
// period, and leaderelection.Run reports the loss for the process to exit 1.
func TestLeaseLostCancelsSyncs(t *testing.T) {
	for _, duringShutdown := range []bool{false, true} {
		t.Run(fmt.Sprintf("during shutdown %v", duringShutdown), func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			ctx, stop := context.WithCancel(ctx)
			defer stop()
			le, lost := testElection(t)
			const workers = 2
			c, api := backlogController(t, ctx, 10)
			c.shutdownGrace = time.Minute
			done := make(chan error)
			go func() {
				done <- leaderelection.Run(ctx, le, testMetrics(), func(ctx, writes context.Context) error { return c.Run(ctx, writes, workers) })
			}()
			waitFor(t, api.started, workers, "the syncs in flight")

			if duringShutdown {
				stop()
			}
			lost.Store(true)
			waitFor(t, api.cancelled, workers, "the requests of the syncs in flight to be cancelled")
			select {
			case err := <-done:
				if !errors.Is(err, leaderelection.ErrLeaseLost) {
					t.Errorf("runAsLeader returned %v, want errLeaseLost", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("runAsLeader did not return after the lease was lost")
			}
			if got := api.creates.Load(); got != workers {
				t.Errorf("%d syncs started, want only the %d in flight when the lease was lost", got, workers)
			}
		})
	}
}

// TestJSONLogsOfASyncCarryTheKey: in JSON, as in text, every line a sync
// logs carries the DeployObject's key as a field of its own, the failed
// sync's error line as much as the retry's lines.
func TestJSONLogsOfASyncCarryTheKey(t *testing.T) {
	var buf bytes.Buffer
	logger, _ := logsjson.Factory{}.Create(logsapi.LoggingConfiguration{Format: "json", Verbosity: 4},
		logsapi.LoggingOptions{ErrorStream: &buf, InfoStream: &buf})
	f := newFixture(t)
	f.dobjs = []*appv1.DeployObject{testobjects.NewDeployObject()}
	_, tctx := ktesting.NewTestContext(t)
	c := f.newController(tctx)
	var failed atomic.Bool
	f.kubeClient.PrependReactor("create", "services", func(core.Action) (bool, runtime.Object, error) {
		if failed.CompareAndSwap(false, true) {
			return true, nil, apierrors.NewInternalError(errors.New("etcd is away"))
		}
		return false, nil, nil
	})

	ctx := klog.NewContext(context.Background(), logger)
	for range 2 {
		c.queue.Add(testobjects.TestKey)
		c.processNextWorkItem(ctx)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var msgs []string
	for _, line := range lines {
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		msgs = append(msgs, fmt.Sprint(entry["msg"]))
		if got := fmt.Sprint(entry["deployobject"]); got != testobjects.TestKey.String() {
			t.Errorf("line %q has deployobject %q, want %q", line, got, testobjects.TestKey)
		}
	}
	if !slices.Contains(msgs, "Sync failed, retrying with backoff") || !slices.Contains(msgs, "Wrote status") {
		t.Errorf("logged %q, want the failure and the status write of the retry", msgs)
	}
}
