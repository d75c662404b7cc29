// Package cases holds DeployObjects that admission must reject, shared by the
// in-process schema tests and the end-to-end tests against a real API server,
// so that both check the same table.
package cases

import (
	"encoding/base64"
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
			"serviceType":     "NodePort",
			"configRollout":   "Enabled",
			"imagePullPolicy": "IfNotPresent",
			"envFrom": []any{
				map[string]any{"configMapRef": map[string]any{"name": "cfg"}},
				map[string]any{"prefix": "DB_", "secretRef": map[string]any{"name": "db", "optional": true}},
			},
			"livenessProbe": map[string]any{
				"httpGet":       map[string]any{"path": "/healthz", "port": "http"},
				"periodSeconds": int64(10), "failureThreshold": int64(3),
			},
			"readinessProbe": map[string]any{"tcpSocket": map[string]any{"port": int64(8080)}},
			"startupProbe": map[string]any{
				"exec":             map[string]any{"command": []any{"cat", "/tmp/started"}},
				"failureThreshold": int64(30),
			},
			"lifecycle": map[string]any{
				"preStop": map[string]any{"sleep": map[string]any{"seconds": int64(5)}},
			},
			"volumeMounts": []any{
				map[string]any{"name": "config", "mountPath": "/etc/app", "readOnly": true},
				map[string]any{"name": "scratch", "mountPath": "/tmp"},
			},
			"securityContext": map[string]any{
				"allowPrivilegeEscalation": false,
				"readOnlyRootFilesystem":   true,
				"capabilities":             map[string]any{"drop": []any{"ALL"}},
			},
			"volumes": []any{
				map[string]any{"name": "config", "configMap": map[string]any{"name": "cfg", "items": []any{
					map[string]any{"key": "app.yaml", "path": "app.yaml"},
				}}},
				map[string]any{"name": "scratch", "emptyDir": map[string]any{"sizeLimit": "64Mi"}},
			},
			"files": []any{
				map[string]any{"path": "/etc/web/app.yaml", "content": "level: info\n", "mode": int64(0o640), "sidecars": []any{"proxy"}},
				map[string]any{"path": "/etc/web/defaults.yaml", "configMapKeyRef": map[string]any{"name": "cfg", "key": "app.yaml"}},
			},
			"serviceAccountName":           "web",
			"automountServiceAccountToken": false,
			"imagePullSecrets":             []any{map[string]any{"name": "registry"}},
			"podSecurityContext": map[string]any{
				"runAsNonRoot":   true,
				"runAsUser":      int64(10001),
				"fsGroup":        int64(10001),
				"seccompProfile": map[string]any{"type": "RuntimeDefault"},
			},
			"nodeSelector": map[string]any{"kubernetes.io/os": "linux"},
			"tolerations": []any{
				map[string]any{"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"},
			},
			"affinity": map[string]any{"podAntiAffinity": map[string]any{
				"preferredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{
					"weight": int64(100),
					"podAffinityTerm": map[string]any{
						"topologyKey":   "kubernetes.io/hostname",
						"labelSelector": map[string]any{"matchLabels": map[string]any{"app.deployobject.dev/name": name}},
					},
				}},
			}},
			"topologySpreadConstraints": []any{map[string]any{
				"maxSkew":           int64(1),
				"topologyKey":       "topology.kubernetes.io/zone",
				"whenUnsatisfiable": "ScheduleAnyway",
				"labelSelector":     map[string]any{"matchLabels": map[string]any{"app.deployobject.dev/name": name}},
			}},
			"priorityClassName":             "high",
			"terminationGracePeriodSeconds": int64(45),
			"podMetadata": map[string]any{
				"labels":      map[string]any{"team": "shop"},
				"annotations": map[string]any{"prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
			},
			"initContainers": []any{map[string]any{
				"name":         "migrate",
				"image":        "registry.example.com/shop/migrate:1.4",
				"args":         []any{"--to", "latest"},
				"volumeMounts": []any{map[string]any{"name": "scratch", "mountPath": "/work"}},
			}},
			"sidecars": []any{map[string]any{
				"name":           "proxy",
				"image":          "envoyproxy/envoy:v1.31.0",
				"ports":          []any{map[string]any{"name": "admin", "containerPort": int64(9901)}},
				"readinessProbe": map[string]any{"httpGet": map[string]any{"path": "/ready", "port": int64(9901)}},
				"volumeMounts":   []any{map[string]any{"name": "config", "mountPath": "/etc/envoy", "readOnly": true}},
				"resources":      map[string]any{"requests": map[string]any{"cpu": "50m", "memory": "32Mi"}},
			}},
			"strategy": map[string]any{
				"type":          "RollingUpdate",
				"rollingUpdate": map[string]any{"maxSurge": int64(1), "maxUnavailable": "0%"},
			},
			"minReadySeconds":         int64(5),
			"progressDeadlineSeconds": int64(300),
			"revisionHistoryLimit":    int64(5),
			"monitoring": map[string]any{
				"port": "metrics", "path": "/metrics", "interval": "30s", "scrapeTimeout": "10s",
				"metadata": map[string]any{"labels": map[string]any{"release": "kube-prometheus-stack"}},
			},
		},
	}
}

// Accepted is a variation of Valid() the API server must accept.
type Accepted struct {
	Name   string
	Mutate func(obj map[string]any)
}

