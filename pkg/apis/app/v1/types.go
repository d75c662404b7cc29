package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeployObject declares one application: the controller keeps a Deployment
// of the same name matching it and, when the spec asks for them, a Service
// (ports), a ServiceAccount (serviceAccount), a PodDisruptionBudget
// (disruptionBudget), a HorizontalPodAutoscaler (autoscaling), an Ingress,
// HTTPRoute or GRPCRoute (route), a NetworkPolicy (networkPolicy) and a
// ServiceMonitor or PodMonitor (monitoring).
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=deployobjects,singular=deployobject,shortName=dobj,scope=Namespaced,categories=all
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image`
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=`.status.availableReplicas`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Canary",type=string,JSONPath=`.status.canary.phase`
// +kubebuilder:printcolumn:name="Weight",type=integer,JSONPath=`.status.canary.observedWeight`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",message="metadata.name must be at most 63 characters: it names the Service, which is a DNS-1035 label"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS-1035 label (lowercase letters, digits and '-', starting with a letter): it names the Service"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.canary) || size(self.metadata.name) <= 56",message="with spec.canary, metadata.name must be at most 56 characters: the canary Service is NAME-canary, a DNS-1035 label"
type DeployObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the application.
	// +required
	Spec DeployObjectSpec `json:"spec"`

	// status is the state the controller last observed. Until its first
	// sync it reads observedGeneration 0, so that tools comparing it with
	// metadata.generation (kstatus, Flux) wait for the controller instead of
	// taking a DeployObject without status for current.
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status DeployObjectStatus `json:"status,omitempty"`
}

// DeployObjectSpec is the desired state of an application.
//
// +kubebuilder:validation:XValidation:rule="!has(self.canary) || self.?strategy.?type.orValue('RollingUpdate') != 'Recreate'",message="canary needs the RollingUpdate strategy: Recreate stops every stable pod first",fieldPath=".canary"
// +kubebuilder:validation:XValidation:rule="!has(self.ports) || self.ports.all(p, self.ports.exists_one(q, (has(q.servicePort) ? q.servicePort : q.containerPort) == (has(p.servicePort) ? p.servicePort : p.containerPort) && q.protocol == p.protocol))",message="each servicePort (defaulting to containerPort) must be unique per protocol",fieldPath=".ports"
// +kubebuilder:validation:XValidation:rule="!has(self.ports) || self.ports.all(p, self.ports.exists_one(q, q.containerPort == p.containerPort && q.protocol == p.protocol))",message="each containerPort must be unique per protocol",fieldPath=".ports"
// +kubebuilder:validation:XValidation:rule="!has(self.serviceType) || self.serviceType == 'ClusterIP' || (has(self.ports) && size(self.ports) > 0)",message="serviceType other than ClusterIP needs at least one port",fieldPath=".serviceType"
// +kubebuilder:validation:XValidation:rule="!has(self.service) || (has(self.ports) && size(self.ports) > 0)",message="service needs at least one port: without ports there is no Service",fieldPath=".service"
// +kubebuilder:validation:XValidation:rule="!has(self.service) || !has(self.service.externalTrafficPolicy) || (has(self.serviceType) && self.serviceType != 'ClusterIP')",message="externalTrafficPolicy is for serviceType NodePort or LoadBalancer",fieldPath=".service.externalTrafficPolicy"
// +kubebuilder:validation:XValidation:rule="!has(self.service) || (!has(self.service.loadBalancerClass) && !has(self.service.loadBalancerSourceRanges)) || (has(self.serviceType) && self.serviceType == 'LoadBalancer')",message="loadBalancerClass and loadBalancerSourceRanges are for serviceType LoadBalancer",fieldPath=".service"
// +kubebuilder:validation:XValidation:rule="!has(self.service) || !has(self.service.headless) || !self.service.headless || !has(self.serviceType) || self.serviceType == 'ClusterIP'",message="headless is for serviceType ClusterIP",fieldPath=".service.headless"
// +kubebuilder:validation:XValidation:rule="!has(self.livenessProbe) || !has(self.livenessProbe.httpGet) || type(self.livenessProbe.httpGet.port) == int || (has(self.ports) && self.ports.exists(p, p.name == self.livenessProbe.httpGet.port))",message="a probe port must be a number or the name of one of spec.ports",fieldPath=".livenessProbe.httpGet.port"
// +kubebuilder:validation:XValidation:rule="!has(self.livenessProbe) || !has(self.livenessProbe.tcpSocket) || type(self.livenessProbe.tcpSocket.port) == int || (has(self.ports) && self.ports.exists(p, p.name == self.livenessProbe.tcpSocket.port))",message="a probe port must be a number or the name of one of spec.ports",fieldPath=".livenessProbe.tcpSocket.port"
// +kubebuilder:validation:XValidation:rule="!has(self.readinessProbe) || !has(self.readinessProbe.httpGet) || type(self.readinessProbe.httpGet.port) == int || (has(self.ports) && self.ports.exists(p, p.name == self.readinessProbe.httpGet.port))",message="a probe port must be a number or the name of one of spec.ports",fieldPath=".readinessProbe.httpGet.port"
// +kubebuilder:validation:XValidation:rule="!has(self.readinessProbe) || !has(self.readinessProbe.tcpSocket) || type(self.readinessProbe.tcpSocket.port) == int || (has(self.ports) && self.ports.exists(p, p.name == self.readinessProbe.tcpSocket.port))",message="a probe port must be a number or the name of one of spec.ports",fieldPath=".readinessProbe.tcpSocket.port"
// +kubebuilder:validation:XValidation:rule="!has(self.startupProbe) || !has(self.startupProbe.httpGet) || type(self.startupProbe.httpGet.port) == int || (has(self.ports) && self.ports.exists(p, p.name == self.startupProbe.httpGet.port))",message="a probe port must be a number or the name of one of spec.ports",fieldPath=".startupProbe.httpGet.port"
// +kubebuilder:validation:XValidation:rule="!has(self.startupProbe) || !has(self.startupProbe.tcpSocket) || type(self.startupProbe.tcpSocket.port) == int || (has(self.ports) && self.ports.exists(p, p.name == self.startupProbe.tcpSocket.port))",message="a probe port must be a number or the name of one of spec.ports",fieldPath=".startupProbe.tcpSocket.port"
// +kubebuilder:validation:XValidation:rule="!has(self.volumeMounts) || self.volumeMounts.all(m, has(self.volumes) && self.volumes.exists(v, v.name == m.name))",message="each volumeMount must name one of spec.volumes",fieldPath=".volumeMounts"
// +kubebuilder:validation:XValidation:rule="!has(self.files) || !has(self.volumeMounts) || self.files.all(f, !self.volumeMounts.exists(m, m.mountPath == f.path))",message="a file's path may not be the mountPath of a volumeMount: the main container would mount two things there",fieldPath=".files"
// +kubebuilder:validation:XValidation:rule="!has(self.files) || self.files.all(f, !has(f.sidecars) || f.sidecars.all(n, has(self.sidecars) && self.sidecars.exists(c, c.name == n)))",message="each name in a file's sidecars must be one of spec.sidecars",fieldPath=".files"
// +kubebuilder:validation:XValidation:rule="!has(self.volumes) || !self.volumes.exists(v, v.name == 'deployobject-files')",message="the volume name deployobject-files is the controller's, for spec.files",fieldPath=".volumes"
// +kubebuilder:validation:XValidation:rule="!has(self.sidecars) || self.sidecars.all(c, !has(c.volumeMounts) || c.volumeMounts.all(m, has(self.volumes) && self.volumes.exists(v, v.name == m.name)))",message="each volumeMount must name one of spec.volumes",fieldPath=".sidecars"
// +kubebuilder:validation:XValidation:rule="!has(self.initContainers) || self.initContainers.all(c, !has(c.volumeMounts) || c.volumeMounts.all(m, has(self.volumes) && self.volumes.exists(v, v.name == m.name)))",message="each volumeMount must name one of spec.volumes",fieldPath=".initContainers"
// +kubebuilder:validation:XValidation:rule="!has(self.env) || self.env.all(e, !has(e.valueFrom) || !has(e.valueFrom.fileKeyRef) || (has(self.volumes) && self.volumes.exists(v, v.name == e.valueFrom.fileKeyRef.volumeName && has(v.emptyDir))))",message="each env valueFrom.fileKeyRef must name an emptyDir volume of spec.volumes",fieldPath=".env"
// +kubebuilder:validation:XValidation:rule="[self.?lifecycle.?preStop.?sleep.?seconds.orValue(0), self.?lifecycle.?postStart.?sleep.?seconds.orValue(0)].all(s, s <= self.?terminationGracePeriodSeconds.orValue(30))",message="a lifecycle hook may not sleep longer than terminationGracePeriodSeconds (30 when unset)",fieldPath=".lifecycle"
// +kubebuilder:validation:XValidation:rule="!has(self.sidecars) || self.sidecars.all(c, [c.?lifecycle.?preStop.?sleep.?seconds.orValue(0), c.?lifecycle.?postStart.?sleep.?seconds.orValue(0)].all(s, s <= self.?terminationGracePeriodSeconds.orValue(30)))",message="a lifecycle hook may not sleep longer than terminationGracePeriodSeconds (30 when unset)",fieldPath=".sidecars"
// +kubebuilder:validation:XValidation:rule="!has(self.progressDeadlineSeconds) || self.progressDeadlineSeconds > (has(self.minReadySeconds) ? self.minReadySeconds : 0)",message="progressDeadlineSeconds must be greater than minReadySeconds",fieldPath=".progressDeadlineSeconds"
// +kubebuilder:validation:XValidation:rule="!has(self.disruptionBudget) || !has(self.disruptionBudget.minAvailable) || type(self.disruptionBudget.minAvailable) != int || (has(self.autoscaling) ? self.autoscaling.?minReplicas.orValue(1) : self.?replicas.orValue(1)) == 0 || self.disruptionBudget.minAvailable < (has(self.autoscaling) ? self.autoscaling.?minReplicas.orValue(1) : self.?replicas.orValue(1))",message="disruptionBudget.minAvailable must be less than replicas (autoscaling.minReplicas when autoscaling is set): a budget that requires every pod to stay available never allows an eviction, and a node drain would wait forever",fieldPath=".disruptionBudget.minAvailable"
// +kubebuilder:validation:XValidation:rule="!has(self.disruptionBudget) || !has(self.disruptionBudget.minAvailable) || type(self.disruptionBudget.minAvailable) != string || !self.disruptionBudget.minAvailable.matches('^[0-9]{1,3}%$') || (has(self.autoscaling) ? self.autoscaling.?minReplicas.orValue(1) : self.?replicas.orValue(1)) == 0 || int(self.disruptionBudget.minAvailable.substring(0, size(self.disruptionBudget.minAvailable) - 1)) * (has(self.autoscaling) ? self.autoscaling.?minReplicas.orValue(1) : self.?replicas.orValue(1)) <= 100 * ((has(self.autoscaling) ? self.autoscaling.?minReplicas.orValue(1) : self.?replicas.orValue(1)) - 1)",message="disruptionBudget.minAvailable as a percentage of replicas (autoscaling.minReplicas when autoscaling is set), rounded up, must be fewer pods than replicas: a budget that requires every pod to stay available never allows an eviction, and a node drain would wait forever",fieldPath=".disruptionBudget.minAvailable"
// +kubebuilder:validation:XValidation:rule="!has(self.autoscaling) || !has(self.autoscaling.targetCPUUtilizationPercentage) || (has(self.resources) && ((has(self.resources.requests) && 'cpu' in self.resources.requests) || (has(self.resources.limits) && 'cpu' in self.resources.limits)))",message="autoscaling.targetCPUUtilizationPercentage needs resources.requests.cpu (or a cpu limit, which the request defaults to): utilization is measured against the request",fieldPath=".autoscaling.targetCPUUtilizationPercentage"
// +kubebuilder:validation:XValidation:rule="!has(self.autoscaling) || !has(self.autoscaling.targetMemoryUtilizationPercentage) || (has(self.resources) && ((has(self.resources.requests) && 'memory' in self.resources.requests) || (has(self.resources.limits) && 'memory' in self.resources.limits)))",message="autoscaling.targetMemoryUtilizationPercentage needs resources.requests.memory (or a memory limit, which the request defaults to): utilization is measured against the request",fieldPath=".autoscaling.targetMemoryUtilizationPercentage"
// +kubebuilder:validation:XValidation:rule="!has(self.autoscaling) || !has(self.autoscaling.metrics) || self.autoscaling.metrics.all(m, !(has(m.resource) && m.resource.target.type == 'Utilization' || has(m.containerResource) && m.containerResource.container == 'app' && m.containerResource.target.type == 'Utilization') || has(self.resources) && (has(self.resources.requests) && (has(m.resource) ? m.resource.name : m.containerResource.name) in self.resources.requests || has(self.resources.limits) && (has(m.resource) ? m.resource.name : m.containerResource.name) in self.resources.limits))",message="a Utilization target of a Resource metric, or of a ContainerResource metric of app, needs resources.requests of its resource (or a limit, which the request defaults to): utilization is measured against the request",fieldPath=".autoscaling.metrics"
// +kubebuilder:validation:XValidation:rule="!has(self.autoscaling) || !has(self.autoscaling.metrics) || self.autoscaling.metrics.all(m, !has(m.containerResource) || m.containerResource.container == 'app' || has(self.sidecars) && self.sidecars.exists(c, c.name == m.containerResource.container))",message="a ContainerResource metric's container must be app (the main container) or the name of one of spec.sidecars",fieldPath=".autoscaling.metrics"
// +kubebuilder:validation:XValidation:rule="!has(self.autoscaling) || !has(self.autoscaling.metrics) || !has(self.sidecars) || self.autoscaling.metrics.all(m, !has(m.containerResource) || m.containerResource.target.type != 'Utilization' || self.sidecars.all(c, c.name != m.containerResource.container || has(c.resources) && (has(c.resources.requests) && m.containerResource.name in c.resources.requests || has(c.resources.limits) && m.containerResource.name in c.resources.limits)))",message="a Utilization target of a ContainerResource metric of a sidecar needs that sidecar's resources.requests of its resource (or a limit, which the request defaults to): utilization is measured against the request",fieldPath=".autoscaling.metrics"
// +kubebuilder:validation:XValidation:rule="!has(self.route) || !has(self.route.port) || (has(self.ports) && self.ports.exists(p, p.name == self.route.port && (!has(p.protocol) || p.protocol == 'TCP')))",message="route.port must name one of spec.ports whose protocol is TCP",fieldPath=".route.port"
// +kubebuilder:validation:XValidation:rule="!has(self.route) || !has(self.route.rules) || self.route.rules.all(r, has(self.ports) && self.ports.exists(p, p.name == r.port && (!has(p.protocol) || p.protocol == 'TCP')))",message="each route.rules port must name one of spec.ports whose protocol is TCP",fieldPath=".route.rules"
// +kubebuilder:validation:XValidation:rule="!has(self.route) || !has(self.route.parentRefs) || !has(self.route.rules) || !has(self.ports) || self.route.rules.all(r, self.ports.exists(p, p.name == r.port && has(p.appProtocol) && p.appProtocol == 'grpc')) || self.route.rules.all(r, !self.ports.exists(p, p.name == r.port && has(p.appProtocol) && p.appProtocol == 'grpc'))",message="with parentRefs, route rules go either all to gRPC ports (appProtocol grpc: a GRPCRoute) or to none (an HTTPRoute): a Gateway listener may not serve one hostname with both kinds",fieldPath=".route.rules"
// +kubebuilder:validation:XValidation:rule="!has(self.route) || !has(self.route.parentRefs) || !has(self.route.port) || !has(self.route.path) || !has(self.ports) || !self.ports.exists(p, p.name == self.route.port && has(p.appProtocol) && p.appProtocol == 'grpc') || self.route.path == '/' || self.route.path.matches('^/[A-Za-z_][A-Za-z0-9_]*([.][A-Za-z_][A-Za-z0-9_]*)*/$')",message="to a gRPC port (a GRPCRoute), path is '/' (every call) or '/SERVICE/' (every method of a gRPC service such as /shop.v1.Cart/)",fieldPath=".route.path"
// +kubebuilder:validation:XValidation:rule="!has(self.route) || !has(self.route.parentRefs) || !has(self.route.rules) || !has(self.ports) || self.route.rules.all(r, !self.ports.exists(p, p.name == r.port && has(p.appProtocol) && p.appProtocol == 'grpc') || !has(r.timeout) && (r.pathType == 'Prefix' && (r.path == '/' || r.path.matches('^/[A-Za-z_][A-Za-z0-9_]*([.][A-Za-z_][A-Za-z0-9_]*)*/$')) || r.pathType == 'Exact' && r.path.matches('^/[A-Za-z_][A-Za-z0-9_]*([.][A-Za-z_][A-Za-z0-9_]*)*/[A-Za-z_][A-Za-z0-9_]*$')))",message="a rule to a gRPC port (a GRPCRoute) matches every call (Prefix '/'), a service (Prefix '/SERVICE/') or a method (Exact '/SERVICE/METHOD'), and has no timeout, which GRPCRoute does not take",fieldPath=".route.rules"
// +kubebuilder:validation:XValidation:rule="!has(self.monitoring) || (has(self.ports) && self.ports.exists(p, p.name == self.monitoring.port && (!has(p.protocol) || p.protocol == 'TCP'))) || (has(self.sidecars) && self.sidecars.exists(c, has(c.ports) && c.ports.exists(p, has(p.name) && p.name == self.monitoring.port && (!has(p.protocol) || p.protocol == 'TCP'))))",message="monitoring.port must name one of spec.ports or a named port of one of spec.sidecars, with protocol TCP",fieldPath=".monitoring.port"
// +kubebuilder:validation:XValidation:rule="!has(self.networkPolicy) || !has(self.networkPolicy.routeFrom) || has(self.route)",message="networkPolicy.routeFrom admits the route's proxies to the route's ports: it needs route",fieldPath=".networkPolicy.routeFrom"
// +kubebuilder:validation:XValidation:rule="!has(self.networkPolicy) || !has(self.networkPolicy.monitoringFrom) || has(self.monitoring)",message="networkPolicy.monitoringFrom admits the scraper to monitoring.port: it needs monitoring",fieldPath=".networkPolicy.monitoringFrom"
// +kubebuilder:validation:XValidation:rule="!has(self.dnsPolicy) || self.dnsPolicy != 'None' || has(self.dnsConfig) && has(self.dnsConfig.nameservers) && size(self.dnsConfig.nameservers) > 0",message="dnsPolicy None needs dnsConfig with at least one nameserver",fieldPath=".dnsConfig"
// +kubebuilder:validation:XValidation:rule="!has(self.podResources) || !has(self.podResources.requests) || !has(self.resources) || !has(self.resources.requests) || ['cpu', 'memory'].all(k, !(k in self.podResources.requests) || !(k in self.resources.requests) || quantity(string(self.podResources.requests[k])).compareTo(quantity(string(self.resources.requests[k]))) >= 0)",message="each podResources request must be at least the main container's request of the same resource",fieldPath=".podResources.requests"
type DeployObjectSpec struct {
	// image is the container image to run, for example "nginx:1.27": a
	// reference in the grammar of github.com/distribution/reference,
	// [host[:port]/]path[:tag][@digest], with the path in lowercase.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self == self.trim()",message="image must not have leading or trailing whitespace"
	// +kubebuilder:validation:XValidation:rule="!self.contains(' ')",message="image must not contain spaces"
	// +kubebuilder:validation:XValidation:rule=`self.matches(r'^(?:(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$')`,message="image must be a reference [host[:port]/]path[:tag][@digest]: path components of lowercase letters and digits joined by '.', '_', '__' or '-', a tag of at most 128 letters, digits, '_', '.' and '-', a digest such as sha256:<64 hex digits>"
	Image string `json:"image"`

	// replicas is the number of pods to run. Defaults to 1; 0 keeps the
	// Deployment with no pods.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	Replicas *int32 `json:"replicas,omitempty"`

	// command overrides the image's ENTRYPOINT.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=4096
	Command []string `json:"command,omitempty"`

	// args overrides the image's CMD.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=4096
	Args []string `json:"args,omitempty"`

	// env lists environment variables for the container, either literal
	// values or references (valueFrom) to ConfigMaps, Secrets and pod fields.
	// Names are unique and at most 128 characters; values at most 1024
	// characters, so that the largest DeployObject still fits in etcd (see
	// docs/api.md). A fileKeyRef reads a file from one of spec.volumes, which
	// must be an emptyDir.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:items:XValidation:rule="size(self.name) <= 128",message="must be at most 128 characters",fieldPath=".name"
	// +kubebuilder:validation:items:XValidation:rule="size(self.?value.orValue('')) <= 1024",message="must be at most 1024 characters",fieldPath=".value"
	// +kubebuilder:validation:items:XValidation:rule="size(self.?valueFrom.?configMapKeyRef.?name.orValue('')) <= 253",message="must be at most 253 characters",fieldPath=".valueFrom.configMapKeyRef.name"
	// +kubebuilder:validation:items:XValidation:rule="size(self.?valueFrom.?configMapKeyRef.?key.orValue('')) <= 253",message="must be at most 253 characters",fieldPath=".valueFrom.configMapKeyRef.key"
	// +kubebuilder:validation:items:XValidation:rule="size(self.?valueFrom.?secretKeyRef.?name.orValue('')) <= 253",message="must be at most 253 characters",fieldPath=".valueFrom.secretKeyRef.name"
	// +kubebuilder:validation:items:XValidation:rule="size(self.?valueFrom.?secretKeyRef.?key.orValue('')) <= 253",message="must be at most 253 characters",fieldPath=".valueFrom.secretKeyRef.key"
	// +kubebuilder:validation:items:XValidation:rule="size(self.?valueFrom.?fieldRef.?apiVersion.orValue('')) <= 64",message="must be at most 64 characters",fieldPath=".valueFrom.fieldRef.apiVersion"
	// +kubebuilder:validation:items:XValidation:rule="size(self.?valueFrom.?fieldRef.?fieldPath.orValue('')) <= 341",message="must be at most 341 characters: metadata.annotations['<key of at most 317 characters>']",fieldPath=".valueFrom.fieldRef.fieldPath"
	// +kubebuilder:validation:items:XValidation:rule="size(self.?valueFrom.?resourceFieldRef.?containerName.orValue('')) <= 63",message="must be at most 63 characters",fieldPath=".valueFrom.resourceFieldRef.containerName"
	// +kubebuilder:validation:items:XValidation:rule="size(self.?valueFrom.?resourceFieldRef.?resource.orValue('')) <= 64",message="must be at most 64 characters",fieldPath=".valueFrom.resourceFieldRef.resource"
	// +kubebuilder:validation:items:XValidation:rule="!has(self.valueFrom) || !has(self.valueFrom.resourceFieldRef) || !has(self.valueFrom.resourceFieldRef.divisor) || type(self.valueFrom.resourceFieldRef.divisor) == int || size(self.valueFrom.resourceFieldRef.divisor) <= 64",message="must be at most 64 characters",fieldPath=".valueFrom.resourceFieldRef.divisor"
	// +kubebuilder:validation:XValidation:rule="self.all(e, !(has(e.value) && e.value != '' && has(e.valueFrom)))",message="an env entry may set value or valueFrom, not both"
	// +kubebuilder:validation:XValidation:rule="self.all(e, !has(e.valueFrom) || [has(e.valueFrom.configMapKeyRef), has(e.valueFrom.secretKeyRef), has(e.valueFrom.fieldRef), has(e.valueFrom.resourceFieldRef), has(e.valueFrom.fileKeyRef)].filter(x, x).size() == 1)",message="an env valueFrom must set exactly one source"
	Env []corev1.EnvVar `json:"env,omitempty"`

	// resources are the container's compute resource requests and limits,
	// at most 16 of each. Dynamic resource claims are not supported.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.requests) || size(self.requests) <= 16",message="must have at most 16 entries",fieldPath=".requests"
	// +kubebuilder:validation:XValidation:rule="!has(self.limits) || size(self.limits) <= 16",message="must have at most 16 entries",fieldPath=".limits"
	// +kubebuilder:validation:XValidation:rule="!has(self.claims)",message="resources.claims is not supported: a DeployObject declares no pod resourceClaims"
	// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !has(self.limits) || ['cpu', 'memory', 'ephemeral-storage'].all(k, !(k in self.requests) || !(k in self.limits) || quantity(string(self.limits[k])).compareTo(quantity(string(self.requests[k]))) >= 0)",message="each request must be less than or equal to its limit"
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// ports are the container's ports. Each one is also exposed on the
	// Service; with no ports there is no Service.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Ports []Port `json:"ports,omitempty"`

	// serviceType is the type of the Service: ClusterIP (default), NodePort or
	// LoadBalancer.
	// +optional
	// +kubebuilder:default=ClusterIP
	ServiceType ServiceType `json:"serviceType,omitempty"`

	// service holds the Service's settings beyond its type and ports.
	// Without ports there is no Service to carry them.
	// +optional
	Service *ServiceSettings `json:"service,omitempty"`

	// disruptionBudget, when set, makes the controller keep a
	// PodDisruptionBudget of the same name for the pods; removing it
	// removes the PodDisruptionBudget.
	// +optional
	DisruptionBudget *DisruptionBudget `json:"disruptionBudget,omitempty"`

	// autoscaling, when set, makes the controller keep a
	// HorizontalPodAutoscaler of the same name that scales this
	// DeployObject through its scale subresource, writing spec.replicas.
	// Removing it removes the HorizontalPodAutoscaler and leaves
	// spec.replicas at the last value it wrote. With autoscaling on, leave
	// replicas out of manifests that are applied again and again (see
	// docs/autoscaling.md), or each apply resets the autoscaler's decision.
	// +optional
	Autoscaling *Autoscaling `json:"autoscaling,omitempty"`

	// configRollout says whether a change of the ConfigMaps and Secrets the
	// pods use rolls them out: Enabled (default) records a hash of the data
	// the pods consume in the pod template, so that a change of a used key
	// rolls the pods; Disabled, for applications that reload their
	// configuration themselves, leaves the pods alone. Either way a missing
	// required ConfigMap or Secret is reported (Ready reason ConfigMissing).
	// +optional
	// +kubebuilder:default=Enabled
	ConfigRollout ConfigRolloutPolicy `json:"configRollout,omitempty"`

	// route, when set, makes the controller keep an HTTPRoute (parentRefs;
	// a GRPCRoute for gRPC ports) or an Ingress (ingressClassName) of the
	// same name that sends requests to ports; removing it removes the
	// route.
	// +optional
	Route *Route `json:"route,omitempty"`

	// networkPolicy, when set, makes the controller keep a NetworkPolicy of
	// the same name that admits traffic to the pods only from the peers it
	// lists, and optionally restricts the traffic they send; removing it
	// removes the NetworkPolicy.
	// +optional
	NetworkPolicy *NetworkPolicy `json:"networkPolicy,omitempty"`

	// monitoring, when set, makes the controller keep a ServiceMonitor (a
	// port of spec.ports) or a PodMonitor (a port of a sidecar) of the same
	// name, for Prometheus run by prometheus-operator to scrape the
	// application; removing it removes the monitor. Without
	// prometheus-operator's CRDs in the cluster, the Monitoring condition
	// says so and nothing else changes.
	// +optional
	Monitoring *Monitoring `json:"monitoring,omitempty"`

	// canary, when set, makes a change of the pod template that the spec
	// asks for roll out in steps: a share of the traffic first, raised
	// step by step, then the whole Deployment, with automatic abort (see
	// docs/progressive-delivery.md). Creation, scaling and rollouts of
	// configuration roll as without it.
	// +optional
	Canary *Canary `json:"canary,omitempty"`

	ContainerSpec `json:",inline"`
	PodSpec       `json:",inline"`
	RolloutSpec   `json:",inline"`
}

// Port is a port of the container and of the Service.
type Port struct {
	// name identifies the port; it follows the IANA service-name rules:
	// at most 15 lowercase letters, digits and '-', with at least one letter,
	// no leading, trailing or doubled '-'.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="self.matches('[a-z]')",message="name must contain at least one letter"
	// +kubebuilder:validation:XValidation:rule="!self.contains('--')",message="name must not contain '--'"
	Name string `json:"name"`

	// containerPort is the port the container listens on.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	ContainerPort int32 `json:"containerPort"`

	// servicePort is the port the Service exposes; defaults to containerPort.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	ServicePort *int32 `json:"servicePort,omitempty"`

	// protocol is TCP (default), UDP or SCTP.
	// +optional
	// +kubebuilder:default=TCP
	// +kubebuilder:validation:Enum=TCP;UDP;SCTP
	Protocol corev1.Protocol `json:"protocol,omitempty"`

	// appProtocol is the application protocol of the Service port, as
	// Kubernetes validates it: a qualified name, either an IANA service name
	// such as "http" or a name with a DNS subdomain prefix such as
	// "kubernetes.io/h2c". "grpc" makes a route through Gateways to this
	// port a GRPCRoute. When it is not set, an appProtocol someone else set
	// on the Service port is kept.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`
	// +kubebuilder:validation:XValidation:rule="self.matches('^([^/]{1,253}/)?[^/]{1,63}$')",message="appProtocol must be a qualified name: an optional DNS subdomain prefix of at most 253 characters and '/', then a name of at most 63 characters"
	AppProtocol *string `json:"appProtocol,omitempty"`
}

