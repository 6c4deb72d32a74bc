package webhooks_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func invalid(fieldPath, message string) metav1.StatusCause {
	return metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid, Field: fieldPath, Message: message}
}

// TestInvalidObjectsAreRejected sends, for each kind, objects that the validating webhook
// must refuse and asserts every cause of the 422 that the API server returns, and the
// warnings that came with it.
func TestInvalidObjectsAreRejected(t *testing.T) {
	ns := newNamespace(t)
	tests := []struct {
		name         string
		manifest     string
		want         []metav1.StatusCause
		wantWarnings []string
	}{{
		name: "Schedule in an unknown zone",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: tokio}
spec: {scaleTargetRef: {name: web}, minReplicas: 2, type: Daily, startTime: "9:00", endTime: "17:00", timeZone: asia/tokio}`,
		want: []metav1.StatusCause{invalid("spec.timeZone", `Invalid value: "asia/tokio": "asia/tokio" is not a known IANA time zone: did you mean "Asia/Tokyo"?`)},
	}, {
		name: "Schedule with a half-hour offset",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: india}
spec: {scaleTargetRef: {name: web}, minReplicas: 2, type: Daily, startTime: "09:00", endTime: "17:00", timeZone: "+05:30"}`,
		want: []metav1.StatusCause{invalid("spec.timeZone", `Invalid value: "+05:30": "+05:30" is not a whole-hour offset: only whole-hour offsets have a fixed zone (Etc/GMT±N); `+
			`use the IANA zone of the place instead, e.g. "Asia/Kolkata" for +05:30`)},
	}, {
		name: "Cron Schedule with @every and a duration under a minute",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: every}
spec: {scaleTargetRef: {name: web}, minReplicas: 2, type: Cron, schedule: "@every 5m", duration: 30s}`,
		want: []metav1.StatusCause{
			invalid("spec.schedule", `Invalid value: "@every 5m": "@every 5m" is not supported: @every counts from when the controller started and ignores the time zone; use a 5-field schedule such as "*/5 * * * *"`),
			invalid("spec.duration", `Invalid value: "30s": "30s" is shorter than one minute: expected a Go duration of at least 1m, e.g. "90m" or "2h30m"`),
		},
	}, {
		name: "OneShot Schedule in the past",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: christmas}
spec: {scaleTargetRef: {name: web}, minReplicas: 2, type: OneShot, startTime: "2026-12-24T18:00:00+01:00", endTime: "2026-12-26T00:00", timeZone: Europe/Berlin}`,
		want: []metav1.StatusCause{invalid("spec.endTime", `Invalid value: "2026-12-26T00:00": the window ended at 2026-12-26 00:00 Europe/Berlin (2026-12-25 23:00 UTC), `+
			`which is not after now (2027-01-15 12:00 UTC): a OneShot Schedule in the past would never be active; set startTime and endTime to a future window, or delete the Schedule`)},
	}, {
		name: "the migrated AT manifest: moved to at, then rejected as stale",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: at-sample}
spec:
  schedule: "2020-03-21T13:53:55Z"` + jobTemplate,
		want: []metav1.StatusCause{invalid("spec.at", `Invalid value: "2020-03-21T13:53:55": the run was due at 2020-03-21 13:53:55 UTC and could start until 2020-03-21 14:03:55 UTC `+
			`(startingDeadlineSeconds: 600), before now (2027-01-15 12:00:00 UTC), so the Job would never run: set at to a future wall time in UTC, e.g. "2027-01-15T13:00"`)},
		wantWarnings: []string{`spec.schedule: "2020-03-21T13:53:55Z" is a date and time, not a cron schedule: it was moved to spec.at as "2020-03-21T13:53:55", a wall time in UTC`},
	}, {
		name: "ScheduledJob with a TZ= prefix",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: tz-prefix}
spec:
  schedule: "TZ=Europe/Berlin 0 9 * * *"` + jobTemplate,
		want: []metav1.StatusCause{invalid("spec.schedule", `Invalid value: "TZ=Europe/Berlin 0 9 * * *": "TZ=Europe/Berlin 0 9 * * *" sets a time zone inside the schedule: `+
			`remove "TZ=Europe/Berlin" and set the schedule's time zone to "Europe/Berlin" instead`)},
	}, {
		name: "ScheduledJob and Schedule with TZ= and nothing after it (the parser does not panic)",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: tz-empty}
