//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/test/cases"
)

// createMany creates n DeployObjects named prefix-0..n-1 with `workers`
// creators, retrying each until it exists (the API server may be away).
func createMany(t *testing.T, ns, prefix string, n, workers int, mutate ...func(*appv1.DeployObject)) {
	t.Helper()
	var wg sync.WaitGroup
	next := atomic.Int64{}
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				d := newDO(ns, fmt.Sprintf("%s-%d", prefix, i), mutate...)
				deadline := time.Now().Add(3 * timeout)
				for {
					_, err := env.client.AppV1().DeployObjects(ns).Create(ctx, d, metav1.CreateOptions{})
					if err == nil || apierrors.IsAlreadyExists(err) {
						break
					}
					if time.Now().After(deadline) {
						errs <- fmt.Errorf("creating %s: %w", d.Name, err)
						return
					}
					time.Sleep(200 * time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// waitAllReady waits until every DeployObject in ns is Ready at its
// current generation, and returns how many there are.
func waitAllReady(t *testing.T, ns string, want int, limit time.Duration) {
	t.Helper()
	eventually(t, limit, fmt.Sprintf("%d DeployObjects Ready in %s", want, ns), func() (bool, string, error) {
		list, err := env.client.AppV1().DeployObjects(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		ready := 0
		var notReady string
		for i := range list.Items {
			if ok, state := readyState(&list.Items[i]); ok {
				ready++
			} else if notReady == "" {
				notReady = list.Items[i].Name + ": " + state
			}
		}
		return len(list.Items) == want && ready == want, fmt.Sprintf("%d of %d Ready (%d exist); e.g. %s", ready, want, len(list.Items), notReady), nil
	})
}

// checkExactChildren verifies that every DeployObject in ns has exactly one
// Deployment and one Service, named after it and controlled by it, and that
// no other child exists.
func checkExactChildren(t *testing.T, ns string) {
	t.Helper()
	dobjs, err := env.client.AppV1().DeployObjects(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uids := map[string]types.UID{}
	for _, d := range dobjs.Items {
		uids[d.Name] = d.UID
	}
	deps, err := env.kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svcs, err := env.kube.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(kind string, objs []metav1.Object) {
		seen := map[string]bool{}
		for _, o := range objs {
			ref := metav1.GetControllerOf(o)
			switch {
			case ref == nil || uids[ref.Name] == "":
				t.Errorf("orphan %s %s (controller %v)", kind, o.GetName(), ref)
			case ref.UID != uids[ref.Name] || ref.Name != o.GetName():
				t.Errorf("%s %s is controlled by %s/%s, not by its DeployObject", kind, o.GetName(), ref.Name, ref.UID)
			}
			seen[o.GetName()] = true
		}
		if len(objs) != len(uids) {
			t.Errorf("%d %ss for %d DeployObjects", len(objs), kind, len(uids))
		}
		for name := range uids {
			if !seen[name] {
				t.Errorf("DeployObject %s has no %s", name, kind)
			}
		}
	}
	var dm, sm []metav1.Object
	for i := range deps.Items {
		dm = append(dm, &deps.Items[i])
	}
	for i := range svcs.Items {
		sm = append(sm, &svcs.Items[i])
	}
	check("Deployment", dm)
	check("Service", sm)
}

// TestCrashWhileCreating kills the controller with SIGKILL at random moments
// while DeployObjects are being created, restarting it each time, and checks
// that the end state is exact.
func TestCrashWhileCreating(t *testing.T) {
	t.Parallel()
	n := 500
	if v, err := strconv.Atoi(os.Getenv("E2E_CRASH_OBJECTS")); err == nil && v > 0 {
		n = v
	}
	ns := newOwnNamespace(t)
	p, err := startController("crash", "--namespace="+ns)
	if err != nil {
		t.Fatal(err)
	}
	created := make(chan struct{})
	go func() {
		defer close(created)
		createMany(t, ns, "c", n, 8)
	}()

	kills := 0
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for done := false; !done || kills < 5; {
		time.Sleep(time.Duration(200+rng.IntN(1500)) * time.Millisecond)
		if err := p.stop(syscall.SIGKILL, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		kills++
		if p, err = startController(fmt.Sprintf("crash-%d", kills), "--namespace="+ns); err != nil {
			t.Fatal(err)
		}
		select {
		case <-created:
			done = true
		default:
		}
	}
	defer p.stopLogged(t, syscall.SIGTERM, 30*time.Second)
	start := time.Now()
	waitAllReady(t, ns, n, 5*timeout)
	converged := time.Since(start)
	checkExactChildren(t, ns)
	t.Logf("FIGURE crash: %d DeployObjects, %d kill -9 during creation, all Ready %.1fs after the last restart", n, kills, converged.Seconds())
}

// TestConflictingWriters has users update DeployObjects (spec and labels)
// while the controller reconciles them: no user change may be lost, and
// conflicts must be retried quietly.
func TestConflictingWriters(t *testing.T) {
	ns := newNamespace(t)
	const objects, writers = 20, 4
	createMany(t, ns, "w", objects, 4)
	logBefore := logSize(t, shared)

	type final struct{ image, round string }
	finals := make([]final, objects)
	var wg sync.WaitGroup
	stop := time.Now().Add(10 * time.Second)
	for w := range writers {
		wg.Go(func() {
			for round := 0; time.Now().Before(stop); round++ {
				for i := w; i < objects; i += writers {
					name := fmt.Sprintf("w-%d", i)
					img := fmt.Sprintf("nginx:1.%d", round)
					for {
						d, err := env.client.AppV1().DeployObjects(ns).Get(ctx, name, metav1.GetOptions{})
						if err != nil {
							t.Errorf("get %s: %v", name, err)
							return
						}
						d.Spec.Image = img
						d.Spec.Replicas = ptr.To(int32(1 + round%2))
						if d.Labels == nil {
							d.Labels = map[string]string{}
						}
						d.Labels["round"] = strconv.Itoa(round)
						_, err = env.client.AppV1().DeployObjects(ns).Update(ctx, d, metav1.UpdateOptions{})
						if err == nil {
							finals[i] = final{img, strconv.Itoa(round)}
							break
						}
						if !apierrors.IsConflict(err) {
							t.Errorf("update %s: %v", name, err)
							return
						}
					}
				}
			}
		})
	}
	wg.Wait()
	waitAllReady(t, ns, objects, 2*timeout)
	for i := range objects {
		name := fmt.Sprintf("w-%d", i)
		d := getDO(t, ns, name)
		if d.Spec.Image != finals[i].image || d.Labels["round"] != finals[i].round {
			t.Errorf("%s: image %s round %s, want the last user write %s %s", name, d.Spec.Image, d.Labels["round"], finals[i].image, finals[i].round)
		}
		if img := getDeployment(t, ns, name).Spec.Template.Spec.Containers[0].Image; img != finals[i].image {
			t.Errorf("%s: Deployment image %s, want %s", name, img, finals[i].image)
		}
	}
	evs, err := env.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "type=Warning,involvedObject.kind=DeployObject"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs.Items {
		t.Errorf("Warning event: %s %s", e.Reason, e.Message)
	}
	for _, line := range logLinesSince(t, shared, logBefore) {
		if strings.HasPrefix(line, "E") {
			t.Errorf("the controller logged an error while users wrote concurrently: %s", line)
		}
	}
}

// TestAPIServerRestart stops kube-apiserver for 30 s in the middle of a
// burst. The controller keeps running, /readyz reports the outage, and
// everything converges once the API server is back.
func TestAPIServerRestart(t *testing.T) {
	ns := newNamespace(t)
	const n = 200
	_, _, dir := apiServerProcess(t)
	down, created, restart := apiServerOutage(t, ns, "r", n)
	eventually(t, 20*time.Second, "/readyz to report the outage", func() (bool, string, error) {
		code := probe(shared.healthAddr + "/readyz")
		return code == http.StatusServiceUnavailable, fmt.Sprint(code), nil
	})
	time.Sleep(30*time.Second - time.Since(down))
	select {
	case <-shared.done:
		t.Fatalf("the controller exited while the API server was away: %v", shared.exitErr)
	default:
	}
	restart()
	for _, component := range []string{"kube-controller-manager", "kube-scheduler", "kwok-controller"} {
		if !componentRunning(dir, component) {
			t.Fatalf("%s exited while the API server was away: the cluster cannot converge", component)
		}
	}
	eventually(t, timeout, "/readyz OK again", func() (bool, string, error) {
		code := probe(shared.healthAddr + "/readyz")
		return code == http.StatusOK, fmt.Sprint(code), nil
	})
	<-created
	start := time.Now()
	waitAllReady(t, ns, n, 3*timeout)
	checkExactChildren(t, ns)
	select {
	case <-shared.done:
		t.Fatal("the controller exited")
	default:
	}
	// A starting API server refuses Services with 422 while its allocator
	// cannot reach it; that is no fault of the spec.
	events, err := env.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=" + appv1.ReasonInvalidSpec})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		t.Errorf("%s blamed on the spec: %s", e.InvolvedObject.Name, e.Message)
	}
	t.Logf("FIGURE API server restart: %d DeployObjects all Ready %.1fs after the API server came back (down 30s)", n, time.Since(start).Seconds())
}

func probe(addr string) int {
	resp, err := http.Get("http://" + addr)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// apiServerProcess finds the cluster's kube-apiserver: its pid, command line
// and working directory. The cluster directory holds the kubeconfig.
func apiServerProcess(t *testing.T) (int, []string, string) {
	t.Helper()
	dir := filepath.Dir(env.kubeconfig)
	data, err := os.ReadFile(filepath.Join(dir, "pids", "kube-apiserver.pid"))
	if err != nil {
		t.Fatalf("finding kube-apiserver: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatalf("reading kube-apiserver's command line: %v", err)
	}
	return pid, strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00"), dir
}

// componentRunning reports whether the cluster component's process is alive.
func componentRunning(dir, component string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "pids", component+".pid"))
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	return err == nil && syscall.Kill(pid, 0) == nil
}

// apiServerOutage starts creating n DeployObjects named prefix-N in ns and
// stops kube-apiserver once a quarter of them exist. It returns when the API
// server went down, a channel closed when the creation is over, and a
// function that starts the API server again; later tests need it, so the
// test's cleanup restarts it if the test does not.
func apiServerOutage(t *testing.T, ns, prefix string, n int) (time.Time, <-chan struct{}, func()) {
	t.Helper()
	pid, argv, dir := apiServerProcess(t)
	created := make(chan struct{})
	go func() {
		defer close(created)
		createMany(t, ns, prefix, n, 8)
	}()
	eventually(t, timeout, "some DeployObjects Ready before the outage", func() (bool, string, error) {
		list, err := env.client.AppV1().DeployObjects(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		return len(list.Items) >= n/4, fmt.Sprintf("%d created", len(list.Items)), nil
	})
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatalf("stopping kube-apiserver: %v", err)
	}
	down := time.Now()
	var once sync.Once
	restart := func() { once.Do(func() { restartAPIServer(t, argv, dir) }) }
	t.Cleanup(restart)
	return down, created, restart
}

// restartAPIServer starts kube-apiserver again as kwokctl did, detached, and
// records its pid where kwokctl finds it, so that removing the cluster stops it.
func restartAPIServer(t *testing.T, argv []string, dir string) {
	t.Helper()
	logFile, err := os.OpenFile(filepath.Join(dir, "logs", "kube-apiserver.log"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("restarting kube-apiserver: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids", "kube-apiserver.pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Release(); err != nil {
		t.Fatal(err)
	}
	// Until its /readyz passes, a starting API server answers requests with
	// RBAC informers that have not synced (kubernetes/kubernetes#101422):
	// a denial then is not the shipped roles' doing.
	started := time.Now()
	eventually(t, timeout, "kube-apiserver's /readyz OK after its restart", func() (bool, string, error) {
		var code int
		env.kube.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).StatusCode(&code)
		return code == http.StatusOK, fmt.Sprint(code), nil
	})
	apiServerStarts.add(started, time.Now())
}

// apiServerStarts are the intervals in which a restarted API server was not
// yet ready; sharedDenials does not count denials inside them.
var apiServerStarts startWindows

type startWindows struct {
	sync.Mutex
	from, to []time.Time
}

func (w *startWindows) add(from, to time.Time) {
	w.Lock()
	defer w.Unlock()
	w.from, w.to = append(w.from, from), append(w.to, to)
}

// covers reports whether t falls in one of the windows, give or take a
// second for the precision of log timestamps and clocks of two processes.
func (w *startWindows) covers(t time.Time) bool {
	w.Lock()
	defer w.Unlock()
	for i := range w.from {
		if !t.Before(w.from[i].Add(-time.Second)) && !t.After(w.to[i].Add(time.Second)) {
			return true
		}
	}
	return false
}

// TestForeignChildrenAreNeverTouched covers a Service without a controller
// and a Deployment controlled by another DeployObject: neither is modified
// or deleted, whatever happens to the DeployObject.
func TestForeignChildrenAreNeverTouched(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	other := create(t, newDO(ns, "other", func(d *appv1.DeployObject) { d.Spec.Ports = nil }))
	waitReady(t, ns, "other")
	// A Deployment named web, labelled as the controller's (so it is in its
	// cache), but controlled by DeployObject "other".
	taken := getDeployment(t, ns, "other").DeepCopy()
	taken.ObjectMeta = metav1.ObjectMeta{Name: "web", Namespace: ns, Labels: taken.Labels,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(other, appv1.SchemeGroupVersion.WithKind("DeployObject"))}}
	taken, err := env.kube.AppsV1().Deployments(ns).Create(ctx, taken, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := env.kube.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "x", Port: 1}}, Selector: map[string]string{"app": "theirs"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	create(t, newDO(ns, "web"))
	create(t, newDO(ns, "api"))
	waitReason(t, ns, "web", metav1.ConditionFalse, appv1.ReasonResourceConflict)
	waitReason(t, ns, "api", metav1.ConditionFalse, appv1.ReasonResourceConflict)
	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.Image = "nginx:1.28" })
	updateDO(t, ns, "api", func(d *appv1.DeployObject) { d.Spec.Ports = nil })
	time.Sleep(2 * time.Second)
	for _, name := range []string{"web", "api"} {
		if err := env.client.AppV1().DeployObjects(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2 * time.Second)
	if live := getDeployment(t, ns, "web"); live.Generation != taken.Generation || live.Spec.Template.Spec.Containers[0].Image != taken.Spec.Template.Spec.Containers[0].Image {
		t.Errorf("the Deployment controlled by another DeployObject was modified: generation %d -> %d", taken.Generation, live.Generation)
	}
	if live := getService(t, ns, "api"); live.ResourceVersion != svc.ResourceVersion {
		t.Errorf("the foreign Service was modified or replaced: %+v", live.Spec)
	}
	// A metadata-only patch (a label, an owner reference) would leave the
	// generation alone: the audit log shows every request.
	expectOnlyRefusedCreates(t, ns, "deployments", "web")
	expectOnlyRefusedCreates(t, ns, "services", "api")
}

// TestTerminatingNamespaceDoesNotHotLoop keeps a namespace Terminating (a
// finalizer holds a DeployObject) while its children are deleted. The
// namespace controller may delete children before DeployObjects. Then the
// deletion of each child triggers one sync, which tries the missing
// Deployment first, and so may each resync; a hot loop would retry with the
// queue's backoff, dozens of times in the window.
func TestTerminatingNamespaceDoesNotHotLoop(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	create(t, newDO(ns, "held", func(d *appv1.DeployObject) { d.Finalizers = []string{"example.com/hold"} }))
	create(t, newDO(ns, "free"))
	waitReady(t, ns, "held")
	waitReady(t, ns, "free")
	t.Cleanup(func() {
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		_, err := env.client.AppV1().DeployObjects(ns).Patch(ctx, "held", types.MergePatchType, patch, metav1.PatchOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("removing the finalizer: %v", err)
		}
	})
	since := time.Now()
	if err := env.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, timeout, "the children to be deleted", func() (bool, string, error) {
		deps, err := env.kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		return len(deps.Items) == 0, fmt.Sprintf("%d Deployments", len(deps.Items)), nil
	})
	time.Sleep(5 * time.Second)
	// One attempt per deleted child, and one for each resync that can fall
	// inside the window.
	allowed := 2 + int(time.Since(since)/sharedResync) + 1
	for _, resource := range []string{"deployments", "services"} {
		creates := controllerWrites(t, ns, resource, "create", since)
		t.Logf("controller creates of %s since the namespace deletion, by name: %v", resource, creates)
		for name, n := range creates {
			if name == "" {
				t.Errorf("%d creates of %s without an object name in the audit log", n, resource)
			}
			if n > allowed {
				t.Errorf("%d creates of %s %s into a terminating namespace in %s, want at most %d: hot loop",
					n, resource, name, time.Since(since).Round(time.Second), allowed)
			}
		}
	}
}

// TestLargestValidObject reconciles the DeployObject with every bounded list
// and string at its maximum (cases.Largest).
func TestLargestValidObject(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	obj := cases.Largest("big")
	name := obj["metadata"].(map[string]any)["name"].(string)
	res := env.dynamic.Resource(appv1.SchemeGroupVersion.WithResource("deployobjects")).Namespace(ns)
	if _, err := res.Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict}); err != nil {
		t.Fatalf("creating the largest DeployObject: %v", err)
	}
	waitReady(t, ns, name)
	// What etcd stores, as the API server reads it back: the object with
	// its managedFields and status.
	stored, err := res.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := stored.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the largest DeployObject is stored in %d bytes of JSON, %d below etcd's limit of 1572864", len(data), 1572864-len(data))
	svc := getService(t, ns, name)
	if n := len(svc.Spec.Ports); n != cases.MaxPorts {
		t.Errorf("Service has %d ports, want %d", n, cases.MaxPorts)
	}
	if ap := ptr.Deref(svc.Spec.Ports[0].AppProtocol, ""); len(ap) != cases.MaxAppProtocolLength {
		t.Errorf("Service port appProtocol has %d characters, want %d", len(ap), cases.MaxAppProtocolLength)
	}
	c := getDeployment(t, ns, name).Spec.Template.Spec.Containers[0]
	if len(c.Env) != cases.MaxEnv || len(c.Env[0].Value) != cases.MaxEnvValueLength || len(c.Args) != cases.MaxArgs {
		t.Errorf("Deployment container has %d env vars (first value %d characters) and %d args", len(c.Env), len(c.Env[0].Value), len(c.Args))
	}
	if code := probe(shared.healthAddr + "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d after the largest object", code)
	}
}

