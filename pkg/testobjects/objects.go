package testobjects

import (
	"maps"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
)

func ConfigMapKeyRef(name, key string, optional bool) corev1.EnvVar {
	return corev1.EnvVar{Name: strings.ToUpper(key), ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: optionalPtr(optional)}}}
}

func SecretKeyRef(name, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: strings.ToUpper(key), ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}}}
}

func optionalPtr(b bool) *bool {
	if !b {
		return nil
	}
	return ptr.To(true)
}

// ConfigMap is the ConfigMap cfg of the test namespace with data.
func ConfigMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: TestKey.Namespace, UID: types.UID("uid-" + name), ResourceVersion: "5"}, Data: data}
}

var (
	FixedNow = metav1.NewTime(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	Earlier  = metav1.NewTime(FixedNow.Add(-time.Hour))
	TestKey  = cache.ObjectName{Namespace: "apps", Name: "web"}
	ResDObj  = appv1.SchemeGroupVersion.WithResource("deployobjects")
)

// NewDeployObject is a DeployObject as the API server stores it, defaults
// applied, with the given changes.
func NewDeployObject(mutate ...func(*appv1.DeployObject)) *appv1.DeployObject {
	d := &appv1.DeployObject{
		TypeMeta: metav1.TypeMeta{APIVersion: appv1.SchemeGroupVersion.String(), Kind: "DeployObject"},
		ObjectMeta: metav1.ObjectMeta{
			Name: TestKey.Name, Namespace: TestKey.Namespace,
			UID: "uid-web", Generation: 2, ResourceVersion: "10",
		},
		Spec: appv1.DeployObjectSpec{
			Image:       "nginx:1.27",
			Replicas:    ptr.To[int32](2),
			Command:     []string{"nginx"},
			Args:        []string{"-g", "daemon off;"},
			Env:         []corev1.EnvVar{{Name: "MODE", Value: "prod"}, {Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
			Resources:   corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}, Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}},
			Ports:       []appv1.Port{{Name: "http", ContainerPort: 8080, ServicePort: ptr.To[int32](80), Protocol: corev1.ProtocolTCP}},
			ServiceType: appv1.ServiceTypeClusterIP,
		},
	}
	for _, m := range mutate {
		m(d)
	}
	// As if an earlier sync had brought the Deployment in line with the
	// spec: tests of a spec change change the spec afterwards.
	d.Status.DeploymentHash = MustHash(d)
	return d
}

func MustHash(dobj *appv1.DeployObject) string {
	_, hash := MustStamp(dobj)
	return hash
}

// MustStamp is the Deployment the controller creates or applies for dobj,
// and its hash.
func MustStamp(dobj *appv1.DeployObject) (*appsv1.Deployment, string) {
	d, hash, err := children.StampedDeployment(children.DesiredDeployment(dobj, children.ProfileNone))
	if err == nil {
		err = children.StampTemplateHashes(d, &dobj.Spec)
	}
	if err != nil {
		panic(err)
	}
	return d, hash
}

// LiveDeployment is the Deployment of dobj as the API server would hold it
// after creating it and rolling it out: desired plus server defaults and a
// finished rollout status.
func LiveDeployment(dobj *appv1.DeployObject) *appsv1.Deployment {
	d, _ := MustStamp(dobj)
	d.UID = "uid-deploy"
	d.ResourceVersion = "20"
	d.Generation = 1
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
	d.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	d.Spec.Template.Spec.DNSPolicy = corev1.DNSClusterFirst
	c := &d.Spec.Template.Spec.Containers[0]
	c.ImagePullPolicy = corev1.PullIfNotPresent
	c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	// The API server returns quantities in canonical form.
	c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.1")}
	r := *d.Spec.Replicas
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: r, UpdatedReplicas: r, ReadyReplicas: r, AvailableReplicas: r}
	return d
}

// LiveService is the Service of dobj as the API server would hold it.
func LiveService(dobj *appv1.DeployObject) *corev1.Service {
	s := children.DesiredService(dobj)
	if s == nil {
		return nil
	}
	s.UID = "uid-svc"
	s.ResourceVersion = "30"
	s.Spec.ClusterIP = "10.96.0.10"
	s.Spec.ClusterIPs = []string{"10.96.0.10"}
	s.Spec.SessionAffinity = corev1.ServiceAffinityNone
	return s
}

