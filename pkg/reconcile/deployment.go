package reconcile

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/caches"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/configrollout"
	"deployobject.dev/controller/pkg/identity"
	"deployobject.dev/controller/pkg/status"
)

// The pods cannot run before the ServiceAccount they run as and the
// ConfigMap of their inline files exist: while either could not be made,
// the Deployment is left as it is (prerequisite), so that its running pods
// are not replaced by pods that cannot start, or that run as a
// ServiceAccount someone else owns. The ones the spec stopped asking for go
// only after the Deployment's rollout (superseded).

func (p *pass) serviceAccount(ctx context.Context) error {
	if !children.WantsServiceAccount(p.dobj) {
		return nil
	}
	ns := p.dobj.Namespace
	var action string
	var err error
	p.out.ServiceAccount, action, err = children.Sync(ctx, p.dobj, children.DesiredServiceAccount(p.dobj),
		children.UpdatedOps(children.KindServiceAccount, caches.ListerOf[corev1.ServiceAccount](p.Caches).In(ns), p.KubeClient.CoreV1().ServiceAccounts(ns), children.MergeServiceAccount, p.recheckOwner))
	if err := p.record(children.KindServiceAccount, action, err); err != nil {
		return err
	}
	if p.out.ServiceAccount == nil {
		p.prerequisite = children.KindServiceAccount + " " + children.PodServiceAccountName(p.dobj)
	}
	return nil
}

func (p *pass) files(ctx context.Context) error {
	desired := children.DesiredFilesConfigMap(p.dobj)
	if desired == nil {
		return nil
	}
	ns := p.dobj.Namespace
	p.filesName = desired.Name
	files, action, err := children.Sync(ctx, p.dobj, desired,
		children.UpdatedOps(children.KindFilesConfigMap, caches.ListerOf[corev1.ConfigMap](p.Caches).In(ns), p.KubeClient.CoreV1().ConfigMaps(ns), children.MergeFilesConfigMap, p.recheckOwner))
	if err := p.record(children.KindFilesConfigMap, action, err); err != nil {
		return err
	}
	if files == nil {
		p.prerequisite = children.KindFilesConfigMap + " " + desired.Name
	}
	return nil
}

// deployment brings the Deployment in line with the spec and the
// configuration its pods use, unless what the pods need is missing (see
// prerequisite) or it is held (see hold).
func (p *pass) deployment(ctx context.Context) error {
	dobj := p.dobj
	cfg, err := configrollout.StateOf(dobj.Namespace, p.Rollouts.RefsOf(dobj), p.Rollouts.Lookup)
	if err != nil {
		return err
	}
	desired := children.DesiredDeployment(dobj, p.PodSecurity)
	if configrollout.Enabled(dobj) {
		configrollout.WithHash(&desired.Spec.Template, cfg.Hash)
	}
	p.cachedDeployment, p.cachedErr = caches.ListerOf[appsv1.Deployment](p.Caches).In(dobj.Namespace)(dobj.Name)
	var live *appsv1.Deployment
	if p.cachedControlled() {
		live = p.cachedDeployment
	}
	if err := p.decideCanary(ctx, live, desired); err != nil {
		return err
	}
	p.canaryTemplate = desired.Spec.Template
	if p.canaryDecision.Pause {
		desired.Spec.Paused = true
	}
	if p.canaryDecision.KeepReplicas && live != nil && live.Spec.Replicas != nil && *live.Spec.Replicas > *desired.Spec.Replicas {
		// An autoscaler's scale-down waits for the canary's end.
		p.out.CanaryScaleDown = &status.ScaleDown{To: *desired.Spec.Replicas, Kept: *live.Spec.Replicas}
		desired.Spec.Replicas = ptr.To(*live.Spec.Replicas)
	}
	desired, hash, err := children.StampedDeployment(desired)
	if err != nil {
		return err
	}
	if p.prerequisite != "" {
		klog.FromContext(ctx).V(2).Info("The Deployment waits for what its pods need", "missing", p.prerequisite)
		if p.cachedControlled() {
			p.out.Deployment = p.cachedDeployment
		}
		return nil
	}
	held, err := p.hold(ctx, desired, cfg)
	if err != nil || held {
		return err
	}
	return p.syncDeployment(ctx, desired, hash)
}

// cachedControlled reports whether the cache holds a Deployment dobj
// controls.
func (p *pass) cachedControlled() bool {
	return p.cachedErr == nil && metav1.IsControlledBy(p.cachedDeployment, p.dobj)
}

