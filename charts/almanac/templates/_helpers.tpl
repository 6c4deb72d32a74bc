{{/* Names. The defaults ("almanac" release) match the manager's flag defaults. */}}
{{- define "almanac.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "almanac.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "almanac.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "almanac.selectorLabels" -}}
app.kubernetes.io/name: {{ include "almanac.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "almanac.labels" -}}
helm.sh/chart: {{ include "almanac.chart" . }}
{{ include "almanac.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "almanac.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "almanac.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "almanac.webhookServiceName" -}}
{{ include "almanac.fullname" . }}-webhook
{{- end }}

{{- define "almanac.webhookConfigurationName" -}}
{{ include "almanac.fullname" . }}-webhook
{{- end }}

{{- define "almanac.caSecretName" -}}
{{ include "almanac.fullname" . }}-webhook-ca
{{- end }}

{{/* The Secret mounted as the serving certificate in the cert-manager and external modes. */}}
{{- define "almanac.webhookCertSecretName" -}}
{{- if eq .Values.certificates.mode "external" }}
{{- required "certificates.external.secretName is required in external mode" .Values.certificates.external.secretName }}
{{- else }}
{{- include "almanac.fullname" . }}-webhook-tls
{{- end }}
{{- end }}

{{- define "almanac.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* The webhook configurations' annotations: cert-manager's CA injection, in cert-manager mode only. */}}
{{- define "almanac.webhookAnnotations" -}}
{{- if eq .Values.certificates.mode "cert-manager" }}
annotations:
  cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/{{ include "almanac.fullname" . }}-webhook
{{- end }}
{{- end }}

{{/*
The caBundle of each webhook: rendered in external mode only. In the other modes it is written
at run time (by the manager's leader, or by cert-manager's cainjector), so that every render of
the chart is the same and GitOps tools see no drift.
*/}}
{{- define "almanac.webhookCABundle" -}}
{{- if eq .Values.certificates.mode "external" }}
caBundle: {{ required "certificates.external.caBundle is required in external mode" .Values.certificates.external.caBundle | b64enc }}
{{- end }}
{{- end }}

{{/* Restricted Pod Security, for every container the chart runs. */}}
{{- define "almanac.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "almanac.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop:
  - ALL
seccompProfile:
  type: RuntimeDefault
{{- end }}
