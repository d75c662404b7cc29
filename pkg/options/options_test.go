package options

import (
	"testing"
	"time"

	"deployobject.dev/controller/pkg/children"
)

// TestParseFlags: the flags keep their names and meanings under pflag,
// including a bare --leader-elect and klog's -v.
func TestParseFlags(t *testing.T) {
	o, _, err := Parse([]string{"--kube-api-qps=50.5", "--leader-elect", "-v=3", "--logging-format=json",
		"--pod-security-profile=restricted", "--resync-period=1m", "--namespace", "team-a",
		"--track-secrets", "--max-concurrent-config-rollouts=3", "--config-rollout-delay=1s"})
	if err != nil {
		t.Fatal(err)
	}
	if o.QPS != 50.5 || !o.LeaderElect.Value(false) || o.Logs.Verbosity != 3 || o.Logs.Format != "json" ||
		o.PodSecurity != children.ProfileRestricted || o.ResyncPeriod != time.Minute || o.Namespace != "team-a" ||
		!o.TrackSecrets || o.MaxConfigRollouts != 3 || o.ConfigRolloutDelay != time.Second {
		t.Errorf("parsed %+v", o)
	}
	if err := o.Validate(); err != nil {
		t.Error(err)
	}

	d, _, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.LeaderElect.set || d.QPS != 200 || d.Burst != 400 || d.Workers != 16 || d.Logs.Format != "text" || d.PodSecurity != children.ProfileNone ||
		d.TrackSecrets || d.MaxConfigRollouts != 10 || d.ConfigRolloutDelay != 5*time.Second ||
		d.ContentType != ContentTypeProtobuf || d.MetricsAddr != ":8443" || !d.MetricsSecure {
		t.Errorf("defaults %+v", d)
	}

	for _, args := range [][]string{
		{"--max-concurrent-config-rollouts=-1"},
		{"--config-rollout-delay=-1s"},
		{"--cache-sync-timeout=0"},
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