spec:
  schedule: "TZ="
  timeZone: "CRON_TZ="` + jobTemplate,
		want: []metav1.StatusCause{
			invalid("spec.timeZone", `Invalid value: "CRON_TZ=": "CRON_TZ=" is a "CRON_TZ=" prefix without a zone: write an IANA zone name alone, such as "Europe/Berlin", or "UTC"`),
			invalid("spec.schedule", `Invalid value: "TZ=": "TZ=" starts with "TZ=": the time zone is not part of the schedule; remove the prefix and set the schedule's time zone instead`),
		},
	}, {
		name: "Cron Schedule with TZ= and nothing after it",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: tz-empty}
spec: {scaleTargetRef: {name: web}, minReplicas: 2, type: Cron, schedule: "TZ=", duration: 1h, timeZone: "TZ="}`,
		want: []metav1.StatusCause{
			invalid("spec.timeZone", `Invalid value: "TZ=": "TZ=" is a "TZ=" prefix without a zone: write an IANA zone name alone, such as "Europe/Berlin", or "UTC"`),
			invalid("spec.schedule", `Invalid value: "TZ=": "TZ=" starts with "TZ=": the time zone is not part of the schedule; remove the prefix and set the schedule's time zone instead`),
		},
	}, {
		name: "ScheduledJob whose name leaves no room for its Jobs, with Pods that always restart",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: a-very-long-name-for-a-scheduled-job-that-runs-reports}
spec:
  schedule: "@daily"
  jobTemplate: {spec: {template: {spec: {containers: [{name: c, image: busybox}], restartPolicy: Always}}}}`,
		want: []metav1.StatusCause{
			{Type: metav1.CauseType(field.ErrorTypeTooLong), Field: "metadata.name", Message: `Too long: 54 characters, but a ScheduledJob's name may have at most 52: its Jobs are named ` +
				`"<name>-<suffix>" with a suffix of up to 10 characters (the slot: the Unix minute of the run), and a Job's name must fit the 63-character job-name label of its Pods; ` +
				`shorten the name by 2 characters`},
			{Type: metav1.CauseTypeFieldValueNotSupported, Field: "spec.jobTemplate.spec.template.spec.restartPolicy", Message: `Unsupported value: "Always": supported values: "OnFailure", "Never": ` +
				`a Job's Pods restart OnFailure or Never (the Job API refuses other values when almanac creates the Job)`},
		},
	}, {
		name: "EventJob that triggers on itself",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: ouroboros}
spec:
  trigger: {kind: EventJob, name: ouroboros}` + jobTemplate,
		want: []metav1.StatusCause{invalid("spec.trigger.name", `Invalid value: "ouroboros": an EventJob cannot trigger on itself: each of its Jobs would start another one, forever; `+
			`trigger on the Job, CronJob, ScheduledJob or EventJob that should start it`)},
	}, {
		name: "ScheduledPodAutoscaler of a custom kind without apiVersion, with a bad metric",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: rollout}
spec:
  horizontalPodAutoscalerSpec:
    scaleTargetRef: {kind: Rollout, name: web}
    maxReplicas: 5
    metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization}}}]`,
		want: []metav1.StatusCause{
			{Type: metav1.CauseTypeFieldValueRequired, Field: "spec.horizontalPodAutoscalerSpec.scaleTargetRef.apiVersion", Message: `Required value: the HorizontalPodAutoscaler needs the API version ` +
				`of kind "Rollout" to find its scale subresource, e.g. "apps/v1" (it is filled in only for Deployment, StatefulSet and ReplicaSet)`},
			{Type: metav1.CauseTypeFieldValueRequired, Field: "spec.horizontalPodAutoscalerSpec.metrics[0].resource.target.averageUtilization", Message: `Required value: a Utilization target ` +
				`needs averageUtilization, a percentage of the Pods' requests of at least 1, e.g. 80`},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, warnings, err := create(t, ns, tt.manifest)
			if err == nil {
				t.Fatalf("the API server accepted %s %s", obj.GetKind(), obj.GetName())
			}
			if !strings.Contains(err.Error(), `admission webhook "v`) {
				t.Errorf("not rejected by a validating webhook: %v", err)
			}
			if diff := cmp.Diff(tt.want, causes(t, err)); diff != "" {
				t.Errorf("causes (-want +got):\n%s\nwhole error: %v", diff, err)
			}
			if diff := cmp.Diff(tt.wantWarnings, warnings, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			assertNotFound(t, obj)
		})
	}
}

