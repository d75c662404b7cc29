package main

import (
	"testing"
	"time"
)

// TestParseFlags: the flags keep their names and meanings under pflag,
// including a bare --leader-elect and klog's -v.
func TestParseFlags(t *testing.T) {
	o, _, err := parseFlags([]string{"--kube-api-qps=50.5", "--leader-elect", "-v=3", "--logging-format=json",
		"--pod-security-profile=restricted", "--resync-period=1m", "--namespace", "team-a",
		"--track-secrets", "--max-concurrent-config-rollouts=3", "--config-rollout-delay=1s"})
	if err != nil {
		t.Fatal(err)
	}
	if o.qps != 50.5 || !o.leaderElect.value(false) || o.logs.Verbosity != 3 || o.logs.Format != "json" ||
		o.podSecurity != profileRestricted || o.resyncPeriod != time.Minute || o.namespace != "team-a" ||
		!o.trackSecrets || o.maxConfigRollouts != 3 || o.configRolloutDelay != time.Second {
		t.Errorf("parsed %+v", o)
	}
	if err := o.validate(); err != nil {
		t.Error(err)
	}

	d, _, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.leaderElect.set || d.qps != 200 || d.burst != 400 || d.workers != 16 || d.logs.Format != "text" || d.podSecurity != profileNone ||
		d.trackSecrets || d.maxConfigRollouts != 10 || d.configRolloutDelay != 5*time.Second ||
		d.contentType != contentTypeProtobuf {
		t.Errorf("defaults %+v", d)
	}

	for _, args := range [][]string{
		{"--max-concurrent-config-rollouts=-1"},
		{"--config-rollout-delay=-1s"},
	} {
		o, _, err := parseFlags(args)
		if err != nil {
			t.Fatal(err)
		}
		if o.validate() == nil {
			t.Errorf("%v passed validation", args)
		}
	}

	for _, args := range [][]string{
		{"-kubeconfig=x"}, // a long flag takes two dashes, as in every Kubernetes component
		{"--leader-elect=maybe"},
		{"--pod-security-profile=baseline"},
		{"stray"},
	} {
		if _, _, err := parseFlags(args); err == nil {
			t.Errorf("%v was accepted", args)
		}
	}

	for _, args := range [][]string{
		{"--kube-api-content-type=application/yaml"},
		{"--kube-api-content-type=application/cbor"}, // behind client-go's alpha ClientsAllowCBOR gate
	} {
		o, _, err := parseFlags(args)
		if err != nil {
			t.Fatal(err)
		}
		if o.validate() == nil {
			t.Errorf("%v was accepted", args)
		}
	}
}
