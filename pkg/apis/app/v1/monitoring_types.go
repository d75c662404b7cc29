package v1

// Monitoring asks for Prometheus to scrape the application's metrics
// through prometheus-operator: a ServiceMonitor (monitoring.coreos.com/v1)
// of the same name when port names one of spec.ports, which the Service
// exposes, or a PodMonitor of the same name when it names a port of a
// sidecar (an exporter beside the application), which the Service does not
// expose. Either selects this DeployObject's Service or pods alone. On a
// cluster without prometheus-operator's CRDs the application runs as
// usual, and the Monitoring condition says that scraping is not set up.
//
// +kubebuilder:validation:XValidation:rule="!has(self.interval) || !has(self.scrapeTimeout) || int('0' + self.scrapeTimeout.find('[0-9]+y').split('y')[0]) * 31536000000 + int('0' + self.scrapeTimeout.find('[0-9]+w').split('w')[0]) * 604800000 + int('0' + self.scrapeTimeout.find('[0-9]+d').split('d')[0]) * 86400000 + int('0' + self.scrapeTimeout.find('[0-9]+h').split('h')[0]) * 3600000 + int('0' + self.scrapeTimeout.find('[0-9]+m([0-9]|$)').split('m')[0]) * 60000 + int('0' + self.scrapeTimeout.find('[0-9]+s').split('s')[0]) * 1000 + int('0' + self.scrapeTimeout.find('[0-9]+ms').split('m')[0]) <= int('0' + self.interval.find('[0-9]+y').split('y')[0]) * 31536000000 + int('0' + self.interval.find('[0-9]+w').split('w')[0]) * 604800000 + int('0' + self.interval.find('[0-9]+d').split('d')[0]) * 86400000 + int('0' + self.interval.find('[0-9]+h').split('h')[0]) * 3600000 + int('0' + self.interval.find('[0-9]+m([0-9]|$)').split('m')[0]) * 60000 + int('0' + self.interval.find('[0-9]+s').split('s')[0]) * 1000 + int('0' + self.interval.find('[0-9]+ms').split('m')[0])",message="scrapeTimeout must not exceed interval: Prometheus refuses such a scrape configuration",fieldPath=".scrapeTimeout"
type Monitoring struct {
	// port is the name of the port Prometheus scrapes: one of spec.ports
	// (a ServiceMonitor, through the Service) or a named port of one of
	// spec.sidecars (a PodMonitor, straight to the pods), with protocol
	// TCP.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Port string `json:"port"`

	// path is the HTTP path of the metrics, "/metrics" when unset.
	// +optional
	Path HTTPPath `json:"path,omitempty"`

	// interval is how often Prometheus scrapes, as a Prometheus duration
	// such as "30s" or "1m30s" (units y, w, d, h, m, s, ms, each number of
	// at most 6 digits); unset, the Prometheus' own scrape interval applies.
	// +optional
	Interval *PrometheusDuration `json:"interval,omitempty"`

	// scrapeTimeout bounds one scrape, as a Prometheus duration; it must not
	// exceed interval. Unset, the Prometheus' own timeout applies.
	// +optional
	ScrapeTimeout *PrometheusDuration `json:"scrapeTimeout,omitempty"`

	// metadata are labels and annotations for the ServiceMonitor or
	// PodMonitor, such as the label a Prometheus' serviceMonitorSelector or
	// podMonitorSelector selects (kube-prometheus-stack's "release"); see
	// ChildMetadata for who owns which key.
	// +optional
	Metadata *ChildMetadata `json:"metadata,omitempty"`
}

// PrometheusDuration is a duration in Prometheus' format, as
// prometheus-operator validates it: "0", or numbers each followed by one
// of the units y, w, d, h, m, s and ms, in that order, such as "1m30s".
// Each number has at most 6 digits, so that the comparison of a timeout
// with an interval cannot overflow. The comparison reads each unit's
// number: CEL's duration() takes neither d, w nor y.
//
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=51
// +kubebuilder:validation:Pattern=`^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$`
// +kubebuilder:validation:XValidation:rule="!self.matches('[0-9]{7}')",message="each number of a duration must have at most 6 digits"
type PrometheusDuration string