func assertNotFound(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(obj.GroupVersionKind())
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), got); !apierrors.IsNotFound(err) {
		t.Errorf("%s %s was stored (err %v)", obj.GetKind(), obj.GetName(), err)
	}
}

// TestSchemaStillApplies checks that the mutating webhook runs before the schema's CEL rules:
// a time it normalizes passes them, and one it cannot is refused by the rule's message (the
// validating webhook is not reached).
func TestSchemaStillApplies(t *testing.T) {
	ns := newNamespace(t)
	_, _, err := create(t, ns, `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: hours}
spec: {scaleTargetRef: {name: web}, minReplicas: 2, type: Daily, startTime: "9:00", endTime: "25:00", timeZone: Asia/Tokio}`)
	want := []metav1.StatusCause{invalid("spec.endTime", `Invalid value: type Daily takes endTime as HH:mm on a 24-hour clock, e.g. "18:00"`)}
	if diff := cmp.Diff(want, causes(t, err)); diff != "" {
		t.Errorf("causes (-want +got):\n%s\nwhole error: %v", diff, err)
	}
}

// TestWarnings checks the admission warnings of objects that are admitted.
func TestWarnings(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, ns, `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: web}
spec: {horizontalPodAutoscalerSpec: {scaleTargetRef: {kind: Deployment, name: web}, maxReplicas: 10}}`)
	mustCreate(t, ns, `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: office}
spec: {scaleTargetRef: {name: web}, minReplicas: 4, type: Daily, startTime: "09:00", endTime: "17:00", timeZone: Asia/Tokyo}`)
	tests := []struct {
		name     string
		manifest string
		want     []string
	}{{
		name: "legacy zone name, missing autoscaler",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: est}
spec: {scaleTargetRef: {name: api}, minReplicas: 2, type: Daily, startTime: "09:00", endTime: "17:00", timeZone: EST}`,
		want: []string{
			"spec.timeZone: EST is a fixed UTC-05:00 offset without daylight saving time; for US Eastern time use America/New_York",
			`spec.scaleTargetRef.name: ScheduledPodAutoscaler "api" does not exist in namespace "` + ns + `": this Schedule changes nothing until it is created`,
		},
	}, {
		name: "DST gap and repeat, overlap under Max",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: night}
spec: {scaleTargetRef: {name: web}, minReplicas: 2, type: Daily, startTime: "02:30", endTime: "01:30", timeZone: America/New_York}`,
		want: []string{
			"spec.startTime: 02:30 does not exist in America/New_York on 2027-03-14 (clocks jump from 02:00 to 03:00): the window starts at 03:00 EDT (07:00 UTC)",
			"spec.endTime: 01:30 occurs twice in America/New_York on 2027-11-07 (clocks go back from 02:00 to 01:00): the window ends at the first occurrence, 01:30 EDT (05:30 UTC)",
			`spec: the windows overlap those of Schedule "office" from 2027-01-15 19:00 to 2027-01-16 01:30 America/New_York (2027-01-16 00:00 to 06:30 UTC); ` +
				`while both are active the largest minReplicas and the largest maxReplicas apply (overlapPolicy Max)`,
		},
	}, {
		name: "a Weekly window over three days whose end time is after its start time",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: push-weekly}
