// Package reconcile runs the children of one DeployObject in a sync: the
// list of steps in children.go, one row per kind (the ServiceAccount and
// the ConfigMap of inline files the pods need, the Deployment, the clean-up
// of what older pod templates used, the Service, PodDisruptionBudget,
// HorizontalPodAutoscaler, NetworkPolicy, the Ingress and Gateway API
// routes with the switch between them made before it is broken, and the
// ServiceMonitor or PodMonitor). What each kind should be is pkg/children's;
// whether configuration holds the Deployment is pkg/configrollout's; this
// package carries out their answers with the clients, and reports what
// came of it for the status (pkg/status) and the events.
package reconcile
