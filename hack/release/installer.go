package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
)

// artifact is one YAML file of dist/.
type artifact struct {
	file string
	// about says what the file holds and how it is applied, for its
	// header; docs/installing.md says the same at length.
	about string
	// install is the kustomize build the file holds.
	install overlay
	// additive, when set, names a component whose objects alone the file
	// holds: those it adds to install, to apply next to the file that
	// holds install.
	additive string
}

// artifacts are the files `make build-installer` writes. Components that
// patch the Deployment (track-secrets) are shipped as whole installations,
// to apply instead of the plain one: shipped apart, the patched Deployment
// would be undone by the next apply of install.yaml. Components that only
// add objects are shipped as those objects alone. The metrics-cert-manager
// component patches the Deployment too but is not shipped: as whole
// installations it would take one file per combination with track-secrets
// and namespaced, for a piece that needs cert-manager first.
func artifacts(image string) []artifact {
	cluster := overlay{base: "deploy", namespace: systemNamespace, image: image}
	namespaced := overlay{base: "deploy/namespaced", image: image}
	with := func(o overlay, components ...string) overlay {
		o.components = append(append([]string{}, o.components...), components...)
		return o
	}
	return []artifact{
		{file: "crd.yaml", about: "The DeployObject CRD alone: for upgrades (apply it first) and namespaced installations.",
			install: overlay{base: "crd"}},
		{file: "install.yaml", about: "The CRD, the namespace " + systemNamespace + ", RBAC and the controller, as `kubectl apply -k deploy/` installs them.",
			install: cluster},
		{file: "install-track-secrets.yaml", about: "install.yaml with --track-secrets and list/watch on Secrets (deploy/track-secrets): apply it instead of install.yaml.",
			install: with(cluster, "deploy/track-secrets")},
		{file: "namespaced-install.yaml", about: "The controller for one namespace, with Roles (deploy/namespaced): `kubectl apply -n NAMESPACE -f`, after crd.yaml.",
			install: namespaced},
		{file: "namespaced-install-track-secrets.yaml", about: "namespaced-install.yaml with --track-secrets (deploy/namespaced/track-secrets): apply it instead of namespaced-install.yaml.",
			install: with(namespaced, "deploy/namespaced/track-secrets")},
		{file: "monitoring.yaml", about: "The monitoring component (deploy/components/monitoring) for install.yaml: apply it after install.yaml.",
			install: cluster, additive: "deploy/components/monitoring"},
		{file: "metrics-networkpolicy.yaml", about: "The metrics NetworkPolicy (deploy/components/metrics-networkpolicy) for install.yaml: apply it after install.yaml.",
			install: cluster, additive: "deploy/components/metrics-networkpolicy"},
	}
}

// render is the artifact's content: a header, then the objects as
// kustomize prints them.
func (a artifact) render(root, version string) ([]byte, error) {
	var body []byte
	var err error
	if a.additive == "" {
		m, err := a.install.build(root)
		if err != nil {
			return nil, err
		}
		if body, err = m.AsYaml(); err != nil {
			return nil, err
		}
	} else if body, err = additions(root, a.install, a.additive); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "# deployobject-controller %s: %s\n", version, a.file)
	fmt.Fprintf(&out, "# %s\n", a.about)
	fmt.Fprintf(&out, "# Written by `make build-installer`; see docs/installing.md.\n")
	out.Write(body)
	return out.Bytes(), nil
}

// additions are the objects that component adds to the installation base,
// in kustomize's order. It fails when the component changes an object of
// base, which a file of its additions alone would not carry.
func additions(root string, base overlay, component string) ([]byte, error) {
	plain, err := base.build(root)
	if err != nil {
		return nil, err
	}
	withComponent := base
	withComponent.components = append(append([]string{}, base.components...), component)
	combined, err := withComponent.build(root)
	if err != nil {
		return nil, err
	}
	for _, orig := range plain.Resources() {
		r, err := combined.GetById(orig.CurId())
		if err != nil {
			return nil, fmt.Errorf("%s removes or renames %s of %s: %w", component, orig.CurId(), base.base, err)
		}
		a, errA := orig.Map()
		b, errB := r.Map()
		if err := errors.Join(errA, errB); err != nil {
			return nil, fmt.Errorf("%s: %w", r.CurId(), err)
		}
		if !reflect.DeepEqual(a, b) {
			return nil, fmt.Errorf("%s changes %s of %s: it cannot be shipped as a file of its own", component, r.CurId(), base.base)
		}
	}
	var docs []string
	for _, r := range combined.Resources() {
		if _, err := plain.GetById(r.CurId()); err == nil {
			continue
		}
		y, err := r.AsYAML()
		if err != nil {
			return nil, err
		}
		docs = append(docs, string(y))
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s adds nothing to %s", component, base.base)
	}
	return []byte(strings.Join(docs, "---\n")), nil
}

// writeInstaller writes every artifact into out.
func writeInstaller(root, out, image, version string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, a := range artifacts(image) {
		data, err := a.render(root, version)
		if err != nil {
			return fmt.Errorf("%s: %w", a.file, err)
		}
		if err := os.WriteFile(filepath.Join(out, a.file), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
