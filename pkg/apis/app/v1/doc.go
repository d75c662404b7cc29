// Package v1 is version v1 of the app.deployobject.dev API: the DeployObject
// resource, from which the controller derives one Deployment and one Service.
//
// +k8s:deepcopy-gen=package
// +groupName=app.deployobject.dev
// +kubebuilder:object:generate=false
package v1
