package children_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/identity"
	"deployobject.dev/controller/pkg/testobjects"
)

func TestDesiredDeployment(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*appv1.DeployObject)
		check  func(t *testing.T, c corev1.Container, replicas int32)
	}{
		{"replicas unset defaults to 1", func(d *appv1.DeployObject) { d.Spec.Replicas = nil }, func(t *testing.T, _ corev1.Container, r int32) {
			if r != 1 {
				t.Errorf("replicas = %d, want 1", r)
			}
		}},
		{"zero replicas kept", func(d *appv1.DeployObject) { d.Spec.Replicas = ptr.To[int32](0) }, func(t *testing.T, _ corev1.Container, r int32) {
			if r != 0 {
				t.Errorf("replicas = %d, want 0", r)
			}
		}},
		{"fieldRef apiVersion left for the API server to default", func(*appv1.DeployObject) {}, func(t *testing.T, c corev1.Container, _ int32) {
			if got := c.Env[1].ValueFrom.FieldRef.APIVersion; got != "" {
				t.Errorf("fieldRef.apiVersion = %q, want it unset as in the spec: covers ignores what the spec leaves unset", got)
			}
		}},
		{"port protocol defaults to TCP", func(d *appv1.DeployObject) { d.Spec.Ports[0].Protocol = "" }, func(t *testing.T, c corev1.Container, _ int32) {
			if c.Ports[0].Protocol != corev1.ProtocolTCP || c.Ports[0].ContainerPort != 8080 || c.Ports[0].Name != "http" {
				t.Errorf("port = %+v", c.Ports[0])
			}
		}},
		{"command, args, image and resources copied", func(*appv1.DeployObject) {}, func(t *testing.T, c corev1.Container, _ int32) {
			if c.Name != children.ContainerName || c.Image != "nginx:1.27" || c.Command[0] != "nginx" || len(c.Args) != 2 || c.Resources.Requests.Cpu().MilliValue() != 100 {
				t.Errorf("container = %+v", c)
			}
		}},
		{"no ports, no container ports", func(d *appv1.DeployObject) { d.Spec.Ports = nil }, func(t *testing.T, c corev1.Container, _ int32) {
			if c.Ports != nil {
				t.Errorf("ports = %v, want none", c.Ports)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject(tc.mutate)
			d := children.DesiredDeployment(dobj, children.ProfileNone)
			if d.Name != "web" || d.Namespace != "apps" {
				t.Errorf("name = %s/%s", d.Namespace, d.Name)
			}
			if ref := metav1.GetControllerOf(d); ref == nil || ref.UID != dobj.UID || ref.Kind != "DeployObject" || !*ref.BlockOwnerDeletion {
				t.Errorf("controller ref = %+v", ref)
			}
			wantLabels := map[string]string{identity.ManagedByLabel: identity.ManagedByValue, children.NameLabel: "web"}
			if !testobjects.EqualObjects(d.Labels, wantLabels) || !testobjects.EqualObjects(d.Spec.Template.Labels, wantLabels) ||
				!testobjects.EqualObjects(d.Spec.Selector.MatchLabels, map[string]string{children.NameLabel: "web"}) {
				t.Errorf("labels = %v selector = %v template = %v", d.Labels, d.Spec.Selector, d.Spec.Template.Labels)
			}
			if n := len(d.Spec.Template.Spec.Containers); n != 1 {
				t.Fatalf("%d containers, want 1", n)
			}
			tc.check(t, d.Spec.Template.Spec.Containers[0], *d.Spec.Replicas)
		})
	}
}

func TestDesiredDeploymentDoesNotAlias(t *testing.T) {
	dobj := testobjects.NewDeployObject()
	d := children.DesiredDeployment(dobj, children.ProfileNone)
	d.Spec.Template.Spec.Containers[0].Env[1].ValueFrom.FieldRef.FieldPath = "changed"
	d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("1Gi")
	if dobj.Spec.Env[1].ValueFrom.FieldRef.FieldPath != "metadata.name" || dobj.Spec.Resources.Limits.Memory().String() != "128Mi" {
		t.Error("changing the built Deployment changed the DeployObject in the cache")
	}
}

// TestPodSpecHashLeavesOutTheCanary: spec.canary says how a new pod
// template rolls out, not what it is, so adding or changing it must not
// count as a change of the template the spec asks for (it would start a
// canary, or a rollout, by itself). The image row shows the hash does see
// the template.
func TestPodSpecHashLeavesOutTheCanary(t *testing.T) {
	podSpecHash := func(mutate func(*appv1.DeployObject)) string {
		dobj := testobjects.NewDeployObject(mutate)
		desired, _ := testobjects.MustStamp(dobj)
		if err := children.StampTemplateHashes(desired, &dobj.Spec); err != nil {
			t.Fatal(err)
		}
		return desired.Annotations[appv1.AnnotationPodSpecHash]
	}
	base := podSpecHash(func(*appv1.DeployObject) {})
	for _, tc := range []struct {
		name   string
		mutate func(*appv1.DeployObject)
		same   bool
	}{
		{"canary added", func(d *appv1.DeployObject) {
			d.Spec.Canary = &appv1.Canary{Steps: []appv1.CanaryStep{{SetWeight: ptr.To[int32](20)}}}
		}, true},
		{"canary with other steps", func(d *appv1.DeployObject) {
			d.Spec.Canary = &appv1.Canary{Steps: []appv1.CanaryStep{{SetWeight: ptr.To[int32](50)}, {Pause: &appv1.CanaryPause{}}}}
		}, true},
		{"image changed", func(d *appv1.DeployObject) { d.Spec.Image = "nginx:2" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := podSpecHash(tc.mutate); (got == base) != tc.same {
				t.Errorf("pod-spec-hash %q, without the change %q: same = %t, want %t", got, base, got == base, tc.same)
			}
		})
	}
}