spec: {scaleTargetRef: {name: web}, minReplicas: 2, type: Weekly, startDayOfWeek: Monday, startTime: "11:50", endDayOfWeek: Wednesday, endTime: "13:00", timeZone: Asia/Tokyo}`,
		want: []string{
			"spec: a Weekly window is one stretch of time: Monday 11:50 to Wednesday 13:00 in Asia/Tokyo is open for 2 days 1 hour 10 minutes at a time, once a week. " +
				`For 11:50 to 13:00 on each day from Monday to Wednesday, write type: Daily, startTime: "11:50", endTime: "13:00", daysOfWeek: [Monday, Tuesday, Wednesday] ` +
				"(scheduled-pod-autoscaler read Weekly fields that way; `almanac migrate` converts its manifests)",
			// One stretch from Monday 11:50 overlaps the night window that began on Sunday in
			// New York, and the whole of Monday's office hours.
			`spec: the windows overlap those of Schedule "night" from 2027-01-18 11:50 to 15:30 Asia/Tokyo (2027-01-18 02:50 to 06:30 UTC); ` +
				`while both are active the largest minReplicas and the largest maxReplicas apply (overlapPolicy Max)`,
			`spec: the windows overlap those of Schedule "office" from 2027-01-18 11:50 to 17:00 Asia/Tokyo (2027-01-18 02:50 to 08:00 UTC); ` +
				`while both are active the largest minReplicas and the largest maxReplicas apply (overlapPolicy Max)`,
		},
	}, {
		name: "cron Job across DST",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: nightly}
spec:
  schedule: "30 2 * * *"
  timeZone: europe/berlin` + jobTemplate,
		want: []string{
			"spec.schedule: the 02:30 run does not exist in Europe/Berlin on 2027-03-28 (clocks jump from 02:00 to 03:00): it runs at 03:00 CEST (01:00 UTC)",
			"spec.schedule: the 02:30 run occurs twice in Europe/Berlin on 2027-10-31 (clocks go back from 03:00 to 02:00): it runs once, at its first occurrence, 02:30 CEST (00:30 UTC)",
		},
	}, {
		name: "a one-shot given in UTC, a little late",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: late}
spec:
  at: "2027-01-15T11:55:00Z"
  timeZone: Europe/Berlin` + jobTemplate,
		want: []string{
			`spec.at: "2027-01-15T11:55:00Z" was stored as the wall time "2027-01-15T12:55" in Europe/Berlin, the time zone of this object`,
			"spec.at: 2027-01-15 12:55 Europe/Berlin (2027-01-15 11:55 UTC) is in the past, but within startingDeadlineSeconds (600): the Job starts right away",
		},
	}, {
		name: "EventJob whose trigger does not exist",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: after-backup}
spec:
  trigger: {kind: CronJob, name: backup}` + jobTemplate,
		want: []string{`spec.trigger.name: CronJob "backup" does not exist in namespace "` + ns + `": the EventJob starts no Job until it exists and one of its Jobs reaches the trigger condition`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, warnings, err := create(t, ns, tt.manifest)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStoredObjectsAreNormalized reads back what the API server stored.
func TestStoredObjectsAreNormalized(t *testing.T) {
	ns := newNamespace(t)
	tests := []struct {
		name     string
		manifest string
		want     map[string]any // field path → stored value
	}{{
		name: "Weekly Schedule",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: weekly}
spec: {scaleTargetRef: {name: web}, minReplicas: 2, type: Weekly, startDayOfWeek: mon, endDayOfWeek: FRI, startTime: "9:00", endTime: "17:00:00", timeZone: asia/tokyo}`,
		want: map[string]any{
			"spec.timeZone": "Asia/Tokyo", "spec.startTime": "09:00", "spec.endTime": "17:00", "spec.startDayOfWeek": "Monday", "spec.endDayOfWeek": "Friday",
			"spec.scaleTargetRef.apiVersion": "autoscaling.almanac.dev/v1alpha1", "spec.scaleTargetRef.kind": "ScheduledPodAutoscaler",
		},
	}, {
		name: "Daily Schedule with daysOfWeek",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: weekdays}
spec: {scaleTargetRef: {name: web}, minReplicas: 2, type: Daily, startTime: "9:00", endTime: "18:00", daysOfWeek: [fri, THU, wednesday, Tue, mon, monday], timeZone: europe/berlin}`,
		want: map[string]any{
			"spec.daysOfWeek": []any{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"}, "spec.startTime": "09:00", "spec.timeZone": "Europe/Berlin",
		},
	}, {
		name: "ScheduledJob at to the second",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: at-second}
spec:
  schedule: "2036-03-21T13:53:55Z"` + jobTemplate,
		want: map[string]any{"spec.at": "2036-03-21T13:53:55", "spec.schedule": nil, "spec.timeZone": "UTC"},
	}, {
		name: "offset zone",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: offset}
spec: {scaleTargetRef: {name: web}, minReplicas: 2, type: Daily, startTime: "09:00", endTime: "17:00", timeZone: "+09:00"}`,
		want: map[string]any{"spec.timeZone": "Etc/GMT-9"},
	}, {
		name: "UTC alias",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: zulu}
spec: {scaleTargetRef: {name: web}, minReplicas: 2, type: Cron, schedule: "0  9 * * MON-FRI", duration: 90m, timeZone: Etc/Zulu}`,
		want: map[string]any{"spec.timeZone": "UTC", "spec.schedule": "0 9 * * MON-FRI", "spec.duration": "90m"},
	}, {
		name: "OneShot with RFC 3339 times",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: launch}
spec: {scaleTargetRef: {name: web}, minReplicas: 2, type: OneShot, startTime: "2036-09-01T10:00:00+09:00", endTime: "2036-09-01T09:00:00Z", timeZone: Asia/Tokyo}`,
		want: map[string]any{"spec.startTime": "2036-09-01T10:00", "spec.endTime": "2036-09-01T18:00"},
	}, {
		name: "ScheduledJob at with an offset, and the Job policies",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: at}
spec:
  at: "2036-03-14T09:30:00-04:00"
  timeZone: america/new_york` + jobTemplate,
		want: map[string]any{
			"spec.at": "2036-03-14T09:30", "spec.timeZone": "America/New_York", "spec.concurrencyPolicy": "Allow",
			"spec.successfulJobsHistoryLimit": int64(3), "spec.failedJobsHistoryLimit": int64(1), "spec.startingDeadlineSeconds": int64(600),
		},
	}, {
		name: "ScheduledJob with a timestamp in schedule",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: legacy}
spec:
  schedule: "2036-03-21T13:53:00Z"` + jobTemplate,
		want: map[string]any{"spec.at": "2036-03-21T13:53", "spec.schedule": nil, "spec.timeZone": "UTC"},
	}, {
		name: "ScheduledPodAutoscaler",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: web}
