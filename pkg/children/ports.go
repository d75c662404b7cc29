package children

import (
	corev1 "k8s.io/api/core/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

func portProtocol(p appv1.Port) corev1.Protocol {
	if p.Protocol == "" {
		return corev1.ProtocolTCP
	}
	return p.Protocol
}

// The Service: what the controller asks of it, how a live one is brought in
// line, and what the cache keeps. The controller owns its labels (not
// others' labels), type, selector and ports; clusterIP, nodePorts and
// everything else belong to the API server or to someone else and are
// carried over from the live object on update. Its surface is small and
// fixed, so it is compared field by field and written with an update.

func ServicePort(p appv1.Port) int32 {
	if p.ServicePort != nil {
		return *p.ServicePort
	}
	return p.ContainerPort
}
