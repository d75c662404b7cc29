package children

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/csaupgrade"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/identity"
)

// The Deployment: what the controller asks of it, how it judges the live one
// in line, the body of its server-side apply, and what the cache keeps.
//
// The controller owns the fields the spec sets, and only those. It creates
// the Deployment with a create request, which fails if anything of that
// name exists, so that it never takes over a foreign object; afterwards it
// brings the Deployment in line with server-side apply, so that the API
// server, which records in managedFields which fields the controller set,
// removes those the spec no longer sets and keeps everyone else's
// (annotations, `kubectl rollout restart`, containers others add).
//
// Deciding whether to write needs no model of the server's defaulting: a
// live Deployment is in line when it holds every value desired sets
// (covers) and desired is the one last applied, which status.deploymentHash
// records. A spec change that only removes a field changes the hash.

// DesiredDeployment is the Deployment dobj asks for, holding only the
// fields the spec sets.
func DesiredDeployment(dobj *appv1.DeployObject, profile PodSecurityProfile) *appsv1.Deployment {
	replicas := int32(1)
	if dobj.Spec.Replicas != nil {
		replicas = *dobj.Spec.Replicas
	}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: childMeta(dobj),
		Spec: appsv1.DeploymentSpec{
			Replicas:                &replicas,
			Selector:                &metav1.LabelSelector{MatchLabels: SelectorLabels(dobj)},
			Template:                DesiredPodTemplate(dobj, profile),
			Strategy:                derefCopy(dobj.Spec.Strategy),
			MinReadySeconds:         dobj.Spec.MinReadySeconds,
			ProgressDeadlineSeconds: copyPtr(dobj.Spec.ProgressDeadlineSeconds),
			RevisionHistoryLimit:    copyPtr(dobj.Spec.RevisionHistoryLimit),
		},
	}
}

func derefCopy(s *appsv1.DeploymentStrategy) appsv1.DeploymentStrategy {
	if s == nil {
		return appsv1.DeploymentStrategy{}
	}
	return *s.DeepCopy()
}

// DeploymentInSync reports whether live holds every value desired sets. The
// selector is not compared: it is immutable and made from the name.
func DeploymentInSync(live, desired *appsv1.Deployment) bool {
	if !HasLabels(live.Labels, desired.Labels) ||
		live.Spec.Replicas == nil || *live.Spec.Replicas != *desired.Spec.Replicas {
		return false
	}
	want := desired.Spec
	want.Replicas, want.Selector = nil, nil
	if live.Spec.Template.Spec.DNSPolicy == "" && want.Template.Spec.DNSPolicy == corev1.DNSClusterFirst {
		// The cache drops the default (see slimPodSpec); a Deployment
		// from the API server always has one.
		want.Template.Spec.DNSPolicy = ""
	}
	return Covers(live.Spec, want)
}

// deploymentHash identifies desired apart from its owner, so that a
// Deployment orphaned by one DeployObject is found in line by the next one of
// the same spec. The controller records it in the status once the Deployment
// is in line, and applies again when it changes.
func deploymentHash(desired *appsv1.Deployment) (string, error) {
	d := *desired
	d.OwnerReferences, d.Annotations = nil, nil
	hash, err := desiredHash(&d)
	if err != nil {
		return "", fmt.Errorf("hashing the desired Deployment: %w", err)
	}
	return hash, nil
}

// StampedDeployment is desired with its hash: in the annotation the
// Deployment carries, and returned for the status. Annotations are not
// part of the hash.
func StampedDeployment(desired *appsv1.Deployment) (*appsv1.Deployment, string, error) {
	hash, err := deploymentHash(desired)
	if err != nil {
		return nil, "", err
	}
	desired.Annotations = map[string]string{appv1.AnnotationDeploymentHash: hash}
	return desired, hash, nil
}

// StampTemplateHashes adds to desired, built from spec, what spec asks of
// the pod template (appv1.AnnotationPodSpecHash) and the hash of the
// template itself (appv1.AnnotationTemplateHash), which tell a rollout the
// spec asked for from one it did not, and both from drift. They cost two
// hashes, so they are made only when a write may come or the template may
// have changed, never in a steady-state sync; once made, again is free.
func StampTemplateHashes(desired *appsv1.Deployment, spec *appv1.DeployObjectSpec) error {
	if _, done := desired.Annotations[appv1.AnnotationTemplateHash]; done {
		return nil
	}
	podSpecHash, templateHash, err := TemplateHashes(desired, spec)
	if err != nil {
		return err
	}
	desired.Annotations[appv1.AnnotationPodSpecHash] = podSpecHash
	desired.Annotations[appv1.AnnotationTemplateHash] = templateHash
	return nil
}

