package crd_test

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	schemavalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/test/cases"
)

// schema validates DeployObjects in-process the way the API server does:
// defaulting, OpenAPI validation, list-map keys and CEL rules.
type schema struct {
	structural *structuralschema.Structural
	openAPI    schemavalidation.SchemaValidator
	cel        *cel.Validator
}

func loadCRD(t *testing.T) (*apiextensions.CustomResourceDefinition, *schema) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(".", "app.deployobject.dev_deployobjects.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var v1crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &v1crd); err != nil {
		t.Fatalf("decoding CRD: %v", err)
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(&v1crd)
	var crd apiextensions.CustomResourceDefinition
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(&v1crd, &crd, nil); err != nil {
		t.Fatalf("converting CRD: %v", err)
	}
	if len(crd.Spec.Versions) != 1 {
		t.Fatalf("CRD has %d versions, want 1", len(crd.Spec.Versions))
	}
	props := schemaOf(&crd)
	structural, err := structuralschema.NewStructural(props)
	if err != nil {
		t.Fatalf("schema is not structural: %v", err)
	}
	openAPI, _, err := schemavalidation.NewSchemaValidator(props)
	if err != nil {
		t.Fatalf("building schema validator: %v", err)
	}
	return &crd, &schema{structural: structural, openAPI: openAPI, cel: cel.NewValidator(structural, true, celconfig.PerCallLimit)}
}

func schemaOf(crd *apiextensions.CustomResourceDefinition) *apiextensions.JSONSchemaProps {
	if v := crd.Spec.Versions[0].Schema; v != nil {
		return v.OpenAPIV3Schema
	}
	return crd.Spec.Validation.OpenAPIV3Schema
}

// unknownFields are the paths of obj's fields the schema does not declare,
// which the API server would drop: an accepted object with one of them
// was accepted without it, and proves nothing about it.
func (s *schema) unknownFields(obj map[string]any) []string {
	return pruning.PruneWithOptions(runtime.DeepCopyJSON(obj), s.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
}

func (s *schema) validate(obj map[string]any) field.ErrorList {
	structuraldefaulting.Default(obj, s.structural)
	errs := schemavalidation.ValidateCustomResource(nil, obj, s.openAPI)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, s.structural, obj)...)
	celErrs, _ := s.cel.Validate(context.Background(), nil, s.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...)
}

// TestCRDIsValid runs the API server's own validation of the CRD, which
// compiles every CEL rule and checks its worst-case cost.
func TestCRDIsValid(t *testing.T) {
	crd, _ := loadCRD(t)
	if errs := crdvalidation.ValidateCustomResourceDefinition(context.Background(), crd); len(errs) > 0 {
		t.Fatalf("the API server would reject the CRD:\n%v", errs.ToAggregate())
	}
	if crd.Spec.Names.ShortNames[0] != "dobj" || crd.Spec.Scope != apiextensions.NamespaceScoped {
		t.Errorf("names = %+v, scope %s", crd.Spec.Names, crd.Spec.Scope)
	}
	// With one version, the internal form holds subresources and schema
	// at the top level.
	sub := crd.Spec.Subresources
	if sub == nil || sub.Status == nil || sub.Scale == nil ||
		sub.Scale.SpecReplicasPath != ".spec.replicas" || sub.Scale.StatusReplicasPath != ".status.replicas" ||
		sub.Scale.LabelSelectorPath == nil || *sub.Scale.LabelSelectorPath != ".status.selector" {
		t.Errorf("subresources = %+v, want status and scale on spec.replicas/status.replicas/status.selector", sub)
	}
}

// TestEveryFieldIsDocumented keeps `kubectl explain` useful: every field
// of DeployObject's own types has a description, and so does every field
// that holds a type of another module (k8s.io/api, the Gateway API). Below
// such a field the descriptions are dropped (hack/crdpost): the type's own
// `kubectl explain` documents it, and the CRD must fit client-side apply
// (TestCRDFitsClientSideApply). So are those below each metric source of
// spec.autoscaling.metrics, which restate autoscaling/v2's.
func TestEveryFieldIsDocumented(t *testing.T) {
	crd, _ := loadCRD(t)
	var walk func(path string, p *apiextensions.JSONSchemaProps, typ reflect.Type)
	walk = func(path string, p *apiextensions.JSONSchemaProps, typ reflect.Type) {
		fields := jsonFields(typ)
		for name, child := range p.Properties {
			childPath := path + "." + name
			if child.Description == "" {
				t.Errorf("%s has no description", childPath)
			}
			// The volume sources hack/crdpost declares to refuse them are
			// not in the Go type. Below a metric source, it drops the
			// descriptions that restate autoscaling/v2's.
			if ft, ok := fields[name]; ok && path != ".spec.autoscaling.metrics[]" {
				if e := elemType(ft); e.Kind() == reflect.Struct && strings.HasPrefix(e.PkgPath(), "deployobject.dev/") {
					walk(childPath, &child, e)
				}
			}
		}
		if p.Items != nil && p.Items.Schema != nil {
			walk(path+"[]", p.Items.Schema, typ)
		}
	}
	root := schemaOf(crd)
	spec, status := root.Properties["spec"], root.Properties["status"]
	walk(".spec", &spec, reflect.TypeFor[appv1.DeployObjectSpec]())
	walk(".status", &status, reflect.TypeFor[appv1.DeployObjectStatus]())
}