func EqualObjects(a, b any) bool {
	return equality.Semantic.DeepEqual(a, b)
}

// WithAutoscaling asks for 2 to 5 replicas at 70% CPU.
func WithAutoscaling(d *appv1.DeployObject) {
	d.Spec.Autoscaling = &appv1.Autoscaling{MinReplicas: ptr.To[int32](2), MaxReplicas: 5, TargetCPUUtilizationPercentage: ptr.To[int32](70)}
}

func MustDesiredHPA(dobj *appv1.DeployObject) *autoscalingv2.HorizontalPodAutoscaler {
	h, err := children.DesiredHPA(dobj)
	if err != nil {
		panic(err)
	}
	return h
}

// LiveHPA is the HorizontalPodAutoscaler of dobj as the API server holds it
// once the autoscaler has evaluated it: with the behavior the server
// defaults when the spec sets one, and a status.
func LiveHPA(dobj *appv1.DeployObject) *autoscalingv2.HorizontalPodAutoscaler {
	h := MustDesiredHPA(dobj)
	if h == nil {
		return nil
	}
	h.UID, h.ResourceVersion, h.Generation = "uid-hpa", "50", 1
	if b := h.Spec.Behavior; b != nil {
		maxChange := autoscalingv2.MaxChangePolicySelect
		if b.ScaleUp == nil {
			b.ScaleUp = &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](0)}
		}
		if b.ScaleDown == nil {
			b.ScaleDown = &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](300)}
		}
		for _, r := range []*autoscalingv2.HPAScalingRules{b.ScaleUp, b.ScaleDown} {
			if r.SelectPolicy == nil {
				r.SelectPolicy = &maxChange
			}
			if r.Policies == nil {
				r.Policies = []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}
			}
		}
	}
	h.Status = autoscalingv2.HorizontalPodAutoscalerStatus{
		ObservedGeneration: ptr.To[int64](1),
		CurrentReplicas:    2,
		DesiredReplicas:    2,
		CurrentMetrics: []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
			Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To[int32](40)}}}},
		Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{
			{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, Reason: "ReadyForNewScale", Message: "recommended size matches current size", LastTransitionTime: Earlier},
			{Type: autoscalingv2.ScalingActive, Status: corev1.ConditionTrue, Reason: "ValidMetricFound", Message: "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)", LastTransitionTime: Earlier},
			{Type: autoscalingv2.ScalingLimited, Status: corev1.ConditionFalse, Reason: "DesiredWithinRange", LastTransitionTime: Earlier},
		},
	}
	return h
}

func WithHTTPRoute(d *appv1.DeployObject) {
	d.Spec.Route = &appv1.Route{Port: "http", Hostnames: []string{"shop.example.com"}, ParentRefs: []appv1.GatewayRef{
		{Name: "public", Namespace: ptr.To("infra"), SectionName: ptr.To("https")},
		{Name: "internal"},
	}}
}

// WithGRPCRoute asks for a GRPCRoute: the route's rules send to a gRPC
// port, every call of one service and one method of another.
func WithGRPCRoute(d *appv1.DeployObject) {
	WithHTTPRoute(d)
	d.Spec.Ports = append(d.Spec.Ports, appv1.Port{Name: "grpc", ContainerPort: 9090, AppProtocol: ptr.To("grpc")})
	d.Spec.Route.Port, d.Spec.Route.Rules = "", []appv1.RouteRule{
		{Path: "/shop.v1.Cart/", PathType: appv1.PathPrefix, Port: "grpc"},
		{Path: "/grpc.health.v1.Health/Check", PathType: appv1.PathExact, Port: "grpc"},
	}
}

// LiveGRPCRoute is the GRPCRoute of dobj as the API server would hold it,
// accepted by every parent.
func LiveGRPCRoute(dobj *appv1.DeployObject) *gatewayv1.GRPCRoute {
	r, err := children.DesiredGRPCRoute(dobj, nil)
	if err != nil {
		panic(err)
	}
	if r == nil {
		return nil
	}
	r.UID, r.ResourceVersion, r.Generation = "uid-grpcroute", "72", 1
	for _, ref := range r.Spec.ParentRefs {
		r.Status.Parents = append(r.Status.Parents, parentAccepted(ref, 1))
	}
	return r
}

