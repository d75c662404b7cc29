// Command crdpost finishes the CRD that controller-gen writes from
// pkg/apis. It is part of hack/update-codegen.sh, so its output is
// generated code like the rest of crd/.
//
// It does three things controller-gen cannot express in markers on types
// that DeployObject embeds from k8s.io/api (containers, probes, affinity
// and the like):
//
//   - It bounds every string, list and map that has no bound yet. The API
//     server needs bounds to estimate the cost of CEL rules, and an
//     unbounded field lets one object grow until etcd refuses it. The
//     quantities of the autoscaler's metric targets, the project's own
//     types, are bounded here too: controller-gen takes no MaxLength
//     marker on a resource.Quantity.
//   - It lists the Pod API's volume sources that a DeployObject refuses as
//     properties of a volume, each with a rule saying why. Undeclared, they
//     would be pruned silently and the pod would run without the volume the
//     user asked for.
//   - It refuses the fields of those types that are alpha in the Kubernetes
//     release the project is built on (alphaFields), each with a rule
//     naming its feature gate. An API server without the gate drops such a
//     field from the Deployment it stores, so the pod would run without
//     what was asked, and the Deployment would never match the spec.
//   - It drops the descriptions inside embedded types of other modules
//     (k8s.io/api, Gateway API), keeping the description of the field that
//     holds one: those types are documented by their own `kubectl explain`
//     (for example `kubectl explain pod.spec.containers.livenessProbe`), and
//     their descriptions would make the CRD too large for client-side
//     apply, whose last-applied annotation holds at most 256 KiB.
//   - For the same reason it drops the descriptions below each metric
//     source of spec.autoscaling.metrics (resource, pods, object, external,
//     containerResource): those types restate autoscaling/v2's, field for
//     field, and `kubectl explain hpa.spec.metrics` documents them.
package main

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// Default bounds for fields the markers leave unbounded. Names and keys of
// Kubernetes objects are at most 253 characters; other strings (commands,
// paths, annotation values) get room for a long shell command line.
const (
	defaultMaxLength     = 4096
	nameMaxLength        = 253
	defaultMaxItems      = 64
	defaultMaxProperties = 64
	quantityMaxLength    = 64
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: crdpost <crd.yaml>")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "crdpost:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		return fmt.Errorf("decoding %s: %w", path, err)
	}
	for i := range crd.Spec.Versions {
		root := crd.Spec.Versions[i].Schema.OpenAPIV3Schema
		spec, ok := root.Properties["spec"]
		if !ok {
			return fmt.Errorf("%s: version %s has no spec", path, crd.Spec.Versions[i].Name)
		}
		walk(&spec, "", bound)
		walk(&spec, "", podAPIRules)
		walk(&spec, "", scalingRuleBounds)
		walk(&spec, "", metricTargetBounds)
		volumes, ok := spec.Properties["volumes"]
		if !ok || volumes.Items == nil || volumes.Items.Schema == nil {
			return fmt.Errorf("%s: spec.volumes is not a list", path)
		}
		refuseVolumeSources(volumes.Items.Schema)
		spec.Properties["volumes"] = volumes
		refuseAlphaFields(&spec, reflect.TypeFor[appv1.DeployObjectSpec]())
		dropForeignDescriptions(&spec, reflect.TypeFor[appv1.DeployObjectSpec]())
		if err := dropMetricSourceDescriptions(&spec); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		root.Properties["spec"] = spec
		if status, ok := root.Properties["status"]; ok {
			dropForeignDescriptions(&status, reflect.TypeFor[appv1.DeployObjectStatus]())
			root.Properties["status"] = status
		}
	}
	// Through a map, to leave out the status and the empty creationTimestamp
	// that the typed object would bring.
	typed, err := yaml.Marshal(&crd)
	if err != nil {
		return err
	}
	var obj map[string]any
	if err := yaml.Unmarshal(typed, &obj); err != nil {
		return err
	}
	delete(obj, "status")
	if meta, ok := obj["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	out, err := yaml.Marshal(obj)
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte("---\n"), out...), 0o644)
}

// walk calls f on s and everything below it, with the property name each
// schema is declared under (a list's or map's items take the list's name).
func walk(s *apiextensionsv1.JSONSchemaProps, name string, f func(s *apiextensionsv1.JSONSchemaProps, name string)) {
	f(s, name)
	for k, p := range s.Properties {
		walk(&p, k, f)
		s.Properties[k] = p
	}
	if s.Items != nil && s.Items.Schema != nil {
		walk(s.Items.Schema, name, f)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		walk(s.AdditionalProperties.Schema, name, f)
	}
}

