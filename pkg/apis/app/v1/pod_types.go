package v1

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// The fields below map one to one to the Kubernetes fields of the same name
// in the main container, the pod template or the Deployment; their
// descriptions say only what DeployObject adds or restricts. Lists and
// strings inside the embedded Kubernetes types are bounded by
// hack/crdpost (see crd/).

// ContainerSpec holds the fields of the main container, "app", beyond its
// image, command, args, env, resources and ports. hack/crdpost adds the Pod
// API's rules on probes and lifecycle hooks, for sidecars too.
type ContainerSpec struct {
	// imagePullPolicy is Always, IfNotPresent or Never. When unset the API
	// server picks Always for a ":latest" or untagged image and IfNotPresent
	// otherwise.
	// +optional
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// envFrom sets environment variables from every key of a ConfigMap or a
	// Secret, each entry naming exactly one of them.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:XValidation:rule="has(self.configMapRef) != has(self.secretRef)",message="an envFrom entry must set exactly one of configMapRef and secretRef"
	EnvFrom []corev1.EnvFromSource `json:"envFrom,omitempty"`

	// livenessProbe restarts the container when it fails. A probe port may be
	// a number or the name of one of spec.ports.
	// +optional
	LivenessProbe *corev1.Probe `json:"livenessProbe,omitempty"`

	// readinessProbe keeps the pod out of the Service's endpoints, and the
	// DeployObject from being Ready, until it succeeds.
	// +optional
	ReadinessProbe *corev1.Probe `json:"readinessProbe,omitempty"`

	// startupProbe holds off the other probes until it succeeds once.
	// +optional
	StartupProbe *corev1.Probe `json:"startupProbe,omitempty"`

	// lifecycle holds postStart and preStop hooks.
	// +optional
	Lifecycle *corev1.Lifecycle `json:"lifecycle,omitempty"`

	// volumeMounts mount spec.volumes into the main container; each names a
	// declared volume.
	// +optional
	// +listType=map
	// +listMapKey=mountPath
	// +kubebuilder:validation:MaxItems=64
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`

	// securityContext is the main container's security context. With the
	// controller's --pod-security-profile=restricted, the fields it leaves
	// unset are filled in to satisfy Pod Security "restricted".
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`

	// workingDir is the main container's working directory, the image's
	// when unset.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	WorkingDir string `json:"workingDir,omitempty"`

	// resizePolicy says, for cpu and memory, whether resizing the main
	// container's resources in place (a change of a running pod's
	// resources, as a vertical autoscaler makes it) restarts the container:
	// NotRequired (the default) or RestartContainer. A change of
	// spec.resources itself rolls new pods, as any change of the pod
	// template does.
	// +optional
	// +listType=map
	// +listMapKey=resourceName
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:items:XValidation:rule="self.resourceName in ['cpu', 'memory']",message="resizePolicy applies to cpu and memory only",fieldPath=".resourceName"
	// +kubebuilder:validation:items:XValidation:rule="self.restartPolicy in ['NotRequired', 'RestartContainer']",message="a resize restartPolicy is NotRequired or RestartContainer",fieldPath=".restartPolicy"
	ResizePolicy []corev1.ContainerResizePolicy `json:"resizePolicy,omitempty"`
}

