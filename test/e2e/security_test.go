//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	clientset "deployobject.dev/controller/pkg/generated/clientset/versioned"
)

// impersonating returns a client configuration that acts as user, for checks
// of what RBAC lets a person do.
func impersonating(user string) *rest.Config {
	cfg := rest.CopyConfig(env.cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return cfg
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
	t.Parallel()
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
	as := kubernetes.NewForConfigOrDie(impersonating(user))
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

// TestUserRolesAggregateIntoBuiltInRoles checks deploy/'s deployobject-editor
// and deployobject-viewer through the built-in roles they aggregate into: a
// user bound to edit manages DeployObjects, one bound to view only reads
// them.
func TestUserRolesAggregateIntoBuiltInRoles(t *testing.T) {
	applyDeploy(t)
	ns := newNamespace(t)
	const editor, viewer = "e2e-editor", "e2e-viewer"
	bindRole(t, ns, editor, "ClusterRole", "edit")
	bindRole(t, ns, viewer, "ClusterRole", "view")
	for _, tc := range []struct {
		user string
		args []string
		want string
	}{
		{editor, []string{"create", "deployobjects.app.deployobject.dev"}, "yes"},
		{editor, []string{"update", "deployobjects.app.deployobject.dev"}, "yes"},
		{editor, []string{"delete", "deployobjects.app.deployobject.dev"}, "yes"},
		{editor, []string{"patch", "deployobjects.app.deployobject.dev", "--subresource=scale"}, "yes"},
		{editor, []string{"patch", "deployobjects.app.deployobject.dev", "--subresource=status"}, "no"},
		{viewer, []string{"get", "deployobjects.app.deployobject.dev"}, "yes"},
		{viewer, []string{"list", "deployobjects.app.deployobject.dev"}, "yes"},
		{viewer, []string{"watch", "deployobjects.app.deployobject.dev"}, "yes"},
		{viewer, []string{"get", "deployobjects.app.deployobject.dev", "--subresource=status"}, "yes"},
		{viewer, []string{"create", "deployobjects.app.deployobject.dev"}, "no"},
		{viewer, []string{"update", "deployobjects.app.deployobject.dev"}, "no"},
		{viewer, []string{"patch", "deployobjects.app.deployobject.dev", "--subresource=scale"}, "no"},
	} {
		what := tc.user + " can-i " + strings.Join(tc.args, " ")
		// The aggregation controller copies the rules into the built-in
		// roles shortly after deploy/ is applied.
		eventually(t, timeout, what+" = "+tc.want, func() (bool, string, error) {
			out, _ := kubectl(append([]string{"auth", "can-i", "-n", ns, "--as=" + tc.user}, tc.args...)...)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			got := lines[len(lines)-1]
			return got == tc.want, got, nil
		})
	}

	// The real requests, not only the authorizer's answer.
	asEditor := clientset.NewForConfigOrDie(impersonating(editor)).AppV1().DeployObjects(ns)
	d, err := asEditor.Create(ctx, newDO(ns, "by-editor"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the user bound to edit could not create a DeployObject: %v", err)
	}
	// The controller's status writes race with the update: retry conflicts.
	for i := 0; ; i++ {
		d.Spec.Image = "nginx:1.28"
		if _, err = asEditor.Update(ctx, d, metav1.UpdateOptions{}); !apierrors.IsConflict(err) || i == 10 {
			break
		}
		if d, err = asEditor.Get(ctx, d.Name, metav1.GetOptions{}); err != nil {
			break
		}
	}
	if err != nil {
		t.Errorf("the user bound to edit could not update a DeployObject: %v", err)
	}
	asViewer := clientset.NewForConfigOrDie(impersonating(viewer))
	if _, err := asViewer.AppV1().DeployObjects(ns).Get(ctx, "by-editor", metav1.GetOptions{}); err != nil {
		t.Errorf("the user bound to view could not read a DeployObject: %v", err)
	}
	if _, err := asViewer.AppV1().DeployObjects(ns).Create(ctx, newDO(ns, "by-viewer"), metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the user bound to view creating a DeployObject: %v, want Forbidden", err)
	}
}

// TestExamplePolicyRestrictsDeployObjects applies the example
// ValidatingAdmissionPolicy and checks it in a namespace that opts in:
// LoadBalancer Services and images outside the allowed prefix are rejected
// with the policy's message, a compliant DeployObject is admitted, and
// namespaces without the label are not affected.
func TestExamplePolicyRestrictsDeployObjects(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(env.repoRoot, "example", "policy")
	if out, err := kubectl("apply", "-f", dir); err != nil {
		t.Fatalf("kubectl apply -f example/policy/: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := kubectl("delete", "-f", dir); err != nil {
			t.Errorf("removing the example policy: %v\n%s", err, out)
		}
	})
	restricted, open := newNamespace(t), newNamespace(t)
	if out, err := kubectl("label", "namespace", restricted, "deployobject.dev/restricted=true"); err != nil {
		t.Fatalf("labelling the namespace: %v\n%s", err, out)
	}
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	createErr := func(d *appv1.DeployObject) error {
		_, err := env.client.AppV1().DeployObjects(d.Namespace).Create(ctx, d, dryRun)
		return err
	}
	allowed := func(d *appv1.DeployObject) { d.Spec.Image = "registry.example.com/team/web:1.0" }
	for _, tc := range []struct {
		name   string
		mutate func(*appv1.DeployObject)
		want   string
	}{
		{"load-balancer", func(d *appv1.DeployObject) { allowed(d); d.Spec.ServiceType = appv1.ServiceTypeLoadBalancer },
			"spec.serviceType LoadBalancer is not allowed in this namespace: only ClusterIP"},
		{"node-port", func(d *appv1.DeployObject) { allowed(d); d.Spec.ServiceType = appv1.ServiceTypeNodePort },
			"spec.serviceType NodePort is not allowed in this namespace: only ClusterIP"},
		{"foreign-image", func(*appv1.DeployObject) {},
			"spec.image nginx:1.27 is not allowed in this namespace: images must start with registry.example.com/"},
	} {
		// The API server picks the policy up shortly after it is written.
		eventually(t, timeout, tc.name+" to be rejected by the policy", func() (bool, string, error) {
			err := createErr(newDO(restricted, tc.name, tc.mutate))
			return apierrors.IsForbidden(err) && strings.Contains(err.Error(), tc.want), fmt.Sprint(err), nil
		})
		if err := createErr(newDO(open, tc.name, tc.mutate)); err != nil {
			t.Errorf("%s in a namespace without the label: %v, want admitted", tc.name, err)
		}
	}
	if err := createErr(newDO(restricted, "compliant", allowed)); err != nil {
		t.Errorf("a compliant DeployObject was rejected: %v", err)
	}
}

// metricsToken creates the ServiceAccount name in ns and returns a token of
// it; with reader, the ServiceAccount is bound to deploy/'s
// deployobject-metrics-reader, and metricsToken waits until RBAC lets it
// read /metrics (the controller caches a denial for 30 s).
func metricsToken(t *testing.T, ns, name string, reader bool) string {
	t.Helper()
	sa, err := env.kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	user := "system:serviceaccount:" + ns + ":" + sa.Name
	if reader {
		crb := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "deployobject-metrics-reader"},
		}
		if _, err := env.kube.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.kube.RbacV1().ClusterRoleBindings().Delete(ctx, crb.Name, metav1.DeleteOptions{}) })
		eventually(t, timeout, user+" may get /metrics", func() (bool, string, error) {
			out, _ := kubectl("auth", "can-i", "get", "/metrics", "--as="+user)
			return strings.HasSuffix(strings.TrimSpace(out), "yes"), out, nil
		})
	}
	return serviceAccountToken(t, ns, name)
}