// TemplateHashes are the revision of desired's pod template (what spec
// asks of it, appv1.AnnotationPodSpecHash) and the hash of the template
// itself (appv1.AnnotationTemplateHash), as StampTemplateHashes would stamp
// them, for a canary to compare with the live Deployment's.
func TemplateHashes(desired *appsv1.Deployment, spec *appv1.DeployObjectSpec) (revision, template string, err error) {
	if revision, err = podSpecHash(spec); err != nil {
		return "", "", err
	}
	if template, err = desiredHash(&desired.Spec.Template); err != nil {
		return "", "", fmt.Errorf("hashing the desired pod template: %w", err)
	}
	return revision, template, nil
}

// podSpecHash identifies what spec asks of the pod template: the spec
// without the fields that shape only the other children or the Deployment
// around its template (replicas, strategy, canary). It is the canary's
// revision too, so adding or changing spec.canary starts no canary.
func podSpecHash(spec *appv1.DeployObjectSpec) (string, error) {
	s := *spec
	s.Replicas, s.ServiceType, s.DisruptionBudget, s.Autoscaling, s.Route, s.Canary = nil, "", nil, nil, nil, nil
	s.RolloutSpec = appv1.RolloutSpec{}
	hash, err := desiredHash(&s)
	if err != nil {
		return "", fmt.Errorf("hashing the pod template's part of the spec: %w", err)
	}
	return hash, nil
}

// RolloutFailed reports whether the Deployment gave up its rollout: its
// Progressing condition says ProgressDeadlineExceeded.
func RolloutFailed(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
			return true
		}
	}
	return false
}

// RolloutDone reports whether the Deployment has rolled out its current
// template, or has given up (ProgressDeadlineExceeded): either way its
// rollout no longer counts against the limit.
func RolloutDone(d *appsv1.Deployment) bool {
	if RolloutFailed(d) {
		return true
	}
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	return d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas >= replicas &&
		d.Status.Replicas <= d.Status.UpdatedReplicas && d.Status.AvailableReplicas >= replicas
}

// HeldPatch is the merge patch that changes what may change of live while
// its template is held (by the rollout limit or a canary), or nil when
// nothing needs to: its replicas become desired's, since scaling never
// waits; with resume, a pause is taken back (spec.paused removed), as a
// canary's promotion must whatever the spec asks meanwhile.
func HeldPatch(live, desired *appsv1.Deployment, resume bool) []byte {
	var fields []string
	if desired.Spec.Replicas != nil && (live.Spec.Replicas == nil || *live.Spec.Replicas != *desired.Spec.Replicas) {
		fields = append(fields, fmt.Sprintf(`"replicas":%d`, *desired.Spec.Replicas))
	}
	if resume && live.Spec.Paused {
		fields = append(fields, `"paused":null`)
	}
	if len(fields) == 0 {
		return nil
	}
	return []byte(`{"spec":{` + strings.Join(fields, ",") + `}}`)
}

// DeploymentApplied reports whether live is in line with desired, whose
// hash is hash: it holds every value desired sets, and desired is what was
// last applied, as recorded in the status (lastHash) or, on a Deployment
// read from the API server rather than the cache, in its annotation.
func DeploymentApplied(live, desired *appsv1.Deployment, hash, lastHash string) bool {
	return (lastHash == hash || live.Annotations[appv1.AnnotationDeploymentHash] == hash) && DeploymentInSync(live, desired)
}

// deploymentApplyBody is the server-side apply request that makes the
// controller's fields of the Deployment those of desired, on condition that
// the Deployment is still at resourceVersion: had it been replaced
// meanwhile, by anyone, the request fails with a conflict rather than
// taking over the new object's fields.
func deploymentApplyBody(desired *appsv1.Deployment, resourceVersion string) ([]byte, error) {
	obj, err := applyFields(desired)
	if err != nil {
		return nil, fmt.Errorf("building the Deployment's apply request: %w", err)
	}
	obj["metadata"].(map[string]any)["resourceVersion"] = resourceVersion
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("building the Deployment's apply request: %w", err)
	}
	return data, nil
}

