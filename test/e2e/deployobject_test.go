//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/test/cases"
)

const (
	managedBy = "app.kubernetes.io/managed-by"
	timeout   = 60 * time.Second
)

var ctx = context.Background()

func newDO(ns, name string, mutate ...func(*appv1.DeployObject)) *appv1.DeployObject {
	d := &appv1.DeployObject{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appv1.DeployObjectSpec{
			Image:    "nginx:1.27",
			Replicas: ptr.To[int32](2),
			Env:      []corev1.EnvVar{{Name: "MODE", Value: "prod"}},
			Ports:    []appv1.Port{{Name: "http", ContainerPort: 8080, ServicePort: ptr.To[int32](80)}},
		},
	}
	if _, own := ownNamespaces.Load(ns); own {
		d.Labels = map[string]string{ownControllerLabel: "true"}
	}
	for _, m := range mutate {
		m(d)
	}
	return d
}

func create(t *testing.T, d *appv1.DeployObject) *appv1.DeployObject {
	t.Helper()
	out, err := env.client.AppV1().DeployObjects(d.Namespace).Create(ctx, d, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating DeployObject %s: %v", d.Name, err)
	}
	return out
}

func getDO(t *testing.T, ns, name string) *appv1.DeployObject {
	t.Helper()
	d, err := env.client.AppV1().DeployObjects(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading DeployObject %s: %v", name, err)
	}
	return d
}

// updateDO applies mutate to the latest DeployObject, retrying on conflicts.
func updateDO(t *testing.T, ns, name string, mutate func(*appv1.DeployObject)) {
	t.Helper()
	for i := 0; ; i++ {
		d := getDO(t, ns, name)
		mutate(d)
		_, err := env.client.AppV1().DeployObjects(ns).Update(ctx, d, metav1.UpdateOptions{})
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) || i > 10 {
			t.Fatalf("updating DeployObject %s: %v", name, err)
		}
	}
}

func readyState(d *appv1.DeployObject) (bool, string) {
	c := meta.FindStatusCondition(d.Status.Conditions, appv1.ConditionReady)
	if c == nil {
		return false, fmt.Sprintf("no Ready condition (observedGeneration %d of %d)", d.Status.ObservedGeneration, d.Generation)
	}
	ok := c.Status == metav1.ConditionTrue && d.Status.ObservedGeneration == d.Generation && c.ObservedGeneration == d.Generation
	return ok, fmt.Sprintf("Ready=%s %s %q, observedGeneration %d of %d", c.Status, c.Reason, c.Message, d.Status.ObservedGeneration, d.Generation)
}

// waitReady waits for Ready=True at the current generation.
func waitReady(t *testing.T, ns, name string) *appv1.DeployObject {
	t.Helper()
	var d *appv1.DeployObject
	eventually(t, timeout, "DeployObject "+name+" Ready", func() (bool, string, error) {
		var err error
		d, err = env.client.AppV1().DeployObjects(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		ok, state := readyState(d)
		return ok, state, nil
	})
	return d
}

// waitReason waits until Ready has the given status and reason.
func waitReason(t *testing.T, ns, name string, status metav1.ConditionStatus, reason string) *metav1.Condition {
	t.Helper()
	var cond *metav1.Condition
	eventually(t, timeout, fmt.Sprintf("Ready=%s/%s on %s", status, reason, name), func() (bool, string, error) {
		d, err := env.client.AppV1().DeployObjects(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		cond = meta.FindStatusCondition(d.Status.Conditions, appv1.ConditionReady)
		_, state := readyState(d)
		return cond != nil && cond.Status == status && cond.Reason == reason, state, nil
	})
	return cond
}

func getDeployment(t *testing.T, ns, name string) *appsv1.Deployment {
	t.Helper()
	d, err := env.kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading Deployment %s: %v", name, err)
	}
	return d
}

func getService(t *testing.T, ns, name string) *corev1.Service {
	t.Helper()
	s, err := env.kube.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading Service %s: %v", name, err)
	}
	return s
}