// bound sets the default bounds on s. name is the property name s is
// declared under.
func bound(s *apiextensionsv1.JSONSchemaProps, name string) {
	switch s.Type {
	case "string":
		if s.MaxLength == nil && len(s.Enum) == 0 && s.Format != "date-time" {
			n := int64(defaultMaxLength)
			// Host names (hostAliases) are DNS names, as are object names.
			if name == "name" || name == "key" || strings.HasSuffix(name, "Name") || name == "hostnames" {
				n = nameMaxLength
			}
			s.MaxLength = &n
		}
	case "array":
		if s.MaxItems == nil {
			n := int64(defaultMaxItems)
			s.MaxItems = &n
		}
	case "object":
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil && s.MaxProperties == nil {
			n := int64(defaultMaxProperties)
			s.MaxProperties = &n
		}
	}
}

// podAPIRules adds to the probes, lifecycle hooks and references to
// ConfigMaps and Secrets of every container the Pod API's rules about them,
// so that admission refuses what the Deployment's pod template would be
// refused for.
func podAPIRules(s *apiextensionsv1.JSONSchemaProps, name string) {
	switch name {
	case "configMapRef", "secretRef", "configMapKeyRef", "secretKeyRef":
		// The Kubernetes types let name be empty, for compatibility; the
		// Pod API does not.
		if _, ok := s.Properties["name"]; ok {
			s.XValidations = append(s.XValidations, apiextensionsv1.ValidationRule{
				Rule:      "has(self.name) && self.name.matches('" + dnsSubdomain + "')",
				Message:   "name must be the name of a ConfigMap or Secret: a DNS subdomain",
				FieldPath: ".name",
			})
		}
	case "livenessProbe", "readinessProbe", "startupProbe":
		s.XValidations = append(s.XValidations, exactlyOne("a probe", "exec", "httpGet", "tcpSocket", "grpc"))
		for _, n := range []string{"initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"} {
			setMinimum(s, n, 0)
		}
		setMinimum(s, "terminationGracePeriodSeconds", 1)
		if name == "readinessProbe" {
			s.XValidations = append(s.XValidations, apiextensionsv1.ValidationRule{
				Rule:      "!has(self.terminationGracePeriodSeconds)",
				Message:   "a readiness probe may not set terminationGracePeriodSeconds: it does not restart the container",
				FieldPath: ".terminationGracePeriodSeconds",
			})
		} else {
			// 0 is defaulted to 1.
			s.XValidations = append(s.XValidations, apiextensionsv1.ValidationRule{
				Rule:      "!has(self.successThreshold) || self.successThreshold <= 1",
				Message:   "successThreshold must be 1 for liveness and startup probes",
				FieldPath: ".successThreshold",
			})
		}
	case "lifecycle":
		// The Pod API takes a stop signal only with the pod's spec.os.name,
		// which a DeployObject does not set.
		if _, ok := s.Properties["stopSignal"]; ok {
			s.XValidations = append(s.XValidations, apiextensionsv1.ValidationRule{
				Rule:      "!has(self.stopSignal)",
				Message:   "stopSignal may not be set: the Pod API takes it only with the pod's spec.os.name, which a DeployObject does not set",
				FieldPath: ".stopSignal",
			})
		}
	case "volumeMounts":
		if _, ok := s.Properties["recursiveReadOnly"]; ok && s.Type == "object" {
			rro := s.Properties["recursiveReadOnly"]
			rro.Enum = []apiextensionsv1.JSON{{Raw: []byte(`"Disabled"`)}, {Raw: []byte(`"IfPossible"`)}, {Raw: []byte(`"Enabled"`)}}
			s.Properties["recursiveReadOnly"] = rro
			s.XValidations = append(s.XValidations, apiextensionsv1.ValidationRule{
				Rule:      "!has(self.recursiveReadOnly) || self.recursiveReadOnly == 'Disabled' || ((has(self.readOnly) && self.readOnly) && (!has(self.mountPropagation) || self.mountPropagation == 'None'))",
				Message:   "recursiveReadOnly may be IfPossible or Enabled only with readOnly true and mountPropagation None or unset",
				FieldPath: ".recursiveReadOnly",
			})
		}
	case "restartPolicyRules":
		// A sidecar's rules, as the Pod API bounds them.
		if s.Type == "array" {
			s.MaxItems = ptr[int64](20)
		} else if exitCodes, ok := s.Properties["exitCodes"]; ok {
			s.Required = append(s.Required, "exitCodes")
			operator := exitCodes.Properties["operator"]
			operator.Enum = []apiextensionsv1.JSON{{Raw: []byte(`"In"`)}, {Raw: []byte(`"NotIn"`)}}
			exitCodes.Properties["operator"] = operator
			setMaxItems(&exitCodes, "values", 255)
			s.Properties["exitCodes"] = exitCodes
		}
	case "postStart", "preStop":
		s.XValidations = append(s.XValidations, exactlyOne("a lifecycle hook", "exec", "httpGet", "tcpSocket", "sleep"))
	case "sleep":
		// At most terminationGracePeriodSeconds: a rule on the spec.
		setMinimum(s, "seconds", 0)
	}
}

