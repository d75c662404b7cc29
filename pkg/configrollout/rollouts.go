package configrollout

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/identity"
)

// Rollouts decides what configuration makes of each Deployment write: held
// while a ConfigMap or Secret the pods need is missing, waiting for a slot
// when it would start a rollout the spec did not ask for, or going ahead.
// It decides; the sync loop carries out what it decides (the scale while a
// rollout waits, the sync again later), so that the decision can be tested
// without a cluster.
type Rollouts struct {
	// Tracking is what is followed of the ConfigMaps and Secrets; its
	// zero value follows none.
	*Tracking
	// Grace is how long missing configuration is reported as in progress
	// before it stalls (--config-missing-grace-period); nil stalls at once.
	Grace *MissingGrace
}

// Gate is what becomes of a Deployment write.
type Gate struct {
	// Missing: the pods need ConfigMaps or Secrets that do not exist (they
	// could not start: they would be stuck in CreateContainerConfigError),
	// and the write waits.
	Missing bool
	// Pending: the write would start a rollout caused by configuration
	// alone and no slot is free for it under
	// --max-concurrent-config-rollouts; it waits in line, a scale does not.
	Pending bool
	// Limited: the write starts such a rollout, which holds a slot until
	// it is done; the Deployment is marked (appv1.AnnotationLimitedRollout)
	// so that a new leader counts it (see Adopt).
	Limited bool
	// After, when not 0, is when to sync again: the grace left to missing
	// configuration, or Timeout, which frees the slot of a rollout never
	// seen finishing.
	After time.Duration
}

// Held reports whether the Deployment must not be written now.
func (g Gate) Held() bool { return g.Missing || g.Pending }

// Decide says what becomes of writing desired, with the configuration cfg,
// over live, the Deployment of dobj (key) as the cache holds it, nil when
// there is none dobj controls. A new generation of the spec is never held
// by the limit. It stamps desired's template hashes when it has to compare
// them with live's.
func (r *Rollouts) Decide(key cache.ObjectName, dobj *appv1.DeployObject, live, desired *appsv1.Deployment, cfg State) (Gate, error) {
	if len(cfg.Missing) > 0 {
		// Applied together with its configuration, or with what another
		// controller makes it from: in progress until the grace is over.
		return Gate{Missing: true, After: r.Grace.Left(key)}, nil
	}
	r.Grace.Found(key)
	if live == nil || desired.Annotations[appv1.AnnotationDeploymentHash] == dobj.Status.DeploymentHash {
		// Created, or what was last applied: no rollout to hold.
		return Gate{}, nil
	}
	if err := children.StampTemplateHashes(desired, &dobj.Spec); err != nil {
		return Gate{}, err
	}
	if !Unrequested(dobj, live, desired) {
		return Gate{}, nil
	}
	if !r.Limiter.Acquire(key) {
		return Gate{Pending: true}, nil
	}
	return Gate{Limited: true, After: Timeout}, nil
}

// Done frees key's slot, or its place in line, once nothing waits
// (pending is false) and its Deployment, nil for none, has rolled out or
// given up: a rollout under the limit holds its slot until then, whatever
// the other children do; one that waits keeps its place in line.
func (r *Rollouts) Done(key cache.ObjectName, pending bool, d *appsv1.Deployment) {
	r.Limiter.Finish(key, !pending && (d == nil || children.RolloutDone(d)))
}

// Forget drops what is kept of key, a DeployObject that no longer exists.
func (r *Rollouts) Forget(key cache.ObjectName) {
	r.Grace.Found(key)
	r.Limiter.Finish(key, true)
}

// Adopt counts against the limit the rollouts under it, among the
// Deployments list returns, that an earlier leader started and that are
// still going, so that a failover mid-rollout never exceeds the limit. It
// returns their DeployObjects, whose syncs free the slots once the
// rollouts are done.
func (r *Rollouts) Adopt(list func() ([]*appsv1.Deployment, error)) ([]cache.ObjectName, error) {
	if r.Limiter == nil {
		return nil, nil
	}
	deployments, err := list()
	if err != nil {
		return nil, fmt.Errorf("finding the rollouts under way: %w", err)
	}
	var adopted []cache.ObjectName
	for _, d := range deployments {
		owner := metav1.GetControllerOf(d)
		if d.Annotations[appv1.AnnotationLimitedRollout] == "" || owner == nil || owner.Kind != identity.DeployObjectKind.Kind || children.RolloutDone(d) {
			continue
		}
		key := cache.ObjectName{Namespace: d.Namespace, Name: owner.Name}
		r.Limiter.Adopt(key)
		adopted = append(adopted, key)
	}
	return adopted, nil
}