func controlledBy(obj metav1.Object, d *appv1.DeployObject) bool {
	ref := metav1.GetControllerOf(obj)
	return ref != nil && ref.UID == d.UID && ref.Kind == "DeployObject" && ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion
}

// TestCRDAppliesClientSide: `kubectl apply -f crd/`, as a newcomer types
// it, is accepted by the API server. Client-side apply copies the CRD into
// its last-applied-configuration annotation, which holds at most 256 KiB;
// the dry run goes through the API server's validation without changing
// the CRD the suite installed.
func TestCRDAppliesClientSide(t *testing.T) {
	t.Parallel()
	if out, err := kubectl("apply", "--dry-run=server", "-f", filepath.Join(env.repoRoot, "crd")); err != nil {
		t.Fatalf("kubectl apply -f crd/: %v\n%s", err, out)
	}
}

func TestCreateReconcilesToReady(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	create(t, newDO(ns, "web"))
	d := waitReady(t, ns, "web")

	dep := getDeployment(t, ns, "web")
	svc := getService(t, ns, "web")
	if !controlledBy(dep, d) || !controlledBy(svc, d) {
		t.Errorf("children are not controlled by the DeployObject: %v / %v", dep.OwnerReferences, svc.OwnerReferences)
	}
	if dep.Labels[managedBy] != "deployobject-controller" || svc.Labels[managedBy] != "deployobject-controller" {
		t.Errorf("children lack the managed-by label: %v / %v", dep.Labels, svc.Labels)
	}
	if d.Status.Replicas != 2 || d.Status.ReadyReplicas != 2 || d.Status.AvailableReplicas != 2 || d.Status.UpdatedReplicas != 2 {
		t.Errorf("status counts = %+v, want 2 everywhere", d.Status)
	}
	if d.Status.Selector != "app.deployobject.dev/name=web" {
		t.Errorf("status.selector = %q", d.Status.Selector)
	}
	pods, err := env.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: d.Status.Selector})
	if err != nil {
		t.Fatal(err)
	}
	running := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != "" {
			running++
		}
	}
	if running != 2 {
		t.Errorf("%d pods Running on nodes, want 2", running)
	}
	if svc.Spec.Ports[0].Port != 80 || svc.Spec.Ports[0].TargetPort.IntValue() != 8080 {
		t.Errorf("Service ports = %+v", svc.Spec.Ports)
	}
}

func TestSpecUpdatesRollOutAndKeepAllocations(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	create(t, newDO(ns, "web", func(d *appv1.DeployObject) { d.Spec.ServiceType = appv1.ServiceTypeNodePort }))
	waitReady(t, ns, "web")
	before := getService(t, ns, "web")

	updateDO(t, ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Image = "nginx:1.28"
		d.Spec.Env = append(d.Spec.Env, corev1.EnvVar{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}})
		d.Spec.Replicas = ptr.To[int32](3)
		d.Spec.Ports = append(d.Spec.Ports, appv1.Port{Name: "metrics", ContainerPort: 9090})
	})
	d := waitReady(t, ns, "web")
	if d.Status.AvailableReplicas != 3 || d.Status.UpdatedReplicas != 3 {
		t.Errorf("status = %+v, want 3 updated and available", d.Status)
	}
	dep := getDeployment(t, ns, "web")
	c := dep.Spec.Template.Spec.Containers[0]
	if c.Image != "nginx:1.28" || len(c.Env) != 2 || len(c.Ports) != 2 || *dep.Spec.Replicas != 3 {
		t.Errorf("Deployment not updated: image %s env %v ports %v replicas %d", c.Image, c.Env, c.Ports, *dep.Spec.Replicas)
	}
	after := getService(t, ns, "web")
	if after.Spec.ClusterIP != before.Spec.ClusterIP {
		t.Errorf("clusterIP changed from %s to %s", before.Spec.ClusterIP, after.Spec.ClusterIP)
	}
	if len(after.Spec.Ports) != 2 || after.Spec.Ports[0].NodePort != before.Spec.Ports[0].NodePort || after.Spec.Ports[1].NodePort == 0 {
		t.Errorf("nodePorts: before %+v after %+v, want the first kept and the new one allocated", before.Spec.Ports, after.Spec.Ports)
	}

	// A change of type back to ClusterIP must be accepted by the API server.
	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.ServiceType = appv1.ServiceTypeClusterIP })
	waitReady(t, ns, "web")
	eventually(t, timeout, "Service type ClusterIP", func() (bool, string, error) {
		s := getService(t, ns, "web")
		return s.Spec.Type == corev1.ServiceTypeClusterIP && s.Spec.ClusterIP == before.Spec.ClusterIP, fmt.Sprintf("%s %s", s.Spec.Type, s.Spec.ClusterIP), nil
	})
}

