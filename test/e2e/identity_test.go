//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
)

const roleARN = "arn:aws:iam::111122223333:role/web"

// TestServiceAccount: spec.serviceAccount makes a ServiceAccount with the
// workload identity annotation, which the pods run as; another writer's
// annotation and secret survive and resyncs write nothing. Switched to an
// existing ServiceAccount, the pods roll to it and the owned one is
// deleted only once no pod runs as it; switched back, it is made again.
// Removing the field deletes it after the rollout.
func TestServiceAccount(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
		d.Spec.ServiceAccount = &appv1.OwnedServiceAccount{Metadata: &appv1.ChildMetadata{Annotations: map[string]string{"eks.amazonaws.com/role-arn": roleARN}}}
	}))
	waitReady(t, ns, "web")
	sa := getServiceAccount(t, ns, "web")
	if sa.Annotations["eks.amazonaws.com/role-arn"] != roleARN || !metav1.IsControlledBy(sa, getDO(t, ns, "web")) {
		t.Fatalf("ServiceAccount web: annotations %v, owners %v; want the role annotation and the DeployObject as controller", sa.Annotations, sa.OwnerReferences)
	}
	waitPodsRunAs(t, ns, "web", "web")

	kubectlPatch(t, ns, "serviceaccount/web", `[{"op":"add","path":"/metadata/annotations/audit","value":"done"},{"op":"add","path":"/secrets","value":[{"name":"legacy-token"}]}]`)
	expectQuiet(t, shared, ns, sharedResync+5*time.Second, false)
	if sa := getServiceAccount(t, ns, "web"); sa.Annotations["audit"] != "done" || len(sa.Secrets) != 1 {
		t.Errorf("another writer's annotation or secret was removed: %v, %v", sa.Annotations, sa.Secrets)
	}

	if _, err := env.kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "shared"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	updateDO(t, ns, "web", func(d *appv1.DeployObject) {
		d.Spec.ServiceAccount, d.Spec.ServiceAccountName = nil, "shared"
	})
	waitOwnedServiceAccountGone(t, ns, "web")
	waitReady(t, ns, "web")
	waitPodsRunAs(t, ns, "web", "shared")

	updateDO(t, ns, "web", func(d *appv1.DeployObject) {
		d.Spec.ServiceAccountName = ""
		d.Spec.ServiceAccount = &appv1.OwnedServiceAccount{Metadata: &appv1.ChildMetadata{Annotations: map[string]string{"eks.amazonaws.com/role-arn": roleARN}}}
	})
	waitReady(t, ns, "web")
	if again := getServiceAccount(t, ns, "web"); again.UID == sa.UID || again.Annotations["eks.amazonaws.com/role-arn"] != roleARN {
		t.Errorf("switched back: ServiceAccount web %s with %v, want a new one with the role annotation", again.UID, again.Annotations)
	}
	waitPodsRunAs(t, ns, "web", "web")
	if s := getServiceAccount(t, ns, "shared"); s.DeletionTimestamp != nil || len(s.OwnerReferences) != 0 {
		t.Errorf("the existing ServiceAccount was touched: %+v", s.ObjectMeta)
	}

	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.ServiceAccount = nil })
	waitOwnedServiceAccountGone(t, ns, "web")
	waitPodsRunAs(t, ns, "web", "default")
}

// waitOwnedServiceAccountGone waits until the ServiceAccount name is
// deleted, and checks that by then no pod of the Deployment that is not
// itself terminating runs as it: its tokens would have stopped working.
func waitOwnedServiceAccountGone(t *testing.T, ns, name string) {
	t.Helper()
	waitGone(t, "ServiceAccount "+name, func() error {
		_, err := env.kube.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
		return err
	})
	for _, p := range podsOf(t, ns, "web") {
		if p.Spec.ServiceAccountName == name && p.DeletionTimestamp == nil {
			t.Errorf("ServiceAccount %s was deleted while pod %s still runs as it", name, p.Name)
		}
	}
}

// waitPodsRunAs waits until every pod of DeployObject dobj that is not
// terminating runs as ServiceAccount sa.
func waitPodsRunAs(t *testing.T, ns, dobj, sa string) {
	t.Helper()
	eventually(t, timeout, "the pods of "+dobj+" run as "+sa, func() (bool, string, error) {
		var as []string
		ok := true
		for _, p := range podsOf(t, ns, dobj) {
			if p.DeletionTimestamp != nil {
				continue
			}
			as = append(as, p.Spec.ServiceAccountName)
			ok = ok && p.Spec.ServiceAccountName == sa
		}
		return ok && len(as) > 0, fmt.Sprintf("pods run as %v", as), nil
	})
}

func podsOf(t *testing.T, ns, dobj string) []corev1.Pod {
	t.Helper()
	d := getDO(t, ns, dobj)
	pods, err := env.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(children.SelectorLabels(d)).String()})
	if err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

func getServiceAccount(t *testing.T, ns, name string) *corev1.ServiceAccount {
	t.Helper()
	sa, err := env.kube.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading ServiceAccount %s: %v", name, err)
	}
	return sa
}
