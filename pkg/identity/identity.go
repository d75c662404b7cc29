// Package identity names the controller to the cluster: the name it goes by
// (user agent, events' source, lease, field manager), the label that marks
// what it manages, and the kind its children's controller ownerReferences
// name. It imports only the API types, so that the process packages
// (options, clients, server, leaderelection) can name the controller
// without importing a domain package.
package identity

import appv1 "deployobject.dev/controller/pkg/apis/app/v1"

const (
	// ControllerName names the controller to the API server: its user
	// agent, its events' source and its lease.
	ControllerName = "deployobject-controller"
	// FieldManager names the controller in managedFields of what it writes.
	FieldManager = ControllerName
)

// The managed-by label is part of the API (see pkg/apis/app/v1/labels.go):
// every child and pod carries ManagedByLabel set to ManagedByValue, and the
// child informers watch only what carries it.
const (
	ManagedByLabel = appv1.LabelManagedBy
	ManagedByValue = appv1.ManagedByController
)

// DeployObjectKind is the kind the children's controller ownerReferences
// name.
var DeployObjectKind = appv1.SchemeGroupVersion.WithKind("DeployObject")
