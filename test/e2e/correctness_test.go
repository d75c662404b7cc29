//go:build e2e

package e2e

import (
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	appapply "deployobject.dev/controller/pkg/generated/applyconfiguration/app/v1"
)

// countEvents counts the events of type with reason on DeployObject name.
func countEvents(t *testing.T, ns, name, eventType, reason string) int32 {
	t.Helper()
	evs, err := env.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "type=" + eventType + ",involvedObject.name=" + name + ",reason=" + reason})
	if err != nil {
		t.Fatalf("listing events: %v", err)
	}
	var n int32
	for _, e := range evs.Items {
		if e.InvolvedObject.Kind == "DeployObject" {
			n += occurrences(e)
		}
	}
	return n
}

// occurrences is how often e happened, as far as the API server knows. The
// controller writes events through events.k8s.io/v1, whose repeats count in
// the series (core/v1 shows it as series, and leaves count, the legacy
// recorder's counter, at 0); client-go writes the count of the third and
// later repeats with the series' next heartbeat, up to 30 min later.
func occurrences(e corev1.Event) int32 {
	if e.Series != nil {
		return e.Series.Count
	}
	return max(e.Count, 1)
}

// expectBlocked waits for Ready=False with reason on name, at the current
// generation, with one Warning event per problem, and checks that the
// retries back off: the queue's delay doubles from 5 ms, so 5 to 10 s after
// the report a few creates of the refused child are left, where a hot loop
// would make hundreds.
func expectBlocked(t *testing.T, ns, name, reason, refused string, problems int32) *metav1.Condition {
	t.Helper()
	cond := waitReason(t, ns, name, metav1.ConditionFalse, reason)
	if d := getDO(t, ns, name); d.Status.ObservedGeneration != d.Generation || cond.ObservedGeneration != d.Generation {
		t.Errorf("observedGeneration %d (condition %d), want %d", d.Status.ObservedGeneration, cond.ObservedGeneration, d.Generation)
	}
	// Every change of the Deployment's status syncs the DeployObject, and
	// each sync tries the refused child again: the window that shows the
	// retries backing off opens once the rollout has settled. Under load
	// the pods take seconds to turn ready, and the syncs of their events
	// are not retries.
	deploymentSettled(t, ns, name)
	later := time.Now().Add(5 * time.Second)
	time.Sleep(10 * time.Second)
	if n := controllerWrites(t, ns, refused, "create", later)[name]; n > 3 {
		t.Errorf("%d creates of the refused %s from 5 to 10 s after the report: the retries do not back off", n, refused)
	}
	if n := countEvents(t, ns, name, corev1.EventTypeWarning, reason); n != problems {
		t.Errorf("%d Warning %s events, want %d: one per problem", n, reason, problems)
	}
	return cond
}

// deploymentSettled waits until the Deployment name in ns, if there is
// one, has rolled out: observed, all replicas updated and available.
func deploymentSettled(t *testing.T, ns, name string) {
	t.Helper()
	eventually(t, 2*timeout, "Deployment "+name+" rolled out", func() (bool, string, error) {
		d, err := env.kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		if err != nil {
			return false, "", err
		}
		want := ptr.Deref(d.Spec.Replicas, 1)
		s := d.Status
		return s.ObservedGeneration >= d.Generation && s.Replicas == want && s.UpdatedReplicas == want && s.AvailableReplicas == want,
			fmt.Sprintf("%d replicas, %d updated, %d available of %d", s.Replicas, s.UpdatedReplicas, s.AvailableReplicas, want), nil
	})
}

