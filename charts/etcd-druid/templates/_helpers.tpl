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

{{/* The component's own image: by digest when one is pinned, else by tag (default: the chart's appVersion,
     the version `make images` tags a release with). */}}
{{- define "etcd-druid.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/* The pod controller users as a CEL list body: 'a', 'b'. */}}
{{- define "etcd-druid.podControllerUsers" -}}
{{- $quoted := list }}
{{- range .Values.webhooks.podControllerUsers }}
{{- $quoted = append $quoted (printf "'%s'" .) }}
{{- end }}
{{- join ", " $quoted }}
{{- end }}