// TestSecretValuesStayOutOfLogsAndEvents: env values from Secrets and
// ConfigMaps never appear in the controller's logs or events.
func TestSecretValuesStayOutOfLogsAndEvents(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	const secretValue, configValue = "s3cr3t-value-9f8e7d", "config-value-1a2b3c"
	if _, err := env.kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds"}, StringData: map[string]string{"password": secretValue}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"level": configValue}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Env = []corev1.EnvVar{
			{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "password"}}},
			{Name: "LEVEL", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Key: "level"}}},
			// An invalid sibling makes the controller report an error that
			// includes the env block.
			{Name: "BAD=NAME", Value: "x"},
		}
	}))
	waitReason(t, ns, "web", metav1.ConditionFalse, appv1.ReasonInvalidSpec)
	log, err := os.ReadFile(shared.logPath)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := env.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var events strings.Builder
	for _, e := range evs.Items {
		events.WriteString(e.Message)
	}
	d := getDO(t, ns, "web")
	for _, v := range []string{secretValue, configValue} {
		if strings.Contains(string(log), v) || strings.Contains(events.String(), v) || strings.Contains(fmt.Sprint(d.Status), v) {
			t.Errorf("the value %q leaked into the controller's log, events or status", v)
		}
	}
	// The one Warning for the rejected spec, not one per retry.
	warnings := 0
	for _, e := range evs.Items {
		if e.Type == corev1.EventTypeWarning && e.InvolvedObject.Name == "web" {
			warnings += int(occurrences(e))
		}
	}
	if warnings != 1 {
		t.Errorf("%d Warning events for one rejected spec, want 1", warnings)
	}
}

