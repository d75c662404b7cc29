// Package cases holds DeployObjects that admission must reject, shared by the
// in-process schema tests and the end-to-end tests against a real API server,
// so that both check the same table.
package cases

import (
	"fmt"
	"strings"
)

// The bounds that the tables and the largest object are built from: the
// CRD's (the markers in pkg/apis/app/v1/types.go), which the largest object
// meets and the invalid table exceeds, and the longest extended resource
// name the Pod API takes.
const (
	MaxImageLength        = 1024
	MaxCommand            = 64
	MaxArgs               = 256
	MaxArgLength          = 4096
	MaxEnv                = 128
	MaxEnvNameLength      = 128
	MaxEnvValueLength     = 1024
	MaxResources          = 16
	MaxResourceNameLength = 308
	MaxQuantityLength     = 64
	MaxPorts              = 16
	MaxPortNameLength     = 15
	MaxAppProtocolLength  = 317
	MaxNameLength         = 63
)

// Invalid is a DeployObject the API server must reject.
type Invalid struct {
	Name string
	// Field is what the rejection message must name.
	Field string
	// Mutate turns Valid() into the invalid object.
	Mutate func(obj map[string]any)
}

// Valid is a DeployObject that exercises every field, as unstructured
// content, named name.
func Valid(name string) map[string]any {
	return map[string]any{
		"apiVersion": "app.deployobject.dev/v1",
		"kind":       "DeployObject",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"image":    "nginx:1.27",
			"replicas": int64(2),
			"command":  []any{"nginx"},
			"args":     []any{"-g", "daemon off;"},
			"env": []any{
				map[string]any{"name": "MODE", "value": "prod"},
				map[string]any{"name": "LEVEL", "valueFrom": map[string]any{"configMapKeyRef": map[string]any{"name": "cfg", "key": "level"}}},
			},
			"resources": map[string]any{
				"requests": map[string]any{"cpu": "100m", "memory": "64Mi"},
				"limits":   map[string]any{"cpu": "1", "memory": "128Mi"},
			},
			"ports": []any{
				map[string]any{"name": "http", "containerPort": int64(8080), "servicePort": int64(80), "appProtocol": "http"},
				map[string]any{"name": "metrics", "containerPort": int64(9090), "protocol": "TCP"},
			},
			"serviceType": "NodePort",
		},
	}
}

// Accepted is a variation of Valid() the API server must accept.
type Accepted struct {
	Name   string
	Mutate func(obj map[string]any)
}

// AcceptedTable lists values close to a rule's edge that are valid, so that
// tightening a rule too far shows up as a rejection.
func AcceptedTable() []Accepted {
	hex := strings.Repeat("0123456789abcdef", 4)
	return []Accepted{
		{"image with registry, port, path and tag", setSpec("image", "registry.example.com:5000/team/app:v1.2")},
		{"image with localhost registry", setSpec("image", "localhost:5000/app")},
		{"image with an IPv6 registry", setSpec("image", "[fd00::1]:5000/app:1")},
		{"image with a digest", setSpec("image", "app@sha256:"+hex)},
		{"image with tag and digest", setSpec("image", "docker.io/library/nginx:1.27@sha256:"+hex)},
		{"image with an uppercase tag", setSpec("image", "nginx:ALPINE")},
		{"image with an uppercase registry", setSpec("image", "Registry.Example.com/app")},
		{"image with separators", setSpec("image", "my_org/my-app__x.y--z:1.0_rc-1")},
		{"image of the longest tag", setSpec("image", "nginx:"+strings.Repeat("t", 128))},
		{"appProtocol IANA name", setPort("appProtocol", "http")},
		{"appProtocol prefixed", setPort("appProtocol", "kubernetes.io/h2c")},
		{"appProtocol uppercase name", setPort("appProtocol", "example.com/My_Proto.v2")},
		{"env fieldRef on an annotation", func(o map[string]any) {
			env(o, 1)["valueFrom"] = map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.annotations['example.com/owner']"}}
		}},
		{"env resourceFieldRef", func(o map[string]any) {
			env(o, 1)["valueFrom"] = map[string]any{"resourceFieldRef": map[string]any{"containerName": "app", "resource": "limits.memory", "divisor": "1Mi"}}
		}},
		{"env secretKeyRef without a name", func(o map[string]any) {
			env(o, 1)["valueFrom"] = map[string]any{"secretKeyRef": map[string]any{"key": "k"}}
		}},
		{"env value empty", func(o map[string]any) { env(o, 0)["value"] = "" }},
		{"integer quantity", func(o map[string]any) { resources(o, "limits")["cpu"] = int64(2) }},
	}
}

// dnsSubdomain is a DNS subdomain of exactly n characters, made of labels
// of 63 characters and a shorter last one, each starting with c. n must not
// leave a '.' at the end (n % 64 != 0).
func dnsSubdomain(n int, c byte) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		label := min(63, n-b.Len())
		b.WriteByte(c)
		b.WriteString(strings.Repeat("x", label-1))
	}
	return b.String()
}

