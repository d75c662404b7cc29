//go:build e2e

// Package e2e tests the controller binary against a real API server: the
// local cluster of hack/cluster.sh. Run it with `make test-e2e`, which starts
// a fresh cluster, or against a running one:
//
//	E2E_KUBECONFIG=... E2E_CONTROLLER_BIN=bin/deployobject-controller E2E_KUBECTL=.../kubectl \
//	  go test -tags e2e ./test/e2e/
//
// TestReleaseArtifacts also needs E2E_DIST (dist/ of make build-installer)
// and E2E_HELM (a helm binary), which hack/e2e.sh builds and sets.
//
// A test that works in its own namespace against the shared controller, and
// asserts only what it finds there (its objects, its events, the audit log
// filtered by its namespace), calls t.Parallel(): Go runs those together,
// after every serial test has finished, as many at once as -parallel allows
// (hack/e2e.sh sets it). A test that needs a controller of its own (other
// flags, restarts, kills) runs it with --namespace in a namespace of
// newOwnNamespace, which the shared controller leaves alone, and is parallel
// too. A test whose first part must run alone (before cluster-scoped CRDs
// are installed, say) calls t.Parallel() once that part is done. A test stays serial when it reads or changes what the whole process
// or cluster shares: the shared controller's counters or log read for
// errors, cluster-scoped objects (the CRD, ClusterRoles, CRDs of other
// projects, nodes), the API server itself, or DeployObjects it does not make
// with newDO while it runs a controller of its own (withoutSharedController).
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	clientset "deployobject.dev/controller/pkg/generated/clientset/versioned"
	"deployobject.dev/controller/test/crdinstall"
)

// env is what the suite runs against, from E2E_* environment variables.
var env struct {
	kubeconfig string
	// sharedKubeconfig authenticates as sharedServiceAccount.
	sharedKubeconfig string
	controller       string // path of the controller binary
	kubectl          string
	repoRoot         string
	cfg              *rest.Config
	kube             kubernetes.Interface
	client           clientset.Interface
	dynamic          dynamic.Interface
}

// shared is the controller process most tests run against.
var shared *controllerProcess

// sharedResync is the shared controller's --resync-period, short so that
// tests can wait for a full resync.
const sharedResync = 30 * time.Second

// sharedArgs are the flags of the shared controller. It tracks Secrets, so
// that TestConfigRollouts can show a Secret change rolling out, and gives
// missing configuration a short grace.
var sharedArgs = []string{"--resync-period=" + sharedResync.String(), "--track-secrets", "--config-missing-grace-period=" + sharedConfigGrace.String(),
	"--watch-label-selector=!" + ownControllerLabel}

// ownControllerLabel marks the DeployObjects of a test that runs a
// controller of its own for its namespace (newOwnNamespace): the shared
// controller's --watch-label-selector leaves them to it, so that the test
// needs no withoutSharedController and can run in parallel with others.
const ownControllerLabel = "e2e.deployobject.dev/own-controller"

// ownNamespaces holds the namespaces of newOwnNamespace, whose DeployObjects
// newDO labels with ownControllerLabel.
var ownNamespaces sync.Map

// sharedConfigGrace is the shared controller's
// --config-missing-grace-period, short so that tests see it end.
const sharedConfigGrace = 10 * time.Second

// launchedLogs are the logs of every controller the suite started, read at
// the end for reports of client-go's detectors (see hack/e2e.sh).
var launchedLogs struct {
	sync.Mutex
	paths []string
}

// detectorMarkers are what client-go's detectors print when they fire,
// before they panic: the cache mutation detector for each altered object,
// the watch-list consistency detector for a watch list that differs from a
// list served by etcd.
var detectorMarkers = []string{"] ALTERED!", "data inconsistency detected for"}

// detectorReport lists the lines of the controllers' logs where a detector
// fired, and says in how many logs the detectors were on.
func detectorReport() (fired []string, summary string) {
	launchedLogs.Lock()
	defer launchedLogs.Unlock()
	mutation, consistency := 0, 0
	for _, path := range launchedLogs.paths {
		data, err := os.ReadFile(path)
		if err != nil {
			fired = append(fired, err.Error())
			continue
		}
		log := string(data)
		if strings.Contains(log, "Mutation detector is enabled") {
			mutation++
		}
		// client-go v0.37 logs this once per check (v0.36 said "data
		// consistency check for NAME is enabled").
		consistency += strings.Count(log, "data consistency check is enabled")
		for _, line := range strings.Split(log, "\n") {
			for _, m := range detectorMarkers {
				if strings.Contains(line, m) {
					fired = append(fired, path+": "+line)
				}
			}
		}
	}
	summary = fmt.Sprintf("%d controllers started, %d with the cache mutation detector on; %d watch-list consistency checks", len(launchedLogs.paths), mutation, consistency)
	return fired, summary
}

