package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// systemNamespace is the namespace deploy/ installs into.
const systemNamespace = "deployobject-system"

// imageName is the name deploy/ and deploy/namespaced give the controller's
// image, which `kustomize edit set image` and an overlay's images replace.
const imageName = "deployobject-controller"

// overlay is a kustomization in a directory of its own that installs base
// (a directory of the repository) with components, as docs/installing.md
// tells an operator to.
type overlay struct {
	base       string
	components []string
	// namespace, when set, is the overlay's namespace: the components'
	// objects take it from there (deploy/ sets its own).
	namespace string
	// image, when set, replaces the controller's image (see parseImage).
	image string
}

// kustomization is the overlay's kustomization.yaml, with base and the
// components named relative to dir, where it is written: kustomize refuses
// absolute paths.
func (o overlay) kustomization(root, dir string) ([]byte, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	rel := func(p string) (string, error) {
		return filepath.Rel(dir, filepath.Join(root, p))
	}
	k := map[string]any{
		"apiVersion": "kustomize.config.k8s.io/v1beta1",
		"kind":       "Kustomization",
	}
	base, err := rel(o.base)
	if err != nil {
		return nil, err
	}
	k["resources"] = []string{base}
	if len(o.components) > 0 {
		var cs []string
		for _, c := range o.components {
			r, err := rel(c)
			if err != nil {
				return nil, err
			}
			cs = append(cs, r)
		}
		k["components"] = cs
	}
	if o.namespace != "" {
		k["namespace"] = o.namespace
	}
	if o.image != "" {
		ref, err := parseImage(o.image)
		if err != nil {
			return nil, err
		}
		img := map[string]string{"name": imageName, "newName": ref.repository}
		if ref.tag != "" {
			img["newTag"] = ref.tag
		}
		if ref.digest != "" {
			img["digest"] = ref.digest
		}
		k["images"] = []map[string]string{img}
	}
	return yaml.Marshal(k)
}

// build runs kustomize on the overlay, as `kubectl kustomize` does.
func (o overlay) build(root string) (resmap.ResMap, error) {
	dir, err := os.MkdirTemp("", "deployobject-overlay-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	k, err := o.kustomization(root, dir)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), k, 0o644); err != nil {
		return nil, err
	}
	m, err := kustomize(dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build of %s with %v: %w", o.base, o.components, err)
	}
	return m, nil
}

// kustomize builds the kustomization in dir, as `kubectl kustomize` does.
func kustomize(dir string) (resmap.ResMap, error) {
	return krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
}

// buildObjects is build, decoded as any YAML a person applies is.
func (o overlay) buildObjects(root string) ([]object, error) {
	m, err := o.build(root)
	if err != nil {
		return nil, err
	}
	return objectsOf(m)
}

// objectsOf decodes the objects of m as any YAML a person applies is.
func objectsOf(m resmap.ResMap) ([]object, error) {
	data, err := m.AsYaml()
	if err != nil {
		return nil, err
	}
	return decodeObjects(data)
}

// imageRef is a container image reference split as kustomize's images
// transformer and the chart's image values take it.
type imageRef struct {
	repository, tag, digest string
}

// parseImage splits REPOSITORY[:TAG][@DIGEST]. A reference without tag or
// digest is refused: it would install whatever "latest" is on the day.
func parseImage(ref string) (imageRef, error) {
	var r imageRef
	name, digest, hasDigest := strings.Cut(ref, "@")
	if hasDigest {
		r.digest = digest
		if !strings.Contains(r.digest, ":") {
			return imageRef{}, fmt.Errorf("image %q: the digest must be ALGORITHM:HEX, such as sha256:HEX", ref)
		}
	}
	// A colon after the last slash starts the tag; one before it belongs
	// to a registry's port.
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, r.tag = name[:i], name[i+1:]
	}
	r.repository = name
	if r.repository == "" {
		return imageRef{}, fmt.Errorf("image %q has no repository", ref)
	}
	if r.tag == "" && r.digest == "" {
		return imageRef{}, fmt.Errorf("image %q has neither tag nor digest", ref)
	}
	return r, nil
}

// String is the reference as kustomize writes it into the Deployment.
func (r imageRef) String() string {
	s := r.repository
	if r.tag != "" {
		s += ":" + r.tag
	}
	if r.digest != "" {
		s += "@" + r.digest
	}
	return s
}

// object is a Kubernetes object as decoded from YAML.
type object = map[string]any

// objectID names an object: group, kind, namespace and name.
func objectID(o object) string {
	apiVersion, _ := o["apiVersion"].(string)
	group := ""
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		group = apiVersion[:i]
	}
	kind, _ := o["kind"].(string)
	meta, _ := o["metadata"].(map[string]any)
	ns, _ := meta["namespace"].(string)
	name, _ := meta["name"].(string)
	if group == "" {
		group = "core"
	}
	return kind + "." + group + " " + strings.TrimPrefix(ns+"/"+name, "/")
}

// decodeObjects splits a multi-document YAML stream into objects, skipping
// empty documents (a template that renders nothing leaves one).
func decodeObjects(data []byte) ([]object, error) {
	var objs []object
	for _, doc := range splitDocuments(data) {
		var o object
		if err := yaml.Unmarshal(doc, &o); err != nil {
			return nil, fmt.Errorf("decoding %q: %w", firstLine(doc), err)
		}
		if len(o) == 0 {
			continue
		}
		if o["kind"] == nil || o["metadata"] == nil {
			return nil, fmt.Errorf("a document is no Kubernetes object: %q", firstLine(doc))
		}
		objs = append(objs, o)
	}
	return objs, nil
}

// splitDocuments splits at lines that are exactly "---".
func splitDocuments(data []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if string(bytes.TrimRight(line, "\r\n")) == "---" {
			docs = append(docs, bytes.Clone(cur.Bytes()))
			cur.Reset()
			continue
		}
		cur.Write(line)
	}
	return append(docs, cur.Bytes())
}

func firstLine(doc []byte) string {
	for _, l := range strings.Split(string(doc), "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			return t
		}
	}
	return ""
}

// byID indexes objects by objectID, refusing two of one name.
func byID(objs []object) (map[string]object, error) {
	m := map[string]object{}
	for _, o := range objs {
		id := objectID(o)
		if _, dup := m[id]; dup {
			return nil, fmt.Errorf("%s twice", id)
		}
		m[id] = o
	}
	return m, nil
}
