package main

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

func TestDesiredPodTemplate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mutate  func(*appv1.DeployObject)
		profile podSecurityProfile
		check   func(*testing.T, corev1.PodTemplateSpec)
	}{
		{"minimal spec sets no pod fields", func(*appv1.DeployObject) {}, profileNone, func(t *testing.T, p corev1.PodTemplateSpec) {
			if p.Spec.SecurityContext != nil || p.Spec.InitContainers != nil || p.Spec.Volumes != nil || p.Annotations != nil {
				t.Errorf("pod spec = %+v, want only the main container", p.Spec)
			}
		}},
		{"init containers first, then sidecars restarting always", func(d *appv1.DeployObject) {
			d.Spec.InitContainers = []corev1.Container{{Name: "migrate", Image: "m"}}
			d.Spec.Sidecars = []corev1.Container{{Name: "proxy", Image: "p"}}
		}, profileNone, func(t *testing.T, p corev1.PodTemplateSpec) {
			ic := p.Spec.InitContainers
			if len(ic) != 2 || ic[0].Name != "migrate" || ic[0].RestartPolicy != nil || ic[1].Name != "proxy" || ptr.Deref(ic[1].RestartPolicy, "") != corev1.ContainerRestartPolicyAlways {
				t.Errorf("init containers = %+v", ic)
			}
		}},
		{"podMetadata cannot override the selector labels", func(d *appv1.DeployObject) {
			d.Spec.PodMetadata = &appv1.PodMetadata{Labels: map[string]string{"team": "a", nameLabel: "other"}, Annotations: map[string]string{"prometheus.io/scrape": "true"}}
		}, profileNone, func(t *testing.T, p corev1.PodTemplateSpec) {
			if p.Labels["team"] != "a" || p.Labels[nameLabel] != "web" || p.Annotations["prometheus.io/scrape"] != "true" {
				t.Errorf("metadata = %v %v", p.Labels, p.Annotations)
			}
		}},
		{"restricted fills what the spec leaves unset", func(d *appv1.DeployObject) {
			d.Spec.Sidecars = []corev1.Container{{Name: "proxy", Image: "p"}}
		}, profileRestricted, func(t *testing.T, p corev1.PodTemplateSpec) {
			sc := p.Spec.SecurityContext
			if sc == nil || !ptr.Deref(sc.RunAsNonRoot, false) || sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Errorf("pod securityContext = %+v", sc)
			}
			for _, c := range append(p.Spec.InitContainers, p.Spec.Containers...) {
				csc := c.SecurityContext
				if csc == nil || ptr.Deref(csc.AllowPrivilegeEscalation, true) || csc.Capabilities == nil || len(csc.Capabilities.Drop) != 1 || csc.Capabilities.Drop[0] != "ALL" {
					t.Errorf("container %s securityContext = %+v", c.Name, csc)
				}
			}
		}},
		{"restricted keeps what the spec sets", func(d *appv1.DeployObject) {
			d.Spec.PodSecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(false)}
			d.Spec.SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}, Drop: []corev1.Capability{"ALL"}}}
		}, profileRestricted, func(t *testing.T, p corev1.PodTemplateSpec) {
			if ptr.Deref(p.Spec.SecurityContext.RunAsNonRoot, true) {
				t.Error("runAsNonRoot: false from the spec was overridden")
			}
			if c := p.Spec.Containers[0].SecurityContext; len(c.Capabilities.Add) != 1 || ptr.Deref(c.AllowPrivilegeEscalation, true) {
				t.Errorf("container securityContext = %+v", c)
			}
		}},
		{"the spec is copied, not shared", func(d *appv1.DeployObject) {
			d.Spec.Tolerations = []corev1.Toleration{{Key: "k", TolerationSeconds: ptr.To[int64](5)}}
		}, profileNone, func(t *testing.T, p corev1.PodTemplateSpec) {
			*p.Spec.Tolerations[0].TolerationSeconds = 99
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dobj := newDeployObject(tc.mutate)
			before := dobj.DeepCopy()
			tc.check(t, desiredPodTemplate(dobj, tc.profile))
			if !equalObjects(dobj, before) {
				t.Error("building the template changed the DeployObject")
			}
		})
	}
}

// withEveryPodField sets a value in every field of the pod surface.
func withEveryPodField(d *appv1.DeployObject) {
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
	s.PodMetadata = &appv1.PodMetadata{Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"a": "b"}}
	s.InitContainers = []corev1.Container{{Name: "init", Image: "i"}}
	s.Sidecars = []corev1.Container{{Name: "side", Image: "s"}}
	s.Strategy = &appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	s.MinReadySeconds = 3
	s.ProgressDeadlineSeconds = ptr.To[int32](60)
	s.RevisionHistoryLimit = ptr.To[int32](2)
}

// TestSlimDeploymentKeepsThePodSurface: the cache keeps every field the
// spec can set, so a Deployment in line stays in line once slimmed, and one
// that drifts in any of them still drifts.
func TestSlimDeploymentKeepsThePodSurface(t *testing.T) {
	dobj := newDeployObject(withEveryPodField)
	desired := desiredDeployment(dobj, profileRestricted)
	if slim := slimDeployment(desired.DeepCopy()); !deploymentInSync(slim, desired) {
		t.Errorf("a Deployment in line is out of line once slimmed:\n%s", diff.Diff(desired.Spec, slim.Spec))
	}
	drifted := desired.DeepCopy()
	drifted.Spec.Template.Spec.DeprecatedServiceAccount = "other"
	if deploymentInSync(slimDeployment(drifted), desired) {
		t.Error("a drifted serviceAccount is in line once slimmed")
	}
}
