package reconcile

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	core "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/testobjects"
)

// The canary of these tests: web's image changes from nginx:1.27 to
// nginx:1.28 (revision canaryRevision) beside a stable ReplicaSet whose
// pods carry the pod-template-hash stableHash, with an HTTPRoute to two
// Gateways and the steps setWeight 20, then a pause without a duration.
const (
	canaryRevision = "bcc7e26db100d24"
	canaryID       = canaryRevision + "-1"
	canaryRSName   = "web-canary-" + canaryID
	stableHash     = "5f6d8b7c9"
)

// The canary starts at stepStart, its first step completes a minute
// later, and the operations come at later.
var (
	stepStart   = testobjects.FixedNow
	minuteLater = metav1.NewTime(testobjects.FixedNow.Add(time.Minute))
	later       = metav1.NewTime(testobjects.FixedNow.Add(20 * time.Minute))
)

// withCanary asks for an HTTPRoute and a canary of two steps.
func withCanary(d *appv1.DeployObject) {
	testobjects.WithHTTPRoute(d)
	d.Spec.Canary = &appv1.Canary{
		Steps:                 []appv1.CanaryStep{{SetWeight: ptr.To[int32](20)}, {Pause: &appv1.CanaryPause{}}},
		ScaleDownDelaySeconds: ptr.To[int32](30),
	}
}

// canaryWorld is web rolled out at nginx:1.27 with its HTTPRoute, accepted,
// sending everything to the stable Service, and the stable ReplicaSet (in
// the API server only, as the controller keeps no cache of the
// Deployment's ReplicaSets); then the spec asks for nginx:1.28. It returns
// the DeployObject as changed, with the status the last sync of the old
// spec wrote.
func canaryWorld(f *fixture) *appv1.DeployObject {
	f.gatewayAPI = true
	dobj := testobjects.NewDeployObject(withCanary)
	f.inLine(dobj, testobjects.LiveHTTPRoute(dobj))
	f.unlisted = append(f.unlisted, stableReplicaSet(dobj))
	dobj.Spec.Image = "nginx:1.28"
	dobj.Generation = 3
	return dobj
}

// stableReplicaSet is the ReplicaSet of dobj's rolled-out Deployment, with
// its two pods.
func stableReplicaSet(dobj *appv1.DeployObject) *appsv1.ReplicaSet {
	rs := testobjects.LiveReplicaSet(dobj, 1)
	rs.Labels[podTemplateHashLabel] = stableHash
	rs.Spec.Template.Labels = maps.Clone(rs.Spec.Template.Labels)
	rs.Spec.Template.Labels[podTemplateHashLabel] = stableHash
	rs.Spec.Replicas = ptr.To[int32](2)
	return rs
}

// canaryReplicaSet is the canary's ReplicaSet of dobj as the API server
// holds it, with available of its one pod available.
func canaryReplicaSet(dobj *appv1.DeployObject, available int32) *appsv1.ReplicaSet {
	rs := testobjects.LiveCanaryReplicaSet(dobj, canaryID)
	rs.Status.ReadyReplicas, rs.Status.AvailableReplicas = available, available
	return rs
}

// stableService is the Service of dobj as the API server holds it, pinned
// to the stable pods when pinned.
func stableService(dobj *appv1.DeployObject, pinned bool) *corev1.Service {
	s := testobjects.LiveService(dobj)
	if pinned {
		s.Spec.Selector = map[string]string{children.NameLabel: "web", podTemplateHashLabel: stableHash}
	}
	return s
}

// canaryService is the canary Service as the API server holds it.
func canaryService(dobj *appv1.DeployObject) *corev1.Service {
	return canaryServiceOf(dobj, canaryID)
}

// canaryServiceOf is the canary Service of canary id as the API server
// holds it.
func canaryServiceOf(dobj *appv1.DeployObject, id string) *corev1.Service {
	s := children.DesiredCanaryService(dobj, id)
	s.UID, s.ResourceVersion = "uid-canary-svc", "31"
	s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.96.0.11", []string{"10.96.0.11"}
	s.Spec.SessionAffinity = corev1.ServiceAffinityNone
	return s
}

// canaryRoute is dobj's HTTPRoute sending weight percent to the canary
// (nil: no canary backend), at generation, its status written by both
// Gateways for observed.
func canaryRoute(t *testing.T, dobj *appv1.DeployObject, weight *int32, generation, observed int64) *gatewayv1.HTTPRoute {
	t.Helper()
	r, err := children.DesiredHTTPRoute(dobj, weight)
	if err != nil {
		t.Fatal(err)
	}
	r.UID, r.ResourceVersion, r.Generation = "uid-route", "70", generation
	r.Status.Parents = acceptedBy(r.Spec.ParentRefs, observed)
	return r
}