// TestStampTemplateHashes: the Deployment carries the hash of what the
// spec asks of the pod template and that of the template itself: neither
// follows the replicas, both follow the image. A Deployment that carries
// them already keeps them, whatever the spec.
func TestStampTemplateHashes(t *testing.T) {
	stamp := func(dobj *appv1.DeployObject) *appsv1.Deployment {
		d, _, err := children.StampedDeployment(children.DesiredDeployment(dobj, children.ProfileNone))
		if err == nil {
			err = children.StampTemplateHashes(d, &dobj.Spec)
		}
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	hashes := []string{appv1.AnnotationPodSpecHash, appv1.AnnotationTemplateHash}
	base := stamp(testobjects.NewDeployObject()).Annotations
	scaled := stamp(testobjects.NewDeployObject(func(d *appv1.DeployObject) { d.Spec.Replicas = ptr.To[int32](5) })).Annotations
	image := stamp(testobjects.NewDeployObject(func(d *appv1.DeployObject) { d.Spec.Image = "nginx:1.28" })).Annotations
	for _, a := range hashes {
		if base[a] == "" || scaled[a] != base[a] || image[a] == base[a] {
			t.Errorf("%s: %q, with 5 replicas %q (want the same), with another image %q (want another)", a, base[a], scaled[a], image[a])
		}
	}

	d := stamp(testobjects.NewDeployObject())
	if err := children.StampTemplateHashes(d, &testobjects.NewDeployObject(func(d *appv1.DeployObject) { d.Spec.Image = "nginx:1.28" }).Spec); err != nil {
		t.Fatal(err)
	}
	for _, a := range hashes {
		if d.Annotations[a] != base[a] {
			t.Errorf("stamped again: %s = %q, want %q kept", a, d.Annotations[a], base[a])
		}
	}
}

// patches records the patches ApplyDeployment sends and answers each with
// the Deployment as it was.
type patches struct {
	live *appsv1.Deployment
	sent [][]byte
}

func (p *patches) Patch(_ context.Context, _ string, _ types.PatchType, data []byte, _ metav1.PatchOptions, _ ...string) (*appsv1.Deployment, error) {
	p.sent = append(p.sent, data)
	return p.live, nil
}

func (p *patches) Update(context.Context, *appsv1.Deployment, metav1.UpdateOptions) (*appsv1.Deployment, error) {
	return nil, errors.New("no update expected")
}

// TestApplyDeploymentBody: the apply request carries the fields the
// controller sets and the live resourceVersion, without the nulls, status
// and empty structs a typed Deployment writes for fields it does not set;
// an empty emptyDir is a value and stays.
func TestApplyDeploymentBody(t *testing.T) {
	desired := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps"},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}},
			Volumes:    []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		}}},
	}
	live := desired.DeepCopy()
	live.ResourceVersion = "20"
	client := &patches{live: live}
	if _, err := children.ApplyDeployment(context.Background(), client, live, desired); err != nil {
		t.Fatal(err)
	}
	if len(client.sent) != 1 {
		t.Fatalf("%d patches sent, want the apply alone", len(client.sent))
	}
	const want = `{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": {"name": "web", "namespace": "apps", "resourceVersion": "20"},
		"spec": {"template": {"spec": {
			"containers": [{"name": "app", "image": "nginx:1.27"}],
			"volumes": [{"name": "scratch", "emptyDir": {}}]}}}}`
	var got, wanted map[string]any
	if err := json.Unmarshal(client.sent[0], &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &wanted); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, wanted) {
		t.Errorf("apply body %s, want %s", client.sent[0], want)
	}
}

// TestHeldPatch: while the template is held, only the replicas follow the
// spec, and a promotion's pause is taken back only when asked to.
func TestHeldPatch(t *testing.T) {
	deployment := func(replicas *int32, paused bool) *appsv1.Deployment {
		return &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: replicas, Paused: paused}}
	}
	for _, tc := range []struct {
		name          string
		live, desired *appsv1.Deployment
		resume        bool
		want          string
	}{
		{"the same replicas", deployment(ptr.To[int32](3), false), deployment(ptr.To[int32](3), false), false, ""},
		{"scaled", deployment(ptr.To[int32](3), false), deployment(ptr.To[int32](5), false), false, `{"spec":{"replicas":5}}`},
		{"live without replicas", deployment(nil, false), deployment(ptr.To[int32](2), false), false, `{"spec":{"replicas":2}}`},
		{"desired without replicas", deployment(ptr.To[int32](3), false), deployment(nil, false), false, ""},
		{"paused, not resumed", deployment(ptr.To[int32](3), true), deployment(ptr.To[int32](3), false), false, ""},
		{"paused, resumed", deployment(ptr.To[int32](3), true), deployment(ptr.To[int32](3), false), true, `{"spec":{"paused":null}}`},
		{"resumed and scaled", deployment(ptr.To[int32](3), true), deployment(ptr.To[int32](4), false), true, `{"spec":{"replicas":4,"paused":null}}`},
		{"resume of a running Deployment", deployment(ptr.To[int32](3), false), deployment(ptr.To[int32](3), false), true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(children.HeldPatch(tc.live, tc.desired, tc.resume)); got != tc.want {
				t.Errorf("HeldPatch = %q, want %q", got, tc.want)
			}
		})
	}
}
