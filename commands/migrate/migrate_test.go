package migrate

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/almanac-dev/almanac/commands/manifest"
)

// jobTemplate is the Job template of the test inputs; converters copy it as it is.
const jobTemplate = `
  jobTemplate:
    spec:
      template:
        spec:
          containers: [{name: c, image: busybox}]
          restartPolicy: OnFailure`

// convertYAML converts the documents of input.
func convertYAML(t *testing.T, input string) Result {
	t.Helper()
	docs, err := manifest.Read([]string{"-"}, false, strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	return Convert(docs)
}

// objectsOf parses YAML documents into maps, for comparing output with what a test expects.
func objectsOf(t *testing.T, docs string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, d := range strings.Split(docs, "\n---\n") {
		if strings.TrimSpace(d) == "" {
			continue
		}
		var m map[string]any
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			t.Fatalf("%v:\n%s", err, d)
		}
		out = append(out, m)
	}
	return out
}

func TestConvert(t *testing.T) {
	tests := []struct {
		name   string
		input  string
		want   string // YAML documents separated by ---
		notes  []string
		errors []string
	}{{
		name: "scheduled-pod-autoscaler's autoscaler, as exported from a cluster",
		input: `
apiVersion: autoscaling.d-kuro.github.io/v1
kind: ScheduledPodAutoscaler
metadata:
  name: nginx
  namespace: web
  uid: 0b6a0c2e-1111-2222-3333-444455556666
  resourceVersion: "42"
  generation: 3
  creationTimestamp: "2021-01-01T00:00:00Z"
  labels: {app: nginx}
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"autoscaling.d-kuro.github.io/v1"}'
    team: search
spec:
  horizontalPodAutoscalerSpec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nginx}
    minReplicas: 3
    maxReplicas: 10
    behavior: {scaleDown: {stabilizationWindowSeconds: 60}}
    metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
status:
  condition: Available
`,
		want: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata:
  name: nginx
  namespace: web
  labels: {app: nginx}
  annotations: {team: search}
spec:
  horizontalPodAutoscalerSpec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nginx}
    minReplicas: 3
    maxReplicas: 10
    behavior: {scaleDown: {stabilizationWindowSeconds: 60}}
    metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
`,
	}, {
		name: "Weekly Monday to Wednesday: the daily window on each of the three days",
		input: `
apiVersion: autoscaling.d-kuro.github.io/v1
kind: Schedule
metadata:
  name: nginx-push-notification
  ownerReferences:
  - {apiVersion: autoscaling.d-kuro.github.io/v1, kind: ScheduledPodAutoscaler, name: nginx, uid: 0b6a0c2e-1111-2222-3333-444455556666, controller: true}
spec:
  scaleTargetRef: {apiVersion: autoscaling.d-kuro.github.io/v1, kind: ScheduledPodAutoscaler, name: nginx}
  minReplicas: 10
  maxReplicas: 20
  type: Weekly
  startDayOfWeek: Monday
  startTime: "11:50"
  endDayOfWeek: Wednesday
  endTime: "13:00"
  timeZone: Asia/Tokyo
  suspend: false
  description: ""
status: {condition: Progressing, lastTransitionTime: "2021-01-04T02:50:00Z"}
`,
		want: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: nginx-push-notification}
spec:
  scaleTargetRef: {apiVersion: autoscaling.almanac.dev/v1alpha1, kind: ScheduledPodAutoscaler, name: nginx}
  minReplicas: 10
  maxReplicas: 20
  type: Daily
  startTime: "11:50"
  endTime: "13:00"
  daysOfWeek: [Monday, Tuesday, Wednesday]
  timeZone: Asia/Tokyo
`,
		notes: []string{
			"Schedule nginx-push-notification: Weekly Monday–Wednesday 11:50–13:00 (the daily window on each day, as scheduled-pod-autoscaler reads it) → Daily with daysOfWeek [Monday, Tuesday, Wednesday]",
			"Schedule nginx-push-notification: ownerReferences (ScheduledPodAutoscaler nginx) dropped: they name the old objects, whose deletion would delete this one",
		},
	}, {
		name: "Weekly over the whole week, across midnight, without a zone: a plain Daily in UTC",
		input: `
apiVersion: autoscaling.d-kuro.github.io/v1
kind: Schedule
metadata: {name: nightly}
spec:
  scaleTargetRef: {name: nginx}
  maxReplicas: 5
  type: Weekly
  startDayOfWeek: Sunday
  startTime: "15:00"
  endDayOfWeek: Saturday
  endTime: "1:30"
`,
		want: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: nightly}
spec:
  scaleTargetRef: {apiVersion: autoscaling.almanac.dev/v1alpha1, kind: ScheduledPodAutoscaler, name: nginx}
  maxReplicas: 5
  type: Daily
  startTime: "15:00"
  endTime: "01:30"
  timeZone: UTC
`,
		notes: []string{"Schedule nightly: Weekly Sunday–Saturday 15:00–1:30 (the daily window on each day, as scheduled-pod-autoscaler reads it) → Daily (every day)"},
	}, {
		name: "Weekly on one day across midnight, and Friday to Monday: the days from start to end",
		input: `
apiVersion: autoscaling.d-kuro.github.io/v1
kind: Schedule
metadata: {name: monday-night}
spec:
  scaleTargetRef: {name: nginx}
  minReplicas: 2
  type: Weekly
  startDayOfWeek: Monday
  startTime: "15:00"
  endDayOfWeek: Monday
  endTime: "01:00"
---
apiVersion: autoscaling.d-kuro.github.io/v1
kind: Schedule
metadata: {name: long-weekend, namespace: web}
spec:
  scaleTargetRef: {name: nginx}
  minReplicas: 2
  type: Weekly
  startDayOfWeek: Friday
  startTime: "09:00"
  endDayOfWeek: Monday
  endTime: "17:00"
  description: Friday to Monday, office hours
`,
		want: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: monday-night}
spec:
  scaleTargetRef: {apiVersion: autoscaling.almanac.dev/v1alpha1, kind: ScheduledPodAutoscaler, name: nginx}
  minReplicas: 2
  type: Daily
  startTime: "15:00"
  endTime: "01:00"
  daysOfWeek: [Monday]
  timeZone: UTC
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata:
  name: long-weekend
  namespace: web
  annotations: {autoscaling.almanac.dev/description: "Friday to Monday, office hours"}
spec:
  scaleTargetRef: {apiVersion: autoscaling.almanac.dev/v1alpha1, kind: ScheduledPodAutoscaler, name: nginx}
  minReplicas: 2
  type: Daily
  startTime: "09:00"
  endTime: "17:00"
  daysOfWeek: [Monday, Friday, Saturday, Sunday]
  timeZone: UTC
`,
		notes: []string{
			"Schedule monday-night: Weekly Monday–Monday 15:00–01:00 (the daily window on each day, as scheduled-pod-autoscaler reads it) → Daily with daysOfWeek [Monday]",
			"Schedule web/long-weekend: Weekly Friday–Monday 09:00–17:00 (the daily window on each day, as scheduled-pod-autoscaler reads it) → Daily with daysOfWeek [Monday, Friday, Saturday, Sunday]",
			"Schedule web/long-weekend: description moved to the annotation autoscaling.almanac.dev/description (an almanac Schedule has no description field)",
		},
	}, {
		name: "Daily and OneShot keep their meaning; days they ignored are dropped",
		input: `
apiVersion: autoscaling.d-kuro.github.io/v1
kind: Schedule
metadata: {name: daily}
spec:
  scaleTargetRef: {name: nginx}
  minReplicas: 4
  type: Daily
  startTime: "23:00"
  endTime: "03:00"
  startDayOfWeek: Monday
  endDayOfWeek: ""
  timeZone: america/new_york
  suspend: true
---
apiVersion: autoscaling.d-kuro.github.io/v1
kind: Schedule
metadata: {name: launch}
spec:
  scaleTargetRef: {name: nginx}
  minReplicas: 4
  maxReplicas: 4
  type: OneShot
  startTime: "2036-09-01T10:00"
  endTime: "2036-09-10T19:00"
  startDayOfWeek: ""
  endDayOfWeek: ""
  timeZone: Asia/Tokyo
`,
		want: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: daily}