// hold decides whether the Deployment must not be written now, and records
// why in out: a template that breaks --pod-security-profile, or what
// pkg/configrollout decides (see configrollout.Gate), whose scale and
// later sync it carries out. The Deployment as the cache shows it still
// tells the status.
func (p *pass) hold(ctx context.Context, desired *appsv1.Deployment, cfg configrollout.State) (bool, error) {
	dobj := p.dobj
	live := p.cachedDeployment
	switch err := p.cachedErr; {
	case apierrors.IsNotFound(err):
		live = nil
	case err != nil:
		return false, fmt.Errorf("reading Deployment %s from cache: %w", dobj.Name, err)
	case !metav1.IsControlledBy(live, dobj):
		// Adoption or a conflict: children.Sync knows what to do.
		live = nil
	}
	if p.PodSecurityCheck != nil {
		if violations := p.PodSecurityCheck(&desired.Spec.Template); len(violations) > 0 {
			p.templateRefused = true
			p.out.Deployment = live
			p.out.Problems = append(p.out.Problems, children.Problem{Kind: "Deployment", Reason: appv1.ReasonPodSecurityViolation, Message: children.PodSecurityMessage(violations)})
			return true, nil
		}
	}
	if p.canaryHeld && live != nil {
		// The canary keeps the stable template, or the promoted one once
		// the promotion applied it: then the pause the promotion set is
		// taken back as soon as the promotion no longer needs it, even
		// though the spec asks for another template meanwhile.
		d := p.canaryDecision
		resume := !d.Pause && d.Status != nil && d.Status.Phase == appv1.CanaryPromoting
		return true, p.scaleHeld(ctx, live, desired, resume, "beside its canary")
	}
	gate, err := p.Rollouts.Decide(cache.MetaObjectToName(dobj), dobj, live, desired, cfg)
	if err != nil {
		return false, err
	}
	p.after(gate.After)
	switch {
	case gate.Missing:
		p.out.Deployment = live
		p.out.Problems = append(p.out.Problems, children.Problem{Kind: "Deployment", Reason: appv1.ReasonConfigMissing, Message: configrollout.MissingMessage(cfg.Missing)})
		// Reconciling until the grace is over, then Stalled.
		p.out.ConfigMissingGrace = gate.After > 0
	case gate.Pending:
		klog.FromContext(ctx).V(2).Info("Rollout not asked for by the spec waits for a slot")
		p.out.ConfigPending = true
		if err := p.scaleHeld(ctx, live, desired, false, "while its rollout waits"); err != nil {
			return true, err
		}
	case gate.Limited:
		p.out.ConfigRollout = true
		desired.Annotations[appv1.AnnotationLimitedRollout] = "true"
	}
	return gate.Held(), nil
}

// scaleHeld brings live's replicas to desired's while its template is held
// (why): a scale is no rollout, and does not wait with the template. With
// resume, it also takes back a canary promotion's pause.
func (p *pass) scaleHeld(ctx context.Context, live, desired *appsv1.Deployment, resume bool, why string) error {
	p.out.Deployment = live
	patch := children.HeldPatch(live, desired, resume)
	if patch == nil {
		return nil
	}
	scaled, err := p.KubeClient.AppsV1().Deployments(p.dobj.Namespace).Patch(ctx, p.dobj.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: identity.FieldManager})
	if err != nil {
		return fmt.Errorf("scaling Deployment %s %s: %w", p.dobj.Name, why, err)
	}
	p.out.Deployment = scaled
	return nil
}

// syncDeployment brings the Deployment in line with desired, whose hash
// is hash, and records the outcome.
func (p *pass) syncDeployment(ctx context.Context, desired *appsv1.Deployment, hash string) error {
	dobj := p.dobj
	deployments := p.KubeClient.AppsV1().Deployments(dobj.Namespace)
	key := cache.MetaObjectToName(dobj)
	stamped := func() error { return children.StampTemplateHashes(desired, &dobj.Spec) }
	d, action, err := children.Sync(ctx, dobj, desired, children.Ops[*appsv1.Deployment]{
		Kind:   "Deployment",
		Cached: func(string) (*appsv1.Deployment, error) { return p.cachedDeployment, p.cachedErr },
		Create: func(ctx context.Context, desired *appsv1.Deployment, opts metav1.CreateOptions) (*appsv1.Deployment, error) {
			if err := stamped(); err != nil {
				return nil, err
			}
			return deployments.Create(ctx, desired, opts)
		},
		Get:   deployments.Get,
		Patch: deployments.Patch,
		InSync: func(live, desired *appsv1.Deployment) bool {
			return children.DeploymentApplied(live, desired, hash, dobj.Status.DeploymentHash) || p.Admitted.Admitted(key, hash, live)
		},
		Write: func(ctx context.Context, live, desired *appsv1.Deployment) (*appsv1.Deployment, error) {
			if err := stamped(); err != nil {
				return nil, err
			}
			return children.ApplyDeployment(ctx, deployments, live, desired)
		},
		RecheckOwner: p.recheckOwner,
	})
	if err == nil && action != "" {
		p.Admitted.Record(key, hash, d, desired)
	}
	if p.out.ConfigRollout {
		// Rolling out new configuration is told by the Ready condition, as
		// a spec rollout is: it is no drift, and costs no event.
		action = ""
	}
	if err := p.record("Deployment", action, err); err != nil {
		return err
	}
	if d != nil {
		p.out.Deployment, p.out.DeploymentHash = d, hash
		p.out.ConfigHash = desired.Spec.Template.Annotations[appv1.AnnotationConfigHash]
	}
	return nil
}