// acceptedBy is a route's status with every parent of refs accepting its
// generation observed.
func acceptedBy(refs []gatewayv1.ParentReference, observed int64) []gatewayv1.RouteParentStatus {
	var parents []gatewayv1.RouteParentStatus
	for _, ref := range refs {
		parents = append(parents, gatewayv1.RouteParentStatus{ParentRef: ref, ControllerName: "example.com/gateway", Conditions: []metav1.Condition{
			{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", ObservedGeneration: observed},
			{Type: "ResolvedRefs", Status: metav1.ConditionTrue, Reason: "ResolvedRefs", ObservedGeneration: observed},
		}})
	}
	return parents
}

// promotedDeployment is web's Deployment as the API server holds it once
// the promotion applied nginx:1.28 to it, paused: the Deployment
// controller observed it and, paused, made no ReplicaSet of it. dobj's
// status records that apply, as the sync that made it does.
func promotedDeployment(t *testing.T, dobj *appv1.DeployObject) *appsv1.Deployment {
	t.Helper()
	d := testobjects.LiveDeployment(dobj)
	desired := children.DesiredDeployment(dobj, children.ProfileNone)
	desired.Spec.Paused = true
	_, hash, err := children.StampedDeployment(desired)
	if err != nil {
		t.Fatal(err)
	}
	d.Annotations[appv1.AnnotationDeploymentHash] = hash
	dobj.Status.DeploymentHash = hash
	d.Spec.Paused = true
	d.Generation = 2
	d.Status.ObservedGeneration, d.Status.UpdatedReplicas = 2, 0
	return d
}

// canaryStatus is status.canary of the canary under way, changed by
// mutate.
func canaryStatus(mutate func(*appv1.CanaryStatus)) *appv1.CanaryStatus {
	st := &appv1.CanaryStatus{
		ID: canaryID, Revision: canaryRevision, Attempt: 1, StableRevision: stableHash,
		Mode: appv1.CanaryModeRoute, Phase: appv1.CanaryProgressing, Step: 0,
		StepStartTime: ptr.To(stepStart), DesiredWeight: 20,
	}
	mutate(st)
	return st
}

// allActions are what the clients were asked, reads and lists included,
// the Kubernetes client's first (no informer runs in the fixture).
func (f *fixture) allActions() []core.Action {
	return slices.Concat(f.kubeClient.Actions(), f.client.Actions(), f.gatewayClient.Actions(), f.dynamicClient.Actions())
}

// canaryCase is one sync of the canary: the world before it and what it
// must do.
type canaryCase struct {
	name string
	// world puts the children in the fixture and sets dobj's status and
	// annotations, for a sync at now.
	world func(t *testing.T, f *fixture, dobj *appv1.DeployObject)
	now   metav1.Time
	// actions are every request to the API servers, reads included.
	actions []string
	// canary is status.canary afterwards, ready the Ready reason and
	// progress the kstatus condition that goes with it.
	canary   *appv1.CanaryStatus
	ready    string
	progress string
	// message, when set, is the Ready message.
	message string
	events  []string
	after   time.Duration
	// check looks at what was sent.
	check func(t *testing.T, f *fixture, writes []core.Action)
	// steady: a sync an hour later, of the status this one gives, makes
	// no request and changes no status.
	steady bool
}

func runCanaryCases(t *testing.T, cases []canaryCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			dobj := canaryWorld(f)
			tc.world(t, f, dobj)
			c := f.newChildren(dobj)
			now := tc.now.Time
			c.Now = func() time.Time { return now }
			res, err := f.syncWith(c, dobj)
			if err != nil {
				t.Fatalf("sync: %v", err)
			}
			actions := f.allActions()
			expectActions(t, actions, tc.actions...)
			if !testobjects.EqualObjects(res.Outcome.Canary, tc.canary) {
				t.Errorf("status.canary\n got %+v\nwant %+v", res.Outcome.Canary, tc.canary)
			}
			ready := readyOf(t, dobj, res)
			if ready.Reason != tc.ready {
				t.Errorf("Ready = %s %q, want %s", ready.Reason, ready.Message, tc.ready)
			}
			if tc.message != "" && ready.Message != tc.message {
				t.Errorf("Ready message\n got %q\nwant %q", ready.Message, tc.message)
			}
			for _, typ := range []string{appv1.ConditionReconciling, appv1.ConditionStalled} {
				c := conditionOf(statusAfter(dobj, res), typ)
				if want := typ == tc.progress; (c != nil) != want || want && (c.Status != metav1.ConditionTrue || c.Reason != tc.ready) {
					t.Errorf("%s = %+v, want it (True, %s): %v", typ, c, tc.ready, want)
				}
			}
			var events []string
			for _, e := range res.Events {
				events = append(events, e.Reason)
			}
			if !slices.Equal(events, tc.events) {
				t.Errorf("events %q, want %q", events, tc.events)
			}
			if res.After != tc.after {
				t.Errorf("after %v, want %v", res.After, tc.after)
			}
			if tc.check != nil {
				tc.check(t, f, actions)
			}
			if !tc.steady {
				return
			}
			dobj.Status = statusAfter(dobj, res)
			f.clearActions()
			now = now.Add(time.Hour)
			res, err = f.syncWith(c, dobj)
			if err != nil {
				t.Fatalf("second sync: %v", err)
			}
			expectActions(t, f.allActions())
			expectNothingDone(t, dobj, res)
			if res.After != 0 || len(res.Events) != 0 {
				t.Errorf("second sync: after %v, events %+v; want neither", res.After, res.Events)
			}
		})
	}
}

