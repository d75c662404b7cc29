package options

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"

	// Registers the JSON log format, which --logging-format offers.
	_ "k8s.io/component-base/logs/json/register"

	"deployobject.dev/controller/pkg/identity"
)

const (
	ContentTypeProtobuf = "application/vnd.kubernetes.protobuf"
	ContentTypeJSON     = "application/json"
)

// The values of --pod-security-profile: main hands the one chosen to
// pkg/children, whose profiles of the same names say what each fills in.
const (
	PodSecurityNone       = "none"
	PodSecurityRestricted = "restricted"
)

// DefaultConfigMissingGrace is --config-missing-grace-period's default. A
// ConfigMap applied in the same `kubectl apply` or Flux Kustomization as
// its DeployObject arrives within a second; a Secret that another
// controller makes from an applied object (External Secrets from an
// ExternalSecret, cert-manager from a Certificate) takes that controller's
// reaction, and for an ACME certificate an HTTP-01 or DNS-01 challenge,
// typically tens of seconds. Two minutes covers those without hiding a
// reference that is simply wrong for long.
const DefaultConfigMissingGrace = 2 * time.Minute

// Options are the command-line flags.
type Options struct {
	Kubeconfig   string
	Master       string
	Namespace    string
	Workers      int
	QPS          float32
	Burst        int
	ContentType  string
	ResyncPeriod time.Duration
	ChildBatch   time.Duration
	PodSecurity  string
	ShowVersion  bool
	Help         bool
	Logs         *logsapi.LoggingConfiguration
	Features     featuregate.MutableVersionedFeatureGate
	// WatchLabelSelector restricts the DeployObjects reconciled to those
	// whose labels match it.
	WatchLabelSelector string

	LeaderElect    optionalBool
	LeaseDuration  time.Duration
	RenewDeadline  time.Duration
	RetryPeriod    time.Duration
	LeaseNamespace string
	LeaseName      string

	MetricsAddr     string
	MetricsSecure   bool
	MetricsCertPath string
	MetricsCertName string
	MetricsCertKey  string
	Profiling       bool
	HealthAddr      string
	ShutdownGrace   time.Duration
	// CacheSyncTimeout bounds how long the leader waits for its caches.
	CacheSyncTimeout time.Duration

	TrackSecrets       bool
	MaxConfigRollouts  int
	ConfigRolloutDelay time.Duration
	ConfigMissingGrace time.Duration
}

