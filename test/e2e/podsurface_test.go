//go:build e2e

package e2e

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// fullSpec sets every optional field of the pod surface, naming the
// ConfigMap, Secret, ServiceAccount and PriorityClass that podSurfaceObjects
// makes.
func fullSpec(priorityClass string) func(*appv1.DeployObject) {
	return func(d *appv1.DeployObject) {
		s := &d.Spec
		s.Replicas = ptr.To[int32](2)
		s.ImagePullPolicy = corev1.PullAlways
		s.EnvFrom = []corev1.EnvFromSource{
			{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}},
			{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-secret"}}, Prefix: "SECRET_"},
		}
		s.LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}}, PeriodSeconds: 20}
		s.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}}
		s.StartupProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/started"}}}, FailureThreshold: 30}
		s.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}}
		s.VolumeMounts = []corev1.VolumeMount{
			{Name: "config", MountPath: "/etc/app", ReadOnly: true},
			{Name: "tmp", MountPath: "/tmp"},
			{Name: "podinfo", MountPath: "/etc/podinfo"},
			{Name: "bundle", MountPath: "/var/run/bundle"},
			{Name: "creds", MountPath: "/var/run/creds"},
		}
		s.SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
		s.Volumes = []appv1.Volume{
			{Name: "config", ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}},
			{Name: "creds", Secret: &corev1.SecretVolumeSource{SecretName: "app-secret"}},
			{Name: "tmp", EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("64Mi"))}},
			{Name: "podinfo", DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}},
			{Name: "bundle", Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}},
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: "vault", Path: "token", ExpirationSeconds: ptr.To[int64](3600)}},
			}}},
		}
		s.ServiceAccountName = "app"
		s.AutomountServiceAccountToken = ptr.To(false)
		s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry-credentials"}}
		s.PodSecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1000), FSGroup: ptr.To[int64](2000), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
		s.NodeSelector = map[string]string{"kubernetes.io/os": "linux"}
		s.Tolerations = []corev1.Toleration{{Key: "example.com/dedicated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
		s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
			Weight: 10, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpExists}}},
		}}}}
		s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{appv1.LabelName: d.Name}},
		}}
		s.PriorityClassName = priorityClass
		s.TerminationGracePeriodSeconds = ptr.To[int64](45)
		s.PodMetadata = &appv1.PodMetadata{Labels: map[string]string{"team": "payments"}, Annotations: map[string]string{"prometheus.io/scrape": "true"}}
		s.InitContainers = []corev1.Container{{Name: "migrate", Image: "busybox:1.37", Command: []string{"sh", "-c", "true"}}}
		s.Sidecars = []corev1.Container{{Name: "log-shipper", Image: "fluent-bit:3.2", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}}}}
		s.Strategy = &appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0))}}
		s.MinReadySeconds = 1
		s.ProgressDeadlineSeconds = ptr.To[int32](120)
		s.RevisionHistoryLimit = ptr.To[int32](3)
		s.WorkingDir = "/srv"
		s.ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.NotRequired}, {ResourceName: corev1.ResourceMemory, RestartPolicy: corev1.RestartContainer}}
		s.PodResources = &corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		}
		// podSurfaceObjects makes a RuntimeClass of the PriorityClass's name.
		s.RuntimeClassName = ptr.To(priorityClass)
		s.HostAliases = []corev1.HostAlias{{IP: "192.0.2.10", Hostnames: []string{"db.internal"}}}
		s.DNSPolicy = corev1.DNSNone
		s.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"192.0.2.53"}, Searches: []string{"svc.cluster.local"}, Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}}}
		s.ShareProcessNamespace = ptr.To(true)
		s.EnableServiceLinks = ptr.To(false)
	}
}

// podSurfaceObjects makes what fullSpec refers to in ns, and a
// PriorityClass that goes with the test.
func podSurfaceObjects(t *testing.T, ns string) string {
	t.Helper()
	if _, err := env.kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app-config"}, Data: map[string]string{"LEVEL": "info"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "app-secret"}, StringData: map[string]string{"TOKEN": "x"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "app"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: ns}, Value: 1000}
	if _, err := env.kube.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.kube.SchedulingV1().PriorityClasses().Delete(ctx, pc.Name, metav1.DeleteOptions{}) })
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: ns}, Handler: "runc"}
	if _, err := env.kube.NodeV1().RuntimeClasses().Create(ctx, rc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.kube.NodeV1().RuntimeClasses().Delete(ctx, rc.Name, metav1.DeleteOptions{}) })
	return pc.Name
}

