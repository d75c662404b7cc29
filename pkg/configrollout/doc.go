// Package configrollout owns configuration rollouts: which ConfigMap and
// Secret keys a DeployObject's pods consume (refs.go), the hash of that data
// that goes into the pod template (hash.go), the index from a ConfigMap or
// Secret to its users (index.go), the cluster-wide limit on rollouts that
// configuration alone started (limiter.go), how long missing configuration
// is reported as in progress (grace.go), the event handlers that sync the
// users of an object whose data changed (tracking.go), and the decision
// whether configuration holds a Deployment write, with the adoption of the
// rollouts an earlier leader started (rollouts.go), which the sync carries
// out.
package configrollout