// TestMetricsRequireAuthorization runs a controller with --metrics-secure=true,
// as deploy/ does: /metrics is served over HTTPS, to a token whose identity
// holds deployobject-metrics-reader, and the probes stay open.
func TestMetricsRequireAuthorization(t *testing.T) {
	applyDeploy(t)
	// The controller watches an empty namespace, so that it does not
	// reconcile alongside the shared one.
	ns := newNamespace(t)
	reader := metricsToken(t, ns, "scraper", true)
	stranger := metricsToken(t, ns, "stranger", false)
	p, err := startController("secure-metrics", "--metrics-secure=true", "--namespace="+ns)
	if err != nil {
		t.Fatal(err)
	}
	defer p.stopLogged(t, syscall.SIGKILL, 5*time.Second)
	for _, tc := range []struct {
		name, token string
		want        int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"a forged token", "not-a-token", http.StatusUnauthorized},
		{"a ServiceAccount without the ClusterRole", stranger, http.StatusForbidden},
		{"a ServiceAccount bound to deployobject-metrics-reader", reader, http.StatusOK},
	} {
		resp, err := p.getMetrics("/metrics", tc.token)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: GET /metrics = %d, want %d\n%.300s", tc.name, resp.StatusCode, tc.want, body)
		}
		if tc.want == http.StatusOK && !strings.Contains(string(body), "deployobject_controller_leader") {
			t.Errorf("%s: the body is not the metrics:\n%.300s", tc.name, body)
		}
	}
	// Tokens must not travel in clear text: the port speaks only TLS.
	if resp, err := http.Get("http://" + p.metricsAddr + "/metrics"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP to the metrics port answered 200")
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code := probe(p.healthAddr + path); code != http.StatusOK {
			t.Errorf("%s without credentials = %d, want 200", path, code)
		}
	}
}