// MinMinor is, for the rows of AcceptedTable that not every supported
// Kubernetes release takes, the oldest 1.x whose Pod API takes the value
// with its default feature gates. On an older API server the CRD still
// admits it (it cannot know the server's version), and the Deployment is
// refused: InvalidSpec.
var MinMinor = map[string]int{
	// EnvFiles: alpha in 1.34, on by default from 1.35.
	"env fileKeyRef to an emptyDir volume": 35,
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
		{"env value empty", func(o map[string]any) { env(o, 0)["value"] = "" }},
		{"integer quantity", func(o map[string]any) { resources(o, "limits")["cpu"] = int64(2) }},
		{"env fileKeyRef to an emptyDir volume", func(o map[string]any) {
			env(o, 1)["valueFrom"] = map[string]any{"fileKeyRef": map[string]any{"volumeName": "scratch", "path": "app.env", "key": "LEVEL", "optional": true}}
		}},
		{"probes on named ports", func(o map[string]any) {
			specMap(o, "readinessProbe")["tcpSocket"].(map[string]any)["port"] = "metrics"
			spec(o)["startupProbe"] = map[string]any{"grpc": map[string]any{"port": int64(9090)}}
		}},
		{"every supported volume source", addVolume(
			map[string]any{"name": "tls", "secret": map[string]any{"secretName": "tls", "defaultMode": int64(0o400)}},
			map[string]any{"name": "data", "persistentVolumeClaim": map[string]any{"claimName": "data"}},
			map[string]any{"name": "token", "projected": map[string]any{"sources": []any{
				map[string]any{"serviceAccountToken": map[string]any{"audience": "vault", "expirationSeconds": int64(3600), "path": "token"}},
				map[string]any{"configMap": map[string]any{"name": "kube-root-ca.crt"}},
			}}},
			map[string]any{"name": "podinfo", "downwardAPI": map[string]any{"items": []any{
				map[string]any{"path": "labels", "fieldRef": map[string]any{"fieldPath": "metadata.labels"}},
			}}},
		)},
		{"sidecar restartPolicy Always", func(o map[string]any) { item(o, "sidecars", 0)["restartPolicy"] = "Always" }},
		{"Service and route metadata for cert-manager, external-dns and a load balancer", func(o map[string]any) {
			spec(o)["service"] = map[string]any{"metadata": map[string]any{
				"labels":      map[string]any{"team": "shop", "tier": ""},
				"annotations": map[string]any{"service.beta.kubernetes.io/aws-load-balancer-scheme": "internal", "example.com/owner": strings.Repeat("o", 4096)},
			}}
			spec(o)["route"] = map[string]any{"port": "http", "ingressClassName": "nginx", "metadata": map[string]any{
				"annotations": map[string]any{"cert-manager.io/cluster-issuer": "letsencrypt", "external-dns.alpha.kubernetes.io/hostname": "shop.example.com"},
				"labels":      map[string]any{strings.Repeat("a", 253) + "/" + strings.Repeat("n", 63): strings.Repeat("v", 63)},
			}}
		}},
		{"a load balancer with its class, source ranges and local traffic", func(o map[string]any) {
			spec(o)["serviceType"] = "LoadBalancer"
			spec(o)["service"] = map[string]any{
				"loadBalancerClass": "service.k8s.aws/nlb", "loadBalancerSourceRanges": []any{"10.0.0.0/8", "2001:db8::/32"},
				"externalTrafficPolicy": "Local", "internalTrafficPolicy": "Local", "trafficDistribution": "PreferSameZone",
			}
		}},
		{"every pod detail: working directory, resize policy, pod resources, runtime class, host aliases, DNS, process namespace, service links", func(o map[string]any) {
			sp := spec(o)
			sp["workingDir"] = "/" + strings.Repeat("w", 4095)
			sp["resizePolicy"] = []any{map[string]any{"resourceName": "cpu", "restartPolicy": "NotRequired"}, map[string]any{"resourceName": "memory", "restartPolicy": "RestartContainer"}}
			// Above the sum of the containers' requests, sidecars included,
			// which the API server requires of the Deployment.
			sp["podResources"] = map[string]any{"requests": map[string]any{"cpu": "1", "memory": "512Mi"}, "limits": map[string]any{"cpu": "2", "memory": "1Gi"}}
			sp["runtimeClassName"] = dnsSubdomain(253, 'r')
			sp["hostAliases"] = []any{map[string]any{"ip": "192.0.2.10", "hostnames": []any{"db.internal", dnsSubdomain(253, 'h')}}, map[string]any{"ip": "2001:db8::1"}}
			sp["dnsPolicy"] = "None"
			sp["dnsConfig"] = map[string]any{"nameservers": []any{"192.0.2.53", "2001:db8::53", "198.51.100.53"}, "searches": []any{"svc.cluster.local", "example.com."},
				"options": []any{map[string]any{"name": "ndots", "value": "2"}, map[string]any{"name": "edns0"}}}
			sp["shareProcessNamespace"] = true
			sp["enableServiceLinks"] = false
		}},
		{"a NetworkPolicy with a peer of every kind, the route's proxies and egress", func(o map[string]any) {
			spec(o)["route"] = map[string]any{"port": "http", "ingressClassName": "nginx"}
			spec(o)["networkPolicy"] = map[string]any{
				"from": []any{
					map[string]any{"deployObject": "frontend"},
					map[string]any{"podSelector": map[string]any{}},
					map[string]any{
						"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "shop", dnsSubdomain(253, 'k') + "/" + strings.Repeat("n", 63): ""}},
						"podSelector": map[string]any{"matchExpressions": []any{
							map[string]any{"key": "tier", "operator": "In", "values": []any{"web", strings.Repeat("v", 63)}},
							map[string]any{"key": "canary", "operator": "DoesNotExist"},
						}},
					},
					map[string]any{"ipBlock": map[string]any{"cidr": "10.0.0.0/8", "except": []any{"10.1.0.0/16", "10.2.3.4/32"}}},
					map[string]any{"ipBlock": map[string]any{"cidr": "2001:db8::/32"}},
				},
				"routeFrom": map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "ingress-nginx"}}},
				"monitoringFrom": map[string]any{
					"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "monitoring"}},
					"podSelector":       map[string]any{"matchExpressions": []any{map[string]any{"key": "app.kubernetes.io/name", "operator": "In", "values": []any{"prometheus"}}}},
				},
				"egress":   map[string]any{"to": []any{map[string]any{"deployObject": "db"}, map[string]any{"ipBlock": map[string]any{"cidr": "0.0.0.0/0"}}}},
				"metadata": map[string]any{"labels": map[string]any{"policy-tier": "app"}},
			}
		}},
		{"a NetworkPolicy that admits only the scraper, to a sidecar's port", func(o map[string]any) {
			setMonitoring(map[string]any{"port": "admin"})(o)
			spec(o)["networkPolicy"] = map[string]any{"monitoringFrom": map[string]any{"ipBlock": map[string]any{"cidr": "10.0.0.0/8"}}}
		}},
		{"a NetworkPolicy that admits nobody and sends only DNS", setSpec("networkPolicy", map[string]any{"egress": map[string]any{}})},
		{"a headless Service", func(o map[string]any) {
			spec(o)["serviceType"] = "ClusterIP"
			spec(o)["service"] = map[string]any{"headless": true}
		}},
		{"sidecar restartPolicyRules", func(o map[string]any) {
			item(o, "sidecars", 0)["restartPolicyRules"] = []any{map[string]any{"action": "Restart", "exitCodes": map[string]any{"operator": "In", "values": []any{int64(42)}}}}
		}},
		{"recursiveReadOnly on a read-only mount", func(o map[string]any) {
			item(o, "volumeMounts", 0)["recursiveReadOnly"] = "IfPossible"
		}},
		{"recursiveReadOnly Disabled on a writable mount", func(o map[string]any) {
			item(o, "volumeMounts", 1)["recursiveReadOnly"] = "Disabled"
		}},
		{"strategy Recreate", setSpec("strategy", map[string]any{"type": "Recreate"})},
		{"progressDeadlineSeconds just above minReadySeconds", setSpec("progressDeadlineSeconds", int64(6))},
		{"progressDeadlineSeconds without minReadySeconds", func(o map[string]any) {
			delete(spec(o), "minReadySeconds")
			spec(o)["progressDeadlineSeconds"] = int64(1)
		}},
		// A preStop sleep must fit in the grace period.
		{"terminationGracePeriodSeconds zero", func(o map[string]any) {
			delete(spec(o), "lifecycle")
			spec(o)["terminationGracePeriodSeconds"] = int64(0)
		}},
		{"preStop sleep as long as the grace period", setSpec("terminationGracePeriodSeconds", int64(5))},
		{"podMetadata label under the controller's prefix", func(o map[string]any) {
			specMap(o, "podMetadata")["labels"].(map[string]any)["app.deployobject.dev/tier"] = "frontend"
		}},
		// Two replicas: one may be evicted.
		{"minAvailable one below replicas", setSpec("disruptionBudget", map[string]any{"minAvailable": int64(1)})},
		{"minAvailable 50% of two replicas", setSpec("disruptionBudget", map[string]any{"minAvailable": "50%"})},
		{"maxUnavailable 1%", setSpec("disruptionBudget", map[string]any{"maxUnavailable": "1%"})},
		{"maxUnavailable above replicas", setSpec("disruptionBudget", map[string]any{"maxUnavailable": int64(10)})},
		// No pod to evict: the budget is judged again when replicas change.
		{"minAvailable with zero replicas", func(o map[string]any) {
			spec(o)["replicas"] = int64(0)
			spec(o)["disruptionBudget"] = map[string]any{"minAvailable": int64(5)}
		}},
		// With autoscaling the budget is judged at minReplicas, whatever
		// replicas holds now.
		{"minAvailable below autoscaling minReplicas", func(o map[string]any) {
			spec(o)["replicas"] = int64(1)
			spec(o)["autoscaling"] = map[string]any{"minReplicas": int64(3), "maxReplicas": int64(6), "targetCPUUtilizationPercentage": int64(70)}
			spec(o)["disruptionBudget"] = map[string]any{"minAvailable": int64(2)}
		}},
		{"autoscaling with every field", setSpec("autoscaling", map[string]any{
			"minReplicas": int64(2), "maxReplicas": int64(2),
			"targetCPUUtilizationPercentage": int64(1000), "targetMemoryUtilizationPercentage": int64(1),
			"behavior": map[string]any{
				"scaleUp": map[string]any{"stabilizationWindowSeconds": int64(0), "selectPolicy": "Max", "policies": []any{
					map[string]any{"type": "Pods", "value": int64(1), "periodSeconds": int64(1800)},
				}},
				"scaleDown": map[string]any{"stabilizationWindowSeconds": int64(3600), "selectPolicy": "Disabled"},
			},
		})},
		{"autoscaling behavior at the other edges: Percent, period 1, Min, tolerance 0 as a string and a number", setSpec("autoscaling", map[string]any{
			"maxReplicas": int64(3), "targetCPUUtilizationPercentage": int64(70),
			"behavior": map[string]any{
				"scaleUp": map[string]any{"selectPolicy": "Min", "tolerance": "0", "policies": []any{
					map[string]any{"type": "Percent", "value": int64(1), "periodSeconds": int64(1)},
				}},
				"scaleDown": map[string]any{"tolerance": int64(0)},
			},
		})},
		{"autoscaling tolerance of 64 characters", setSpec("autoscaling", map[string]any{
			"maxReplicas": int64(3), "targetCPUUtilizationPercentage": int64(70),
			"behavior": map[string]any{"scaleDown": map[string]any{"tolerance": "0." + strings.Repeat("0", 61) + "5"}},
		})},
		{"autoscaling on memory with a limit only", func(o map[string]any) {
			delete(resources(o, "requests"), "memory")
			spec(o)["autoscaling"] = map[string]any{"maxReplicas": int64(3), "targetMemoryUtilizationPercentage": int64(80)}
		}},
		{"serviceAccount of its own with workload identity, a dotted name", func(o map[string]any) {
			delete(spec(o), "serviceAccountName")
			spec(o)["serviceAccount"] = map[string]any{"name": "web.runtime-" + dnsSubdomain(200, 'a'), "metadata": map[string]any{
				"labels":      map[string]any{"azure.workload.identity/use": "true"},
				"annotations": map[string]any{"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/web", "iam.gke.io/gcp-service-account": "web@shop.iam.gserviceaccount.com"},
			}}
		}},
		{"files of every source, binary, with modes, one mounted by a sidecar", setSpec("files", []any{
			map[string]any{"path": "/etc/nginx/nginx.conf", "content": "events {}\n", "sidecars": []any{"proxy"}},
			map[string]any{"path": "/usr/share/web/favicon.ico", "binaryContent": "AAABAAEAEBA=", "mode": int64(0o444)},
			map[string]any{"path": "/etc/web/flags.json", "configMapKeyRef": map[string]any{"name": "flags", "key": "flags.json", "optional": true}},
			map[string]any{"path": "/etc/tls/tls.key", "secretKeyRef": map[string]any{"name": "web-tls", "key": "tls.key"}, "mode": int64(0o400)},
			map[string]any{"path": "/etc/web/public.pem", "content": "-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----\n"},
			map[string]any{"path": "/.hidden", "content": ""},
		})},
		{"files at the edges: 32, a path of 1024 characters, a name of 250, 1,000,000 inline characters", func(o map[string]any) {
			files := []any{
				map[string]any{"path": strings.Repeat("/"+strings.Repeat("d", 62), 13) + "/" + strings.Repeat("f", 204), "content": strings.Repeat("x", 262144)},
				map[string]any{"path": "/etc/web/" + strings.Repeat("n", 250), "content": strings.Repeat("x", 262144)},
				map[string]any{"path": "/etc/web/c", "content": strings.Repeat("x", 262144)},
				map[string]any{"path": "/etc/web/d", "binaryContent": base64.StdEncoding.EncodeToString(make([]byte, 1000000-3*262144))},
			}
			for i := len(files); i < 32; i++ {
				files = append(files, map[string]any{"path": fmt.Sprintf("/etc/web/ref-%d", i), "configMapKeyRef": map[string]any{"name": "cfg", "key": strings.Repeat("k", 253)}})
			}
			spec(o)["files"] = files
		}},
		{"serviceAccount named after the DeployObject", func(o map[string]any) {
			delete(spec(o), "serviceAccountName")
			spec(o)["serviceAccount"] = map[string]any{}
		}},
		{"autoscaling on metrics alone, one of each source", setMetrics(
			map[string]any{"type": "Resource", "resource": map[string]any{"name": "memory", "target": avgValue("200Mi")}},
			map[string]any{"type": "ContainerResource", "containerResource": map[string]any{"name": "cpu", "container": "proxy", "target": utilization(60)}},
			map[string]any{"type": "Pods", "pods": map[string]any{"metric": map[string]any{"name": "http_requests_per_second"}, "target": avgValue("100")}},
			map[string]any{"type": "Object", "object": map[string]any{
				"describedObject": map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "name": "web"},
				"metric":          map[string]any{"name": "requests_per_second"}, "target": value("2k"),
			}},
			queueMetric(avgValue(int64(30))),
		)},
		{"autoscaling on CPU and a memory Resource metric, a core Object and an External value", setSpec("autoscaling", map[string]any{
			"maxReplicas": int64(3), "targetCPUUtilizationPercentage": int64(70), "metrics": []any{
				map[string]any{"type": "Resource", "resource": map[string]any{"name": "memory", "target": utilization(1000)}},
				map[string]any{"type": "Object", "object": map[string]any{
					"describedObject": map[string]any{"kind": "Service", "name": "web"},
					"metric":          map[string]any{"name": "requests_per_second", "selector": map[string]any{}}, "target": avgValue("1m"),
				}},
				map[string]any{"type": "External", "external": map[string]any{"metric": map[string]any{"name": "sqs_visible_messages"}, "target": value("1")}},
			},
		})},
		// The HorizontalPodAutoscaler API refuses only '.' and '..', '/'
		// and '%' in metric and object names.
		{"autoscaling metrics at the edges: eight, names of 253 characters, every selector operator", setMetrics(append(repeat(6, func(i int) any {
			return map[string]any{"type": "External", "external": map[string]any{
				"metric": map[string]any{"name": fmt.Sprintf("m%d.", i) + strings.Repeat("x", 250), "selector": map[string]any{
					"matchLabels": map[string]any{"queue": "orders"},
					"matchExpressions": []any{
						map[string]any{"key": "a", "operator": "In", "values": []any{"1"}},
						map[string]any{"key": "b", "operator": "NotIn", "values": []any{"2"}},
						map[string]any{"key": "c", "operator": "Exists"},
						map[string]any{"key": "d", "operator": "DoesNotExist"},
					},
				}},
				"target": avgValue("0.001"),
			}}
		}),
			map[string]any{"type": "ContainerResource", "containerResource": map[string]any{"name": "cpu", "container": "app", "target": utilization(1)}},
			map[string]any{"type": "Object", "object": map[string]any{
				"describedObject": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "..." + strings.Repeat("x", 250)},
				"metric":          map[string]any{"name": "..."}, "target": value("1e3"),
			}},
		)...)},
		{"autoscaling ContainerResource utilization of app with a memory limit only", func(o map[string]any) {
			delete(resources(o, "requests"), "memory")
			setMetrics(map[string]any{"type": "ContainerResource", "containerResource": map[string]any{"name": "memory", "container": "app", "target": utilization(80)}})(o)
		}},
		{"route as an Ingress with TLS and a wildcard", setSpec("route", map[string]any{
			"port": "http", "hostnames": []any{"shop.example.com", "*.shop.example.com"}, "path": "/api/v1.2/~user_(x)",
			"ingressClassName": "nginx", "tlsSecretName": "shop-tls",
		})},
		{"route as an HTTPRoute to two listeners of one Gateway", setSpec("route", map[string]any{
			"port": "metrics", "parentRefs": []any{
				map[string]any{"name": "public", "namespace": "infra", "sectionName": "https"},
				map[string]any{"name": "public", "namespace": "infra", "sectionName": "http"},
				map[string]any{"name": "internal"},
			},
		})},
		{"route rules: an exact path, prefixes, two ports, timeouts on an HTTPRoute", func(o map[string]any) {
			spec(o)["route"] = map[string]any{"parentRefs": []any{map[string]any{"name": "gw"}}, "hostnames": []any{"shop.example.com"}, "rules": []any{
				map[string]any{"path": "/healthz", "pathType": "Exact", "port": "metrics"},
				map[string]any{"path": "/healthz", "port": "http"},
				map[string]any{"path": "/api", "pathType": "Prefix", "port": "http", "timeout": "99999h99999m99999s99999ms"},
				map[string]any{"port": "http", "timeout": "0s"},
			}}
		}},
		{"route with a redirect to https on another listener of its Gateway", setSpec("route", map[string]any{"port": "http",
			"parentRefs":    []any{map[string]any{"name": "gw", "sectionName": "https"}, map[string]any{"name": "internal"}},
			"httpsRedirect": map[string]any{"parentRefs": []any{map[string]any{"name": "gw", "sectionName": "http"}, map[string]any{"name": "gw", "namespace": "other", "sectionName": "http"}}},
		})},
		{"route to a gRPC port: a GRPCRoute by service, method and every call", func(o map[string]any) {
			port(o, 1)["appProtocol"] = "grpc"
			spec(o)["route"] = map[string]any{"parentRefs": []any{map[string]any{"name": "gw"}}, "rules": []any{
				map[string]any{"path": "/shop.v1.Cart/", "port": "metrics"},
				map[string]any{"path": "/grpc.health.v1.Health/Check", "pathType": "Exact", "port": "metrics"},
				map[string]any{"path": "/_x._y/", "port": "metrics"},
				map[string]any{"port": "metrics"},
			}}
		}},
		{"route short form to a gRPC port, one service", func(o map[string]any) {
			port(o, 1)["appProtocol"] = "grpc"
			spec(o)["route"] = map[string]any{"parentRefs": []any{map[string]any{"name": "gw"}}, "port": "metrics", "path": "/shop.v1.Cart/"}
		}},
		{"route to a gRPC port through an Ingress, any path", func(o map[string]any) {
			port(o, 1)["appProtocol"] = "grpc"
			spec(o)["route"] = map[string]any{"ingressClassName": "nginx", "rules": []any{map[string]any{"path": "/api", "port": "metrics"}, map[string]any{"port": "http"}}}
		}},
		{"route rules on an Ingress, sixteen of them", setSpec("route", map[string]any{"ingressClassName": "nginx", "rules": repeat(16, func(i int) any {
			return map[string]any{"path": fmt.Sprintf("/p%d", i), "port": "http"}
		})})},
		{"route hostname of 253 characters", setSpec("route", map[string]any{
			"port": "http", "ingressClassName": "nginx", "hostnames": []any{dnsSubdomain(253, 'h')},
		})},
		{"route path of 1024 characters with an escape", setSpec("route", map[string]any{
			"port": "http", "ingressClassName": "nginx", "path": "/%41" + strings.Repeat("a", 1020),
		})},
		{"monitoring of a sidecar's port (a PodMonitor)", setMonitoring(map[string]any{"port": "admin"})},
		{"monitoring with only a port", setSpec("monitoring", map[string]any{"port": "http"})},
		{"monitoring path of 1024 characters", setMonitoring(map[string]any{"path": "/" + strings.Repeat("m", 1023)})},
		{"monitoring scrapeTimeout equal to interval", setMonitoring(map[string]any{"interval": "1m30s", "scrapeTimeout": "90s"})},
		{"monitoring scrapeTimeout in ms under an interval in minutes", setMonitoring(map[string]any{"interval": "1m", "scrapeTimeout": "59999ms"})},
		{"monitoring scrapeTimeout just under an interval in weeks and days", setMonitoring(map[string]any{"interval": "1w2d", "scrapeTimeout": "8d23h59m59s999ms"})},
		{"monitoring every unit, six digits each", setMonitoring(map[string]any{"interval": "999999y999999w999999d999999h999999m999999s999999ms", "scrapeTimeout": "999999y"})},
		{"monitoring interval without scrapeTimeout", setMonitoring(map[string]any{"interval": "0", "scrapeTimeout": nil})},
		{"canary of 16 steps, pauses of 24h and of 1ms, and every field at its edge", setCanaryWith(map[string]any{
			"scaleDownDelaySeconds": int64(3600),
			"autoAbort":             map[string]any{"progressDeadlineSeconds": int64(86400), "maxRestarts": int64(0), "notReadySeconds": int64(86400)},
		}, append(repeat(13, func(i int) any { return weight(int64(i + 1)) }), pause("24h"), pause("1ms"), pause(""))...)},
		{"canary of one step of weight 100 and pauses in four units", setCanaryWith(map[string]any{"scaleDownDelaySeconds": int64(0),
			"autoAbort": map[string]any{"progressDeadlineSeconds": int64(1), "notReadySeconds": int64(1)}},
			weight(100), pause("23h59m59s999ms"))},
		{"canary with a name of 56 characters", func(o map[string]any) {
			setCanary(weight(1))(o)
			o["metadata"].(map[string]any)["name"] = "w" + strings.Repeat("e", 54) + "b"
		}},
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

