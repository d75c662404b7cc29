package children

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"path"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// The files of spec.files: the ConfigMap that holds their inline content,
// the volume and mounts that put every file in place, and which older
// ConfigMaps may go.
//
// Inline content is kept in an immutable ConfigMap named by a hash of that
// content, NAME-files-HASH. A change of content is a new ConfigMap and a
// new name in the pod template: a spec change, which rolls the pods at
// once and is never held by the configuration-rollout limit. An older one
// stays while a ReplicaSet the Deployment keeps mounts it, so that the pods
// of that ReplicaSet can start, during a rollout and after. Being immutable
// and named by its content, a live one is in line when it exists and is
// the DeployObject's: the controller never updates one, and the kubelet
// does not watch it.
//
// All files are mounted from one projected volume, deployobject-files:
// the inline ConfigMap's keys, and the keys of the ConfigMaps and Secrets
// that files reference, each at its own path in the volume. Each file is
// then mounted alone (subPath), so that the rest of its directory in the
// image stays visible.

// KindFilesConfigMap names the ConfigMap of inline files in problems and
// events.
const KindFilesConfigMap = "ConfigMap"

// FilesVolumeName is the name of the volume that holds the files; the spec
// may not use it for a volume of its own.
const FilesVolumeName = "deployobject-files"

// filesMode is the files' mode when the spec sets none, and what the API
// server would fill in as the projected volume's defaultMode.
const filesMode int32 = 0o644

// fileKey is where file i of the spec lies in the files volume, and its
// key in the inline ConfigMap: unique by its index, readable by its name.
func fileKey(i int, f *appv1.File) string {
	return fmt.Sprintf("%d-%s", i, path.Base(f.Path))
}

func inline(f *appv1.File) bool {
	return f.Content != nil || f.BinaryContent != nil
}

// FilesConfigMapName is the name of the ConfigMap holding the inline
// content of dobj's files, or "" when none is inline.
func FilesConfigMapName(dobj *appv1.DeployObject) string {
	data, binary := inlineFiles(dobj)
	if data == nil && binary == nil {
		return ""
	}
	return dobj.Name + "-files-" + contentHash(data, binary)
}

// inlineFiles are the inline contents of dobj's files by their keys.
func inlineFiles(dobj *appv1.DeployObject) (map[string]string, map[string][]byte) {
	var data map[string]string
	var binary map[string][]byte
	for i := range dobj.Spec.Files {
		f := &dobj.Spec.Files[i]
		switch {
		case f.Content != nil:
			if data == nil {
				data = map[string]string{}
			}
			data[fileKey(i, f)] = *f.Content
		case f.BinaryContent != nil:
			if binary == nil {
				binary = map[string][]byte{}
			}
			binary[fileKey(i, f)] = slices.Clone(f.BinaryContent)
		}
	}
	return data, binary
}

// contentHash is the first 16 hex digits of a SHA-256 of data and binary,
// key by key: a name that two contents share only by a collision the
// controller could not see (it never compares a live ConfigMap's content).
func contentHash(data map[string]string, binary map[string][]byte) string {
	h := sha256.New()
	write := func(kind byte, k string, v []byte) {
		fmt.Fprintf(h, "%c%d:%s%d:", kind, len(k), k, len(v))
		h.Write(v)
	}
	for _, k := range slices.Sorted(maps.Keys(data)) {
		write('d', k, []byte(data[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(binary)) {
		write('b', k, binary[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// DesiredFilesConfigMap is the immutable ConfigMap holding the inline
// content of dobj's files, or nil when none is inline.
func DesiredFilesConfigMap(dobj *appv1.DeployObject) *corev1.ConfigMap {
	data, binary := inlineFiles(dobj)
	if data == nil && binary == nil {
		return nil
	}
	cm := &corev1.ConfigMap{ObjectMeta: childMeta(dobj), Immutable: ptr.To(true), Data: data, BinaryData: binary}
	cm.Name = dobj.Name + "-files-" + contentHash(data, binary)
	cm.Labels[appv1.LabelFiles] = "true"
	return cm
}

// MergeFilesConfigMap returns live with desired's labels, and whether that
// changed anything. Its content needs no comparing: it is immutable, and
// named by it.
func MergeFilesConfigMap(live, desired *corev1.ConfigMap) (*corev1.ConfigMap, bool) {
	if HasLabels(live.Labels, desired.Labels) {
		return live, false
	}
	out := live.DeepCopy()
	out.Labels = WithLabels(out.Labels, desired.Labels)
	return out, true
}

// filesVolume is the volume holding dobj's files, or nil without files.
func filesVolume(dobj *appv1.DeployObject) *corev1.Volume {
	files := dobj.Spec.Files
	if len(files) == 0 {
		return nil
	}
	var sources []corev1.VolumeProjection
	var inlineItems []corev1.KeyToPath
	for i := range files {
		f := &files[i]
		key := fileKey(i, f)
		item := func(k string) []corev1.KeyToPath {
			return []corev1.KeyToPath{{Key: k, Path: key, Mode: copyPtr(f.Mode)}}
		}
		switch {
		case inline(f):
			inlineItems = append(inlineItems, item(key)...)
		case f.ConfigMapKeyRef != nil:
			r := f.ConfigMapKeyRef
			sources = append(sources, corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: r.Name}, Items: item(r.Key), Optional: copyPtr(r.Optional)}})
		case f.SecretKeyRef != nil:
			r := f.SecretKeyRef
			sources = append(sources, corev1.VolumeProjection{Secret: &corev1.SecretProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: r.Name}, Items: item(r.Key), Optional: copyPtr(r.Optional)}})
		}
	}
	if len(inlineItems) > 0 {
		sources = append([]corev1.VolumeProjection{{ConfigMap: &corev1.ConfigMapProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: FilesConfigMapName(dobj)}, Items: inlineItems}}}, sources...)
	}
	return &corev1.Volume{Name: FilesVolumeName, VolumeSource: corev1.VolumeSource{
		Projected: &corev1.ProjectedVolumeSource{Sources: sources, DefaultMode: ptr.To(filesMode)},
	}}
}

