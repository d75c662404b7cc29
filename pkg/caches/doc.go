// Package caches owns what the controller keeps in memory: the informer
// factories and their list-watches (informers.go) for DeployObjects and the
// children (Deployments, Services, ServiceAccounts, PodDisruptionBudgets,
// HorizontalPodAutoscalers, Ingresses, NetworkPolicies) and for every
// ConfigMap and, with --track-secrets, Secret; the transforms that trim
// each object as it enters a cache (transform.go, config.go); the packed
// stores the children are kept in (packed.go); and the discovery that
// starts the HTTPRoute and GRPCRoute caches (gateway.go) and the
// ServiceMonitor and PodMonitor caches (monitors.go) once the cluster
// serves them (discovered.go).
package caches
