package reconcile

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/validation/field"
	core "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/caches"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/identity"
	"deployobject.dev/controller/pkg/testobjects"
)

// appliedDeployment is the Deployment a server-side apply action sent.
func appliedDeployment(t *testing.T, a core.Action) *appsv1.Deployment {
	t.Helper()
	p, ok := a.(core.PatchAction)
	if !ok || p.GetPatchType() != types.ApplyPatchType {
		t.Fatalf("action %s is not a server-side apply", describe(a))
	}
	var d appsv1.Deployment
	if err := json.Unmarshal(p.GetPatch(), &d); err != nil {
		t.Fatalf("decoding the apply request: %v", err)
	}
	return &d
}

func TestSyncCorrectsDeploymentDrift(t *testing.T) {
	for _, tc := range []struct {
		name  string
		drift func(*appsv1.Deployment)
	}{
		{"image", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "evil:1" }},
		{"replicas", func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](7) }},
		{"command", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Command = []string{"sh"} }},
		{"args", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Args = nil }},
		{"env value", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Env[0].Value = "dev" }},
		{"resources", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("1Gi")
		}},
		{"container port name", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Ports[0].Name = "web" }},
		{"managed-by label removed", func(d *appsv1.Deployment) { delete(d.Labels, identity.ManagedByLabel) }},
		{"pod label changed", func(d *appsv1.Deployment) { d.Spec.Template.Labels[children.NameLabel] = "other" }},
		{"container renamed", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Name = "main" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			dobj := testobjects.NewDeployObject()
			f.inLine(dobj)
			live := testobjects.LiveDeployment(dobj)
			tc.drift(live)
			f.put(live)
			c := f.newChildren(dobj)
			f.bumpGenerationOnPatch()
			res, err := f.syncWith(c, dobj)
			if err != nil {
				t.Fatalf("sync: %v", err)
			}
			writes := f.writes()
			expectActions(t, writes, "get deployments web", "patch deployments web")
			if ready := readyOf(t, dobj, res); ready.Reason != appv1.ReasonProgressing {
				t.Errorf("Ready reason after a drift fix = %s, want Progressing until the Deployment controller catches up", ready.Reason)
			}
			// What the event tells.
			if want := []string{"updated Deployment web"}; !slices.Equal(res.Actions, want) {
				t.Errorf("actions %q, want %q", res.Actions, want)
			}
			if sent := appliedDeployment(t, writes[1]); sent.ResourceVersion != live.ResourceVersion {
				t.Errorf("apply carries resourceVersion %q, want the live %q for optimistic concurrency", sent.ResourceVersion, live.ResourceVersion)
			}
			if got := f.storedDeployment(); !children.DeploymentInSync(got, children.DesiredDeployment(dobj, children.ProfileNone)) {
				t.Errorf("applied Deployment still drifts:\n%s", diff.Diff(children.DesiredDeployment(dobj, children.ProfileNone), got))
			}
		})
	}
}

// TestSyncRemembersWhatAdmissionMade: a mutating policy that pins every
// image to a digest (as Kyverno's verifyImages does) makes the live
// Deployment differ from the desired one for good; the controller does not
// apply it again at every sync, until someone else changes it.
func TestSyncRemembersWhatAdmissionMade(t *testing.T) {
	f := newFixture(t)
	dobj := testobjects.NewDeployObject()
	c := f.newChildren(dobj)
	f.kubeClient.PrependReactor("create", "deployments", func(a core.Action) (bool, runtime.Object, error) {
		d := a.(core.CreateAction).GetObject().(*appsv1.Deployment)
		d.Spec.Template.Spec.Containers[0].Image += "@sha256:" + strings.Repeat("ab", 32)
		d.Generation = 1
		return false, nil, nil
	})
	if _, err := f.syncWith(c, dobj); err != nil {
		t.Fatalf("sync: %v", err)
	}
	deployIndexer := caches.InformerOf[appsv1.Deployment](f.caches).GetIndexer()
	mustAdd(t, deployIndexer, f.storedDeployment().DeepCopy())
	f.clearActions()
	res, err := f.syncWith(c, dobj)
	if err != nil {
		t.Fatalf("second sync: %v", err)
	}
	// The Service's create is not in the fixture's cache: only the
	// Deployment's actions count.
	deploymentActions := func() []core.Action {
		return slices.DeleteFunc(f.writes(), func(a core.Action) bool { return a.GetResource().Resource != "deployments" })
	}
	for _, a := range deploymentActions() {
		t.Errorf("the Deployment admission changed was written again: %s", describe(a))
	}
	if len(res.Actions) != 0 {
		t.Errorf("actions %q, want none", res.Actions)
	}

	// Someone else changes the spec (a new generation): in line again.
	edited := f.storedDeployment().DeepCopy()
	edited.Spec.Template.Spec.Containers[0].Image = "evil:1"
	edited.Generation++
	if err := f.kubeClient.Tracker().Update(deployments, edited, edited.Namespace); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, deployIndexer, edited.DeepCopy())
	f.clearActions()
	if _, err := f.syncWith(c, dobj); err != nil {
		t.Fatalf("third sync: %v", err)
	}
	// The first apply of a created Deployment moves the create's fields
	// first (csaupgrade).
	expectActions(t, deploymentActions(), "get deployments web", "patch deployments web", "patch deployments web")
}

