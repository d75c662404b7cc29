// Package canary owns the canary's step machine: given what the spec asks
// (spec.canary and the revision of the pod template), what was persisted
// (status.canary), and what the cluster shows (the stable Deployment, the
// canary ReplicaSet, the route's live weight and whether its Gateways
// accepted it, the canary pods' restarts and readiness, the operation
// annotations), Decide says what the children must be (the canary's
// replicas, its Service, the route weight, the stable Service's pin, the
// Deployment held, paused or promoted), the status to persist, the events
// and when to look again (decide.go). How many canary pods a weight needs,
// and the weight a pod ratio gives, are in replicas.go; the operations in
// ops.go; the Ready message in message.go. It reads nothing and writes
// nothing: the sync carries out what it decides.
package canary
