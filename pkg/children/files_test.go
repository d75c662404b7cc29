package children_test

import (
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/testobjects"
)

func TestDesiredFilesConfigMap(t *testing.T) {
	dobj := testobjects.NewDeployObject(testobjects.WithFiles)
	cm := children.DesiredFilesConfigMap(dobj)
	// Pinned: a change of how the name is computed would roll the pods of
	// every DeployObject with inline files on upgrade.
	if want := "web-files-beec9f2f5d1fa742"; cm.Name != want || children.FilesConfigMapName(dobj) != want {
		t.Errorf("name %q (FilesConfigMapName %q), want %q", cm.Name, children.FilesConfigMapName(dobj), want)
	}
	if !ptr.Deref(cm.Immutable, false) || cm.Labels[appv1.LabelFiles] != "true" || !children.HasLabels(cm.Labels, children.SelectorLabels(dobj)) || !metav1.IsControlledBy(cm, dobj) {
		t.Errorf("ConfigMap %+v: want it immutable, labelled and controlled by the DeployObject", cm.ObjectMeta)
	}
	wantData := map[string]string{"0-app.yaml": "level: info\n"}
	wantBinary := map[string][]byte{"1-logo.png": {0x89, 'P', 'N', 'G'}}
	if !equality.Semantic.DeepEqual(cm.Data, wantData) || !equality.Semantic.DeepEqual(cm.BinaryData, wantBinary) {
		t.Errorf("data %v, binaryData %v; want %v and %v", cm.Data, cm.BinaryData, wantData, wantBinary)
	}
	cm.BinaryData["1-logo.png"][0] = 0
	if dobj.Spec.Files[1].BinaryContent[0] != 0x89 {
		t.Error("the desired ConfigMap shares the spec's bytes")
	}

	for _, tc := range []struct {
		name    string
		mutate  func(*appv1.DeployObject)
		renamed bool
	}{
		{"a content changes", func(d *appv1.DeployObject) { d.Spec.Files[0].Content = ptr.To("level: debug\n") }, true},
		{"a byte changes", func(d *appv1.DeployObject) { d.Spec.Files[1].BinaryContent = []byte{0x89, 'P', 'N', 'H'} }, true},
		{"a path changes its name", func(d *appv1.DeployObject) { d.Spec.Files[0].Path = "/etc/app/config.yaml" }, true},
		{"text and bytes swap roles", func(d *appv1.DeployObject) {
			d.Spec.Files[0].Content, d.Spec.Files[0].BinaryContent = nil, []byte("level: info\n")
		}, true},
		{"a mode changes", func(d *appv1.DeployObject) { d.Spec.Files[0].Mode = ptr.To[int32](0o400) }, false},
		{"a referenced file changes", func(d *appv1.DeployObject) { d.Spec.Files[2].ConfigMapKeyRef.Key = "other.json" }, false},
		{"a sidecar stops mounting a file", func(d *appv1.DeployObject) { d.Spec.Files[1].Sidecars = nil }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := testobjects.NewDeployObject(testobjects.WithFiles)
			tc.mutate(changed)
			if renamed := children.FilesConfigMapName(changed) != cm.Name; renamed != tc.renamed {
				t.Errorf("renamed = %v, want %v", renamed, tc.renamed)
			}
		})
	}

	for name, files := range map[string][]appv1.File{
		"no files":        nil,
		"only references": {{Path: "/etc/app/creds", SecretKeyRef: &appv1.FileKeyRef{Name: "creds", Key: "password"}}},
	} {
		d := testobjects.NewDeployObject()
		d.Spec.Files = files
		if cm := children.DesiredFilesConfigMap(d); cm != nil || children.FilesConfigMapName(d) != "" {
			t.Errorf("%s: a ConfigMap %v is asked for", name, cm)
		}
	}
}

