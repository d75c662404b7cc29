// Package children owns what the controller makes for a DeployObject: one
// file per kind of child (the Deployment and its pod template, the Service,
// ServiceAccount, ConfigMap of inline files, PodDisruptionBudget,
// HorizontalPodAutoscaler, NetworkPolicy, Ingress, HTTPRoute with its
// redirect to https, GRPCRoute, ServiceMonitor or PodMonitor, and during a
// canary the canary ReplicaSet and the canary Service), each
// holding what is asked of that kind, how a live object is compared with
// it, what the cache keeps of it and how it is reported as a condition.
// Beside them: how one child is created, adopted, updated or deleted
// (sync.go, adopt.go), what admission made of a Deployment write
// (AdmittedWrites), why a write failed (problem.go), whether the Gateways
// a route names have accepted its current generation (acceptance.go), and
// the helpers the kinds share (labels.go, ports.go, route.go, condition.go,
// copy.go, covers.go, hash.go, trim.go, podsecurity.go).
//
// Everything here but sync.go and ApplyDeployment is a pure function of its
// arguments; the writes those two make go through the clients the
// controller passes in (see pkg/reconcile).
package children
