{{/* Name of every namespaced and cluster-scoped object of the release. */}}
{{- define "etcd-druid.name" -}}
{{- .Release.Name -}}
{{- end -}}

{{/* Labels on every object; the selector labels are the stable subset. */}}
{{- define "etcd-druid.selectorLabels" -}}
app.kubernetes.io/name: etcd-druid
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "etcd-druid.labels" -}}
{{ include "etcd-druid.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: gardener-etcd
{{- end -}}

{{/* The user druid runs as; the protection webhook always admits it. */}}
{{- define "etcd-druid.serviceAccountUser" -}}
system:serviceaccount:{{ .Release.Namespace }}:{{ include "etcd-druid.name" . }}
{{- end -}}

{{- define "etcd-druid.clientConfig" -}}
clientConfig:
  service:
    name: {{ include "etcd-druid.name" .root }}
    namespace: {{ .root.Release.Namespace }}
    path: {{ .path }}
    port: 443
  {{- with .root.Values.webhooks.caBundle }}
  caBundle: {{ . | b64enc }}
  {{- end }}
{{- end -}}
