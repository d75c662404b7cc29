package main

import (
	"context"
	"fmt"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// What the controller writes, from the API package that documents it.
const (
	managedByLabel = appv1.LabelManagedBy
	managedByValue = appv1.ManagedByController
	nameLabel      = appv1.LabelName
	containerName  = appv1.ContainerName
)

const (
	image        = "nginx:1.27"
	updatedImage = "nginx:1.28"
	portName     = "http"
	port         = 8080
	fieldManager = "deployobject-bench"
)

var deployObjectKind = appv1.SchemeGroupVersion.WithKind("DeployObject")

// forEach calls fn for 0..n-1 on at most workers goroutines. It returns the
// first error, after which no further calls start.
func forEach(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for i := range next {
				if err := fn(ctx, i); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

func objectName(i int) string { return fmt.Sprintf("obj-%05d", i) }

// newDeployObject is the benchmark's DeployObject: one container with one
// port, so that it has a Deployment and a Service.
func newDeployObject(ns string, i int, replicas int32) *appv1.DeployObject {
	return &appv1.DeployObject{
		ObjectMeta: metav1.ObjectMeta{Name: objectName(i), Namespace: ns},
		Spec: appv1.DeployObjectSpec{
			Image:    image,
			Replicas: ptr.To(replicas),
			Ports:    []appv1.Port{{Name: portName, ContainerPort: port}},
		},
	}
}

// withChildren makes d ask for every optional child: a disruption budget,
// autoscaling, which needs a CPU request, a route with two rules, and a
// NetworkPolicy admitting the namespace's pods and the route's proxies and
// restricting egress, with labels and annotations on the route and the
// Service and the Service's traffic options. The route is an Ingress: the
// benchmark's cluster has no Gateway API CRDs, and no ingress controller,
// so the Route condition stays False, which Ready does not wait for.
func withChildren(d *appv1.DeployObject) {
	d.Spec.Route = &appv1.Route{IngressClassName: ptr.To("bench"), Hostnames: []string{d.Name + ".bench.example"},
		Rules: []appv1.RouteRule{
			{Path: "/healthz", PathType: appv1.PathExact, Port: portName},
			{Path: "/", PathType: appv1.PathPrefix, Port: portName},
		},
		Metadata: &appv1.ChildMetadata{Annotations: map[string]string{"cert-manager.io/cluster-issuer": "bench", "external-dns.alpha.kubernetes.io/hostname": d.Name + ".bench.example"}}}
	d.Spec.NetworkPolicy = &appv1.NetworkPolicy{
		From:      []appv1.NetworkPeer{{PodSelector: &appv1.LabelSelector{}}},
		RouteFrom: &appv1.NetworkPeer{NamespaceSelector: &appv1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "ingress-bench"}}},
		Egress:    &appv1.NetworkEgress{To: []appv1.NetworkPeer{{IPBlock: &appv1.IPBlock{CIDR: "10.0.0.0/8"}}}},
	}
	d.Spec.Service = &appv1.ServiceSettings{
		Metadata:              &appv1.ChildMetadata{Labels: map[string]string{"team": "bench"}},
		InternalTrafficPolicy: ptr.To(corev1.ServiceInternalTrafficPolicyLocal),
		TrafficDistribution:   ptr.To(corev1.ServiceTrafficDistributionPreferClose),
	}
	d.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	d.Spec.DisruptionBudget = &appv1.DisruptionBudget{MaxUnavailable: ptr.To(intstr.FromInt32(1))}
	d.Spec.Autoscaling = &appv1.Autoscaling{MinReplicas: d.Spec.Replicas, MaxReplicas: 3, TargetCPUUtilizationPercentage: ptr.To[int32](80),
		Metrics: []appv1.MetricSpec{{Type: appv1.PodsMetricSourceType, Pods: &appv1.PodsMetricSource{
			Metric: appv1.MetricIdentifier{Name: "http_requests_per_second"},
			Target: appv1.MetricTarget{Type: appv1.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("100"))},
		}}}}
	d.Spec.ServiceAccount = &appv1.OwnedServiceAccount{Metadata: &appv1.ChildMetadata{Annotations: map[string]string{"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/" + d.Name}}}
	d.Spec.Files = []appv1.File{
		{Path: "/etc/bench/app.yaml", Content: ptr.To("name: " + d.Name + "\nlevel: info\n")},
		{Path: "/etc/bench/flags.json", ConfigMapKeyRef: &appv1.FileKeyRef{Name: "bench-flags", Key: "flags.json", Optional: ptr.To(true)}},
	}
	d.Spec.WorkingDir = "/srv"
	d.Spec.EnableServiceLinks = ptr.To(false)
	d.Spec.DNSConfig = &corev1.PodDNSConfig{Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}}}
}

// createDeployObjects creates n DeployObjects in ns with the benchmark's
// concurrency and returns them as created. Each of opts changes every
// DeployObject before it is created.
func (b *bench) createDeployObjects(ctx context.Context, ns string, n int, replicas int32, opts ...func(*appv1.DeployObject)) ([]*appv1.DeployObject, error) {
	ctx, cancel := context.WithTimeout(ctx, waitTimeout(n))
	defer cancel()
	out := make([]*appv1.DeployObject, n)
	err := forEach(ctx, n, b.opts.concurrency, func(ctx context.Context, i int) error {
		d := newDeployObject(ns, i, replicas)
		for _, o := range opts {
			o(d)
		}
		d, err := b.client.AppV1().DeployObjects(ns).Create(ctx, d, metav1.CreateOptions{FieldManager: fieldManager})
		if err != nil {
			return fmt.Errorf("creating DeployObject %s/%s: %w", ns, objectName(i), err)
		}
		out[i] = d
		return nil
	})
	return out, err
}