// alphaFields are the fields of k8s.io/api types that DeployObject embeds
// which are alpha in Kubernetes 1.37, with their feature gates. Each
// release's new fields are decided when k8s.io/api is upgraded: the
// generated CRD's diff lists them, and a field that is beta or GA by then
// is documented in docs/api.md instead.
var alphaFields = []struct {
	in          reflect.Type
	field, gate string
}{
	{reflect.TypeFor[corev1.HTTPGetAction](), "protocol", "H2CContainerProbe"},
	{reflect.TypeFor[corev1.GRPCAction](), "mode", "GRPCContainerProbeTLS"},
	{reflect.TypeFor[corev1.VolumeMount](), "bindMountOptions", "VolumeBindMountOptions"},
	{reflect.TypeFor[corev1.ConfigMapVolumeSource](), "defaultUser", "AtomicWriteVolumeUserFields"},
	{reflect.TypeFor[corev1.SecretVolumeSource](), "defaultUser", "AtomicWriteVolumeUserFields"},
	{reflect.TypeFor[corev1.DownwardAPIVolumeSource](), "defaultUser", "AtomicWriteVolumeUserFields"},
	{reflect.TypeFor[corev1.ProjectedVolumeSource](), "defaultUser", "AtomicWriteVolumeUserFields"},
	{reflect.TypeFor[corev1.KeyToPath](), "user", "AtomicWriteVolumeUserFields"},
	{reflect.TypeFor[corev1.DownwardAPIVolumeFile](), "user", "AtomicWriteVolumeUserFields"},
	{reflect.TypeFor[corev1.ServiceAccountTokenProjection](), "user", "AtomicWriteVolumeUserFields"},
	{reflect.TypeFor[corev1.ClusterTrustBundleProjection](), "user", "AtomicWriteVolumeUserFields"},
}

// refuseAlphaFields walks s, the schema of the Go type t, and adds a rule
// refusing each of alphaFields wherever its type appears.
func refuseAlphaFields(s *apiextensionsv1.JSONSchemaProps, t reflect.Type) {
	walkTyped(s, t, func(s *apiextensionsv1.JSONSchemaProps, t reflect.Type) bool {
		for _, a := range alphaFields {
			if _, ok := s.Properties[a.field]; ok && a.in == t {
				s.XValidations = append(s.XValidations, apiextensionsv1.ValidationRule{
					Rule:      "!has(self." + a.field + ")",
					Message:   a.field + " is alpha in Kubernetes 1.37 (feature gate " + a.gate + ") and not supported",
					FieldPath: "." + a.field,
				})
			}
		}
		return true
	})
}