spec:
  scaleTargetRef: {apiVersion: autoscaling.almanac.dev/v1alpha1, kind: ScheduledPodAutoscaler, name: nginx}
  minReplicas: 4
  type: Daily
  startTime: "23:00"
  endTime: "03:00"
  timeZone: America/New_York
  suspend: true
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: launch}
spec:
  scaleTargetRef: {apiVersion: autoscaling.almanac.dev/v1alpha1, kind: ScheduledPodAutoscaler, name: nginx}
  minReplicas: 4
  maxReplicas: 4
  type: OneShot
  startTime: "2036-09-01T10:00"
  endTime: "2036-09-10T19:00"
  timeZone: Asia/Tokyo
`,
		notes: []string{`Schedule daily: type Daily ignores startDayOfWeek and endDayOfWeek ("Monday", "") in scheduled-pod-autoscaler: dropped`},
	}, {
		name: "Schedules that cannot keep their meaning are left out, with why",
		input: `
apiVersion: autoscaling.d-kuro.github.io/v1
kind: Schedule
metadata: {name: empty}
spec: {scaleTargetRef: {name: nginx}, minReplicas: 2, type: Weekly, startDayOfWeek: Monday, startTime: "10:00", endDayOfWeek: Friday, endTime: "10:00"}
---
apiVersion: autoscaling.d-kuro.github.io/v1
kind: Schedule
metadata: {name: no-bounds}
spec: {scaleTargetRef: {name: nginx}, type: Daily, startTime: "10:00", endTime: "11:00"}
---
apiVersion: autoscaling.d-kuro.github.io/v1
kind: Schedule
metadata: {name: inverted}
spec: {scaleTargetRef: {name: nginx}, minReplicas: 5, maxReplicas: 2, type: Daily, startTime: "10:00", endTime: "11:00"}
---
apiVersion: autoscaling.d-kuro.github.io/v1
kind: Schedule
metadata: {name: local}
spec: {scaleTargetRef: {name: nginx}, minReplicas: 2, type: Daily, startTime: "10:00", endTime: "11:00", timeZone: Local}
---
apiVersion: autoscaling.d-kuro.github.io/v1
kind: Schedule
metadata: {name: cron}
spec: {scaleTargetRef: {name: nginx}, minReplicas: 2, type: Cron, startTime: "10:00", endTime: "11:00"}
---
apiVersion: autoscaling.d-kuro.github.io/v1
kind: Schedule
metadata: {name: typo}
spec: {scaleTargetRef: {name: nginx}, minReplicas: 2, type: Daily, startTime: "10:00", endTime: "11:00", timezone: UTC}
---
apiVersion: autoscaling.d-kuro.github.io/v1
kind: Schedule
metadata: {name: other-target}
spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nginx}, minReplicas: 2, type: Daily, startTime: "10:00", endTime: "11:00"}
---
apiVersion: autoscaling.d-kuro.github.io/v1
kind: Schedule
metadata: {name: bad-time}
spec: {scaleTargetRef: {name: nginx}, minReplicas: 2, type: Daily, startTime: "25:00", endTime: "11:00"}
`,
		errors: []string{
			"Schedule empty: cannot be converted: startTime and endTime are both 10:00: the window is empty, so scheduled-pod-autoscaler never activated it, and almanac refuses an empty window; delete the Schedule, or give it the times it should have",
			"Schedule no-bounds: cannot be converted: neither minReplicas nor maxReplicas is set: the Schedule changed nothing in scheduled-pod-autoscaler, and an almanac Schedule needs at least one of them; delete it, or give the bounds it should apply",
			"Schedule inverted: cannot be converted: minReplicas 5 is greater than maxReplicas 2: scheduled-pod-autoscaler wrote a HorizontalPodAutoscaler that the API server refused; fix the bounds",
			`Schedule local: cannot be converted: spec.timeZone: "Local" means the zone of the machine that evaluates the schedule, which differs between machines: use an IANA name such as "Europe/Berlin", or "UTC"`,
			`Schedule cron: cannot be converted: spec.type "Cron" is not a scheduled-pod-autoscaler type (Daily, Weekly or OneShot)`,
			`Schedule typo: cannot be converted: spec cannot be read as its system's API: unknown field "timezone"; convert it by hand`,
			`Schedule other-target: cannot be converted: spec.scaleTargetRef is apps/v1 Deployment "nginx": a scheduled-pod-autoscaler Schedule names its ScheduledPodAutoscaler (autoscaling.d-kuro.github.io/v1)`,
			`Schedule bad-time: cannot be converted: spec.startTime: "25:00" is not a time of day: expected HH:mm on a 24-hour clock, e.g. "09:30"`,
		},
	}, {
		name: "k8s-at: the instant to the second, in the zone of its offset",
		input: `
apiVersion: batch.my.domain/v1
kind: AT
metadata: {name: at-sample}
spec:
  schedule: "2020-03-21T13:53:55Z"` + jobTemplate + `
status: {status: Pending}
---
apiVersion: batch.my.domain/v1
kind: AT
metadata: {name: tokyo}
spec:
  schedule: "2036-03-21T22:53:00+09:00"` + jobTemplate + `
---
apiVersion: batch.my.domain/v1
kind: AT
metadata: {name: kolkata}
spec:
  schedule: "2036-03-21T19:23:55.250+05:30"` + jobTemplate + `
`,
		want: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: at-sample}
