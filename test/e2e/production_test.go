//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"deployobject.dev/controller/pkg/identity"
)

const (
	systemNamespace = "deployobject-system"
	serviceAccount  = "system:serviceaccount:deployobject-system:deployobject-controller"
)

// TestInClusterUnderDeployRBAC runs the controller binary the way a pod
// runs it: no kubeconfig, KUBERNETES_SERVICE_HOST/PORT in the environment, and
// the ServiceAccount token, CA and namespace at the standard path, as the
// ServiceAccount from deploy/ with exactly its RBAC. The examples must
// reconcile, which shows that RBAC suffices.
func TestInClusterUnderDeployRBAC(t *testing.T) {
	if os.Geteuid() != 0 {
		skipOutsideCI(t, "needs root for a private mount namespace (unshare -m); CI runs as root")
	}
	applyDeploy(t)
	// The manifests themselves must be admissible: the restricted Pod
	// Security level of the namespace admits the controller's pods.
	eventually(t, timeout, "the deploy/ Deployment to be Available", func() (bool, string, error) {
		out, err := kubectl("-n", systemNamespace, "get", "deployment/deployobject-controller", "-o", "jsonpath={.status.availableReplicas}")
		return err == nil && out == "2", out, nil
	})

	// Metrics are served as deploy/ serves them, which needs the
	// controller's ServiceAccount to create TokenReviews and
	// SubjectAccessReviews.
	scraper := metricsToken(t, newNamespace(t), "scraper", true)

	withoutSharedController(t)
	p := startInCluster(t, "incluster", systemNamespace, "deployobject-controller", "--metrics-secure=true")
	p.metricsToken = scraper
	defer func() {
		if t.Failed() {
			t.Logf("--- in-cluster controller log:\n%s", p.logTail(60))
		}
	}()

	// In a cluster, leader election is on by default, in the controller's
	// own namespace.
	eventually(t, timeout, "the in-cluster controller to lead", func() (bool, string, error) {
		v, err := p.metric("deployobject_controller_leader")
		return v == 1, fmt.Sprint(v), err
	})

	ns := newNamespace(t)
	if out, err := kubectl("-n", ns, "apply", "-f", filepath.Join(env.repoRoot, "example")); err != nil {
		t.Fatalf("kubectl apply -f example/: %v\n%s", err, out)
	}
	waitReady(t, ns, "hello")
	waitReady(t, ns, "web")
	// The optional children are made under the deploy/ RBAC too.
	eventually(t, timeout, "the autoscaled example's PodDisruptionBudget and HorizontalPodAutoscaler", func() (bool, string, error) {
		_, errPDB := env.kube.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "shop", metav1.GetOptions{})
		_, errHPA := env.kube.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "shop", metav1.GetOptions{})
		return errPDB == nil && errHPA == nil, fmt.Sprintf("%v; %v", errPDB, errHPA), nil
	})
	// Drift is corrected and told by an event: Service delete and create,
	// and event writes, all under the deploy/ RBAC.
	if err := env.kube.CoreV1().Services(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, timeout, "a DriftCorrected event", func() (bool, string, error) {
		evs, err := env.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=DriftCorrected"})
		return err == nil && len(evs.Items) == 1, fmt.Sprint(err), nil
	})
	// Written through events.k8s.io/v1, which requires the action and the
	// reporting instance, and leaves core/v1's source empty.
	evs, err := env.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=DriftCorrected"})
	if err != nil {
		t.Fatal(err)
	}
	if e := evs.Items[0]; e.Action != "Reconcile" || e.ReportingController != identity.ControllerName || !strings.HasPrefix(e.ReportingInstance, identity.ControllerName+"-") ||
		e.EventTime.IsZero() || e.Source.Component != "" || !strings.Contains(e.Message, "Service web") {
		t.Errorf("DriftCorrected event: action %q, reporting %q/%q, eventTime %v, source %+v, message %q; want an events.k8s.io/v1 event naming the Service",
			e.Action, e.ReportingController, e.ReportingInstance, e.EventTime, e.Source, e.Message)
	}
	waitReady(t, ns, "web")
	if p.deniedTo(serviceAccount) {
		t.Errorf("the controller was denied by the deploy/ RBAC:\n%s", p.logTail(40))
	}

	if err := p.stop(syscall.SIGTERM, 30*time.Second); err != nil {
		t.Errorf("SIGTERM: the controller did not exit cleanly: %v", err)
	}
	leaseReleased(t, systemNamespace, "a clean shutdown")
}