// Largest is the largest valid DeployObject, named by a name of the
// longest length: every bounded list and string at its maximum. It has one
// replica: the replica count does not change the object's size.
func Largest(namePrefix string) map[string]any {
	name := namePrefix + strings.Repeat("x", MaxNameLength-len(namePrefix))
	long := strings.Repeat("x", MaxArgLength)
	// A reference of the longest length: a registry, a path, a tag of the
	// longest length and a digest whose hex part fills up the rest.
	image := "registry.example.com:5000/team/app:" + strings.Repeat("t", 128) + "@sha256:"
	image += strings.Repeat("f", MaxImageLength-len(image))
	quantity := strings.Repeat("0", MaxQuantityLength)
	requests, limits := map[string]any{}, map[string]any{}
	for i := range MaxResources {
		// Extended resources: the Pod API wants "requests.<name>" to be a
		// qualified name too, so the prefix is at most 253 - 9 characters,
		// and the name part 63. A zero quantity needs no node to provide
		// it.
		k := dnsSubdomain(244, 'a') + "/" + fmt.Sprintf("r%02d", i) + strings.Repeat("x", MaxResourceNameLength-244-1-3)
		requests[k], limits[k] = quantity, quantity
	}
	return map[string]any{
		"apiVersion": "app.deployobject.dev/v1",
		"kind":       "DeployObject",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"image":    image,
			"replicas": int64(1),
			"command":  repeat(MaxCommand, func(int) any { return long }),
			"args":     repeat(MaxArgs, func(int) any { return long }),
			"env": repeat(MaxEnv, func(i int) any {
				return map[string]any{
					"name":  fmt.Sprintf("V%03d_", i) + strings.Repeat("N", MaxEnvNameLength-5),
					"value": strings.Repeat("v", MaxEnvValueLength),
				}
			}),
			"resources": map[string]any{"requests": requests, "limits": limits},
			"ports": repeat(MaxPorts, func(i int) any {
				return map[string]any{
					"name":          fmt.Sprintf("port-%02d", i) + strings.Repeat("x", MaxPortNameLength-7),
					"containerPort": int64(10000 + i),
					"servicePort":   int64(20000 + i),
					"protocol":      "TCP",
					"appProtocol":   dnsSubdomain(253, 'p') + "/" + strings.Repeat("a", MaxAppProtocolLength-254),
				}
			}),
			"serviceType": "NodePort",
		},
	}
}

func spec(obj map[string]any) map[string]any { return obj["spec"].(map[string]any) }
func port(obj map[string]any, i int) map[string]any {
	return spec(obj)["ports"].([]any)[i].(map[string]any)
}
func env(obj map[string]any, i int) map[string]any {
	return spec(obj)["env"].([]any)[i].(map[string]any)
}
func resources(obj map[string]any, kind string) map[string]any {
	return spec(obj)["resources"].(map[string]any)[kind].(map[string]any)
}

func setSpec(key string, v any) func(map[string]any) {
	return func(obj map[string]any) { spec(obj)[key] = v }
}

func setPort(key string, v any) func(map[string]any) {
	return func(obj map[string]any) { port(obj, 0)[key] = v }
}

func repeat(n int, item func(i int) any) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = item(i)
	}
	return out
}

