package main

import (
	"path/filepath"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
)

// TestHelmLint runs `helm lint --strict` on the chart, as Helm 4's own
// lint action does it, with the defaults and with every piece turned on:
// a warning fails as an error does.
func TestHelmLint(t *testing.T) {
	for _, tc := range []struct{ name, namespace, values string }{
		{"defaults", systemNamespace, ""},
		{"every piece", systemNamespace, "{trackSecrets: true, monitoring: {enabled: true, labels: {release: x}, runbookURL: 'https://git.invalid/docs/monitoring.md'}, metricsNetworkPolicy: {enabled: true}, metricsCertManager: {enabled: true}}"},
		{"namespaced", "team-a", "{namespaced: true, trackSecrets: true, monitoring: {enabled: true}, metricsNetworkPolicy: {enabled: true}, metricsCertManager: {enabled: true}}"},
		{"an issuer of one's own", systemNamespace, "metricsCertManager: {enabled: true, issuerRef: {name: internal-ca, kind: ClusterIssuer}}"},
		{"one replica without leader election", systemNamespace, "{replicas: 1, leaderElection: {enabled: false}, podDisruptionBudget: {enabled: false}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lint := action.NewLint()
			lint.Strict = true
			lint.Namespace = tc.namespace
			res := lint.Run([]string{filepath.Join(root, chartDir)}, values(t, tc.values))
			if res.TotalChartsLinted != 1 {
				t.Errorf("%d charts linted, want 1", res.TotalChartsLinted)
			}
			for _, m := range res.Messages {
				if m.Severity > support.InfoSev {
					t.Errorf("%s", m)
				} else {
					t.Logf("%s", m)
				}
			}
			for _, err := range res.Errors {
				t.Errorf("lint: %v", err)
			}
		})
	}
}