// PodSpec holds the fields of the pod template.
//
// +kubebuilder:validation:XValidation:rule="!has(self.sidecars) || self.sidecars.all(c, c.name != 'app')",message="a sidecar may not be named app: that is the main container",fieldPath=".sidecars"
// +kubebuilder:validation:XValidation:rule="!has(self.initContainers) || self.initContainers.all(c, c.name != 'app')",message="an init container may not be named app: that is the main container",fieldPath=".initContainers"
// +kubebuilder:validation:XValidation:rule="!has(self.sidecars) || !has(self.initContainers) || self.sidecars.all(s, self.initContainers.all(i, i.name != s.name))",message="sidecars and init containers share one namespace of names: each name may be used once",fieldPath=".sidecars"
// +kubebuilder:validation:XValidation:rule="!has(self.serviceAccount) || !has(self.serviceAccountName)",message="serviceAccount (one the DeployObject owns) and serviceAccountName (one that exists already) are exclusive",fieldPath=".serviceAccount"
type PodSpec struct {
	// volumes are the pod's volumes. Only configMap, secret, emptyDir,
	// persistentVolumeClaim, projected and downwardAPI sources are
	// supported: the others reach into the node or into storage systems
	// that a platform grants per namespace, not per application.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Volumes []Volume `json:"volumes,omitempty"`

	// files are files mounted into the main container (and into the
	// sidecars each names): configuration files given inline, or taken
	// from a key of a ConfigMap or Secret; at most 32, with at most
	// 1,000,000 bytes of inline content together. See File.
	// +optional
	// +listType=map
	// +listMapKey=path
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.map(f, has(f.content) ? size(bytes(f.content)) : has(f.binaryContent) ? size(f.binaryContent) : 0).sum() <= 1000000",message="the inline content of all files together may hold at most 1,000,000 bytes (UTF-8): a ConfigMap holds at most 1 MiB; take large files from a ConfigMap of your own with configMapKeyRef"
	Files []File `json:"files,omitempty"`

	// serviceAccountName is the ServiceAccount the pods run as; "default"
	// when unset.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// serviceAccount asks for a ServiceAccount of the DeployObject's own
	// for the pods to run as, with the annotations workload identity reads
	// (AWS IRSA, GKE Workload Identity, Azure Workload Identity). Exclusive
	// with serviceAccountName, which names one that exists already. When
	// it is renamed or removed, the old ServiceAccount is deleted once no
	// pod runs as it any more: a pod's tokens die with its ServiceAccount.
	// +optional
	ServiceAccount *OwnedServiceAccount `json:"serviceAccount,omitempty"`

	// automountServiceAccountToken, when false, keeps the ServiceAccount's
	// API token out of the pods.
	// +optional
	AutomountServiceAccountToken *bool `json:"automountServiceAccountToken,omitempty"`

	// imagePullSecrets name Secrets in the namespace holding registry
	// credentials for pulling the images.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// podSecurityContext is the pod's security context (the Pod API's
	// spec.securityContext). With the controller's
	// --pod-security-profile=restricted, runAsNonRoot and seccompProfile are
	// filled in where it leaves them unset.
	// +optional
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`

	// nodeSelector constrains the pods to nodes with these labels.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations let the pods run on tainted nodes.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// affinity holds node affinity and pod (anti-)affinity rules.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// topologySpreadConstraints spread the pods across zones or nodes. Their
	// labelSelector usually selects app.deployobject.dev/name: <name>.
	// +optional
	// +listType=map
	// +listMapKey=topologyKey
	// +listMapKey=whenUnsatisfiable
	// +kubebuilder:validation:MaxItems=8
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// priorityClassName names the PriorityClass of the pods.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// terminationGracePeriodSeconds is how long a pod has to stop after
	// SIGTERM (and after its preStop hook) before it is killed; 30 when
	// unset.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`

	// podResources are compute resources for the whole pod, which its
	// containers share (the Pod API's pod-level spec.resources, on by
	// default since Kubernetes 1.34): cpu and memory only, each request at
	// most its limit and at least the main container's request. The API
	// server also requires a request to cover the sum of every container's
	// requests, sidecars included; it refuses the Deployment otherwise, and
	// Ready says InvalidSpec. It is called podResources because resources
	// is the main container's.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.claims)",message="podResources.claims is not supported: a DeployObject declares no pod resourceClaims"
	// +kubebuilder:validation:XValidation:rule="!has(self.requests) || self.requests.all(k, k in ['cpu', 'memory'])",message="podResources may set cpu and memory only",fieldPath=".requests"
	// +kubebuilder:validation:XValidation:rule="!has(self.limits) || self.limits.all(k, k in ['cpu', 'memory'])",message="podResources may set cpu and memory only",fieldPath=".limits"
	// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !has(self.limits) || ['cpu', 'memory'].all(k, !(k in self.requests) || !(k in self.limits) || quantity(string(self.limits[k])).compareTo(quantity(string(self.requests[k]))) >= 0)",message="each request must be less than or equal to its limit"
	PodResources *corev1.ResourceRequirements `json:"podResources,omitempty"`

	// runtimeClassName names the RuntimeClass the pods run with (gVisor,
	// Kata Containers, a GPU runtime): a DNS subdomain. The RuntimeClass
	// must exist, or the pods are not created and Ready says
	// ReplicaFailure.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	RuntimeClassName *string `json:"runtimeClassName,omitempty"`

	// hostAliases are entries added to the pods' /etc/hosts: at most 16,
	// each an IP address and up to 16 host names (DNS subdomains).
	// +optional
	// +listType=map
	// +listMapKey=ip
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:XValidation:rule="isIP(self.ip)",message="ip must be an IP address",fieldPath=".ip"
	// +kubebuilder:validation:items:XValidation:rule="!has(self.hostnames) || size(self.hostnames) <= 16",message="at most 16 host names",fieldPath=".hostnames"
	// +kubebuilder:validation:items:XValidation:rule="!has(self.hostnames) || self.hostnames.all(h, size(h) <= 253 && h.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'))",message="each host name must be a DNS subdomain: lowercase letters, digits, '-' and '.', at most 253 characters",fieldPath=".hostnames"
	HostAliases []corev1.HostAlias `json:"hostAliases,omitempty"`

	// dnsPolicy is how the pods resolve names: ClusterFirst (the default:
	// the cluster's DNS, then the node's), ClusterFirstWithHostNet (the
	// same; it matters only with host networking, which a DeployObject
	// does not offer), Default (the node's resolver only) or None (only
	// dnsConfig, which must then name a nameserver).
	// +optional
	// +kubebuilder:validation:Enum=ClusterFirst;ClusterFirstWithHostNet;Default;None
	DNSPolicy corev1.DNSPolicy `json:"dnsPolicy,omitempty"`

	// dnsConfig adds to the resolver configuration dnsPolicy makes: at
	// most 3 nameservers (IP addresses), 32 search domains (DNS subdomains,
	// 2048 characters in all) and options (each with a name).
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.nameservers) || size(self.nameservers) <= 3",message="at most 3 nameservers",fieldPath=".nameservers"
	// +kubebuilder:validation:XValidation:rule="!has(self.nameservers) || self.nameservers.all(n, isIP(n))",message="each nameserver must be an IP address",fieldPath=".nameservers"
	// +kubebuilder:validation:XValidation:rule="!has(self.searches) || size(self.searches) <= 32",message="at most 32 search domains",fieldPath=".searches"
	// +kubebuilder:validation:XValidation:rule="!has(self.searches) || self.searches.all(s, size(s) <= 254 && s.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*[.]?$'))",message="each search domain must be a DNS subdomain, optionally ending with '.'",fieldPath=".searches"
	// +kubebuilder:validation:XValidation:rule="!has(self.searches) || self.searches.join(' ').size() <= 2048",message="the search domains may take at most 2048 characters, with a space between each two",fieldPath=".searches"
	// +kubebuilder:validation:XValidation:rule="!has(self.options) || self.options.all(o, has(o.name) && size(o.name) > 0)",message="each option needs a name",fieldPath=".options"
	DNSConfig *corev1.PodDNSConfig `json:"dnsConfig,omitempty"`

	// shareProcessNamespace puts the pod's containers in one process
	// namespace, so that they see and signal each other's processes (a
	// sidecar that reloads the application, a debugger).
	// +optional
	ShareProcessNamespace *bool `json:"shareProcessNamespace,omitempty"`

	// enableServiceLinks, when false, keeps the Docker-link environment
	// variables of every Service of the namespace (WEB_SERVICE_HOST and the
	// like) out of the pods, which is what most applications want; the Pod
	// API's default is true.
	// +optional
	EnableServiceLinks *bool `json:"enableServiceLinks,omitempty"`

	// podMetadata are labels and annotations added to the pod template, for
	// example for a service mesh or a metrics scraper.
	// +optional
	PodMetadata *PodMetadata `json:"podMetadata,omitempty"`

	// initContainers run to completion, in order, before the sidecars and
	// the main container start. Their restartPolicy, restartPolicyRules,
	// lifecycle and probes must be unset: a restarting init container is a sidecar, declared in
	// sidecars. Names are DNS labels and an image is required, as the Pod
	// API requires of every container.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:XValidation:rule="!has(self.restartPolicy)",message="an init container may not set restartPolicy: declare a container that keeps running in sidecars",fieldPath=".restartPolicy"
	// +kubebuilder:validation:items:XValidation:rule="!has(self.restartPolicyRules)",message="an init container may not set restartPolicyRules: the Pod API takes them only with a restartPolicy, which an init container may not set",fieldPath=".restartPolicyRules"
	// +kubebuilder:validation:items:XValidation:rule="size(self.name) <= 63 && self.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="name must be a DNS label: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit",fieldPath=".name"
	// +kubebuilder:validation:items:XValidation:rule="has(self.image) && size(self.image) > 0 && self.image == self.image.trim()",message="image is required and must not have leading or trailing whitespace",fieldPath=".image"
	// +kubebuilder:validation:items:XValidation:rule="!has(self.lifecycle) && !has(self.livenessProbe) && !has(self.readinessProbe) && !has(self.startupProbe)",message="an init container runs to completion, so it may not set lifecycle or probes: declare a container that keeps running in sidecars"
	InitContainers []corev1.Container `json:"initContainers,omitempty"`

	// sidecars run beside the main container for the pod's whole life. They
	// become native sidecars: init containers with restartPolicy Always,
	// placed after initContainers, so they start once the init containers
	// have completed and before the main container, and stop after it.
	// Names are DNS labels and an image is required.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:XValidation:rule="!has(self.restartPolicy) || self.restartPolicy == 'Always'",message="a sidecar's restartPolicy can only be Always, which the controller sets",fieldPath=".restartPolicy"
	// +kubebuilder:validation:items:XValidation:rule="size(self.name) <= 63 && self.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="name must be a DNS label: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit",fieldPath=".name"
	// +kubebuilder:validation:items:XValidation:rule="has(self.image) && size(self.image) > 0 && self.image == self.image.trim()",message="image is required and must not have leading or trailing whitespace",fieldPath=".image"
	Sidecars []corev1.Container `json:"sidecars,omitempty"`
}

