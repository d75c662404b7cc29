package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/caches"
	"deployobject.dev/controller/pkg/canary"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/identity"
)

// The canary (spec.canary): decideCanary gathers what pkg/canary decides
// on and records the decision; the steps carry it out, each on its own
// child: the Deployment held, paused or scaled (deployment.go), the canary
// ReplicaSet (canaryReplicaSet), the stable Service's pin (service), the
// canary Service (canaryService) and the route weights (routes.go).
// DeployObjects without a canary pay for none of it.

// podTemplateHashLabel is the label by which the Deployment controller
// tells its ReplicaSets' pods apart; the canary's pods carry their canary's
// id in it.
const podTemplateHashLabel = appsv1.DefaultDeploymentUniqueLabelKey

// kindCanaryService names the canary Service's problems.
const kindCanaryService = "canary Service"

// decideCanary decides the canary's step from live, the Deployment dobj
// controls as cached (nil for none), and desired, the Deployment its spec
// asks for, and records the decision, its events and its timer.
func (p *pass) decideCanary(ctx context.Context, live, desired *appsv1.Deployment) error {
	dobj := p.dobj
	if dobj.Spec.Canary == nil && dobj.Status.Canary == nil {
		return nil
	}
	revision, templateHash, err := children.TemplateHashes(desired, &dobj.Spec)
	if err != nil {
		return err
	}
	in := canary.Input{
		Now:      p.now(),
		Spec:     dobj.Spec.Canary,
		Revision: revision,
		Mode:     appv1.CanaryModeReplicaRatio,
		Status:   dobj.Status.Canary,
		Ops:      canary.OpsFrom(dobj.Annotations),
	}
	if children.WantsGatewayRoute(dobj) {
		in.Mode = appv1.CanaryModeRoute
	}
	if live != nil {
		in.Stable = stableOf(dobj, live)
		in.TemplateChange = live.Annotations[appv1.AnnotationTemplateHash] != templateHash
		if in.Status == nil && in.Spec != nil && in.TemplateChange && revision != in.Stable.Revision && in.Stable.Complete {
			if in.Stable.PodTemplateHash, err = p.stablePodTemplateHash(ctx, live); err != nil {
				return err
			}
			// Without the stable pods' hash the stable Service could not be
			// kept from the canary's pods: wait for the rollout to settle.
			in.Stable.Complete = in.Stable.PodTemplateHash != ""
		}
	}
	if in.Status != nil {
		if err := p.canaryObserved(ctx, &in, live); err != nil {
			return err
		}
	}
	if in.Mode == appv1.CanaryModeRoute {
		in.Route = canary.Route{Weight: p.liveCanaryWeight(), Accepted: p.gatewayRouteAccepted()}
	}
	decision := canary.Decide(in)
	p.canaryDecision, p.canaryStable = decision, in.Stable
	p.canaryHeld = decision.Hold && in.TemplateChange
	p.out.Canary, p.out.CanaryWaiting = decision.Status, decision.Waiting
	p.result.Events = append(p.result.Events, decision.Events...)
	p.after(decision.After)
	return nil
}

// canaryObserved fills in what the canary's ReplicaSet and pods show.
func (p *pass) canaryObserved(ctx context.Context, in *canary.Input, live *appsv1.Deployment) error {
	dobj, st := p.dobj, in.Status
	rs, err := caches.ListerOf[appsv1.ReplicaSet](p.Caches).In(dobj.Namespace)(children.CanaryReplicaSetName(dobj, st.ID))
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("reading the canary ReplicaSet from cache: %w", err)
	case metav1.IsControlledBy(rs, dobj):
		in.Canary = &canary.ReplicaSet{Replicas: ptr.Deref(rs.Spec.Replicas, 1), Available: rs.Status.AvailableReplicas}
		if st.Phase == appv1.CanaryPromoting && live != nil && live.Spec.Paused && in.Stable.Revision == st.Revision {
			if in.Canary.TemplateMatches, err = p.canaryTemplateMatches(ctx, rs.Name); err != nil {
				return err
			}
		}
	}
	watched := st.Phase == appv1.CanaryProgressing || st.Phase == appv1.CanaryPaused
	if spec := in.Spec; !watched || spec == nil || spec.AutoAbort == nil || (spec.AutoAbort.MaxRestarts == nil && spec.AutoAbort.NotReadySeconds == nil) {
		return nil
	}
	// The pods are read only while a canary's restarts or readiness are
	// watched; the controller keeps no cache of pods.
	pods, err := p.KubeClient.CoreV1().Pods(dobj.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector:   labels.Set{appv1.LabelName: dobj.Name, podTemplateHashLabel: st.ID}.String(),
		ResourceVersion: "0",
	})
	if err != nil {
		return fmt.Errorf("listing the canary's pods: %w", err)
	}
	in.Pods = canary.PodsOf(pods.Items, in.Now)
	return nil
}