// newOptions returns the options with their defaults, and the flags that
// set them in named sections, as kube-controller-manager groups its flags.
func newOptions() (*Options, cliflag.NamedFlagSets, error) {
	o := &Options{Logs: logsapi.NewLoggingConfiguration(), Features: featuregate.NewFeatureGate()}
	var fss cliflag.NamedFlagSets
	// The logging options' gates: JSON is beta (on by default), the split
	// streams alpha.
	if err := logsapi.AddFeatureGates(o.Features); err != nil {
		return nil, fss, fmt.Errorf("registering the logging feature gates: %w", err)
	}

	o.Features.AddFlag(fss.FlagSet("generic"))

	fs := fss.FlagSet("controller")
	fs.StringVar(&o.Namespace, "namespace", "", "Watch DeployObjects in this namespace only. Empty watches all namespaces.")
	fs.StringVar(&o.WatchLabelSelector, "watch-label-selector", "", "Reconcile only the DeployObjects whose labels match this selector (kubectl's -l syntax), so that several instances of the controller can share a cluster, each with its own part of the DeployObjects: shard=a on one, shard!=a on another. The children of the others are never touched. Empty reconciles all.")
	fs.IntVar(&o.Workers, "workers", 16, "Number of DeployObjects synced in parallel.")
	fs.DurationVar(&o.ResyncPeriod, "resync-period", 10*time.Minute, "How often every DeployObject is re-checked against its children even without events. 0 disables.")
	fs.DurationVar(&o.ChildBatch, "child-event-batch-period", time.Second, "How long changes to a Deployment or Service are collected before its DeployObject is synced, so that a rollout's burst of status changes costs one status write. 0 syncs at once.")
	o.PodSecurity = PodSecurityNone
	fs.Var(podSecurityFlag{&o.PodSecurity}, "pod-security-profile", "Security settings filled into every DeployObject's pod template where its spec leaves them unset: \"none\" or \"restricted\", which makes pods meet Pod Security \"restricted\" (runAsNonRoot, RuntimeDefault seccomp, no privilege escalation, all capabilities dropped); with \"restricted\", a spec that explicitly sets what that policy forbids is not applied (Ready=False, PodSecurityViolation). Changing it rolls out every DeployObject's pods.")
	fs.DurationVar(&o.CacheSyncTimeout, "cache-sync-timeout", 2*time.Minute, "How long the leader waits for its caches to fill before it gives up, naming the resources it could not list, and exits, so that another replica or a restart takes over (a list refused for a missing permission never succeeds).")
	fs.DurationVar(&o.ShutdownGrace, "shutdown-grace-period", 10*time.Second, "On SIGTERM, no new sync starts; this is how long syncs in flight may take to finish before they are cancelled, and then the lease is released. Losing the lease cancels them at once.")

	fs = fss.FlagSet("configuration rollouts")
	fs.BoolVar(&o.TrackSecrets, "track-secrets", false, "Watch Secrets, so that a change of a Secret key the pods use rolls them out and a missing Secret is reported (ConfigMissing), as for ConfigMaps. Needs list and watch on Secrets (deploy/track-secrets). The cache holds per-key hashes, never a value. Off, Secret references are not part of the config hash.")
	fs.IntVar(&o.MaxConfigRollouts, "max-concurrent-config-rollouts", 10, "How many DeployObjects may be in a rollout their spec did not ask for at once: new ConfigMap or Secret data, a new --pod-security-profile or controller version. The others wait (Ready reason ConfigRolloutPending); a scale is applied meanwhile. Spec changes never wait. 0 means no limit.")
	fs.DurationVar(&o.ConfigRolloutDelay, "config-rollout-delay", 5*time.Second, "How long after the first change of a ConfigMap or Secret the DeployObjects using it are synced; further changes meanwhile are rolled out together.")
	fs.DurationVar(&o.ConfigMissingGrace, "config-missing-grace-period", DefaultConfigMissingGrace, "How long a DeployObject whose ConfigMap or Secret does not exist yet is reported as in progress (Ready reason ConfigMissing with Reconciling) before it is Stalled, for configuration applied with it or made from applied objects by another controller (External Secrets, cert-manager). 0 stalls at once.")

	fs = fss.FlagSet("client")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "Path to a kubeconfig. Without it, the kubeconfigs $KUBECONFIG lists are used, else the in-cluster configuration in a pod, else ~/.kube/config, as controller-runtime looks.")
	fs.StringVar(&o.Master, "master", "", "Address of the Kubernetes API server; overrides the server in --kubeconfig.")
	fs.Float32Var(&o.QPS, "kube-api-qps", 200, "Steady requests per second to the API server.")
	fs.IntVar(&o.Burst, "kube-api-burst", 400, "Requests allowed in a burst above --kube-api-qps.")
	fs.StringVar(&o.ContentType, "kube-api-content-type", ContentTypeProtobuf, "Content type of requests to the API server for built-in kinds (Deployments, Services and the other children, Events, Leases): "+ContentTypeProtobuf+" or "+ContentTypeJSON+". DeployObjects are custom resources, which the API server serves as JSON only.")

	fs = fss.FlagSet("leader election")
	fs.Var(&o.LeaderElect, "leader-elect", "Elect a leader among replicas with a Lease; only the leader reconciles (default true in a cluster, false with --kubeconfig or --master).")
	fs.Lookup("leader-elect").NoOptDefVal = "true"
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", 15*time.Second, "How long a non-leader waits after the last renewal before taking the lease.")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second, "How long the leader keeps trying to renew before giving up leadership, which stops its writes and exits with code 1. Each renewal request times out after half of it. Less than the lease duration.")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", 2*time.Second, "How long to wait between attempts to acquire or renew the lease.")
	fs.StringVar(&o.LeaseNamespace, "leader-elect-resource-namespace", "", "Namespace of the Lease. Empty means the controller's own namespace in a cluster, \"default\" outside.")
	fs.StringVar(&o.LeaseName, "leader-elect-resource-name", identity.ControllerName, "Name of the Lease.")

	fs = fss.FlagSet("metrics")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", ":8443", "Address of the Prometheus /metrics endpoint; \"0\" disables it. The default is the HTTPS port deploy/ and kubebuilder's scaffolds use; use :8080 with --metrics-secure=false.")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", true, "Serve the metrics address over HTTPS, to clients whose bearer token may get the path (/metrics, /debug/pprof/...) by a SubjectAccessReview. false serves plain HTTP to anyone.")
	fs.StringVar(&o.MetricsCertPath, "metrics-cert-path", "", "Directory holding the metrics server's certificate and key, re-read when they change. Empty generates a self-signed certificate at start.")
	fs.StringVar(&o.MetricsCertName, "metrics-cert-name", "tls.crt", "File name of the metrics server's certificate in --metrics-cert-path.")
	fs.StringVar(&o.MetricsCertKey, "metrics-cert-key", "tls.key", "File name of the metrics server's private key in --metrics-cert-path.")
	fs.StringVar(&o.HealthAddr, "health-probe-bind-address", ":8081", "Address of /healthz and /readyz; \"0\" disables them.")

	fs = fss.FlagSet("debugging")
	fs.BoolVar(&o.Profiling, "profiling", false, "Serve Go's pprof profiles under /debug/pprof/ on the metrics address.")

	logsapi.AddFlags(o.Logs, fss.FlagSet("logs"))

	fs = fss.FlagSet("global")
	fs.BoolVarP(&o.Help, "help", "h", false, "help for "+identity.ControllerName)
	fs.BoolVar(&o.ShowVersion, "version", false, "Print the version and exit.")
	return o, fss, nil
}