// TestSyncRepairsKeyedListEdits: a container port added by hand (a JSON
// patch) stays beside the controller's under server-side apply, and the
// merge is refused (a port name twice); the controller takes the template
// back whole and reports drift, not InvalidSpec. Had the template itself
// been refused, the spec would be at fault.
func TestSyncRepairsKeyedListEdits(t *testing.T) {
	for _, tc := range []struct {
		name          string
		updateRefused bool
		// reason is the problem's, "" for none; actions tell the event of
		// a repair.
		reason  string
		actions []string
	}{
		{"repaired", false, "", []string{"updated Deployment web"}},
		{"the template itself refused", true, appv1.ReasonInvalidSpec, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			dobj := testobjects.NewDeployObject()
			f.inLine(dobj)
			live := testobjects.LiveDeployment(dobj)
			ports := &live.Spec.Template.Spec.Containers[0].Ports
			*ports = append(*ports, corev1.ContainerPort{Name: (*ports)[0].Name, ContainerPort: 9999})
			f.put(live)
			c := f.newChildren(dobj)
			duplicate := apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web",
				field.ErrorList{field.Duplicate(field.NewPath("spec", "template", "spec", "containers").Index(0).Child("ports").Index(1).Child("name"), (*ports)[0].Name)})
			f.kubeClient.PrependReactor("patch", "deployments", func(a core.Action) (bool, runtime.Object, error) {
				if a.(core.PatchAction).GetPatchType() == types.ApplyPatchType {
					return true, nil, duplicate
				}
				return false, nil, nil
			})
			f.kubeClient.PrependReactor("update", "deployments", func(a core.Action) (bool, runtime.Object, error) {
				sent := a.(core.UpdateAction).GetObject().(*appsv1.Deployment)
				if n := len(sent.Spec.Template.Spec.Containers[0].Ports); n != 1 {
					t.Errorf("the update sends %d container ports, want the template's one", n)
				}
				if tc.updateRefused {
					return true, nil, duplicate
				}
				return false, nil, nil
			})
			res, err := f.syncWith(c, dobj)
			if err != nil {
				t.Fatalf("sync: %v", err)
			}
			expectActions(t, f.writes(), "get deployments web", "patch deployments web", "update deployments web")
			if !slices.Equal(res.Actions, tc.actions) {
				t.Errorf("actions %q, want %q", res.Actions, tc.actions)
			}
			if tc.reason == "" {
				// The fake API server keeps the generation: the status
				// stays as it was.
				if len(res.Outcome.Problems) != 0 {
					t.Errorf("problems %+v, want none", res.Outcome.Problems)
				}
				expectStatusKept(t, dobj, res)
				return
			}
			if p := problemOf(res, "Deployment"); p == nil || p.Reason != tc.reason || len(res.Outcome.Problems) != 1 {
				t.Errorf("problems %+v, want one %s of the Deployment", res.Outcome.Problems, tc.reason)
			}
			if ready := readyOf(t, dobj, res); ready.Reason != tc.reason {
				t.Errorf("Ready = %s %q, want %s", ready.Reason, ready.Message, tc.reason)
			}
		})
	}
}

// TestSyncRestrictedProfileIsABoundary: with --pod-security-profile=
// restricted, a spec that explicitly asks for what Pod Security
// "restricted" forbids is not applied, neither at creation nor as an
// update of a running Deployment, and the reason names the field.
func TestSyncRestrictedProfileIsABoundary(t *testing.T) {
	privileged := func(d *appv1.DeployObject) {
		d.Spec.Sidecars = []corev1.Container{{Name: "proxy", Image: "envoy:1", SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}
	}
	for _, tc := range []struct {
		name string
		live bool
		want []string
	}{
		{"creation", false, []string{"create services web"}},
		{"update", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.podSecurity = children.ProfileRestricted
			dobj := testobjects.NewDeployObject()
			if tc.live {
				f.inLine(dobj)
			}
			privileged(dobj)
			res := f.mustSync(dobj)
			expectActions(t, f.writes(), tc.want...)
			ready := readyOf(t, dobj, res)
			if ready.Reason != appv1.ReasonPodSecurityViolation || !strings.Contains(ready.Message, `container "proxy" must not set securityContext.privileged=true`) {
				t.Errorf("Ready = %s %q, want PodSecurityViolation naming the sidecar's securityContext.privileged", ready.Reason, ready.Message)
			}
			if p := res.Outcome.Problems; len(p) != 1 || p[0].Reason != appv1.ReasonPodSecurityViolation {
				t.Errorf("problems %+v, want one PodSecurityViolation", p)
			}
		})
	}
}