spec:
  at: "2020-03-21T13:53:55"
  timeZone: UTC` + jobTemplate + `
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: tokyo}
spec:
  at: "2036-03-21T22:53"
  timeZone: Etc/GMT-9` + jobTemplate + `
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: kolkata}
spec:
  at: "2036-03-21T13:53:56"
  timeZone: UTC` + jobTemplate + `
`,
		notes: []string{
			`AT at-sample: schedule 2020-03-21T13:53:55Z → at "2020-03-21T13:53:55" in UTC; k8s-at started the Job at its first reconcile after that instant, however late, while almanac starts it within startingDeadlineSeconds (600 unless set) and otherwise records it as Missed`,
			`AT tokyo: schedule 2036-03-21T22:53:00+09:00 → at "2036-03-21T22:53" in Etc/GMT-9; k8s-at started the Job at its first reconcile after that instant, however late, while almanac starts it within startingDeadlineSeconds (600 unless set) and otherwise records it as Missed`,
			`AT kolkata: schedule 2036-03-21T19:23:55.250+05:30 → at "2036-03-21T13:53:56" in UTC (rounded up to the next second: at is whole seconds, and the Job must not run early) ` +
				`(the offset +05:30 has no fixed IANA zone, so the wall time is written in UTC: the same instant); k8s-at started the Job at its first reconcile after that instant, however late, while almanac starts it within startingDeadlineSeconds (600 unless set) and otherwise records it as Missed`,
		},
	}, {
		name: "k8s-at without a valid time",
		input: `
