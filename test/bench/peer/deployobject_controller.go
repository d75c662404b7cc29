package main

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// managedBy marks the peer's children. It is not the controller's value, so
// that neither ever takes the other's children for its own.
const managedBy = "deployobject-peer"

// DeployObjectReconciler reconciles a DeployObject object
type DeployObjectReconciler struct {
	client.Client
	Scheme *runtime.Scheme
}

// +kubebuilder:rbac:groups=app.deployobject.dev,resources=deployobjects,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=app.deployobject.dev,resources=deployobjects/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update;patch;delete

// Reconcile moves the cluster toward the DeployObject's spec: it creates or
// updates the Deployment and, when ports are set, the Service, then writes
// the status from the Deployment.
func (r *DeployObjectReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var do appv1.DeployObject
	if err := r.Get(ctx, req.NamespacedName, &do); err != nil {
		// Deleted: the garbage collector removes the children.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	labels := map[string]string{
		appv1.LabelManagedBy: managedBy,
		appv1.LabelName:      do.Name,
	}

	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: do.Name, Namespace: do.Namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, dep, func() error {
		dep.Labels = labels
		dep.Spec.Replicas = do.Spec.Replicas
		// The selector is immutable: set it only when creating, as
		// controllerutil's own example does.
		if dep.CreationTimestamp.IsZero() {
			dep.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{appv1.LabelName: do.Name}}
		}
		dep.Spec.Template = corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{
				Containers: []corev1.Container{{
					Name:      appv1.ContainerName,
					Image:     do.Spec.Image,
					Ports:     containerPorts(do.Spec.Ports),
					Env:       do.Spec.Env,
					Resources: do.Spec.Resources,
				}},
			},
		}
		return controllerutil.SetControllerReference(&do, dep, r.Scheme)
	})
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("reconciling Deployment: %w", err)
	}

	if len(do.Spec.Ports) > 0 {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: do.Name, Namespace: do.Namespace}}
		_, err := controllerutil.CreateOrUpdate(ctx, r.Client, svc, func() error {
			svc.Labels = labels
			svc.Spec.Type = corev1.ServiceType(do.Spec.ServiceType)
			svc.Spec.Selector = map[string]string{appv1.LabelName: do.Name}
			svc.Spec.Ports = servicePorts(do.Spec.Ports)
			return controllerutil.SetControllerReference(&do, svc, r.Scheme)
		})
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("reconciling Service: %w", err)
		}
	}

	setStatus(&do, dep)
	if err := r.Status().Update(ctx, &do); err != nil {
		return ctrl.Result{}, fmt.Errorf("updating status: %w", err)
	}
	return ctrl.Result{}, nil
}

// setStatus copies the Deployment's counts into the DeployObject's status
// and sets Ready: True once the Deployment has rolled out the current
// template to every desired replica, all available.
func setStatus(do *appv1.DeployObject, dep *appsv1.Deployment) {
	do.Status.ObservedGeneration = do.Generation
	do.Status.Replicas = dep.Status.Replicas
	do.Status.ReadyReplicas = dep.Status.ReadyReplicas
	do.Status.AvailableReplicas = dep.Status.AvailableReplicas
	do.Status.UpdatedReplicas = dep.Status.UpdatedReplicas

	ready := metav1.Condition{
		Type:               appv1.ConditionReady,
		Status:             metav1.ConditionFalse,
		Reason:             appv1.ReasonProgressing,
		Message:            "the Deployment is rolling out",
		ObservedGeneration: do.Generation,
	}
	want := int32(1)
	if dep.Spec.Replicas != nil {
		want = *dep.Spec.Replicas
	}
	st := dep.Status
	if st.ObservedGeneration >= dep.Generation && st.Replicas == want && st.UpdatedReplicas == want && st.AvailableReplicas == want {
		ready.Status = metav1.ConditionTrue
		ready.Reason = appv1.ReasonAvailable
		ready.Message = "the Deployment is rolled out and available"
	}
	meta.SetStatusCondition(&do.Status.Conditions, ready)
}

func containerPorts(ports []appv1.Port) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	for _, p := range ports {
		out = append(out, corev1.ContainerPort{Name: p.Name, ContainerPort: p.ContainerPort, Protocol: p.Protocol})
	}
	return out
}

func servicePorts(ports []appv1.Port) []corev1.ServicePort {
	var out []corev1.ServicePort
	for _, p := range ports {
		port := p.ContainerPort
		if p.ServicePort != nil {
			port = *p.ServicePort
		}
		out = append(out, corev1.ServicePort{
			Name:        p.Name,
			Protocol:    p.Protocol,
			AppProtocol: p.AppProtocol,
			Port:        port,
			TargetPort:  intstr.FromInt32(p.ContainerPort),
		})
	}
	return out
}

// SetupWithManager sets up the controller with the Manager.
func (r *DeployObjectReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&appv1.DeployObject{}).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Named("deployobject").
		Complete(countReconciles(r))
}
