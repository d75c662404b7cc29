package children_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/testobjects"
)

// TestPodSecurityCheck: what the restricted profile fills in passes Pod
// Security "restricted"; what a spec explicitly sets against it, in any
// container or the pod, is found and named.
func TestPodSecurityCheck(t *testing.T) {
	check, err := children.NewPodSecurityCheck(children.ProfileRestricted)
	if err != nil {
		t.Fatal(err)
	}
	if none, err := children.NewPodSecurityCheck(children.ProfileNone); err != nil || none != nil {
		t.Fatalf("profile none: check %v, err %v; want neither", none != nil, err)
	}
	sidecar := func(sc *corev1.SecurityContext) func(*appv1.DeployObject) {
		return func(d *appv1.DeployObject) {
			d.Spec.Sidecars = []corev1.Container{{Name: "proxy", Image: "envoy:1", SecurityContext: sc}}
		}
	}
	tests := []struct {
		name   string
		mutate func(*appv1.DeployObject)
		want   string // "" when allowed
	}{
		{"nothing set", func(*appv1.DeployObject) {}, ""},
		{"a sidecar and an init container with nothing set", func(d *appv1.DeployObject) {
			d.Spec.Sidecars = []corev1.Container{{Name: "proxy", Image: "envoy:1"}}
			d.Spec.InitContainers = []corev1.Container{{Name: "migrate", Image: "migrate:1"}}
		}, ""},
		{"NET_BIND_SERVICE added, ALL dropped", func(d *appv1.DeployObject) {
			d.Spec.SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}, Drop: []corev1.Capability{"ALL"}}}
		}, ""},
		{"a non-root user", func(d *appv1.DeployObject) {
			d.Spec.PodSecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)}
		}, ""},
		{"privileged main container", func(d *appv1.DeployObject) {
			d.Spec.SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		}, `container "app" must not set securityContext.privileged=true`},
		{"privilege escalation in an init container", func(d *appv1.DeployObject) {
			d.Spec.InitContainers = []corev1.Container{{Name: "migrate", Image: "migrate:1", SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(true)}}}
		}, `container "migrate" must set securityContext.allowPrivilegeEscalation=false`},
		{"a capability added by a sidecar", sidecar(&corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}, Drop: []corev1.Capability{"ALL"}}}),
			`container "proxy" must not include "NET_ADMIN" in securityContext.capabilities.add`},
		{"capabilities without dropping ALL", sidecar(&corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}}}),
			`container "proxy" must set securityContext.capabilities.drop=["ALL"]`},
		{"root user in a sidecar", sidecar(&corev1.SecurityContext{RunAsUser: ptr.To[int64](0)}), `container "proxy" must not set runAsUser=0`},
		{"runAsNonRoot false for the pod", func(d *appv1.DeployObject) {
			d.Spec.PodSecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(false)}
		}, "pod must not set securityContext.runAsNonRoot=false"},
		{"a host port", func(d *appv1.DeployObject) {
			d.Spec.Sidecars = []corev1.Container{{Name: "proxy", Image: "envoy:1", Ports: []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}}}}
		}, "hostPort"},
		{"unconfined seccomp", sidecar(&corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}}),
			`container "proxy" must not set securityContext.seccompProfile.type to "Unconfined"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject()
			tt.mutate(dobj)
			d := children.DesiredDeployment(dobj, children.ProfileRestricted)
			got := check(&d.Spec.Template)
			switch {
			case tt.want == "" && len(got) > 0:
				t.Fatalf("violations %q, want none", got)
			case tt.want != "" && !strings.Contains(strings.Join(got, "; "), tt.want):
				t.Fatalf("violations %q, want one saying %q", got, tt.want)
			}
		})
	}
}
