package v1

import (
	"k8s.io/apimachinery/pkg/api/resource"
)

// The metrics of spec.autoscaling beyond the CPU and memory shortcuts. The
// types mirror autoscaling/v2's MetricSpec field for field, so that each
// metric becomes the HorizontalPodAutoscaler's metric of the same shape,
// but they are the project's own: every string and list has a bound, so
// the CEL rules stay within the API server's cost budget, and each rule of
// the HorizontalPodAutoscaler API's validation is checked at admission.

// MetricSourceType is the kind of a metric: Resource, Pods, Object,
// External or ContainerResource.
// +kubebuilder:validation:Enum=Resource;Pods;Object;External;ContainerResource
type MetricSourceType string

// The metric source types, as in autoscaling/v2.
const (
	ResourceMetricSourceType          MetricSourceType = "Resource"
	PodsMetricSourceType              MetricSourceType = "Pods"
	ObjectMetricSourceType            MetricSourceType = "Object"
	ExternalMetricSourceType          MetricSourceType = "External"
	ContainerResourceMetricSourceType MetricSourceType = "ContainerResource"
)

// MetricTargetType is what a target compares: Utilization, Value or
// AverageValue.
// +kubebuilder:validation:Enum=Utilization;Value;AverageValue
type MetricTargetType string

// The metric target types, as in autoscaling/v2.
const (
	UtilizationMetricType  MetricTargetType = "Utilization"
	ValueMetricType        MetricTargetType = "Value"
	AverageValueMetricType MetricTargetType = "AverageValue"
)

// MetricSpec is one metric the autoscaler scales on, as an autoscaling/v2
// MetricSpec: type names the source, and exactly that source is set. The
// autoscaler computes a replica count for each metric and takes the
// largest.
//
// +kubebuilder:validation:XValidation:rule="(self.type == 'Resource') == has(self.resource) && (self.type == 'Pods') == has(self.pods) && (self.type == 'Object') == has(self.object) && (self.type == 'External') == has(self.external) && (self.type == 'ContainerResource') == has(self.containerResource)",message="a metric sets exactly the source its type names: resource for Resource, pods for Pods, object for Object, external for External, containerResource for ContainerResource"
type MetricSpec struct {
	// type is the metric's source: Resource (CPU or memory of the pods,
	// from the resource metrics API), Pods (a custom metric of each pod),
	// Object (a custom metric describing one object, such as an Ingress's
	// requests per second), External (a metric from outside the cluster,
	// such as a queue's length) or ContainerResource (CPU or memory of one
	// container of each pod).
	// +required
	Type MetricSourceType `json:"type"`

	// resource is a resource metric (cpu or memory) averaged over the
	// pods, with type Resource. A resource the CPU or memory shortcut
	// already targets is refused.
	// +optional
	Resource *ResourceMetricSource `json:"resource,omitempty"`

	// pods is a custom metric averaged over the pods, from the custom
	// metrics API (such as prometheus-adapter), with type Pods.
	// +optional
	Pods *PodsMetricSource `json:"pods,omitempty"`

	// object is a custom metric describing one object in the namespace,
	// from the custom metrics API, with type Object.
	// +optional
	Object *ObjectMetricSource `json:"object,omitempty"`

	// external is a metric not tied to any object of the cluster, from
	// the external metrics API (such as KEDA's metrics server or
	// prometheus-adapter's external rules), with type External.
	// +optional
	External *ExternalMetricSource `json:"external,omitempty"`

	// containerResource is a resource metric (cpu or memory) of one
	// container of each pod, averaged over the pods, with type
	// ContainerResource.
	// +optional
	ContainerResource *ContainerResourceMetricSource `json:"containerResource,omitempty"`
}

// ResourceMetricSource is a resource of the pods, as the resource metrics
// API (metrics-server) reports it, summed over each pod's containers.
//
// +kubebuilder:validation:XValidation:rule="self.target.type in ['Utilization', 'AverageValue']",message="a Resource metric's target type is Utilization or AverageValue",fieldPath=".target.type"
type ResourceMetricSource struct {
	// name is the resource: cpu or memory, the two the resource metrics
	// API serves.
	// +required
	// +kubebuilder:validation:Enum=cpu;memory
	Name string `json:"name"`

	// target is the value the autoscaler aims at: Utilization (percent of
	// the pods' requests, which need a request for the resource) or
	// AverageValue (a quantity per pod).
	// +required
	Target MetricTarget `json:"target"`
}

// ContainerResourceMetricSource is a resource of one container of each
// pod, as the resource metrics API reports it.
//
// +kubebuilder:validation:XValidation:rule="self.target.type in ['Utilization', 'AverageValue']",message="a ContainerResource metric's target type is Utilization or AverageValue",fieldPath=".target.type"
type ContainerResourceMetricSource struct {
	// name is the resource: cpu or memory.
	// +required
	// +kubebuilder:validation:Enum=cpu;memory
	Name string `json:"name"`

	// container is the container whose use is measured: app (the main
	// container) or the name of one of spec.sidecars.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Container string `json:"container"`

	// target is the value the autoscaler aims at: Utilization (percent of
	// the container's request, which it needs) or AverageValue (a quantity
	// per pod).
	// +required
	Target MetricTarget `json:"target"`
}