// TestQuotaRefusalsAreReported: a ResourceQuota that refuses one child
// leaves the DeployObject Ready=False QuotaExceeded at once, the other child
// is made, and raising the quota recovers without any change to the spec.
func TestQuotaRefusalsAreReported(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	for name, hard := range map[string]corev1.ResourceList{
		"no-deployments":   {"count/deployments.apps": resource.MustParse("0")},
		"no-loadbalancers": {corev1.ResourceServicesLoadBalancers: resource.MustParse("0")},
	} {
		q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}
		if _, err := env.kube.CoreV1().ResourceQuotas(ns).Create(ctx, q, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The quota admission plugin reads quotas from the API server's cache,
	// and a quota it has not seen yet refuses nothing: under load a
	// Deployment was made before the quota took effect. Once the quota
	// controller has written a quota's status, the watch that feeds that
	// cache has delivered it.
	eventually(t, timeout, "the quotas in effect", func() (bool, string, error) {
		list, err := env.kube.CoreV1().ResourceQuotas(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		counted := 0
		for _, q := range list.Items {
			if len(q.Status.Hard) > 0 {
				counted++
			}
		}
		return counted == 2, fmt.Sprintf("%d of 2 quotas with a status", counted), nil
	})
	create(t, newDO(ns, "web", func(d *appv1.DeployObject) { d.Spec.ServiceType = appv1.ServiceTypeLoadBalancer }))
	cond := expectBlocked(t, ns, "web", appv1.ReasonQuotaExceeded, "deployments", 2)
	for _, want := range []string{"Deployment web", "Service web", "exceeded quota"} {
		if !strings.Contains(cond.Message, want) {
			t.Errorf("message %q does not name %q", cond.Message, want)
		}
	}

	// The LoadBalancer Service is refused too, but a ClusterIP one fits:
	// the child that can be made is made.
	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.ServiceType = appv1.ServiceTypeClusterIP })
	eventually(t, timeout, "the Service to be made", func() (bool, string, error) {
		_, err := env.kube.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err), nil
	})
	waitReason(t, ns, "web", metav1.ConditionFalse, appv1.ReasonQuotaExceeded)

	if err := env.kube.CoreV1().ResourceQuotas(ns).Delete(ctx, "no-deployments", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitReady(t, ns, "web")
}

// denyingWebhook serves a validating admission webhook on loopback that
// denies the creation of Services named deny-403 with code 403 and those
// named deny-400 without a code (the API server answers 400), and admits
// everything else. It is registered for namespace ns only.
func denyingWebhook(t *testing.T, ns string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		switch review.Request.Name {
		case "deny-403":
			resp.Allowed, resp.Result = false, &metav1.Status{Code: http.StatusForbidden, Message: "Services of this team need approval"}
		case "deny-400":
			resp.Allowed, resp.Result = false, &metav1.Status{Message: "Services of this team need approval"}
		}
		review.Response = resp
		_ = json.NewEncoder(w).Encode(review)
	}))
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: ns},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "deny.e2e.deployobject.dev",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To(srv.URL), CABundle: ca},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"services"}}}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](5),
		}},
	}
	if _, err := env.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, ns, metav1.DeleteOptions{})
	})
	// The API server picks the configuration up asynchronously.
	eventually(t, timeout, "the webhook to deny", func() (bool, string, error) {
		probe := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "deny-403"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
		_, err := env.kube.CoreV1().Services(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return apierrors.IsForbidden(err), fmt.Sprint(err), nil
	})
}

// TestAdmissionDenialsAreReported: a webhook's denial of the Service, with
// 403 or without a code (400), is Forbidden, not InvalidSpec; the
// Deployment is made all the same.
func TestAdmissionDenialsAreReported(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	denyingWebhook(t, ns)
	for _, name := range []string{"deny-403", "deny-400"} {
		create(t, newDO(ns, name))
	}
	for _, name := range []string{"deny-403", "deny-400"} {
		cond := expectBlocked(t, ns, name, appv1.ReasonForbidden, "services", 1)
		if !strings.Contains(cond.Message, "need approval") {
			t.Errorf("%s: message %q does not carry the webhook's", name, cond.Message)
		}
		if d := getDeployment(t, ns, name); !controlledBy(d, getDO(t, ns, name)) {
			t.Errorf("%s: the Deployment was not made", name)
		}
	}
}