func TestDriftIsReverted(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	create(t, newDO(ns, "web"))
	waitReady(t, ns, "web")

	dep := getDeployment(t, ns, "web")
	dep.Spec.Template.Spec.Containers[0].Image = "drifted:1"
	dep.Spec.Replicas = ptr.To[int32](5)
	if _, err := env.kube.AppsV1().Deployments(ns).Update(ctx, dep, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("editing the Deployment: %v", err)
	}
	eventually(t, timeout, "Deployment drift reverted", func() (bool, string, error) {
		d := getDeployment(t, ns, "web")
		img := d.Spec.Template.Spec.Containers[0].Image
		return img == "nginx:1.27" && *d.Spec.Replicas == 2, fmt.Sprintf("image %s replicas %d", img, *d.Spec.Replicas), nil
	})

	old := getService(t, ns, "web")
	if err := env.kube.CoreV1().Services(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting the Service: %v", err)
	}
	eventually(t, timeout, "Service recreated", func() (bool, string, error) {
		s, err := env.kube.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, "not found", nil
		}
		if err != nil {
			return false, "", err
		}
		return s.UID != old.UID, "still the old Service", nil
	})
	waitReady(t, ns, "web")
	eventually(t, timeout, "DriftCorrected events", func() (bool, string, error) {
		evs, err := env.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=DriftCorrected"})
		if err != nil {
			return false, "", err
		}
		n := int32(0)
		for _, e := range evs.Items {
			n += occurrences(e)
		}
		return n >= 2, fmt.Sprintf("%d events", n), nil
	})
}

func TestFieldsOfOthersAreKept(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	create(t, newDO(ns, "web"))
	waitReady(t, ns, "web")

	if out, err := kubectl("-n", ns, "label", "deployment/web", "team=payments"); err != nil {
		t.Fatalf("kubectl label: %v\n%s", err, out)
	}
	if out, err := kubectl("-n", ns, "annotate", "service/web", "example.com/owner=payments"); err != nil {
		t.Fatalf("kubectl annotate: %v\n%s", err, out)
	}
	if out, err := kubectl("-n", ns, "rollout", "restart", "deployment/web"); err != nil {
		t.Fatalf("kubectl rollout restart: %v\n%s", err, out)
	}
	// A spec change makes the controller write both children.
	updateDO(t, ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Image = "nginx:1.28"
		d.Spec.Ports[0].ServicePort = ptr.To[int32](81)
	})
	waitReady(t, ns, "web")
	dep := getDeployment(t, ns, "web")
	svc := getService(t, ns, "web")
	if dep.Spec.Template.Spec.Containers[0].Image != "nginx:1.28" || svc.Spec.Ports[0].Port != 81 {
		t.Fatalf("children not updated: %s %d", dep.Spec.Template.Spec.Containers[0].Image, svc.Spec.Ports[0].Port)
	}
	if dep.Labels["team"] != "payments" {
		t.Errorf("the Deployment lost the label others added: %v", dep.Labels)
	}
	if dep.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] == "" {
		t.Errorf("the Deployment lost the restart annotation: %v", dep.Spec.Template.Annotations)
	}
	if svc.Annotations["example.com/owner"] != "payments" {
		t.Errorf("the Service lost the annotation others added: %v", svc.Annotations)
	}
}

