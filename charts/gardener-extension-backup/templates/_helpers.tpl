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