spec: {horizontalPodAutoscalerSpec: {scaleTargetRef: {kind: StatefulSet, name: db}, maxReplicas: 10}}`,
		want: map[string]any{
			"spec.horizontalPodAutoscalerSpec.minReplicas":               int64(1),
			"spec.horizontalPodAutoscalerSpec.scaleTargetRef.apiVersion": "apps/v1",
			"spec.horizontalPodAutoscalerSpec.metrics": []any{map[string]any{
				"type": "Resource", "resource": map[string]any{"name": "cpu", "target": map[string]any{"type": "Utilization", "averageUtilization": int64(80)}},
			}},
			"spec.overlapPolicy": "Max",
		},
	}, {
		name: "EventJob",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: chained}
spec:
  trigger: {kind: ScheduledJob, name: at}` + jobTemplate,
		want: map[string]any{"spec.trigger.apiVersion": "batch.almanac.dev/v1alpha1", "spec.trigger.type": "Complete", "spec.concurrencyPolicy": "Allow"},
	}, {
		name: "EventJob with several triggers",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: fan-in}
spec:
  triggers: [{kind: ScheduledJob, name: at}, {kind: CronJob, name: hello}]
  fanIn: {require: AnyOf}` + jobTemplate,
		// No empty spec.trigger is written beside triggers.
		want: map[string]any{"spec.fanIn.require": "AnyOf", "spec.fanIn.pairBy": "Slot", "spec.fanIn.onFailure": "Skip",
			"spec.fanIn.horizonSeconds": int64(86400), "spec.concurrencyPolicy": "Allow", "spec.trigger": nil},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, _, err := create(t, ns, tt.manifest)
			if err != nil {
				t.Fatal(err)
			}
			stored := &unstructured.Unstructured{}
			stored.SetGroupVersionKind(obj.GroupVersionKind())
			if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), stored); err != nil {
				t.Fatal(err)
			}
			got := map[string]any{}
			for path := range tt.want {
				got[path] = fieldOf(stored, path)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("stored (-want +got):\n%s", diff)
			}

			// Defaulting is idempotent: writing the stored object back changes nothing. The
			// first write of an object that no controller has written a status for stores
			// what the schema's defaults add to every read (status.observedGeneration 0, for
			// kstatus: docs/gitops.md), so it gets a new resourceVersion but reads the same;
			// from then on an update with the stored object is not even a write.
			c, warnings := newClient(t)
			read := stored.DeepCopy()
			if err := c.Update(context.Background(), stored); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(read.Object, stored.Object, ignoreWriteMetadata); diff != "" {
				t.Errorf("an update with the stored object changed it (-read +updated):\n%s", diff)
			}
			before := stored.GetResourceVersion()
			if err := c.Update(context.Background(), stored); err != nil {
				t.Fatal(err)
			}
			if stored.GetResourceVersion() != before {
				t.Errorf("a second update with the stored object changed it: resourceVersion %s → %s", before, stored.GetResourceVersion())
			}
			for _, w := range warnings.take() {
				if strings.Contains(w, "stored as") || strings.Contains(w, "moved to") {
					t.Errorf("defaulting changed the stored object again: %s", w)
				}
			}
		})
	}
}

// TestDryRun checks that server-side dry runs go through both webhooks and persist nothing.
func TestDryRun(t *testing.T) {
	ns := newNamespace(t)
	const manifest = `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: dry}
