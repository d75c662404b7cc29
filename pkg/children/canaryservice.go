package children

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// The Services of a canary sent traffic by a Gateway API route: the
// canary Service, the route's second backend, which selects the canary's
// pods only; and the stable Service pinned to the stable pods, so that
// its share of the traffic does not reach canary pods too (which would
// make the route's weights a lie).
//
// The canary Service is owned, compared, cached and written as the Service
// is (service.go): it rides the Service kind, with MergeService and
// ServiceOps. It is a ClusterIP Service whatever spec.service asks for:
// only the route reaches it, and the settings of the stable Service (a
// load balancer, its class, source ranges, traffic policies) are for
// clients that reach the stable Service directly.

// CanaryServiceName is the name of dobj's canary Service.
func CanaryServiceName(dobj *appv1.DeployObject) string {
	return dobj.Name + "-canary"
}

// DesiredCanaryService is the canary Service of dobj's canary id: the
// Service's ports, selecting the canary's pods; nil when dobj has no
// ports (and so no Service to split traffic with).
func DesiredCanaryService(dobj *appv1.DeployObject, id string) *corev1.Service {
	if !WantsService(dobj) {
		return nil
	}
	ports := servicePorts(dobj)
	svc := &corev1.Service{
		ObjectMeta: childMeta(dobj),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: canarySelector(dobj, id),
			Ports:    ports,
		},
	}
	svc.Name = CanaryServiceName(dobj)
	withChildMetadata(&svc.ObjectMeta, nil, appProtocolFields(ports)...)
	return svc
}

// PinnedService is svc, a desired Service, selecting only the pods of the
// ReplicaSet whose pod-template-hash is hash; svc unpinned when hash is
// empty. Either way a copy: svc is not changed. MergeService owns the
// whole selector, so pinning and unpinning are each one write.
func PinnedService(svc *corev1.Service, hash string) *corev1.Service {
	out := svc.DeepCopy()
	if out != nil && hash != "" {
		out.Spec.Selector = WithLabels(out.Spec.Selector, map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: hash})
	}
	return out
}