apiVersion: batch.my.domain/v1
kind: AT
metadata: {name: tomorrow}
spec:
  schedule: "tomorrow"` + jobTemplate + `
`,
		errors: []string{`AT tomorrow: cannot be converted: spec.schedule "tomorrow" is not an RFC 3339 time, which k8s-at required (e.g. "2020-03-21T13:53:55Z")`},
	}, {
		name: "the CronTab controller: UTC, the Pod spec wrapped, robfig descriptors and field counts",
		input: `
apiVersion: alpha.ianlewis.org/v1
kind: CronTab
metadata: {name: backup}
spec:
  schedule: "@daily"
  jobTemplate:
    containers: [{image: "mybackupscript:v9", name: backup}]
    restartPolicy: Never
---
apiVersion: alpha.ianlewis.org/v1
kind: CronTab
metadata: {name: four-fields}
spec:
  schedule: "30 2 1 *"
  jobTemplate: {containers: [{image: busybox, name: c}], restartPolicy: Never}
---
apiVersion: alpha.ianlewis.org/v1
kind: CronTab
metadata: {name: six-fields}
spec:
  schedule: "0 30 2 * * *"
  jobTemplate: {containers: [{image: busybox, name: c}], restartPolicy: Never}
---
apiVersion: alpha.ianlewis.org/v1
kind: CronTab
metadata: {name: every}
spec:
  schedule: "@every 1h"
  jobTemplate: {containers: [{image: busybox, name: c}], restartPolicy: Never}
---
apiVersion: alpha.ianlewis.org/v1
kind: CronTab
metadata: {name: month-end}
spec:
  schedule: "0 18 LW * *"
  jobTemplate: {containers: [{image: busybox, name: c}], restartPolicy: Never}
