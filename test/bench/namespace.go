package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The namespaces of the steps. steady and update work on the converged
// objects burst leaves behind, so the three share one.
const (
	nsLimit     = "bench-limit"
	nsBacklog   = "bench-backlog"
	nsBurst     = "bench-burst"
	nsChildren  = "bench-children"
	nsConfig    = "bench-config"
	nsMem       = "bench-mem"
	nsUnrelated = "bench-unrelated"
)

// freshNamespace makes ns exist and be empty, removing what an earlier run
// left in it.
func (b *bench) freshNamespace(ctx context.Context, ns string) error {
	if err := b.deleteNamespace(ctx, ns, true); err != nil {
		return err
	}
	_, err := b.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	return nil
}

// deleteNamespace deletes ns and, with wait, waits until it is gone, so that
// the garbage collection of its objects does not load the next step.
func (b *bench) deleteNamespace(ctx context.Context, ns string, wait bool) error {
	namespaces := b.kube.CoreV1().Namespaces()
	live, err := namespaces.Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading namespace %s: %w", ns, err)
	}
	if live.DeletionTimestamp == nil {
		if err := namespaces.Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting namespace %s: %w", ns, err)
		}
	}
	if !wait {
		return nil
	}
	start := time.Now()
	timeout := namespaceTimeout(b.opts)
	for {
		live, err := namespaces.Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			b.logf("namespace %s deleted in %.1fs", ns, time.Since(start).Seconds())
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading namespace %s: %w", ns, err)
		}
		if time.Since(start) > timeout {
			return fmt.Errorf("namespace %s still exists %s after its deletion: %s", ns, timeout, remaining(live))
		}
		if err := sleep(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
}

// remaining is what a terminating namespace reports it is waiting for.
func remaining(ns *corev1.Namespace) string {
	for _, c := range ns.Status.Conditions {
		if c.Status == corev1.ConditionTrue && c.Message != "" {
			return c.Message
		}
	}
	return "phase " + string(ns.Status.Phase)
}

// namespaceTimeout bounds the wait for a namespace's deletion. It grows with
// the largest size of the run: at 10,000 DeployObjects the limit step's
// namespace holds 50,000 objects with the pods, and kube-controller-manager
// was still deleting them after 10 minutes.
func namespaceTimeout(o *options) time.Duration {
	return max(10*time.Minute, waitTimeout(max(o.n, o.memN)))
}
