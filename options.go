package main

import (
	"errors"
	"flag"
	"strconv"
	"time"
)

// options are the command-line flags.
type options struct {
	kubeconfig   string
	master       string
	namespace    string
	workers      int
	qps          float32
	burst        int
	resyncPeriod time.Duration
	childBatch   time.Duration
	podSecurity  podSecurityProfile
	showVersion  bool

	leaderElect    optionalBool
	leaseDuration  time.Duration
	renewDeadline  time.Duration
	retryPeriod    time.Duration
	leaseNamespace string
	leaseName      string

	metricsAddr     string
	metricsSecure   bool
	metricsCertPath string
	metricsCertName string
	metricsCertKey  string
	profiling       bool
	healthAddr      string
	shutdownGrace   time.Duration
}

func newOptions(fs *flag.FlagSet) *options {
	o := &options{}
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "Path to a kubeconfig. Without it and --master, the in-cluster configuration is used.")
	fs.StringVar(&o.master, "master", "", "Address of the Kubernetes API server; overrides the server in --kubeconfig.")
	fs.StringVar(&o.namespace, "namespace", "", "Watch DeployObjects in this namespace only. Empty watches all namespaces.")
	fs.IntVar(&o.workers, "workers", 16, "Number of DeployObjects synced in parallel.")
	fs.Func("kube-api-qps", "Steady requests per second to the API server (default 200).", float32Setter(&o.qps))
	o.qps = 200
	fs.IntVar(&o.burst, "kube-api-burst", 400, "Requests allowed in a burst above --kube-api-qps.")
	fs.DurationVar(&o.resyncPeriod, "resync-period", 10*time.Minute, "How often every DeployObject is re-checked against its children even without events. 0 disables.")
	fs.DurationVar(&o.childBatch, "child-event-batch-period", time.Second, "How long changes to a Deployment or Service are collected before its DeployObject is synced, so that a rollout's burst of status changes costs one status write. 0 syncs at once.")
	o.podSecurity = profileNone
	fs.Var(&o.podSecurity, "pod-security-profile", "Security settings filled into every DeployObject's pod template where its spec leaves them unset: \"none\" (default) or \"restricted\", which makes pods meet Pod Security \"restricted\" (runAsNonRoot, RuntimeDefault seccomp, no privilege escalation, all capabilities dropped). Changing it rolls out every DeployObject's pods.")
	fs.BoolVar(&o.showVersion, "version", false, "Print the version and exit.")

	fs.Var(&o.leaderElect, "leader-elect", "Elect a leader among replicas with a Lease; only the leader reconciles (default true in a cluster, false with --kubeconfig or --master).")
	fs.DurationVar(&o.leaseDuration, "leader-elect-lease-duration", 15*time.Second, "How long a non-leader waits after the last renewal before taking the lease.")
	fs.DurationVar(&o.renewDeadline, "leader-elect-renew-deadline", 10*time.Second, "How long the leader keeps trying to renew before giving up leadership, which stops its writes and exits with code 1. Each renewal request times out after half of it. Less than the lease duration.")
	fs.DurationVar(&o.retryPeriod, "leader-elect-retry-period", 2*time.Second, "How long to wait between attempts to acquire or renew the lease.")
	fs.StringVar(&o.leaseNamespace, "leader-elect-resource-namespace", "", "Namespace of the Lease. Empty means the controller's own namespace in a cluster, \"default\" outside.")
	fs.StringVar(&o.leaseName, "leader-elect-resource-name", controllerName, "Name of the Lease.")

	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", "Address of the Prometheus /metrics endpoint; \"0\" disables it.")
	fs.BoolVar(&o.metricsSecure, "metrics-secure", true, "Serve the metrics address over HTTPS, to clients whose bearer token may get the path (/metrics, /debug/pprof/...) by a SubjectAccessReview. false serves plain HTTP to anyone.")
	fs.StringVar(&o.metricsCertPath, "metrics-cert-path", "", "Directory holding the metrics server's certificate and key, re-read when they change. Empty generates a self-signed certificate at start.")
	fs.StringVar(&o.metricsCertName, "metrics-cert-name", "tls.crt", "File name of the metrics server's certificate in --metrics-cert-path.")
	fs.StringVar(&o.metricsCertKey, "metrics-cert-key", "tls.key", "File name of the metrics server's private key in --metrics-cert-path.")
	fs.BoolVar(&o.profiling, "profiling", false, "Serve Go's pprof profiles under /debug/pprof/ on the metrics address.")
	fs.StringVar(&o.healthAddr, "health-probe-bind-address", ":8081", "Address of /healthz and /readyz; \"0\" disables them.")
	fs.DurationVar(&o.shutdownGrace, "shutdown-grace-period", 10*time.Second, "On SIGTERM, no new sync starts; this is how long syncs in flight may take to finish before they are cancelled, and then the lease is released. Losing the lease cancels them at once.")
	return o
}

func (o *options) validate() error {
	var errs []error
	if o.workers < 1 {
		errs = append(errs, errors.New("--workers must be at least 1"))
	}
	if o.qps <= 0 || o.burst < 1 {
		errs = append(errs, errors.New("--kube-api-qps must be positive and --kube-api-burst at least 1"))
	}
	if o.resyncPeriod < 0 || o.childBatch < 0 {
		errs = append(errs, errors.New("--resync-period and --child-event-batch-period must not be negative"))
	}
	if o.renewDeadline >= o.leaseDuration || o.retryPeriod <= 0 || o.retryPeriod >= o.renewDeadline {
		errs = append(errs, errors.New("need 0 < --leader-elect-retry-period < --leader-elect-renew-deadline < --leader-elect-lease-duration"))
	}
	if o.metricsCertPath != "" && !o.metricsSecure {
		errs = append(errs, errors.New("--metrics-cert-path needs --metrics-secure"))
	}
	if o.leaseName == "" {
		errs = append(errs, errors.New("--leader-elect-resource-name must not be empty"))
	}
	return errors.Join(errs...)
}

func float32Setter(p *float32) func(string) error {
	return func(s string) error {
		v, err := strconv.ParseFloat(s, 32)
		if err != nil {
			return err
		}
		*p = float32(v)
		return nil
	}
}

// optionalBool is a boolean flag that remembers whether it was set, for
// defaults that depend on how the controller runs.
type optionalBool struct {
	set, val bool
}

func (b *optionalBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	b.set, b.val = true, v
	return nil
}

func (b *optionalBool) String() string {
	if b == nil || !b.set {
		return ""
	}
	return strconv.FormatBool(b.val)
}

func (b *optionalBool) IsBoolFlag() bool { return true }

// value is the flag's value, or def when it was not given.
func (b *optionalBool) value(def bool) bool {
	if b.set {
		return b.val
	}
	return def
}