// backends are the services and weights of the backendRefs of the rules
// of the HTTPRoute an update sent.
func backends(t *testing.T, a core.Action) [][]string {
	t.Helper()
	u, ok := a.(core.UpdateAction)
	if !ok {
		t.Fatalf("%s is no update", describe(a))
	}
	var out [][]string
	for _, rule := range u.GetObject().(*gatewayv1.HTTPRoute).Spec.Rules {
		var refs []string
		for _, b := range rule.BackendRefs {
			refs = append(refs, string(b.Name)+"="+jsonOf(t, b.Weight))
		}
		out = append(out, refs)
	}
	return out
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// expectBackends checks the backends of the route update a.
func expectBackends(t *testing.T, a core.Action, want ...string) {
	t.Helper()
	got := backends(t, a)
	if len(got) != 1 || !slices.Equal(got[0], want) {
		t.Errorf("route backends %v, want one rule with %v", got, want)
	}
}

// expectSelector checks the selector of the Service an update or create
// sent.
func expectSelector(t *testing.T, a core.Action, want map[string]string) {
	t.Helper()
	s := a.(interface{ GetObject() runtime.Object }).GetObject().(*corev1.Service)
	if !maps.Equal(s.Spec.Selector, want) {
		t.Errorf("%s: selector %v, want %v", describe(a), s.Spec.Selector, want)
	}
}

// expectUIDPrecondition checks that the delete a is conditional on uid.
func expectUIDPrecondition(t *testing.T, a core.Action, uid types.UID) {
	t.Helper()
	opts := a.(core.DeleteAction).GetDeleteOptions()
	if opts.Preconditions == nil || opts.Preconditions.UID == nil || *opts.Preconditions.UID != uid {
		t.Errorf("%s: preconditions %+v, want the UID %s", describe(a), opts.Preconditions, uid)
	}
}

// inCanary puts the canary's children in f as the API server holds them
// during a canary: the canary ReplicaSet rs (none when nil), the pinned
// stable Service, the canary Service and route, and gives dobj the
// status.canary st.
func inCanary(f *fixture, dobj *appv1.DeployObject, rs *appsv1.ReplicaSet, route *gatewayv1.HTTPRoute, st *appv1.CanaryStatus) {
	if rs != nil {
		f.put(rs)
	}
	f.put(stableService(dobj, true), canaryService(dobj), route)
	dobj.Status.Canary = st
}

// pausedCanary is status.canary once the first step completed at
// minuteLater: paused without a duration.
func pausedCanary() *appv1.CanaryStatus {
	return canaryStatus(func(st *appv1.CanaryStatus) {
		st.Phase, st.Step, st.StepStartTime, st.TrafficShiftTime = appv1.CanaryPaused, 1, ptr.To(minuteLater), ptr.To(minuteLater)
		st.ObservedWeight, st.Replicas, st.AvailableReplicas = 20, 1, 1
	})
}

// pausedWorld is the canary paused at weight 20, accepted.
func pausedWorld(t *testing.T, f *fixture, dobj *appv1.DeployObject) {
	inCanary(f, dobj, canaryReplicaSet(dobj, 1), canaryRoute(t, dobj, ptr.To[int32](20), 2, 2), pausedCanary())
}

// TestSyncCanaryHappyPath: the steps of a canary in Route mode from the
// spec's change to the Deployment resumed at the new revision, each one
// sync over the world the earlier steps left, with every request it
// makes: no write of the Deployment's template before the promotion, no
// weight before the canary's pod is available, no step done before every
// Gateway accepted its weight, nothing at all while a pause waits.
func TestSyncCanaryHappyPath(t *testing.T) {
	promoting := func(replicas int32) *appv1.CanaryStatus {
		return canaryStatus(func(st *appv1.CanaryStatus) {
			st.Phase, st.Step, st.StepStartTime = appv1.CanaryPromoting, 2, ptr.To(later)
			st.ObservedWeight, st.Replicas, st.AvailableReplicas = 20, replicas, replicas
		})
	}
	promotingWorld := func(t *testing.T, f *fixture, dobj *appv1.DeployObject) {
		f.put(promotedDeployment(t, dobj), stableService(dobj, false), canaryService(dobj), canaryRoute(t, dobj, ptr.To[int32](20), 2, 2))
		dobj.Status.Canary = promoting(1)
	}
	runCanaryCases(t, []canaryCase{
		{
			name:  "the image changes: the canary ReplicaSet, the pin and the canary Service; the template held, no weight yet",
			world: func(*testing.T, *fixture, *appv1.DeployObject) {},
			now:   stepStart,
			actions: []string{
				"list replicasets ",
				"create replicasets " + canaryRSName,
				"get services web", "update services web",
				"create services web-canary",
			},
			canary:   canaryStatus(func(*appv1.CanaryStatus) {}),
			ready:    appv1.ReasonCanaryProgressing,
			progress: appv1.ConditionReconciling,
			events:   []string{"CanaryStarted"},
			after:    10 * time.Minute,
			check: func(t *testing.T, f *fixture, w []core.Action) {
				rs := w[1].(core.CreateAction).GetObject().(*appsv1.ReplicaSet)
				if img := rs.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.28" || *rs.Spec.Replicas != 1 {
					t.Errorf("canary ReplicaSet of %s with %d replicas, want nginx:1.28 with 1", img, *rs.Spec.Replicas)
				}
				if rs.Labels[appv1.LabelCanary] != canaryID || rs.Spec.Template.Labels[podTemplateHashLabel] != canaryID {
					t.Errorf("canary ReplicaSet labels %v, pod labels %v; want the canary label and pod-template-hash %s", rs.Labels, rs.Spec.Template.Labels, canaryID)
				}
				if !metav1.IsControlledBy(rs, &appv1.DeployObject{ObjectMeta: metav1.ObjectMeta{UID: "uid-web"}}) {
					t.Errorf("canary ReplicaSet owners %+v, want the DeployObject as controller", rs.OwnerReferences)
				}
				expectSelector(t, w[3], map[string]string{"app.deployobject.dev/name": "web", "pod-template-hash": stableHash})
				expectSelector(t, w[4], map[string]string{"app.deployobject.dev/name": "web", "pod-template-hash": canaryID})
				if img := f.storedDeployment().Spec.Template.Spec.Containers[0].Image; img != "nginx:1.27" {
					t.Errorf("the Deployment runs %s, want the stable nginx:1.27", img)
				}
			},
		},
		{
			name: "the canary's pod not available yet: the weight waits",
			world: func(_ *testing.T, f *fixture, dobj *appv1.DeployObject) {
				inCanary(f, dobj, canaryReplicaSet(dobj, 0), testobjects.LiveHTTPRoute(dobj), canaryStatus(func(*appv1.CanaryStatus) {}))
			},
			now:      stepStart,
			canary:   canaryStatus(func(st *appv1.CanaryStatus) { st.Replicas = 1 }),
			ready:    appv1.ReasonCanaryProgressing,
			progress: appv1.ConditionReconciling,
			after:    10 * time.Minute,
		},
		{
			name: "the canary's pod available: the route sends it 20 %",
			world: func(_ *testing.T, f *fixture, dobj *appv1.DeployObject) {
				inCanary(f, dobj, canaryReplicaSet(dobj, 1), testobjects.LiveHTTPRoute(dobj), canaryStatus(func(*appv1.CanaryStatus) {}))
			},
			now:      stepStart,
			actions:  []string{"get httproutes web", "update httproutes web"},
			canary:   canaryStatus(func(st *appv1.CanaryStatus) { st.Replicas, st.AvailableReplicas = 1, 1 }),
			ready:    appv1.ReasonCanaryProgressing,
			progress: appv1.ConditionReconciling,
			after:    10 * time.Minute,
			check: func(t *testing.T, _ *fixture, w []core.Action) {
				expectBackends(t, w[1], "web=80", "web-canary=20")
			},
		},
		{
			name: "the Gateways have not accepted the route's generation: the step waits",
			world: func(t *testing.T, f *fixture, dobj *appv1.DeployObject) {
				inCanary(f, dobj, canaryReplicaSet(dobj, 1), canaryRoute(t, dobj, ptr.To[int32](20), 2, 1), canaryStatus(func(*appv1.CanaryStatus) {}))
			},
			now:      minuteLater,
			canary:   canaryStatus(func(st *appv1.CanaryStatus) { st.Replicas, st.AvailableReplicas = 1, 1 }),
			ready:    appv1.ReasonCanaryProgressing,
			progress: appv1.ConditionReconciling,
			after:    9 * time.Minute,
		},
		{
			name: "every Gateway accepted the weight: the step completes, the pause begins",
			world: func(t *testing.T, f *fixture, dobj *appv1.DeployObject) {
				inCanary(f, dobj, canaryReplicaSet(dobj, 1), canaryRoute(t, dobj, ptr.To[int32](20), 2, 2), canaryStatus(func(*appv1.CanaryStatus) {}))
			},
			now:      minuteLater,
			canary:   pausedCanary(),
			ready:    appv1.ReasonCanaryPaused,
			progress: appv1.ConditionReconciling,
			events:   []string{"CanaryWeightSet", "CanaryPaused"},
		},
		{
			name:     "paused without a duration: nothing to do, and again an hour later",
			world:    pausedWorld,
			now:      later,
			canary:   pausedCanary(),
			ready:    appv1.ReasonCanaryPaused,
			progress: appv1.ConditionReconciling,
			steady:   true,
		},
		{
			name: "promoted by the annotation: the new template applied to the paused Deployment, the Service unpinned",
			world: func(t *testing.T, f *fixture, dobj *appv1.DeployObject) {
				pausedWorld(t, f, dobj)
				dobj.Annotations = map[string]string{appv1.AnnotationCanaryPromote: canaryID + "/1"}
			},
			now: later,
			actions: []string{
				"get deployments web", "patch deployments web",
				"get services web", "update services web",
			},
			canary:   promoting(1),
			ready:    appv1.ReasonCanaryProgressing,
			progress: appv1.ConditionReconciling,
			events:   []string{"CanaryStepPromoted", "CanaryPromoting"},
			check: func(t *testing.T, _ *fixture, w []core.Action) {
				sent := appliedDeployment(t, w[1])
				if img := sent.Spec.Template.Spec.Containers[0].Image; !sent.Spec.Paused || img != "nginx:1.28" || *sent.Spec.Replicas != 2 {
					t.Errorf("applied paused %v, image %s, %d replicas; want paused, nginx:1.28, 2", sent.Spec.Paused, img, *sent.Spec.Replicas)
				}
				expectSelector(t, w[3], map[string]string{"app.deployobject.dev/name": "web"})
			},
		},
		{
			name: "the Deployment paused at the new revision, the templates equal: the canary ReplicaSet handed over",
			world: func(t *testing.T, f *fixture, dobj *appv1.DeployObject) {
				promotingWorld(t, f, dobj)
				f.put(canaryReplicaSet(dobj, 1))
			},
			now: later,
			actions: []string{
				"get replicasets " + canaryRSName, "get deployments web",
				"patch replicasets " + canaryRSName,
			},
			canary:   promoting(1),
			ready:    appv1.ReasonCanaryProgressing,
			progress: appv1.ConditionReconciling,
			check: func(t *testing.T, _ *fixture, w []core.Action) {
				p := w[2].(core.PatchAction)
				if p.GetPatchType() != types.MergePatchType {
					t.Fatalf("hand-over patch of type %s, want a merge patch", p.GetPatchType())
				}
				var got, want any
				if err := json.Unmarshal(p.GetPatch(), &got); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal([]byte(`{"metadata": {
					"uid": "uid-canary-`+canaryID+`", "resourceVersion": "60",
					"labels": {"app.deployobject.dev/canary": null},
					"ownerReferences": [{"apiVersion": "app.deployobject.dev/v1", "kind": "DeployObject", "name": "web", "uid": "uid-web", "blockOwnerDeletion": true}],
					"annotations": {"deployment.kubernetes.io/desired-replicas": "2", "deployment.kubernetes.io/max-replicas": "3"}
				}}`), &want); err != nil {
					t.Fatal(err)
				}
				if !testobjects.EqualObjects(got, want) {
					t.Errorf("hand-over patch\n got %s\nwant %s", p.GetPatch(), jsonOf(t, want))
				}
			},
		},
		{
			name: "a new image asked for once the template was applied: the promotion runs to its end, the hand-over as before",
			world: func(t *testing.T, f *fixture, dobj *appv1.DeployObject) {
				promotingWorld(t, f, dobj)
				f.put(canaryReplicaSet(dobj, 1))
				dobj.Spec.Image = "nginx:1.29"
			},
			now: later,
			actions: []string{
				"get replicasets " + canaryRSName, "get deployments web",
				"patch replicasets " + canaryRSName,
			},
			canary:   promoting(1),
			ready:    appv1.ReasonCanaryProgressing,
			progress: appv1.ConditionReconciling,
		},
		{
			name: "a new image asked for once handed over: the Deployment resumed at the promoted template",
			world: func(t *testing.T, f *fixture, dobj *appv1.DeployObject) {
				promotingWorld(t, f, dobj)
				f.unlisted = append(f.unlisted, canaryReplicaSet(dobj, 1))
				dobj.Spec.Image = "nginx:1.29"
			},
			now:      later,
			actions:  []string{"patch deployments web"},
			canary:   promoting(0),
			ready:    appv1.ReasonCanaryProgressing,
			progress: appv1.ConditionReconciling,
			check: func(t *testing.T, _ *fixture, w []core.Action) {
				p := w[0].(core.PatchAction)
				if got, want := string(p.GetPatch()), `{"spec":{"paused":null}}`; p.GetPatchType() != types.MergePatchType || got != want {
					t.Errorf("%s patch %s, want the merge patch %s: the template held, the pause taken back", p.GetPatchType(), got, want)
				}
			},
		},
		{
			name: "the templates differ: no hand-over, the Deployment resumed to roll out as usual",
			world: func(t *testing.T, f *fixture, dobj *appv1.DeployObject) {
				promotingWorld(t, f, dobj)
				rs := canaryReplicaSet(dobj, 1)
				rs.Spec.Template.Spec.Containers[0].Image = "nginx:1.28-rc"
				f.put(rs)
			},
			now: later,
			actions: []string{
				"get replicasets " + canaryRSName, "get deployments web",
				"get deployments web", "patch deployments web",
			},
			canary:   promoting(1),
			ready:    appv1.ReasonCanaryProgressing,
			progress: appv1.ConditionReconciling,
			events:   []string{"CanaryPromotedByRollout"},
			check: func(t *testing.T, _ *fixture, w []core.Action) {
				if sent := appliedDeployment(t, w[3]); sent.Spec.Paused {
					t.Error("the Deployment stays paused")
				}
			},
		},
		{
			name: "handed over: the Deployment resumed",
			world: func(t *testing.T, f *fixture, dobj *appv1.DeployObject) {
				promotingWorld(t, f, dobj)
				// Out of the cache: it lost the canary label.
				f.unlisted = append(f.unlisted, canaryReplicaSet(dobj, 1))
			},
			now:      later,
			actions:  []string{"get deployments web", "patch deployments web"},
			canary:   promoting(0),
			ready:    appv1.ReasonCanaryProgressing,
			progress: appv1.ConditionReconciling,
			check: func(t *testing.T, _ *fixture, w []core.Action) {
				sent := appliedDeployment(t, w[1])
				if img := sent.Spec.Template.Spec.Containers[0].Image; sent.Spec.Paused || img != "nginx:1.28" {
					t.Errorf("applied paused %v, image %s; want unpaused, nginx:1.28", sent.Spec.Paused, img)
				}
				// Omitted from the apply, spec.paused, which the promotion's
				// apply owns, is removed.
				if strings.Contains(string(w[1].(core.PatchAction).GetPatch()), `"paused"`) {
					t.Errorf("the apply carries paused: %s", w[1].(core.PatchAction).GetPatch())
				}
			},
		},
	})
}