`,
		want: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: backup}
spec:
  schedule: "@daily"
  timeZone: UTC
  jobTemplate:
    spec:
      template:
        spec:
          containers: [{image: "mybackupscript:v9", name: backup}]
          restartPolicy: Never
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: four-fields}
spec:
  schedule: "30 2 1 * *"
  timeZone: UTC
  jobTemplate: {spec: {template: {spec: {containers: [{image: busybox, name: c}], restartPolicy: Never}}}}
`,
		notes: []string{
			`CronTab backup: schedule "@daily" (robfig/cron after the controller's seconds field, in the controller's zone, UTC) → schedule "@daily", timeZone UTC; the Pod spec → jobTemplate.spec.template.spec; ` +
				`the controller kept every Job and never ran a missed run, almanac keeps 3 succeeded and 1 failed Job and, after downtime, runs the latest missed run within startingDeadlineSeconds (600)`,
			`CronTab four-fields: schedule "30 2 1 *" has 4 fields, which robfig/cron completed with a day-of-week field *: written as "30 2 1 * *"`,
			`CronTab four-fields: schedule "30 2 1 *" (robfig/cron after the controller's seconds field, in the controller's zone, UTC) → schedule "30 2 1 * *", timeZone UTC; the Pod spec → jobTemplate.spec.template.spec; ` +
				`the controller kept every Job and never ran a missed run, almanac keeps 3 succeeded and 1 failed Job and, after downtime, runs the latest missed run within startingDeadlineSeconds (600)`,
		},
		errors: []string{
			`CronTab six-fields: cannot be converted: spec.schedule "0 30 2 * * *" has 6 fields: the controller prepended a seconds field, so robfig/cron refused it and the CronTab never ran; write the 5-field schedule it should have`,
			`CronTab every: cannot be converted: spec.schedule: "@every 1h" is not supported: @every counts from when the controller started and ignores the time zone; use a 5-field schedule such as "0 * * * *"`,
			`CronTab month-end: cannot be converted: spec.schedule "0 18 LW * *" has a day form (L, LW, 15W, W#2, MON#1, FRIL) that robfig/cron refused, so the CronTab never ran: ` +
				`almanac would run it (LW is the last business day of the month, MON#1 the first Monday); if that is what it should do, write the ScheduledJob with this schedule yourself`,
		},
	}, {
		name: "the kubebuilder tutorial's CronJob with every field",
		input: `
apiVersion: batch.tutorial.kubebuilder.io/v1
kind: CronJob
metadata: {name: full, namespace: ops}
spec:
  schedule: "*/5 * * * *"
  startingDeadlineSeconds: 60
  concurrencyPolicy: Forbid
  suspend: true
  successfulJobsHistoryLimit: 10
  failedJobsHistoryLimit: 0` + jobTemplate + `
status: {lastScheduleTime: "2021-01-01T00:00:00Z"}
---
apiVersion: batch.tutorial.kubebuilder.io/v1
kind: CronJob
metadata: {name: bare}
spec:
  schedule: "0 9 * * 1-5"
  suspend: false` + jobTemplate + `
---
apiVersion: batch.tutorial.kubebuilder.io/v1
kind: CronJob
metadata: {name: forever}
spec:
  schedule: "0 3 * * *"
  startingDeadlineSeconds: 9999999999
  successfulJobsHistoryLimit: 5000` + jobTemplate + `
---
apiVersion: batch.tutorial.kubebuilder.io/v1
kind: CronJob
metadata: {name: tz}
spec:
  schedule: "TZ=Asia/Tokyo 0 9 * * *"` + jobTemplate + `
---
apiVersion: batch.tutorial.kubebuilder.io/v1
kind: CronJob
metadata: {name: first-monday}
spec:
  schedule: "0 9 * * MON#1"` + jobTemplate + `
`,
		want: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: full, namespace: ops}
spec:
  schedule: "*/5 * * * *"
  timeZone: UTC
  startingDeadlineSeconds: 60
  concurrencyPolicy: Forbid
  suspend: true
  successfulJobsHistoryLimit: 10
  failedJobsHistoryLimit: 0` + jobTemplate + `
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: bare}
spec:
  schedule: "0 9 * * 1-5"
  timeZone: UTC` + jobTemplate + `
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: forever}
spec:
  schedule: "0 3 * * *"
  timeZone: UTC
  startingDeadlineSeconds: 315360000
  successfulJobsHistoryLimit: 1000` + jobTemplate + `
