// Package monitoring checks the alerts and the Grafana dashboard of the
// monitoring component (deploy/components/monitoring) against the metrics
// the controller exports: every expression must parse with Prometheus's own
// PromQL parser, and every series and label it selects must be in the
// component's testdata/metric-names.txt, which test/e2e captures from a
// running controller and keeps current. Every alert's runbook_url must lead
// to its runbook in docs/monitoring.md. It also builds the component with
// kubectl kustomize on top of deploy/ and deploy/namespaced, with the
// runbook links docs/monitoring.md shows, and with the metrics-networkpolicy
// component; and it builds the metrics-cert-manager component, alone, with
// the monitoring component, and in the kustomizations docs/operating.md
// shows. It is a module of its own so that Prometheus's dependencies stay
// out of the controller's go.mod.
package monitoring