func TestKubectlScale(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	create(t, newDO(ns, "web"))
	waitReady(t, ns, "web")
	if out, err := kubectl("-n", ns, "scale", "deployobject/web", "--replicas=4"); err != nil {
		t.Fatalf("kubectl scale: %v\n%s", err, out)
	}
	d := waitReady(t, ns, "web")
	if *d.Spec.Replicas != 4 || d.Status.Replicas != 4 || *getDeployment(t, ns, "web").Spec.Replicas != 4 {
		t.Errorf("after scale: spec %d status %d", *d.Spec.Replicas, d.Status.Replicas)
	}
	scale, err := env.dynamic.Resource(appv1.SchemeGroupVersion.WithResource("deployobjects")).Namespace(ns).Get(ctx, "web", metav1.GetOptions{}, "scale")
	if err != nil {
		t.Fatalf("reading the scale subresource: %v", err)
	}
	if sel, _, _ := unstructured.NestedString(scale.Object, "status", "selector"); sel != "app.deployobject.dev/name=web" {
		t.Errorf("scale status.selector = %q", sel)
	}
}

// createForeignDeployment creates a Deployment name that no DeployObject
// controls and that lacks the labels of one's children.
func createForeignDeployment(t *testing.T, ns, name string) *appsv1.Deployment {
	t.Helper()
	foreign := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"owner": "someone-else"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "theirs"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "theirs"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "theirs:1"}}},
			},
		},
	}
	foreign, err := env.kube.AppsV1().Deployments(ns).Create(ctx, foreign, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return foreign
}

func TestUnownedDeploymentIsLeftAlone(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	foreign := createForeignDeployment(t, ns, "web")
	create(t, newDO(ns, "web"))
	cond := waitReason(t, ns, "web", metav1.ConditionFalse, appv1.ReasonResourceConflict)
	if !strings.Contains(cond.Message, "Deployment web") {
		t.Errorf("condition message %q does not name the Deployment", cond.Message)
	}
	eventually(t, timeout, "a Warning ResourceConflict event", func() (bool, string, error) {
		evs, err := env.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=web,reason=ResourceConflict"})
		if err != nil {
			return false, "", err
		}
		return len(evs.Items) == 1 && evs.Items[0].Type == corev1.EventTypeWarning, fmt.Sprintf("%d events", len(evs.Items)), nil
	})
	consistently(t, 3*time.Second, "the foreign Deployment stays untouched", func() (bool, string, error) {
		live := getDeployment(t, ns, "web")
		return live.ResourceVersion == foreign.ResourceVersion || live.Generation == foreign.Generation && len(live.OwnerReferences) == 0 && live.Labels[managedBy] == "",
			fmt.Sprintf("generation %d ownerRefs %v labels %v", live.Generation, live.OwnerReferences, live.Labels), nil
	})
	// Whatever happens to the DeployObject, the foreign object stays.
	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.Image = "nginx:1.28" })
	time.Sleep(time.Second)
	if live := getDeployment(t, ns, "web"); live.Generation != foreign.Generation || len(live.OwnerReferences) != 0 {
		t.Fatalf("the foreign Deployment was modified: generation %d ownerRefs %v", live.Generation, live.OwnerReferences)
	}
	// A metadata-only patch would leave the generation alone: the audit
	// log shows every request.
	expectOnlyRefusedCreates(t, ns, "deployments", "web")

	// Once it is gone, the DeployObject reconciles normally.
	if err := env.kube.AppsV1().Deployments(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, timeout, "the foreign Deployment to be gone", func() (bool, string, error) {
		d, err := env.kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		if err != nil {
			return false, "", err
		}
		return d.UID != foreign.UID, "still there", nil
	})
	waitReady(t, ns, "web")
}

