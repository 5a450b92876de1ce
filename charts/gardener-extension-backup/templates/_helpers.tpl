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

{{/* Gardener's network labels of the pods (gardener.networkPolicyLabels): egress to DNS, to the seed's
     apiserver and to the object stores, public or private, which Gardener's seed policies open by them. */}}
{{- define "extension.networkPolicyLabels" -}}
{{- if (.Values.gardener | default dict).networkPolicyLabels }}
networking.gardener.cloud/to-dns: allowed
networking.gardener.cloud/to-runtime-apiserver: allowed
networking.gardener.cloud/to-public-networks: allowed
networking.gardener.cloud/to-private-networks: allowed
{{- end }}
{{- end -}}