// RolloutSpec holds the Deployment's rollout settings.
type RolloutSpec struct {
	// strategy is how pods are replaced: RollingUpdate (the default, with
	// maxSurge and maxUnavailable of 25%) or Recreate.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.type) || self.type != 'Recreate' || !has(self.rollingUpdate)",message="rollingUpdate may only be set with type RollingUpdate",fieldPath=".rollingUpdate"
	Strategy *appsv1.DeploymentStrategy `json:"strategy,omitempty"`

	// minReadySeconds is how long a new pod must be ready, without any of
	// its containers crashing, to count as available.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	MinReadySeconds int32 `json:"minReadySeconds,omitempty"`

	// progressDeadlineSeconds is how long a rollout may make no progress
	// before Ready turns False with reason ProgressDeadlineExceeded; 600
	// when unset. It must exceed minReadySeconds.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`

	// revisionHistoryLimit is how many old ReplicaSets the Deployment
	// keeps, 10 when unset; the ConfigMaps of inline files they mount are
	// kept with them. A `kubectl rollout undo` is undone as drift: go back
	// by changing the DeployObject.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`
}

// PodMetadata are labels and annotations for the pod template.
type PodMetadata struct {
	// labels are added to the pods' labels. They may not set the labels the
	// controller selects and marks its pods with.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="!('app.deployobject.dev/name' in self) && !('app.kubernetes.io/managed-by' in self)",message="labels may not set app.deployobject.dev/name or app.kubernetes.io/managed-by: the controller sets them and selects its pods by them"
	Labels map[string]string `json:"labels,omitempty"`

	// annotations are added to the pods' annotations.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Volume is a pod volume with one of the supported sources. The Pod API's
// other sources are refused at admission (see hack/crdpost).
//
// +kubebuilder:validation:XValidation:rule="[has(self.configMap), has(self.secret), has(self.emptyDir), has(self.persistentVolumeClaim), has(self.projected), has(self.downwardAPI)].filter(x, x).size() == 1",message="a volume must set exactly one of configMap, secret, emptyDir, persistentVolumeClaim, projected and downwardAPI"
// +kubebuilder:validation:XValidation:rule="!has(self.configMap) || (has(self.configMap.name) && size(self.configMap.name) > 0)",message="configMap.name is required",fieldPath=".configMap.name"
// +kubebuilder:validation:XValidation:rule="!has(self.secret) || (has(self.secret.secretName) && size(self.secret.secretName) > 0)",message="secret.secretName is required",fieldPath=".secret.secretName"
// +kubebuilder:validation:XValidation:rule="!has(self.persistentVolumeClaim) || size(self.persistentVolumeClaim.claimName) > 0",message="persistentVolumeClaim.claimName is required",fieldPath=".persistentVolumeClaim.claimName"
type Volume struct {
	// name identifies the volume for volumeMounts: a DNS label.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// configMap mounts the keys of a ConfigMap as files.
	// +optional
	ConfigMap *corev1.ConfigMapVolumeSource `json:"configMap,omitempty"`

	// secret mounts the keys of a Secret as files.
	// +optional
	Secret *corev1.SecretVolumeSource `json:"secret,omitempty"`

	// emptyDir is scratch space that lives as long as the pod.
	// +optional
	EmptyDir *corev1.EmptyDirVolumeSource `json:"emptyDir,omitempty"`

	// persistentVolumeClaim mounts a PersistentVolumeClaim of the namespace.
	// +optional
	PersistentVolumeClaim *corev1.PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim,omitempty"`

	// projected combines ConfigMaps, Secrets, the downward API and
	// ServiceAccount tokens in one directory.
	// +optional
	Projected *corev1.ProjectedVolumeSource `json:"projected,omitempty"`

	// downwardAPI exposes the pod's own fields as files.
	// +optional
	DownwardAPI *corev1.DownwardAPIVolumeSource `json:"downwardAPI,omitempty"`
}

// OwnedServiceAccount is a ServiceAccount the controller keeps for the
// DeployObject's pods. The controller owns its labels and the labels and
// annotations listed in metadata; everything else on it (others'
// annotations, secrets, imagePullSecrets, automountServiceAccountToken) is
// left as others set it.
type OwnedServiceAccount struct {
	// name is the ServiceAccount's name, the DeployObject's when unset: a
	// DNS subdomain, not "default" (the namespace's own, which
	// Kubernetes keeps). A ServiceAccount of that name that the
	// DeployObject does not own is never taken over: Ready says so.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +kubebuilder:validation:XValidation:rule="self != 'default'",message="the default ServiceAccount is the namespace's own: name another, or use serviceAccountName: default"
	Name string `json:"name,omitempty"`

	// metadata are labels and annotations for the ServiceAccount, such as
	// eks.amazonaws.com/role-arn or iam.gke.io/gcp-service-account; see
	// ChildMetadata for who owns which key.
	// +optional
	Metadata *ChildMetadata `json:"metadata,omitempty"`
}