// allWrites counts the controller's writes of every kind in ns since t0.
func allWrites(t *testing.T, ns string, since time.Time) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, resource := range []string{"deployments", "services", "serviceaccounts", "configmaps", "poddisruptionbudgets", "horizontalpodautoscalers", "ingresses", "networkpolicies", "httproutes", "grpcroutes", "servicemonitors", "podmonitors", "replicasets", "deployobjects"} {
		for name, c := range controllerWrites(t, ns, resource, "write", since) {
			n[resource+"/"+name] += c
		}
	}
	return n
}

// TestPodSurface: a DeployObject that sets every field of the pod surface
// becomes Ready, and so does one with a ServiceAccount and inline files of
// its own; against the real API server's defaulting the controller
// then makes no write across resyncs and across a restart; and removing
// each optional field from the spec removes it from the Deployment, while
// what others added stays.
func TestPodSurface(t *testing.T) {
	t.Parallel()
	ns := newOwnNamespace(t)
	pc := podSurfaceObjects(t, ns)
	args := []string{"--namespace=" + ns, "--resync-period=4s"}
	p, err := startController("podsurface", args...)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.stop(syscall.SIGKILL, 5*time.Second) }()

	create(t, newDO(ns, "full", fullSpec(pc)))
	// A ServiceAccount of its own, which another writer annotates.
	create(t, newDO(ns, "identity", func(d *appv1.DeployObject) {
		d.Spec.ServiceAccount = &appv1.OwnedServiceAccount{Name: "identity-runtime", Metadata: &appv1.ChildMetadata{
			Labels:      map[string]string{"azure.workload.identity/use": "true"},
			Annotations: map[string]string{"azure.workload.identity/client-id": "00000000-0000-0000-0000-000000000000"},
		}}
		d.Spec.Files = []appv1.File{
			{Path: "/etc/identity/app.yaml", Content: ptr.To("level: info\n"), Mode: ptr.To[int32](0o640)},
			{Path: "/etc/identity/logo.png", BinaryContent: []byte{0x89, 'P', 'N', 'G'}},
		}
	}))
	waitReady(t, ns, "full")
	waitReady(t, ns, "identity")
	kubectlPatch(t, ns, "serviceaccount/identity-runtime", `[{"op":"add","path":"/metadata/annotations/audit","value":"done"}]`)
	expectQuiet(t, p, ns, 10*time.Second, true) // two resyncs, and the Deployment's last status changes

	if err := p.stop(syscall.SIGTERM, 30*time.Second); err != nil {
		t.Fatalf("stopping: %v", err)
	}
	restarted := time.Now()
	if p, err = startController("podsurface-2", args...); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Second)
	if w := allWrites(t, ns, restarted); len(w) != 0 {
		t.Errorf("writes after a restart: %v", w)
	}
	// The restarted controller synced the DeployObject from its initial
	// list and found nothing to write.
	if n, err := p.metric("deployobject_reconcile_total"); err != nil || n == 0 {
		t.Errorf("the restarted controller reconciled %v times (err %v): the window without writes shows nothing", n, err)
	}

	// Others' additions, which must survive every removal below.
	if out, err := kubectl("-n", ns, "rollout", "restart", "deployment/full"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	patch := `{"spec":{"template":{"spec":{"containers":[{"name":"mesh-proxy","image":"envoy:1.32"}]}}}}`
	if out, err := kubectl("-n", ns, "patch", "deployment/full", "--type=strategic", "-p", patch); err != nil {
		t.Fatalf("%v: %s", err, out)
	}

	for _, f := range []struct {
		name   string
		remove func(*appv1.DeployObjectSpec)
		gone   func(corev1.PodTemplateSpec, appsv1.DeploymentSpec) bool
	}{
		{"imagePullPolicy", func(s *appv1.DeployObjectSpec) { s.ImagePullPolicy = "" }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool {
			return app(p).ImagePullPolicy == corev1.PullIfNotPresent // the server's default for a tagged image
		}},
		{"envFrom", func(s *appv1.DeployObjectSpec) { s.EnvFrom = nil }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool { return len(app(p).EnvFrom) == 0 }},
		{"livenessProbe", func(s *appv1.DeployObjectSpec) { s.LivenessProbe = nil }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool { return app(p).LivenessProbe == nil }},
		{"readinessProbe", func(s *appv1.DeployObjectSpec) { s.ReadinessProbe = nil }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool { return app(p).ReadinessProbe == nil }},
		{"startupProbe", func(s *appv1.DeployObjectSpec) { s.StartupProbe = nil }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool { return app(p).StartupProbe == nil }},
		{"lifecycle", func(s *appv1.DeployObjectSpec) { s.Lifecycle = nil }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool { return app(p).Lifecycle == nil }},
		{"securityContext", func(s *appv1.DeployObjectSpec) { s.SecurityContext = nil }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool { return app(p).SecurityContext == nil }},
		{"volumeMounts and volumes", func(s *appv1.DeployObjectSpec) { s.VolumeMounts, s.Volumes = nil, nil }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool {
			return len(app(p).VolumeMounts) == 0 && len(p.Spec.Volumes) == 0
		}},
		{"serviceAccountName", func(s *appv1.DeployObjectSpec) { s.ServiceAccountName = "" }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool { return p.Spec.ServiceAccountName == "" }},
		{"automountServiceAccountToken", func(s *appv1.DeployObjectSpec) { s.AutomountServiceAccountToken = nil }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool {
			return p.Spec.AutomountServiceAccountToken == nil
		}},
		{"imagePullSecrets", func(s *appv1.DeployObjectSpec) { s.ImagePullSecrets = nil }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool { return len(p.Spec.ImagePullSecrets) == 0 }},
		{"podSecurityContext", func(s *appv1.DeployObjectSpec) { s.PodSecurityContext = nil }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool {
			sc := p.Spec.SecurityContext
			return sc == nil || (sc.RunAsNonRoot == nil && sc.RunAsUser == nil && sc.FSGroup == nil && sc.SeccompProfile == nil)
		}},
		{"nodeSelector", func(s *appv1.DeployObjectSpec) { s.NodeSelector = nil }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool { return len(p.Spec.NodeSelector) == 0 }},
		{"tolerations", func(s *appv1.DeployObjectSpec) { s.Tolerations = nil }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool { return len(p.Spec.Tolerations) == 0 }},
		{"affinity", func(s *appv1.DeployObjectSpec) { s.Affinity = nil }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool { return p.Spec.Affinity == nil }},
		{"topologySpreadConstraints", func(s *appv1.DeployObjectSpec) { s.TopologySpreadConstraints = nil }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool {
			return len(p.Spec.TopologySpreadConstraints) == 0
		}},
		{"priorityClassName", func(s *appv1.DeployObjectSpec) { s.PriorityClassName = "" }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool { return p.Spec.PriorityClassName == "" }},
		{"terminationGracePeriodSeconds", func(s *appv1.DeployObjectSpec) { s.TerminationGracePeriodSeconds = nil }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool {
			return ptr.Deref(p.Spec.TerminationGracePeriodSeconds, 0) == 30
		}},
		{"podMetadata", func(s *appv1.DeployObjectSpec) { s.PodMetadata = nil }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool {
			_, label := p.Labels["team"]
			_, annotation := p.Annotations["prometheus.io/scrape"]
			return !label && !annotation
		}},
		{"initContainers and sidecars", func(s *appv1.DeployObjectSpec) { s.InitContainers, s.Sidecars = nil, nil }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool {
			return len(p.Spec.InitContainers) == 0
		}},
		{"strategy", func(s *appv1.DeployObjectSpec) { s.Strategy = nil }, func(_ corev1.PodTemplateSpec, d appsv1.DeploymentSpec) bool {
			return d.Strategy.RollingUpdate != nil && d.Strategy.RollingUpdate.MaxSurge.String() == "25%"
		}},
		{"minReadySeconds", func(s *appv1.DeployObjectSpec) { s.MinReadySeconds = 0 }, func(_ corev1.PodTemplateSpec, d appsv1.DeploymentSpec) bool { return d.MinReadySeconds == 0 }},
		{"progressDeadlineSeconds", func(s *appv1.DeployObjectSpec) { s.ProgressDeadlineSeconds = nil }, func(_ corev1.PodTemplateSpec, d appsv1.DeploymentSpec) bool {
			return ptr.Deref(d.ProgressDeadlineSeconds, 0) == 600
		}},
		{"revisionHistoryLimit", func(s *appv1.DeployObjectSpec) { s.RevisionHistoryLimit = nil }, func(_ corev1.PodTemplateSpec, d appsv1.DeploymentSpec) bool {
			return ptr.Deref(d.RevisionHistoryLimit, 0) == 10
		}},
		{"workingDir", func(s *appv1.DeployObjectSpec) { s.WorkingDir = "" }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool { return app(p).WorkingDir == "" }},
		{"resizePolicy", func(s *appv1.DeployObjectSpec) { s.ResizePolicy = nil }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool { return len(app(p).ResizePolicy) == 0 }},
		{"podResources", func(s *appv1.DeployObjectSpec) { s.PodResources = nil }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool { return p.Spec.Resources == nil }},
		{"runtimeClassName", func(s *appv1.DeployObjectSpec) { s.RuntimeClassName = nil }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool { return p.Spec.RuntimeClassName == nil }},
		{"hostAliases", func(s *appv1.DeployObjectSpec) { s.HostAliases = nil }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool { return len(p.Spec.HostAliases) == 0 }},
		{"dnsPolicy and dnsConfig", func(s *appv1.DeployObjectSpec) { s.DNSPolicy, s.DNSConfig = "", nil }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool {
			return p.Spec.DNSPolicy == corev1.DNSClusterFirst && p.Spec.DNSConfig == nil
		}},
		{"shareProcessNamespace", func(s *appv1.DeployObjectSpec) { s.ShareProcessNamespace = nil }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool {
			return p.Spec.ShareProcessNamespace == nil
		}},
		{"enableServiceLinks", func(s *appv1.DeployObjectSpec) { s.EnableServiceLinks = nil }, func(p corev1.PodTemplateSpec, _ appsv1.DeploymentSpec) bool {
			// A Deployment's template gets no default here; a pod gets true.
			return p.Spec.EnableServiceLinks == nil
		}},
	} {
		updateDO(t, ns, "full", func(d *appv1.DeployObject) { f.remove(&d.Spec) })
		waitReady(t, ns, "full")
		d := getDeployment(t, ns, "full")
		if !f.gone(d.Spec.Template, d.Spec) {
			t.Errorf("removing %s from the spec left it in the Deployment: %s", f.name, describe(d))
		}
	}
	d := getDeployment(t, ns, "full")
	if d.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] == "" || len(d.Spec.Template.Spec.Containers) != 2 {
		t.Errorf("others' additions did not survive: annotations %v, %d containers", d.Spec.Template.Annotations, len(d.Spec.Template.Spec.Containers))
	}
	expectQuiet(t, p, ns, 10*time.Second, true)
}