// jsonFields maps the JSON names of the struct t's fields to their types,
// the fields of inlined structs as t's own.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	if t.Kind() != reflect.Struct {
		return fields
	}
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" && (strings.Contains(opts, "inline") || f.Anonymous && elemType(f.Type).Kind() == reflect.Struct) {
			maps.Copy(fields, jsonFields(elemType(f.Type)))
			continue
		}
		if name != "" && name != "-" {
			fields[name] = f.Type
		}
	}
	return fields
}

// elemType is t without the pointers, slices and maps around it.
func elemType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	return t
}

// TestCRDDirectoryHoldsOnlyCRDs: `kubectl apply -f crd/` applies every
// .yaml, .yml and .json file of the directory, and fails on one that is no
// Kubernetes object, such as a kustomization.yaml.
func TestCRDDirectoryHoldsOnlyCRDs(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	crds := 0
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); e.IsDir() || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
			continue
		}
		data, err := os.ReadFile(e.Name())
		if err != nil {
			t.Fatal(err)
		}
		var obj struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal(data, &obj); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		if obj.APIVersion != "apiextensions.k8s.io/v1" || obj.Kind != "CustomResourceDefinition" {
			t.Errorf("crd/%s is a %s %s, which `kubectl apply -f crd/` refuses", e.Name(), obj.APIVersion, obj.Kind)
		}
		crds++
	}
	if crds == 0 {
		t.Error("crd/ holds no CRD")
	}
}

