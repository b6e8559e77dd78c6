{{- define "docservice-operator.fullname" -}}
{{- printf "%s" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "docservice-operator.serviceAccountName" -}}
{{- default (include "docservice-operator.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "docservice-operator.labels" -}}
app.kubernetes.io/name: docservice-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* What the operator does to the objects it manages in a namespace. */}}
{{- define "docservice-operator.namespacedRules" -}}
- apiGroups: ["docservice.dev"]
  resources: ["docservices"]
  verbs: ["get", "list", "watch", "update"]
- apiGroups: ["docservice.dev"]
  resources: ["docservices/status"]
  verbs: ["get", "update"]
- apiGroups: ["docservice.dev"]
  resources: ["docservices/finalizers"]
  verbs: ["update"]
- apiGroups: ["apps"]
  resources: ["deployments"]
  verbs: ["get", "list", "watch", "create", "patch"]
- apiGroups: [""]
  resources: ["services", "configmaps"]
  verbs: ["get", "list", "watch", "create", "patch"]
- apiGroups: ["policy"]
  resources: ["poddisruptionbudgets"]
  verbs: ["get", "list", "watch", "create", "patch"]
- apiGroups: ["autoscaling"]
  resources: ["horizontalpodautoscalers"]
  verbs: ["get", "list", "watch", "create", "patch"]
- apiGroups: ["keda.sh"]
  resources: ["scaledobjects"]
  verbs: ["get", "list", "watch", "create", "patch"]
- apiGroups: ["networking.k8s.io"]
  resources: ["networkpolicies"]
  verbs: ["get", "list", "watch", "create", "patch"]
# a PodMonitor per DocService, where the Prometheus Operator's API is served
- apiGroups: ["monitoring.coreos.com"]
  resources: ["podmonitors"]
  verbs: ["get", "create", "patch"]
# whether a referenced Secret and key exist; the internal CA (<name>-internal-ca,
# created once), the components' certificates (<name>-*-tls, re-issued before
# expiry) and the metrics token (<name>-metrics-token, created once); never
# listed or watched
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get", "create", "patch"]
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create", "patch"]
# the external metrics API reads the conversion pods' /metrics (their addresses)
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["list"]
{{- end -}}