// stableOf is the Deployment the canary runs beside.
func stableOf(dobj *appv1.DeployObject, d *appsv1.Deployment) canary.Stable {
	replicas := max(ptr.Deref(d.Spec.Replicas, 1), ptr.Deref(dobj.Spec.Replicas, 1))
	failed := children.RolloutFailed(d)
	surge := intstr.FromString("25%")
	if s := d.Spec.Strategy.RollingUpdate; s != nil && s.MaxSurge != nil {
		surge = *s.MaxSurge
	}
	maxSurge, err := intstr.GetScaledValueFromIntOrPercent(&surge, int(replicas), true)
	if err != nil {
		maxSurge = 0
	}
	return canary.Stable{
		Exists:    true,
		Revision:  d.Annotations[appv1.AnnotationPodSpecHash],
		Replicas:  replicas,
		Available: d.Status.AvailableReplicas,
		MaxSurge:  int32(maxSurge),
		Complete:  !failed && children.RolloutDone(d) && ptr.Deref(d.Status.TerminatingReplicas, 0) == 0,
		Failed:    failed,
		Paused:    d.Spec.Paused,
	}
}

// stablePodTemplateHash is the pod-template-hash of the one ReplicaSet of
// live that has pods, read once when a canary starts; "" when there is not
// exactly one.
func (p *pass) stablePodTemplateHash(ctx context.Context, live *appsv1.Deployment) (string, error) {
	replicaSets, err := p.replicaSets(ctx)
	if err != nil {
		return "", err
	}
	hash := ""
	for _, rs := range replicaSets {
		if !metav1.IsControlledBy(rs, live) || ptr.Deref(rs.Spec.Replicas, 0) == 0 {
			continue
		}
		if hash != "" {
			return "", nil
		}
		hash = rs.Labels[podTemplateHashLabel]
	}
	return hash, nil
}

// canaryTemplateMatches reports whether the canary ReplicaSet name's pod
// template equals the Deployment's but for the pod-template-hash label, as
// the Deployment controller compares them when it looks for its new
// ReplicaSet. Both are read from the API server, with every field the
// caches drop; this happens once per promotion.
func (p *pass) canaryTemplateMatches(ctx context.Context, name string) (bool, error) {
	dobj := p.dobj
	rs, err := p.KubeClient.AppsV1().ReplicaSets(dobj.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Errorf("reading the canary ReplicaSet %s: %w", name, err)
	}
	d, err := p.KubeClient.AppsV1().Deployments(dobj.Namespace).Get(ctx, dobj.Name, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Errorf("reading Deployment %s: %w", dobj.Name, err)
	}
	a, b := rs.Spec.Template.DeepCopy(), d.Spec.Template.DeepCopy()
	delete(a.Labels, podTemplateHashLabel)
	delete(b.Labels, podTemplateHashLabel)
	return equality.Semantic.DeepEqual(a, b), nil
}

// canaryWeight is the canary's weight the routes carry: the decision's,
// but never more than the live one while the canary Service has a
// problem, such as a foreign Service of its name: traffic is not sent to
// a Service that is not the DeployObject's. The step then waits, up to its
// progress deadline.
func (p *pass) canaryWeight() *int32 {
	w := p.canaryDecision.Weight
	if w == nil || !slices.ContainsFunc(p.out.Problems, func(pr children.Problem) bool { return pr.Kind == kindCanaryService }) {
		return w
	}
	live := p.liveCanaryWeight()
	if live == nil {
		return nil
	}
	return ptr.To(min(*w, *live))
}

// liveCanaryWeight is the canary's weight in dobj's cached route; nil when
// it has no canary backend or the route is not cached.
func (p *pass) liveCanaryWeight() *int32 {
	dobj := p.dobj
	if children.WantsGRPCRoute(dobj) {
		if routes := p.Gateway.GRPCRoutes(); routes != nil {
			if r, err := routes.GRPCRoutes(dobj.Namespace).Get(dobj.Name); err == nil && metav1.IsControlledBy(r, dobj) {
				return children.GRPCRouteCanaryWeight(r, dobj)
			}
		}
		return nil
	}
	if routes := p.Gateway.Routes(); routes != nil {
		if r, err := routes.HTTPRoutes(dobj.Namespace).Get(dobj.Name); err == nil && metav1.IsControlledBy(r, dobj) {
			return children.HTTPRouteCanaryWeight(r, dobj)
		}
	}
	return nil
}