func TestDeleteGarbageCollectsChildren(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	create(t, newDO(ns, "web"))
	waitReady(t, ns, "web")
	if err := env.client.AppV1().DeployObjects(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, timeout, "children garbage-collected", func() (bool, string, error) {
		_, errD := env.kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		_, errS := env.kube.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(errD) && apierrors.IsNotFound(errS), fmt.Sprintf("deployment: %v, service: %v", errD, errS), nil
	})
}

func TestPortsRemovedDeletesService(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	create(t, newDO(ns, "web"))
	waitReady(t, ns, "web")
	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.Ports = nil })
	eventually(t, timeout, "Service deleted", func() (bool, string, error) {
		_, err := env.kube.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err), nil
	})
	waitReady(t, ns, "web")
}

func TestInvalidDeployObjectsAreRejected(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	res := env.dynamic.Resource(appv1.SchemeGroupVersion.WithResource("deployobjects")).Namespace(ns)
	valid := &unstructured.Unstructured{Object: cases.Valid("valid")}
	if _, err := res.Create(ctx, valid, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatalf("the valid base object is rejected: %v", err)
	}
	for _, tc := range cases.InvalidTable() {
		t.Run(tc.Name, func(t *testing.T) {
			obj := cases.Valid("web")
			tc.Mutate(obj)
			_, err := res.Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err == nil {
				t.Fatal("accepted, want rejected")
			}
			if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
				t.Errorf("error is %v, want Invalid", err)
			}
			if !strings.Contains(err.Error(), tc.Field) {
				t.Errorf("message does not name %s: %v", tc.Field, err)
			}
		})
	}
}

func TestRejectedChildIsReportedWithoutHotLoop(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	// An env var name the Deployment's validation rejects but the
	// DeployObject schema cannot express cheaply: the API server rejects
	// the child, and the controller reports it instead of retrying.
	create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Env = []corev1.EnvVar{{Name: "A=B", Value: "x"}}
	}))
	cond := waitReason(t, ns, "web", metav1.ConditionFalse, appv1.ReasonInvalidSpec)
	if !strings.Contains(cond.Message, "env") {
		t.Errorf("message %q does not point at env", cond.Message)
	}
	// The Service does not depend on the Deployment, so it is made in the
	// same sync that reports the rejection.
	getService(t, ns, "web")
	since := time.Now()
	time.Sleep(5 * time.Second)
	// A hot loop would make dozens. Inside the window, the sync that the
	// Service's creation event brings (after the 1 s child-event batch)
	// tries the Deployment once more, and the shared controller's 30 s
	// resync may try once too.
	if n := controllerWrites(t, ns, "deployments", "create", since)["web"]; n > 2 {
		t.Errorf("%d Deployment creates in the 5 s after the rejection: the controller is retrying rejected input", n)
	}
	// Fixing the spec recovers.
	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.Env = []corev1.EnvVar{{Name: "A", Value: "x"}} })
	waitReady(t, ns, "web")
}

func TestKubectlWait(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	create(t, newDO(ns, "web"))
	out, err := kubectl("-n", ns, "wait", "--for=condition=Ready", "deployobject/web", "--timeout=60s")
	if err != nil || !strings.Contains(out, "condition met") {
		t.Fatalf("kubectl wait: %v\n%s", err, out)
	}
	out, err = kubectl("-n", ns, "get", "dobj")
	if err != nil || !strings.Contains(out, "IMAGE") || !strings.Contains(out, "Available") {
		t.Errorf("kubectl get dobj does not show the printer columns: %v\n%s", err, out)
	}
}

func TestKubectlExplain(t *testing.T) {
	t.Parallel()
	out, err := kubectl("explain", "deployobject.spec.ports")
	if err != nil {
		t.Fatalf("kubectl explain: %v\n%s", err, out)
	}
	for _, want := range []string{"servicePort", "IANA", "defaults to containerPort"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl explain output lacks %q:\n%s", want, out)
		}
	}
}