// TestSyncCanaryAbort: an operator's abort during a pause takes the
// traffic away at once; the canary's pods go only once the Gateways
// accepted that and scaleDownDelaySeconds passed, the canary Service and
// the pin only once the route without the canary is accepted; the canary
// then stays Aborted (Stalled) and writes nothing.
func TestSyncCanaryAbort(t *testing.T) {
	aborting := func(mutate func(*appv1.CanaryStatus)) *appv1.CanaryStatus {
		st := pausedCanary()
		st.Phase, st.AbortReason, st.StepStartTime, st.TrafficShiftTime = appv1.CanaryAborting, appv1.AbortOperator, ptr.To(later), nil
		mutate(st)
		return st
	}
	shifted := func(st *appv1.CanaryStatus) { st.TrafficShiftTime, st.ObservedWeight = ptr.To(later), 0 }
	aborted := aborting(func(st *appv1.CanaryStatus) {
		shifted(st)
		st.Phase, st.Replicas, st.AvailableReplicas = appv1.CanaryAborted, 0, 0
	})
	runCanaryCases(t, []canaryCase{
		{
			name: "abort annotation in a pause: weight 0 at once, the canary's pod kept",
			world: func(t *testing.T, f *fixture, dobj *appv1.DeployObject) {
				pausedWorld(t, f, dobj)
				dobj.Annotations = map[string]string{appv1.AnnotationCanaryAbort: canaryID}
			},
			now:      later,
			actions:  []string{"get httproutes web", "update httproutes web"},
			canary:   aborting(func(*appv1.CanaryStatus) {}),
			ready:    appv1.ReasonCanaryAborted,
			progress: appv1.ConditionStalled,
			events:   []string{"CanaryAborting"},
			check: func(t *testing.T, _ *fixture, w []core.Action) {
				expectBackends(t, w[1], "web=100", "web-canary=0")
			},
		},
		{
			name: "abort with a foreign Service where the canary Service was: weight 0 at once all the same",
			world: func(t *testing.T, f *fixture, dobj *appv1.DeployObject) {
				pausedWorld(t, f, dobj)
				f.remove(canaryService(dobj))
				f.unlisted = append(f.unlisted, foreignCanaryService(dobj))
				dobj.Annotations = map[string]string{appv1.AnnotationCanaryAbort: canaryID}
			},
			now:      later,
			actions:  []string{"create services web-canary", "get services web-canary", "get httproutes web", "update httproutes web"},
			canary:   aborting(func(*appv1.CanaryStatus) {}),
			ready:    appv1.ReasonResourceConflict,
			progress: appv1.ConditionStalled,
			events:   []string{"CanaryAborting"},
			check: func(t *testing.T, _ *fixture, w []core.Action) {
				expectBackends(t, w[3], "web=100", "web-canary=0")
			},
		},
		{
			name: "weight 0 accepted: the canary's pod stays for the delay",
			world: func(t *testing.T, f *fixture, dobj *appv1.DeployObject) {
				inCanary(f, dobj, canaryReplicaSet(dobj, 1), canaryRoute(t, dobj, ptr.To[int32](0), 3, 3), aborting(func(*appv1.CanaryStatus) {}))
			},
			now:      later,
			canary:   aborting(shifted),
			ready:    appv1.ReasonCanaryAborted,
			progress: appv1.ConditionStalled,
			after:    30 * time.Second,
		},
		{
			name: "the delay passed: the canary ReplicaSet deleted, the route without the canary",
			world: func(t *testing.T, f *fixture, dobj *appv1.DeployObject) {
				inCanary(f, dobj, canaryReplicaSet(dobj, 1), canaryRoute(t, dobj, ptr.To[int32](0), 3, 3), aborting(shifted))
			},
			now:      metav1.NewTime(later.Add(31 * time.Second)),
			actions:  []string{"delete replicasets " + canaryRSName, "get httproutes web", "update httproutes web"},
			canary:   aborting(shifted),
			ready:    appv1.ReasonCanaryAborted,
			progress: appv1.ConditionStalled,
			check: func(t *testing.T, _ *fixture, w []core.Action) {
				expectUIDPrecondition(t, w[0], types.UID("uid-canary-"+canaryID))
				expectBackends(t, w[2], "web=1")
			},
		},
		{
			name: "the route without the canary accepted: the canary Service deleted, the Service unpinned; Aborted",
			world: func(t *testing.T, f *fixture, dobj *appv1.DeployObject) {
				inCanary(f, dobj, nil, canaryRoute(t, dobj, nil, 4, 4), aborting(shifted))
			},
			now:      metav1.NewTime(later.Add(time.Minute)),
			actions:  []string{"get services web", "update services web", "delete services web-canary"},
			canary:   aborted,
			ready:    appv1.ReasonCanaryAborted,
			progress: appv1.ConditionStalled,
			events:   []string{"CanaryAborted"},
			check: func(t *testing.T, f *fixture, w []core.Action) {
				expectSelector(t, w[1], map[string]string{"app.deployobject.dev/name": "web"})
				expectUIDPrecondition(t, w[2], "uid-canary-svc")
				if img := f.storedDeployment().Spec.Template.Spec.Containers[0].Image; img != "nginx:1.27" {
					t.Errorf("the Deployment runs %s, want the stable nginx:1.27", img)
				}
			},
		},
		{
			name: "Aborted: nothing to do, and again an hour later",
			world: func(t *testing.T, f *fixture, dobj *appv1.DeployObject) {
				f.put(canaryRoute(t, dobj, nil, 4, 4))
				dobj.Status.Canary = aborted
			},
			now:      metav1.NewTime(later.Add(2 * time.Minute)),
			canary:   aborted,
			ready:    appv1.ReasonCanaryAborted,
			progress: appv1.ConditionStalled,
			steady:   true,
		},
	})
}