// PodsMetricSource is a custom metric of each pod, averaged over the pods.
//
// +kubebuilder:validation:XValidation:rule="self.target.type == 'AverageValue'",message="a Pods metric's target type is AverageValue",fieldPath=".target.type"
type PodsMetricSource struct {
	// metric names the metric and, optionally, selects its series.
	// +required
	Metric MetricIdentifier `json:"metric"`

	// target is the average value per pod the autoscaler aims at: type
	// AverageValue.
	// +required
	Target MetricTarget `json:"target"`
}

// ObjectMetricSource is a custom metric describing one object in the
// DeployObject's namespace, such as the requests per second of an Ingress.
//
// +kubebuilder:validation:XValidation:rule="self.target.type in ['Value', 'AverageValue']",message="an Object metric's target type is Value or AverageValue",fieldPath=".target.type"
type ObjectMetricSource struct {
	// describedObject is the object the metric describes.
	// +required
	DescribedObject MetricObjectReference `json:"describedObject"`

	// metric names the metric and, optionally, selects its series.
	// +required
	Metric MetricIdentifier `json:"metric"`

	// target is the value the autoscaler aims at: Value (the metric's
	// value) or AverageValue (the value divided by the number of pods).
	// +required
	Target MetricTarget `json:"target"`
}

// ExternalMetricSource is a metric from outside the cluster, such as the
// length of a message queue.
//
// +kubebuilder:validation:XValidation:rule="self.target.type in ['Value', 'AverageValue']",message="an External metric's target type is Value or AverageValue",fieldPath=".target.type"
type ExternalMetricSource struct {
	// metric names the metric and, optionally, selects its series (for
	// example the queue).
	// +required
	Metric MetricIdentifier `json:"metric"`

	// target is the value the autoscaler aims at: Value (the metric's
	// value) or AverageValue (the value divided by the number of pods, for
	// example 30 messages per pod).
	// +required
	Target MetricTarget `json:"target"`
}

// MetricObjectReference names the object an Object metric describes, in
// the DeployObject's namespace.
type MetricObjectReference struct {
	// apiVersion is the object's API version, such as
	// networking.k8s.io/v1; empty or a version alone for the core API.
	// +optional
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[a-z0-9]+$`
	APIVersion string `json:"apiVersion,omitempty"`

	// kind is the object's kind, such as Ingress.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9]*$`
	Kind string `json:"kind"`

	// name is the object's name: not '.' or '..', without '/' or '%'.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[^/%]+$`
	// +kubebuilder:validation:XValidation:rule="self != '.' && self != '..'",message="name may not be '.' or '..'"
	Name string `json:"name"`
}

// MetricIdentifier names a custom or external metric.
type MetricIdentifier struct {
	// name is the metric's name, as the metrics API serves it (for example
	// queue_messages_ready): not '.' or '..', without '/' or '%'.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[^/%]+$`
	// +kubebuilder:validation:XValidation:rule="self != '.' && self != '..'",message="name may not be '.' or '..'"
	Name string `json:"name"`

	// selector selects the metric's series by label, as the metrics API
	// reads it (for example the queue's name); unset, the metrics API
	// alone chooses.
	// +optional
	Selector *LabelSelector `json:"selector,omitempty"`
}

// MetricTarget is the value of a metric the autoscaler aims at. type names
// the one field that is set.
//
// +kubebuilder:validation:XValidation:rule="(self.type == 'Utilization') == has(self.averageUtilization) && (self.type == 'Value') == has(self.value) && (self.type == 'AverageValue') == has(self.averageValue)",message="a target sets exactly the field its type names: averageUtilization for Utilization, value for Value, averageValue for AverageValue"
type MetricTarget struct {
	// type is Utilization (averageUtilization, Resource and
	// ContainerResource only), Value (value, Object and External only) or
	// AverageValue (averageValue).
	// +required
	Type MetricTargetType `json:"type"`

	// value is the metric's value to aim at, a positive quantity of at
	// most 64 characters (see hack/crdpost).
	// +optional
	// +kubebuilder:validation:XValidation:rule="!isQuantity(string(self)) || quantity(string(self)).isGreaterThan(quantity('0'))",message="value must be a positive quantity"
	Value *resource.Quantity `json:"value,omitempty"`

	// averageValue is the metric's value per pod to aim at (the metric's
	// value divided by the number of pods), a positive quantity of at most
	// 64 characters (see hack/crdpost).
	// +optional
	// +kubebuilder:validation:XValidation:rule="!isQuantity(string(self)) || quantity(string(self)).isGreaterThan(quantity('0'))",message="averageValue must be a positive quantity"
	AverageValue *resource.Quantity `json:"averageValue,omitempty"`

	// averageUtilization is the pods' average use of the resource to aim
	// at, in percent of their request: 1 to 1000.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	AverageUtilization *int32 `json:"averageUtilization,omitempty"`
}
