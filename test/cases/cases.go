// Package cases holds DeployObjects that admission must reject, shared by the
// in-process schema tests and the end-to-end tests against a real API server,
// so that both check the same table.
package cases

import "fmt"

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
				map[string]any{"name": "http", "containerPort": int64(8080), "servicePort": int64(80)},
				map[string]any{"name": "metrics", "containerPort": int64(9090), "protocol": "TCP"},
			},
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
		{"resource claims", "spec.resources", func(o map[string]any) {
			spec(o)["resources"].(map[string]any)["claims"] = []any{map[string]any{"name": "gpu"}}
		}},
		{"command too long", "spec.command", setSpec("command", repeat(65, func(int) any { return "x" }))},
		{"name not a DNS-1035 label", "metadata.name", func(o map[string]any) { o["metadata"].(map[string]any)["name"] = "1web" }},
		{"spec missing", "spec", func(o map[string]any) { delete(o, "spec") }},
	}
}