func TestDesiredPodTemplateFiles(t *testing.T) {
	dobj := testobjects.NewDeployObject(testobjects.WithFiles)
	dobj.Spec.Files = append(dobj.Spec.Files,
		appv1.File{Path: "/etc/tls/tls.key", SecretKeyRef: &appv1.FileKeyRef{Name: "web-tls", Key: "tls.key", Optional: ptr.To(true)}, Mode: ptr.To[int32](0o400)},
		appv1.File{Path: "/etc/app/overrides.json", ConfigMapKeyRef: &appv1.FileKeyRef{Name: "overrides", Key: "overrides.json", Optional: ptr.To(true)}})
	spec := children.DesiredDeployment(dobj, children.ProfileNone).Spec.Template.Spec
	want := corev1.Volume{Name: children.FilesVolumeName, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](0o644),
		Sources: []corev1.VolumeProjection{
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "web-files-beec9f2f5d1fa742"}, Items: []corev1.KeyToPath{
				{Key: "0-app.yaml", Path: "0-app.yaml"},
				{Key: "1-logo.png", Path: "1-logo.png", Mode: ptr.To[int32](0o600)},
			}}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "flags"}, Items: []corev1.KeyToPath{{Key: "flags.json", Path: "2-feature-flags.json"}}}},
			{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "web-tls"}, Items: []corev1.KeyToPath{{Key: "tls.key", Path: "3-tls.key", Mode: ptr.To[int32](0o400)}}, Optional: ptr.To(true)}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "overrides"}, Items: []corev1.KeyToPath{{Key: "overrides.json", Path: "4-overrides.json"}}, Optional: ptr.To(true)}},
		},
	}}}
	if got := spec.Volumes[len(spec.Volumes)-1]; !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("files volume (-want +got):\n%s", diff.Diff(want, got))
	}
	mount := func(path, key string) corev1.VolumeMount {
		return corev1.VolumeMount{Name: children.FilesVolumeName, MountPath: path, SubPath: key, ReadOnly: true}
	}
	wantMain := []corev1.VolumeMount{mount("/etc/app/app.yaml", "0-app.yaml"), mount("/etc/app/logo.png", "1-logo.png"), mount("/etc/app/feature-flags.json", "2-feature-flags.json"), mount("/etc/tls/tls.key", "3-tls.key"), mount("/etc/app/overrides.json", "4-overrides.json")}
	if got := spec.Containers[0].VolumeMounts; !equality.Semantic.DeepEqual(got, wantMain) {
		t.Errorf("main container mounts (-want +got):\n%s", diff.Diff(wantMain, got))
	}
	proxy := spec.InitContainers[slices.IndexFunc(spec.InitContainers, func(c corev1.Container) bool { return c.Name == "proxy" })]
	if want := []corev1.VolumeMount{mount("/etc/app/logo.png", "1-logo.png")}; !equality.Semantic.DeepEqual(proxy.VolumeMounts, want) {
		t.Errorf("sidecar mounts %+v, want %+v", proxy.VolumeMounts, want)
	}
	if dobj.Spec.Sidecars[len(dobj.Spec.Sidecars)-1].VolumeMounts != nil {
		t.Error("the sidecar's mounts were added to the spec")
	}
}

// TestFilesVolumeWithoutInlineFiles: files that all come from keys of
// ConfigMaps and Secrets project those keys alone: there is no ConfigMap of
// inline files to mount, and the volume names none.
func TestFilesVolumeWithoutInlineFiles(t *testing.T) {
	dobj := testobjects.NewDeployObject(func(d *appv1.DeployObject) {
		d.Spec.Files = []appv1.File{{Path: "/etc/app/feature-flags.json", ConfigMapKeyRef: &appv1.FileKeyRef{Name: "flags", Key: "flags.json"}}}
	})
	spec := children.DesiredDeployment(dobj, children.ProfileNone).Spec.Template.Spec
	want := corev1.Volume{Name: children.FilesVolumeName, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](0o644),
		Sources: []corev1.VolumeProjection{
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "flags"}, Items: []corev1.KeyToPath{{Key: "flags.json", Path: "0-feature-flags.json"}}}},
		},
	}}}
	if got := spec.Volumes[len(spec.Volumes)-1]; !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("files volume (-want +got):\n%s", diff.Diff(want, got))
	}
}

