// Package caches owns what the controller keeps in memory: the informer
// factories and their list-watches (informers.go), the transforms that
// trim each object as it enters a cache (transform.go, config.go), the
// packed stores the children are kept in (packed.go), and the discovery
// that starts the HTTPRoute and GRPCRoute caches once the cluster serves
// them (gateway.go).
package caches