// superseded deletes what older pod templates of dobj used and no pod of
// its Deployment as cached can still use: ServiceAccounts the spec no
// longer names (see children.SupersededServiceAccounts), and ConfigMaps of
// inline files that no ReplicaSet of the Deployment mounts any more (see
// children.SupersededFilesConfigMaps). Until then they stay, and a later
// event of the Deployment (its rollout ending) brings dobj back. Without a
// Deployment in the cache there is no telling whether pods of an older one
// (orphaned, or not labelled as the controller's) still use what it used:
// nothing goes.
func (p *pass) superseded(ctx context.Context) error {
	if !p.cachedControlled() {
		return nil
	}
	dobj, d := p.dobj, p.cachedDeployment
	accounts, err := caches.ListerOf[corev1.ServiceAccount](p.Caches).ControlledBy(dobj.Namespace, dobj.Name)
	if err != nil {
		return err
	}
	err = deleteChildren(ctx, children.KindServiceAccount, children.SupersededServiceAccounts(dobj, accounts, d), p.KubeClient.CoreV1().ServiceAccounts(dobj.Namespace).Delete, p.record)
	if err != nil {
		return err
	}
	files, err := caches.ListerOf[corev1.ConfigMap](p.Caches).ControlledBy(dobj.Namespace, dobj.Name)
	if err != nil {
		return err
	}
	older := children.OlderFilesConfigMaps(dobj, files, d, p.filesName)
	if len(older) == 0 {
		return nil
	}
	replicaSets, err := p.replicaSets(ctx)
	if err != nil {
		return p.record(children.KindFilesConfigMap, "", err)
	}
	superseded := children.SupersededFilesConfigMaps(older, replicaSets)
	return deleteChildren(ctx, children.KindFilesConfigMap, superseded, p.KubeClient.CoreV1().ConfigMaps(dobj.Namespace).Delete, p.record)
}

// replicaSets are the ReplicaSets that carry the selector of dobj's
// Deployment. They are read from the API server, and only when a ConfigMap
// of inline files might go: a cache of every ReplicaSet would cost every
// DeployObject memory for the few with a history of inline files. The read
// is a consistent one (no resourceVersion), so it holds every ReplicaSet
// made before it, also one the Deployment controller made moments ago; one
// made after it is of a newer template, which mounts the current
// ConfigMap.
func (p *pass) replicaSets(ctx context.Context) ([]*appsv1.ReplicaSet, error) {
	dobj := p.dobj
	list, err := p.KubeClient.AppsV1().ReplicaSets(dobj.Namespace).List(ctx, metav1.ListOptions{LabelSelector: children.SelectorString(dobj)})
	if err != nil {
		return nil, fmt.Errorf("listing the ReplicaSets of Deployment %s, for the ConfigMaps of inline files they mount: %w", dobj.Name, err)
	}
	out := make([]*appsv1.ReplicaSet, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// deleteChildren deletes objs, each with a UID precondition: one that was
// deleted, or made again under its name, meanwhile is left alone.
func deleteChildren[T metav1.Object](ctx context.Context, kind string, objs []T, del func(context.Context, string, metav1.DeleteOptions) error, record func(kind, action string, err error) error) error {
	for _, obj := range objs {
		uid := obj.GetUID()
		err := del(ctx, obj.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			continue
		}
		action := "deleted " + kind + " " + obj.GetName()
		if err != nil {
			action, err = "", fmt.Errorf("deleting %s %s: %w", kind, obj.GetName(), err)
		}
		if err := record(kind, action, err); err != nil {
			return err
		}
	}
	return nil
}