// startInCluster runs the controller binary the way a pod of the
// ServiceAccount sa in ns runs it: no kubeconfig, KUBERNETES_SERVICE_HOST/PORT
// in the environment, and a token of sa, the cluster's CA and ns at
// /var/run/secrets/kubernetes.io/serviceaccount. That path is a tmpfs in a
// private mount namespace, so the caller must be root.
func startInCluster(t *testing.T, name, ns, sa string, args ...string) *controllerProcess {
	t.Helper()
	tok := serviceAccountToken(t, ns, sa)
	secrets := t.TempDir()
	for file, content := range map[string][]byte{"token": []byte(tok), "ca.crt": clusterCA(t), "namespace": []byte(ns)} {
		if err := os.WriteFile(filepath.Join(secrets, file), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	u, err := url.Parse(env.cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	// A tmpfs over /run (/var/run links to it) gives the process the
	// ServiceAccount's mount without touching the host's file system.
	const mount = "/run/secrets/kubernetes.io/serviceaccount"
	wrap := []string{"unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
		`mount -t tmpfs tmpfs /run && mkdir -p ` + mount + ` && cp "$SA_SOURCE"/* ` + mount + `/ && exec "$@"`, "sh"}
	p, err := startControllerWith(name, wrap,
		[]string{"KUBERNETES_SERVICE_HOST=" + u.Hostname(), "KUBERNETES_SERVICE_PORT=" + u.Port(), "SA_SOURCE=" + secrets},
		args...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// leaseReleased fails t unless the controller's Lease in ns has no holder,
// as a controller that stopped cleanly (after what) leaves it.
func leaseReleased(t *testing.T, ns, after string) {
	t.Helper()
	lease, err := env.kube.CoordinationV1().Leases(ns).Get(ctx, "deployobject-controller", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the Lease: %v", err)
	}
	if lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "" {
		t.Errorf("the Lease is still held by %q after %s", *lease.Spec.HolderIdentity, after)
	}
}

// TestServiceAccountPermissions checks the deploy/ RBAC against the real API
// server: exactly what the controller needs, and no Secrets (those are
// deploy/track-secrets').
func TestServiceAccountPermissions(t *testing.T) {
	applyDeploy(t)
	checkCanI(t, serviceAccount, []canICase{
		{[]string{"list", "deployobjects.app.deployobject.dev", "-A"}, "yes"},
		// Read fresh before adopting an orphan.
		{[]string{"get", "deployobjects.app.deployobject.dev", "-n", "default"}, "yes"},
		{[]string{"patch", "deployobjects.app.deployobject.dev", "--subresource=status", "-n", "default"}, "yes"},
		{[]string{"update", "deployobjects.app.deployobject.dev", "--subresource=finalizers", "-n", "default"}, "yes"},
		{[]string{"patch", "deployobjects.app.deployobject.dev", "--subresource=finalizers", "-n", "default"}, "no"},
		{[]string{"patch", "deployments.apps", "-n", "default"}, "yes"},
		{[]string{"update", "deployments.apps", "-n", "default"}, "no"},
		{[]string{"patch", "services", "-n", "default"}, "yes"},
		{[]string{"delete", "services", "-n", "default"}, "yes"},
		{[]string{"update", "poddisruptionbudgets.policy", "-n", "default"}, "yes"},
		{[]string{"delete", "poddisruptionbudgets.policy", "-n", "default"}, "yes"},
		{[]string{"deletecollection", "poddisruptionbudgets.policy", "-n", "default"}, "no"},
		{[]string{"update", "horizontalpodautoscalers.autoscaling", "-n", "default"}, "yes"},
		{[]string{"delete", "horizontalpodautoscalers.autoscaling", "-n", "default"}, "yes"},
		{[]string{"update", "horizontalpodautoscalers.autoscaling", "--subresource=status", "-n", "default"}, "no"},
		// The controller never scales a DeployObject: the autoscaler does.
		{[]string{"update", "deployobjects.app.deployobject.dev", "--subresource=scale", "-n", "default"}, "no"},
		{[]string{"create", "events.events.k8s.io", "-n", "default"}, "yes"},
		{[]string{"patch", "events.events.k8s.io", "-n", "default"}, "yes"},
		// Events go through events.k8s.io/v1 only.
		{[]string{"create", "events", "-n", "default"}, "no"},
		{[]string{"update", "leases.coordination.k8s.io/deployobject-controller", "-n", systemNamespace}, "yes"},
		{[]string{"create", "tokenreviews.authentication.k8s.io"}, "yes"},
		{[]string{"create", "subjectaccessreviews.authorization.k8s.io"}, "yes"},
		{[]string{"get", "/metrics"}, "no"},
		// ConfigMaps are watched, for configuration rollouts; the ones
		// holding inline files are the controller's own, created, read
		// when a create finds the name taken, relabelled and deleted.
		{[]string{"list", "configmaps", "-A"}, "yes"},
		{[]string{"watch", "configmaps", "-A"}, "yes"},
		{[]string{"get", "configmaps", "-n", "default"}, "yes"},
		{[]string{"update", "configmaps", "-n", "default"}, "yes"},
		{[]string{"create", "configmaps", "-n", "default"}, "yes"},
		{[]string{"delete", "configmaps", "-n", "default"}, "yes"},
		// ServiceAccounts of the DeployObjects' own, but never their tokens.
		{[]string{"create", "serviceaccounts", "-n", "default"}, "yes"},
		{[]string{"delete", "serviceaccounts", "-n", "default"}, "yes"},
		{[]string{"create", "serviceaccounts", "--subresource=token", "-n", "default"}, "no"},
		// Secrets only with deploy/track-secrets.
		{[]string{"get", "secrets", "-A"}, "no"},
		{[]string{"list", "secrets", "-n", systemNamespace}, "no"},
		{[]string{"watch", "secrets", "-A"}, "no"},
		{[]string{"update", "deployobjects.app.deployobject.dev", "-n", "default"}, "no"},
		{[]string{"delete", "deployobjects.app.deployobject.dev", "-n", "default"}, "no"},
		// Never used, but OwnerReferencesPermissionEnforcement requires
		// it of whoever changes a Deployment's owners: adoption does.
		{[]string{"delete", "deployments.apps", "-n", "default"}, "yes"},
		{[]string{"create", "pods", "-n", "default"}, "no"},
		{[]string{"update", "leases.coordination.k8s.io/kube-controller-manager", "-n", "kube-system"}, "no"},
		{[]string{"update", "leases.coordination.k8s.io/other", "-n", systemNamespace}, "no"},
		{[]string{"create", "clusterroles.rbac.authorization.k8s.io"}, "no"},
		{[]string{"*", "*"}, "no"},
	})
}

// canICase is a question as `kubectl auth can-i` takes it (VERB
// RESOURCE[.GROUP][/NAME] or VERB /PATH, with -n NAMESPACE, -A and
// --subresource=SUB) and its expected answer, yes or no.
type canICase struct {
	args []string
	want string
}

// checkCanI asks the API server whether user may do each of cases, the
// way `kubectl auth can-i --as=user` does: a SelfSubjectAccessReview made
// while impersonating user (the API server adds a ServiceAccount's
// groups), with the namespace "default" when the case names none. It
// asks in-process rather than through a kubectl process per question,
// which cost the serial part of the suite about 30 s.
func checkCanI(t *testing.T, user string, cases []canICase) {
	t.Helper()
	cfg := rest.CopyConfig(env.cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		review, err := accessReview(tc.args)
		if err != nil {
			t.Fatalf("can-i %s: %v", strings.Join(tc.args, " "), err)
		}
		answer, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("can-i %s: %v", strings.Join(tc.args, " "), err)
		}
		if got := map[bool]string{true: "yes", false: "no"}[answer.Status.Allowed]; got != tc.want {
			t.Errorf("can-i %s: %q, want %q", strings.Join(tc.args, " "), got, tc.want)
		}
	}
}

// accessReview is the SelfSubjectAccessReview `kubectl auth can-i` makes
// of args.
func accessReview(args []string) (*authorizationv1.SelfSubjectAccessReview, error) {
	if len(args) < 2 {
		return nil, fmt.Errorf("want VERB RESOURCE or VERB /PATH, got %q", args)
	}
	verb, target := args[0], args[1]
	if strings.HasPrefix(target, "/") {
		return &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Verb: verb, Path: target},
		}}, nil
	}
	attrs := &authorizationv1.ResourceAttributes{Verb: verb, Namespace: "default"}
	target, attrs.Name, _ = strings.Cut(target, "/")
	attrs.Resource, attrs.Group, _ = strings.Cut(target, ".")
	for i := 2; i < len(args); i++ {
		switch flag := args[i]; {
		case flag == "-A":
			attrs.Namespace = ""
		case flag == "-n" && i+1 < len(args):
			i++
			attrs.Namespace = args[i]
		case strings.HasPrefix(flag, "--subresource="):
			attrs.Subresource = strings.TrimPrefix(flag, "--subresource=")
		default:
			return nil, fmt.Errorf("unknown flag %q", flag)
		}
	}
	return &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: attrs}}, nil
}