// newOwnNamespace is newNamespace for a test that runs a controller of its
// own with --namespace: the DeployObjects newDO makes for it carry
// ownControllerLabel, which the shared controller does not reconcile.
func newOwnNamespace(t *testing.T) string {
	t.Helper()
	ns := newNamespace(t)
	ownNamespaces.Store(ns, true)
	return ns
}

// withoutSharedController stops the shared controller for the rest of the
// test, for tests that run controllers of their own, and starts it again
// afterwards.
func withoutSharedController(t *testing.T) {
	t.Helper()
	stopErr := shared.stop(syscall.SIGTERM, 30*time.Second)
	t.Cleanup(func() {
		p, err := startShared()
		if err != nil {
			t.Fatalf("restarting the shared controller: %v", err)
		}
		shared = p
	})
	if stopErr != nil {
		t.Fatalf("stopping the shared controller: %v", stopErr)
	}
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	env.kubeconfig = os.Getenv("E2E_KUBECONFIG")
	env.controller = os.Getenv("E2E_CONTROLLER_BIN")
	env.kubectl = os.Getenv("E2E_KUBECTL")
	if env.kubeconfig == "" || env.controller == "" || env.kubectl == "" {
		fmt.Fprintln(os.Stderr, "e2e: set E2E_KUBECONFIG, E2E_CONTROLLER_BIN and E2E_KUBECTL (make test-e2e does)")
		return 1
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	env.repoRoot = root
	if env.cfg, err = clientcmd.BuildConfigFromFlags("", env.kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: kubeconfig:", err)
		return 1
	}
	env.cfg.QPS, env.cfg.Burst = 200, 400
	env.kube = kubernetes.NewForConfigOrDie(env.cfg)
	env.client = clientset.NewForConfigOrDie(env.cfg)
	env.dynamic = dynamic.NewForConfigOrDie(env.cfg)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := crdinstall.Install(ctx, env.cfg, filepath.Join(root, "crd")); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	if env.sharedKubeconfig, err = installSharedIdentity(root); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	shared, err = startShared()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	code := m.Run()
	if err := shared.stop(syscall.SIGTERM, 20*time.Second); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: stopping the controller:", err)
		code = 1
	}
	if denied := sharedDenials(); len(denied) > 0 {
		fmt.Fprintf(os.Stderr, "e2e: the shipped ClusterRoles refused the shared controller:\n%s\n", strings.Join(denied, "\n"))
		code = 1
	}
	fired, summary := detectorReport()
	fmt.Fprintln(os.Stderr, "e2e: client-go's detectors:", summary)
	if len(fired) > 0 {
		fmt.Fprintf(os.Stderr, "e2e: client-go's detectors fired:\n%s\n", strings.Join(fired, "\n"))
		code = 1
	}
	if code != 0 {
		fmt.Fprintf(os.Stderr, "e2e: controller log: %s\n", shared.logPath)
	}
	return code
}

// controllerProcess is the controller binary running as a separate process.
type controllerProcess struct {
	name        string
	cmd         *exec.Cmd
	logPath     string
	metricsAddr string
	healthAddr  string
	// metricsURL is https:// when the process runs with
	// --metrics-secure=true, and http:// otherwise; scrapes then send
	// metricsToken.
	metricsURL   string
	metricsToken string
	done         chan struct{}
	exitErr      error
}

// sharedServiceAccount is the identity of the shared controller: a
// ServiceAccount bound to the ClusterRoles that deploy/ and
// deploy/track-secrets ship, and to nothing else. Every test that relies on
// the shared controller so proves the shipped permissions, on an API server
// with OwnerReferencesPermissionEnforcement (hack/cluster.sh): a verb
// missing from them fails a test. It is not deploy/'s own ServiceAccount,
// which TestServiceAccountPermissions checks holds no Secrets without the
// track-secrets component.
const sharedServiceAccount = "deployobject-controller-e2e"