// TestRefusedPodsAndPausedRolloutsAreReported: pods refused by Pod Security
// admission, and a paused rollout, show in Ready at once.
func TestRefusedPodsAndPausedRolloutsAreReported(t *testing.T) {
	t.Parallel()
	restricted := newNamespace(t)
	if out, err := kubectl("label", "namespace", restricted, "pod-security.kubernetes.io/enforce=restricted"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	start := time.Now()
	create(t, newDO(restricted, "web"))
	cond := waitReason(t, restricted, "web", metav1.ConditionFalse, appv1.ReasonReplicaFailure)
	t.Logf("ReplicaFailure reported %s after the create", time.Since(start).Round(100*time.Millisecond))
	if !strings.Contains(cond.Message, "PodSecurity") || !strings.Contains(cond.Message, "FailedCreate") {
		t.Errorf("message %q does not say that Pod Security refused the pods", cond.Message)
	}

	ns := newNamespace(t)
	create(t, newDO(ns, "web"))
	waitReady(t, ns, "web")
	if out, err := kubectl("-n", ns, "rollout", "pause", "deployment/web"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.Image = "nginx:1.28" })
	waitReason(t, ns, "web", metav1.ConditionFalse, appv1.ReasonPaused)
	if !getDeployment(t, ns, "web").Spec.Paused {
		t.Error("the controller resumed the rollout someone paused")
	}
	if out, err := kubectl("-n", ns, "rollout", "resume", "deployment/web"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	waitReady(t, ns, "web")
}

// TestServerCanonicalValuesCauseNoWrites: values the API server stores in
// another form (quantities below a thousandth, a fieldRef without
// apiVersion) converge: child events after Ready cause no writes.
func TestServerCanonicalValuesCauseNoWrites(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Resources = corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.5m"), corev1.ResourceMemory: resource.MustParse("1.0001")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1.0001"), corev1.ResourceMemory: resource.MustParse("1e9")},
		}
		d.Spec.Env = append(d.Spec.Env,
			corev1.EnvVar{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			corev1.EnvVar{Name: "CPU", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu", Divisor: resource.MustParse("1m")}}})
		d.Spec.ServiceType = appv1.ServiceTypeNodePort
	}))
	waitReady(t, ns, "web")
	got := getDeployment(t, ns, "web").Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]
	t.Logf("the API server stored a cpu request of 0.5m as %s", got.String())
	time.Sleep(2 * time.Second)
	since := time.Now()
	// Child events make the controller compare again.
	for _, obj := range []string{"deployment/web", "service/web"} {
		if out, err := kubectl("-n", ns, "annotate", obj, "example.com/touched=1"); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	time.Sleep(5 * time.Second)
	for _, resource := range []string{"deployments", "services"} {
		if n := controllerWrites(t, ns, resource, "write", since)["web"]; n != 0 {
			t.Errorf("%d writes of %s web after it was in sync: the controller fights the API server's canonical form", n, resource)
		}
	}
	if n := countEvents(t, ns, "web", corev1.EventTypeNormal, "DriftCorrected"); n != 0 {
		t.Errorf("%d DriftCorrected events", n)
	}
}

// TestServiceTypeChanges changes the type between every pair of the three
// types, with and without the fields others set for the old type (source
// ranges, the source-ranges annotation, a Local external traffic policy
// with its health check port, a load balancer class), and expects each to
// reach Ready with the new type.
func TestServiceTypeChanges(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	kinds := map[appv1.ServiceType]string{appv1.ServiceTypeClusterIP: "cip", appv1.ServiceTypeNodePort: "np", appv1.ServiceTypeLoadBalancer: "lb"}
	type change struct {
		name     string
		from, to appv1.ServiceType
		fields   bool
	}
	var changes []change
	for from, f := range kinds {
		for to, tname := range kinds {
			if from == to {
				continue
			}
			changes = append(changes, change{f + "-to-" + tname, from, to, false})
			if from != appv1.ServiceTypeClusterIP {
				changes = append(changes, change{f + "-to-" + tname + "-fields", from, to, true})
			}
		}
	}
	for _, c := range changes {
		create(t, newDO(ns, c.name, func(d *appv1.DeployObject) { d.Spec.ServiceType = c.from }))
	}
	for _, c := range changes {
		waitReady(t, ns, c.name)
		if !c.fields {
			continue
		}
		patch := `{"spec":{"externalTrafficPolicy":"Local"}}`
		if c.from == appv1.ServiceTypeLoadBalancer {
			patch = `{"metadata":{"annotations":{"service.beta.kubernetes.io/load-balancer-source-ranges":"10.0.0.0/8"}},` +
				`"spec":{"externalTrafficPolicy":"Local","loadBalancerSourceRanges":["192.168.0.0/16"]}}`
		}
		if _, err := env.kube.CoreV1().Services(ns).Patch(ctx, c.name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatalf("%s: setting fields for %s: %v", c.name, c.from, err)
		}
	}
	for _, c := range changes {
		updateDO(t, ns, c.name, func(d *appv1.DeployObject) { d.Spec.ServiceType = c.to })
	}
	for _, c := range changes {
		waitReady(t, ns, c.name)
		if s := getService(t, ns, c.name); s.Spec.Type != corev1.ServiceType(c.to) {
			t.Errorf("%s: Service type %s, want %s", c.name, s.Spec.Type, c.to)
		}
	}
}

