package main

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kubeinformers "k8s.io/client-go/informers"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	informers "deployobject.dev/controller/pkg/generated/informers/externalversions"
	listers "deployobject.dev/controller/pkg/generated/listers/app/v1"
)

// observer follows the DeployObjects of one namespace and their children
// through informers. Polling its caches is free, so progress can be checked
// often for timing without the benchmark's own LISTs of thousands of objects
// loading the API server it measures.
type observer struct {
	dobjs       listers.DeployObjectNamespaceLister
	deployments appslisters.DeploymentNamespaceLister
	services    corelisters.ServiceNamespaceLister
	close       func()
}

func (b *bench) observe(ctx context.Context, ns string) (*observer, error) {
	ctx, cancel := context.WithCancel(ctx)
	dobjFactory := informers.NewSharedInformerFactoryWithOptions(b.client, 0,
		informers.WithNamespace(ns), informers.WithTransform(dropManagedFields))
	kubeFactory := kubeinformers.NewSharedInformerFactoryWithOptions(b.watchKube, 0,
		kubeinformers.WithNamespace(ns), kubeinformers.WithTransform(dropManagedFields))
	// Asking for the listers registers the informers that Start starts.
	o := &observer{
		dobjs:       dobjFactory.App().V1().DeployObjects().Lister().DeployObjects(ns),
		deployments: kubeFactory.Apps().V1().Deployments().Lister().Deployments(ns),
		services:    kubeFactory.Core().V1().Services().Lister().Services(ns),
		close: func() {
			cancel()
			dobjFactory.Shutdown()
			kubeFactory.Shutdown()
		},
	}
	dobjFactory.StartWithContext(ctx)
	kubeFactory.StartWithContext(ctx)
	syncCtx, cancelSync := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelSync()
	for _, res := range []interface{ AsError() error }{
		dobjFactory.WaitForCacheSyncWithContext(syncCtx),
		kubeFactory.WaitForCacheSyncWithContext(syncCtx),
	} {
		if err := res.AsError(); err != nil {
			o.close()
			return nil, fmt.Errorf("watching namespace %s: %w", ns, err)
		}
	}
	return o, nil
}

// dropManagedFields keeps the benchmark's caches small: it never reads them.
func dropManagedFields(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// progress counts the DeployObjects of a namespace that are reconciled and
// Ready, with one example of each that is not, for timeout messages.
type progress struct {
	total, reconciled, rolledOut, ready  int
	exampleUnreconciled, exampleNotReady string
}

func (o *observer) progress() (progress, error) {
	list, err := o.dobjs.List(labels.Everything())
	if err != nil {
		return progress{}, fmt.Errorf("listing DeployObjects from cache: %w", err)
	}
	p := progress{total: len(list)}
	for _, d := range list {
		if o.rolledOut(d) {
			p.rolledOut++
		}
		why := o.unreconciled(d)
		if why == "" {
			p.reconciled++
			why = notReady(d)
		} else if p.exampleUnreconciled == "" {
			p.exampleUnreconciled = d.Name + ": " + why
		}
		if why == "" {
			p.ready++
		} else if p.exampleNotReady == "" {
			p.exampleNotReady = d.Name + ": " + why
		}
	}
	return p, nil
}

// unreconciled says why d is not reconciled, or "" when it is: its
// Deployment, with d's image, and its Service exist and are controlled by
// it, and its status describes its current generation.
func (o *observer) unreconciled(d *appv1.DeployObject) string {
	dep, err := o.deployments.Get(d.Name)
	if err != nil {
		return "no Deployment"
	}
	if !metav1.IsControlledBy(dep, d) {
		return "Deployment not controlled by it"
	}
	if image := appImage(dep); image != d.Spec.Image {
		return fmt.Sprintf("Deployment has image %q, not %q", image, d.Spec.Image)
	}
	if len(d.Spec.Ports) > 0 {
		svc, err := o.services.Get(d.Name)
		if err != nil {
			return "no Service"
		}
		if !metav1.IsControlledBy(svc, d) {
			return "Service not controlled by it"
		}
	}
	if d.Status.ObservedGeneration != d.Generation {
		return fmt.Sprintf("status.observedGeneration is %d, generation %d", d.Status.ObservedGeneration, d.Generation)
	}
	return ""
}

// rolledOut reports whether d's Deployment has rolled out d's image to d's
// replicas, all available: what d's Ready waits for from the cluster.
func (o *observer) rolledOut(d *appv1.DeployObject) bool {
	dep, err := o.deployments.Get(d.Name)
	if err != nil || appImage(dep) != d.Spec.Image || dep.Status.ObservedGeneration < dep.Generation {
		return false
	}
	want := ptr.Deref(d.Spec.Replicas, 1)
	st := dep.Status
	return ptr.Deref(dep.Spec.Replicas, 1) == want && st.Replicas == want && st.UpdatedReplicas == want && st.AvailableReplicas == want
}

// notReady says why d is not Ready at its current generation, or "".
func notReady(d *appv1.DeployObject) string {
	c := meta.FindStatusCondition(d.Status.Conditions, appv1.ConditionReady)
	switch {
	case c == nil:
		return "no Ready condition"
	case c.Status != metav1.ConditionTrue:
		return fmt.Sprintf("Ready=%s %s: %s", c.Status, c.Reason, c.Message)
	case c.ObservedGeneration != d.Generation:
		return fmt.Sprintf("Ready condition is for generation %d, not %d", c.ObservedGeneration, d.Generation)
	}
	return ""
}

// appImage is the image of the container the controller owns.
func appImage(d *appsv1.Deployment) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == containerName {
			return c.Image
		}
	}
	return ""
}

