//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestNamespacedInstallation installs deploy/namespaced into one namespace
// the way docs/operating.md tells a team to, checks (as `kubectl auth can-i --as` does) that
// its ServiceAccount may do the controller's job there and nothing anywhere
// else, and runs the controller binary with a token of that ServiceAccount
// and the flags of the installed Deployment: the examples in the namespace
// reach Ready without a single denial, and those of another namespace are
// left alone.
func TestNamespacedInstallation(t *testing.T) {
	dir := filepath.Join(env.repoRoot, "deploy", "namespaced")
	assertOnlyNamespacedObjects(t, dir)
	ns := newNamespace(t)
	other := newNamespace(t)

	// A team member who holds the built-in admin role in the namespace, and
	// no cluster-wide grant, installs it. RBAC lets nobody create a Role
	// granting more than they hold, and admin holds neither events, leases,
	// deployobjects/status nor deployobjects/finalizers: escalate and bind
	// on Roles in the namespace, as docs/operating.md tells a cluster admin to
	// grant, make up for it.
	const member = "e2e-team-member"
	kubectlIn := func(args ...string) {
		t.Helper()
		if out, err := kubectl(append(args, "-n", ns)...); err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	kubectlIn("create", "rolebinding", "team-admin", "--clusterrole=admin", "--user="+member)
	eventually(t, timeout, "admin alone to be refused the Role", func() (bool, string, error) {
		out, err := kubectl("apply", "-k", dir, "-n", ns, "--as="+member)
		return err != nil && strings.Contains(out, "attempting to grant RBAC permissions not currently held"), out, nil
	})
	kubectlIn("create", "role", "deployobject-installer", "--verb=escalate,bind", "--resource=roles.rbac.authorization.k8s.io")
	kubectlIn("create", "rolebinding", "deployobject-installer", "--role=deployobject-installer", "--user="+member)
	eventually(t, timeout, member+" to hold escalate on roles in "+ns, func() (bool, string, error) {
		out, _ := kubectl("auth", "can-i", "escalate", "roles.rbac.authorization.k8s.io", "-n", ns, "--as="+member)
		return strings.HasSuffix(strings.TrimSpace(out), "yes"), out, nil
	})
	if out, err := kubectl("apply", "-k", dir, "-n", ns, "--as="+member); err != nil {
		t.Fatalf("kubectl apply -k deploy/namespaced -n %s as a namespace admin: %v\n%s", ns, err, out)
	}
	// The manifests are admissible and the Deployment rolls out.
	eventually(t, timeout, "the deploy/namespaced Deployment to be Available", func() (bool, string, error) {
		out, err := kubectl("-n", ns, "get", "deployment/deployobject-controller", "-o", "jsonpath={.status.availableReplicas}")
		return err == nil && out == "2", out, nil
	})

	sa := "system:serviceaccount:" + ns + ":deployobject-controller"
	checkCanI(t, sa, []canICase{
		{[]string{"list", "deployobjects.app.deployobject.dev", "-n", ns}, "yes"},
		{[]string{"watch", "deployobjects.app.deployobject.dev", "-n", ns}, "yes"},
		{[]string{"get", "deployobjects.app.deployobject.dev", "-n", ns}, "yes"},
		{[]string{"patch", "deployobjects.app.deployobject.dev", "--subresource=status", "-n", ns}, "yes"},
		{[]string{"update", "deployobjects.app.deployobject.dev", "--subresource=finalizers", "-n", ns}, "yes"},
		{[]string{"create", "deployments.apps", "-n", ns}, "yes"},
		{[]string{"patch", "deployments.apps", "-n", ns}, "yes"},
		{[]string{"delete", "services", "-n", ns}, "yes"},
		{[]string{"watch", "poddisruptionbudgets.policy", "-n", ns}, "yes"},
		{[]string{"delete", "horizontalpodautoscalers.autoscaling", "-n", ns}, "yes"},
		{[]string{"create", "events.events.k8s.io", "-n", ns}, "yes"},
		{[]string{"patch", "events.events.k8s.io", "-n", ns}, "yes"},
		{[]string{"create", "events", "-n", ns}, "no"},
		{[]string{"create", "leases.coordination.k8s.io", "-n", ns}, "yes"},
		{[]string{"update", "leases.coordination.k8s.io/deployobject-controller", "-n", ns}, "yes"},
		// In its namespace, no more than the ClusterRole of deploy/ grants.
		{[]string{"update", "deployobjects.app.deployobject.dev", "-n", ns}, "no"},
		// Adoption under OwnerReferencesPermissionEnforcement needs it.
		{[]string{"delete", "deployments.apps", "-n", ns}, "yes"},
		{[]string{"create", "pods", "-n", ns}, "no"},
		{[]string{"list", "secrets", "-n", ns}, "no"},
		{[]string{"update", "leases.coordination.k8s.io/other", "-n", ns}, "no"},
		// Nothing in another namespace.
		{[]string{"list", "deployobjects.app.deployobject.dev", "-n", other}, "no"},
		{[]string{"patch", "deployobjects.app.deployobject.dev", "--subresource=status", "-n", other}, "no"},
		{[]string{"create", "deployments.apps", "-n", other}, "no"},
		{[]string{"create", "services", "-n", other}, "no"},
		{[]string{"create", "events.events.k8s.io", "-n", other}, "no"},
		{[]string{"create", "leases.coordination.k8s.io", "-n", other}, "no"},
		// Nothing cluster-wide.
		{[]string{"list", "deployobjects.app.deployobject.dev", "-A"}, "no"},
		{[]string{"watch", "deployments.apps", "-A"}, "no"},
		{[]string{"create", "tokenreviews.authentication.k8s.io"}, "no"},
		{[]string{"create", "subjectaccessreviews.authorization.k8s.io"}, "no"},
		{[]string{"get", "customresourcedefinitions.apiextensions.k8s.io"}, "no"},
		{[]string{"list", "namespaces"}, "no"},
		{[]string{"create", "clusterroles.rbac.authorization.k8s.io"}, "no"},
		{[]string{"*", "*"}, "no"},
	})

	args := deploymentArgs(t, ns)
	kubeconfig := serviceAccountKubeconfig(t, ns, "deployobject-controller")
	withoutSharedController(t)
	// Outside a pod the Lease's namespace is not read from the
	// ServiceAccount's mount; the controller is told.
	p, err := startControllerWith("namespaced", nil, nil,
		append(args, "--kubeconfig="+kubeconfig, "--leader-elect-resource-namespace="+ns)...)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Logf("--- namespaced controller log:\n%s", p.logTail(60))
		}
	}()
	eventually(t, timeout, "the namespaced controller to hold its Lease in "+ns, func() (bool, string, error) {
		l, err := env.kube.CoordinationV1().Leases(ns).Get(ctx, "deployobject-controller", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		holder := ""
		if l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
		return holder != "", holder, nil
	})

	for _, n := range []string{ns, other} {
		if out, err := kubectl("-n", n, "apply", "-f", filepath.Join(env.repoRoot, "example")); err != nil {
			t.Fatalf("kubectl apply -f example/ -n %s: %v\n%s", n, err, out)
		}
	}
	waitReady(t, ns, "hello")
	waitReady(t, ns, "web")
	for _, name := range []string{"hello", "web"} {
		if _, err := env.kube.AppsV1().Deployments(other).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("Deployment %s/%s: %v, want NotFound: the controller of %s reached into another namespace", other, name, err, ns)
		}
	}
	if p.deniedTo(sa) {
		t.Errorf("the controller was denied under the deploy/namespaced RBAC:\n%s", p.logTail(40))
	}
	if err := p.stop(syscall.SIGTERM, 30*time.Second); err != nil {
		t.Errorf("SIGTERM: the controller did not exit cleanly: %v", err)
	}
}

