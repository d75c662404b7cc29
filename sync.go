package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
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
	"k8s.io/klog/v2"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// eventDriftCorrected is the reason of the Normal event for writes that undo
// someone else's change; Warning events carry the Ready condition's reason.
const eventDriftCorrected = "DriftCorrected"

// syncHandler brings the children of one DeployObject in line with its spec
// and writes its status. It reads only from the informer caches and is the one
// place where the controller writes to the cluster. A nil error means done; an
// error means retry with backoff.
func (c *Controller) syncHandler(ctx context.Context, key cache.ObjectName) error {
	logger := klog.FromContext(ctx)
	dobj, err := c.deployObjects.DeployObjects(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		// Deleted: garbage collection removes the children through their
		// controller ownerReferences.
		logger.V(4).Info("DeployObject no longer exists")
		c.written.forget(key)
		c.config.limiter.finish(key, true)
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading DeployObject from cache: %w", err)
	}
	basedOn := dobj.ResourceVersion
	if written, ok := c.written.newerThanCache(key, basedOn); ok {
		// The watch has not delivered the last status write yet: judge the
		// status against what was written, not against the cache, and base
		// the next write on the version it made.
		dobj = dobj.DeepCopy()
		dobj.Status = written.status
		dobj.ResourceVersion = written.resourceVersion
	}
	if dobj.DeletionTimestamp != nil {
		// Going away (held by someone's finalizer, or with its namespace):
		// children made now would only be garbage-collected again.
		logger.V(4).Info("DeployObject is being deleted")
		return nil
	}

	out, actions, err := c.syncChildren(ctx, dobj)
	if isNamespaceTerminating(err) {
		// Nothing can be created there any more and the DeployObject goes
		// with the namespace: retrying would only hot-loop.
		logger.V(2).Info("Namespace is terminating, not retrying", "reason", err.Error())
		return nil
	}
	if err != nil {
		return err
	}
	if len(actions) > 0 && dobj.Status.ObservedGeneration == dobj.Generation {
		// The children were in line with this generation before, so someone
		// else changed them. Creating children and rolling out a new spec
		// are told by the Ready condition and cost no event.
		c.recorder.Event(dobj, corev1.EventTypeNormal, eventDriftCorrected, strings.Join(actions, "; "))
	}

	status := computeStatus(dobj, out, c.now())
	// A configuration rollout holds its slot while the Deployment rolls
	// out, and gives it up once it is done, has failed, or is held back.
	reason := readyReason(status)
	c.config.limiter.finish(key, reason != appv1.ReasonProgressing && reason != appv1.ReasonConfigRolloutPending)
	// One Warning per new problem: later retries of the same problem find
	// it already reported.
	for _, p := range newProblems(dobj.Status.Conditions, out.problems) {
		c.recorder.Event(dobj, corev1.EventTypeWarning, p.reason, boundMessage(p.message))
	}
	if !statusEqual(dobj.Status, status) {
		written, err := c.client.AppV1().DeployObjects(dobj.Namespace).ApplyStatus(ctx, statusApplyConfiguration(dobj, status), metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
		if err != nil {
			return fmt.Errorf("writing status: %w", err)
		}
		c.written.record(key, basedOn, written)
		logger.V(2).Info("Wrote status", "ready", readyReason(status))
	}

	// Most blocking problems end without an event the controller sees (a
	// quota raised, a policy changed, a foreign object without the
	// managed-by label deleted): poll with backoff.
	var retry []childProblem
	for _, p := range out.problems {
		if p.retry {
			retry = append(retry, p)
		}
	}
	if len(retry) > 0 {
		return &blockedError{problems: retry}
	}
	return nil
}

// syncChildren creates, updates or deletes the children of dobj as needed:
// the Deployment, and the Service, PodDisruptionBudget,
// HorizontalPodAutoscaler and Ingress or HTTPRoute when the spec asks for
// them. It returns the
// children as they are afterwards, with the problems that kept any of them
// from being made, and a short description of each write, for the event. A
// child that is blocked does not keep the others from being made; any other
// error ends the sync.
func (c *Controller) syncChildren(ctx context.Context, dobj *appv1.DeployObject) (syncOutcome, []string, error) {
	var out syncOutcome
	var actions []string
	// record notes the action of one child, and err as a problem of dobj
	// with that child, or returns err when it is not one.
	record := func(kind, action string, err error) error {
		actions = appendAction(actions, action)
		if err == nil {
			return nil
		}
		p := problemOf(err)
		if p == nil {
			return err
		}
		p.kind = kind
		out.problems = append(out.problems, *p)
		return nil
	}
	recheckOwner := c.ownerRecheck(dobj)

	cfg, err := configStateOf(dobj.Namespace, c.configRefs(dobj), c.config.lookup)
	if err != nil {
		return out, actions, err
	}
	desired := desiredDeployment(dobj, c.podSecurity)
	if rollsOutConfig(dobj) {
		withConfigHash(&desired.Spec.Template, cfg.hash)
	}
	desired, hash, err := stampedDeployment(desired)
	if err != nil {
		return out, actions, err
	}
	// Both the hold and the sync read the cached Deployment: one decode
	// of it serves both (see packed.go).
	cachedDeployment, cachedErr := c.deployments.in(dobj.Namespace)(dobj.Name)
	cached := func(string) (*appsv1.Deployment, error) { return cachedDeployment, cachedErr }
	held, err := c.holdDeployment(ctx, dobj, cached, desired, cfg, &out)
	if err != nil {
		return out, actions, err
	}
	if !held {
		if err := c.syncDeployment(ctx, dobj, cached, desired, hash, &out, record, recheckOwner); err != nil {
			return out, actions, err
		}
	}

	ns := dobj.Namespace
	var action string
	out.service, action, err = syncOptionalChild(ctx, dobj, wantsService(dobj), desiredService(dobj),
		updatedChildOps("Service", c.services.in(ns), c.kubeClient.CoreV1().Services(ns), mergeService, recheckOwner))
	if err := record("Service", action, err); err != nil {
		return out, actions, err
	}

	out.pdb, action, err = syncOptionalChild(ctx, dobj, wantsDisruptionBudget(dobj), desiredPDB(dobj),
		updatedChildOps(kindPDB, c.pdbs.in(ns), c.kubeClient.PolicyV1().PodDisruptionBudgets(ns), mergePDB, recheckOwner))
	if err := record(kindPDB, action, err); err != nil {
		return out, actions, err
	}

	desiredAutoscaler, err := desiredHPA(dobj)
	if err != nil {
		return out, actions, err
	}
	out.hpa, action, err = syncOptionalChild(ctx, dobj, wantsAutoscaling(dobj), desiredAutoscaler,
		updatedChildOps(kindHPA, c.hpas.in(ns), c.kubeClient.AutoscalingV2().HorizontalPodAutoscalers(ns), mergeHPA, recheckOwner))
	if err := record(kindHPA, action, err); err != nil {
		return out, actions, err
	}

	out.ingress, action, err = syncOptionalChild(ctx, dobj, wantsIngress(dobj), desiredIngress(dobj),
		updatedChildOps(kindIngress, c.ingresses.in(ns), c.kubeClient.NetworkingV1().Ingresses(ns), mergeIngress, recheckOwner))
	if err := record(kindIngress, action, err); err != nil {
		return out, actions, err
	}

	routes := c.gateway.routes()
	if routes == nil {
		// Without the Gateway API there is no HTTPRoute to delete either.
		// The problem is not retried: watchGatewayAPI syncs dobj again
		// once HTTPRoutes are served.
		if wantsHTTPRoute(dobj) {
			out.problems = append(out.problems, childProblem{kind: kindHTTPRoute, reason: appv1.ReasonGatewayAPIUnavailable,
				message: fmt.Sprintf("the cluster does not serve %s %ss (the Gateway API CRDs are not installed); the controller makes %s %s once it does", gatewayAPIGroupVersion, kindHTTPRoute, kindHTTPRoute, dobj.Name)})
		}
		return out, actions, nil
	}
	desiredRoute, err := desiredHTTPRoute(dobj)
	if err != nil {
		return out, actions, err
	}
	out.httpRoute, action, err = syncOptionalChild(ctx, dobj, wantsHTTPRoute(dobj), desiredRoute,
		updatedChildOps(kindHTTPRoute, routes.HTTPRoutes(ns).Get, c.gateway.client.GatewayV1().HTTPRoutes(ns), mergeHTTPRoute, recheckOwner))
	if err := record(kindHTTPRoute, action, err); err != nil {
		return out, actions, err
	}
	return out, actions, nil
}

// syncDeployment brings the Deployment in line with desired, whose hash
// is hash, and records the outcome in out; cached is the Deployment as the
// cache holds it.
func (c *Controller) syncDeployment(ctx context.Context, dobj *appv1.DeployObject, cached func(string) (*appsv1.Deployment, error), desired *appsv1.Deployment, hash string, out *syncOutcome, record func(kind, action string, err error) error, recheckOwner func(context.Context) error) error {
	deployments := c.kubeClient.AppsV1().Deployments(dobj.Namespace)
	d, action, err := syncChild(ctx, dobj, desired, childOps[*appsv1.Deployment]{
		kind:   "Deployment",
		cached: cached,
		create: deployments.Create,
		get:    deployments.Get,
		patch:  deployments.Patch,
		inSync: func(live, desired *appsv1.Deployment) bool {
			return deploymentApplied(live, desired, hash, dobj.Status.DeploymentHash)
		},
		write: func(ctx context.Context, live, desired *appsv1.Deployment) (*appsv1.Deployment, error) {
			return applyDeployment(ctx, deployments, live, desired)
		},
		recheckOwner: recheckOwner,
	})
	if out.configRollout {
		// Rolling out new configuration is told by the Ready condition, as
		// a spec rollout is: it is no drift, and costs no event.
		action = ""
	}
	if err := record("Deployment", action, err); err != nil {
		return err
	}
	if d != nil {
		out.deployment, out.deploymentHash = d, hash
		out.configHash = desired.Spec.Template.Annotations[appv1.AnnotationConfigHash]
	}
	return nil
}

// holdDeployment decides whether the Deployment must not be written now,
// and records why in out: a ConfigMap or Secret the pods need is missing
// (the pods could not start: they would be stuck in
// CreateContainerConfigError), or the write would start a rollout caused
// by configuration alone and no slot is free for it under
// --max-concurrent-config-rollouts. A new generation of the spec is
// never held by the limit. The Deployment as the cache shows it still
// tells the status.
func (c *Controller) holdDeployment(ctx context.Context, dobj *appv1.DeployObject, cached func(string) (*appsv1.Deployment, error), desired *appsv1.Deployment, cfg configState, out *syncOutcome) (bool, error) {
	live, err := cached(dobj.Name)
	switch {
	case apierrors.IsNotFound(err):
		live = nil
	case err != nil:
		return false, fmt.Errorf("reading Deployment %s from cache: %w", dobj.Name, err)
	case !metav1.IsControlledBy(live, dobj):
		// Adoption or a conflict: syncChild knows what to do.
		live = nil
	}
	if len(cfg.missing) > 0 {
		out.deployment = live
		out.problems = append(out.problems, childProblem{kind: "Deployment", reason: appv1.ReasonConfigMissing, message: configMissingMessage(cfg.missing)})
		return true, nil
	}
	if !configTriggered(dobj, live, desired) {
		return false, nil
	}
	key := cache.MetaObjectToName(dobj)
	if !c.config.limiter.acquire(key) {
		klog.FromContext(ctx).V(2).Info("Configuration rollout waits for a slot")
		out.deployment, out.configPending = live, true
		return true, nil
	}
	// Should the rollout never be seen finishing, a sync at the timeout
	// frees the slot.
	c.queue.AddAfter(key, configRolloutTimeout)
	out.configRollout = true
	return false, nil
}

// syncOptionalChild brings a child that exists only when the spec asks for
// it (want) in line with desired, as syncChild does. When the spec does not
// ask for it, the child dobj controls is deleted, with a UID precondition so
// that one someone else made meanwhile under the same name is not touched;
// one that dobj does not control is none of its business.
func syncOptionalChild[T metav1.Object](ctx context.Context, dobj *appv1.DeployObject, want bool, desired T, ops childOps[T]) (T, string, error) {
	var zero T
	if want {
		return syncChild(ctx, dobj, desired, ops)
	}
	live, err := ops.cached(dobj.Name)
	if apierrors.IsNotFound(err) || (err == nil && !metav1.IsControlledBy(live, dobj)) {
		return zero, "", nil
	}
	if err != nil {
		return zero, "", fmt.Errorf("reading %s from cache: %w", ops.kind, err)
	}
	uid := live.GetUID()
	err = ops.delete(ctx, live.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return zero, "", fmt.Errorf("deleting %s %s: %w", ops.kind, live.GetName(), err)
	}
	return zero, "deleted " + ops.kind + " " + live.GetName(), nil
}

// ownerRecheck returns a check, made at most once per sync, that dobj is
// still the DeployObject the cache shows and is not being deleted, read
// fresh from the API server: a child is adopted only by a live owner, as
// the Deployment controller's controller-ref manager does.
func (c *Controller) ownerRecheck(dobj *appv1.DeployObject) func(context.Context) error {
	var once sync.Once
	var err error
	return func(ctx context.Context) error {
		once.Do(func() {
			fresh, getErr := c.client.AppV1().DeployObjects(dobj.Namespace).Get(ctx, dobj.Name, metav1.GetOptions{})
			switch {
			case getErr != nil:
				err = fmt.Errorf("reading DeployObject before adopting: %w", getErr)
			case fresh.UID != dobj.UID:
				err = fmt.Errorf("DeployObject %s was replaced (UID %s, cached %s); not adopting", dobj.Name, fresh.UID, dobj.UID)
			case fresh.DeletionTimestamp != nil:
				err = fmt.Errorf("DeployObject %s is being deleted; not adopting", dobj.Name)
			}
		})
		return err
	}
}

// childClient is the typed client of one kind of child.
type childClient[T metav1.Object] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Get(context.Context, string, metav1.GetOptions) (T, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
	Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (T, error)
	Delete(context.Context, string, metav1.DeleteOptions) error
}

// updatedChildOps are the childOps of a child kind whose owned fields are
// few and whose live objects are brought in line by an update: merge returns
// live with the owned fields of desired, and whether that changed anything.
func updatedChildOps[T metav1.Object](kind string, cached func(string) (T, error), client childClient[T], merge func(live, desired T) (T, bool), recheckOwner func(context.Context) error) childOps[T] {
	return childOps[T]{
		kind:   kind,
		cached: cached,
		create: client.Create,
		get:    client.Get,
		patch:  client.Patch,
		delete: client.Delete,
		inSync: func(live, desired T) bool {
			_, changed := merge(live, desired)
			return !changed
		},
		write: func(ctx context.Context, live, desired T) (T, error) {
			merged, _ := merge(live, desired)
			return client.Update(ctx, merged, metav1.UpdateOptions{FieldManager: fieldManager})
		},
		recheckOwner: recheckOwner,
	}
}

// childOps are the reads and writes syncChild needs for one kind of child.
type childOps[T metav1.Object] struct {
	kind   string
	cached func(name string) (T, error)
	create func(context.Context, T, metav1.CreateOptions) (T, error)
	get    func(context.Context, string, metav1.GetOptions) (T, error)
	patch  func(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (T, error)
	// delete removes a child the spec no longer asks for; only optional
	// children have it.
	delete func(context.Context, string, metav1.DeleteOptions) error
	// inSync reports whether live is in line with desired. It needs only
	// what the cache keeps of live, and may find more in a live object read
	// from the API server.
	inSync func(live, desired T) bool
	// write brings live, just read from the API server, in line with
	// desired.
	write func(ctx context.Context, live, desired T) (T, error)
	// recheckOwner confirms that the DeployObject may adopt an orphan.
	recheckOwner func(context.Context) error
}

// syncChild makes the child named like dobj match desired in the fields the
// controller owns. It creates the child when it does not exist, adopts an
// orphan that carries dobj's labels, refuses to touch one that another
// controller or nobody with those labels owns, and otherwise updates it only
// when an owned field differs. It returns the child as it is afterwards and a
// description of the write it made, if any.
func syncChild[T metav1.Object](ctx context.Context, dobj *appv1.DeployObject, desired T, ops childOps[T]) (T, string, error) {
	var zero T
	name := desired.GetName()
	// fresh: live was just read from the API server, not from the cache.
	fresh := false
	live, err := ops.cached(name)
	if apierrors.IsNotFound(err) {
		created, err := ops.create(ctx, desired, metav1.CreateOptions{FieldManager: fieldManager})
		if err == nil {
			return created, "created " + ops.kind + " " + name, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return zero, "", fmt.Errorf("creating %s %s: %w", ops.kind, name, err)
		}
		// It exists but is not in the cache: either the cache lags behind
		// (it is ours) or it lacks the managed-by label (it may be someone
		// else's). Only the live object can tell.
		if live, err = ops.get(ctx, name, metav1.GetOptions{}); err != nil {
			return zero, "", fmt.Errorf("reading %s %s: %w", ops.kind, name, err)
		}
		fresh = true
	} else if err != nil {
		return zero, "", fmt.Errorf("reading %s %s from cache: %w", ops.kind, name, err)
	}

	var adopted string
	if !metav1.IsControlledBy(live, dobj) {
		if !adoptable(live, dobj) {
			return zero, "", &resourceConflictError{kind: ops.kind, name: name}
		}
		if err := ops.recheckOwner(ctx); err != nil {
			return zero, "", err
		}
		patch, err := adoptionPatch(live, dobj)
		if err != nil {
			return zero, "", err
		}
		// The patch carries the resourceVersion the decision was made on:
		// had the child changed meanwhile, it fails with a conflict and the
		// next sync decides again.
		if live, err = ops.patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager}); err != nil {
			return zero, "", fmt.Errorf("adopting %s %s: %w", ops.kind, name, err)
		}
		fresh = true
		adopted = "adopted " + ops.kind + " " + name
	}
	if ops.inSync(live, desired) {
		return live, adopted, nil
	}
	if !fresh {
		// The cache holds only the fields the controller reads (see
		// transform.go); an update must carry everything else unchanged,
		// so it starts from the live object.
		if live, err = ops.get(ctx, name, metav1.GetOptions{}); err != nil {
			return zero, "", fmt.Errorf("reading %s %s: %w", ops.kind, name, err)
		}
		if !metav1.IsControlledBy(live, dobj) {
			return zero, "", &resourceConflictError{kind: ops.kind, name: name}
		}
		// The live object may show what the cache cannot: that an earlier
		// write, whose record was lost, already brought it in line.
		if ops.inSync(live, desired) {
			return live, adopted, nil
		}
	}
	updated, err := ops.write(ctx, live, desired)
	if err != nil {
		return zero, "", fmt.Errorf("updating %s %s: %w", ops.kind, name, err)
	}
	return updated, joinActions(adopted, "updated "+ops.kind+" "+name), nil
}