// WithHTTPSRedirect asks for an HTTPRoute and its redirect to https on the
// plain-HTTP listener of the same Gateway.
func WithHTTPSRedirect(d *appv1.DeployObject) {
	WithHTTPRoute(d)
	d.Spec.Route.HTTPSRedirect = &appv1.HTTPSRedirect{ParentRefs: []appv1.GatewayRef{{Name: "public", Namespace: ptr.To("infra"), SectionName: ptr.To("http")}}}
}

// LiveHTTPSRedirect is dobj's HTTPRoute that redirects to https, as the API
// server would hold it, accepted by every parent.
func LiveHTTPSRedirect(dobj *appv1.DeployObject) *gatewayv1.HTTPRoute {
	r, err := children.DesiredHTTPSRedirect(dobj)
	if err != nil {
		panic(err)
	}
	if r == nil {
		return nil
	}
	r.UID, r.ResourceVersion, r.Generation = "uid-redirect", "71", 1
	for _, ref := range r.Spec.ParentRefs {
		r.Status.Parents = append(r.Status.Parents, parentAccepted(ref, 1))
	}
	return r
}

func MustDesiredHTTPRoute(dobj *appv1.DeployObject) *gatewayv1.HTTPRoute {
	r, err := children.DesiredHTTPRoute(dobj, nil)
	if err != nil {
		panic(err)
	}
	return r
}

// parentAccepted is the status a Gateway controller writes for a parent
// that accepted the route and resolved its backend.
func parentAccepted(ref gatewayv1.ParentReference, generation int64) gatewayv1.RouteParentStatus {
	return gatewayv1.RouteParentStatus{ParentRef: ref, ControllerName: "example.com/gateway", Conditions: []metav1.Condition{
		{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", ObservedGeneration: generation},
		{Type: "ResolvedRefs", Status: metav1.ConditionTrue, Reason: "ResolvedRefs", ObservedGeneration: generation},
	}}
}

// LiveHTTPRoute is the HTTPRoute of dobj as the API server would hold it,
// accepted by every parent.
func LiveHTTPRoute(dobj *appv1.DeployObject) *gatewayv1.HTTPRoute {
	r := MustDesiredHTTPRoute(dobj)
	if r == nil {
		return nil
	}
	r.UID, r.ResourceVersion, r.Generation = "uid-route", "70", 1
	for _, ref := range r.Spec.ParentRefs {
		r.Status.Parents = append(r.Status.Parents, parentAccepted(ref, 1))
	}
	return r
}

func WithIngress(d *appv1.DeployObject) {
	d.Spec.Route = &appv1.Route{Port: "http", Hostnames: []string{"shop.example.com", "*.shop.example.com"}, Path: "/api", IngressClassName: ptr.To("nginx"), TLSSecretName: ptr.To("shop-tls")}
}

// LiveIngress is the Ingress of dobj as the API server would hold it,
// with an address from its ingress controller.
func LiveIngress(dobj *appv1.DeployObject) *networkingv1.Ingress {
	i := children.DesiredIngress(dobj)
	if i == nil {
		return nil
	}
	i.UID, i.ResourceVersion, i.Generation = "uid-ing", "60", 1
	i.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.7", Ports: []networkingv1.IngressPortStatus{{Port: 443}}}}
	return i
}

// WithNetworkPolicy asks for a NetworkPolicy with a peer of every kind,
// the route's proxies and restricted egress.
func WithNetworkPolicy(d *appv1.DeployObject) {
	d.Spec.NetworkPolicy = &appv1.NetworkPolicy{
		From: []appv1.NetworkPeer{
			{DeployObject: ptr.To("frontend")},
			{NamespaceSelector: &appv1.LabelSelector{MatchLabels: map[string]string{"team": "shop"}}, PodSelector: &appv1.LabelSelector{MatchExpressions: []appv1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "api"}}}}},
			{IPBlock: &appv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"10.1.0.0/16"}}},
		},
		RouteFrom: &appv1.NetworkPeer{NamespaceSelector: &appv1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "ingress-nginx"}}},
		Egress:    &appv1.NetworkEgress{To: []appv1.NetworkPeer{{DeployObject: ptr.To("db")}}},
		Metadata:  &appv1.ChildMetadata{Labels: map[string]string{"policy-tier": "app"}},
	}
}

// LiveNetworkPolicy is the NetworkPolicy of dobj as the API server holds
// it.
func LiveNetworkPolicy(dobj *appv1.DeployObject) *networkingv1.NetworkPolicy {
	p := children.DesiredNetworkPolicy(dobj)
	if p == nil {
		return nil
	}
	p.UID, p.ResourceVersion, p.Generation = "uid-netpol", "70", 1
	return p
}

