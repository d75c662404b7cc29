package children

import (
	corev1 "k8s.io/api/core/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// portProtocol is p's protocol, TCP when unset, as the API server defaults
// it.
func portProtocol(p appv1.Port) corev1.Protocol {
	if p.Protocol == "" {
		return corev1.ProtocolTCP
	}
	return p.Protocol
}

// ServicePort is the port the Service exposes p on: servicePort, or
// containerPort when unset.
func ServicePort(p appv1.Port) int32 {
	if p.ServicePort != nil {
		return *p.ServicePort
	}
	return p.ContainerPort
}
