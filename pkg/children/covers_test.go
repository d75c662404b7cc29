package children_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"deployobject.dev/controller/pkg/children"
)

func TestCovers(t *testing.T) {
	probe := func(port intstr.IntOrString) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: port}}}
	}
	defaulted := probe(intstr.FromString("http"))
	defaulted.TimeoutSeconds, defaulted.PeriodSeconds, defaulted.HTTPGet.Scheme = 1, 10, corev1.URISchemeHTTP
	for _, tc := range []struct {
		name          string
		live, desired corev1.PodSpec
		want          bool
	}{
		{"unset fields may hold defaults",
			corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "a", ReadinessProbe: defaulted, TerminationMessagePath: "/dev/termination-log"}}, DNSPolicy: corev1.DNSClusterFirst},
			corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "a", ReadinessProbe: probe(intstr.FromString("http"))}}}, true},
		{"a set value differs",
			corev1.PodSpec{Containers: []corev1.Container{{Name: "app", ReadinessProbe: defaulted}}},
			corev1.PodSpec{Containers: []corev1.Container{{Name: "app", ReadinessProbe: probe(intstr.FromInt32(8080))}}}, false},
		{"a set pointer is missing",
			corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}},
			corev1.PodSpec{Containers: []corev1.Container{{Name: "app", ReadinessProbe: probe(intstr.FromInt32(8080))}}}, false},
		{"an empty emptyDir is a value",
			corev1.PodSpec{Volumes: []corev1.Volume{{Name: "tmp"}}},
			corev1.PodSpec{Volumes: []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}}, false},
		{"containers others add are kept, in any order",
			corev1.PodSpec{Containers: []corev1.Container{{Name: "mesh"}, {Name: "app", Image: "a"}}},
			corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "a"}}}, true},
		{"a missing named element",
			corev1.PodSpec{Volumes: []corev1.Volume{{Name: "a"}}},
			corev1.PodSpec{Volumes: []corev1.Volume{{Name: "a"}, {Name: "b"}}}, false},
		{"quantities compare by value",
			corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": resource.MustParse("0.5")}}}}},
			corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": resource.MustParse("500m")}}}}}, true},
		{"atomic lists match element by element",
			corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "a", Operator: corev1.TolerationOpExists}, {Key: "b"}}},
			corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "a"}}}, false},
		{"map keys others add are kept",
			corev1.PodSpec{NodeSelector: map[string]string{"zone": "a", "extra": "x"}},
			corev1.PodSpec{NodeSelector: map[string]string{"zone": "a"}}, true},
		{"explicit false is a value",
			corev1.PodSpec{AutomountServiceAccountToken: ptr.To(true)},
			corev1.PodSpec{AutomountServiceAccountToken: ptr.To(false)}, false},
		{"unnamed elements match by position",
			corev1.PodSpec{Containers: []corev1.Container{{Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: "TCP"}}}}},
			corev1.PodSpec{Containers: []corev1.Container{{Ports: []corev1.ContainerPort{{ContainerPort: 80}}}}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := children.Covers(tc.live, tc.desired); got != tc.want {
				t.Errorf("covers = %v, want %v", got, tc.want)
			}
		})
	}
}