// InvalidTable lists at least 25 mistakes, each with the field the API
// server's message must name.
func InvalidTable() []Invalid {
	return []Invalid{
		{"image missing", "spec.image", func(o map[string]any) { delete(spec(o), "image") }},
		{"image empty", "spec.image", setSpec("image", "")},
		{"image with a space", "spec.image", setSpec("image", "nginx 1.27")},
		{"image with a tab", "spec.image", setSpec("image", "nginx\t:1.27")},
		{"image with a control character", "spec.image", setSpec("image", "nginx\x00:1.27")},
		{"image with uppercase in the repository", "spec.image", setSpec("image", "Nginx:1")},
		{"image with uppercase in a path component", "spec.image", setSpec("image", "registry.example.com/Team/app:v1")},
		{"image with an empty tag", "spec.image", setSpec("image", "nginx:")},
		{"image with a short digest", "spec.image", setSpec("image", "nginx@sha256:abc")},
		{"replicas negative", "spec.replicas", setSpec("replicas", int64(-1))},
		{"replicas too many", "spec.replicas", setSpec("replicas", int64(10001))},
		{"replicas not a number", "spec.replicas", setSpec("replicas", "two")},
		{"serviceType unknown", "spec.serviceType", setSpec("serviceType", "External")},
		{"NodePort without ports", "spec.serviceType", func(o map[string]any) { delete(spec(o), "ports") }},
		{"port name missing", "spec.ports[0].name", func(o map[string]any) { delete(port(o, 0), "name") }},
		{"port name too long", "spec.ports[0].name", setPort("name", "a-very-long-name")},
		{"port name uppercase", "spec.ports[0].name", setPort("name", "HTTP")},
		{"port name without a letter", "spec.ports[0].name", setPort("name", "8080")},
		{"port name with doubled hyphen", "spec.ports[0].name", setPort("name", "web--x")},
		{"port name with leading hyphen", "spec.ports[0].name", setPort("name", "-web")},
		{"containerPort zero", "spec.ports[0].containerPort", setPort("containerPort", int64(0))},
		{"containerPort too large", "spec.ports[0].containerPort", setPort("containerPort", int64(70000))},
		{"containerPort missing", "spec.ports[0].containerPort", func(o map[string]any) { delete(port(o, 0), "containerPort") }},
		{"servicePort zero", "spec.ports[0].servicePort", setPort("servicePort", int64(0))},
		{"protocol unknown", "spec.ports[0].protocol", setPort("protocol", "HTTP")},
		{"duplicate port name", "spec.ports[1]", func(o map[string]any) { port(o, 1)["name"] = "http" }},
		{"duplicate servicePort", "spec.ports", func(o map[string]any) { port(o, 1)["servicePort"] = int64(80) }},
		{"duplicate containerPort", "spec.ports", func(o map[string]any) { port(o, 1)["containerPort"] = int64(8080) }},
		{"too many ports", "spec.ports", setSpec("ports", repeat(17, func(i int) any {
			return map[string]any{"name": fmt.Sprintf("p%d", i), "containerPort": int64(1000 + i)}
		}))},
		{"env name missing", "spec.env[0].name", func(o map[string]any) { delete(env(o, 0), "name") }},
		{"env name too long", "spec.env[0].name", func(o map[string]any) { env(o, 0)["name"] = strings.Repeat("N", MaxEnvNameLength+1) }},
		{"env value too long", "spec.env[0].value", func(o map[string]any) { env(o, 0)["value"] = strings.Repeat("v", MaxEnvValueLength+1) }},
		{"env fileKeyRef", "spec.env[1].valueFrom.fileKeyRef", func(o map[string]any) {
			env(o, 1)["valueFrom"] = map[string]any{"fileKeyRef": map[string]any{"volumeName": "cfg", "path": "app.env", "key": "LEVEL"}}
		}},
		{"env configMapKeyRef name too long", "spec.env[1].valueFrom.configMapKeyRef.name", func(o map[string]any) {
			env(o, 1)["valueFrom"].(map[string]any)["configMapKeyRef"].(map[string]any)["name"] = strings.Repeat("c", 254)
		}},
		{"env secretKeyRef key too long", "spec.env[1].valueFrom.secretKeyRef.key", func(o map[string]any) {
			env(o, 1)["valueFrom"] = map[string]any{"secretKeyRef": map[string]any{"name": "s", "key": strings.Repeat("k", 254)}}
		}},
		{"env fieldRef fieldPath too long", "spec.env[1].valueFrom.fieldRef.fieldPath", func(o map[string]any) {
			env(o, 1)["valueFrom"] = map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.annotations['" + strings.Repeat("a", 340) + "']"}}
		}},
		{"env resourceFieldRef resource too long", "spec.env[1].valueFrom.resourceFieldRef.resource", func(o map[string]any) {
			env(o, 1)["valueFrom"] = map[string]any{"resourceFieldRef": map[string]any{"resource": "limits." + strings.Repeat("r", 64)}}
		}},
		{"duplicate env name", "spec.env[1]", func(o map[string]any) { env(o, 1)["name"] = "MODE" }},
		{"env value and valueFrom", "spec.env", func(o map[string]any) {
			env(o, 0)["valueFrom"] = map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.name"}}
		}},
		{"env valueFrom with two sources", "spec.env", func(o map[string]any) {
			env(o, 1)["valueFrom"].(map[string]any)["secretKeyRef"] = map[string]any{"name": "s", "key": "k"}
		}},
		{"too many env entries", "spec.env", setSpec("env", repeat(129, func(i int) any {
			return map[string]any{"name": fmt.Sprintf("V%d", i), "value": "x"}
		}))},
		{"request above limit", "spec.resources", func(o map[string]any) { resources(o, "requests")["memory"] = "1Gi" }},
		{"quantity not a quantity", "spec.resources.limits", func(o map[string]any) { resources(o, "limits")["cpu"] = "lots" }},
		{"too many resources", "spec.resources.requests", func(o map[string]any) {
			for i := range MaxResources + 1 {
				resources(o, "requests")[fmt.Sprintf("example.com/r%d", i)] = "1"
			}
		}},
		{"port appProtocol not a qualified name", "spec.ports[0].appProtocol", setPort("appProtocol", "h2c/")},
		{"port appProtocol with a space", "spec.ports[0].appProtocol", setPort("appProtocol", "my proto")},
		{"port appProtocol name part too long", "spec.ports[0].appProtocol", setPort("appProtocol", "example.com/"+strings.Repeat("p", 64))},
		{"port appProtocol empty", "spec.ports[0].appProtocol", setPort("appProtocol", "")},
		{"resource claims", "spec.resources", func(o map[string]any) {
			spec(o)["resources"].(map[string]any)["claims"] = []any{map[string]any{"name": "gpu"}}
		}},
		{"command too long", "spec.command", setSpec("command", repeat(65, func(int) any { return "x" }))},
		{"name not a DNS-1035 label", "metadata.name", func(o map[string]any) { o["metadata"].(map[string]any)["name"] = "1web" }},
		{"spec missing", "spec", func(o map[string]any) { delete(o, "spec") }},
	}
}
