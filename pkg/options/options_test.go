package options

import (
	"bytes"
	"flag"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestParseFlags: the flags keep their names and meanings under pflag,
// including a bare --leader-elect and klog's -v.
func TestParseFlags(t *testing.T) {
	o, _, err := Parse([]string{"--kube-api-qps=50.5", "--leader-elect", "-v=3", "--logging-format=json",
		"--pod-security-profile=restricted", "--resync-period=1m", "--namespace", "team-a",
		"--watch-label-selector=shard notin (b),!canary", "--track-secrets", "--max-concurrent-config-rollouts=3", "--config-rollout-delay=1s"})
	if err != nil {
		t.Fatal(err)
	}
	if o.QPS != 50.5 || !o.LeaderElect.Value(false) || o.Logs.Verbosity != 3 || o.Logs.Format != "json" ||
		o.PodSecurity != PodSecurityRestricted || o.ResyncPeriod != time.Minute || o.Namespace != "team-a" ||
		o.WatchLabelSelector != "shard notin (b),!canary" || !o.TrackSecrets || o.MaxConfigRollouts != 3 || o.ConfigRolloutDelay != time.Second {
		t.Errorf("parsed %+v", o)
	}
	if err := o.Validate(); err != nil {
		t.Error(err)
	}

	d, _, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.LeaderElect.set || d.QPS != 200 || d.Burst != 400 || d.Workers != 16 || d.Logs.Format != "text" || d.PodSecurity != PodSecurityNone ||
		d.TrackSecrets || d.WatchLabelSelector != "" || d.MaxConfigRollouts != 10 || d.ConfigRolloutDelay != 5*time.Second ||
		d.ContentType != ContentTypeProtobuf || d.MetricsAddr != ":8443" || !d.MetricsSecure {
		t.Errorf("defaults %+v", d)
	}

	for _, args := range [][]string{
		{"--max-concurrent-config-rollouts=-1"},
		{"--config-rollout-delay=-1s"},
		{"--cache-sync-timeout=0"},
		{"--watch-label-selector=shard in a"},
	} {
		o, _, err := Parse(args)
		if err != nil {
			t.Fatal(err)
		}
		if o.Validate() == nil {
			t.Errorf("%v passed validation", args)
		}
	}

	for _, args := range [][]string{
		{"-kubeconfig=x"}, // a long flag takes two dashes, as in every Kubernetes component
		{"--leader-elect=maybe"},
		{"--pod-security-profile=baseline"},
		{"stray"},
	} {
		if _, _, err := Parse(args); err == nil {
			t.Errorf("%v was accepted", args)
		}
	}

	for _, args := range [][]string{
		{"--kube-api-content-type=application/yaml"},
		{"--kube-api-content-type=application/cbor"}, // behind client-go's alpha ClientsAllowCBOR gate
	} {
		o, _, err := Parse(args)
		if err != nil {
			t.Fatal(err)
		}
		if o.Validate() == nil {
			t.Errorf("%v was accepted", args)
		}
	}
}

// TestPrintUsage: --help lists every section in order and, given a
// terminal's width, wraps the descriptions to fit it, as
// kube-controller-manager's --help does; without one (0) no line is wrapped.
// The header stays as written.
func TestPrintUsage(t *testing.T) {
	_, fss, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	var wide, narrow bytes.Buffer
	PrintUsage(&wide, fss, 0)
	PrintUsage(&narrow, fss, 80)

	want := []string{"Generic", "Controller", "Configuration rollouts", "Client", "Leader election", "Metrics", "Debugging", "Logs", "Global"}
	var got []string
	for _, line := range strings.Split(wide.String(), "\n") {
		if name, ok := strings.CutSuffix(line, " flags:"); ok {
			got = append(got, name)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("sections %q, want %q", got, want)
	}
	const usage = "Number of DeployObjects synced in parallel. (default 16)"
	if !strings.Contains(wide.String(), "--workers int") || !strings.Contains(wide.String(), usage) {
		t.Errorf("unwrapped --help lacks --workers and its usage:\n%s", wide.String())
	}
	// The header above Usage is text of its own, not wrapped.
	_, sections, _ := strings.Cut(narrow.String(), "Usage:")
	for _, line := range strings.Split(sections, "\n") {
		if len(line) > 80 {
			t.Errorf("line of %d columns in --help for 80: %q", len(line), line)
		}
	}
	// A flag's description starts on the line after the flag, indented.
	if !strings.Contains(narrow.String(), "--workers int") || !strings.Contains(narrow.String(), "\n                "+usage+"\n") {
		t.Errorf("--help for 80 columns does not wrap --workers' usage:\n%s", narrow.String())
	}
	if strings.Count(narrow.String(), "\n") <= strings.Count(wide.String(), "\n") {
		t.Error("--help for 80 columns has no more lines than unwrapped")
	}
}

var update = flag.Bool("update", false, "rewrite the flags in docs/operating.md from --help")

// TestFlagsInOperatingDocs: docs/operating.md shows --help as a terminal 100
// columns wide shows it, from the first section on, so that the manual
// cannot drift from the flags. -update rewrites it.
func TestFlagsInOperatingDocs(t *testing.T) {
	const path = "../../docs/operating.md"
	_, fss, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	var help bytes.Buffer
	PrintUsage(&help, fss, 100)
	_, sections, ok := strings.Cut(help.String(), "\nGeneric flags:")
	if !ok {
		t.Fatalf("--help has no generic flags:\n%s", help.String())
	}
	sections = "Generic flags:" + sections
	var want strings.Builder
	// The lines of flag names are padded out to the width; the manual has
	// no trailing spaces.
	for line := range strings.Lines(sections) {
		want.WriteString(strings.TrimRight(line, " \n") + "\n")
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	const open = "```text\nGeneric flags:\n"
	start := strings.Index(doc, open)
	if start < 0 {
		t.Fatalf("%s has no block starting %q", path, open)
	}
	start += len("```text\n")
	end := strings.Index(doc[start:], "```\n")
	if end < 0 {
		t.Fatalf("%s: the flags block does not end", path)
	}
	end += start
	if got := doc[start:end]; got != want.String() {
		if *update {
			if err := os.WriteFile(path, []byte(doc[:start]+want.String()+doc[end:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("the flags in %s differ from --help; run go test ./pkg/options -run TestFlagsInOperatingDocs -update. Want:\n%s", path, want.String())
	}
}