// installSharedIdentity installs deploy/ (server-side, as docs/operating.md
// says), the track-secrets component's ClusterRole, and
// sharedServiceAccount bound to both ClusterRoles, and writes a kubeconfig
// of that ServiceAccount.
func installSharedIdentity(root string) (string, error) {
	bindings := fmt.Sprintf("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: %s, namespace: %s}\n", sharedServiceAccount, systemNamespace)
	for _, role := range []string{"deployobject-controller", "deployobject-controller-track-secrets"} {
		bindings += fmt.Sprintf(`---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: %[1]s-%[2]s
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %[2]s}
subjects: [{kind: ServiceAccount, name: %[1]s, namespace: %[3]s}]
`, sharedServiceAccount, role, systemNamespace)
	}
	// Only the component's ClusterRole: its binding would give deploy/'s own
	// ServiceAccount the Secrets.
	trackSecretsRole, err := clusterRolesOf(filepath.Join(root, "deploy", "track-secrets", "rbac.yaml"))
	if err != nil {
		return "", err
	}
	steps := []struct {
		stdin string
		args  []string
	}{
		{"", []string{"apply", "--server-side", "-k", filepath.Join(root, "deploy")}},
		{trackSecretsRole, []string{"apply", "--server-side", "-f", "-"}},
		{bindings, []string{"apply", "--server-side", "-f", "-"}},
	}
	for _, s := range steps {
		out, err := kubectlStdin(s.stdin, s.args...)
		if err != nil {
			return "", fmt.Errorf("kubectl %s: %w\n%s", strings.Join(s.args, " "), err, out)
		}
	}
	dir, err := os.MkdirTemp("", "deployobject-e2e-shared-")
	if err != nil {
		return "", err
	}
	return writeServiceAccountKubeconfig(dir, systemNamespace, sharedServiceAccount)
}

// sharedDenials are the RBAC denials of sharedServiceAccount in the logs
// of every shared controller the suite started: a verb the shipped
// ClusterRoles lack, even one that only a retried informer list needed.
// Denials while a restarted API server was not yet ready are left out.
func sharedDenials() []string {
	launchedLogs.Lock()
	defer launchedLogs.Unlock()
	user := "system:serviceaccount:" + systemNamespace + ":" + sharedServiceAccount
	var denied []string
	for _, path := range launchedLogs.paths {
		if !strings.Contains(filepath.Base(path), "-shared-") {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			denied = append(denied, err.Error())
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if !strings.Contains(line, `User \"`+user+`\" cannot`) && !strings.Contains(line, `User "`+user+`" cannot`) {
				continue
			}
			if at, ok := klogTime(line); ok && apiServerStarts.covers(at) {
				continue
			}
			denied = append(denied, path+": "+line)
		}
	}
	return denied
}

// klogTime is the time of a klog line ("E1126 00:09:11.200686 ..."), which
// carries no year, in the local time zone.
func klogTime(line string) (time.Time, bool) {
	if len(line) < len("E0102 15:04:05.000000") {
		return time.Time{}, false
	}
	at, err := time.ParseInLocation("0102 15:04:05.000000", line[1:len("E0102 15:04:05.000000")], time.Local)
	if err != nil {
		return time.Time{}, false
	}
	return at.AddDate(time.Now().Year(), 0, 0), true
}

// skipOutsideCI skips t where this machine cannot run it, and fails it in
// CI (CI set), whose machine must run every check.
func skipOutsideCI(t *testing.T, reason string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("not skipped in CI: %s", reason)
	}
	t.Skip(reason)
}

// clusterRolesOf are the ClusterRole documents of the manifest at path.
func clusterRolesOf(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var roles []string
	for _, doc := range strings.Split(string(data), "\n---") {
		if regexp.MustCompile(`(?m)^kind: ClusterRole$`).MatchString(doc) {
			roles = append(roles, doc)
		}
	}
	if len(roles) == 0 {
		return "", fmt.Errorf("%s holds no ClusterRole", path)
	}
	return strings.Join(roles, "\n---\n"), nil
}

// startShared starts the shared controller, as sharedServiceAccount.
func startShared() (*controllerProcess, error) {
	return startControllerWith("shared", nil, nil, append([]string{"--kubeconfig=" + env.sharedKubeconfig}, sharedArgs...)...)
}

