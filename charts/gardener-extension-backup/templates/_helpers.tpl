{{- define "extension.name" -}}
{{- .Release.Name -}}
{{- end -}}

{{- define "extension.selectorLabels" -}}
app.kubernetes.io/name: gardener-extension-backup
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "extension.labels" -}}
{{ include "extension.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: gardener-etcd
{{- end -}}

{{- define "extension.localEnabled" -}}
{{- if has "local" .Values.providerTypes }}true{{ end -}}
{{- end -}}

{{/* The component's own image: by digest when one is pinned, else by tag (default: the chart's appVersion,
     the version `make images` tags a release with). */}}
{{- define "extension.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}