// canaryReplicaSet brings the canary ReplicaSet in line with the decision,
// hands it over to the Deployment at promotion, and deletes every other
// canary ReplicaSet dobj controls (of earlier attempts or revisions), and
// its own too when its template breaks --pod-security-profile: the canary
// then has no pods, and its step aborts at its progress deadline.
func (p *pass) canaryReplicaSet(ctx context.Context) error {
	dobj, d := p.dobj, p.canaryDecision
	ns := dobj.Namespace
	client := p.KubeClient.AppsV1().ReplicaSets(ns)
	current := ""
	if d.Status != nil && d.CanaryReplicas != nil && !p.templateRefused {
		current = children.CanaryReplicaSetName(dobj, d.Status.ID)
		if d.HandOver {
			action, err := p.handOver(ctx, current)
			return p.record(children.KindCanaryReplicaSet, action, err)
		}
		desired := children.DesiredCanaryReplicaSet(dobj, p.canaryTemplate, d.Status.ID, *d.CanaryReplicas)
		_, action, err := children.Sync(ctx, dobj, desired,
			children.UpdatedOps(children.KindCanaryReplicaSet, caches.ListerOf[appsv1.ReplicaSet](p.Caches).In(ns), client, children.MergeCanaryReplicaSet, p.recheckOwner))
		if err := p.record(children.KindCanaryReplicaSet, action, err); err != nil {
			return err
		}
	}
	owned, err := caches.ListerOf[appsv1.ReplicaSet](p.Caches).ControlledBy(ns, dobj.Name)
	if err != nil {
		return err
	}
	var others []*appsv1.ReplicaSet
	for _, rs := range owned {
		if rs.Name != current {
			others = append(others, rs)
		}
	}
	return deleteChildren(ctx, children.KindCanaryReplicaSet, others, client.Delete, p.record)
}

// handOver releases the canary ReplicaSet name to the Deployment, which
// then adopts it as its new ReplicaSet, its pods running on: it leaves the
// controller's cache (without the canary label) and its ownerReference to
// the DeployObject stays, no longer as controller, so that it is garbage
// collected with the DeployObject until the Deployment adopts it. The
// Deployment controller's scaling annotations make it count the canary's
// pods as the rollout's first (see docs/progressive-delivery.md).
func (p *pass) handOver(ctx context.Context, name string) (string, error) {
	dobj, stable := p.dobj, p.canaryStable
	rs, err := caches.ListerOf[appsv1.ReplicaSet](p.Caches).In(dobj.Namespace)(name)
	if err != nil {
		return "", fmt.Errorf("reading the canary ReplicaSet %s from cache: %w", name, err)
	}
	owners := make([]metav1.OwnerReference, len(rs.OwnerReferences))
	for i, ref := range rs.OwnerReferences {
		owners[i] = ref
		if ref.UID == dobj.UID {
			owners[i].Controller = nil
		}
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":             rs.UID,
		"resourceVersion": rs.ResourceVersion,
		"labels":          map[string]any{appv1.LabelCanary: nil},
		"ownerReferences": owners,
		"annotations": map[string]string{
			"deployment.kubernetes.io/desired-replicas": strconv.Itoa(int(stable.Replicas)),
			"deployment.kubernetes.io/max-replicas":     strconv.Itoa(int(stable.Replicas + stable.MaxSurge)),
		},
	}})
	if err != nil {
		return "", err
	}
	if _, err := p.KubeClient.AppsV1().ReplicaSets(dobj.Namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: identity.FieldManager}); err != nil {
		return "", fmt.Errorf("handing the canary ReplicaSet %s over to Deployment %s: %w", name, dobj.Name, err)
	}
	return "handed ReplicaSet " + name + " over to Deployment " + dobj.Name, nil
}

// canaryService keeps the canary Service while the decision asks for it.
func (p *pass) canaryService(ctx context.Context) error {
	dobj, d := p.dobj, p.canaryDecision
	ns := dobj.Namespace
	id := ""
	if d.Status != nil {
		id = d.Status.ID
	}
	_, action, err := children.SyncOptionalNamed(ctx, dobj, children.CanaryServiceName(dobj), d.CanaryService && d.Status != nil, children.DesiredCanaryService(dobj, id),
		children.ServiceOps(caches.ListerOf[corev1.Service](p.Caches).In(ns), p.KubeClient.CoreV1().Services(ns), p.recheckOwner))
	// Its problems are told apart from the stable Service's.
	return p.record(kindCanaryService, action, err)
}