// startController starts the controller binary with --kubeconfig and free
// ports for its servers, plus args, and waits until it reports ready.
func startController(name string, args ...string) (*controllerProcess, error) {
	return startControllerWith(name, nil, nil, append([]string{"--kubeconfig=" + env.kubeconfig}, args...)...)
}

// startControllerWith starts the binary through wrap (for example an unshare
// command line) with extra environment variables and args, without adding
// --kubeconfig.
func startControllerWith(name string, wrap, environ []string, args ...string) (*controllerProcess, error) {
	p, err := launchController(name, wrap, environ, args...)
	if err != nil {
		return nil, err
	}
	if err := p.waitReady(60 * time.Second); err != nil {
		_ = p.stop(syscall.SIGKILL, 5*time.Second)
		return nil, fmt.Errorf("controller %s did not become ready: %w\n%s", name, err, p.logTail(30))
	}
	return p, nil
}

// launchController starts the binary as startControllerWith does, without
// waiting for it to be ready.
func launchController(name string, wrap, environ []string, args ...string) (*controllerProcess, error) {
	metrics, err := freePort()
	if err != nil {
		return nil, err
	}
	health, err := freePort()
	if err != nil {
		return nil, err
	}
	p := &controllerProcess{
		name:        name,
		metricsAddr: metrics,
		healthAddr:  health,
		metricsURL:  "http://" + metrics,
		done:        make(chan struct{}),
	}
	if slices.Contains(args, "--metrics-secure=true") {
		p.metricsURL = "https://" + metrics
	}
	logFile, err := os.CreateTemp("", "deployobject-controller-"+name+"-*.log")
	if err != nil {
		return nil, err
	}
	p.logPath = logFile.Name()
	launchedLogs.Lock()
	launchedLogs.paths = append(launchedLogs.paths, p.logPath)
	launchedLogs.Unlock()
	// Most tests scrape metrics without credentials; those that test the
	// secure metrics server pass --metrics-secure=true.
	all := append([]string{"--metrics-bind-address=" + metrics, "--metrics-secure=false", "--health-probe-bind-address=" + health, "-v=2"}, args...)
	argv := append(append([]string{}, wrap...), env.controller)
	argv = append(argv, all...)
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Env = append(os.Environ(), environ...)
	p.cmd.Stdout = logFile
	p.cmd.Stderr = logFile
	if err := p.cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting controller %s: %w", name, err)
	}
	go func() {
		p.exitErr = p.cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *controllerProcess) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return fmt.Errorf("exited: %w", p.exitErr)
		default:
		}
		if resp, err := http.Get("http://" + p.healthAddr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("/readyz not OK after %s", timeout)
}

// stop sends sig and waits for the process to exit.
func (p *controllerProcess) stop(sig syscall.Signal, timeout time.Duration) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		return err
	}
	select {
	case <-p.done:
		if sig == syscall.SIGKILL {
			return nil
		}
		return p.exitErr
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		return fmt.Errorf("controller %s did not exit within %s after %s", p.name, timeout, sig)
	}
}

// stopLogged stops p as stop does, for a deferred stop at the end of a
// test, whose outcome the test has already checked: it logs what went wrong
// instead of failing.
func (p *controllerProcess) stopLogged(t *testing.T, sig syscall.Signal, timeout time.Duration) {
	t.Helper()
	if err := p.stop(sig, timeout); err != nil {
		t.Logf("stopping controller %s: %v", p.name, err)
	}
}

func (p *controllerProcess) logTail(n int) string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// deniedTo tells whether the log holds an RBAC denial of user: one that
// names the user, unlike other Forbidden errors (namespaces of other tests
// being torn down), which are not about permissions.
func (p *controllerProcess) deniedTo(user string) bool {
	log, _ := os.ReadFile(p.logPath)
	return strings.Contains(string(log), `User \"`+user+`\" cannot`) || strings.Contains(string(log), `User "`+user+`" cannot`)
}

// metric returns the sum of the samples of a metric whose labels contain
// every one of match (as `key="value"`), from the controller's /metrics.
func (p *controllerProcess) metric(name string, match ...string) (float64, error) {
	resp, err := p.getMetrics("/metrics", p.metricsToken)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		ok := true
		for _, m := range match {
			if !strings.Contains(line, m) {
				ok = false
			}
		}
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		if err != nil {
			return 0, fmt.Errorf("parsing %q: %w", line, err)
		}
		sum += v
	}
	return sum, sc.Err()
}

