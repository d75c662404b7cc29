package children_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