// TestSyncCanaryKeepsReplicas: during a canary a scale-down of the spec
// (an autoscaler's) waits for the canary's end, and Ready says so; a
// scale-up is applied at once, the template still held.
func TestSyncCanaryKeepsReplicas(t *testing.T) {
	scaled := func(replicas int32) func(*testing.T, *fixture, *appv1.DeployObject) {
		return func(t *testing.T, f *fixture, dobj *appv1.DeployObject) {
			pausedWorld(t, f, dobj)
			dobj.Spec.Replicas = ptr.To(replicas)
		}
	}
	runCanaryCases(t, []canaryCase{
		{
			name:     "scaled down: the Deployment keeps its replicas, and Ready says so",
			world:    scaled(1),
			now:      later,
			canary:   pausedCanary(),
			ready:    appv1.ReasonCanaryPaused,
			progress: appv1.ConditionReconciling,
			message:  "canary bcc7e26db100d24-1 paused at step 1, weight 20 %; promote: kubectl annotate deployobject web app.deployobject.dev/canary-promote=bcc7e26db100d24-1/1 --overwrite; abort: kubectl annotate deployobject web app.deployobject.dev/canary-abort=bcc7e26db100d24-1 --overwrite; the scale-down to replicas=1 waits for the canary's end (the stable keeps 2)",
			steady:   true,
		},
		{
			name:     "not scaled: no scale-down waits",
			world:    scaled(2),
			now:      later,
			canary:   pausedCanary(),
			ready:    appv1.ReasonCanaryPaused,
			progress: appv1.ConditionReconciling,
			message:  "canary bcc7e26db100d24-1 paused at step 1, weight 20 %; promote: kubectl annotate deployobject web app.deployobject.dev/canary-promote=bcc7e26db100d24-1/1 --overwrite; abort: kubectl annotate deployobject web app.deployobject.dev/canary-abort=bcc7e26db100d24-1 --overwrite",
			steady:   true,
		},
		{
			name:     "scaled up: the Deployment scaled, its template untouched",
			world:    scaled(3),
			now:      later,
			actions:  []string{"patch deployments web"},
			canary:   pausedCanary(),
			ready:    appv1.ReasonCanaryPaused,
			progress: appv1.ConditionReconciling,
			message:  "canary bcc7e26db100d24-1 paused at step 1, weight 20 %; promote: kubectl annotate deployobject web app.deployobject.dev/canary-promote=bcc7e26db100d24-1/1 --overwrite; abort: kubectl annotate deployobject web app.deployobject.dev/canary-abort=bcc7e26db100d24-1 --overwrite",
			check: func(t *testing.T, f *fixture, w []core.Action) {
				p := w[0].(core.PatchAction)
				if p.GetPatchType() != types.MergePatchType || string(p.GetPatch()) != `{"spec":{"replicas":3}}` {
					t.Errorf("%s patch %s, want the merge patch {\"spec\":{\"replicas\":3}}", p.GetPatchType(), p.GetPatch())
				}
				if img := f.storedDeployment().Spec.Template.Spec.Containers[0].Image; img != "nginx:1.27" {
					t.Errorf("the Deployment runs %s, want the stable nginx:1.27", img)
				}
			},
		},
		{
			name: "scaled up while its owner paused the Deployment: scaled, and left paused",
			world: func(t *testing.T, f *fixture, dobj *appv1.DeployObject) {
				scaled(3)(t, f, dobj)
				for _, o := range f.cached {
					if d, ok := o.(*appsv1.Deployment); ok {
						d.Spec.Paused = true
					}
				}
			},
			now:      later,
			actions:  []string{"patch deployments web"},
			canary:   pausedCanary(),
			ready:    appv1.ReasonCanaryPaused,
			progress: appv1.ConditionReconciling,
			check: func(t *testing.T, _ *fixture, w []core.Action) {
				if p := w[0].(core.PatchAction).GetPatch(); string(p) != `{"spec":{"replicas":3}}` {
					t.Errorf("Deployment patch %s, want {\"spec\":{\"replicas\":3}}", p)
				}
			},
		},
		{
			name:     "scaled up to 10: the canary follows, with the 2 pods 20 % of 10 need",
			world:    scaled(10),
			now:      later,
			actions:  []string{"patch deployments web", "get replicasets " + canaryRSName, "update replicasets " + canaryRSName},
			canary:   pausedCanary(),
			ready:    appv1.ReasonCanaryPaused,
			progress: appv1.ConditionReconciling,
			check: func(t *testing.T, _ *fixture, w []core.Action) {
				if p := w[0].(core.PatchAction).GetPatch(); string(p) != `{"spec":{"replicas":10}}` {
					t.Errorf("Deployment patch %s, want {\"spec\":{\"replicas\":10}}", p)
				}
				if rs := w[2].(core.UpdateAction).GetObject().(*appsv1.ReplicaSet); *rs.Spec.Replicas != 2 {
					t.Errorf("canary ReplicaSet scaled to %d, want 2", *rs.Spec.Replicas)
				}
			},
		},
	})
}

