{{/* The series selector of almanac's metrics in the alerts (files/prometheus-rules.yaml):
prometheusRule.selector, or the job of the chart's ServiceMonitor (the metrics Service). */}}
{{- define "almanac.metricsSelector" -}}
{{- .Values.prometheusRule.selector | default (printf "job=%q" (printf "%s-metrics" (include "almanac.fullname" .))) }}
{{- end }}