spec: {scaleTargetRef: {name: web}, minReplicas: 2, type: Weekly, startDayOfWeek: fri, endDayOfWeek: mon, startTime: "18:00", endTime: "8:00", timeZone: est}`
	obj, warnings, err := create(t, ns, manifest, client.DryRunAll)
	if err != nil {
		t.Fatal(err)
	}
	if got := []any{fieldOf(obj, "spec.timeZone"), fieldOf(obj, "spec.endTime"), fieldOf(obj, "spec.startDayOfWeek")}; !cmp.Equal(got, []any{"EST", "08:00", "Friday"}) {
		t.Errorf("the dry run's answer is not normalized: %v", got)
	}
	if len(warnings) == 0 || !strings.HasPrefix(warnings[0], "spec.timeZone: EST is a fixed UTC-05:00 offset") {
		t.Errorf("warnings = %q", warnings)
	}
	assertNotFound(t, obj)

	_, _, err = create(t, ns, strings.Replace(manifest, "est}", "mars}", 1), client.DryRunAll)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.timeZone: Invalid value: "mars"`) {
		t.Errorf("dry run of an invalid object: %v", err)
	}

	t.Run("kubectl", func(t *testing.T) {
		kubectl, err := exec.LookPath("kubectl")
		if err != nil {
			t.Fatalf("kubectl is not on PATH: install it to run this test (%v)", err)
		}
		file := filepath.Join(t.TempDir(), "schedule.yaml")
		if err := os.WriteFile(file, []byte(manifest), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(kubectl, "--kubeconfig", env.KubeconfigPath, "-n", ns, "apply", "--dry-run=server", "-f", file).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl apply --dry-run=server: %v\n%s", err, out)
		}
		for _, want := range []string{"Warning: spec.timeZone: EST is a fixed UTC-05:00 offset", "schedule.autoscaling.almanac.dev/dry created (server dry run)"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("kubectl output does not contain %q:\n%s", want, out)
			}
		}
		if err := os.WriteFile(file, []byte(strings.Replace(manifest, "est}", "Europe/Berln}", 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err = exec.Command(kubectl, "--kubeconfig", env.KubeconfigPath, "-n", ns, "apply", "--dry-run=server", "-f", file).CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("kubectl apply of an invalid object: %v\n%s", err, out)
		}
		if want := `spec.timeZone: Invalid value: "Europe/Berln": "Europe/Berln" is not a known IANA time zone: did you mean "Europe/Berlin"?`; !strings.Contains(string(out), want) {
			t.Errorf("kubectl output does not contain %q:\n%s", want, out)
		}
		assertNotFound(t, obj)
	})
}