// TestSyncAdoptedDeploymentIsJudgedByItsHash: a new DeployObject has no
// status.deploymentHash yet; the orphan it adopts tells by its annotation
// whether it was last applied from the same spec, and so needs no apply.
func TestSyncAdoptedDeploymentIsJudgedByItsHash(t *testing.T) {
	for _, tc := range []struct {
		name       string
		annotation func(hash string) string
		want       []string
	}{
		{"same spec", func(hash string) string { return hash }, []string{"patch deployments web", "get deployobjects web"}},
		{"another spec", func(string) string { return "0123456789abcdef" }, []string{"patch deployments web", "patch deployments web", "get deployobjects web"}},
		{"no annotation", func(string) string { return "" }, []string{"patch deployments web", "patch deployments web", "get deployobjects web"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			dobj := testobjects.NewDeployObject()
			hash := dobj.Status.DeploymentHash
			dobj.Status = appv1.DeployObjectStatus{}
			d, s := testobjects.LiveDeployment(dobj), testobjects.LiveService(dobj)
			d.OwnerReferences, s.OwnerReferences = nil, nil
			d.Annotations = map[string]string{appv1.AnnotationDeploymentHash: tc.annotation(hash)}
			f.put(d, s)
			res := f.mustSync(dobj)
			writes := slices.DeleteFunc(f.writes(), func(a core.Action) bool { return a.GetResource().Resource == "services" })
			expectActions(t, writes, tc.want...)
			if len(tc.want) == 3 {
				if p := writes[1].(core.PatchAction); p.GetPatchType() != types.ApplyPatchType {
					t.Errorf("second Deployment patch is a %s patch, want server-side apply", p.GetPatchType())
				}
			}
			if got := statusAfter(dobj, res).DeploymentHash; got != hash {
				t.Errorf("status.deploymentHash = %q, want %q", got, hash)
			}
		})
	}
}

// TestSyncFollowsTheAutoscaler: the autoscaler writes spec.replicas through
// the scale subresource (a new generation); the controller passes it on to
// the Deployment and leaves the autoscaler alone.
func TestSyncFollowsTheAutoscaler(t *testing.T) {
	f := newFixture(t)
	dobj := testobjects.NewDeployObject(testobjects.WithAutoscaling)
	f.inLine(dobj, testobjects.LiveHPA(dobj))
	scaled := dobj.DeepCopy()
	scaled.Generation, scaled.Spec.Replicas = 3, ptr.To[int32](4)
	f.mustSync(scaled)
	writes := f.writes()
	expectActions(t, writes, "get deployments web", "patch deployments web")
	if got := appliedDeployment(t, writes[1]).Spec.Replicas; got == nil || *got != 4 {
		t.Errorf("applied replicas = %v, want the autoscaler's 4", got)
	}
}