// ServiceType is how the Service is exposed.
// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
type ServiceType string

const (
	ServiceTypeClusterIP    ServiceType = "ClusterIP"
	ServiceTypeNodePort     ServiceType = "NodePort"
	ServiceTypeLoadBalancer ServiceType = "LoadBalancer"
)

// ConfigRolloutPolicy says whether configuration changes roll the pods.
// +kubebuilder:validation:Enum=Enabled;Disabled
type ConfigRolloutPolicy string

const (
	ConfigRolloutEnabled  ConfigRolloutPolicy = "Enabled"
	ConfigRolloutDisabled ConfigRolloutPolicy = "Disabled"
)

// DeployObjectStatus is the state the controller last observed.
type DeployObjectStatus struct {
	// observedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// replicas is the number of pods of the Deployment, in any state.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// readyReplicas is the number of pods that are ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// availableReplicas is the number of pods ready for at least the
	// Deployment's minReadySeconds.
	// +optional
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`

	// updatedReplicas is the number of pods running the current pod template.
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas,omitempty"`

	// deploymentHash identifies the Deployment the controller last made,
	// applied or found in line with the spec: a hash of the fields it sets.
	// When a change of the spec changes the hash, the controller applies the
	// Deployment with server-side apply, which also removes the fields the
	// spec no longer sets.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	DeploymentHash string `json:"deploymentHash,omitempty"`

	// configHash identifies the data of the ConfigMaps and Secrets that the
	// pod template of the Deployment was last made, applied or found in
	// line with: the value of the pod template annotation
	// app.deployobject.dev/config-hash. Empty when the pods use no
	// ConfigMap or Secret the controller tracks, or configRollout is
	// Disabled.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	ConfigHash string `json:"configHash,omitempty"`

	// selector is the label selector of the pods, in string form, for the
	// scale subresource (kubectl scale, HorizontalPodAutoscaler).
	// +optional
	Selector string `json:"selector,omitempty"`

	// addresses are where the application can be reached: the Service's
	// DNS name in the cluster with its ports, the addresses a LoadBalancer
	// Service was given, and the route's URLs.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Addresses []Address `json:"addresses,omitempty"`

	// canary is the state of the canary under way; absent outside one.
	// +optional
	Canary *CanaryStatus `json:"canary,omitempty"`

	// conditions describe the application's state. Ready is True when the
	// Deployment has rolled out the current generation with every desired
	// replica available and the Service matches the spec; its reason says why
	// not otherwise. While Ready is not True, Reconciling (still working
	// toward the spec) or Stalled (waiting for someone to act) is True, with
	// the same reason, for kstatus-aware tools such as Flux.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// DeployObjectList is a list of DeployObjects.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type DeployObjectList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []DeployObject `json:"items"`
}