// TestSupersededFilesConfigMaps: the ConfigMaps of inline files that go are
// exactly those that neither the current spec, nor the Deployment's pod
// template, nor a ReplicaSet of it mounts; none goes while the Deployment
// has not rolled out its newest generation or older pods still run, nor
// without a Deployment. The names are given, in the order of deletion.
func TestSupersededFilesConfigMaps(t *testing.T) {
	dobj := testobjects.NewDeployObject(testobjects.WithFiles)
	dobj.Spec.RevisionHistoryLimit = ptr.To[int32](1)
	current := children.FilesConfigMapName(dobj)
	at := func(name string, minute int) *corev1.ConfigMap {
		cm := children.DesiredFilesConfigMap(dobj)
		cm.Name, cm.UID = name, types.UID("uid-"+name)
		cm.CreationTimestamp = metav1.NewTime(time.Date(2026, 11, 26, 9, minute, 0, 0, time.UTC))
		return cm
	}
	foreign := at("web-files-foreign", 0)
	foreign.OwnerReferences[0].UID = "someone-else"
	unlabelled := at("web-files-unlabelled", 0)
	delete(unlabelled.Labels, appv1.LabelFiles)
	owned := []*corev1.ConfigMap{at("web-files-c", 3), at(current, 4), at("web-files-a", 1), foreign, at("web-files-b", 2), unlabelled}
	mounting := func(t *corev1.PodTemplateSpec, filesConfigMap string) {
		for i := range t.Spec.Volumes {
			if v := &t.Spec.Volumes[i]; v.Name == children.FilesVolumeName {
				v.Projected.Sources[0].ConfigMap.Name = filesConfigMap
			}
		}
	}
	deployment := func(filesConfigMap string, st appsv1.DeploymentStatus) *appsv1.Deployment {
		d := testobjects.LiveDeployment(dobj)
		mounting(&d.Spec.Template, filesConfigMap)
		d.Status = st
		return d
	}
	replicaSet := func(revision int, filesConfigMap string) *appsv1.ReplicaSet {
		rs := testobjects.LiveReplicaSet(dobj, revision)
		mounting(&rs.Spec.Template, filesConfigMap)
		return rs
	}
	orphaned := replicaSet(2, "web-files-b")
	orphaned.OwnerReferences = nil
	done := appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 3, UpdatedReplicas: 3}
	unobserved := deployment(current, done)
	unobserved.Generation = 2
	for _, tc := range []struct {
		name        string
		d           *appsv1.Deployment
		replicaSets []*appsv1.ReplicaSet
		want        []string
	}{
		// Content A (minute 1), B (2), A again, then C (current): the
		// Deployment brought A's ReplicaSet back as revision 3, and with
		// revisionHistoryLimit 1 dropped B's, the older by revision though
		// the newer by creation.
		{"A, B, A again, then C: the ReplicaSet kept mounts A", deployment(current, done),
			[]*appsv1.ReplicaSet{replicaSet(3, "web-files-a"), replicaSet(4, current)}, []string{"web-files-b", "web-files-c"}},
		{"every older one mounted by a kept ReplicaSet", deployment(current, done),
			[]*appsv1.ReplicaSet{replicaSet(1, "web-files-a"), replicaSet(2, "web-files-b"), replicaSet(3, "web-files-c"), replicaSet(4, current)}, nil},
		{"only the current ReplicaSet left", deployment(current, done), []*appsv1.ReplicaSet{replicaSet(4, current)}, []string{"web-files-a", "web-files-b", "web-files-c"}},
		{"no ReplicaSet at all", deployment(current, done), nil, []string{"web-files-a", "web-files-b", "web-files-c"}},
		{"a ReplicaSet the Deployment does not control keeps its own", deployment(current, done),
			[]*appsv1.ReplicaSet{orphaned, replicaSet(4, current)}, []string{"web-files-a", "web-files-c"}},
		{"the Deployment not updated yet mounts an older one", deployment("web-files-b", done), nil, []string{"web-files-a", "web-files-c"}},
		{"rolling out", deployment(current, appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 4, UpdatedReplicas: 2}), nil, nil},
		{"older pods terminating", deployment(current, appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 3, UpdatedReplicas: 3, TerminatingReplicas: ptr.To[int32](2)}), nil, nil},
		// The Deployment controller has not seen the newest generation: the
		// ReplicaSet of its template may not exist yet.
		{"the newest generation not observed yet", unobserved, nil, nil},
		{"no Deployment in the cache", nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, cm := range children.SupersededFilesConfigMaps(children.OlderFilesConfigMaps(dobj, owned, tc.d, current), tc.replicaSets) {
				got = append(got, cm.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("superseded = %v, want %v", got, tc.want)
			}
		})
	}
}