// TestLeaderElectionHandover runs two controllers on one Lease: one leads,
// the other waits. It measures how long a new DeployObject waits to be Ready
// after the leader is killed with SIGKILL (the lease must expire) and after
// it is stopped with SIGTERM (it releases the lease).
func TestLeaderElectionHandover(t *testing.T) {
	t.Parallel()
	ns := newOwnNamespace(t)
	args := []string{"--leader-elect=true", "--leader-elect-resource-namespace=" + ns, "--namespace=" + ns}
	a, err := startController("leader-a", args...)
	if err != nil {
		t.Fatal(err)
	}
	defer a.stopLogged(t, syscall.SIGKILL, 5*time.Second)
	waitLeader(t, a)
	b, err := startController("leader-b", args...)
	if err != nil {
		t.Fatal(err)
	}
	defer b.stopLogged(t, syscall.SIGKILL, 5*time.Second)
	consistently(t, 3*time.Second, "the second replica waits", func() (bool, string, error) {
		v, err := b.metric("deployobject_controller_leader")
		return v == 0, fmt.Sprint(v), err
	})
	create(t, newDO(ns, "one"))
	waitReady(t, ns, "one")
	if n, _ := b.metric("deployobject_reconcile_total"); n != 0 {
		t.Errorf("the waiting replica reconciled %v times", n)
	}

	start := time.Now()
	if err := a.stop(syscall.SIGKILL, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	create(t, newDO(ns, "two"))
	waitReady(t, ns, "two")
	killed := time.Since(start)

	c, err := startController("leader-c", args...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.stopLogged(t, syscall.SIGKILL, 5*time.Second)
	start = time.Now()
	if err := b.stop(syscall.SIGTERM, 30*time.Second); err != nil {
		t.Errorf("SIGTERM: the leader did not exit cleanly: %v", err)
	}
	create(t, newDO(ns, "three"))
	waitReady(t, ns, "three")
	terminated := time.Since(start)

	t.Logf("FIGURE leader handover, new DeployObject Ready after kill -9 of the leader: %.1fs (lease duration 15s, retry period 2s)", killed.Seconds())
	t.Logf("FIGURE leader handover, new DeployObject Ready after SIGTERM of the leader: %.1fs", terminated.Seconds())
	if terminated >= 15*time.Second {
		t.Errorf("handover after SIGTERM took %s: the lease was not released", terminated)
	}
}

func waitLeader(t *testing.T, p *controllerProcess) {
	t.Helper()
	eventually(t, timeout, p.name+" to lead", func() (bool, string, error) {
		v, err := p.metric("deployobject_controller_leader")
		return v == 1, fmt.Sprint(v), err
	})
}

// TestMetricsAndProbes checks the operational endpoints of the shared
// controller.
func TestMetricsAndProbes(t *testing.T) {
	ns := newNamespace(t)
	create(t, newDO(ns, "web"))
	waitReady(t, ns, "web")
	resp, err := http.Get("http://" + shared.metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	body := string(data)
	for _, want := range []string{
		`workqueue_depth{name="deployobject"}`,
		`workqueue_adds_total{name="deployobject"}`,
		`workqueue_queue_duration_seconds_bucket{name="deployobject"`,
		`workqueue_work_duration_seconds_bucket{name="deployobject"`,
		`workqueue_retries_total{name="deployobject"}`,
		`workqueue_unfinished_work_seconds{name="deployobject"}`,
		`workqueue_longest_running_processor_seconds{name="deployobject"}`,
		`rest_client_requests_total{code="201",host=`,
		`rest_client_request_duration_seconds_bucket{host=`,
		`rest_client_rate_limiter_duration_seconds_bucket{host=`,
		`deployobject_api_request_duration_seconds_bucket{resource="deployobjects/status",verb="PATCH"`,
		`informer_queued_items{group="app.deployobject.dev",name="deployobject-controller",resource="deployobjects",version="v1"}`,
		`informer_store_resource_version{group="apps",name="deployobject-controller",resource="deployments",version="v1"}`,
		`informer_processing_latency_seconds_bucket{group="",name="deployobject-controller",resource="services",version="v1"`,
		`deployobject_reconcile_total{result="success"}`,
		`deployobject_reconcile_duration_seconds_bucket`,
		`deployobject_controller_leader 1`,
		`go_goroutines`,
		`process_resident_memory_bytes`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		r, err := http.Get("http://" + shared.healthAddr + path)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusOK {
			t.Errorf("%s = %d", path, r.StatusCode)
		}
	}
}

// TestShutdownUnderBacklog stops a leader with SIGTERM while it works
// through a backlog far longer than the grace period, one sync at a time on
// a slow client. It must start no new sync, exit 0 soon, and release the
// lease.
func TestShutdownUnderBacklog(t *testing.T) {
	t.Parallel()
	ns := newOwnNamespace(t)
	const n = 300
	createMany(t, ns, "b", n, 8)
	p, err := startController("backlog", "--leader-elect=true", "--leader-elect-resource-namespace="+ns, "--namespace="+ns,
		"--workers=1", "--kube-api-qps=20", "--kube-api-burst=1")
	if err != nil {
		t.Fatal(err)
	}
	defer p.stopLogged(t, syscall.SIGKILL, 5*time.Second)
	eventually(t, timeout, "the first syncs", func() (bool, string, error) {
		v, err := p.metric("deployobject_reconcile_total")
		return v >= 5, fmt.Sprint(v), err
	})
	synced, _ := p.metric("deployobject_reconcile_total")

	signalled := time.Now()
	if err := p.stop(syscall.SIGTERM, 30*time.Second); err != nil {
		t.Errorf("SIGTERM: the controller did not exit 0: %v", err)
	}
	exited := time.Since(signalled)
	writes := 0
	for _, w := range []struct{ resource, verb string }{
		{"deployments", "write"}, {"services", "write"}, {"deployobjects", "write"},
	} {
		for _, c := range controllerWrites(t, ns, w.resource, w.verb, signalled) {
			writes += c
		}
	}
	// The one sync in flight makes at most a Deployment, a Service and a
	// status write.
	if writes > 3 {
		t.Errorf("%d writes after SIGTERM, want at most the 3 of the one sync in flight: queued keys were still synced", writes)
	}
	if exited > 5*time.Second {
		t.Errorf("exited %s after SIGTERM, want within 5s: one sync at 20 QPS takes well under a second", exited.Round(100*time.Millisecond))
	}
	leaseReleased(t, ns, "SIGTERM")
	t.Logf("FIGURE shutdown under a backlog of %d (1 worker, 20 QPS, %v synced): exited 0 %.2fs after SIGTERM, %d writes after it, lease released",
		n, synced, exited.Seconds(), writes)
}

// TestUnsyncedCachesEndTheProcess: a controller whose role lacks what a
// flag needs (--track-secrets, as deploy/'s ServiceAccount without the
// track-secrets component) does not sit on its lease with caches that never
// fill: after --cache-sync-timeout it names the Secrets cache and exits 1.
func TestUnsyncedCachesEndTheProcess(t *testing.T) {
	t.Parallel()
	applyDeploy(t)
	kubeconfig := serviceAccountKubeconfig(t, systemNamespace, "deployobject-controller")
	p, err := launchController("no-secrets", nil, nil, "--kubeconfig="+kubeconfig, "--track-secrets", "--cache-sync-timeout=5s")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.stop(syscall.SIGKILL, 5*time.Second) })
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		t.Fatalf("the controller still runs a minute after its 5 s cache sync timeout:\n%s", p.logTail(20))
	}
	var exitErr *exec.ExitError
	if !errors.As(p.exitErr, &exitErr) || exitErr.ExitCode() != 1 {
		t.Errorf("the controller exited with %v, want exit code 1", p.exitErr)
	}
	log := p.logTail(40)
	if !strings.Contains(log, "the caches of secrets did not sync") || !strings.Contains(log, "secrets is forbidden") {
		t.Errorf("the log does not name the Secrets cache and its refusal:\n%s", log)
	}
}