// TestStatusOfARecreatedDeployObjectIsNotOverwritten: a status apply
// conditional on the resourceVersion of the DeployObject it was computed
// for, as the controller's is, is refused once that object was replaced by
// another of the same name. (One that carries the old UID instead lands:
// the status subresource ignores every field but the status.)
func TestStatusOfARecreatedDeployObjectIsNotOverwritten(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	old := create(t, newDO(ns, "web"))
	waitReady(t, ns, "web")
	if err := env.client.AppV1().DeployObjects(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, timeout, "the DeployObject to be gone", func() (bool, string, error) {
		_, err := env.client.AppV1().DeployObjects(ns).Get(ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err), nil
	})
	create(t, newDO(ns, "web", func(d *appv1.DeployObject) { d.Spec.Image = "nginx:1.28" }))
	stale := appapply.DeployObject("web", ns).WithResourceVersion(old.ResourceVersion).WithStatus(appapply.DeployObjectStatus().WithObservedGeneration(99))
	_, err := env.client.AppV1().DeployObjects(ns).ApplyStatus(ctx, stale, metav1.ApplyOptions{FieldManager: "e2e-stale", Force: true})
	if !apierrors.IsConflict(err) {
		t.Fatalf("a status apply based on the old object's version: %v, want a conflict", err)
	}
	t.Logf("refused as %v", err)
	if d := getDO(t, ns, "web"); d.Status.ObservedGeneration == 99 {
		t.Error("the stale status was written")
	}
	waitReady(t, ns, "web")
}

// TestLongRejectionKeepsStatusValid: a rejection whose message is longer
// than a condition message may be still reaches the status, bounded.
func TestLongRejectionKeepsStatusValid(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	dobj := newDO(ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Env = nil
		for i := range 128 {
			d.Spec.Env = append(d.Spec.Env, corev1.EnvVar{Name: fmt.Sprintf("V%03d=%s", i, strings.Repeat("x", 123)), Value: "v"})
		}
	})
	// What the API server says of such a Deployment is longer than the
	// 32768 characters the status allows a condition message.
	probe := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "probe"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx", Env: dobj.Spec.Env}}},
			},
		},
	}
	_, err := env.kube.AppsV1().Deployments(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if !apierrors.IsInvalid(err) || len(err.Error()) <= 32768 {
		t.Fatalf("the probe's rejection is %d bytes (%v), want over 32768 for this test to mean anything", len(fmt.Sprint(err)), apierrors.IsInvalid(err))
	}
	create(t, dobj)
	cond := waitReason(t, ns, "web", metav1.ConditionFalse, appv1.ReasonInvalidSpec)
	if len(cond.Message) > 32768 || !strings.HasSuffix(cond.Message, "[truncated]") {
		t.Errorf("message of %d bytes, want a truncated one within the schema's bound", len(cond.Message))
	}
}

// TestDeleteAndRecreate: `kubectl delete dobj web --wait=false` and an
// apply of web at once (Argo CD's Replace=true): the children of the
// deleted object hold the names until the garbage collector removes them,
// which is waiting, not a conflict; then the new object makes its own.
func TestDeleteAndRecreate(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	create(t, newDO(ns, "web"))
	first := waitReady(t, ns, "web")
	if err := env.client.AppV1().DeployObjects(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	second := create(t, newDO(ns, "web"))
	if second.UID == first.UID {
		t.Fatal("the DeployObject was not replaced")
	}
	waitReady(t, ns, "web")
	eventually(t, timeout, "the new DeployObject's own children", func() (bool, string, error) {
		d := getDeployment(t, ns, "web")
		s := getService(t, ns, "web")
		return controlledBy(d, second) && controlledBy(s, second), fmt.Sprintf("Deployment owners %v", d.OwnerReferences), nil
	})
	events, err := env.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=" + appv1.ReasonResourceConflict})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		t.Errorf("the children of the deleted DeployObject were reported as a conflict: %s", e.Message)
	}
}

// TestOrphansAreAdopted: after `kubectl delete --cascade=orphan`, a new
// DeployObject of the same name adopts the children it left behind.
func TestOrphansAreAdopted(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	create(t, newDO(ns, "web"))
	waitReady(t, ns, "web")
	before := getDeployment(t, ns, "web")
	if out, err := kubectl("-n", ns, "delete", "deployobject/web", "--cascade=orphan", "--wait=true"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	eventually(t, timeout, "the children to be orphaned", func() (bool, string, error) {
		d, err := env.kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		s, err := env.kube.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return len(d.OwnerReferences)+len(s.OwnerReferences) == 0, fmt.Sprint(d.OwnerReferences, s.OwnerReferences), nil
	})
	since := time.Now()
	dobj := create(t, newDO(ns, "web"))
	waitReady(t, ns, "web")
	d, s := getDeployment(t, ns, "web"), getService(t, ns, "web")
	if !controlledBy(d, dobj) || !controlledBy(s, dobj) {
		t.Fatalf("children not adopted: %v / %v", d.OwnerReferences, s.OwnerReferences)
	}
	if d.UID != before.UID {
		t.Error("the Deployment was replaced instead of adopted")
	}
	for _, resource := range []string{"deployments", "services"} {
		if n := controllerWrites(t, ns, resource, "patch", since)["web"]; n != 1 {
			t.Errorf("%d patches of %s web, want the one adoption", n, resource)
		}
	}
}