// TestSyncServiceAccount: what the ServiceAccount of the pods has beyond
// the cases of every kind (TestSyncEachKind): the metadata others added,
// and a rename, which the pods of the older template still run as until
// the Deployment has replaced them all.
func TestSyncServiceAccount(t *testing.T) {
	t.Run("others' annotations and secrets kept, a dropped key removed", func(t *testing.T) {
		f := newFixture(t)
		dobj := testobjects.NewDeployObject(testobjects.WithServiceAccount)
		live := testobjects.LiveServiceAccount(dobj)
		f.inLine(dobj, live)
		live.Annotations["kubernetes.io/enforce-mountable-secrets"] = "true"
		live.Secrets = []corev1.ObjectReference{{Name: "web-token"}}
		dobj.Spec.ServiceAccount.Metadata.Annotations = map[string]string{"iam.gke.io/gcp-service-account": "web@shop.iam.gserviceaccount.com"}
		f.mustSync(dobj)
		writes := f.writes()
		expectActions(t, writes, "get serviceaccounts web", "update serviceaccounts web")
		got := writes[1].(core.UpdateAction).GetObject().(*corev1.ServiceAccount)
		want := map[string]string{
			"kubernetes.io/enforce-mountable-secrets": "true",
			"iam.gke.io/gcp-service-account":          "web@shop.iam.gserviceaccount.com",
			appv1.AnnotationOwnedMetadata:             "a:iam.gke.io/gcp-service-account",
		}
		if !maps.Equal(got.Annotations, want) || len(got.Secrets) != 1 || got.UID != live.UID {
			t.Errorf("updated ServiceAccount: annotations %v, secrets %v, uid %s; want annotations %v, the secret and uid kept", got.Annotations, got.Secrets, got.UID, want)
		}
	})
	// A rename: the pods of the older template run as web until the
	// Deployment has replaced them all.
	renamed := func() (*appv1.DeployObject, *corev1.ServiceAccount) {
		old := testobjects.NewDeployObject(testobjects.WithServiceAccount)
		dobj := testobjects.NewDeployObject(testobjects.WithServiceAccount)
		dobj.Spec.ServiceAccount.Name = "web-v2"
		return dobj, testobjects.LiveServiceAccount(old)
	}
	olderDeployment := func() *appsv1.Deployment {
		return testobjects.LiveDeployment(testobjects.NewDeployObject(testobjects.WithServiceAccount))
	}
	t.Run("renamed: the Deployment still runs as the old one", func(t *testing.T) {
		f := newFixture(t)
		dobj, old := renamed()
		f.inLine(dobj, testobjects.LiveServiceAccount(dobj))
		f.put(olderDeployment(), old)
		f.mustSync(dobj)
		expectActions(t, f.writes(), "get deployments web", "patch deployments web")
	})
	t.Run("renamed: the rollout is not done", func(t *testing.T) {
		for name, st := range map[string]appsv1.DeploymentStatus{
			"older pods run":       {ObservedGeneration: 1, Replicas: 3, UpdatedReplicas: 2},
			"older pods terminate": {ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, TerminatingReplicas: ptr.To[int32](1)},
			"the status lags":      {ObservedGeneration: 0, Replicas: 2, UpdatedReplicas: 2},
		} {
			t.Run(name, func(t *testing.T) {
				f := newFixture(t)
				dobj, old := renamed()
				f.inLine(dobj, testobjects.LiveServiceAccount(dobj))
				rolling := testobjects.LiveDeployment(dobj)
				rolling.Status = st
				f.put(rolling, old)
				f.mustSync(dobj)
				// Nothing is written while pods may run as the old
				// ServiceAccount.
				expectActions(t, f.writes())
			})
		}
	})
	t.Run("renamed: the old one goes after the rollout", func(t *testing.T) {
		f := newFixture(t)
		dobj, old := renamed()
		f.inLine(dobj, testobjects.LiveServiceAccount(dobj))
		f.put(old)
		res := f.mustSync(dobj)
		writes := f.writes()
		expectActions(t, writes, "delete serviceaccounts web")
		if uid := writes[0].(core.DeleteAction).GetDeleteOptions().Preconditions.UID; uid == nil || *uid != old.UID {
			t.Errorf("deleted web with UID precondition %v, want %s", uid, old.UID)
		}
		expectStatusKept(t, dobj, res)
	})
	t.Run("removed, for an existing one: the old one goes after the rollout", func(t *testing.T) {
		f := newFixture(t)
		dobj := testobjects.NewDeployObject()
		dobj.Spec.ServiceAccountName = "shared"
		f.inLine(dobj)
		f.put(testobjects.LiveServiceAccount(testobjects.NewDeployObject(testobjects.WithServiceAccount)))
		res := f.mustSync(dobj)
		expectActions(t, f.writes(), "delete serviceaccounts web")
		expectStatusKept(t, dobj, res)
	})
	t.Run("one it does not own is never taken over, nor run as", func(t *testing.T) {
		// The spec names a ServiceAccount someone else made; the pods
		// keep running as the DeployObject's own until that is resolved.
		f := newFixture(t)
		dobj, old := renamed()
		f.inLine(dobj)
		f.put(olderDeployment(), old)
		foreign := testobjects.LiveServiceAccount(dobj)
		foreign.OwnerReferences, foreign.Labels = nil, nil
		f.unlisted = []runtime.Object{foreign}
		res := f.mustSync(dobj)
		expectActions(t, f.writes(), "create serviceaccounts web-v2", "get serviceaccounts web-v2")
		if p := problemOf(res, children.KindServiceAccount); p == nil || p.Reason != appv1.ReasonResourceConflict || !p.Retry {
			t.Errorf("problem = %+v, want a ResourceConflict retried", p)
		}
		if c := readyOf(t, dobj, res); c.Reason != appv1.ReasonResourceConflict {
			t.Errorf("Ready condition = %+v, want ResourceConflict", c)
		}
	})
	t.Run("an orphaned Deployment's pods keep the old one", func(t *testing.T) {
		f := newFixture(t)
		dobj, old := renamed()
		f.inLine(dobj, testobjects.LiveServiceAccount(dobj))
		f.remove(testobjects.LiveDeployment(dobj))
		f.put(old)
		f.mustSync(dobj)
		expectActions(t, f.writes(), "create deployments web")
	})
}

