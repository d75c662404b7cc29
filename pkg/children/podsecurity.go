package children

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"k8s.io/utils/ptr"
)

// PodSecurityProfile is what --pod-security-profile fills into the pod
// template where the spec leaves security fields unset.
type PodSecurityProfile string

const (
	// ProfileNone leaves the pod template as the spec declares it.
	ProfileNone PodSecurityProfile = "none"
	// ProfileRestricted fills in what Pod Security "restricted" requires:
	// runAsNonRoot and a RuntimeDefault seccomp profile for the pod, and for
	// every container no privilege escalation and all capabilities dropped.
	ProfileRestricted PodSecurityProfile = "restricted"
)

// restrict fills in what Pod Security "restricted" requires wherever pod
// leaves it unset; whatever the spec set explicitly stays as it is, so a
// spec can still ask for less and be refused by the namespace's policy
// with a message that says why.
func restrict(pod *corev1.PodSpec) {
	if pod.SecurityContext == nil {
		pod.SecurityContext = &corev1.PodSecurityContext{}
	}
	sc := pod.SecurityContext
	if sc.RunAsNonRoot == nil {
		sc.RunAsNonRoot = ptr.To(true)
	}
	if sc.SeccompProfile == nil {
		sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}
	for _, cs := range [][]corev1.Container{pod.InitContainers, pod.Containers} {
		for i := range cs {
			if cs[i].SecurityContext == nil {
				cs[i].SecurityContext = &corev1.SecurityContext{}
			}
			csc := cs[i].SecurityContext
			if csc.AllowPrivilegeEscalation == nil {
				csc.AllowPrivilegeEscalation = ptr.To(false)
			}
			if csc.Capabilities == nil {
				csc.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
			}
		}
	}
}

// PodSecurityCheck finds what a pod template does that the profile does not
// allow. It is nil for ProfileNone.
type PodSecurityCheck func(*corev1.PodTemplateSpec) []string

// NewPodSecurityCheck returns the check of profile: for ProfileRestricted,
// Pod Security admission's own "restricted" policy at its latest version,
// so that the controller refuses exactly what the namespace's admission
// would refuse of the pods.
func NewPodSecurityCheck(profile PodSecurityProfile) (PodSecurityCheck, error) {
	if profile != ProfileRestricted {
		return nil, nil
	}
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		return nil, fmt.Errorf("building Pod Security's evaluator: %w", err)
	}
	restricted := psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}
	return func(template *corev1.PodTemplateSpec) []string {
		var violations []string
		for _, r := range evaluator.EvaluatePod(restricted, &template.ObjectMeta, &template.Spec) {
			if r.Allowed {
				continue
			}
			v := r.ForbiddenReason
			if r.ForbiddenDetail != "" {
				v += " (" + r.ForbiddenDetail + ")"
			}
			violations = append(violations, v)
		}
		return violations
	}, nil
}

// PodSecurityMessage says why a template is not applied: which fields it
// sets that the profile forbids, in Pod Security's words, and where those
// containers are declared.
func PodSecurityMessage(violations []string) string {
	return `the pod template sets what Pod Security "restricted" forbids, and --pod-security-profile=restricted keeps it from being applied: ` +
		strings.Join(violations, "; ") +
		` (container "app" is declared by spec.securityContext and spec.podSecurityContext, the others by spec.initContainers and spec.sidecars)`
}
