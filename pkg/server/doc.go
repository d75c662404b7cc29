// Package server runs the controller's HTTP endpoints: /healthz and /readyz
// on the health address, and /metrics (with pprof when asked) on the
// metrics address, served over TLS with authentication and authorization
// delegated to the API server when --metrics-secure is on (secure.go,
// reviews.go, servingcert.go).
package server