// TestCRDFitsClientSideApply: `kubectl apply -f crd/` (client-side apply)
// stores the whole object as JSON in the last-applied-configuration
// annotation, and annotations hold at most 256 KiB; over that, the apply
// fails with "metadata.annotations: Too long".
func TestCRDFitsClientSideApply(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(".", "app.deployobject.dev_deployobjects.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	asJSON, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	const annotationLimit, budget = 256 * 1024, 240_000
	t.Logf("the CRD is %d bytes as JSON, %.0f %% of the %d bytes an annotation holds", len(asJSON), 100*float64(len(asJSON))/annotationLimit, annotationLimit)
	if len(asJSON) > budget {
		t.Errorf("the CRD is %d bytes as JSON, over the budget of %d bytes (the last-applied-configuration annotation of `kubectl apply -f crd/` holds %d)", len(asJSON), budget, annotationLimit)
	}
}

func TestValidObjects(t *testing.T) {
	_, s := loadCRD(t)
	for _, tc := range []struct {
		name string
		obj  map[string]any
	}{
		{"every field", cases.Valid("web")},
		{"minimal", map[string]any{"apiVersion": "app.deployobject.dev/v1", "kind": "DeployObject",
			"metadata": map[string]any{"name": "hello"}, "spec": map[string]any{"image": "nginx"}}},
		{"zero replicas", func() map[string]any {
			o := cases.Valid("web")
			o["spec"].(map[string]any)["replicas"] = int64(0)
			return o
		}()},
		{"UDP and TCP on one port number", func() map[string]any {
			o := cases.Valid("dns")
			// The liveness probe names the port "http", monitoring "metrics".
			delete(o["spec"].(map[string]any), "livenessProbe")
			delete(o["spec"].(map[string]any), "monitoring")
			o["spec"].(map[string]any)["ports"] = []any{
				map[string]any{"name": "dns-udp", "containerPort": int64(53), "protocol": "UDP"},
				map[string]any{"name": "dns-tcp", "containerPort": int64(53), "protocol": "TCP"},
			}
			return o
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if unknown := s.unknownFields(tc.obj); len(unknown) > 0 {
				t.Errorf("unknown fields %s", strings.Join(unknown, ", "))
			}
			if errs := s.validate(tc.obj); len(errs) > 0 {
				t.Fatalf("rejected: %v", errs.ToAggregate())
			}
		})
	}
}

// TestAcceptedObjects: values at the edge of a rule that must pass.
func TestAcceptedObjects(t *testing.T) {
	_, s := loadCRD(t)
	for _, tc := range cases.AcceptedTable() {
		t.Run(tc.Name, func(t *testing.T) {
			obj := cases.Valid("web")
			tc.Mutate(obj)
			if unknown := s.unknownFields(obj); len(unknown) > 0 {
				t.Errorf("unknown fields %s", strings.Join(unknown, ", "))
			}
			if errs := s.validate(obj); len(errs) > 0 {
				t.Fatalf("rejected: %v", errs.ToAggregate())
			}
		})
	}
}

// etcdRequestLimit is etcd's default --max-request-bytes: the largest
// object the API server can store.
const etcdRequestLimit = 1536 * 1024

// TestLargestObject: the object with every bound at its maximum is valid,
// and its JSON, which is how the API server stores a custom resource,
// leaves room in etcd's limit for what the API server and others add:
// managedFields (every env name and map key again), status, labels and
// annotations.
func TestLargestObject(t *testing.T) {
	_, s := loadCRD(t)
	obj := cases.Largest("big")
	if unknown := s.unknownFields(obj); len(unknown) > 0 {
		t.Errorf("unknown fields %s", strings.Join(unknown, ", "))
	}
	if errs := s.validate(obj); len(errs) > 0 {
		t.Fatalf("rejected: %v", errs.ToAggregate())
	}
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	// managedFields take about 36 KB for this object (every env name and
	// map key again), and the Ready condition's message may take 32 KiB.
	const reserve = 80 * 1024
	t.Logf("largest object: %d bytes of JSON, %d bytes left of etcd's %d", len(data), etcdRequestLimit-len(data), etcdRequestLimit)
	if len(data) > etcdRequestLimit-reserve {
		t.Errorf("the largest object takes %d bytes of JSON, leaving less than %d of etcd's %d bytes", len(data), reserve, etcdRequestLimit)
	}
}

func TestDefaults(t *testing.T) {
	_, s := loadCRD(t)
	obj := map[string]any{"apiVersion": "app.deployobject.dev/v1", "kind": "DeployObject",
		"metadata": map[string]any{"name": "hello"},
		"spec":     map[string]any{"image": "nginx", "ports": []any{map[string]any{"name": "http", "containerPort": int64(80)}}}}
	if errs := s.validate(obj); len(errs) > 0 {
		t.Fatalf("rejected: %v", errs.ToAggregate())
	}
	spec := obj["spec"].(map[string]any)
	port := spec["ports"].([]any)[0].(map[string]any)
	if spec["replicas"] != int64(1) || spec["serviceType"] != "ClusterIP" || port["protocol"] != "TCP" || spec["configRollout"] != "Enabled" {
		t.Errorf("defaults: replicas=%v serviceType=%v protocol=%v configRollout=%v, want 1, ClusterIP, TCP, Enabled", spec["replicas"], spec["serviceType"], port["protocol"], spec["configRollout"])
	}
}

func TestInvalidObjects(t *testing.T) {
	_, s := loadCRD(t)
	table := cases.InvalidTable()
	if len(table) < 25 {
		t.Fatalf("the table has %d cases, want at least 25", len(table))
	}
	for _, tc := range table {
		t.Run(tc.Name, func(t *testing.T) {
			obj := cases.Valid("web")
			tc.Mutate(obj)
			errs := s.validate(obj)
			if len(errs) == 0 {
				t.Fatal("accepted, want rejected")
			}
			if msg := errs.ToAggregate().Error(); !strings.Contains(msg, tc.Field) {
				t.Errorf("message does not name %s: %s", tc.Field, msg)
			}
		})
	}
}

// TestRefusedVolumeSourcesSayWhy: a refused volume source is named in the
// message, with the reason and what to use instead, rather than pruned.
func TestRefusedVolumeSourcesSayWhy(t *testing.T) {
	_, s := loadCRD(t)
	for _, tc := range []struct {
		source  string
		content map[string]any
		why     string
	}{
		{"hostPath", map[string]any{"path": "/etc"}, "they expose the node's filesystem to the pod"},
		{"nfs", map[string]any{"server": "nfs.example.com", "path": "/export"}, "rather than through a PersistentVolumeClaim"},
		{"ephemeral", map[string]any{"volumeClaimTemplate": map[string]any{}}, "they create PersistentVolumeClaims"},
		{"gitRepo", map[string]any{"repository": "https://example.com/repo.git"}, "they are deprecated and run git on the node"},
	} {
		t.Run(tc.source, func(t *testing.T) {
			obj := cases.Valid("web")
			spec := obj["spec"].(map[string]any)
			spec["volumes"] = append(spec["volumes"].([]any), map[string]any{"name": "refused", tc.source: tc.content})
			msg := s.validate(obj).ToAggregate().Error()
			want := "spec.volumes[2]." + tc.source + ": "
			if !strings.Contains(msg, want) || !strings.Contains(msg, tc.why) || !strings.Contains(msg, "use configMap, secret, emptyDir") {
				t.Errorf("message does not name %s with its reason %q and the alternatives: %s", want, tc.why, msg)
			}
		})
	}
}