// TestSyncFiles: what the ConfigMap of inline files has beyond the cases
// of every kind (TestSyncEachKind): a change of content is a new
// ConfigMap, and the older ones go once no pod mounts them and they are
// beyond the history a rollback may need.
func TestSyncFiles(t *testing.T) {
	flags := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "flags", Namespace: testobjects.TestKey.Namespace}, Data: map[string]string{"flags.json": "{}"}}
	t.Run("a change makes a new ConfigMap and keeps the old while it is mounted", func(t *testing.T) {
		f := newFixture(t)
		old := testobjects.NewDeployObject(testobjects.WithFiles)
		dobj := testobjects.NewDeployObject(testobjects.WithFiles)
		dobj.Spec.Files[0].Content = ptr.To("level: debug\n")
		dobj.Spec.RevisionHistoryLimit = ptr.To[int32](0)
		f.inLine(dobj)
		f.put(testobjects.LiveDeployment(old), flags, testobjects.LiveFilesConfigMap(old, 0))
		f.mustSync(dobj)
		name := children.FilesConfigMapName(dobj)
		if name == children.FilesConfigMapName(old) {
			t.Fatalf("the new content is named as the old: %s", name)
		}
		expectActions(t, f.writes(), "create configmaps "+name, "get deployments web", "patch deployments web")
	})
	t.Run("after the rollout, the older beyond the history are deleted", func(t *testing.T) {
		f := newFixture(t)
		older, old := testobjects.NewDeployObject(testobjects.WithFiles), testobjects.NewDeployObject(testobjects.WithFiles)
		older.Spec.Files[0].Content = ptr.To("level: warn\n")
		old.Spec.Files[0].Content = ptr.To("level: error\n")
		dobj := testobjects.NewDeployObject(testobjects.WithFiles)
		dobj.Spec.RevisionHistoryLimit = ptr.To[int32](1)
		oldest := testobjects.LiveFilesConfigMap(older, 0)
		f.inLine(dobj, flags, oldest, testobjects.LiveFilesConfigMap(old, 1), testobjects.LiveFilesConfigMap(dobj, 2))
		// The Deployment keeps one old ReplicaSet, old's.
		f.unlisted = []runtime.Object{testobjects.LiveReplicaSet(old, 2), testobjects.LiveReplicaSet(dobj, 3)}
		res := f.mustSync(dobj)
		writes := f.writes()
		expectActions(t, writes, "delete configmaps "+oldest.Name)
		if uid := writes[0].(core.DeleteAction).GetDeleteOptions().Preconditions.UID; uid == nil || *uid != oldest.UID {
			t.Errorf("deleted %s with UID precondition %v, want %s", oldest.Name, uid, oldest.UID)
		}
		expectStatusKept(t, dobj, res)
	})
	t.Run("one it does not own is never taken over, nor mounted", func(t *testing.T) {
		// The new content's name is taken: the pods keep the old files
		// until that is resolved.
		f := newFixture(t)
		old := testobjects.NewDeployObject(testobjects.WithFiles)
		dobj := testobjects.NewDeployObject(testobjects.WithFiles)
		dobj.Spec.Files[0].Content = ptr.To("level: debug\n")
		f.inLine(dobj)
		foreign := testobjects.LiveFilesConfigMap(dobj, 0)
		foreign.OwnerReferences, foreign.Labels = nil, nil
		f.put(testobjects.LiveDeployment(old), flags, testobjects.LiveFilesConfigMap(old, 0), foreign)
		res := f.mustSync(dobj)
		expectActions(t, f.writes())
		if p := problemOf(res, children.KindFilesConfigMap); p == nil || p.Reason != appv1.ReasonResourceConflict || !p.Retry {
			t.Errorf("problem = %+v, want a ResourceConflict retried", p)
		}
		if c := readyOf(t, dobj, res); c.Reason != appv1.ReasonResourceConflict {
			t.Errorf("Ready condition = %+v, want ResourceConflict", c)
		}
	})
}
