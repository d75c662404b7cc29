package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	core "k8s.io/client-go/testing"
	logsapi "k8s.io/component-base/logs/api/v1"
	logsjson "k8s.io/component-base/logs/json"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	clientset "deployobject.dev/controller/pkg/generated/clientset/versioned"
)

// runAsControllerEnv makes the test binary run main instead of the tests,
// so that a test can run the controller as a process of its own: logging
// can be configured once per process only.
const runAsControllerEnv = "DEPLOYOBJECT_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runAsControllerEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runController runs the controller's main with args in a process of its
// own and returns its output and exit code.
func runController(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runAsControllerEnv+"=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// TestLoggingFormatJSON: with --logging-format=json every line the
// controller logs is a JSON object, from the first line on; a kubeconfig
// that does not exist makes it log its start and its failure and exit 1.
func TestLoggingFormatJSON(t *testing.T) {
	stdout, stderr, code := runController(t, "--logging-format=json", "--kubeconfig=/nonexistent/kubeconfig")
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	var msgs []string
	for _, line := range strings.Split(strings.TrimSpace(stdout+stderr), "\n") {
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		msg, _ := entry["msg"].(string)
		msgs = append(msgs, msg)
		if msg == "Controller failed" && !strings.Contains(entry["err"].(string), "/nonexistent/kubeconfig") {
			t.Errorf("the failure does not name the kubeconfig: %v", entry)
		}
	}
	if len(msgs) < 2 || msgs[0] != "Starting" || msgs[len(msgs)-1] != "Controller failed" {
		t.Errorf("logged %q, want Starting first and Controller failed last", msgs)
	}
}

// TestLoggingFlagsAreValidated: an unknown format and an alpha option
// without its feature gate are refused before anything runs.
func TestLoggingFlagsAreValidated(t *testing.T) {
	for _, args := range [][]string{
		{"--logging-format=xml"},
		{"--logging-format=json", "--log-json-split-stream"},
	} {
		stdout, stderr, code := runController(t, append(args, "--kubeconfig=/nonexistent/kubeconfig")...)
		if code != 2 || stdout != "" || !strings.HasPrefix(stderr, "invalid logging flags:") {
			t.Errorf("%v: exit code %d, stdout %q, stderr %q; want 2 and only the reason", args, code, stdout, stderr)
		}
	}
}

// TestHelp: --help prints the flags in sections, as Kubernetes components
// do, and exits 0.
func TestHelp(t *testing.T) {
	stdout, _, code := runController(t, "--help")
	if code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	last := -1
	for _, want := range []string{
		"Usage:\n  deployobject-controller [flags]",
		"Generic flags:", "--feature-gates mapStringBool", "--kubeconfig string",
		"Configuration rollouts flags:", "--config-rollout-delay duration", "--max-concurrent-config-rollouts int", "--track-secrets",
		"Leader election flags:", "--leader-elect ",
		"Metrics flags:", "--metrics-bind-address string",
		"Debugging flags:", "--profiling",
		"Logs flags:", "--logging-format string", `Permitted formats: "json"`, "-v, --v Level",
		"Global flags:", "-h, --help", "--version",
	} {
		i := strings.Index(stdout, want)
		if i < 0 {
			t.Errorf("--help lacks %q", want)
			continue
		}
		if i < last {
			t.Errorf("--help shows %q out of order", want)
		}
		last = i
	}
}

// TestJSONLogsOfASyncCarryTheKey: in JSON, as in text, every line a sync
// logs carries the DeployObject's key as a field of its own, the failed
// sync's error line as much as the retry's lines.
func TestJSONLogsOfASyncCarryTheKey(t *testing.T) {
	var buf bytes.Buffer
	logger, _ := logsjson.Factory{}.Create(logsapi.LoggingConfiguration{Format: "json", Verbosity: 4},
		logsapi.LoggingOptions{ErrorStream: &buf, InfoStream: &buf})
	f := newFixture(t)
	f.dobjs = []*appv1.DeployObject{newDeployObject()}
	_, tctx := ktesting.NewTestContext(t)
	c := f.newController(tctx)
	var failed atomic.Bool
	f.kubeClient.PrependReactor("create", "services", func(core.Action) (bool, runtime.Object, error) {
		if failed.CompareAndSwap(false, true) {
			return true, nil, apierrors.NewInternalError(errors.New("etcd is away"))
		}
		return false, nil, nil
	})

	ctx := klog.NewContext(context.Background(), logger)
	for range 2 {
		c.queue.Add(testKey)
		c.processNextWorkItem(ctx)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var msgs []string
	for _, line := range lines {
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		msgs = append(msgs, fmt.Sprint(entry["msg"]))
		if got := fmt.Sprint(entry["deployobject"]); got != testKey.String() {
			t.Errorf("line %q has deployobject %q, want %q", line, got, testKey)
		}
	}
	if !slices.Contains(msgs, "Sync failed, retrying with backoff") || !slices.Contains(msgs, "Wrote status") {
		t.Errorf("logged %q, want the failure and the status write of the retry", msgs)
	}
}

// TestContentTypes: clients of built-in kinds ask for and send what
// --kube-api-content-type says, and the DeployObject client JSON, which is
// all the API server serves for a custom resource.
func TestContentTypes(t *testing.T) {
	for _, contentType := range []string{contentTypeProtobuf, contentTypeJSON} {
		t.Run(contentType, func(t *testing.T) {
			accepts := map[string]string{}
			var mu sync.Mutex
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				accepts[r.URL.Path] = r.Header.Get("Accept") + " | " + r.Header.Get("Content-Type")
				mu.Unlock()
				http.Error(w, "{}", http.StatusTeapot)
			}))
			defer srv.Close()
			cfg := &rest.Config{Host: srv.URL}
			kube, err := kubernetes.NewForConfig(builtInConfig(cfg, contentType))
			if err != nil {
				t.Fatal(err)
			}
			client, err := clientset.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			_, _ = kube.AppsV1().Deployments("ns").Create(ctx, &appsv1.Deployment{}, metav1.CreateOptions{})
			_, _ = client.AppV1().DeployObjects("ns").UpdateStatus(ctx, &appv1.DeployObject{ObjectMeta: metav1.ObjectMeta{Name: "web"}}, metav1.UpdateOptions{})

			wantAccept := contentTypeJSON + ", */*"
			if contentType == contentTypeProtobuf {
				wantAccept = contentTypeProtobuf + "," + contentTypeJSON
			}
			want := map[string]string{
				"/apis/apps/v1/namespaces/ns/deployments":                              wantAccept + " | " + contentType,
				"/apis/app.deployobject.dev/v1/namespaces/ns/deployobjects/web/status": "application/json, */* | application/json",
			}
			mu.Lock()
			defer mu.Unlock()
			if !maps.Equal(want, accepts) {
				t.Errorf("Accept | Content-Type by path:\n got %q\nwant %q", accepts, want)
			}
		})
	}
}
