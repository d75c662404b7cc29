package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// RolloutCollector exports the limiter's counts as the gauge
// deployobject_config_rollouts{state="active"|"pending"}, read when
// scraped.
type RolloutCollector struct {
	limiter interface{ Counts() (active, pending int) }
	desc    *prometheus.Desc
}

// NewRolloutCollector reads l's counts at every scrape.
func NewRolloutCollector(l interface{ Counts() (active, pending int) }) *RolloutCollector {
	return &RolloutCollector{limiter: l, desc: prometheus.NewDesc("deployobject_config_rollouts",
		"DeployObjects in a rollout started by a change of their ConfigMaps or Secrets (active), and those waiting for a slot under --max-concurrent-config-rollouts (pending).",
		[]string{"state"}, nil)}
}

func (c *RolloutCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *RolloutCollector) Collect(ch chan<- prometheus.Metric) {
	active, pending := c.limiter.Counts()
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(active), "active")
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(pending), "pending")
}