// dnsSubdomain is the pattern of most Kubernetes object names.
const dnsSubdomain = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`

// exactlyOne is a rule that an object sets exactly one of fields.
func exactlyOne(what string, fields ...string) apiextensionsv1.ValidationRule {
	has := make([]string, len(fields))
	for i, f := range fields {
		has[i] = "has(self." + f + ")"
	}
	last := len(fields) - 1
	return apiextensionsv1.ValidationRule{
		Rule:    "[" + strings.Join(has, ", ") + "].filter(x, x).size() == 1",
		Message: what + " must set exactly one of " + strings.Join(fields[:last], ", ") + " and " + fields[last],
	}
}

// scalingRuleBounds gives spec.autoscaling.behavior the rules the
// HorizontalPodAutoscaler API checks (validateScalingRules and
// validateScalingPolicy in k8s.io/kubernetes), so that admission refuses
// what the HorizontalPodAutoscaler would be refused for, naming the field.
// A policies list that is present must not be empty: the API server fills
// in the default policies only when the list is absent.
func scalingRuleBounds(s *apiextensionsv1.JSONSchemaProps, name string) {
	switch {
	case name == "scaleUp" || name == "scaleDown":
		setMinimum(s, "stabilizationWindowSeconds", 0)
		setMaximum(s, "stabilizationWindowSeconds", 3600)
		setEnum(s, "selectPolicy", "Max", "Min", "Disabled")
		if p, ok := s.Properties["tolerance"]; ok {
			// Bounded for the cost of the rule, which parses it.
			p.MaxLength = ptr[int64](quantityMaxLength)
			p.XValidations = append(p.XValidations, apiextensionsv1.ValidationRule{
				Rule:    "!isQuantity(string(self)) || !quantity(string(self)).isLessThan(quantity('0'))",
				Message: "tolerance must be a quantity of at least 0",
			})
			s.Properties["tolerance"] = p
		}
	case name == "policies" && s.Type == "array":
		s.MinItems = ptr[int64](1)
	case name == "policies" && s.Type == "object":
		setEnum(s, "type", "Pods", "Percent")
		setMinimum(s, "value", 1)
		setMinimum(s, "periodSeconds", 1)
		setMaximum(s, "periodSeconds", 1800)
	}
}

// metricTargetBounds bounds the quantities of the targets of
// spec.autoscaling.metrics (value, averageValue), which controller-gen
// takes no MaxLength marker for: their CEL rules parse the quantity, whose
// cost grows with its length, and unbounded they would exceed the cost
// budget.
func metricTargetBounds(s *apiextensionsv1.JSONSchemaProps, name string) {
	if name != "target" {
		return
	}
	for _, q := range []string{"value", "averageValue"} {
		if p, ok := s.Properties[q]; ok && p.XIntOrString && p.MaxLength == nil {
			n := int64(quantityMaxLength)
			p.MaxLength = &n
			s.Properties[q] = p
		}
	}
}

// setEnum limits a string property to values, which bound its length too.
func setEnum(s *apiextensionsv1.JSONSchemaProps, property string, values ...string) {
	p, ok := s.Properties[property]
	if !ok {
		return
	}
	p.Enum = nil
	for _, v := range values {
		p.Enum = append(p.Enum, apiextensionsv1.JSON{Raw: []byte(`"` + v + `"`)})
	}
	p.MaxLength = nil
	s.Properties[property] = p
}

func setMaximum(s *apiextensionsv1.JSONSchemaProps, property string, maximum float64) {
	if p, ok := s.Properties[property]; ok {
		p.Maximum = &maximum
		s.Properties[property] = p
	}
}

func setMaxItems(s *apiextensionsv1.JSONSchemaProps, property string, maxItems int64) {
	p := s.Properties[property]
	p.MaxItems = &maxItems
	s.Properties[property] = p
}

func setMinimum(s *apiextensionsv1.JSONSchemaProps, property string, minimum float64) {
	if p, ok := s.Properties[property]; ok {
		p.Minimum = &minimum
		s.Properties[property] = p
	}
}

// refuseVolumeSources declares, on the schema of a volume, every source of
// corev1.VolumeSource that appv1.Volume does not support, and a rule
// refusing each.
func refuseVolumeSources(volume *apiextensionsv1.JSONSchemaProps) {
	supported := jsonNames(reflect.TypeFor[appv1.Volume]())
	for _, src := range jsonNames(reflect.TypeFor[corev1.VolumeSource]()) {
		if slices.Contains(supported, src) {
			continue
		}
		volume.Properties[src] = apiextensionsv1.JSONSchemaProps{
			Type:                   "object",
			Description:            src + " is a volume source of the Pod API that DeployObject refuses.",
			XPreserveUnknownFields: ptr(true),
		}
		volume.XValidations = append(volume.XValidations, apiextensionsv1.ValidationRule{
			Rule:      "!has(self." + src + ")",
			Message:   refusal(src),
			FieldPath: "." + src,
		})
	}
}

// refusal says why a volume source is refused.
func refusal(src string) string {
	const supported = "; use configMap, secret, emptyDir, persistentVolumeClaim, projected or downwardAPI"
	switch src {
	case "hostPath":
		return "hostPath volumes are not supported: they expose the node's filesystem to the pod" + supported
	case "ephemeral":
		return "ephemeral volumes are not supported: they create PersistentVolumeClaims, which a platform grants per namespace" + supported
	case "gitRepo":
		return "gitRepo volumes are not supported: they are deprecated and run git on the node" + supported
	case "image":
		return "image volumes are not supported yet" + supported
	}
	return src + " volumes are not supported: they attach storage directly rather than through a PersistentVolumeClaim" + supported
}

func jsonNames(t reflect.Type) []string {
	var names []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" {
			names = append(names, name)
		}
	}
	return names
}

func ptr[T any](v T) *T { return &v }

// ownPackage is the import path prefix of DeployObject's own types.
const ownPackage = "deployobject.dev/controller/"

// dropForeignDescriptions walks s, the schema of the Go type t, and drops
// every description below a property whose type comes from another module,
// keeping that property's own description.
func dropForeignDescriptions(s *apiextensionsv1.JSONSchemaProps, t reflect.Type) {
	walkTyped(s, t, func(s *apiextensionsv1.JSONSchemaProps, t reflect.Type) bool {
		if strings.HasPrefix(t.PkgPath(), ownPackage) {
			return true
		}
		walkBelow(s, func(c *apiextensionsv1.JSONSchemaProps) { c.Description = "" })
		return false
	})
}

// dropMetricSourceDescriptions drops the descriptions below each property
// of spec.autoscaling.metrics' items, keeping the properties' own.
func dropMetricSourceDescriptions(spec *apiextensionsv1.JSONSchemaProps) error {
	autoscaling, ok := spec.Properties["autoscaling"]
	if !ok {
		return fmt.Errorf("spec has no autoscaling")
	}
	metrics, ok := autoscaling.Properties["metrics"]
	if !ok || metrics.Items == nil || metrics.Items.Schema == nil {
		return fmt.Errorf("spec.autoscaling.metrics is not a list")
	}
	for name, source := range metrics.Items.Schema.Properties {
		walkBelow(&source, func(c *apiextensionsv1.JSONSchemaProps) { c.Description = "" })
		metrics.Items.Schema.Properties[name] = source
	}
	autoscaling.Properties["metrics"] = metrics
	spec.Properties["autoscaling"] = autoscaling
	return nil
}

// walkTyped calls f on s, the schema of the Go struct type t (without the
// pointers, slices and maps around it), and goes on below s, each schema
// with its Go type, while f returns true.
func walkTyped(s *apiextensionsv1.JSONSchemaProps, t reflect.Type, f func(*apiextensionsv1.JSONSchemaProps, reflect.Type) bool) {
	t = elem(t)
	if t.Kind() != reflect.Struct || !f(s, t) {
		return
	}
	fields := map[string]reflect.Type{}
	collectFields(t, fields)
	for name, p := range s.Properties {
		if ft, ok := fields[name]; ok {
			walkTyped(&p, ft, f)
			s.Properties[name] = p
		}
	}
	if s.Items != nil && s.Items.Schema != nil {
		walkTyped(s.Items.Schema, t, f)
	}
}

// collectFields maps the JSON names of t's fields to their types, with the
// fields of inlined structs as t's own.
func collectFields(t reflect.Type, fields map[string]reflect.Type) {
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		// k8s.io/api tags its embedded structs json:",inline" up to 1.36
		// and json:"" since; encoding/json inlines both.
		if name == "" && (strings.Contains(opts, "inline") || f.Anonymous && elem(f.Type).Kind() == reflect.Struct) {
			collectFields(elem(f.Type), fields)
			continue
		}
		if name != "" && name != "-" {
			fields[name] = f.Type
		}
	}
}

// elem is t without pointers, slices and maps around it.
func elem(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	return t
}

// walkBelow calls f on everything below s, not on s itself.
func walkBelow(s *apiextensionsv1.JSONSchemaProps, f func(*apiextensionsv1.JSONSchemaProps)) {
	walk(s, "", func(c *apiextensionsv1.JSONSchemaProps, _ string) {
		if c != s {
			f(c)
		}
	})
}