// metricsClient skips verification of the self-signed certificate the
// controller generates.
var metricsClient = &http.Client{
	Timeout:   30 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
}

// getMetrics GETs path from the metrics server, with token as a bearer token
// unless it is empty.
func (p *controllerProcess) getMetrics(path, token string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, p.metricsURL+path, nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return metricsClient.Do(req)
}

// writes is the number of write requests the controller has made, by HTTP
// method, from its REST client metrics, events excepted: client-go's
// events.k8s.io/v1 recorder writes the series of a repeated event on a
// clock of its own (6 min after the last repeat, and every 30 min), for
// events any earlier test caused. Tests count events by listing them.
func (p *controllerProcess) writes() (map[string]float64, error) {
	out := map[string]float64{}
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		all, err := p.metric("rest_client_requests_total", `method="`+m+`"`)
		if err != nil {
			return nil, err
		}
		events, err := p.metric("deployobject_api_request_duration_seconds_count", `resource="events"`, `verb="`+m+`"`)
		if err != nil {
			return nil, err
		}
		out[m] = all - events
	}
	return out, nil
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// newNamespace creates a namespace for one test and deletes it afterwards.
// On failure it prints what a person debugging would look at first.
func newNamespace(t *testing.T) string {
	t.Helper()
	name := "e2e-" + strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.TrimRight(name, "-") + "-" + rand.String(4)
	ctx := context.Background()
	if _, err := env.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			dumpNamespace(t, name)
		}
		err := env.kube.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting namespace %s: %v", name, err)
		}
	})
	return name
}

func dumpNamespace(t *testing.T, ns string) {
	t.Helper()
	t.Logf("--- controller log (last 40 lines of %s):\n%s", shared.logPath, shared.logTail(40))
	out, _ := kubectl("-n", ns, "get", "deployobjects,deployments,services,pods,events", "-o", "wide")
	t.Logf("--- objects in %s:\n%s", ns, out)
	out, _ = kubectl("-n", ns, "get", "deployobjects", "-o", "yaml")
	t.Logf("--- DeployObjects:\n%s", out)
}

// kubectl runs the cluster's kubectl and returns its combined output.
// applyDeploy applies deploy/ as docs/operating.md tells an operator to,
// server-side (client-side apply fits too: TestCRDAppliesClientSide).
func applyDeploy(t *testing.T) {
	t.Helper()
	if out, err := kubectl("apply", "--server-side", "-k", filepath.Join(env.repoRoot, "deploy")); err != nil {
		t.Fatalf("kubectl apply --server-side -k deploy/: %v\n%s", err, out)
	}
}

func kubectl(args ...string) (string, error) {
	cmd := exec.Command(env.kubectl, append([]string{"--kubeconfig", env.kubeconfig}, args...)...)
	var buf bytes.Buffer
	cmd.Stdout = &buf
	cmd.Stderr = &buf
	err := cmd.Run()
	return buf.String(), err
}

