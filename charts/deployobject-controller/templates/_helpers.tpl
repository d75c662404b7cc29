{{/*
The controller's image, written as kustomize's images transformer writes
it: REPOSITORY:TAG, REPOSITORY:TAG@DIGEST, or REPOSITORY@DIGEST when a
digest is set without a tag.
*/}}
{{- define "deployobject-controller.image" -}}
{{- $tag := .Values.image.tag -}}
{{- if and (not $tag) (not .Values.image.digest) -}}
{{- $tag = .Chart.AppVersion -}}
{{- end -}}
{{- .Values.image.repository -}}
{{- with $tag }}:{{ . }}{{ end -}}
{{- with .Values.image.digest }}@{{ . }}{{ end -}}
{{- end -}}

{{/*
The rules of the controller's ClusterRole, or of its Role when namespaced:
one list, so that the two cannot drift apart. Why each is needed is in
deploy/rbac.yaml and docs/operating.md.
*/}}
{{- define "deployobject-controller.rules" -}}
- apiGroups: ["app.deployobject.dev"]
  resources: ["deployobjects"]
  verbs: ["list", "watch", "get"]
- apiGroups: ["app.deployobject.dev"]
  resources: ["deployobjects/status"]
  verbs: ["patch"]
- apiGroups: ["app.deployobject.dev"]
  resources: ["deployobjects/finalizers"]
  verbs: ["update"]
- apiGroups: ["apps"]
  resources: ["deployments"]
  verbs: ["list", "watch", "get", "create", "patch", "delete"]
- apiGroups: ["apps"]
  resources: ["replicasets"]
  verbs: ["list", "watch", "get", "create", "update", "patch", "delete"]
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["list"]
- apiGroups: [""]
  resources: ["services", "serviceaccounts"]
  verbs: ["list", "watch", "get", "create", "update", "patch", "delete"]
- apiGroups: ["policy"]
  resources: ["poddisruptionbudgets"]
  verbs: ["list", "watch", "get", "create", "update", "patch", "delete"]
- apiGroups: ["autoscaling"]
  resources: ["horizontalpodautoscalers"]
  verbs: ["list", "watch", "get", "create", "update", "patch", "delete"]
- apiGroups: ["networking.k8s.io"]
  resources: ["ingresses", "networkpolicies"]
  verbs: ["list", "watch", "get", "create", "update", "patch", "delete"]
- apiGroups: ["gateway.networking.k8s.io"]
  resources: ["httproutes", "grpcroutes"]
  verbs: ["list", "watch", "get", "create", "update", "patch", "delete"]
- apiGroups: ["monitoring.coreos.com"]
  resources: ["servicemonitors", "podmonitors"]
  verbs: ["list", "watch", "get", "create", "update", "patch", "delete"]
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["list", "watch", "get", "create", "update", "patch", "delete"]
# Events through events.k8s.io/v1; nothing writes core/v1 events.
- apiGroups: ["events.k8s.io"]
  resources: ["events"]
  verbs: ["create", "patch"]
{{- end -}}

{{/*
The arguments of .Values.controller that are set, as flags. Integers are
printed as integers: Helm reads every number of the values as a float,
which would print a large one as 1e+06.
*/}}
{{- define "deployobject-controller.flags" -}}
{{- $c := .Values.controller -}}
{{- range list
      (list "workers" "--workers" "int")
      (list "resyncPeriod" "--resync-period" "")
      (list "kubeAPIQPS" "--kube-api-qps" "")
      (list "kubeAPIBurst" "--kube-api-burst" "int")
      (list "kubeAPIContentType" "--kube-api-content-type" "")
      (list "childEventBatchPeriod" "--child-event-batch-period" "")
      (list "cacheSyncTimeout" "--cache-sync-timeout" "")
      (list "shutdownGracePeriod" "--shutdown-grace-period" "")
      (list "podSecurityProfile" "--pod-security-profile" "")
      (list "maxConcurrentConfigRollouts" "--max-concurrent-config-rollouts" "int")
      (list "configRolloutDelay" "--config-rollout-delay" "")
      (list "configMissingGracePeriod" "--config-missing-grace-period" "")
      (list "loggingFormat" "--logging-format" "")
      (list "verbosity" "-v" "int") }}
{{- $v := index $c (index . 0) }}
{{- if and (not (kindIs "invalid" $v)) (ne (toString $v) "") }}
{{- if eq (index . 2) "int" }}{{ $v = int64 $v }}{{ end }}
- {{ printf "%s=%v" (index . 1) $v | quote }}
{{- end }}
{{- end }}
{{- end -}}