// foreignCanaryService is a Service of the canary Service's name that
// another team made.
func foreignCanaryService(dobj *appv1.DeployObject) *corev1.Service {
	s := canaryService(dobj)
	s.OwnerReferences, s.Labels = nil, map[string]string{"team": "other"}
	return s
}

// TestSyncCanaryForeignService: a Service of the canary Service's name
// that is not the DeployObject's is reported and never touched, and the
// route never sends traffic to it, even with the canary's pod available.
func TestSyncCanaryForeignService(t *testing.T) {
	foreign := foreignCanaryService
	// available: the canary's pod available at its first step, the route
	// as route makes it, and the foreign Service: the route is not written.
	available := func(name string, route func(*testing.T, *appv1.DeployObject) *gatewayv1.HTTPRoute) canaryCase {
		return canaryCase{
			name: name,
			world: func(t *testing.T, f *fixture, dobj *appv1.DeployObject) {
				f.put(canaryReplicaSet(dobj, 1), stableService(dobj, true), route(t, dobj))
				f.unlisted = append(f.unlisted, foreign(dobj))
				dobj.Status.Canary = canaryStatus(func(*appv1.CanaryStatus) {})
			},
			now:      stepStart,
			actions:  []string{"create services web-canary", "get services web-canary"},
			canary:   canaryStatus(func(st *appv1.CanaryStatus) { st.Replicas, st.AvailableReplicas = 1, 1 }),
			ready:    appv1.ReasonResourceConflict,
			progress: appv1.ConditionStalled,
			after:    10 * time.Minute,
		}
	}
	runCanaryCases(t, []canaryCase{
		{
			name: "the canary starts: the create of its Service refused, the conflict reported",
			world: func(_ *testing.T, f *fixture, dobj *appv1.DeployObject) {
				f.unlisted = append(f.unlisted, foreign(dobj))
			},
			now: stepStart,
			actions: []string{
				"list replicasets ",
				"create replicasets " + canaryRSName,
				"get services web", "update services web",
				"create services web-canary", "get services web-canary",
			},
			canary:   canaryStatus(func(*appv1.CanaryStatus) {}),
			ready:    appv1.ReasonResourceConflict,
			progress: appv1.ConditionStalled,
			events:   []string{"CanaryStarted"},
			after:    10 * time.Minute,
		},
		available("a route at 10 % when the canary Service became foreign: not raised to the step's 20 %", func(t *testing.T, dobj *appv1.DeployObject) *gatewayv1.HTTPRoute {
			return canaryRoute(t, dobj, ptr.To[int32](10), 2, 2)
		}),
		available("the canary's pod available: no weight for a Service that is not ours", func(_ *testing.T, dobj *appv1.DeployObject) *gatewayv1.HTTPRoute {
			return testobjects.LiveHTTPRoute(dobj)
		}),
	})
}