func TestExamplesApply(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	if out, err := kubectl("-n", ns, "apply", "-f", env.repoRoot+"/example/"); err != nil {
		t.Fatalf("kubectl apply -f example/: %v\n%s", err, out)
	}
	waitReady(t, ns, "hello")
	waitReady(t, ns, "web")
	if s := getService(t, ns, "web"); s.Spec.Type != corev1.ServiceTypeClusterIP || len(s.Spec.Ports) != 1 {
		t.Errorf("the full example's Service = %s with %d ports", s.Spec.Type, len(s.Spec.Ports))
	}
	// The autoscaler raises the default 1 replica to minReplicas.
	eventually(t, 3*timeout, "the autoscaled example at minReplicas", func() (bool, string, error) {
		d := getDO(t, ns, "shop")
		ok, state := readyState(d)
		return ok && *d.Spec.Replicas == 2, fmt.Sprintf("replicas %d, %s", *d.Spec.Replicas, state), nil
	})
	if _, err := env.kube.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "shop", metav1.GetOptions{}); err != nil {
		t.Errorf("the autoscaled example's PodDisruptionBudget: %v", err)
	}
	if _, err := env.kube.NetworkingV1().Ingresses(ns).Get(ctx, "shop", metav1.GetOptions{}); err != nil {
		t.Errorf("the autoscaled example's Ingress: %v", err)
	}
}

func TestSteadyStateMakesNoWrites(t *testing.T) {
	ns := newNamespace(t)
	create(t, newDO(ns, "steady", func(d *appv1.DeployObject) {
		d.Spec.ServiceType = appv1.ServiceTypeNodePort
		d.Spec.Ports[0].AppProtocol = ptr.To("http")
		// A canary spec, with the server's defaults filled in, costs nothing
		// while the template does not change.
		d.Spec.Canary = &appv1.Canary{
			Steps:     []appv1.CanaryStep{{SetWeight: ptr.To[int32](10)}, {Pause: &appv1.CanaryPause{Duration: ptr.To("1m")}}, {Pause: &appv1.CanaryPause{}}},
			AutoAbort: &appv1.CanaryAutoAbort{MaxRestarts: ptr.To[int32](3), NotReadySeconds: ptr.To[int32](60)},
		}
	}))
	waitReady(t, ns, "steady")
	// The write metrics count for the whole process: wait until the other
	// tests' namespaces, whose teardown involves the controller, are gone.
	eventually(t, 2*timeout, "other test namespaces gone", func() (bool, string, error) {
		list, err := env.kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		var others []string
		for _, n := range list.Items {
			if strings.HasPrefix(n.Name, "e2e-") && n.Name != ns {
				others = append(others, n.Name)
			}
		}
		return len(others) == 0, strings.Join(others, ","), nil
	})
	time.Sleep(2 * time.Second)
	before, err := shared.writes()
	if err != nil {
		t.Fatal(err)
	}
	eventsBefore := eventsAbout(t, ns, "steady")
	// Wait for a full resync of the shared controller, which re-syncs every
	// DeployObject.
	resyncs, _ := shared.metric("deployobject_reconcile_total")
	time.Sleep(sharedResync + 5*time.Second)
	after, err := shared.writes()
	if err != nil {
		t.Fatal(err)
	}
	resyncsAfter, _ := shared.metric("deployobject_reconcile_total")
	if resyncsAfter <= resyncs {
		t.Errorf("no syncs happened during the resync period (%v -> %v)", resyncs, resyncsAfter)
	}
	for verb, n := range after {
		if d := n - before[verb]; d != 0 {
			t.Errorf("%v %s requests in steady state across a resync, want 0", d, verb)
		}
	}
	if n := eventsAbout(t, ns, "steady"); n != eventsBefore {
		t.Errorf("%d events about the DeployObject after a resync in steady state, %d before", n, eventsBefore)
	}
}

// eventsAbout counts the occurrences of every event about DeployObject name.
func eventsAbout(t *testing.T, ns, name string) int32 {
	t.Helper()
	evs, err := env.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=DeployObject,involvedObject.name=" + name})
	if err != nil {
		t.Fatalf("listing events: %v", err)
	}
	var n int32
	for _, e := range evs.Items {
		n += occurrences(e)
	}
	return n
}