// fileMounts are the mounts of dobj's files in the container named
// container: every file in the main container, and in a sidecar the files
// that name it.
func fileMounts(dobj *appv1.DeployObject, container string) []corev1.VolumeMount {
	var out []corev1.VolumeMount
	for i := range dobj.Spec.Files {
		f := &dobj.Spec.Files[i]
		if container != ContainerName && !slices.Contains(f.Sidecars, container) {
			continue
		}
		out = append(out, corev1.VolumeMount{Name: FilesVolumeName, MountPath: f.Path, SubPath: fileKey(i, f), ReadOnly: true})
	}
	return out
}

// OlderFilesConfigMaps are those of owned, the ConfigMaps of inline files
// dobj controls, that only ReplicaSets of an older pod template may still
// mount: not the current one (current, "" for none), not the one d's
// template mounts, and none at all while d's newest generation is not yet
// rolled out or a pod of an older template may still run (see
// OlderPodsGone; d is the Deployment as cached, and with none, nil,
// orphaned pods may still mount any). Which of them go is
// SupersededFilesConfigMaps's answer; the sync lists the ReplicaSets only
// when there is one.
func OlderFilesConfigMaps(dobj *appv1.DeployObject, owned []*corev1.ConfigMap, d *appsv1.Deployment, current string) []*corev1.ConfigMap {
	if d == nil || !OlderPodsGone(d) {
		return nil
	}
	var older []*corev1.ConfigMap
	for _, cm := range owned {
		if cm.Name != current && cm.Labels[appv1.LabelFiles] == "true" && metav1.IsControlledBy(cm, dobj) &&
			!mountsConfigMap(&d.Spec.Template, cm.Name) {
			older = append(older, cm)
		}
	}
	slices.SortFunc(older, func(a, b *corev1.ConfigMap) int { return cmp.Compare(a.Name, b.Name) })
	return older
}

// SupersededFilesConfigMaps are those of older (see OlderFilesConfigMaps)
// that no ReplicaSet of replicaSets mounts: the ReplicaSets that carry the
// Deployment's selector, as the API server holds them now. The Deployment
// keeps its ReplicaSets by revision, as many old ones as its
// revisionHistoryLimit, and a ConfigMap stays exactly as long as one of
// them mounts it, so that each kept ReplicaSet's pods can start. Its
// creation time says nothing: content A, then B, then A again is the
// ReplicaSet of A brought back as the newest revision, and B's is the one
// the history drops. A ReplicaSet the Deployment does not control
// (orphaned, or not adopted yet) counts too: its pods may run.
func SupersededFilesConfigMaps(older []*corev1.ConfigMap, replicaSets []*appsv1.ReplicaSet) []*corev1.ConfigMap {
	var superseded []*corev1.ConfigMap
	for _, cm := range older {
		if !slices.ContainsFunc(replicaSets, func(rs *appsv1.ReplicaSet) bool { return mountsConfigMap(&rs.Spec.Template, cm.Name) }) {
			superseded = append(superseded, cm)
		}
	}
	return superseded
}

// mountsConfigMap reports whether the pod template t projects the
// ConfigMap name into its files volume.
func mountsConfigMap(t *corev1.PodTemplateSpec, name string) bool {
	for _, v := range t.Spec.Volumes {
		if v.Name != FilesVolumeName || v.Projected == nil {
			continue
		}
		for _, s := range v.Projected.Sources {
			if s.ConfigMap != nil && s.ConfigMap.Name == name {
				return true
			}
		}
	}
	return false
}
