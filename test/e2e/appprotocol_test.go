//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// servicePortAppProtocol is the appProtocol of the Service port named name,
// "" when it has none.
func servicePortAppProtocol(t *testing.T, ns, svc, name string) string {
	t.Helper()
	for _, p := range getService(t, ns, svc).Spec.Ports {
		if p.Name == name {
			return ptr.Deref(p.AppProtocol, "")
		}
	}
	t.Fatalf("Service %s has no port %s", svc, name)
	return ""
}

// kubectlPatch applies a JSON patch to obj in ns.
func kubectlPatch(t *testing.T, ns, obj, patch string) {
	t.Helper()
	if out, err := kubectl("-n", ns, "patch", obj, "--type=json", "-p", patch); err != nil {
		t.Fatalf("kubectl patch %s: %v\n%s", obj, err, out)
	}
}

// TestForeignAppProtocolIsKept: an appProtocol someone else set on the
// Service survives the controller's writes when the spec does not set one.
func TestForeignAppProtocolIsKept(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	create(t, newDO(ns, "web"))
	waitReady(t, ns, "web")

	kubectlPatch(t, ns, "service/web", `[{"op":"add","path":"/spec/ports/0/appProtocol","value":"kubernetes.io/h2c"}]`)
	// A spec change makes the controller write the Service.
	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.Ports[0].ServicePort = ptr.To[int32](81) })
	waitReady(t, ns, "web")
	eventually(t, timeout, "Service port 81", func() (bool, string, error) {
		p := getService(t, ns, "web").Spec.Ports[0]
		return p.Port == 81, fmt.Sprintf("port %d", p.Port), nil
	})
	if got := servicePortAppProtocol(t, ns, "web", "http"); got != "kubernetes.io/h2c" {
		t.Errorf("appProtocol = %q after the controller wrote the Service, want the kubernetes.io/h2c set by kubectl", got)
	}
}

// TestAppProtocolFromSpec: an appProtocol in the spec reaches the Service
// port, and drift of it is corrected.
func TestAppProtocolFromSpec(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	create(t, newDO(ns, "web"))
	waitReady(t, ns, "web")
	kubectlPatch(t, ns, "deployobject/web", `[{"op":"add","path":"/spec/ports/0/appProtocol","value":"kubernetes.io/h2c"}]`)
	waitReady(t, ns, "web")
	want := func(v string) func() (bool, string, error) {
		return func() (bool, string, error) {
			got := servicePortAppProtocol(t, ns, "web", "http")
			return got == v, fmt.Sprintf("appProtocol %q", got), nil
		}
	}
	eventually(t, timeout, "appProtocol kubernetes.io/h2c from the spec", want("kubernetes.io/h2c"))

	for _, drift := range []string{
		`[{"op":"replace","path":"/spec/ports/0/appProtocol","value":"http"}]`,
		`[{"op":"remove","path":"/spec/ports/0/appProtocol"}]`,
	} {
		kubectlPatch(t, ns, "service/web", drift)
		eventually(t, timeout, "appProtocol drift "+drift+" corrected", want("kubernetes.io/h2c"))
	}
}

// TestAppProtocolRemovedFromSpec: an appProtocol the spec drops is removed
// from the Service port (a Gateway would otherwise keep speaking HTTP/2
// prior knowledge to an application that now speaks HTTP/1.1), while the
// appProtocol someone else set on another port is kept; afterwards
// resyncs write nothing.
func TestAppProtocolRemovedFromSpec(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	create(t, newDO(ns, "web", func(d *appv1.DeployObject) {
		d.Spec.Ports[0].AppProtocol = ptr.To("kubernetes.io/h2c")
		d.Spec.Ports = append(d.Spec.Ports, appv1.Port{Name: "admin", ContainerPort: 9000})
	}))
	waitReady(t, ns, "web")
	if got := servicePortAppProtocol(t, ns, "web", "http"); got != "kubernetes.io/h2c" {
		t.Fatalf("appProtocol of port http = %q, want the spec's kubernetes.io/h2c", got)
	}
	kubectlPatch(t, ns, "service/web", `[{"op":"add","path":"/spec/ports/1/appProtocol","value":"http"}]`)

	updateDO(t, ns, "web", func(d *appv1.DeployObject) { d.Spec.Ports[0].AppProtocol = nil })
	waitReady(t, ns, "web")
	eventually(t, timeout, "the appProtocol the spec dropped removed", func() (bool, string, error) {
		got := servicePortAppProtocol(t, ns, "web", "http")
		return got == "", fmt.Sprintf("appProtocol %q", got), nil
	})
	if got := servicePortAppProtocol(t, ns, "web", "admin"); got != "http" {
		t.Errorf("appProtocol of port admin = %q, want the http kubectl set", got)
	}
	// The shared controller serves the other tests too: its retries are
	// theirs as much as this one's.
	expectQuiet(t, shared, ns, sharedResync+5*time.Second, false)
	if got := servicePortAppProtocol(t, ns, "web", "admin"); got != "http" {
		t.Errorf("appProtocol of port admin = %q after resyncs, want the http kubectl set", got)
	}
}