// TestRestrictedProfile: with --pod-security-profile=restricted, a minimal
// DeployObject becomes Ready in a namespace that enforces Pod Security
// "restricted"; without it, its pods are refused.
func TestRestrictedProfile(t *testing.T) {
	t.Parallel()
	ns := newOwnNamespace(t)
	if out, err := kubectl("label", "namespace", ns, "pod-security.kubernetes.io/enforce=restricted"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	p, err := startController("restricted", "--namespace="+ns)
	if err != nil {
		t.Fatal(err)
	}
	create(t, newDO(ns, "plain"))
	waitReason(t, ns, "plain", metav1.ConditionFalse, appv1.ReasonReplicaFailure)
	if err := p.stop(syscall.SIGTERM, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if p, err = startController("restricted-2", "--namespace="+ns, "--pod-security-profile=restricted"); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.stop(syscall.SIGKILL, 5*time.Second) }()
	create(t, newDO(ns, "web"))
	waitReady(t, ns, "web")
	// The profile rolls out the DeployObject made before it was on, too.
	waitReady(t, ns, "plain")
}

func app(p corev1.PodTemplateSpec) corev1.Container {
	for _, c := range p.Spec.Containers {
		if c.Name == appv1.ContainerName {
			return c
		}
	}
	return corev1.Container{}
}

func describe(d *appsv1.Deployment) string {
	return fmt.Sprintf("%+v", d.Spec)
}