// TestOverlapsWithSiblingsInTheCache checks overlapPolicy Forbid and Max against Schedules
// that the webhook reads from the manager's cache.
func TestOverlapsWithSiblingsInTheCache(t *testing.T) {
	ns := newNamespace(t)
	const office = `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: office-TARGET}
spec: {scaleTargetRef: {name: TARGET}, minReplicas: 4, type: Weekly, startDayOfWeek: Monday, startTime: "09:00", endDayOfWeek: Friday, endTime: "17:00", timeZone: Europe/Berlin}`
	for _, m := range []string{`
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: strict}
spec: {overlapPolicy: Forbid, horizontalPodAutoscalerSpec: {scaleTargetRef: {kind: Deployment, name: web}, maxReplicas: 10}}`, `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: relaxed}
spec: {horizontalPodAutoscalerSpec: {scaleTargetRef: {kind: Deployment, name: web}, maxReplicas: 10}}`,
		strings.ReplaceAll(office, "TARGET", "strict"),
		strings.ReplaceAll(office, "TARGET", "relaxed"),
	} {
		mustCreate(t, ns, m)
	}
	const evening = `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: sale}
spec: {scaleTargetRef: {name: TARGET}, minReplicas: 8, type: OneShot, startTime: "2027-02-05T16:00", endTime: "2027-02-05T20:00", timeZone: Europe/Berlin}`

	_, _, err := create(t, ns, strings.Replace(evening, "TARGET", "strict", 1))
	want := []metav1.StatusCause{{Type: metav1.CauseType(field.ErrorTypeForbidden), Field: "spec", Message: `Forbidden: the windows overlap those of Schedule "office-strict", ` +
		`and ScheduledPodAutoscaler "strict" has overlapPolicy Forbid: both are active from 2027-02-05 16:00 to 17:00 Europe/Berlin (2027-02-05 15:00 to 16:00 UTC); ` +
		`move or shorten one of the windows, or set the autoscaler's overlapPolicy to Max`}}
	if diff := cmp.Diff(want, causes(t, err)); diff != "" {
		t.Errorf("causes (-want +got):\n%s", diff)
	}

	_, warnings, err := create(t, ns, strings.Replace(strings.Replace(evening, "TARGET", "relaxed", 1), "name: sale", "name: sale-relaxed", 1))
	if err != nil {
		t.Fatal(err)
	}
	wantWarnings := []string{`spec: the windows overlap those of Schedule "office-relaxed" from 2027-02-05 16:00 to 17:00 Europe/Berlin (2027-02-05 15:00 to 16:00 UTC); ` +
		`while both are active the largest minReplicas and the largest maxReplicas apply (overlapPolicy Max)`}
	if diff := cmp.Diff(wantWarnings, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}

	// The office week ends Friday 17:00: after that there is room.
	if _, _, err := create(t, ns, strings.Replace(strings.Replace(evening, "TARGET", "strict", 1), "2027-02-05T16:00", "2027-02-05T17:00", 1)); err != nil {
		t.Errorf("a window that only touches the other one: %v", err)
	}
}

// TestEventJobCycle checks that the EventJob that would close a cycle is rejected, following
// the triggers through the cache.
func TestEventJobCycle(t *testing.T) {
	ns := newNamespace(t)
	for _, m := range []string{`
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: extract}
spec:
  trigger: {kind: EventJob, name: load}` + jobTemplate, `
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: transform}
spec:
  trigger: {kind: EventJob, name: extract}` + jobTemplate,
	} {
		mustCreate(t, ns, m)
	}
	_, _, err := create(t, ns, `
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: load}
spec:
  trigger: {kind: EventJob, name: transform}`+jobTemplate)
	want := []metav1.StatusCause{invalid("spec.trigger.name", `Invalid value: "transform": this trigger closes a cycle: EventJob "load" triggers on EventJob "transform", `+
		`which triggers on EventJob "extract", which triggers on EventJob "load"; each Job would start the next one, forever: trigger on an object outside the cycle`)}
	if diff := cmp.Diff(want, causes(t, err)); diff != "" {
		t.Errorf("causes (-want +got):\n%s", diff)
	}
}