// deploymentWriter is the part of the Deployments client applyDeployment
// uses.
type deploymentWriter interface {
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*appsv1.Deployment, error)
}

// applyDeployment brings live in line with desired by server-side apply,
// at live's resourceVersion. The controller creates Deployments with a
// create request, which records its fields as set by an update; they are
// first moved to its apply entry in managedFields, once per Deployment, so
// that a field the spec no longer sets is removed rather than kept as the
// create's.
func applyDeployment(ctx context.Context, deployments deploymentWriter, live, desired *appsv1.Deployment) (*appsv1.Deployment, error) {
	migration, err := csaupgrade.UpgradeManagedFieldsPatch(live, sets.New(fieldManager), fieldManager)
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
	return deployments.Patch(ctx, live.Name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: fieldManager, Force: ptrTo(true)})
}

// adoptable reports whether dobj may adopt child: it has no controller, is
// not being deleted, and carries the labels dobj's children carry, as after
// `kubectl delete --cascade=orphan` of an earlier DeployObject of the same
// name. An object without those labels was not made for dobj and is never
// taken over.
func adoptable(child metav1.Object, dobj *appv1.DeployObject) bool {
	labels := child.GetLabels()
	return metav1.GetControllerOfNoCopy(child) == nil && child.GetDeletionTimestamp() == nil &&
		labels[managedByLabel] == managedByValue && labels[nameLabel] == dobj.Name
}

// adoptionPatch is a JSON merge patch that makes dobj the controller of
// child, keeping child's other owners, on condition that child is still at
// the resourceVersion it was judged at.
func adoptionPatch(child metav1.Object, dobj *appv1.DeployObject) ([]byte, error) {
	refs := append(slices.Clone(child.GetOwnerReferences()), *metav1.NewControllerRef(dobj, deployObjectKind))
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"ownerReferences": refs,
		"resourceVersion": child.GetResourceVersion(),
	}})
	if err != nil {
		return nil, fmt.Errorf("building the adoption patch: %w", err)
	}
	return patch, nil
}

func appendAction(actions []string, action string) []string {
	if action == "" {
		return actions
	}
	return append(actions, action)
}

func joinActions(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}