// assertOnlyNamespacedObjects checks that the kustomization in dir holds
// only kinds a namespace's own RBAC may create, and names no namespace, so
// that `kubectl apply -k dir -n NS` installs it in NS.
func assertOnlyNamespacedObjects(t *testing.T, dir string) {
	t.Helper()
	allowed := []string{"ServiceAccount", "Role", "RoleBinding", "Deployment", "PodDisruptionBudget"}
	var kinds []string
	for _, u := range kustomizeBuild(t, dir) {
		kinds = append(kinds, u.GetKind())
		if !slices.Contains(allowed, u.GetKind()) {
			t.Errorf("%s %s: only %v belong in a namespaced installation", u.GetKind(), u.GetName(), allowed)
		}
		if u.GetNamespace() != "" {
			t.Errorf("%s %s names namespace %s: it must go where it is applied", u.GetKind(), u.GetName(), u.GetNamespace())
		}
	}
	for _, k := range allowed {
		if !slices.Contains(kinds, k) {
			t.Errorf("no %s in %s (has %v)", k, dir, kinds)
		}
	}
}

// deploymentArgs are installedArgs of the Deployment deploy/namespaced
// installed in ns, which must read its namespace from the downward API and
// watch only there.
func deploymentArgs(t *testing.T, ns string) []string {
	t.Helper()
	d, err := env.kube.AppsV1().Deployments(ns).Get(ctx, "deployobject-controller", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := d.Spec.Template.Spec.Containers[0]
	i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "POD_NAMESPACE" })
	if i < 0 || c.Env[i].ValueFrom == nil || c.Env[i].ValueFrom.FieldRef == nil || c.Env[i].ValueFrom.FieldRef.FieldPath != "metadata.namespace" {
		t.Fatalf("the Deployment does not set POD_NAMESPACE to the pod's namespace: %+v", c.Env)
	}
	args := installedArgs(t, ns)
	if !slices.Contains(args, "--namespace="+ns) {
		t.Fatalf("the Deployment's args %q do not restrict the controller to %s", c.Args, ns)
	}
	return args
}

// installedArgs are the arguments of the container of the Deployment
// deployobject-controller in ns, with $(POD_NAMESPACE) expanded as the
// kubelet expands it, and without the listen addresses, for which the test
// picks free ports.
func installedArgs(t *testing.T, ns string) []string {
	t.Helper()
	d, err := env.kube.AppsV1().Deployments(ns).Get(ctx, "deployobject-controller", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, a := range d.Spec.Template.Spec.Containers[0].Args {
		if strings.HasPrefix(a, "--metrics-bind-address=") || strings.HasPrefix(a, "--health-probe-bind-address=") {
			continue
		}
		args = append(args, strings.ReplaceAll(a, "$(POD_NAMESPACE)", ns))
	}
	return args
}

// serviceAccountKubeconfig writes a kubeconfig that authenticates as the
// ServiceAccount name in ns with a token of it, and returns its path.
func serviceAccountKubeconfig(t *testing.T, ns, name string) string {
	t.Helper()
	path, err := writeServiceAccountKubeconfig(t.TempDir(), ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// writeServiceAccountKubeconfig is serviceAccountKubeconfig, written into
// dir.
func writeServiceAccountKubeconfig(dir, ns, name string) (string, error) {
	ca, err := clusterCAData()
	if err != nil {
		return "", err
	}
	token, err := requestToken(ns, name)
	if err != nil {
		return "", err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: env.cfg.Host, CertificateAuthorityData: ca}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: name, Namespace: ns}
	cfg.CurrentContext = name
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("writing the ServiceAccount's kubeconfig: %w", err)
	}
	return path, nil
}