// Parse parses args into options. The flag sets are for --help and for
// logging the flags at start.
func Parse(args []string) (*Options, cliflag.NamedFlagSets, error) {
	o, fss, err := newOptions()
	if err != nil {
		return nil, fss, err
	}
	// ContinueOnError and no output: main reports the error, once, the way
	// every other start failure is reported.
	fs := pflag.NewFlagSet(identity.ControllerName, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for _, name := range fss.Order {
		fs.AddFlagSet(fss.FlagSets[name])
	}
	if err := fs.Parse(args); err != nil {
		return nil, fss, err
	}
	if fs.NArg() > 0 {
		return nil, fss, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return o, fss, nil
}

// PrintUsage prints --help as kube-controller-manager prints its own: the
// flags in their sections, with their descriptions wrapped to fit cols
// columns (0 does not wrap).
func PrintUsage(w io.Writer, fss cliflag.NamedFlagSets, cols int) {
	fmt.Fprintf(w, "The DeployObject controller keeps, for every DeployObject (app.deployobject.dev/v1),\n"+
		"a Deployment and, when the DeployObject asks for them, a Service, ServiceAccount,\n"+
		"PodDisruptionBudget, HorizontalPodAutoscaler, NetworkPolicy and Ingress, HTTPRoute or\n"+
		"GRPCRoute in line with it, and reports their state in its status.\n"+
		"It finds its cluster as controller-runtime does: --kubeconfig, $KUBECONFIG, the\n"+
		"in-cluster configuration in a pod, ~/.kube/config.\n\n"+
		"Usage:\n  %s [flags]\n", identity.ControllerName)
	cliflag.PrintSections(w, fss, cols)
}

// PrintFlags logs every flag with its value at V(1), section by section,
// as kube-controller-manager logs its flags at start.
func PrintFlags(fss cliflag.NamedFlagSets) {
	for _, name := range fss.Order {
		cliflag.PrintFlags(fss.FlagSets[name])
	}
}

// Validate reports every flag value that cannot work, together.
func (o *Options) Validate() error {
	var errs []error
	if o.Workers < 1 {
		errs = append(errs, errors.New("--workers must be at least 1"))
	}
	if o.QPS <= 0 || o.Burst < 1 {
		errs = append(errs, errors.New("--kube-api-qps must be positive and --kube-api-burst at least 1"))
	}
	if o.MaxConfigRollouts < 0 || o.ConfigRolloutDelay < 0 || o.ConfigMissingGrace < 0 {
		errs = append(errs, errors.New("--max-concurrent-config-rollouts, --config-rollout-delay and --config-missing-grace-period must not be negative"))
	}
	if o.ContentType != ContentTypeProtobuf && o.ContentType != ContentTypeJSON {
		errs = append(errs, fmt.Errorf("--kube-api-content-type must be %s or %s", ContentTypeProtobuf, ContentTypeJSON))
	}
	if o.ResyncPeriod < 0 || o.ChildBatch < 0 {
		errs = append(errs, errors.New("--resync-period and --child-event-batch-period must not be negative"))
	}
	if o.RenewDeadline >= o.LeaseDuration || o.RetryPeriod <= 0 || o.RetryPeriod >= o.RenewDeadline {
		errs = append(errs, errors.New("need 0 < --leader-elect-retry-period < --leader-elect-renew-deadline < --leader-elect-lease-duration"))
	}
	if o.MetricsCertPath != "" && !o.MetricsSecure {
		errs = append(errs, errors.New("--metrics-cert-path needs --metrics-secure"))
	}
	if o.LeaseName == "" {
		errs = append(errs, errors.New("--leader-elect-resource-name must not be empty"))
	}
	if _, err := labels.Parse(o.WatchLabelSelector); err != nil {
		errs = append(errs, fmt.Errorf("--watch-label-selector: %w", err))
	}
	if o.CacheSyncTimeout <= 0 {
		errs = append(errs, errors.New("--cache-sync-timeout must be positive"))
	}
	return errors.Join(errs...)
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

func (b *optionalBool) Type() string { return "bool" }

// Value is the flag's value, or def when it was not given.
func (b *optionalBool) Value(def bool) bool {
	if b.set {
		return b.val
	}
	return def
}

// podSecurityFlag is --pod-security-profile, refusing a profile it does not
// know as it is parsed.
type podSecurityFlag struct{ profile *string }

func (f podSecurityFlag) String() string {
	if f.profile == nil {
		return ""
	}
	return *f.profile
}

func (podSecurityFlag) Type() string { return "string" }

func (f podSecurityFlag) Set(s string) error {
	switch s {
	case PodSecurityNone, PodSecurityRestricted:
		*f.profile = s
		return nil
	}
	return fmt.Errorf("unknown profile %q: want %q or %q", s, PodSecurityNone, PodSecurityRestricted)
}
