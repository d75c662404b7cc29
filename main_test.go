package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"

	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/options"
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
		"Generic flags:", "--feature-gates mapStringBool",
		"Controller flags:", "--namespace string", "--workers int",
		"Configuration rollouts flags:", "--config-rollout-delay duration", "--max-concurrent-config-rollouts int", "--track-secrets",
		"Client flags:", "--kube-api-qps float32", "--kubeconfig string",
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

// TestFlagsAreLoggedAtV1: at -v=1 the controller logs every flag with its
// value before it starts, as kube-controller-manager does; at the default
// verbosity TestLoggingFormatJSON finds Starting first.
func TestFlagsAreLoggedAtV1(t *testing.T) {
	_, stderr, code := runController(t, "-v=1", "--workers=3", "--kubeconfig=/nonexistent/kubeconfig")
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	starting := strings.Index(stderr, `"Starting"`)
	for _, want := range []string{`FLAG: --workers="3"`, `FLAG: --v="1"`, `FLAG: --kubeconfig="/nonexistent/kubeconfig"`, `FLAG: --kube-api-qps="200"`, `FLAG: --leader-elect=""`} {
		i := strings.Index(stderr, want)
		if i < 0 {
			t.Errorf("the log lacks %s:\n%s", want, stderr)
		} else if i > starting {
			t.Errorf("%s logged after Starting", want)
		}
	}
}

// TestControllerConfig: what main passes to NewController is what the
// flags say, the Secrets informer only with --track-secrets, and each
// --pod-security-profile a profile pkg/children knows.
func TestControllerConfig(t *testing.T) {
	opts, _, err := options.Parse([]string{"--shutdown-grace-period=7s", "--cache-sync-timeout=3m", "--child-event-batch-period=2s",
		"--pod-security-profile=restricted", "--max-concurrent-config-rollouts=4", "--config-rollout-delay=9s", "--config-missing-grace-period=1m"})
	if err != nil {
		t.Fatal(err)
	}
	childFactory := kubeinformers.NewSharedInformerFactory(k8sfake.NewClientset(), 0)
	got := controllerConfig(opts, childFactory)
	want := Config{ShutdownGrace: 7 * time.Second, CacheSyncTimeout: 3 * time.Minute, ChildBatchPeriod: 2 * time.Second,
		PodSecurity: children.ProfileRestricted, TrackConfig: true, MaxConfigRollouts: 4, ConfigRolloutDelay: 9 * time.Second, ConfigMissingGrace: time.Minute}
	if got != want {
		t.Errorf("config\n got %+v\nwant %+v", got, want)
	}

	opts.TrackSecrets = true
	if controllerConfig(opts, childFactory).Secrets == nil {
		t.Error("--track-secrets passes no Secret informer")
	}

	for option, profile := range map[string]children.PodSecurityProfile{
		options.PodSecurityNone:       children.ProfileNone,
		options.PodSecurityRestricted: children.ProfileRestricted,
	} {
		if string(profile) != option {
			t.Errorf("--pod-security-profile=%s is profile %q", option, profile)
		}
	}
}