func logSize(t *testing.T, p *controllerProcess) int64 {
	t.Helper()
	fi, err := os.Stat(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func logLinesSince(t *testing.T, p *controllerProcess, offset int64) []string {
	t.Helper()
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(data)) < offset {
		t.Fatal(errors.New("the controller log shrank"))
	}
	return strings.Split(strings.TrimSpace(string(data[offset:])), "\n")
}

// TestAPIServerOutageWithLeaderElection stops kube-apiserver for 30 s in the
// middle of a burst while the controller runs as in a cluster, with leader
// election. The leader cannot renew its lease, so it stops writing and exits
// 1 after the renew deadline; the test then restarts it at once, as the
// kubelet restarts the container, and measures how long everything takes to
// converge once the API server is back.
func TestAPIServerOutageWithLeaderElection(t *testing.T) {
	ns := newNamespace(t)
	const n = 200
	withoutSharedController(t)
	args := []string{"--kubeconfig=" + env.kubeconfig, "--leader-elect=true", "--leader-elect-resource-namespace=" + ns, "--namespace=" + ns}
	p, err := startControllerWith("outage-leader", nil, nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer p.stopLogged(t, syscall.SIGKILL, 5*time.Second)
	waitLeader(t, p)
	down, created, restart := apiServerOutage(t, ns, "o", n)
	select {
	case <-p.done:
	case <-time.After(25 * time.Second):
		t.Fatalf("the leader still runs %s into the outage, past the renew deadline (10s)", time.Since(down).Round(time.Second))
	}
	exited := time.Since(down)
	var exitErr *exec.ExitError
	if !errors.As(p.exitErr, &exitErr) || exitErr.ExitCode() != 1 {
		t.Errorf("the leader exited with %v, want exit code 1", p.exitErr)
	}
	log, err := os.ReadFile(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	_, after, found := strings.Cut(string(log), "Lost the leader lease")
	if !found {
		t.Fatalf("no \"Lost the leader lease\" in the leader's log:\n%s", p.logTail(30))
	}
	for _, line := range strings.Split(after, "\n") {
		if strings.Contains(line, "Wrote status") || strings.Contains(line, "Starting workers") {
			t.Errorf("the leader went on working after losing the lease: %s", line)
		}
	}

	// The kubelet restarts a container that exited at once the first time.
	p, err = launchController("outage-restarted", nil, nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer p.stopLogged(t, syscall.SIGKILL, 5*time.Second)
	time.Sleep(30*time.Second - time.Since(down))
	restart()
	back := time.Now()
	if err := p.waitReady(timeout); err != nil {
		t.Fatalf("the restarted controller: %v\n%s", err, p.logTail(30))
	}
	waitLeader(t, p)
	leading := time.Since(back)
	<-created
	waitAllReady(t, ns, n, 3*timeout)
	converged := time.Since(back)
	checkExactChildren(t, ns)
	if err := p.stop(syscall.SIGTERM, 30*time.Second); err != nil {
		t.Errorf("SIGTERM after the outage: %v", err)
	}
	t.Logf("FIGURE API server outage with leader election: leader exited 1 %.1fs into the outage; after the API server came back (down 30s) the restarted replica led after %.1fs and all %d DeployObjects were Ready after %.1fs",
		exited.Seconds(), leading.Seconds(), n, converged.Seconds())
}
