// Package caches owns what the controller keeps in memory: the table of
// the typed kinds of child (kinds.go: Deployments, Services,
// ServiceAccounts, ConfigMaps, PodDisruptionBudgets,
// HorizontalPodAutoscalers, Ingresses, NetworkPolicies, canary
// ReplicaSets), from which their informers, the readers of their caches,
// the caches-synced checks and their transforms are derived; the
// informers and their list-watches (informers.go) for DeployObjects, those
// kinds and, with --track-secrets, Secrets; the transforms that trim each
// object as it enters a cache (transform.go, config.go); the packed stores
// the children are kept in (packed.go); and the discovery that starts the
// HTTPRoute and GRPCRoute caches (gateway.go) and the ServiceMonitor and
// PodMonitor caches (monitors.go) once the cluster serves them
// (discovered.go), which are therefore not rows of the table.
package caches
