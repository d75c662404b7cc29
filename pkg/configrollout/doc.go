// Package configrollout owns configuration rollouts: which ConfigMap and
// Secret keys a DeployObject's pods consume (refs.go), the hash of that data
// that goes into the pod template (hash.go), the index from a ConfigMap or
// Secret to its users (index.go), the cluster-wide limit on rollouts that
// configuration alone started (limiter.go), and the event handlers that
// sync the users of an object whose data changed (tracking.go).
package configrollout