// TestSyncCanaryRefusedTemplate: with --pod-security-profile=restricted, a
// new revision that breaks it runs no canary pod: no canary ReplicaSet is
// made, and Ready names the violation.
func TestSyncCanaryRefusedTemplate(t *testing.T) {
	refused := func(f *fixture, dobj *appv1.DeployObject) {
		f.podSecurity = children.ProfileRestricted
		dobj.Spec.Sidecars = []corev1.Container{{Name: "proxy", Image: "envoy:1", SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}
	}
	runCanaryCases(t, []canaryCase{
		{
			name:  "the canary starts: no canary ReplicaSet",
			world: func(_ *testing.T, f *fixture, dobj *appv1.DeployObject) { refused(f, dobj) },
			now:   stepStart,
			actions: []string{
				"list replicasets ",
				"get services web", "update services web",
				"create services web-canary",
			},
			// The revision of the template with the sidecar.
			canary: canaryStatus(func(st *appv1.CanaryStatus) {
				st.ID, st.Revision = "496b5e36cb5d397f-1", "496b5e36cb5d397f"
			}),
			ready:    appv1.ReasonPodSecurityViolation,
			progress: appv1.ConditionStalled,
			events:   []string{"CanaryStarted"},
			after:    10 * time.Minute,
		},
	})
}

// TestSyncCanaryGRPCRoute: the canary of a DeployObject whose route is a
// GRPCRoute gets its weight in every rule of the GRPCRoute, read back from
// it, and its step completes once every Gateway accepted the GRPCRoute's
// generation.
func TestSyncCanaryGRPCRoute(t *testing.T) {
	// The revision of withCanary's spec with WithGRPCRoute's ports.
	const revision = "a0666df2b0507a30"
	const id = revision + "-1"
	route := func(t *testing.T, dobj *appv1.DeployObject, weight *int32, observed int64) *gatewayv1.GRPCRoute {
		r, err := children.DesiredGRPCRoute(dobj, weight)
		if err != nil {
			t.Fatal(err)
		}
		r.UID, r.ResourceVersion, r.Generation = "uid-grpcroute", "72", 2
		r.Status.Parents = acceptedBy(r.Spec.ParentRefs, observed)
		return r
	}
	status := func(mutate func(*appv1.CanaryStatus)) *appv1.CanaryStatus {
		return canaryStatus(func(st *appv1.CanaryStatus) {
			st.ID, st.Revision = id, revision
			mutate(st)
		})
	}
	for _, tc := range []struct {
		name    string
		route   func(*testing.T, *appv1.DeployObject) *gatewayv1.GRPCRoute
		actions []string
		// weights are each rule's backends sent, none without a write.
		weights [][]string
		phase   appv1.CanaryPhase
	}{
		{
			name: "the canary's pod available: every rule sends it 20 %",
			route: func(_ *testing.T, dobj *appv1.DeployObject) *gatewayv1.GRPCRoute {
				return testobjects.LiveGRPCRoute(dobj)
			},
			actions: []string{"get grpcroutes web", "update grpcroutes web"},
			weights: [][]string{{"web=80", "web-canary=20"}, {"web=80", "web-canary=20"}},
			phase:   appv1.CanaryProgressing,
		},
		{
			name: "the Gateways have not accepted the GRPCRoute's generation: the step waits",
			route: func(t *testing.T, dobj *appv1.DeployObject) *gatewayv1.GRPCRoute {
				return route(t, dobj, ptr.To[int32](20), 1)
			},
			phase: appv1.CanaryProgressing,
		},
		{
			name: "every Gateway accepted the weight: the pause begins",
			route: func(t *testing.T, dobj *appv1.DeployObject) *gatewayv1.GRPCRoute {
				return route(t, dobj, ptr.To[int32](20), 2)
			},
			phase: appv1.CanaryPaused,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.gatewayAPI = true
			dobj := testobjects.NewDeployObject(withCanary, testobjects.WithGRPCRoute)
			f.inLine(dobj, testobjects.LiveGRPCRoute(dobj))
			f.unlisted = append(f.unlisted, stableReplicaSet(dobj))
			dobj.Spec.Image, dobj.Generation = "nginx:1.28", 3
			rs := testobjects.LiveCanaryReplicaSet(dobj, id)
			rs.Status.ReadyReplicas, rs.Status.AvailableReplicas = 1, 1
			f.put(rs, stableService(dobj, true), canaryServiceOf(dobj, id), tc.route(t, dobj))
			dobj.Status.Canary = status(func(*appv1.CanaryStatus) {})
			c := f.newChildren(dobj)
			c.Now = func() time.Time { return minuteLater.Time }
			res, err := f.syncWith(c, dobj)
			if err != nil {
				t.Fatalf("sync: %v", err)
			}
			actions := f.allActions()
			expectActions(t, actions, tc.actions...)
			if st := res.Outcome.Canary; st == nil || st.ID != id || st.Phase != tc.phase || st.AvailableReplicas != 1 {
				t.Errorf("status.canary %+v, want canary %s %s with 1 pod available", st, id, tc.phase)
			}
			if tc.weights == nil {
				return
			}
			var got [][]string
			for _, rule := range actions[1].(core.UpdateAction).GetObject().(*gatewayv1.GRPCRoute).Spec.Rules {
				var refs []string
				for _, b := range rule.BackendRefs {
					refs = append(refs, string(b.Name)+"="+jsonOf(t, b.Weight))
				}
				got = append(got, refs)
			}
			if !reflect.DeepEqual(got, tc.weights) {
				t.Errorf("GRPCRoute backends %v, want %v", got, tc.weights)
			}
		})
	}
}
