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

{{/* Pod labels beyond the chart's own: Gardener's network labels (gardener.networkPolicyLabels) and
     podLabels, the operator's winning. A chart label key is refused: the selector and druid's NetworkPolicies
     select the pods by them. */}}
{{- define "etcd-druid.extraPodLabels" -}}
{{- $labels := dict }}
{{- if (.Values.gardener | default dict).networkPolicyLabels }}
{{- $_ := set $labels "networking.gardener.cloud/to-dns" "allowed" }}
{{- $_ := set $labels "networking.gardener.cloud/to-runtime-apiserver" "allowed" }}
{{- $_ := set $labels "networking.resources.gardener.cloud/to-all-shoots-etcd-main-client-tcp-8080" "allowed" }}
{{- end }}
{{- $own := include "etcd-druid.labels" . | fromYaml }}
{{- range $k, $v := .Values.podLabels }}
{{- if hasKey $own $k }}
{{- fail (printf "podLabels: %s is a label of the chart" $k) }}
{{- end }}
{{- $_ := set $labels $k $v }}
{{- end }}
{{- range $k, $v := $labels }}
{{ $k | quote }}: {{ $v | toString | quote }}
{{- end }}
{{- end -}}

{{/* Service annotations: Gardener's network annotations (gardener.networkPolicyLabels; the JSON Gardener's
     resource manager reads, with container ports) and service.annotations, the operator's winning. */}}
{{- define "etcd-druid.serviceAnnotations" -}}
{{- $annotations := dict }}
{{- if (.Values.gardener | default dict).networkPolicyLabels }}
{{- if .Values.webhooks.enabled }}
{{- $_ := set $annotations "networking.resources.gardener.cloud/from-world-to-ports" (printf "[{\"protocol\":\"TCP\",\"port\":%d}]" (int .Values.webhooks.port)) }}
{{- end }}
{{- $_ := set $annotations "networking.resources.gardener.cloud/from-all-seed-scrape-targets-allowed-ports" (printf "[{\"protocol\":\"TCP\",\"port\":%d}]" (int .Values.metricsPort)) }}
{{- end }}
{{- range $k, $v := (.Values.service | default dict).annotations }}
{{- $_ := set $annotations $k $v }}
{{- end }}
{{- range $k, $v := $annotations }}
{{ $k | quote }}: {{ $v | toString | quote }}
{{- end }}
{{- end -}}