func specMap(obj map[string]any, key string) map[string]any {
	return spec(obj)[key].(map[string]any)
}
func item(obj map[string]any, list string, i int) map[string]any {
	return spec(obj)[list].([]any)[i].(map[string]any)
}

func addVolume(v ...any) func(map[string]any) {
	return func(obj map[string]any) { spec(obj)["volumes"] = append(spec(obj)["volumes"].([]any), v...) }
}

// setFile sets key of file i, or removes it when v is nil.
func setFile(i int, key string, v any) func(map[string]any) {
	return func(obj map[string]any) {
		if v == nil {
			delete(item(obj, "files", i), key)
			return
		}
		item(obj, "files", i)[key] = v
	}
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
		{"configRollout unknown", "spec.configRollout", setSpec("configRollout", "Restart")},
		{"configRollout in lowercase", "spec.configRollout", setSpec("configRollout", "disabled")},
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
		{"env fileKeyRef without its volume", "valueFrom.fileKeyRef", func(o map[string]any) {
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

		// The pod surface. Each case is one the Pod or Deployment API
		// rejects too, unless its comment says why the DeployObject refuses
		// it earlier.
		{"imagePullPolicy unknown", "spec.imagePullPolicy", setSpec("imagePullPolicy", "Sometimes")},
		{"envFrom with configMapRef and secretRef", "spec.envFrom[0]", func(o map[string]any) {
			item(o, "envFrom", 0)["secretRef"] = map[string]any{"name": "db"}
		}},
		{"envFrom configMapRef name empty", "spec.envFrom[0].configMapRef.name", func(o map[string]any) {
			item(o, "envFrom", 0)["configMapRef"] = map[string]any{"name": ""}
		}},
		{"env secretKeyRef without a name", "spec.env[1].valueFrom.secretKeyRef.name", func(o map[string]any) {
			env(o, 1)["valueFrom"] = map[string]any{"secretKeyRef": map[string]any{"key": "k"}}
		}},
		{"sidecar env configMapKeyRef name not a DNS subdomain", "spec.sidecars[0].env[0].valueFrom.configMapKeyRef.name", func(o map[string]any) {
			item(o, "sidecars", 0)["env"] = []any{map[string]any{"name": "X", "valueFrom": map[string]any{"configMapKeyRef": map[string]any{"name": "My_Config", "key": "x"}}}}
		}},
		{"configMap volume without a name", "spec.volumes[0].configMap.name", func(o map[string]any) {
			delete(item(o, "volumes", 0)["configMap"].(map[string]any), "name")
		}},
		{"secret volume without secretName", "spec.volumes[2].secret.secretName", addVolume(map[string]any{"name": "tls", "secret": map[string]any{}})},
		{"persistentVolumeClaim volume with an empty claimName", "spec.volumes[2].persistentVolumeClaim.claimName", addVolume(map[string]any{"name": "data", "persistentVolumeClaim": map[string]any{"claimName": ""}})},
		{"probe without a handler", "spec.livenessProbe", func(o map[string]any) {
			spec(o)["livenessProbe"] = map[string]any{"periodSeconds": int64(10)}
		}},
		{"probe with two handlers", "spec.readinessProbe", func(o map[string]any) {
			specMap(o, "readinessProbe")["exec"] = map[string]any{"command": []any{"true"}}
		}},
		{"probe periodSeconds negative", "spec.startupProbe.periodSeconds", func(o map[string]any) {
			specMap(o, "startupProbe")["periodSeconds"] = int64(-1)
		}},
		{"liveness probe successThreshold above 1", "spec.livenessProbe.successThreshold", func(o map[string]any) {
			specMap(o, "livenessProbe")["successThreshold"] = int64(2)
		}},
		{"readiness probe with terminationGracePeriodSeconds", "spec.readinessProbe.terminationGracePeriodSeconds", func(o map[string]any) {
			specMap(o, "readinessProbe")["terminationGracePeriodSeconds"] = int64(10)
		}},
		{"sidecar probe without a handler", "spec.sidecars[0].readinessProbe", func(o map[string]any) {
			item(o, "sidecars", 0)["readinessProbe"] = map[string]any{"periodSeconds": int64(5)}
		}},
		{"lifecycle hook without a handler", "spec.lifecycle.preStop", func(o map[string]any) {
			specMap(o, "lifecycle")["preStop"] = map[string]any{}
		}},
		{"sidecar lifecycle hook with two handlers", "spec.sidecars[0].lifecycle.postStart", func(o map[string]any) {
			item(o, "sidecars", 0)["lifecycle"] = map[string]any{"postStart": map[string]any{
				"exec":  map[string]any{"command": []any{"true"}},
				"sleep": map[string]any{"seconds": int64(1)},
			}}
		}},
		// The Pod API takes any IANA service name as a probe port; a name
		// that no container port has makes the kubelet fail the probe at
		// run time, restarting the container over and over.
		{"probe port name not in spec.ports", "spec.livenessProbe.httpGet.port", func(o map[string]any) {
			specMap(o, "livenessProbe")["httpGet"].(map[string]any)["port"] = "health"
		}},
		{"probe tcpSocket port name not in spec.ports", "spec.readinessProbe.tcpSocket.port", func(o map[string]any) {
			specMap(o, "readinessProbe")["tcpSocket"].(map[string]any)["port"] = "web"
		}},
		{"volumeMount of an undeclared volume", "spec.volumeMounts", func(o map[string]any) {
			item(o, "volumeMounts", 0)["name"] = "cache"
		}},
		{"sidecar volumeMount of an undeclared volume", "spec.sidecars", func(o map[string]any) {
			item(o, "sidecars", 0)["volumeMounts"] = []any{map[string]any{"name": "certs", "mountPath": "/certs"}}
		}},
		{"init container volumeMount of an undeclared volume", "spec.initContainers", func(o map[string]any) {
			item(o, "initContainers", 0)["volumeMounts"] = []any{map[string]any{"name": "data", "mountPath": "/data"}}
		}},
		{"env fileKeyRef to a volume that is not an emptyDir", "spec.env", func(o map[string]any) {
			env(o, 1)["valueFrom"] = map[string]any{"fileKeyRef": map[string]any{"volumeName": "config", "path": "app.env", "key": "LEVEL"}}
		}},
		{"duplicate volume name", "spec.volumes[2]", addVolume(map[string]any{"name": "config", "emptyDir": map[string]any{}})},
		{"volume name not a DNS label", "spec.volumes[0].name", func(o map[string]any) { item(o, "volumes", 0)["name"] = "Config" }},
		// The Pod API takes a hostPath volume (Pod Security "baseline"
		// refuses it); a DeployObject refuses it for every namespace.
		{"hostPath volume", "spec.volumes[2].hostPath", addVolume(map[string]any{"name": "host", "hostPath": map[string]any{"path": "/etc"}})},
		// The Pod API takes an nfs volume; a DeployObject reaches storage
		// only through a PersistentVolumeClaim.
		{"nfs volume", "spec.volumes[2].nfs", addVolume(map[string]any{"name": "share", "nfs": map[string]any{"server": "nfs.example.com", "path": "/export"}})},
		{"volume with two sources", "spec.volumes[1]", func(o map[string]any) {
			item(o, "volumes", 1)["secret"] = map[string]any{"secretName": "tls"}
		}},
		// The Deployment API takes a matching value and refuses another
		// one (the selector would no longer match the template); either
		// way the label is the controller's.
		{"podMetadata label app.deployobject.dev/name", "spec.podMetadata.labels", func(o map[string]any) {
			specMap(o, "podMetadata")["labels"].(map[string]any)["app.deployobject.dev/name"] = "other"
		}},
		// The Pod API takes any value for this label.
		{"podMetadata label app.kubernetes.io/managed-by", "spec.podMetadata.labels", func(o map[string]any) {
			specMap(o, "podMetadata")["labels"].(map[string]any)["app.kubernetes.io/managed-by"] = "helm"
		}},
		{"sidecar name not a DNS label", "spec.sidecars[0].name", func(o map[string]any) { item(o, "sidecars", 0)["name"] = "Proxy_1" }},
		{"sidecar without an image", "spec.sidecars[0].image", func(o map[string]any) { delete(item(o, "sidecars", 0), "image") }},
		{"init container name too long", "spec.initContainers[0].name", func(o map[string]any) {
			item(o, "initContainers", 0)["name"] = strings.Repeat("m", 64)
		}},
		{"init container with a probe", "spec.initContainers[0]", func(o map[string]any) {
			item(o, "initContainers", 0)["livenessProbe"] = map[string]any{"exec": map[string]any{"command": []any{"true"}}}
		}},
		{"init container with lifecycle", "spec.initContainers[0]", func(o map[string]any) {
			item(o, "initContainers", 0)["lifecycle"] = map[string]any{"preStop": map[string]any{"sleep": map[string]any{"seconds": int64(1)}}}
		}},
		{"service without ports", "spec.service", func(o map[string]any) {
			delete(spec(o), "ports")
			spec(o)["serviceType"] = "ClusterIP"
			spec(o)["service"] = map[string]any{"metadata": map[string]any{"labels": map[string]any{"team": "shop"}}}
		}},
		{"service metadata label key with a space", "spec.service.metadata.labels", func(o map[string]any) {
			spec(o)["service"] = map[string]any{"metadata": map[string]any{"labels": map[string]any{"my team": "shop"}}}
		}},
		{"service metadata label key name too long", "spec.service.metadata.labels", func(o map[string]any) {
			spec(o)["service"] = map[string]any{"metadata": map[string]any{"labels": map[string]any{strings.Repeat("n", 64): "x"}}}
		}},
		{"service metadata label value not a label value", "spec.service.metadata.labels", func(o map[string]any) {
			spec(o)["service"] = map[string]any{"metadata": map[string]any{"labels": map[string]any{"team": "shop & co"}}}
		}},
		{"service metadata label of the controller", "spec.service.metadata.labels", func(o map[string]any) {
			spec(o)["service"] = map[string]any{"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/managed-by": "me"}}}
		}},
		{"service metadata annotation under the controller's prefix", "spec.service.metadata.annotations", func(o map[string]any) {
			spec(o)["service"] = map[string]any{"metadata": map[string]any{"annotations": map[string]any{"app.deployobject.dev/owned-metadata": ""}}}
		}},
		{"service metadata too many annotations", "spec.service.metadata.annotations", func(o map[string]any) {
			a := map[string]any{}
			for i := range 33 {
				a[fmt.Sprintf("example.com/a%02d", i)] = "x"
			}
			spec(o)["service"] = map[string]any{"metadata": map[string]any{"annotations": a}}
		}},
		{"route metadata annotation key with an empty name", "spec.route.metadata.annotations", func(o map[string]any) {
			spec(o)["route"] = map[string]any{"port": "http", "ingressClassName": "nginx", "metadata": map[string]any{"annotations": map[string]any{"example.com/": "x"}}}
		}},
		{"externalTrafficPolicy on a ClusterIP Service", "spec.service.externalTrafficPolicy", func(o map[string]any) {
			spec(o)["serviceType"] = "ClusterIP"
			spec(o)["service"] = map[string]any{"externalTrafficPolicy": "Local"}
		}},
		{"externalTrafficPolicy unknown", "spec.service.externalTrafficPolicy", func(o map[string]any) {
			spec(o)["service"] = map[string]any{"externalTrafficPolicy": "Nearest"}
		}},
		{"loadBalancerClass on a NodePort Service", "spec.service", func(o map[string]any) {
			spec(o)["service"] = map[string]any{"loadBalancerClass": "example.com/lb"}
		}},
		{"loadBalancerClass not a qualified name", "spec.service.loadBalancerClass", func(o map[string]any) {
			spec(o)["serviceType"] = "LoadBalancer"
			spec(o)["service"] = map[string]any{"loadBalancerClass": "example.com/my lb"}
		}},
		{"loadBalancerSourceRanges not a CIDR", "spec.service.loadBalancerSourceRanges[0]", func(o map[string]any) {
			spec(o)["serviceType"] = "LoadBalancer"
			spec(o)["service"] = map[string]any{"loadBalancerSourceRanges": []any{"10.0.0.1"}}
		}},
		{"headless NodePort Service", "spec.service.headless", func(o map[string]any) {
			spec(o)["service"] = map[string]any{"headless": true}
		}},
		{"headless with internalTrafficPolicy", "spec.service.headless", func(o map[string]any) {
			spec(o)["serviceType"] = "ClusterIP"
			spec(o)["service"] = map[string]any{"headless": true, "internalTrafficPolicy": "Local"}
		}},
		{"trafficDistribution unknown", "spec.service.trafficDistribution", func(o map[string]any) {
			spec(o)["service"] = map[string]any{"trafficDistribution": "Random"}
		}},
		{"stopSignal", "spec.lifecycle.stopSignal", func(o map[string]any) { specMap(o, "lifecycle")["stopSignal"] = "SIGUSR1" }},
		{"sidecar stopSignal", "spec.sidecars[0].lifecycle.stopSignal", func(o map[string]any) {
			item(o, "sidecars", 0)["lifecycle"] = map[string]any{"stopSignal": "SIGQUIT"}
		}},
		// Fields of the Kubernetes types that are alpha in 1.37 (hack/crdpost's alphaFields).
		{"alpha: httpGet probe protocol", "spec.livenessProbe.httpGet.protocol", func(o map[string]any) {
			specMap(o, "livenessProbe")["httpGet"].(map[string]any)["protocol"] = "HTTP/1.1"
		}},
		{"alpha: sidecar grpc probe mode", "spec.sidecars[0].livenessProbe.grpc.mode", func(o map[string]any) {
			item(o, "sidecars", 0)["livenessProbe"] = map[string]any{"grpc": map[string]any{"port": int64(9901), "mode": "TLS"}}
		}},
		{"alpha: volumeMount bindMountOptions", "spec.volumeMounts[1].bindMountOptions", func(o map[string]any) {
			item(o, "volumeMounts", 1)["bindMountOptions"] = []any{"noexec"}
		}},
		{"alpha: configMap volume defaultUser", "spec.volumes[0].configMap.defaultUser", func(o map[string]any) {
			item(o, "volumes", 0)["configMap"].(map[string]any)["defaultUser"] = int64(1000)
		}},
		{"alpha: configMap volume item user", "spec.volumes[0].configMap.items[0].user", func(o map[string]any) {
			item(o, "volumes", 0)["configMap"].(map[string]any)["items"].([]any)[0].(map[string]any)["user"] = int64(1000)
		}},
		{"alpha: projected serviceAccountToken user", "spec.volumes[2].projected.sources[0].serviceAccountToken.user", addVolume(map[string]any{"name": "token", "projected": map[string]any{"sources": []any{
			map[string]any{"serviceAccountToken": map[string]any{"path": "token", "user": int64(1000)}},
		}}})},
		{"init container restartPolicyRules", "spec.initContainers[0].restartPolicyRules", func(o map[string]any) {
			item(o, "initContainers", 0)["restartPolicyRules"] = []any{map[string]any{"action": "Restart", "exitCodes": map[string]any{"operator": "In", "values": []any{int64(42)}}}}
		}},
		{"sidecar restartPolicyRules without exitCodes", "spec.sidecars[0].restartPolicyRules[0].exitCodes", func(o map[string]any) {
			item(o, "sidecars", 0)["restartPolicyRules"] = []any{map[string]any{"action": "Restart"}}
		}},
		{"sidecar restartPolicyRules operator unknown", "spec.sidecars[0].restartPolicyRules[0].exitCodes.operator", func(o map[string]any) {
			item(o, "sidecars", 0)["restartPolicyRules"] = []any{map[string]any{"action": "Restart", "exitCodes": map[string]any{"operator": "Equals", "values": []any{int64(1)}}}}
		}},
		{"sidecar restartPolicyRules too many", "spec.sidecars[0].restartPolicyRules", func(o map[string]any) {
			item(o, "sidecars", 0)["restartPolicyRules"] = repeat(21, func(i int) any {
				return map[string]any{"action": "Restart", "exitCodes": map[string]any{"operator": "In", "values": []any{int64(i)}}}
			})
		}},
		{"recursiveReadOnly on a writable mount", "spec.volumeMounts[1].recursiveReadOnly", func(o map[string]any) {
			item(o, "volumeMounts", 1)["recursiveReadOnly"] = "Enabled"
		}},
		{"recursiveReadOnly unknown", "spec.volumeMounts[0].recursiveReadOnly", func(o map[string]any) {
			item(o, "volumeMounts", 0)["recursiveReadOnly"] = "Always"
		}},
		{"sidecar named app", "spec.sidecars", func(o map[string]any) { item(o, "sidecars", 0)["name"] = "app" }},
		{"init container named app", "spec.initContainers", func(o map[string]any) { item(o, "initContainers", 0)["name"] = "app" }},
		{"init container named like a sidecar", "spec.sidecars", func(o map[string]any) { item(o, "initContainers", 0)["name"] = "proxy" }},
		{"duplicate sidecar name", "spec.sidecars[1]", func(o map[string]any) {
			spec(o)["sidecars"] = append(spec(o)["sidecars"].([]any), map[string]any{"name": "proxy", "image": "busybox:1.37"})
		}},
		// The Pod API takes restartPolicy Always on an init container: that
		// is a sidecar, which a DeployObject declares in sidecars.
		{"init container with restartPolicy", "spec.initContainers[0].restartPolicy", func(o map[string]any) {
			item(o, "initContainers", 0)["restartPolicy"] = "Always"
		}},
		// With container restart rules, the Pod API takes OnFailure on an
		// init container, which then runs to completion: not a sidecar.
		{"sidecar with restartPolicy OnFailure", "spec.sidecars[0].restartPolicy", func(o map[string]any) {
			item(o, "sidecars", 0)["restartPolicy"] = "OnFailure"
		}},
		// The Pod API bounds neither these lists nor a container's strings;
		// the CRD does, so that the object's size and its rules' cost are
		// bounded.
		{"too many sidecars", "spec.sidecars", setSpec("sidecars", repeat(9, func(i int) any {
			return map[string]any{"name": fmt.Sprintf("s%d", i), "image": "busybox:1.37"}
		}))},
		{"sidecar arg too long", "spec.sidecars[0].args[0]", func(o map[string]any) {
			item(o, "sidecars", 0)["args"] = []any{strings.Repeat("a", 4097)}
		}},
		{"too many tolerations", "spec.tolerations", setSpec("tolerations", repeat(33, func(i int) any {
			return map[string]any{"key": fmt.Sprintf("k%d", i), "operator": "Exists"}
		}))},
		{"serviceAccountName not a DNS subdomain", "spec.serviceAccountName", setSpec("serviceAccountName", "Web_Account")},
		{"file without content", "spec.files[0]", setFile(0, "content", nil)},
		{"file with content and a ConfigMap key", "spec.files[1]", setFile(1, "content", "x")},
		{"file with a Secret key and bytes", "spec.files[1]", func(o map[string]any) {
			item(o, "files", 1)["binaryContent"] = "AAEC"
			delete(item(o, "files", 1), "configMapKeyRef")
			item(o, "files", 1)["secretKeyRef"] = map[string]any{"name": "creds", "key": "password"}
		}},
		{"file path relative", "spec.files[0].path", setFile(0, "path", "etc/web/app.yaml")},
		{"file path with ..", "spec.files[0].path", setFile(0, "path", "/etc/web/../shadow")},
		{"file path with a space", "spec.files[0].path", setFile(0, "path", "/etc/web/my app.yaml")},
		{"file path ending in /", "spec.files[0].path", setFile(0, "path", "/etc/web/")},
		{"file name of 251 characters", "spec.files[0].path", setFile(0, "path", "/etc/"+strings.Repeat("f", 251))},
		{"file path of 1025 characters", "spec.files[0].path", setFile(0, "path", strings.Repeat("/"+strings.Repeat("d", 63), 16)+"x")},
		{"file paths twice", "spec.files[1]", setFile(1, "path", "/etc/web/app.yaml")},
		{"file path where a volume is mounted", "spec.files", setFile(0, "path", "/tmp")},
		{"file mode above 0777", "spec.files[0].mode", setFile(0, "mode", int64(0o1000))},
		{"file mode negative", "spec.files[0].mode", setFile(0, "mode", int64(-1))},
		{"file content with a private key", "spec.files[0].content", setFile(0, "content", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\n")},
		{"file content over 262144 characters", "spec.files[0].content", setFile(0, "content", strings.Repeat("x", 262145))},
		{"file contents over 1,000,000 characters together", "spec.files", func(o map[string]any) {
			spec(o)["files"] = repeat(4, func(i int) any {
				return map[string]any{"path": fmt.Sprintf("/etc/web/%d.txt", i), "content": strings.Repeat("x", 250001)}
			})
		}},
		{"file contents over 1,000,000 bytes together, in fewer characters", "spec.files", func(o map[string]any) {
			spec(o)["files"] = repeat(3, func(i int) any {
				return map[string]any{"path": fmt.Sprintf("/etc/web/%d.txt", i), "content": strings.Repeat("ж", 200000)}
			})
		}},
		{"file bytes over 262144", "spec.files[0].binaryContent", func(o map[string]any) {
			delete(item(o, "files", 0), "content")
			item(o, "files", 0)["binaryContent"] = base64.StdEncoding.EncodeToString(make([]byte, 262145))
		}},
		{"file bytes not base64", "spec.files[0].binaryContent", func(o map[string]any) {
			delete(item(o, "files", 0), "content")
			item(o, "files", 0)["binaryContent"] = "not base64!"
		}},
		{"file mounted by a sidecar that does not exist", "spec.files", setFile(0, "sidecars", []any{"exporter"})},
		{"file ConfigMap key with a slash", "spec.files[1].configMapKeyRef.key", func(o map[string]any) {
			item(o, "files", 1)["configMapKeyRef"] = map[string]any{"name": "cfg", "key": "conf/app.yaml"}
		}},
		{"file ConfigMap key ..", "spec.files[1].configMapKeyRef.key", func(o map[string]any) {
			item(o, "files", 1)["configMapKeyRef"] = map[string]any{"name": "cfg", "key": ".."}
		}},
		{"file Secret name not a DNS subdomain", "spec.files[1].secretKeyRef.name", func(o map[string]any) {
			delete(item(o, "files", 1), "configMapKeyRef")
			item(o, "files", 1)["secretKeyRef"] = map[string]any{"name": "Creds", "key": "password"}
		}},
		{"files, 33 of them", "spec.files", func(o map[string]any) {
			spec(o)["files"] = repeat(33, func(i int) any {
				return map[string]any{"path": fmt.Sprintf("/etc/web/%d.txt", i), "content": "x"}
			})
		}},
		{"volume named deployobject-files", "spec.volumes", func(o map[string]any) {
			item(o, "volumes", 1)["name"] = "deployobject-files"
			item(o, "volumeMounts", 1)["name"] = "deployobject-files"
		}},
		{"serviceAccount beside serviceAccountName", "spec.serviceAccount", setSpec("serviceAccount", map[string]any{"name": "web-runtime"})},
		{"serviceAccount named default", "spec.serviceAccount.name", func(o map[string]any) {
			delete(spec(o), "serviceAccountName")
			spec(o)["serviceAccount"] = map[string]any{"name": "default"}
		}},
		{"serviceAccount name not a DNS subdomain", "spec.serviceAccount.name", func(o map[string]any) {
			delete(spec(o), "serviceAccountName")
			spec(o)["serviceAccount"] = map[string]any{"name": "Web_Runtime"}
		}},
		{"serviceAccount name too long", "spec.serviceAccount.name", func(o map[string]any) {
			delete(spec(o), "serviceAccountName")
			spec(o)["serviceAccount"] = map[string]any{"name": dnsSubdomain(254, 'a')}
		}},
		{"serviceAccount annotation under the controller's prefix", "spec.serviceAccount.metadata.annotations", func(o map[string]any) {
			delete(spec(o), "serviceAccountName")
			spec(o)["serviceAccount"] = map[string]any{"metadata": map[string]any{"annotations": map[string]any{"app.deployobject.dev/owned-metadata": "a:x"}}}
		}},
		{"serviceAccount label value too long", "spec.serviceAccount.metadata.labels", func(o map[string]any) {
			delete(spec(o), "serviceAccountName")
			spec(o)["serviceAccount"] = map[string]any{"metadata": map[string]any{"labels": map[string]any{"team": strings.Repeat("x", 64)}}}
		}},
		// The Pod API turns a negative grace period into 1 second rather
		// than refusing it.
		{"terminationGracePeriodSeconds negative", "spec.terminationGracePeriodSeconds", setSpec("terminationGracePeriodSeconds", int64(-1))},
		{"preStop sleep longer than the grace period", "spec.lifecycle", setSpec("terminationGracePeriodSeconds", int64(4))},
		{"sidecar preStop sleep longer than the default grace period", "spec.sidecars", func(o map[string]any) {
			delete(spec(o), "terminationGracePeriodSeconds")
			item(o, "sidecars", 0)["lifecycle"] = map[string]any{"preStop": map[string]any{"sleep": map[string]any{"seconds": int64(31)}}}
		}},
		{"preStop sleep negative", "spec.lifecycle.preStop.sleep.seconds", func(o map[string]any) {
			specMap(o, "lifecycle")["preStop"] = map[string]any{"sleep": map[string]any{"seconds": int64(-1)}}
		}},
		{"strategy Recreate with rollingUpdate", "spec.strategy.rollingUpdate", func(o map[string]any) {
			specMap(o, "strategy")["type"] = "Recreate"
		}},
		{"progressDeadlineSeconds not above minReadySeconds", "spec.progressDeadlineSeconds", setSpec("progressDeadlineSeconds", int64(5))},
		{"disruptionBudget with both", "spec.disruptionBudget", setSpec("disruptionBudget", map[string]any{"minAvailable": int64(1), "maxUnavailable": int64(1)})},
		{"disruptionBudget with neither", "spec.disruptionBudget", setSpec("disruptionBudget", map[string]any{})},
		{"minAvailable equal to replicas", "spec.disruptionBudget.minAvailable", setSpec("disruptionBudget", map[string]any{"minAvailable": int64(2)})},
		{"minAvailable at the default replicas", "spec.disruptionBudget.minAvailable", func(o map[string]any) {
			delete(spec(o), "replicas")
			spec(o)["disruptionBudget"] = map[string]any{"minAvailable": int64(1)}
		}},
		{"minAvailable 100%", "spec.disruptionBudget.minAvailable", setSpec("disruptionBudget", map[string]any{"minAvailable": "100%"})},
		// 51% of 2 pods, rounded up, is 2.
		{"minAvailable 51% of two replicas", "spec.disruptionBudget.minAvailable", setSpec("disruptionBudget", map[string]any{"minAvailable": "51%"})},
		{"minAvailable at autoscaling minReplicas", "spec.disruptionBudget.minAvailable", func(o map[string]any) {
			spec(o)["replicas"] = int64(5)
			spec(o)["autoscaling"] = map[string]any{"minReplicas": int64(2), "maxReplicas": int64(6), "targetCPUUtilizationPercentage": int64(70)}
			spec(o)["disruptionBudget"] = map[string]any{"minAvailable": int64(2)}
		}},
		{"minAvailable negative", "spec.disruptionBudget.minAvailable", setSpec("disruptionBudget", map[string]any{"minAvailable": int64(-1)})},
		{"minAvailable above 100%", "spec.disruptionBudget.minAvailable", setSpec("disruptionBudget", map[string]any{"minAvailable": "101%"})},
		{"maxUnavailable zero", "spec.disruptionBudget.maxUnavailable", setSpec("disruptionBudget", map[string]any{"maxUnavailable": int64(0)})},
		{"maxUnavailable 0%", "spec.disruptionBudget.maxUnavailable", setSpec("disruptionBudget", map[string]any{"maxUnavailable": "0%"})},
		{"maxUnavailable not a number or percentage", "spec.disruptionBudget.maxUnavailable", setSpec("disruptionBudget", map[string]any{"maxUnavailable": "one"})},
		{"autoscaling minReplicas above maxReplicas", "spec.autoscaling", setSpec("autoscaling", map[string]any{"minReplicas": int64(4), "maxReplicas": int64(3), "targetCPUUtilizationPercentage": int64(70)})},
		{"autoscaling maxReplicas missing", "spec.autoscaling.maxReplicas", setSpec("autoscaling", map[string]any{"targetCPUUtilizationPercentage": int64(70)})},
		{"autoscaling maxReplicas too many", "spec.autoscaling.maxReplicas", setSpec("autoscaling", map[string]any{"maxReplicas": int64(10001), "targetCPUUtilizationPercentage": int64(70)})},
		{"autoscaling minReplicas zero", "spec.autoscaling.minReplicas", setSpec("autoscaling", map[string]any{"minReplicas": int64(0), "maxReplicas": int64(3), "targetCPUUtilizationPercentage": int64(70)})},
		{"autoscaling without a target", "spec.autoscaling", setSpec("autoscaling", map[string]any{"maxReplicas": int64(3)})},
		{"autoscaling CPU target zero", "spec.autoscaling.targetCPUUtilizationPercentage", setSpec("autoscaling", map[string]any{"maxReplicas": int64(3), "targetCPUUtilizationPercentage": int64(0)})},
		{"autoscaling memory target too high", "spec.autoscaling.targetMemoryUtilizationPercentage", setSpec("autoscaling", map[string]any{"maxReplicas": int64(3), "targetMemoryUtilizationPercentage": int64(1001)})},
		{"autoscaling on CPU without a CPU request", "spec.autoscaling.targetCPUUtilizationPercentage", func(o map[string]any) {
			delete(resources(o, "requests"), "cpu")
			delete(resources(o, "limits"), "cpu")
			spec(o)["autoscaling"] = map[string]any{"maxReplicas": int64(3), "targetCPUUtilizationPercentage": int64(70)}
		}},
		{"autoscaling on memory without resources", "spec.autoscaling.targetMemoryUtilizationPercentage", func(o map[string]any) {
			delete(spec(o), "resources")
			spec(o)["autoscaling"] = map[string]any{"maxReplicas": int64(3), "targetMemoryUtilizationPercentage": int64(70)}
		}},
		{"autoscaling stabilization window over an hour", "spec.autoscaling.behavior.scaleUp.stabilizationWindowSeconds", setSpec("autoscaling", map[string]any{
			"maxReplicas": int64(3), "targetCPUUtilizationPercentage": int64(70),
			"behavior": map[string]any{"scaleUp": map[string]any{"stabilizationWindowSeconds": int64(3601)}},
		})},
		{"autoscaling policy period zero", "spec.autoscaling.behavior.scaleDown.policies[0].periodSeconds", setSpec("autoscaling", map[string]any{
			"maxReplicas": int64(3), "targetCPUUtilizationPercentage": int64(70),
			"behavior": map[string]any{"scaleDown": map[string]any{"policies": []any{map[string]any{"type": "Percent", "value": int64(10), "periodSeconds": int64(0)}}}},
		})},
		{"autoscaling stabilization window negative", "spec.autoscaling.behavior.scaleDown.stabilizationWindowSeconds", setSpec("autoscaling", map[string]any{
			"maxReplicas": int64(3), "targetCPUUtilizationPercentage": int64(70),
			"behavior": map[string]any{"scaleDown": map[string]any{"stabilizationWindowSeconds": int64(-1)}},
		})},
		{"autoscaling policy period over half an hour", "spec.autoscaling.behavior.scaleUp.policies[0].periodSeconds", setSpec("autoscaling", map[string]any{
			"maxReplicas": int64(3), "targetCPUUtilizationPercentage": int64(70),
			"behavior": map[string]any{"scaleUp": map[string]any{"policies": []any{map[string]any{"type": "Pods", "value": int64(1), "periodSeconds": int64(1801)}}}},
		})},
		{"autoscaling policy value zero", "spec.autoscaling.behavior.scaleUp.policies[1].value", setSpec("autoscaling", map[string]any{
			"maxReplicas": int64(3), "targetCPUUtilizationPercentage": int64(70),
			"behavior": map[string]any{"scaleUp": map[string]any{"policies": []any{map[string]any{"type": "Pods", "value": int64(4), "periodSeconds": int64(15)}, map[string]any{"type": "Percent", "value": int64(0), "periodSeconds": int64(15)}}}},
		})},
		{"autoscaling policy type Pod", "spec.autoscaling.behavior.scaleUp.policies[0].type", setSpec("autoscaling", map[string]any{
			"maxReplicas": int64(3), "targetCPUUtilizationPercentage": int64(70),
			"behavior": map[string]any{"scaleUp": map[string]any{"policies": []any{map[string]any{"type": "Pod", "value": int64(4), "periodSeconds": int64(15)}}}},
		})},
		{"autoscaling policy type missing", "spec.autoscaling.behavior.scaleDown.policies[0].type", setSpec("autoscaling", map[string]any{
			"maxReplicas": int64(3), "targetCPUUtilizationPercentage": int64(70),
			"behavior": map[string]any{"scaleDown": map[string]any{"policies": []any{map[string]any{"value": int64(10), "periodSeconds": int64(60)}}}},
		})},
		{"autoscaling selectPolicy Sometimes", "spec.autoscaling.behavior.scaleUp.selectPolicy", setSpec("autoscaling", map[string]any{
			"maxReplicas": int64(3), "targetCPUUtilizationPercentage": int64(70),
			"behavior": map[string]any{"scaleUp": map[string]any{"selectPolicy": "Sometimes"}},
		})},
		{"autoscaling policies empty", "spec.autoscaling.behavior.scaleDown.policies", setSpec("autoscaling", map[string]any{
			"maxReplicas": int64(3), "targetCPUUtilizationPercentage": int64(70),
			"behavior": map[string]any{"scaleDown": map[string]any{"policies": []any{}}},
		})},
		{"autoscaling tolerance negative", "spec.autoscaling.behavior.scaleDown.tolerance", setSpec("autoscaling", map[string]any{
			"maxReplicas": int64(3), "targetCPUUtilizationPercentage": int64(70),
			"behavior": map[string]any{"scaleDown": map[string]any{"tolerance": "-0.05"}},
		})},
		{"autoscaling tolerance negative as a number", "spec.autoscaling.behavior.scaleUp.tolerance", setSpec("autoscaling", map[string]any{
			"maxReplicas": int64(3), "targetCPUUtilizationPercentage": int64(70),
			"behavior": map[string]any{"scaleUp": map[string]any{"tolerance": int64(-1)}},
		})},
		{"autoscaling tolerance negative in milli", "spec.autoscaling.behavior.scaleUp.tolerance", setSpec("autoscaling", map[string]any{
			"maxReplicas": int64(3), "targetCPUUtilizationPercentage": int64(70),
			"behavior": map[string]any{"scaleUp": map[string]any{"tolerance": "-1m"}},
		})},
		{"autoscaling tolerance not a quantity", "spec.autoscaling.behavior.scaleDown.tolerance", setSpec("autoscaling", map[string]any{
			"maxReplicas": int64(3), "targetCPUUtilizationPercentage": int64(70),
			"behavior": map[string]any{"scaleDown": map[string]any{"tolerance": "5%"}},
		})},
		{"autoscaling tolerance too long", "spec.autoscaling.behavior.scaleDown.tolerance", setSpec("autoscaling", map[string]any{
			"maxReplicas": int64(3), "targetCPUUtilizationPercentage": int64(70),
			"behavior": map[string]any{"scaleDown": map[string]any{"tolerance": "0." + strings.Repeat("0", 62) + "5"}},
		})},
		{"autoscaling metrics empty without a shortcut", "spec.autoscaling", setMetrics()},
		{"autoscaling metrics too many", "spec.autoscaling.metrics", setMetrics(repeat(9, func(i int) any {
			return map[string]any{"type": "External", "external": map[string]any{"metric": map[string]any{"name": fmt.Sprintf("m%d", i)}, "target": value("1")}}
		})...)},
		{"autoscaling metric type unknown", "spec.autoscaling.metrics[0].type", setMetrics(map[string]any{"type": "Custom", "external": map[string]any{"metric": map[string]any{"name": "m"}, "target": value("1")}})},
		{"autoscaling metric type missing", "spec.autoscaling.metrics[0].type", setMetrics(map[string]any{"external": map[string]any{"metric": map[string]any{"name": "m"}, "target": value("1")}})},
		{"autoscaling metric without its source", "spec.autoscaling.metrics[0]", setMetrics(map[string]any{"type": "Pods"})},
		{"autoscaling metric with another type's source", "spec.autoscaling.metrics[0]", setMetrics(map[string]any{"type": "Pods", "external": map[string]any{"metric": map[string]any{"name": "m"}, "target": value("1")}})},
		{"autoscaling metric with two sources", "spec.autoscaling.metrics[0]", setMetrics(map[string]any{"type": "External",
			"external": map[string]any{"metric": map[string]any{"name": "m"}, "target": value("1")},
			"pods":     map[string]any{"metric": map[string]any{"name": "m"}, "target": avgValue("1")},
		})},
		{"autoscaling target type unknown", "spec.autoscaling.metrics[0].external.target.type", setMetrics(queueMetric(map[string]any{"type": "Total", "value": "1"}))},
		{"autoscaling target type without its field", "spec.autoscaling.metrics[0].external.target", setMetrics(queueMetric(map[string]any{"type": "AverageValue", "value": "1"}))},
		{"autoscaling target with two fields", "spec.autoscaling.metrics[0].external.target", setMetrics(queueMetric(map[string]any{"type": "Value", "value": "1", "averageValue": "1"}))},
		{"autoscaling Utilization of an External metric", "spec.autoscaling.metrics[0].external.target.type", setMetrics(queueMetric(utilization(50)))},
		{"autoscaling Utilization of an Object metric", "spec.autoscaling.metrics[0].object.target.type", setMetrics(map[string]any{"type": "Object", "object": map[string]any{
			"describedObject": map[string]any{"kind": "Service", "name": "web"}, "metric": map[string]any{"name": "m"}, "target": utilization(50),
		}})},
		{"autoscaling Value of a Pods metric", "spec.autoscaling.metrics[0].pods.target.type", setMetrics(map[string]any{"type": "Pods", "pods": map[string]any{"metric": map[string]any{"name": "m"}, "target": value("1")}})},
		{"autoscaling Value of a Resource metric", "spec.autoscaling.metrics[0].resource.target.type", setMetrics(map[string]any{"type": "Resource", "resource": map[string]any{"name": "memory", "target": value("1Gi")}})},
		{"autoscaling Value of a ContainerResource metric", "spec.autoscaling.metrics[0].containerResource.target.type", setMetrics(map[string]any{"type": "ContainerResource", "containerResource": map[string]any{"name": "memory", "container": "app", "target": value("1Gi")}})},
		{"autoscaling target value zero", "spec.autoscaling.metrics[0].external.target.value", setMetrics(queueMetric(value("0")))},
		{"autoscaling target value zero as a number", "spec.autoscaling.metrics[0].external.target.value", setMetrics(queueMetric(value(int64(0))))},
		{"autoscaling target averageValue negative", "spec.autoscaling.metrics[0].external.target.averageValue", setMetrics(queueMetric(avgValue("-1")))},
		{"autoscaling target averageValue 0m", "spec.autoscaling.metrics[0].external.target.averageValue", setMetrics(queueMetric(avgValue("0m")))},
		{"autoscaling target averageValue not a quantity", "spec.autoscaling.metrics[0].external.target.averageValue", setMetrics(queueMetric(avgValue("thirty")))},
		{"autoscaling target averageValue too long", "spec.autoscaling.metrics[0].external.target.averageValue", setMetrics(queueMetric(avgValue("1" + strings.Repeat("0", 64))))},
		{"autoscaling target averageUtilization zero", "spec.autoscaling.metrics[0].resource.target.averageUtilization", setMetrics(map[string]any{"type": "Resource", "resource": map[string]any{"name": "memory", "target": utilization(0)}})},
		{"autoscaling target averageUtilization too high", "spec.autoscaling.metrics[0].resource.target.averageUtilization", setMetrics(map[string]any{"type": "Resource", "resource": map[string]any{"name": "memory", "target": utilization(1001)}})},
		{"autoscaling metric name missing", "spec.autoscaling.metrics[0].pods.metric.name", setMetrics(map[string]any{"type": "Pods", "pods": map[string]any{"metric": map[string]any{}, "target": avgValue("1")}})},
		{"autoscaling metric name empty", "spec.autoscaling.metrics[0].pods.metric.name", setMetrics(map[string]any{"type": "Pods", "pods": map[string]any{"metric": map[string]any{"name": ""}, "target": avgValue("1")}})},
		{"autoscaling metric name '.'", "spec.autoscaling.metrics[0].external.metric.name", setMetrics(map[string]any{"type": "External", "external": map[string]any{"metric": map[string]any{"name": "."}, "target": value("1")}})},
		{"autoscaling metric name '..'", "spec.autoscaling.metrics[0].external.metric.name", setMetrics(map[string]any{"type": "External", "external": map[string]any{"metric": map[string]any{"name": ".."}, "target": value("1")}})},
		{"autoscaling metric name with a slash", "spec.autoscaling.metrics[0].external.metric.name", setMetrics(map[string]any{"type": "External", "external": map[string]any{"metric": map[string]any{"name": "queue/ready"}, "target": value("1")}})},
		{"autoscaling metric name with a percent sign", "spec.autoscaling.metrics[0].external.metric.name", setMetrics(map[string]any{"type": "External", "external": map[string]any{"metric": map[string]any{"name": "cpu%"}, "target": value("1")}})},
		{"autoscaling metric name too long", "spec.autoscaling.metrics[0].external.metric.name", setMetrics(map[string]any{"type": "External", "external": map[string]any{"metric": map[string]any{"name": strings.Repeat("m", 254)}, "target": value("1")}})},
		{"autoscaling metric selector label key with a space", "spec.autoscaling.metrics[0].external.metric.selector.matchLabels", setMetrics(map[string]any{"type": "External", "external": map[string]any{
			"metric": map[string]any{"name": "m", "selector": map[string]any{"matchLabels": map[string]any{"a b": "x"}}}, "target": value("1"),
		}})},
		{"autoscaling metric selector In without values", "spec.autoscaling.metrics[0].pods.metric.selector.matchExpressions[0].values", setMetrics(map[string]any{"type": "Pods", "pods": map[string]any{
			"metric": map[string]any{"name": "m", "selector": map[string]any{"matchExpressions": []any{map[string]any{"key": "a", "operator": "In"}}}}, "target": avgValue("1"),
		}})},
		{"autoscaling Object without describedObject", "spec.autoscaling.metrics[0].object.describedObject", setMetrics(map[string]any{"type": "Object", "object": map[string]any{
			"metric": map[string]any{"name": "m"}, "target": value("1"),
		}})},
		{"autoscaling Object describedObject without kind", "spec.autoscaling.metrics[0].object.describedObject.kind", setMetrics(objectMetric(map[string]any{"name": "web"}))},
		{"autoscaling Object describedObject without name", "spec.autoscaling.metrics[0].object.describedObject.name", setMetrics(objectMetric(map[string]any{"kind": "Service"}))},
		{"autoscaling Object describedObject kind with a slash", "spec.autoscaling.metrics[0].object.describedObject.kind", setMetrics(objectMetric(map[string]any{"kind": "apps/Deployment", "name": "web"}))},
		{"autoscaling Object describedObject name '..'", "spec.autoscaling.metrics[0].object.describedObject.name", setMetrics(objectMetric(map[string]any{"kind": "Service", "name": ".."}))},
		{"autoscaling Object describedObject name with a percent sign", "spec.autoscaling.metrics[0].object.describedObject.name", setMetrics(objectMetric(map[string]any{"kind": "Service", "name": "web%2F"}))},
		{"autoscaling Object describedObject apiVersion with two slashes", "spec.autoscaling.metrics[0].object.describedObject.apiVersion", setMetrics(objectMetric(map[string]any{"apiVersion": "apps/v1/x", "kind": "Deployment", "name": "web"}))},
		{"autoscaling Resource metric of a GPU", "spec.autoscaling.metrics[0].resource.name", setMetrics(map[string]any{"type": "Resource", "resource": map[string]any{"name": "nvidia.com/gpu", "target": avgValue("1")}})},
		{"autoscaling Resource metric without a target", "spec.autoscaling.metrics[0].resource.target", setMetrics(map[string]any{"type": "Resource", "resource": map[string]any{"name": "memory"}})},
		{"autoscaling ContainerResource of ephemeral storage", "spec.autoscaling.metrics[0].containerResource.name", setMetrics(map[string]any{"type": "ContainerResource", "containerResource": map[string]any{"name": "ephemeral-storage", "container": "app", "target": avgValue("1Gi")}})},
		{"autoscaling ContainerResource container not a DNS label", "spec.autoscaling.metrics[0].containerResource.container", setMetrics(map[string]any{"type": "ContainerResource", "containerResource": map[string]any{"name": "cpu", "container": "App", "target": avgValue("100m")}})},
		{"autoscaling ContainerResource container missing", "spec.autoscaling.metrics[0].containerResource.container", setMetrics(map[string]any{"type": "ContainerResource", "containerResource": map[string]any{"name": "cpu", "target": avgValue("100m")}})},
		{"autoscaling ContainerResource of a container the pod lacks", "spec.autoscaling.metrics", setMetrics(map[string]any{"type": "ContainerResource", "containerResource": map[string]any{"name": "cpu", "container": "worker", "target": avgValue("100m")}})},
		// An init container is not running when the pods are measured.
		{"autoscaling ContainerResource of an init container", "spec.autoscaling.metrics", setMetrics(map[string]any{"type": "ContainerResource", "containerResource": map[string]any{"name": "cpu", "container": "migrate", "target": avgValue("100m")}})},
		{"autoscaling Resource utilization without a request", "spec.autoscaling.metrics", func(o map[string]any) {
			delete(resources(o, "requests"), "cpu")
			delete(resources(o, "limits"), "cpu")
			setMetrics(map[string]any{"type": "Resource", "resource": map[string]any{"name": "cpu", "target": utilization(70)}})(o)
		}},
		{"autoscaling ContainerResource utilization of app without resources", "spec.autoscaling.metrics", func(o map[string]any) {
			delete(spec(o), "resources")
			setMetrics(map[string]any{"type": "ContainerResource", "containerResource": map[string]any{"name": "memory", "container": "app", "target": utilization(70)}})(o)
		}},
		{"autoscaling ContainerResource utilization of a sidecar without a request", "spec.autoscaling.metrics", func(o map[string]any) {
			delete(item(o, "sidecars", 0), "resources")
			setMetrics(map[string]any{"type": "ContainerResource", "containerResource": map[string]any{"name": "cpu", "container": "proxy", "target": utilization(70)}})(o)
		}},
		{"autoscaling Resource metric of the CPU shortcut's resource", "spec.autoscaling.metrics", setSpec("autoscaling", map[string]any{
			"maxReplicas": int64(3), "targetCPUUtilizationPercentage": int64(70),
			"metrics": []any{map[string]any{"type": "Resource", "resource": map[string]any{"name": "cpu", "target": avgValue("500m")}}},
		})},
		{"autoscaling Resource metric of the memory shortcut's resource", "spec.autoscaling.metrics", setSpec("autoscaling", map[string]any{
			"maxReplicas": int64(3), "targetMemoryUtilizationPercentage": int64(70),
			"metrics": []any{map[string]any{"type": "Resource", "resource": map[string]any{"name": "memory", "target": utilization(80)}}},
		})},
		{"autoscaling two Resource metrics of one resource", "spec.autoscaling.metrics", setMetrics(
			map[string]any{"type": "Resource", "resource": map[string]any{"name": "memory", "target": utilization(80)}},
			map[string]any{"type": "Resource", "resource": map[string]any{"name": "memory", "target": avgValue("1Gi")}},
		)},
		{"autoscaling two ContainerResource metrics of one container and resource", "spec.autoscaling.metrics", setMetrics(
			map[string]any{"type": "ContainerResource", "containerResource": map[string]any{"name": "cpu", "container": "proxy", "target": utilization(80)}},
			map[string]any{"type": "ContainerResource", "containerResource": map[string]any{"name": "cpu", "container": "proxy", "target": avgValue("100m")}},
		)},
		{"workingDir too long", "spec.workingDir", setSpec("workingDir", "/"+strings.Repeat("w", 4096))},
		{"resizePolicy for a GPU", "spec.resizePolicy[0].resourceName", setSpec("resizePolicy", []any{map[string]any{"resourceName": "nvidia.com/gpu", "restartPolicy": "NotRequired"}})},
		{"resizePolicy restartPolicy unknown", "spec.resizePolicy[0].restartPolicy", setSpec("resizePolicy", []any{map[string]any{"resourceName": "cpu", "restartPolicy": "Always"}})},
		{"resizePolicy twice for cpu", "spec.resizePolicy[1]", setSpec("resizePolicy", []any{map[string]any{"resourceName": "cpu", "restartPolicy": "NotRequired"}, map[string]any{"resourceName": "cpu", "restartPolicy": "RestartContainer"}})},
		{"podResources for ephemeral storage", "spec.podResources.requests", setSpec("podResources", map[string]any{"requests": map[string]any{"ephemeral-storage": "1Gi"}})},
		{"podResources with claims", "spec.podResources", setSpec("podResources", map[string]any{"claims": []any{map[string]any{"name": "gpu"}}})},
		{"podResources request above its limit", "spec.podResources", setSpec("podResources", map[string]any{"requests": map[string]any{"memory": "2Gi"}, "limits": map[string]any{"memory": "1Gi"}})},
		{"podResources request below the main container's", "spec.podResources.requests", setSpec("podResources", map[string]any{"requests": map[string]any{"cpu": "50m"}})},
		{"runtimeClassName not a DNS subdomain", "spec.runtimeClassName", setSpec("runtimeClassName", "gVisor")},
		{"hostAliases ip not an IP address", "spec.hostAliases[0].ip", setSpec("hostAliases", []any{map[string]any{"ip": "db", "hostnames": []any{"db.internal"}}})},
		{"hostAliases ip with a leading zero", "spec.hostAliases[0].ip", setSpec("hostAliases", []any{map[string]any{"ip": "192.0.2.010"}})},
		{"hostAliases host name not a DNS subdomain", "spec.hostAliases[0].hostnames", setSpec("hostAliases", []any{map[string]any{"ip": "192.0.2.10", "hostnames": []any{"DB_internal"}}})},
		{"dnsPolicy unknown", "spec.dnsPolicy", setSpec("dnsPolicy", "ClusterOnly")},
		{"dnsPolicy None without dnsConfig", "spec.dnsConfig", setSpec("dnsPolicy", "None")},
		{"dnsPolicy None without a nameserver", "spec.dnsConfig", func(o map[string]any) {
			spec(o)["dnsPolicy"] = "None"
			spec(o)["dnsConfig"] = map[string]any{"searches": []any{"example.com"}}
		}},
		{"dnsConfig with four nameservers", "spec.dnsConfig.nameservers", setSpec("dnsConfig", map[string]any{"nameservers": []any{"192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"}})},
		{"dnsConfig nameserver not an IP address", "spec.dnsConfig.nameservers", setSpec("dnsConfig", map[string]any{"nameservers": []any{"dns.example.com"}})},
		{"dnsConfig search domain with an underscore", "spec.dnsConfig.searches", setSpec("dnsConfig", map[string]any{"searches": []any{"my_domain.example"}})},
		{"dnsConfig search domains over 2048 characters", "spec.dnsConfig.searches", setSpec("dnsConfig", map[string]any{"searches": repeat(9, func(int) any { return dnsSubdomain(253, 's') })})},
		{"dnsConfig option without a name", "spec.dnsConfig.options", setSpec("dnsConfig", map[string]any{"options": []any{map[string]any{"value": "2"}}})},
		{"networkPolicy peer with no kind", "spec.networkPolicy.from[0]", setPolicyFrom(map[string]any{})},
		{"networkPolicy peer with two kinds", "spec.networkPolicy.from[0]", setPolicyFrom(map[string]any{"deployObject": "a", "ipBlock": map[string]any{"cidr": "10.0.0.0/8"}})},
		{"networkPolicy peer deployObject not a DNS-1035 label", "spec.networkPolicy.from[0].deployObject", setPolicyFrom(map[string]any{"deployObject": "1web"})},
		{"networkPolicy ipBlock cidr not a CIDR", "spec.networkPolicy.from[0].ipBlock.cidr", setPolicyFrom(map[string]any{"ipBlock": map[string]any{"cidr": "10.0.0.0"}})},
		{"networkPolicy ipBlock cidr with host bits", "spec.networkPolicy.from[0].ipBlock.cidr", setPolicyFrom(map[string]any{"ipBlock": map[string]any{"cidr": "10.0.0.1/8"}})},
		{"networkPolicy ipBlock except outside cidr", "spec.networkPolicy.from[0].ipBlock.except", setPolicyFrom(map[string]any{"ipBlock": map[string]any{"cidr": "10.0.0.0/16", "except": []any{"10.1.0.0/24"}}})},
		{"networkPolicy ipBlock except equal to cidr", "spec.networkPolicy.from[0].ipBlock.except", setPolicyFrom(map[string]any{"ipBlock": map[string]any{"cidr": "10.0.0.0/16", "except": []any{"10.0.0.0/16"}}})},
		{"networkPolicy selector label key with a space", "spec.networkPolicy.from[0].podSelector.matchLabels", setPolicyFrom(map[string]any{"podSelector": map[string]any{"matchLabels": map[string]any{"a b": "x"}}})},
		{"networkPolicy selector label value too long", "spec.networkPolicy.from[0].namespaceSelector.matchLabels", setPolicyFrom(map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"team": strings.Repeat("v", 64)}}})},
		{"networkPolicy selector too many labels", "spec.networkPolicy.from[0].podSelector.matchLabels", setPolicyFrom(map[string]any{"podSelector": map[string]any{"matchLabels": func() map[string]any {
			m := map[string]any{}
			for i := range 17 {
				m[fmt.Sprintf("k%d", i)] = "v"
			}
			return m
		}()}})},
		{"networkPolicy selector operator unknown", "spec.networkPolicy.from[0].podSelector.matchExpressions[0].operator", setPolicyFrom(map[string]any{"podSelector": map[string]any{"matchExpressions": []any{map[string]any{"key": "tier", "operator": "Gt", "values": []any{"1"}}}}})},
		{"networkPolicy selector In without values", "spec.networkPolicy.from[0].podSelector.matchExpressions[0].values", setPolicyFrom(map[string]any{"podSelector": map[string]any{"matchExpressions": []any{map[string]any{"key": "tier", "operator": "In"}}}})},
		{"networkPolicy selector Exists with values", "spec.networkPolicy.from[0].podSelector.matchExpressions[0].values", setPolicyFrom(map[string]any{"podSelector": map[string]any{"matchExpressions": []any{map[string]any{"key": "tier", "operator": "Exists", "values": []any{"web"}}}}})},
		{"networkPolicy selector label key with a prefix of 254 characters", "spec.networkPolicy.from[0].podSelector.matchLabels", setPolicyFrom(map[string]any{"podSelector": map[string]any{"matchLabels": map[string]any{dnsSubdomain(254, 'p') + "/n": "x"}}})},
		{"service metadata label key with a prefix of 254 characters", "spec.service.metadata.labels", func(o map[string]any) {
			spec(o)["service"] = map[string]any{"metadata": map[string]any{"labels": map[string]any{dnsSubdomain(254, 'p') + "/n": "x"}}}
		}},
		{"route metadata annotation key with a prefix of 254 characters", "spec.route.metadata.annotations", func(o map[string]any) {
			spec(o)["route"] = map[string]any{"port": "http", "ingressClassName": "nginx", "metadata": map[string]any{"annotations": map[string]any{dnsSubdomain(254, 'p') + "/n": "x"}}}
		}},
		{"networkPolicy selector value not a label value", "spec.networkPolicy.from[0].podSelector.matchExpressions[0].values[0]", setPolicyFrom(map[string]any{"podSelector": map[string]any{"matchExpressions": []any{map[string]any{"key": "tier", "operator": "In", "values": []any{"-web"}}}}})},
		{"networkPolicy selector key with an empty name", "spec.networkPolicy.from[0].podSelector.matchExpressions[0].key", setPolicyFrom(map[string]any{"podSelector": map[string]any{"matchExpressions": []any{map[string]any{"key": "example.com/", "operator": "Exists"}}}})},
		{"networkPolicy from too many peers", "spec.networkPolicy.from", setSpec("networkPolicy", map[string]any{"from": repeat(17, func(i int) any { return map[string]any{"deployObject": fmt.Sprintf("d%d", i)} })})},
		{"networkPolicy egress to too many peers", "spec.networkPolicy.egress.to", setSpec("networkPolicy", map[string]any{"egress": map[string]any{"to": repeat(17, func(i int) any { return map[string]any{"deployObject": fmt.Sprintf("d%d", i)} })}})},
		{"networkPolicy routeFrom without a route", "spec.networkPolicy.routeFrom", setSpec("networkPolicy", map[string]any{"routeFrom": map[string]any{"podSelector": map[string]any{}}})},
		{"networkPolicy monitoringFrom without monitoring", "spec.networkPolicy.monitoringFrom", func(o map[string]any) {
			delete(spec(o), "monitoring")
			spec(o)["networkPolicy"] = map[string]any{"monitoringFrom": map[string]any{"podSelector": map[string]any{}}}
		}},
		{"networkPolicy monitoringFrom peer with two kinds", "spec.networkPolicy.monitoringFrom", setSpec("networkPolicy", map[string]any{"monitoringFrom": map[string]any{"deployObject": "prometheus", "ipBlock": map[string]any{"cidr": "10.0.0.0/8"}}})},
		{"networkPolicy metadata label of the controller", "spec.networkPolicy.metadata.labels", setSpec("networkPolicy", map[string]any{"metadata": map[string]any{"labels": map[string]any{"app.deployobject.dev/name": "x"}}})},
		{"route with both port and rules", "spec.route", setRoute(map[string]any{"rules": []any{map[string]any{"port": "http"}}})},
		{"route rules empty", "spec.route.rules", setSpec("route", map[string]any{"ingressClassName": "nginx", "rules": []any{}})},
		{"route path beside rules", "spec.route.path", setSpec("route", map[string]any{"ingressClassName": "nginx", "path": "/", "rules": []any{map[string]any{"port": "http"}}})},
		{"route rule without a port", "spec.route.rules[0].port", setSpec("route", map[string]any{"ingressClassName": "nginx", "rules": []any{map[string]any{"path": "/"}}})},
		{"route rule port not among ports", "spec.route.rules", setSpec("route", map[string]any{"ingressClassName": "nginx", "rules": []any{map[string]any{"port": "http"}, map[string]any{"path": "/grpc", "port": "grpc"}}})},
		{"route rule port UDP", "spec.route.rules", func(o map[string]any) {
			port(o, 1)["protocol"] = "UDP"
			spec(o)["route"] = map[string]any{"ingressClassName": "nginx", "rules": []any{map[string]any{"port": "metrics"}}}
		}},
		{"route rules repeat a path", "spec.route.rules", setSpec("route", map[string]any{"ingressClassName": "nginx", "rules": []any{map[string]any{"path": "/a", "port": "http"}, map[string]any{"path": "/a", "pathType": "Prefix", "port": "metrics"}}})},
		{"route rule path relative", "spec.route.rules[0].path", setSpec("route", map[string]any{"ingressClassName": "nginx", "rules": []any{map[string]any{"path": "api", "port": "http"}}})},
		{"route rule path with /../", "spec.route.rules[0].path", setSpec("route", map[string]any{"ingressClassName": "nginx", "rules": []any{map[string]any{"path": "/a/../b", "port": "http"}}})},
		{"route rule pathType unknown", "spec.route.rules[0].pathType", setSpec("route", map[string]any{"ingressClassName": "nginx", "rules": []any{map[string]any{"pathType": "Regex", "port": "http"}}})},
		{"route rules too many", "spec.route.rules", setSpec("route", map[string]any{"ingressClassName": "nginx", "rules": repeat(17, func(i int) any { return map[string]any{"path": fmt.Sprintf("/p%d", i), "port": "http"} })})},
		{"route rule timeout on an Ingress", "spec.route.rules", setSpec("route", map[string]any{"ingressClassName": "nginx", "rules": []any{map[string]any{"port": "http", "timeout": "30s"}}})},
		{"route rule timeout with a fraction", "spec.route.rules[0].timeout", setSpec("route", map[string]any{"parentRefs": []any{map[string]any{"name": "gw"}}, "rules": []any{map[string]any{"port": "http", "timeout": "1.5s"}}})},
		{"route rule timeout in days", "spec.route.rules[0].timeout", setSpec("route", map[string]any{"parentRefs": []any{map[string]any{"name": "gw"}}, "rules": []any{map[string]any{"port": "http", "timeout": "1d"}}})},
		{"route rule timeout of six digits", "spec.route.rules[0].timeout", setSpec("route", map[string]any{"parentRefs": []any{map[string]any{"name": "gw"}}, "rules": []any{map[string]any{"port": "http", "timeout": "100000s"}}})},
		{"route httpsRedirect on an Ingress", "spec.route.httpsRedirect", setRoute(map[string]any{"httpsRedirect": map[string]any{"parentRefs": []any{map[string]any{"name": "gw", "sectionName": "http"}}}})},
		{"route httpsRedirect without parentRefs", "spec.route.httpsRedirect.parentRefs", gatewayRouteWith(map[string]any{"httpsRedirect": map[string]any{}}, map[string]any{"name": "gw", "sectionName": "https"})},
		{"route httpsRedirect to a whole Gateway", "spec.route.httpsRedirect.parentRefs", gatewayRouteWith(map[string]any{"httpsRedirect": map[string]any{"parentRefs": []any{map[string]any{"name": "gw"}}}}, map[string]any{"name": "gw", "sectionName": "https"})},
		{"route httpsRedirect on the route's own listener", "spec.route.httpsRedirect.parentRefs", gatewayRouteWith(map[string]any{"httpsRedirect": map[string]any{"parentRefs": []any{map[string]any{"name": "gw", "sectionName": "https"}}}}, map[string]any{"name": "gw", "sectionName": "https"})},
		{"route httpsRedirect on a listener the route takes all of", "spec.route.httpsRedirect.parentRefs", gatewayRouteWith(map[string]any{"httpsRedirect": map[string]any{"parentRefs": []any{map[string]any{"name": "gw", "sectionName": "http"}}}}, map[string]any{"name": "gw"})},
		{"route httpsRedirect parentRefs repeated", "spec.route.httpsRedirect.parentRefs", gatewayRouteWith(map[string]any{"httpsRedirect": map[string]any{"parentRefs": []any{map[string]any{"name": "gw", "sectionName": "http"}, map[string]any{"name": "gw", "sectionName": "http"}}}}, map[string]any{"name": "gw", "sectionName": "https"})},
		{"route rules to gRPC and HTTP ports on Gateways", "spec.route.rules", func(o map[string]any) {
			port(o, 1)["appProtocol"] = "grpc"
			spec(o)["route"] = map[string]any{"parentRefs": []any{map[string]any{"name": "gw"}}, "rules": []any{map[string]any{"path": "/shop.v1.Cart/", "port": "metrics"}, map[string]any{"port": "http"}}}
		}},
		{"route to a gRPC port with a path that names no service", "spec.route.path", func(o map[string]any) {
			port(o, 1)["appProtocol"] = "grpc"
			spec(o)["route"] = map[string]any{"parentRefs": []any{map[string]any{"name": "gw"}}, "port": "metrics", "path": "/api"}
		}},
		{"route rule to a gRPC port with a timeout", "spec.route.rules", func(o map[string]any) {
			port(o, 1)["appProtocol"] = "grpc"
			spec(o)["route"] = map[string]any{"parentRefs": []any{map[string]any{"name": "gw"}}, "rules": []any{map[string]any{"port": "metrics", "timeout": "10s"}}}
		}},
		{"route rule to a gRPC port matching a service exactly", "spec.route.rules", func(o map[string]any) {
			port(o, 1)["appProtocol"] = "grpc"
			spec(o)["route"] = map[string]any{"parentRefs": []any{map[string]any{"name": "gw"}}, "rules": []any{map[string]any{"path": "/shop.v1.Cart/", "pathType": "Exact", "port": "metrics"}}}
		}},
		{"route rule to a gRPC port with a method prefix", "spec.route.rules", func(o map[string]any) {
			port(o, 1)["appProtocol"] = "grpc"
			spec(o)["route"] = map[string]any{"parentRefs": []any{map[string]any{"name": "gw"}}, "rules": []any{map[string]any{"path": "/shop.v1.Cart/Get", "port": "metrics"}}}
		}},
		{"route with both parentRefs and ingressClassName", "spec.route", setRoute(map[string]any{"parentRefs": []any{map[string]any{"name": "gw"}}})},
		{"route with neither parentRefs nor ingressClassName", "spec.route", setSpec("route", map[string]any{"port": "http"})},
		{"route with neither port nor rules", "spec.route", setSpec("route", map[string]any{"ingressClassName": "nginx"})},
		{"route port not among ports", "spec.route.port", setRoute(map[string]any{"port": "grpc"})},
		{"route port UDP", "spec.route.port", func(o map[string]any) {
			port(o, 1)["protocol"] = "UDP"
			spec(o)["route"] = map[string]any{"port": "metrics", "ingressClassName": "nginx"}
		}},
		{"route without ports", "spec.route.port", func(o map[string]any) {
			delete(spec(o), "ports")
			delete(spec(o), "serviceType")
			delete(specMap(o, "livenessProbe"), "httpGet")
			specMap(o, "livenessProbe")["tcpSocket"] = map[string]any{"port": int64(8080)}
			spec(o)["route"] = map[string]any{"port": "http", "ingressClassName": "nginx"}
		}},
		{"route hostname uppercase", "spec.route.hostnames[0]", setRoute(map[string]any{"hostnames": []any{"Shop.example.com"}})},
		{"route hostname wildcard not first", "spec.route.hostnames[0]", setRoute(map[string]any{"hostnames": []any{"shop.*.example.com"}})},
		{"route hostname bare wildcard", "spec.route.hostnames[0]", setRoute(map[string]any{"hostnames": []any{"*"}})},
		{"route hostname an IP address", "spec.route.hostnames[0]", setRoute(map[string]any{"hostnames": []any{"192.0.2.10"}})},
		{"route hostname too long", "spec.route.hostnames[0]", setRoute(map[string]any{"hostnames": []any{dnsSubdomain(254, 'h')}})},
		{"route hostnames repeated", "spec.route.hostnames", setRoute(map[string]any{"hostnames": []any{"a.example.com", "a.example.com"}})},
		{"route hostnames too many", "spec.route.hostnames", setRoute(map[string]any{"hostnames": repeat(17, func(i int) any { return fmt.Sprintf("h%d.example.com", i) })})},
		{"route path relative", "spec.route.path", setRoute(map[string]any{"path": "api"})},
		{"route path with a space", "spec.route.path", setRoute(map[string]any{"path": "/a b"})},
		{"route path with a query", "spec.route.path", setRoute(map[string]any{"path": "/a?b=c"})},
		{"route path with //", "spec.route.path", setRoute(map[string]any{"path": "/a//b"})},
		{"route path with /../", "spec.route.path", setRoute(map[string]any{"path": "/a/../b"})},
		{"route path with an encoded slash", "spec.route.path", setRoute(map[string]any{"path": "/a%2fb"})},
		{"route path ending in /.", "spec.route.path", setRoute(map[string]any{"path": "/a/."})},
		{"route path too long", "spec.route.path", setRoute(map[string]any{"path": "/" + strings.Repeat("a", 1024)})},
		{"route tlsSecretName with parentRefs", "spec.route.tlsSecretName", func(o map[string]any) {
			spec(o)["route"] = map[string]any{"port": "http", "parentRefs": []any{map[string]any{"name": "gw"}}, "tlsSecretName": "tls"}
		}},
		{"route tlsSecretName not a DNS name", "spec.route.tlsSecretName", setRoute(map[string]any{"tlsSecretName": "TLS_cert"})},
		{"route ingressClassName not a DNS name", "spec.route.ingressClassName", setRoute(map[string]any{"ingressClassName": "Nginx Public"})},
		{"route parentRefs empty", "spec.route.parentRefs", setSpec("route", map[string]any{"port": "http", "parentRefs": []any{}})},
		{"route parentRef without a name", "spec.route.parentRefs[0].name", gatewayRoute(map[string]any{"namespace": "infra"})},
		{"route parentRef namespace not a DNS label", "spec.route.parentRefs[0].namespace", gatewayRoute(map[string]any{"name": "gw", "namespace": "infra.example"})},
		{"route parentRef sectionName uppercase", "spec.route.parentRefs[0].sectionName", gatewayRoute(map[string]any{"name": "gw", "sectionName": "HTTPS"})},
		{"route parentRefs repeated", "spec.route.parentRefs", gatewayRoute(map[string]any{"name": "gw", "sectionName": "a"}, map[string]any{"name": "gw", "sectionName": "a"})},
		{"route two parentRefs to one Gateway without sectionName", "spec.route.parentRefs", gatewayRoute(map[string]any{"name": "gw"}, map[string]any{"name": "gw", "sectionName": "https"})},
		{"route parentRefs too many", "spec.route.parentRefs", gatewayRoute(repeat(9, func(i int) any { return map[string]any{"name": fmt.Sprintf("gw%d", i)} })...)},
		{"monitoring without a port", "spec.monitoring.port", setSpec("monitoring", map[string]any{"path": "/metrics"})},
		{"monitoring port of no container", "spec.monitoring.port", setMonitoring(map[string]any{"port": "stats"})},
		{"monitoring port a sidecar's port without the name", "spec.monitoring.port", func(o map[string]any) {
			setMonitoring(map[string]any{"port": "exporter"})(o)
			item(o, "sidecars", 0)["ports"] = []any{map[string]any{"containerPort": int64(9100)}}
		}},
		{"monitoring port of UDP", "spec.monitoring.port", func(o map[string]any) {
			port(o, 1)["protocol"] = "UDP"
			setMonitoring(nil)(o)
		}},
		{"monitoring port a sidecar's port of UDP", "spec.monitoring.port", func(o map[string]any) {
			item(o, "sidecars", 0)["ports"] = []any{map[string]any{"name": "admin", "containerPort": int64(9901), "protocol": "UDP"}}
			setMonitoring(map[string]any{"port": "admin"})(o)
		}},
		{"monitoring port uppercase", "spec.monitoring.port", setMonitoring(map[string]any{"port": "Metrics"})},
		{"monitoring port too long", "spec.monitoring.port", setMonitoring(map[string]any{"port": strings.Repeat("m", MaxPortNameLength+1)})},
		{"monitoring path relative", "spec.monitoring.path", setMonitoring(map[string]any{"path": "metrics"})},
		{"monitoring path empty", "spec.monitoring.path", setMonitoring(map[string]any{"path": ""})},
		{"monitoring path with a query", "spec.monitoring.path", setMonitoring(map[string]any{"path": "/metrics?format=text"})},
		{"monitoring path with /../", "spec.monitoring.path", setMonitoring(map[string]any{"path": "/a/../metrics"})},
		{"monitoring path too long", "spec.monitoring.path", setMonitoring(map[string]any{"path": "/" + strings.Repeat("m", 1024)})},
		{"monitoring interval without a unit", "spec.monitoring.interval", setMonitoring(map[string]any{"interval": "30"})},
		{"monitoring interval empty", "spec.monitoring.interval", setMonitoring(map[string]any{"interval": ""})},
		{"monitoring interval with a fraction", "spec.monitoring.interval", setMonitoring(map[string]any{"interval": "1.5m"})},
		{"monitoring interval with units out of order", "spec.monitoring.interval", setMonitoring(map[string]any{"interval": "30s1m"})},
		{"monitoring interval with a unit Prometheus has not", "spec.monitoring.interval", setMonitoring(map[string]any{"interval": "30us"})},
		{"monitoring interval negative", "spec.monitoring.interval", setMonitoring(map[string]any{"interval": "-30s"})},
		{"monitoring interval of seven digits", "spec.monitoring.interval", setMonitoring(map[string]any{"interval": "1000000ms", "scrapeTimeout": nil})},
		{"monitoring interval too long", "spec.monitoring.interval", setMonitoring(map[string]any{"interval": strings.Repeat("1", 52) + "s", "scrapeTimeout": nil})},
		{"monitoring scrapeTimeout not a duration", "spec.monitoring.scrapeTimeout", setMonitoring(map[string]any{"scrapeTimeout": "ten seconds"})},
		{"monitoring scrapeTimeout over interval", "spec.monitoring.scrapeTimeout", setMonitoring(map[string]any{"interval": "30s", "scrapeTimeout": "1m"})},
		{"monitoring scrapeTimeout over interval by a millisecond", "spec.monitoring.scrapeTimeout", setMonitoring(map[string]any{"interval": "1m", "scrapeTimeout": "60001ms"})},
		{"monitoring scrapeTimeout in days over interval in hours", "spec.monitoring.scrapeTimeout", setMonitoring(map[string]any{"interval": "23h", "scrapeTimeout": "1d"})},
		{"monitoring scrapeTimeout in weeks over interval in days", "spec.monitoring.scrapeTimeout", setMonitoring(map[string]any{"interval": "6d", "scrapeTimeout": "1w"})},
		{"monitoring scrapeTimeout in years over interval in weeks", "spec.monitoring.scrapeTimeout", setMonitoring(map[string]any{"interval": "52w", "scrapeTimeout": "1y"})},
		{"monitoring scrapeTimeout in minutes over interval in ms", "spec.monitoring.scrapeTimeout", setMonitoring(map[string]any{"interval": "500ms", "scrapeTimeout": "1m"})},
		{"monitoring label of the controller's own", "spec.monitoring.metadata.labels", setMonitoring(map[string]any{"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/managed-by": "me"}}})},
		{"monitoring annotations too many", "spec.monitoring.metadata.annotations", setMonitoring(map[string]any{"metadata": map[string]any{"annotations": func() map[string]any {
			a := map[string]any{}
			for i := range 33 {
				a[fmt.Sprintf("a%d", i)] = "x"
			}
			return a
		}()}})},
		{"canary without a setWeight step", "spec.canary.steps", setCanary(pause("30s"), pause(""))},
		{"canary step with setWeight and pause", "spec.canary.steps[0]", setCanary(map[string]any{"setWeight": int64(20), "pause": map[string]any{}})},
		{"canary step with neither setWeight nor pause", "spec.canary.steps[1]", setCanary(weight(20), map[string]any{})},
		{"canary without steps", "spec.canary.steps", setCanary()},
		{"canary of 17 steps", "spec.canary.steps", setCanary(repeat(17, func(int) any { return weight(5) })...)},
		{"canary weight 0", "spec.canary.steps[0].setWeight", setCanary(weight(0))},
		{"canary weight 101", "spec.canary.steps[0].setWeight", setCanary(weight(101))},
		{"canary pause duration without a unit", "spec.canary.steps[1].pause.duration", setCanary(weight(20), pause("30"))},
		{"canary pause duration with a fraction", "spec.canary.steps[1].pause.duration", setCanary(weight(20), pause("1.5h"))},
		{"canary pause over 24h", "spec.canary.steps[1].pause.duration", setCanary(weight(20), pause("24h1ms"))},
		{"canary pause of 25h", "spec.canary.steps[1].pause.duration", setCanary(weight(20), pause("25h"))},
		{"canary scaleDownDelaySeconds over an hour", "spec.canary.scaleDownDelaySeconds", setCanaryWith(map[string]any{"scaleDownDelaySeconds": int64(3601)}, weight(20))},
		{"canary progressDeadlineSeconds zero", "spec.canary.autoAbort.progressDeadlineSeconds", setCanaryWith(map[string]any{"autoAbort": map[string]any{"progressDeadlineSeconds": int64(0)}}, weight(20))},
		{"canary maxRestarts negative", "spec.canary.autoAbort.maxRestarts", setCanaryWith(map[string]any{"autoAbort": map[string]any{"maxRestarts": int64(-1)}}, weight(20))},
		{"canary notReadySeconds zero", "spec.canary.autoAbort.notReadySeconds", setCanaryWith(map[string]any{"autoAbort": map[string]any{"notReadySeconds": int64(0)}}, weight(20))},
		{"canary with the Recreate strategy", "spec.canary", func(o map[string]any) {
			setCanary(weight(20))(o)
			spec(o)["strategy"] = map[string]any{"type": "Recreate"}
		}},
		{"canary with a name of 57 characters", "metadata.name", func(o map[string]any) {
			setCanary(weight(20))(o)
			o["metadata"].(map[string]any)["name"] = "w" + strings.Repeat("e", 55) + "b"
		}},
	}
}