// TestEventJobCycleThroughSeveralTriggers: a cycle closed through the second of an EventJob's
// triggers is refused at that trigger, with the cycle.
func TestEventJobCycleThroughSeveralTriggers(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, ns, `
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: transform}
spec:
  trigger: {kind: EventJob, name: load}`+jobTemplate)
	_, _, err := create(t, ns, `
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: load}
spec:
  triggers: [{kind: CronJob, name: extract}, {kind: EventJob, name: transform}]`+jobTemplate)
	want := []metav1.StatusCause{invalid("spec.triggers[1].name", `Invalid value: "transform": this trigger closes a cycle: EventJob "load" triggers on EventJob "transform", `+
		`which triggers on EventJob "load"; each Job would start the next one, forever: trigger on an object outside the cycle`)}
	if diff := cmp.Diff(want, causes(t, err)); diff != "" {
		t.Errorf("causes (-want +got):\n%s", diff)
	}
}

// TestRatcheting checks that an object that aged into staleness can still be labelled,
// suspended and have its finalizers removed, while a change of its timing is checked.
func TestRatcheting(t *testing.T) {
	ns := newNamespace(t)
	obj := mustCreate(t, ns, `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: lunch, finalizers: [example.com/keep]}
spec: {scaleTargetRef: {name: web}, minReplicas: 2, type: OneShot, startTime: "2027-01-15T12:00", endTime: "2027-01-15T13:00"}`)
	setClock(t, now.Add(2*time.Hour))
	c, warnings := newClient(t)
	ctx := context.Background()

	obj.SetLabels(map[string]string{"team": "web"})
	if err := unstructured.SetNestedField(obj.Object, true, "spec", "suspend"); err != nil {
		t.Fatal(err)
	}
	if err := c.Update(ctx, obj); err != nil {
		t.Fatalf("a label and suspend on an aged Schedule: %v", err)
	}
	want := []string{"spec.endTime: the OneShot window ended at 2027-01-15 13:00 UTC: this Schedule will never be active again; delete it when it is no longer needed"}
	if diff := cmp.Diff(want, warnings.take()); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}

	changed := obj.DeepCopy()
	if err := unstructured.SetNestedField(changed.Object, "2027-01-15T13:30", "spec", "endTime"); err != nil {
		t.Fatal(err)
	}
	err := c.Update(ctx, changed)
	wantCauses := []metav1.StatusCause{invalid("spec.endTime", `Invalid value: "2027-01-15T13:30": the window ended at 2027-01-15 13:30 UTC, which is not after now `+
		`(2027-01-15 14:00 UTC): a OneShot Schedule in the past would never be active; set startTime and endTime to a future window, or delete the Schedule`)}
	if diff := cmp.Diff(wantCauses, causes(t, err)); diff != "" {
		t.Errorf("a change of the window: causes (-want +got):\n%s", diff)
	}

	if err := c.Delete(ctx, obj); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	obj.SetFinalizers(nil)
	if err := c.Update(ctx, obj); err != nil {
		t.Fatalf("removing the finalizer of a Schedule being deleted: %v", err)
	}
	assertNotFound(t, obj)
}

// TestEventJobTriggerJob: whether an EventJob's trigger Job exists is asked of the API server
// (a GET of its metadata: only the leader caches Jobs), so the warning goes the moment the
// Job exists.
func TestEventJobTriggerJob(t *testing.T) {
	ns := newNamespace(t)
	eventJob := func(name string) string {
		return `
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: ` + name + `}
spec:
  trigger: {apiVersion: batch/v1, kind: Job, name: migrate}` + jobTemplate
	}
	_, warnings, err := create(t, ns, eventJob("before"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`spec.trigger.name: Job "migrate" does not exist in namespace "` + ns + `": the EventJob starts no Job until it exists and reaches the trigger condition`}
	if diff := cmp.Diff(want, warnings); diff != "" {
		t.Errorf("an EventJob after a missing Job: warnings (-want +got):\n%s", diff)
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "migrate", Namespace: ns},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
		}}},
	}
	if err := env.Client.Create(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	if _, warnings, err := create(t, ns, eventJob("after")); err != nil || len(warnings) != 0 {
		t.Errorf("an EventJob after an existing Job: %v, warnings %q; want none", err, warnings)
	}
}

// ignoreWriteMetadata leaves out of a comparison of objects what every write changes:
// metadata.resourceVersion and metadata.managedFields (the writer's entry and its time).
var ignoreWriteMetadata = cmpopts.IgnoreMapEntries(func(k string, v any) bool {
	return k == "resourceVersion" || k == "managedFields"
})
