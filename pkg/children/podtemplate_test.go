package children_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/testobjects"
)

func TestDesiredPodTemplate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mutate  func(*appv1.DeployObject)
		profile children.PodSecurityProfile
		check   func(*testing.T, corev1.PodTemplateSpec)
	}{
		{"minimal spec sets no pod fields", func(*appv1.DeployObject) {}, children.ProfileNone, func(t *testing.T, p corev1.PodTemplateSpec) {
			if p.Spec.SecurityContext != nil || p.Spec.InitContainers != nil || p.Spec.Volumes != nil || p.Annotations != nil {
				t.Errorf("pod spec = %+v, want only the main container", p.Spec)
			}
		}},
		{"init containers first, then sidecars restarting always", func(d *appv1.DeployObject) {
			d.Spec.InitContainers = []corev1.Container{{Name: "migrate", Image: "m"}}
			d.Spec.Sidecars = []corev1.Container{{Name: "proxy", Image: "p"}}
		}, children.ProfileNone, func(t *testing.T, p corev1.PodTemplateSpec) {
			ic := p.Spec.InitContainers
			if len(ic) != 2 || ic[0].Name != "migrate" || ic[0].RestartPolicy != nil || ic[1].Name != "proxy" || ptr.Deref(ic[1].RestartPolicy, "") != corev1.ContainerRestartPolicyAlways {
				t.Errorf("init containers = %+v", ic)
			}
		}},
		{"podMetadata cannot override the selector labels", func(d *appv1.DeployObject) {
			d.Spec.PodMetadata = &appv1.PodMetadata{Labels: map[string]string{"team": "a", children.NameLabel: "other"}, Annotations: map[string]string{"prometheus.io/scrape": "true"}}
		}, children.ProfileNone, func(t *testing.T, p corev1.PodTemplateSpec) {
			if p.Labels["team"] != "a" || p.Labels[children.NameLabel] != "web" || p.Annotations["prometheus.io/scrape"] != "true" {
				t.Errorf("metadata = %v %v", p.Labels, p.Annotations)
			}
		}},
		{"restricted fills what the spec leaves unset", func(d *appv1.DeployObject) {
			d.Spec.Sidecars = []corev1.Container{{Name: "proxy", Image: "p"}}
		}, children.ProfileRestricted, func(t *testing.T, p corev1.PodTemplateSpec) {
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
		}, children.ProfileRestricted, func(t *testing.T, p corev1.PodTemplateSpec) {
			if ptr.Deref(p.Spec.SecurityContext.RunAsNonRoot, true) {
				t.Error("runAsNonRoot: false from the spec was overridden")
			}
			if c := p.Spec.Containers[0].SecurityContext; len(c.Capabilities.Add) != 1 || ptr.Deref(c.AllowPrivilegeEscalation, true) {
				t.Errorf("container securityContext = %+v", c)
			}
		}},
		{"the pod details reach the template, copied", testobjects.WithEveryPodField, children.ProfileNone, func(t *testing.T, p corev1.PodTemplateSpec) {
			ps, c := p.Spec, p.Spec.Containers[0]
			if c.WorkingDir != "/srv" || len(c.ResizePolicy) != 2 || c.ResizePolicy[1].RestartPolicy != corev1.RestartContainer {
				t.Errorf("main container workingDir %q, resizePolicy %+v", c.WorkingDir, c.ResizePolicy)
			}
			if ps.Resources == nil || ps.Resources.Requests.Cpu().String() != "200m" || ptr.Deref(ps.RuntimeClassName, "") != "gvisor" ||
				len(ps.HostAliases) != 1 || ps.DNSPolicy != corev1.DNSNone || ps.DNSConfig == nil || len(ps.DNSConfig.Nameservers) != 1 ||
				!ptr.Deref(ps.ShareProcessNamespace, false) || ptr.Deref(ps.EnableServiceLinks, true) {
				t.Errorf("pod spec = %+v", ps)
			}
			// Changed here, they must not change the DeployObject (checked below).
			ps.HostAliases[0].Hostnames[0] = "changed"
			ps.DNSConfig.Nameservers[0] = "changed"
			*ps.DNSConfig.Options[0].Value = "changed"
			c.ResizePolicy[0].RestartPolicy = "changed"
			ps.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1")
		}},
		{"the spec is copied, not shared", func(d *appv1.DeployObject) {
			d.Spec.Tolerations = []corev1.Toleration{{Key: "k", TolerationSeconds: ptr.To[int64](5)}}
		}, children.ProfileNone, func(_ *testing.T, p corev1.PodTemplateSpec) {
			*p.Spec.Tolerations[0].TolerationSeconds = 99
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject(tc.mutate)
			before := dobj.DeepCopy()
			tc.check(t, children.DesiredPodTemplate(dobj, tc.profile))
			if !testobjects.EqualObjects(dobj, before) {
				t.Error("building the template changed the DeployObject")
			}
		})
	}
}

// TestSlimDeploymentKeepsThePodSurface: the cache keeps every field the
// spec can set, so a Deployment in line stays in line once slimmed, and one
// that drifts in any of them still drifts.
func TestSlimDeploymentKeepsThePodSurface(t *testing.T) {
	dobj := testobjects.NewDeployObject(testobjects.WithEveryPodField)
	desired := children.DesiredDeployment(dobj, children.ProfileRestricted)
	if slim := children.SlimDeployment(desired.DeepCopy()); !children.DeploymentInSync(slim, desired) {
		t.Errorf("a Deployment in line is out of line once slimmed:\n%s", diff.Diff(desired.Spec, slim.Spec))
	}
	drifted := desired.DeepCopy()
	drifted.Spec.Template.Spec.DeprecatedServiceAccount = "other"
	if children.DeploymentInSync(children.SlimDeployment(drifted), desired) {
		t.Error("a drifted serviceAccount is in line once slimmed")
	}

	// The cache drops the default dnsPolicy, ClusterFirst: a spec that
	// asks for it is in line with a Deployment that has it, and one that
	// asks for another policy is not.
	for _, tc := range []struct {
		spec, live corev1.DNSPolicy
		inSync     bool
	}{
		{corev1.DNSClusterFirst, corev1.DNSClusterFirst, true},
		{"", corev1.DNSClusterFirst, true},
		{corev1.DNSDefault, corev1.DNSClusterFirst, false},
		{corev1.DNSClusterFirst, corev1.DNSDefault, false},
		{corev1.DNSDefault, corev1.DNSDefault, true},
	} {
		dobj := testobjects.NewDeployObject()
		dobj.Spec.DNSPolicy = tc.spec
		desired := children.DesiredDeployment(dobj, children.ProfileNone)
		live := testobjects.LiveDeployment(testobjects.NewDeployObject())
		live.Spec.Template.Spec.DNSPolicy = tc.live
		slim := children.SlimDeployment(live.DeepCopy())
		if got := children.DeploymentInSync(slim, desired); got != tc.inSync {
			t.Errorf("spec dnsPolicy %q, live %q, cached: in line = %v, want %v", tc.spec, tc.live, got, tc.inSync)
		}
		if tc.live == corev1.DNSClusterFirst && slim.Spec.Template.Spec.DNSPolicy != "" {
			t.Errorf("the cache keeps the default dnsPolicy")
		}
	}
}
