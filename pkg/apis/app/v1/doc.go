// Package v1 is version v1 of the app.deployobject.dev API: the DeployObject
// resource, from which the controller derives a Deployment and, on request,
// a Service, PodDisruptionBudget, HorizontalPodAutoscaler and Ingress or
// HTTPRoute.
//
// +k8s:deepcopy-gen=package
// +groupName=app.deployobject.dev
// +kubebuilder:object:generate=false
package v1
