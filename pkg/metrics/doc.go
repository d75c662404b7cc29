// Package metrics defines the controller's Prometheus metrics: reconciles,
// leadership, client-go's work queue, informer and REST client metrics under
// their upstream names, and the configuration rollouts under way.
package metrics