// WithServiceAccount asks for a ServiceAccount of its own with an IRSA
// role annotation.
func WithServiceAccount(d *appv1.DeployObject) {
	d.Spec.ServiceAccount = &appv1.OwnedServiceAccount{Metadata: &appv1.ChildMetadata{Annotations: map[string]string{"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/web"}}}
}

// LiveServiceAccount is the ServiceAccount of dobj as the API server would
// hold it, or nil when dobj asks for none.
func LiveServiceAccount(dobj *appv1.DeployObject) *corev1.ServiceAccount {
	sa := children.DesiredServiceAccount(dobj)
	if sa == nil {
		return nil
	}
	sa.UID, sa.ResourceVersion = types.UID("uid-sa-"+sa.Name), "80"
	return sa
}

// WithFiles asks for two inline files, one of them binary and mounted by
// the sidecar "proxy" too, and one from a key of a ConfigMap.
func WithFiles(d *appv1.DeployObject) {
	d.Spec.Files = []appv1.File{
		{Path: "/etc/app/app.yaml", Content: ptr.To("level: info\n")},
		{Path: "/etc/app/logo.png", BinaryContent: []byte{0x89, 'P', 'N', 'G'}, Mode: ptr.To[int32](0o600), Sidecars: []string{"proxy"}},
		{Path: "/etc/app/feature-flags.json", ConfigMapKeyRef: &appv1.FileKeyRef{Name: "flags", Key: "flags.json"}},
	}
	d.Spec.Sidecars = append(d.Spec.Sidecars, corev1.Container{Name: "proxy", Image: "envoy:1.32"})
}

// LiveFilesConfigMap is the ConfigMap of dobj's inline files as the API
// server would hold it, made at minute past Earlier; nil when dobj has
// none.
func LiveFilesConfigMap(dobj *appv1.DeployObject, minute int) *corev1.ConfigMap {
	cm := children.DesiredFilesConfigMap(dobj)
	if cm == nil {
		return nil
	}
	cm.UID, cm.ResourceVersion = types.UID("uid-"+cm.Name), "90"
	cm.CreationTimestamp = metav1.NewTime(Earlier.Add(time.Duration(minute) * time.Minute))
	return cm
}

// LiveReplicaSet is the ReplicaSet of revision of the Deployment of the
// DeployObject that dobj was at that revision, as the Deployment controller
// makes it: the Deployment's pod template and labels, controlled by the
// Deployment, scaled to zero.
func LiveReplicaSet(dobj *appv1.DeployObject, revision int) *appsv1.ReplicaSet {
	d := LiveDeployment(dobj)
	rev := strconv.Itoa(revision)
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: d.Name + "-" + rev, Namespace: d.Namespace, UID: types.UID("uid-rs-" + rev), ResourceVersion: "30",
			Labels:          maps.Clone(d.Spec.Template.Labels),
			Annotations:     map[string]string{"deployment.kubernetes.io/revision": rev},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))},
		},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](0), Selector: d.Spec.Selector, Template: d.Spec.Template},
	}
}

// LiveCanaryReplicaSet is dobj's canary ReplicaSet of the canary id, one
// pod of the Deployment's template, as the API server holds it once the
// pod is available.
func LiveCanaryReplicaSet(dobj *appv1.DeployObject, id string) *appsv1.ReplicaSet {
	rs := children.DesiredCanaryReplicaSet(dobj, LiveDeployment(dobj).Spec.Template, id, 1)
	rs.UID, rs.ResourceVersion, rs.Generation = types.UID("uid-canary-"+id), "60", 1
	rs.Status = appsv1.ReplicaSetStatus{Replicas: 1, FullyLabeledReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, ObservedGeneration: 1}
	return rs
}

// WithBudget asks for a PodDisruptionBudget keeping one pod available.
func WithBudget(d *appv1.DeployObject) {
	d.Spec.DisruptionBudget = &appv1.DisruptionBudget{MinAvailable: ptr.To(intstr.FromInt32(1))}
}