// setCanary sets spec.canary to the steps given.
func setCanary(steps ...any) func(map[string]any) {
	return setCanaryWith(nil, steps...)
}

// setCanaryWith is setCanary with the fields of c on top.
func setCanaryWith(c map[string]any, steps ...any) func(map[string]any) {
	canary := map[string]any{"steps": append([]any{}, steps...)}
	for k, v := range c {
		canary[k] = v
	}
	return setSpec("canary", canary)
}

func weight(w int64) map[string]any { return map[string]any{"setWeight": w} }

// pause is a pause step of duration d, or without a duration for "".
func pause(d string) map[string]any {
	if d == "" {
		return map[string]any{"pause": map[string]any{}}
	}
	return map[string]any{"pause": map[string]any{"duration": d}}
}

// setMonitoring sets spec.monitoring to one that scrapes port "metrics"
// every 30s with a 10s timeout, with the fields of m on top; a nil value
// removes the field.
func setMonitoring(m map[string]any) func(map[string]any) {
	return func(obj map[string]any) {
		mon := map[string]any{"port": "metrics", "interval": "30s", "scrapeTimeout": "10s"}
		for k, v := range m {
			if v == nil {
				delete(mon, k)
				continue
			}
			mon[k] = v
		}
		spec(obj)["monitoring"] = mon
	}
}

