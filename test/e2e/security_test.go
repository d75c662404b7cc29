//go:build e2e

package e2e

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// impersonating returns a client that acts as user, for checks of what RBAC
// lets a person do.
func impersonating(t *testing.T, user string) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(env.cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// bindRole binds the Role or ClusterRole (kind) role to user in namespace ns.
func bindRole(t *testing.T, ns, user, kind, role string) {
	t.Helper()
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user + "-" + role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: role},
	}
	if _, err := env.kube.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatalf("binding %s %s to %s: %v", kind, role, user, err)
	}
}

// TestOwnerReferencesPermissionEnforcement checks that the local cluster's
// API server runs the OwnerReferencesPermissionEnforcement admission plugin,
// as several managed and enterprise distributions do: a user who may create
// an object but not update its owner's finalizers cannot set
// blockOwnerDeletion on it. TestInClusterUnderDeployRBAC relies on the
// plugin to prove that deploy/ grants what it asks for.
func TestOwnerReferencesPermissionEnforcement(t *testing.T) {
	ns := newNamespace(t)
	owner := create(t, newDO(ns, "owner", func(d *appv1.DeployObject) { d.Spec.Ports = nil }))
	const user = "e2e-configmap-writer"
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "configmap-writer"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}}},
	}
	if _, err := env.kube.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bindRole(t, ns, user, "Role", role.Name)
	as := impersonating(t, user)
	ref := metav1.NewControllerRef(owner, appv1.SchemeGroupVersion.WithKind("DeployObject"))
	cm := func(name string, block bool) *corev1.ConfigMap {
		r := *ref
		r.BlockOwnerDeletion = &block
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: []metav1.OwnerReference{r}}}
	}
	// RBAC reaches the authorizer's cache shortly after the binding is
	// written; the same owner reference without blockOwnerDeletion passes.
	eventually(t, timeout, "the user to create a ConfigMap owned without blockOwnerDeletion", func() (bool, string, error) {
		_, err := as.CoreV1().ConfigMaps(ns).Create(ctx, cm("plain", false), metav1.CreateOptions{})
		return err == nil, "", err
	})
	_, err := as.CoreV1().ConfigMaps(ns).Create(ctx, cm("blocking", true), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "blockOwnerDeletion") {
		t.Fatalf("creating an object with blockOwnerDeletion without update on deployobjects/finalizers: %v; want Forbidden by OwnerReferencesPermissionEnforcement", err)
	}
}