// updateImages sets the image of the n DeployObjects of ns, retrying each on
// conflict as any client sharing them with the controller must.
func (b *bench) updateImages(ctx context.Context, ns string, n int, newImage string) error {
	ctx, cancel := context.WithTimeout(ctx, waitTimeout(n))
	defer cancel()
	dobjs := b.client.AppV1().DeployObjects(ns)
	return forEach(ctx, n, b.opts.concurrency, func(ctx context.Context, i int) error {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			d, err := dobjs.Get(ctx, objectName(i), metav1.GetOptions{})
			if err != nil {
				return err
			}
			d.Spec.Image = newImage
			_, err = dobjs.Update(ctx, d, metav1.UpdateOptions{FieldManager: fieldManager})
			return err
		})
		if err != nil {
			return fmt.Errorf("updating DeployObject %s/%s: %w", ns, objectName(i), err)
		}
		return nil
	})
}

// writeMinimal makes the fewest writes that take d to Ready as the
// controller would: its Deployment and Service as the controller builds
// them, and one status write. It has no logic, caches or rate limit, which
// makes it the limit the controller is compared with.
func (b *bench) writeMinimal(ctx context.Context, d *appv1.DeployObject) error {
	meta := metav1.ObjectMeta{
		Name:            d.Name,
		Namespace:       d.Namespace,
		Labels:          map[string]string{managedByLabel: managedByValue, nameLabel: d.Name},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, deployObjectKind)},
	}
	selector := map[string]string{nameLabel: d.Name}
	dep := &appsv1.Deployment{
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas: d.Spec.Replicas,
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: meta.Labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  containerName,
					Image: d.Spec.Image,
					Ports: []corev1.ContainerPort{{Name: portName, ContainerPort: port, Protocol: corev1.ProtocolTCP}},
				}}},
			},
		},
	}
	if _, err := b.kube.AppsV1().Deployments(d.Namespace).Create(ctx, dep, metav1.CreateOptions{FieldManager: fieldManager}); err != nil {
		return fmt.Errorf("creating Deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	svc := &corev1.Service{
		ObjectMeta: *meta.DeepCopy(),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: selector,
			Ports: []corev1.ServicePort{{
				Name: portName, Protocol: corev1.ProtocolTCP, Port: port, TargetPort: intstr.FromInt32(port),
			}},
		},
	}
	if _, err := b.kube.CoreV1().Services(d.Namespace).Create(ctx, svc, metav1.CreateOptions{FieldManager: fieldManager}); err != nil {
		return fmt.Errorf("creating Service %s/%s: %w", d.Namespace, d.Name, err)
	}
	withStatus := d.DeepCopy()
	withStatus.Status = appv1.DeployObjectStatus{
		ObservedGeneration: d.Generation,
		Selector:           nameLabel + "=" + d.Name,
		Conditions: []metav1.Condition{{
			Type:               appv1.ConditionReady,
			Status:             metav1.ConditionTrue,
			ObservedGeneration: d.Generation,
			LastTransitionTime: metav1.Now(),
			Reason:             appv1.ReasonAvailable,
			Message:            "written by the benchmark's logic-free writer",
		}},
	}
	// d is as created and nobody else writes it, so its resourceVersion is
	// current and the update cannot conflict.
	if _, err := b.client.AppV1().DeployObjects(d.Namespace).UpdateStatus(ctx, withStatus, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
		return fmt.Errorf("writing status of DeployObject %s/%s: %w", d.Namespace, d.Name, err)
	}
	return nil
}

// createUnrelated creates n Deployments without the controller's label, n
// ConfigMaps and n Secrets in ns: objects a controller shares every cluster
// with. It should not hold the Deployments at all, and of the ConfigMaps and
// Secrets, which it watches for configuration rollouts, only per-key hashes.
func (b *bench) createUnrelated(ctx context.Context, ns string, n int) error {
	ctx, cancel := context.WithTimeout(ctx, waitTimeout(3*n))
	defer cancel()
	data := strings.Repeat("key: value # unrelated configuration\n", 8)
	return forEach(ctx, 3*n, b.opts.concurrency, func(ctx context.Context, i int) error {
		if i >= 2*n {
			name := fmt.Sprintf("secret-%05d", i-2*n)
			secret := &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Data:       map[string][]byte{"config.yaml": []byte(data)},
			}
			if _, err := b.kube.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{FieldManager: fieldManager}); err != nil {
				return fmt.Errorf("creating Secret %s/%s: %w", ns, name, err)
			}
			return nil
		}
		if i >= n {
			name := fmt.Sprintf("config-%05d", i-n)
			cm := &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Data:       map[string]string{"config.yaml": data},
			}
			if _, err := b.kube.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{FieldManager: fieldManager}); err != nil {
				return fmt.Errorf("creating ConfigMap %s/%s: %w", ns, name, err)
			}
			return nil
		}
		name := fmt.Sprintf("unrelated-%05d", i)
		selector := map[string]string{"app": name}
		dep := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: selector},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](0),
				Selector: &metav1.LabelSelector{MatchLabels: selector},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: selector},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: image}}},
				},
			},
		}
		if _, err := b.kube.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{FieldManager: fieldManager}); err != nil {
			return fmt.Errorf("creating Deployment %s/%s: %w", ns, name, err)
		}
		return nil
	})
}