// describe says what is still missing out of n, for a timeout message.
func (p progress) describe(n int, wantReady bool) string {
	if p.total != n {
		return fmt.Sprintf("%d of %d DeployObjects exist", p.total, n)
	}
	if !wantReady {
		return fmt.Sprintf("%d of %d not reconciled (e.g. %s)", n-p.reconciled, n, p.exampleUnreconciled)
	}
	return fmt.Sprintf("%d of %d not Ready, %d not reconciled (e.g. %s)", n-p.ready, n, n-p.reconciled, p.exampleNotReady)
}

// configHashes are the status.configHash of every DeployObject, by name.
func (o *observer) configHashes() (map[string]string, error) {
	list, err := o.dobjs.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("listing DeployObjects from cache: %w", err)
	}
	out := make(map[string]string, len(list))
	for _, d := range list {
		out[d.Name] = d.Status.ConfigHash
	}
	return out, nil
}

// onNewConfig counts the DeployObjects that are Ready with a configHash
// other than old's, which their Deployment's pod template carries and has
// rolled out; example is one that is not, and why.
func (o *observer) onNewConfig(old map[string]string) (done int, example string, err error) {
	list, err := o.dobjs.List(labels.Everything())
	if err != nil {
		return 0, "", fmt.Errorf("listing DeployObjects from cache: %w", err)
	}
	for _, d := range list {
		why := notReady(d)
		if why == "" {
			why = o.notOnNewConfig(d, old[d.Name])
		}
		if why == "" {
			done++
		} else if example == "" {
			example = d.Name + ": " + why
		}
	}
	return done, example, nil
}

func (o *observer) notOnNewConfig(d *appv1.DeployObject, old string) string {
	hash := d.Status.ConfigHash
	if hash == "" || hash == old {
		return "status.configHash unchanged"
	}
	dep, err := o.deployments.Get(d.Name)
	if err != nil {
		return "no Deployment"
	}
	if dep.Spec.Template.Annotations[appv1.AnnotationConfigHash] != hash {
		return "pod template not on status.configHash"
	}
	if !o.rolledOut(d) {
		return "not rolled out"
	}
	return ""
}

// rollingOut counts the Deployments whose pod template has left the
// configuration old (the DeployObjects' status.configHash before a change)
// and is not rolled out yet: the configuration rollouts in flight, as the
// cluster shows them.
func (o *observer) rollingOut(old map[string]string) (int, error) {
	list, err := o.deployments.List(labels.Everything())
	if err != nil {
		return 0, fmt.Errorf("listing Deployments from cache: %w", err)
	}
	n := 0
	for _, d := range list {
		hash := d.Spec.Template.Annotations[appv1.AnnotationConfigHash]
		if prev, ok := old[d.Name]; ok && hash != prev && !children.RolloutDone(d) {
			n++
		}
	}
	return n, nil
}