// applyFields is obj as JSON, without what a typed object writes for fields
// it does not set: nulls, a status, and empty structs such as strategy: {}
// and resources: {}. The controller would otherwise claim them in
// managedFields. An empty emptyDir is a value and stays.
func applyFields(obj any) (map[string]any, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	delete(out, "status")
	pruneUnset(out)
	return out, nil
}

func pruneUnset(m map[string]any) {
	for k, v := range m {
		switch v := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			pruneUnset(v)
			if len(v) == 0 && k != "emptyDir" {
				delete(m, k)
			}
		case []any:
			for _, e := range v {
				if em, ok := e.(map[string]any); ok {
					pruneUnset(em)
				}
			}
		}
	}
}

// The cache keeps of a Deployment, packed (see pkg/caches/packed.go), the fields
// DeploymentInSync compares, the annotations the rollout limit reads and
// the status status.ReadyCondition reads.
func SlimDeployment(d *appsv1.Deployment) *appsv1.Deployment {
	d.ObjectMeta = SlimMetaKeeping(d.ObjectMeta, appv1.AnnotationPodSpecHash, appv1.AnnotationTemplateHash, appv1.AnnotationLimitedRollout)
	spec := d.Spec
	d.Spec = appsv1.DeploymentSpec{
		Replicas:                spec.Replicas,
		Paused:                  spec.Paused,
		Strategy:                spec.Strategy,
		MinReadySeconds:         spec.MinReadySeconds,
		ProgressDeadlineSeconds: spec.ProgressDeadlineSeconds,
		RevisionHistoryLimit:    spec.RevisionHistoryLimit,
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: spec.Template.Labels, Annotations: spec.Template.Annotations},
			Spec:       slimPodSpec(spec.Template.Spec),
		},
	}
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Status.ObservedGeneration,
		Replicas:           d.Status.Replicas,
		UpdatedReplicas:    d.Status.UpdatedReplicas,
		ReadyReplicas:      d.Status.ReadyReplicas,
		AvailableReplicas:  d.Status.AvailableReplicas,
		// Pods still terminating may still use the ServiceAccount and the
		// files of an older template (see OlderPodsGone).
		TerminatingReplicas: d.Status.TerminatingReplicas,
		Conditions:          readConditions(d.Status.Conditions),
	}
	return d
}

// slimPodSpec keeps the fields a DeployObject can set.
func slimPodSpec(p corev1.PodSpec) corev1.PodSpec {
	return corev1.PodSpec{
		Volumes:                       p.Volumes,
		InitContainers:                p.InitContainers,
		Containers:                    p.Containers,
		TerminationGracePeriodSeconds: p.TerminationGracePeriodSeconds,
		NodeSelector:                  p.NodeSelector,
		ServiceAccountName:            p.ServiceAccountName,
		DeprecatedServiceAccount:      p.DeprecatedServiceAccount,
		AutomountServiceAccountToken:  p.AutomountServiceAccountToken,
		SecurityContext:               p.SecurityContext,
		ImagePullSecrets:              p.ImagePullSecrets,
		Affinity:                      p.Affinity,
		Tolerations:                   p.Tolerations,
		PriorityClassName:             p.PriorityClassName,
		TopologySpreadConstraints:     p.TopologySpreadConstraints,
		Resources:                     p.Resources,
		RuntimeClassName:              p.RuntimeClassName,
		HostAliases:                   p.HostAliases,
		DNSPolicy:                     withoutDefaultDNSPolicy(p.DNSPolicy),
		DNSConfig:                     p.DNSConfig,
		ShareProcessNamespace:         p.ShareProcessNamespace,
		EnableServiceLinks:            p.EnableServiceLinks,
	}
}

// withoutDefaultDNSPolicy is policy, or "" for ClusterFirst, which the API
// server gives every pod template that sets none. Keeping it would cost
// every cached Deployment 14 bytes, and at 10,000 DeployObjects those bytes
// moved the packed Deployment into the next allocation size class: 128
// bytes each (BenchmarkCachedFootprint).
func withoutDefaultDNSPolicy(policy corev1.DNSPolicy) corev1.DNSPolicy {
	if policy == corev1.DNSClusterFirst {
		return ""
	}
	return policy
}

