package configrollout

import (
	"slices"
	"strings"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// IndexKey names a ConfigMap or Secret in the DeployObject
// informer's index of references, as "configmap/<namespace>/<name>" or
// "secret/<namespace>/<name>".
func IndexKey(kind Kind, namespace, name string) string {
	return strings.ToLower(string(kind)) + "/" + namespace + "/" + name
}

// IndexFunc indexes a DeployObject by every tracked ConfigMap and
// Secret its pods use, so that a change of one finds the DeployObjects to
// sync without a scan.
func IndexFunc(secrets bool) func(obj any) ([]string, error) {
	return func(obj any) ([]string, error) {
		dobj, ok := obj.(*appv1.DeployObject)
		if !ok {
			return nil, nil
		}
		refs := Refs(&dobj.Spec, secrets)
		keys := make([]string, 0, len(refs))
		for _, r := range refs {
			keys = append(keys, IndexKey(r.kind, dobj.Namespace, r.name))
		}
		slices.Sort(keys)
		return slices.Compact(keys), nil
	}
}

// IndexName is the DeployObject informer's index from a referenced
// ConfigMap or Secret (IndexKey) to the DeployObjects whose pods use
// it.
const IndexName = "config"