`,
		notes: []string{
			`CronJob ops/full: schedule "*/5 * * * *" in the controller's zone (UTC) → timeZone UTC`,
			`CronJob bare: schedule "0 9 * * 1-5" in the controller's zone (UTC) → timeZone UTC; without startingDeadlineSeconds the tutorial started a missed run however late, almanac within 600 seconds (set startingDeadlineSeconds for more)`,
			`CronJob forever: successfulJobsHistoryLimit 5000 → 1000, almanac's maximum: the tutorial kept 5000 Jobs, almanac keeps 1000`,
			`CronJob forever: startingDeadlineSeconds 9999999999 → 315360000, almanac's maximum (3650 days): a missed run still starts up to ten years late`,
			`CronJob forever: schedule "0 3 * * *" in the controller's zone (UTC) → timeZone UTC`,
		},
		errors: []string{
			`CronJob tz: cannot be converted: spec.schedule: "TZ=Asia/Tokyo 0 9 * * *" sets a time zone inside the schedule: remove "TZ=Asia/Tokyo" and set the schedule's time zone to "Asia/Tokyo" instead`,
			`CronJob first-monday: cannot be converted: spec.schedule "0 9 * * MON#1" has a day form (L, LW, 15W, W#2, MON#1, FRIL) that robfig/cron refused, so the CronJob never ran: ` +
				`almanac would run it (LW is the last business day of the month, MON#1 the first Monday); if that is what it should do, write the ScheduledJob with this schedule yourself`,
		},
	}, {
		name: "kitagry's EventJob: the same trigger",
		input: `
apiVersion: batch.kitagry.github.io/v1
kind: EventJob
metadata: {name: eventjob-sample}
spec:
  trigger: {apiVersion: batch/v1, kind: CronJob, name: hello, type: Complete}` + jobTemplate + `
status: {last_scheduled_time: "2021-01-01T00:00:00Z"}
---
apiVersion: batch.kitagry.github.io/v1
kind: EventJob
metadata: {name: on-failure}
spec:
  trigger: {apiVersion: batch/v1beta1, kind: CronJob, name: nightly, type: Failed}` + jobTemplate + `
---
apiVersion: batch.kitagry.github.io/v1
kind: EventJob
metadata: {name: after-job}
spec:
  trigger: {apiVersion: batch/v1, kind: Job, name: migrate-db, type: Complete}` + jobTemplate + `
---
apiVersion: batch.kitagry.github.io/v1
kind: EventJob
metadata: {name: no-type}
spec:
  trigger: {apiVersion: batch/v1, kind: CronJob, name: hello}` + jobTemplate + `
---
apiVersion: batch.kitagry.github.io/v1
kind: EventJob
metadata: {name: deployment}
spec:
  trigger: {apiVersion: apps/v1, kind: Deployment, name: web, type: Complete}` + jobTemplate + `
`,
		want: `
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: eventjob-sample}
spec:
  trigger: {apiVersion: batch/v1, kind: CronJob, name: hello, type: Complete}` + jobTemplate + `
---
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: on-failure}
spec:
  trigger: {apiVersion: batch/v1, kind: CronJob, name: nightly, type: Failed}` + jobTemplate + `
---
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: after-job}
spec:
  trigger: {apiVersion: batch/v1, kind: Job, name: migrate-db, type: Complete}` + jobTemplate + `
`,
		notes: []string{
			"EventJob eventjob-sample: trigger CronJob hello on Complete → the same trigger; kitagry/eventjob fired on Events about it (lost when they expired or the controller was down, " +
				"and completions between two reconciles ran once), almanac runs once for each of the Jobs of CronJob hello that reaches Complete after the EventJob is created",
			`EventJob on-failure: trigger apiVersion "batch/v1beta1" → batch/v1`,
			"EventJob on-failure: trigger CronJob nightly on Failed → the same trigger; kitagry/eventjob fired on Events about it (lost when they expired or the controller was down, " +
				"and completions between two reconciles ran once), almanac runs once for each of the Jobs of CronJob nightly that reaches Failed after the EventJob is created",
			`EventJob after-job: trigger Job migrate-db: kitagry/eventjob matched only Events ending in "status: Complete", which the CronJob controller writes about CronJobs, so a Job trigger never fired; ` +
				"almanac runs once when the Job reaches Complete",
			"EventJob after-job: trigger Job migrate-db on Complete → the same trigger; kitagry/eventjob fired on Events about it (lost when they expired or the controller was down, " +
				"and completions between two reconciles ran once), almanac runs once for each of Job migrate-db that reaches Complete after the EventJob is created",
		},
		errors: []string{
			`EventJob no-type: cannot be converted: spec.trigger.type "": kitagry/eventjob fired only on Complete or Failed (an Event ending in "status: Complete" or "status: Failed"), so this EventJob never ran; set Complete or Failed (almanac also has Any)`,
			`EventJob deployment: cannot be converted: spec.trigger.kind "Deployment": almanac's EventJob follows a Job or the Jobs of a CronJob (or of almanac's ScheduledJobs and EventJobs)`,
		},
	}, {
		name: "other kinds, almanac's included, pass through unchanged",
		input: `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: web}
data: {a: "1"}
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: already}
spec: {scaleTargetRef: {name: nginx}, minReplicas: 2, type: Weekly, startDayOfWeek: mon, startTime: "9:00", endDayOfWeek: wed, endTime: "13:00"}
`,
		want: `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: web}
data: {a: "1"}
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: already}
spec: {scaleTargetRef: {name: nginx}, minReplicas: 2, type: Weekly, startDayOfWeek: mon, startTime: "9:00", endDayOfWeek: wed, endTime: "13:00"}
`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := convertYAML(t, tt.input)
			var out bytes.Buffer
			if err := Write(&out, res.Objects, "yaml"); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(objectsOf(t, tt.want), objectsOf(t, out.String())); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.notes, res.Notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.errors, res.Errors); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// runCommand runs `almanac migrate` with args and stdin, and returns stdout, stderr and the