// kubectlStdin runs kubectl with input on its standard input.
func kubectlStdin(input string, args ...string) (string, error) {
	cmd := exec.Command(env.kubectl, append([]string{"--kubeconfig", env.kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(input)
	var buf bytes.Buffer
	cmd.Stdout = &buf
	cmd.Stderr = &buf
	err := cmd.Run()
	return buf.String(), err
}

// eventually polls cond until it returns true, failing the test with the
// last state cond described when timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for {
		ok, state, err := cond()
		if err != nil {
			state = "error: " + err.Error()
		}
		if ok {
			return
		}
		last = state
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last seen: %s", timeout, what, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// consistently checks cond for the whole duration, failing at the first
// false.
func consistently(t *testing.T, duration time.Duration, what string, cond func() (bool, string, error)) {
	t.Helper()
	deadline := time.Now().Add(duration)
	for time.Now().Before(deadline) {
		ok, state, err := cond()
		if err != nil {
			t.Fatalf("while checking that %s: %v", what, err)
		}
		if !ok {
			t.Fatalf("expected %s for %s, but: %s", what, duration, state)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// auditEvent is the part of a kube-apiserver audit log line the tests read.
type auditEvent struct {
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	ObjectRef struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
}

// auditLog calls f with every event of the API server's audit log received
// since t0 (every write is logged, see hack/tools/audit-policy.yaml).
func auditLog(t *testing.T, since time.Time, f func(auditEvent)) {
	t.Helper()
	file, err := os.Open(filepath.Join(filepath.Dir(env.kubeconfig), "logs", "audit.log"))
	if err != nil {
		t.Fatalf("opening the audit log: %v", err)
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e auditEvent
		if json.Unmarshal(sc.Bytes(), &e) == nil && !e.RequestReceivedTimestamp.Before(since) {
			f(e)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading the audit log: %v", err)
	}
}

// controllerWrites counts by object name, from the API server's audit log,
// the requests with verb on resource in namespace ns made by the controller
// since t0; verb "write" counts every create, update, patch and delete. The
// API server names the object of a create from its body, also when
// admission rejects it.
var writeVerbs = map[string]bool{"create": true, "update": true, "patch": true, "delete": true}

func controllerWrites(t *testing.T, ns, resource, verb string, since time.Time) map[string]int {
	t.Helper()
	n := map[string]int{}
	auditLog(t, since, func(e auditEvent) {
		if (e.Verb == verb || (verb == "write" && writeVerbs[e.Verb])) && e.ObjectRef.Resource == resource && e.ObjectRef.Namespace == ns &&
			strings.HasPrefix(e.UserAgent, "deployobject-controller/") {
			n[e.ObjectRef.Name]++
		}
	})
	return n
}

// serviceAccountToken returns a token, valid for an hour, of the
// ServiceAccount name in ns.
func serviceAccountToken(t *testing.T, ns, name string) string {
	t.Helper()
	tok, err := requestToken(ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// requestToken is a token of the ServiceAccount name in ns, valid for
// longer than the suite's timeout.
func requestToken(ns, name string) (string, error) {
	tok, err := env.kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3 * 3600)}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token for the ServiceAccount %s/%s: %w", ns, name, err)
	}
	return tok.Status.Token, nil
}

// clusterCA is the CA bundle of the API server, from the kubeconfig.
func clusterCA(t *testing.T) []byte {
	t.Helper()
	ca, err := clusterCAData()
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func clusterCAData() ([]byte, error) {
	ca := env.cfg.CAData
	if len(ca) == 0 && env.cfg.CAFile != "" {
		var err error
		if ca, err = os.ReadFile(env.cfg.CAFile); err != nil {
			return nil, err
		}
	}
	if len(ca) == 0 {
		return nil, errors.New("the kubeconfig has no CA: the API server must be reached over TLS")
	}
	return ca, nil
}

// expectQuiet watches the controller p over window: it must reconcile (its
// reconcile counter rises, so a quiet window means the syncs found nothing
// to do, not that none ran), make no write in ns (audit log), and, with
// retriesFree, retry nothing (the work queue's retry counter stays).
func expectQuiet(t *testing.T, p *controllerProcess, ns string, window time.Duration, retriesFree bool) {
	t.Helper()
	// client-go counts every AddAfter as a retry, and child events reach the
	// queue through AddAfter (batched by --child-batch-period): the event of
	// a write the test made just before, delivered after the baseline was
	// read, would count as a retry in the window. The window opens once the
	// controller has reconciled since the call, so that such an event has
	// been handled, where the window counts retries.
	if retriesFree {
		entered, err := p.metric("deployobject_reconcile_total")
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, window, "a reconcile before the quiet window", func() (bool, string, error) {
			now, err := p.metric("deployobject_reconcile_total")
			return now > entered, fmt.Sprintf("%v reconciles, %v at the call", now, entered), err
		})
	}
	reconciles, err := p.metric("deployobject_reconcile_total")
	if err != nil {
		t.Fatal(err)
	}
	retries, err := p.metric("workqueue_retries_total", `name="deployobject"`)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	time.Sleep(window)
	if w := allWrites(t, ns, start); len(w) != 0 {
		t.Errorf("writes in steady state: %v", w)
	}
	after, err := p.metric("deployobject_reconcile_total")
	if err != nil {
		t.Fatal(err)
	}
	if after <= reconciles {
		t.Errorf("no reconcile in the %s window (%v before, %v after): a window without writes shows nothing", window, reconciles, after)
	}
	if !retriesFree {
		return
	}
	if r, err := p.metric("workqueue_retries_total", `name="deployobject"`); err != nil || r > retries {
		t.Errorf("the work queue retried %v times in the window (err %v), want none: a retry loop", r-retries, err)
	}
}