// readConditions keeps the conditions status.ReadyCondition reads, and only while
// they say something is wrong: ReplicaFailure when True, Progressing when
// False. Most Deployments keep none.
func readConditions(conds []appsv1.DeploymentCondition) []appsv1.DeploymentCondition {
	var kept []appsv1.DeploymentCondition
	for _, c := range conds {
		if (c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue) ||
			(c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse) {
			kept = append(kept, appsv1.DeploymentCondition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message})
		}
	}
	return kept
}

// deploymentWriter is the part of the Deployments client ApplyDeployment
// uses.
type deploymentWriter interface {
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*appsv1.Deployment, error)
	Update(ctx context.Context, d *appsv1.Deployment, opts metav1.UpdateOptions) (*appsv1.Deployment, error)
}

// ApplyDeployment brings live in line with desired by server-side apply,
// at live's resourceVersion. The controller creates Deployments with a
// create request, which records its fields as set by an update; they are
// first moved to its apply entry in managedFields, once per Deployment, so
// that a field the spec no longer sets is removed rather than kept as the
// create's.
func ApplyDeployment(ctx context.Context, deployments deploymentWriter, live, desired *appsv1.Deployment) (*appsv1.Deployment, error) {
	migration, err := csaupgrade.UpgradeManagedFieldsPatch(live, sets.New(identity.FieldManager), identity.FieldManager)
	if err != nil {
		return nil, fmt.Errorf("moving the fields of the create to server-side apply: %w", err)
	}
	if migration != nil {
		if live, err = deployments.Patch(ctx, live.Name, types.JSONPatchType, migration, metav1.PatchOptions{}); err != nil {
			return nil, fmt.Errorf("moving the fields of the create to server-side apply: %w", err)
		}
	}
	body, err := deploymentApplyBody(desired, live.ResourceVersion)
	if err != nil {
		return nil, err
	}
	applied, err := deployments.Patch(ctx, live.Name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: identity.FieldManager, Force: ptr.To(true)})
	if !apierrors.IsInvalid(err) {
		return applied, err
	}
	// An apply merges keyed lists: items someone else added by hand (a
	// container port by JSON patch) stay beside the controller's, and the
	// merge can be invalid (a port name twice) where the desired Deployment
	// is not. Take the pod template back whole; if that is refused too, the
	// spec itself is at fault.
	taken := live.DeepCopy()
	taken.Spec.Template = desired.Spec.Template
	taken.Spec.Replicas = desired.Spec.Replicas
	if taken.Annotations == nil {
		taken.Annotations = map[string]string{}
	}
	maps.Copy(taken.Annotations, desired.Annotations)
	if taken, err = deployments.Update(ctx, taken, metav1.UpdateOptions{FieldManager: identity.FieldManager}); err != nil {
		return nil, err
	}
	return taken, nil
}

// AdmittedWrites remembers what admission made of the controller's last
// write of a Deployment, when that differs from what was written: a
// mutating webhook or policy that injects a toleration or pins an image to
// a digest, or an API server that drops a field its feature gates do not
// serve. Such a Deployment never looks in line with the desired one, and
// without this every resync would apply it again, to the same result. It
// stays in line while the desired state keeps its hash and nobody else
// changes the Deployment's spec (its generation). Entries exist only for
// such Deployments; a restart costs each one write to learn it again.
type AdmittedWrites struct {
	mu sync.Mutex
	m  map[cache.ObjectName]admittedWrite
}

type admittedWrite struct {
	hash       string
	generation int64
}

// NewAdmittedWrites remembers nothing yet.
func NewAdmittedWrites() *AdmittedWrites {
	return &AdmittedWrites{m: map[cache.ObjectName]admittedWrite{}}
}

// Record notes the Deployment written from desired, whose hash is hash,
// as the API server returned it: remembered when admission changed it,
// forgotten otherwise.
func (a *AdmittedWrites) Record(key cache.ObjectName, hash string, written, desired *appsv1.Deployment) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if DeploymentInSync(written, desired) {
		delete(a.m, key)
		return
	}
	a.m[key] = admittedWrite{hash: hash, generation: written.Generation}
}

// Admitted reports whether live is what admission made of the last write
// of the desired Deployment whose hash is hash.
func (a *AdmittedWrites) Admitted(key cache.ObjectName, hash string, live *appsv1.Deployment) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	w, ok := a.m[key]
	return ok && w.hash == hash && w.generation == live.Generation
}

// Forget drops key, a DeployObject that no longer exists.
func (a *AdmittedWrites) Forget(key cache.ObjectName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.m, key)
}