// exit status (as main.go computes it).
func runCommand(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := NewCommand()
	var stdout, stderr bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.ExecuteContext(context.Background())
	code := ExitConverted
	if err != nil {
		code = ExitUsage // cobra's own flag errors; main.go exits 2 for them
		var coded *manifest.ExitError
		if errors.As(err, &coded) {
			code = coded.ExitCode()
		}
		if msg := err.Error(); msg != "" {
			stderr.WriteString("Error: " + msg + "\n")
		}
	}
	return stdout.String(), stderr.String(), code
}

func TestCommand(t *testing.T) {
	at := "apiVersion: batch.my.domain/v1\nkind: AT\nmetadata: {name: a}\nspec:\n  schedule: \"2036-03-21T13:53:55Z\"" + jobTemplate + "\n"
	configMap := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
	broken := "apiVersion: batch.my.domain/v1\nkind: AT\nmetadata: {name: b}\nspec: {schedule: never}\n"
	for _, tt := range []struct {
		name       string
		stdin      string
		args       []string
		want       int
		wantStdout string // a substring
		wantStderr string // a substring
	}{
		{"converted", at, []string{"-f", "-"}, ExitConverted, "kind: ScheduledJob", `AT a: schedule 2036-03-21T13:53:55Z → at "2036-03-21T13:53:55" in UTC`},
		{"passed through", configMap, []string{"-f", "-"}, ExitConverted, "kind: ConfigMap", ""},
		{"one object as JSON", at, []string{"-f", "-", "-o", "json"}, ExitConverted, `"kind": "ScheduledJob"`, ""},
		{"several objects as a JSON List", at + "---\n" + configMap, []string{"-f", "-", "-o", "json"}, ExitConverted, `"kind": "List"`, ""},
		{"an object that cannot be converted is left out", at + "---\n" + broken, []string{"-f", "-"}, ExitNotAll, "name: a", `error: AT b: cannot be converted: spec.jobTemplate is missing`},
		{"no input", "", nil, ExitUsage, "", "Error: no input"},
		{"a bad -o", at, []string{"-f", "-", "-o", "xml"}, ExitUsage, "", `-o "xml" is not an output format`},
		{"malformed YAML", "kind: [unclosed\n", []string{"-f", "-"}, ExitUsage, "", "-: document 0"},
		{"a missing file", "", []string{"-f", "does-not-exist.yaml"}, ExitUsage, "", "no such file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCommand(t, tt.stdin, tt.args...)
			if code != tt.want {
				t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.want, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.wantStdout) {
				t.Errorf("stdout does not contain %q:\n%s", tt.wantStdout, stdout)
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr does not contain %q:\n%s", tt.wantStderr, stderr)
			}
			if tt.want == ExitNotAll && strings.Contains(stdout, "name: b") {
				t.Errorf("the object that could not be converted is in the output:\n%s", stdout)
			}
		})
	}
}