// setMetrics sets spec.autoscaling to at most 3 replicas on metrics alone.
func setMetrics(metrics ...any) func(map[string]any) {
	return setSpec("autoscaling", map[string]any{"maxReplicas": int64(3), "metrics": metrics})
}

// queueMetric is an External metric of a queue's length, with target.
func queueMetric(target map[string]any) map[string]any {
	return map[string]any{"type": "External", "external": map[string]any{
		"metric": map[string]any{"name": "queue_messages_ready", "selector": map[string]any{"matchLabels": map[string]any{"queue": "orders"}}},
		"target": target,
	}}
}

// objectMetric is an Object metric of the object ref.
func objectMetric(ref map[string]any) map[string]any {
	return map[string]any{"type": "Object", "object": map[string]any{"describedObject": ref, "metric": map[string]any{"name": "m"}, "target": value("1")}}
}

func value(q any) map[string]any    { return map[string]any{"type": "Value", "value": q} }
func avgValue(q any) map[string]any { return map[string]any{"type": "AverageValue", "averageValue": q} }
func utilization(percent int64) map[string]any {
	return map[string]any{"type": "Utilization", "averageUtilization": percent}
}

// setPolicyFrom sets spec.networkPolicy to one that admits peer.
func setPolicyFrom(peer map[string]any) func(map[string]any) {
	return setSpec("networkPolicy", map[string]any{"from": []any{peer}})
}

// setRoute sets spec.route to an Ingress route to port "http" with the
// fields of r on top.
func setRoute(r map[string]any) func(map[string]any) {
	return func(obj map[string]any) {
		route := map[string]any{"port": "http", "ingressClassName": "nginx"}
		for k, v := range r {
			route[k] = v
		}
		spec(obj)["route"] = route
	}
}

// gatewayRoute sets spec.route to an HTTPRoute to port "http" with refs as
// its parentRefs.
func gatewayRoute(refs ...any) func(map[string]any) {
	return gatewayRouteWith(nil, refs...)
}

// gatewayRouteWith is gatewayRoute with the fields of r on top.
func gatewayRouteWith(r map[string]any, refs ...any) func(map[string]any) {
	route := map[string]any{"port": "http", "parentRefs": refs}
	for k, v := range r {
		route[k] = v
	}
	return setSpec("route", route)
}