// LivePDB is the PodDisruptionBudget of dobj as the API server holds it once
// the disruption controller has counted two healthy pods.
func LivePDB(dobj *appv1.DeployObject) *policyv1.PodDisruptionBudget {
	p := children.DesiredPDB(dobj)
	if p == nil {
		return nil
	}
	p.UID, p.ResourceVersion, p.Generation = "uid-pdb", "40", 1
	p.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 1, CurrentHealthy: 2, DesiredHealthy: 1, ExpectedPods: 2}
	return p
}

// WithEveryPodField sets a value in every field of the pod surface.
func WithEveryPodField(d *appv1.DeployObject) {
	s := &d.Spec
	s.ImagePullPolicy = corev1.PullAlways
	s.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}}
	s.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("http")}}}
	s.LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
	s.StartupProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 9000}}}
	s.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}}
	s.VolumeMounts = []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}}
	s.SecurityContext = &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr.To(true)}
	s.Volumes = []appv1.Volume{{Name: "tmp", EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	s.ServiceAccountName = "app"
	s.AutomountServiceAccountToken = ptr.To(false)
	s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull"}}
	s.PodSecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}
	s.NodeSelector = map[string]string{"zone": "a"}
	s.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
	s.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{}}
	s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: corev1.ScheduleAnyway}}
	s.PriorityClassName = "high"
	s.TerminationGracePeriodSeconds = ptr.To[int64](45)
	s.WorkingDir = "/srv"
	s.ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.NotRequired}, {ResourceName: corev1.ResourceMemory, RestartPolicy: corev1.RestartContainer}}
	s.PodResources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}, Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}}
	s.RuntimeClassName = ptr.To("gvisor")
	s.HostAliases = []corev1.HostAlias{{IP: "192.0.2.10", Hostnames: []string{"db.internal"}}}
	s.DNSPolicy = corev1.DNSNone
	s.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"192.0.2.53"}, Searches: []string{"svc.cluster.local"}, Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}}}
	s.ShareProcessNamespace = ptr.To(true)
	s.EnableServiceLinks = ptr.To(false)
	s.PodMetadata = &appv1.PodMetadata{Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"a": "b"}}
	s.InitContainers = []corev1.Container{{Name: "init", Image: "i"}}
	s.Sidecars = []corev1.Container{{Name: "side", Image: "s"}}
	s.Strategy = &appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	s.MinReadySeconds = 3
	s.ProgressDeadlineSeconds = ptr.To[int32](60)
	s.RevisionHistoryLimit = ptr.To[int32](2)
}

// WithServiceMonitor asks for a ServiceMonitor of port http every 30s,
// with kube-prometheus-stack's release label.
func WithServiceMonitor(d *appv1.DeployObject) {
	interval, timeout := appv1.PrometheusDuration("30s"), appv1.PrometheusDuration("10s")
	d.Spec.Monitoring = &appv1.Monitoring{Port: "http", Interval: &interval, ScrapeTimeout: &timeout,
		Metadata: &appv1.ChildMetadata{Labels: map[string]string{"release": "kube-prometheus-stack"}}}
}

// WithPodMonitor adds an exporter sidecar and asks for a PodMonitor of its
// port.
func WithPodMonitor(d *appv1.DeployObject) {
	d.Spec.Sidecars = append(d.Spec.Sidecars, corev1.Container{Name: "exporter", Image: "prom/nginx-prometheus-exporter:1.4",
		Ports: []corev1.ContainerPort{{Name: "exporter", ContainerPort: 9113, Protocol: corev1.ProtocolTCP}}})
	d.Spec.Monitoring = &appv1.Monitoring{Port: "exporter", Path: "/prometheus"}
}

// MustDesiredMonitor is the monitor of kind dobj asks for, or nil.
func MustDesiredMonitor(dobj *appv1.DeployObject, kind string) *unstructured.Unstructured {
	m, err := children.DesiredMonitor(dobj, kind)
	if err != nil {
		panic(err)
	}
	return m
}

// LiveMonitor is the monitor of kind of dobj as the API server would hold
// it, with the defaults a CRD of a later prometheus-operator could add.
func LiveMonitor(dobj *appv1.DeployObject, kind string) *unstructured.Unstructured {
	m := MustDesiredMonitor(dobj, kind)
	if m == nil {
		return nil
	}
	m.SetUID(types.UID("uid-" + strings.ToLower(kind)))
	m.SetResourceVersion("90")
	m.SetGeneration(1)
	m.Object["spec"].(map[string]any)["namespaceSelector"] = map[string]any{}
	return m
}
