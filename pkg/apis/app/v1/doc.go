// Package v1 is version v1 of the app.deployobject.dev API: the DeployObject
// resource, from which the controller derives a Deployment and, on request,
// a Service, ServiceAccount, PodDisruptionBudget, HorizontalPodAutoscaler,
// NetworkPolicy and Ingress, HTTPRoute or GRPCRoute.
//
// +k8s:deepcopy-gen=package
// +groupName=app.deployobject.dev
// +kubebuilder:object:generate=false
package v1
