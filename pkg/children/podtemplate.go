package children

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// DesiredPodTemplate is the pod template dobj asks for: the spec's fields
// as the spec sets them, and nothing the API server defaults. Whether a
// live template is in line with it is judged by covers, which ignores what
// the spec leaves unset.
func DesiredPodTemplate(dobj *appv1.DeployObject, profile PodSecurityProfile) corev1.PodTemplateSpec {
	spec := &dobj.Spec
	labels := childLabels(dobj)
	var annotations map[string]string
	if m := spec.PodMetadata; m != nil {
		// Admission refuses podMetadata labels that would override the
		// controller's: they are added first and the controller's win.
		merged := make(map[string]string, len(m.Labels)+len(labels))
		for k, v := range m.Labels {
			merged[k] = v
		}
		for k, v := range labels {
			merged[k] = v
		}
		labels = merged
		if len(m.Annotations) > 0 {
			annotations = make(map[string]string, len(m.Annotations))
			for k, v := range m.Annotations {
				annotations[k] = v
			}
		}
	}
	pod := corev1.PodSpec{
		Containers:         []corev1.Container{desiredContainer(dobj)},
		InitContainers:     initContainers(dobj),
		Volumes:            podVolumes(dobj),
		ServiceAccountName: PodServiceAccountName(dobj),
		// The API server copies either of the two into the other when only
		// one is set, so a Deployment that owned only serviceAccountName
		// would get it back from the copy after the spec dropped it.
		DeprecatedServiceAccount:      PodServiceAccountName(dobj),
		AutomountServiceAccountToken:  copyPtr(spec.AutomountServiceAccountToken),
		ImagePullSecrets:              cloneSlice(spec.ImagePullSecrets),
		SecurityContext:               spec.PodSecurityContext.DeepCopy(),
		NodeSelector:                  cloneMap(spec.NodeSelector),
		Tolerations:                   deepCopySlice(spec.Tolerations),
		Affinity:                      spec.Affinity.DeepCopy(),
		TopologySpreadConstraints:     deepCopySlice(spec.TopologySpreadConstraints),
		PriorityClassName:             spec.PriorityClassName,
		TerminationGracePeriodSeconds: copyPtr(spec.TerminationGracePeriodSeconds),
		Resources:                     storedResourcesPtr(spec.PodResources),
		RuntimeClassName:              copyPtr(spec.RuntimeClassName),
		HostAliases:                   deepCopySlice(spec.HostAliases),
		DNSPolicy:                     spec.DNSPolicy,
		DNSConfig:                     spec.DNSConfig.DeepCopy(),
		ShareProcessNamespace:         copyPtr(spec.ShareProcessNamespace),
		EnableServiceLinks:            copyPtr(spec.EnableServiceLinks),
	}
	if profile == ProfileRestricted {
		restrict(&pod)
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
		Spec:       pod,
	}
}

// desiredContainer is the main container, "app".
func desiredContainer(dobj *appv1.DeployObject) corev1.Container {
	spec := &dobj.Spec
	c := corev1.Container{
		Name:            ContainerName,
		Image:           spec.Image,
		Command:         cloneSlice(spec.Command),
		Args:            cloneSlice(spec.Args),
		Env:             deepCopySlice(spec.Env),
		EnvFrom:         deepCopySlice(spec.EnvFrom),
		Resources:       storedResources(spec.Resources),
		ImagePullPolicy: spec.ImagePullPolicy,
		LivenessProbe:   spec.LivenessProbe.DeepCopy(),
		ReadinessProbe:  spec.ReadinessProbe.DeepCopy(),
		StartupProbe:    spec.StartupProbe.DeepCopy(),
		Lifecycle:       spec.Lifecycle.DeepCopy(),
		VolumeMounts:    append(deepCopySlice(spec.VolumeMounts), fileMounts(dobj, ContainerName)...),
		SecurityContext: spec.SecurityContext.DeepCopy(),
		WorkingDir:      spec.WorkingDir,
		ResizePolicy:    cloneSlice(spec.ResizePolicy),
	}
	for _, p := range spec.Ports {
		c.Ports = append(c.Ports, corev1.ContainerPort{
			Name:          p.Name,
			ContainerPort: p.ContainerPort,
			Protocol:      portProtocol(p),
		})
	}
	return c
}

// initContainers are the spec's init containers followed by its sidecars,
// which become native sidecars: init containers that restart always, and so
// keep running beside the main container. Placed after the init
// containers, they start once those have completed.
func initContainers(dobj *appv1.DeployObject) []corev1.Container {
	spec := &dobj.Spec
	n := len(spec.InitContainers) + len(spec.Sidecars)
	if n == 0 {
		return nil
	}
	out := make([]corev1.Container, 0, n)
	for i := range spec.InitContainers {
		out = append(out, storedContainer(spec.InitContainers[i]))
	}
	always := corev1.ContainerRestartPolicyAlways
	for i := range spec.Sidecars {
		c := storedContainer(spec.Sidecars[i])
		c.RestartPolicy = &always
		c.VolumeMounts = append(c.VolumeMounts, fileMounts(dobj, c.Name)...)
		out = append(out, c)
	}
	return out
}

// storedContainer is a deep copy of c with its resources as the API server
// stores them.
func storedContainer(c corev1.Container) corev1.Container {
	out := *c.DeepCopy()
	out.Resources = storedResources(c.Resources)
	return out
}

// podVolumes converts the spec's volumes, which admit only some sources, to
// pod volumes, and adds the volume of the files, if any.
func podVolumes(dobj *appv1.DeployObject) []corev1.Volume {
	vs := dobj.Spec.Volumes
	files := filesVolume(dobj)
	if len(vs) == 0 && files == nil {
		return nil
	}
	out := make([]corev1.Volume, len(vs), len(vs)+1)
	for i := range vs {
		v := vs[i].DeepCopy()
		out[i] = corev1.Volume{Name: v.Name, VolumeSource: corev1.VolumeSource{
			ConfigMap:             v.ConfigMap,
			Secret:                v.Secret,
			EmptyDir:              v.EmptyDir,
			PersistentVolumeClaim: v.PersistentVolumeClaim,
			Projected:             v.Projected,
			DownwardAPI:           v.DownwardAPI,
		}}
	}
	if files != nil {
		out = append(out, *files)
	}
	return out
}

// storedResources is r as the API server stores it in a pod template: it
// rounds every quantity up to a thousandth (SetDefaults_ResourceList), so
// that a cpu of "0.5m" is kept as "1m". Built any other way, a spec with
// such a value would differ from its Deployment forever.
func storedResources(r corev1.ResourceRequirements) corev1.ResourceRequirements {
	out := *r.DeepCopy()
	for _, list := range []corev1.ResourceList{out.Requests, out.Limits} {
		for name, q := range list {
			q.RoundUp(-3)
			list[name] = q
		}
	}
	return out
}

// storedResourcesPtr is storedResources of the pod-level resources, nil
// when the spec sets none.
func storedResourcesPtr(r *corev1.ResourceRequirements) *corev1.ResourceRequirements {
	if r == nil {
		return nil
	}
	out := storedResources(*r)
	return &out
}
