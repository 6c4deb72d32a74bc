// Package migrate_test checks that manifests of the systems almanac replaces keep their
// behaviour: the replaced projects' own test tables for the semantics that `almanac migrate`
// converts, and each project's sample from examples/migrate/, are run through almanac
// migrate, almanac validate and almanac preview (the time engine the controller uses), and
// compared with what the original system did. No API server is needed.
package migrate_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/almanac-dev/almanac/api/admission"
	"github.com/almanac-dev/almanac/api/timing"
	"github.com/almanac-dev/almanac/commands/manifest"
	"github.com/almanac-dev/almanac/commands/migrate"
	"github.com/almanac-dev/almanac/commands/preview"
)

// migrated runs almanac migrate on input and reads its output back as almanac validate and
// almanac preview would.
func migrated(t *testing.T, input string) []manifest.Document {
	t.Helper()
	docs, err := manifest.Read([]string{"-"}, false, strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	res := migrate.Convert(docs)
	if len(res.Errors) > 0 {
		t.Fatalf("almanac migrate: %q", res.Errors)
	}
	var out strings.Builder
	if err := migrate.Write(&out, res.Objects, "yaml"); err != nil {
		t.Fatal(err)
	}
	docs, err = manifest.Read([]string{"-"}, false, strings.NewReader(out.String()))
	if err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	return docs
}

// admitted fails the test unless almanac validate admits every almanac object of docs at now,
// without warnings.
func admitted(t *testing.T, docs []manifest.Document, now time.Time) {
	t.Helper()
	report, err := admission.Validate(context.Background(), docs, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range report.Results {
		if !r.Allowed || len(r.Warnings) > 0 {
			t.Errorf("almanac validate at %s: %s %s: allowed %v, errors %v, warnings %q", now.Format(time.RFC3339), r.Kind, r.Name, r.Allowed, r.Errors, r.Warnings)
		}
	}
}

// previewed returns almanac preview's report of docs over [from, to).
func previewed(t *testing.T, docs []manifest.Document, from, to time.Time) preview.Report {
	t.Helper()
	report, warnings, err := preview.Build(docs, preview.Range{From: from, To: to})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) > 0 {
		t.Errorf("almanac preview warnings: %q", warnings)
	}
	return report
}

// dkuroSchedule is a scheduled-pod-autoscaler autoscaler "web" and its Schedule "s", in the
// form of that project's tests (ScheduleSpec literals without a zone: UTC).
func dkuroSchedule(typ, startDay, endDay, start, end string) string {
	return fmt.Sprintf(`apiVersion: autoscaling.d-kuro.github.io/v1
kind: ScheduledPodAutoscaler
metadata: {name: web}
spec:
  horizontalPodAutoscalerSpec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
    minReplicas: 1
    maxReplicas: 10
---
apiVersion: autoscaling.d-kuro.github.io/v1
kind: Schedule
metadata: {name: s}
spec:
  scaleTargetRef: {apiVersion: autoscaling.d-kuro.github.io/v1, kind: ScheduledPodAutoscaler, name: web}
  minReplicas: 5
  type: %s
  startDayOfWeek: %q
  endDayOfWeek: %q
  startTime: %q
  endTime: %q
`, typ, startDay, endDay, start, end)
}

// activeAt reports whether the Schedule "s" is active at the first instant of a preview that
// starts at now.
func activeAt(t *testing.T, docs []manifest.Document, now time.Time) bool {
	t.Helper()
	report := previewed(t, docs, now, now.Add(time.Minute))
	if len(report.Autoscalers) != 1 || len(report.Autoscalers[0].Segments) == 0 {
		t.Fatalf("preview: %+v", report)
	}
	return slices.Contains(report.Autoscalers[0].Segments[0].Active, "s")
}

// tableEpoch is before every instant of scheduled-pod-autoscaler's test tables (September
// 2018), so that almanac validate admits their OneShot windows.
var tableEpoch = time.Date(2018, time.September, 1, 0, 0, 0, 0, time.UTC)

type containsCase struct {
	name                  string
	typ, startDay, endDay string
	start, end            string
	now                   time.Time
	expected              bool
}

func runContainsTable(t *testing.T, table []containsCase) {
	t.Helper()
	for _, tt := range table {
		t.Run(tt.name, func(t *testing.T) {
			docs := migrated(t, dkuroSchedule(tt.typ, tt.startDay, tt.endDay, tt.start, tt.end))
			admitted(t, docs, tableEpoch)
			if got := activeAt(t, docs, tt.now); got != tt.expected {
				t.Errorf("%s %s-%s %s-%s at %s (%s): active %v, scheduled-pod-autoscaler: %v",
					tt.typ, tt.startDay, tt.endDay, tt.start, tt.end, tt.now.Format(time.RFC3339), tt.now.Weekday(), got, tt.expected)
			}
		})
	}
}

func d(y int, m time.Month, day, h, min int) time.Time {
	return time.Date(y, m, day, h, min, 0, 0, time.UTC)
}

// TestScheduleSpecContainsWeekly is scheduled-pod-autoscaler's own table for Weekly windows
// (d-kuro/scheduled-pod-autoscaler, apis/autoscaling/v1/contains_weekly_test.go,
// TestScheduleSpecContainsWeekly), case for case: 2018-09-03 is a Monday.
func TestScheduleSpecContainsWeekly(t *testing.T) {
	w := func(name, startDay, endDay, start, end string, now time.Time, expected bool) containsCase {
		return containsCase{name: name, typ: "Weekly", startDay: startDay, endDay: endDay, start: start, end: end, now: now, expected: expected}
	}
	runContainsTable(t, []containsCase{
		// 1 day case
		w("1day case[1]", "Monday", "Monday", "10:00", "19:00", d(2018, 9, 2, 11, 0), false),
		w("1day case[2]", "Monday", "Monday", "10:00", "19:00", d(2018, 9, 3, 9, 0), false),
		w("1day case[3]", "Monday", "Monday", "10:00", "19:00", d(2018, 9, 3, 10, 0), true),
		w("1day case[4]", "Monday", "Monday", "10:00", "19:00", d(2018, 9, 3, 11, 0), true),
		w("1day case[5]", "Monday", "Monday", "10:00", "19:00", d(2018, 9, 3, 18, 0), true),
		w("1day case[6]", "Monday", "Monday", "10:00", "19:00", d(2018, 9, 3, 19, 0), false),
		w("1day case[7]", "Monday", "Monday", "10:00", "19:00", d(2018, 9, 3, 20, 0), false),
		w("1day case[8]", "Monday", "Monday", "10:00", "19:00", d(2018, 9, 4, 11, 0), false),
		// 1 day case with minutes
		w("1day case with minutes[1]", "Monday", "Monday", "10:00", "10:30", d(2018, 9, 3, 9, 50), false),
		w("1day case with minutes[2]", "Monday", "Monday", "10:00", "10:30", d(2018, 9, 3, 10, 20), true),
		w("1day case with minutes[3]", "Monday", "Monday", "10:00", "10:30", d(2018, 9, 3, 9, 50), false),
		w("1day case with minutes[4]", "Monday", "Monday", "10:00", "10:30", d(2018, 9, 3, 10, 40), false),
		// EndTime is over 24 o'clock.
		w("EndTime is over 24o'clock[1]", "Monday", "Monday", "15:00", "01:00", d(2018, 9, 3, 0, 0), false),
		w("EndTime is over 24o'clock[2]", "Monday", "Monday", "15:00", "01:00", d(2018, 9, 3, 14, 0), false),
		w("EndTime is over 24o'clock[3]", "Monday", "Monday", "15:00", "01:00", d(2018, 9, 3, 15, 0), true),
		w("EndTime is over 24o'clock[4]", "Monday", "Monday", "15:00", "01:00", d(2018, 9, 3, 19, 0), true),
		w("EndTime is over 24o'clock[5]", "Monday", "Monday", "15:00", "01:00", d(2018, 9, 4, 0, 0), true),
		w("EndTime is over 24o'clock[6]", "Monday", "Monday", "15:00", "01:00", d(2018, 9, 4, 1, 0), false),
		w("EndTime is over 24o'clock[7]", "Monday", "Monday", "15:00", "01:00", d(2018, 9, 4, 2, 0), false),
		// EndTime is over 24 o'clock with minutes case.
		w("EndTime is over 24o'clock with minutes case[1]", "Monday", "Monday", "15:00", "01:30", d(2018, 9, 4, 1, 20), true),
		w("EndTime is over 24o'clock with minutes case[2]", "Monday", "Monday", "15:00", "01:30", d(2018, 9, 4, 1, 30), false),
		w("EndTime is over 24o'clock with minutes case[3]", "Monday", "Monday", "15:00", "01:30", d(2018, 9, 5, 1, 20), false),
		// EndTime is over 24 o'clock, 2 days.
		w("EndTime is over 24o'clock 2days[1]", "Monday", "Tuesday", "15:00", "01:30", d(2018, 9, 3, 16, 0), true),
		w("EndTime is over 24o'clock 2days[2]", "Monday", "Tuesday", "15:00", "01:30", d(2018, 9, 4, 16, 0), true),
		w("EndTime is over 24o'clock 2days[3]", "Monday", "Tuesday", "15:00", "01:30", d(2018, 9, 5, 1, 0), true),
		w("EndTime is over 24o'clock 2days[4]", "Monday", "Tuesday", "15:00", "01:30", d(2018, 9, 5, 2, 0), false),
		w("EndTime is over 24o'clock 2days[5]", "Monday", "Tuesday", "15:00", "01:30", d(2018, 9, 6, 16, 0), false),
		// the middle day in 3 days
		w("the middle day in 3days[1]", "Monday", "Wednesday", "15:00", "01:30", d(2018, 9, 4, 14, 0), false),
		w("the middle day in 3days[2]", "Monday", "Wednesday", "15:00", "01:30", d(2018, 9, 4, 15, 0), true),
		w("the middle day in 3days[3]", "Monday", "Wednesday", "15:00", "01:30", d(2018, 9, 4, 16, 0), true),
		w("the middle day in 3days[4]", "Monday", "Wednesday", "15:00", "01:30", d(2018, 9, 4, 23, 0), true),
		w("the middle day in 3days[5]", "Monday", "Wednesday", "15:00", "01:30", d(2018, 9, 5, 0, 0), true),
		w("the middle day in 3days[6]", "Monday", "Wednesday", "15:00", "01:30", d(2018, 9, 5, 1, 0), true),
		w("the middle day in 3days[7]", "Monday", "Wednesday", "15:00", "01:30", d(2018, 9, 5, 2, 0), false),
		// StartDayOfWeek is bigger than EndDayOfWeek
		w("StartDayOfWeek is bigger than EndDayOfWeek[1]", "Tuesday", "Sunday", "15:00", "01:30", d(2018, 9, 3, 1, 20), true),
		w("StartDayOfWeek is bigger than EndDayOfWeek[2]", "Tuesday", "Sunday", "15:00", "01:30", d(2018, 9, 3, 16, 20), false),
		w("StartDayOfWeek is bigger than EndDayOfWeek[3]", "Tuesday", "Sunday", "15:00", "01:30", d(2018, 9, 4, 1, 20), false),
		w("StartDayOfWeek is bigger than EndDayOfWeek[4]", "Tuesday", "Sunday", "15:00", "01:30", d(2018, 9, 5, 1, 20), true),
		// everyday
		w("everyday[1]", "Sunday", "Saturday", "15:00", "01:30", d(2018, 9, 3, 1, 20), true),
		w("everyday[2]", "Sunday", "Saturday", "15:00", "01:30", d(2018, 9, 3, 16, 0), true),
		w("everyday[3]", "Sunday", "Saturday", "15:00", "01:30", d(2018, 9, 5, 1, 20), true),
		// The example, in the same form: three windows of 70 minutes, not one of
		// 49 hours 10 minutes.
		w("Monday-Wednesday 11:50-13:00, Tuesday 12:00", "Monday", "Wednesday", "11:50", "13:00", d(2018, 9, 4, 12, 0), true),
		w("Monday-Wednesday 11:50-13:00, Tuesday 03:27", "Monday", "Wednesday", "11:50", "13:00", d(2018, 9, 4, 3, 27), false),
		w("Monday-Wednesday 11:50-13:00, Wednesday 13:00", "Monday", "Wednesday", "11:50", "13:00", d(2018, 9, 5, 13, 0), false),
	})
}

// TestScheduleSpecContainsDaily is scheduled-pod-autoscaler's table for Daily windows
// (apis/autoscaling/v1/contains_test.go, TestScheduleSpecContainsDaily).
func TestScheduleSpecContainsDaily(t *testing.T) {
	daily := func(name, start, end string, now time.Time, expected bool) containsCase {
		return containsCase{name: name, typ: "Daily", start: start, end: end, now: now, expected: expected}
	}
	runContainsTable(t, []containsCase{
		daily("case[1]", "10:00", "19:00", d(2018, 9, 2, 11, 0), true),
		daily("case[2]", "10:00", "19:00", d(2018, 9, 2, 20, 0), false),
		daily("date changes case[1]", "23:00", "03:00", d(2018, 9, 2, 2, 0), true),
		daily("date changes case[2]", "23:00", "01:00", d(2018, 9, 2, 2, 0), false),
	})
}

// TestScheduleSpecContainsOneShot is scheduled-pod-autoscaler's table for OneShot windows
// (apis/autoscaling/v1/contains_test.go, TestScheduleSpecContainsOneShot).
func TestScheduleSpecContainsOneShot(t *testing.T) {
	oneShot := func(name, start, end string, now time.Time, expected bool) containsCase {
		return containsCase{name: name, typ: "OneShot", start: start, end: end, now: now, expected: expected}
	}
	runContainsTable(t, []containsCase{
		oneShot("case[1]", "2018-09-01T10:00", "2018-09-10T19:00", d(2018, 9, 10, 11, 0), true),
		oneShot("case[2]", "2018-09-01T10:00", "2018-09-05T19:00", d(2018, 9, 10, 20, 0), false),
	})
}

// TestScheduleIsCompleted is scheduled-pod-autoscaler's table for a finished OneShot
// (apis/autoscaling/v1/schedule_types_test.go, TestScheduleIsCompleted): completed means the
// window is never active again, which almanac preview shows over the longest range it takes.
func TestScheduleIsCompleted(t *testing.T) {
	for _, tt := range []struct {
		name      string
		now       time.Time
		completed bool
	}{
		{"case[1]", d(2018, 9, 10, 20, 0), true},
		{"case[2]", d(2018, 9, 10, 18, 59), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			docs := migrated(t, dkuroSchedule("OneShot", "", "", "2018-09-01T10:00", "2018-09-10T19:00"))
			admitted(t, docs, tableEpoch)
			report := previewed(t, docs, tt.now, tt.now.Add(400*24*time.Hour))
			activeLater := slices.ContainsFunc(report.Autoscalers[0].Segments, func(s timing.Segment) bool { return slices.Contains(s.Active, "s") })
			if activeLater == tt.completed {
				t.Errorf("at %s: active again %v, scheduled-pod-autoscaler completed %v", tt.now.Format(time.RFC3339), activeLater, tt.completed)
			}
		})
	}
}

// runs returns the runs of the ScheduledJob name in almanac preview's report of docs over
// [from, to), in RFC 3339.
func runs(t *testing.T, docs []manifest.Document, name string, from, to time.Time) []string {
	t.Helper()
	for _, j := range previewed(t, docs, from, to).Jobs {
		if j.Name == name {
			out := []string{}
			for _, r := range j.Runs {
				out = append(out, r.UTC().Format(time.RFC3339))
			}
			return out
		}
	}
	t.Fatalf("almanac preview has no ScheduledJob %s", name)
	return nil
}

// TestCronTabSecondsField checks the CronTab controller's reading of spec.schedule (its
// main.go, addCronTab): a schedule that does not start with "@" gets the seconds field "0 "
// and runs at second 0 of each matching minute in the controller's zone (UTC); a descriptor
// is robfig/cron's own. The expected runs are robfig/cron's for "0 <schedule>" in UTC.
func TestCronTabSecondsField(t *testing.T) {
	from := d(2027, 3, 13, 23, 0) // a Saturday, the day before New York's clocks spring forward
	to := from.Add(26 * time.Hour)
	for _, tt := range []struct {
		schedule string
		want     []string
	}{
		{"@daily", []string{"2027-03-14T00:00:00Z", "2027-03-15T00:00:00Z"}},
		{"@hourly", nil}, // every hour: checked by count below
		{"30 2 * * *", []string{"2027-03-14T02:30:00Z"}},
		{"*/20 9 * * 0", []string{"2027-03-14T09:00:00Z", "2027-03-14T09:20:00Z", "2027-03-14T09:40:00Z"}},
		{"0 0 14 3 *", []string{"2027-03-14T00:00:00Z"}},
	} {
		t.Run(tt.schedule, func(t *testing.T) {
			docs := migrated(t, fmt.Sprintf(`apiVersion: alpha.ianlewis.org/v1
kind: CronTab
metadata: {name: c}
spec:
  schedule: %q
  jobTemplate: {containers: [{name: c, image: busybox}], restartPolicy: Never}
`, tt.schedule))
			admitted(t, docs, from)
			got := runs(t, docs, "c", from, to)
			if tt.want == nil {
				if len(got) != 26 {
					t.Errorf("%d runs in 26 hours, want 26: %v", len(got), got)
				}
				return
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("runs %v, want %v", got, tt.want)
			}
		})
	}
}

// TestATInstant checks k8s-at's reading of spec.schedule (controllers/at_controller.go): the
// Job is due when now passes the RFC 3339 instant, to the second, whatever offset it was
// written with.
func TestATInstant(t *testing.T) {
	for _, schedule := range []string{"2036-03-21T13:53:55Z", "2036-03-21T22:53:55+09:00", "2036-03-21T08:53:55-05:00", "2036-03-21T19:23:55+05:30"} {
		t.Run(schedule, func(t *testing.T) {
			docs := migrated(t, fmt.Sprintf(`apiVersion: batch.my.domain/v1
kind: AT
metadata: {name: a}
spec:
  schedule: %q
  jobTemplate: {spec: {template: {spec: {containers: [{name: c, image: busybox}], restartPolicy: OnFailure}}}}
`, schedule))
			admitted(t, docs, d(2036, 3, 21, 13, 0))
			if got := runs(t, docs, "a", d(2036, 3, 21, 0, 0), d(2036, 3, 22, 0, 0)); !slices.Equal(got, []string{"2036-03-21T13:53:55Z"}) {
				t.Errorf("runs %v, want the instant 2036-03-21T13:53:55Z", got)
			}
		})
	}
}

// TestEventJobTriggerMatch is kitagry/eventjob's table (api/v1/eventjob_types_test.go,
// TestEventJobTrigger_Match): a trigger on a CronJob's Complete matches a completed Job of the
// CronJob and not a failed one; a trigger on Failed matches a failed one. Migrated, the trigger
// keeps its kind, name and type, which almanac's EventJob reconciler matches against the Job's
// own condition (reconcilers/eventjob tests).
func TestEventJobTriggerMatch(t *testing.T) {
	for _, tt := range []struct {
		name, triggerType string
	}{
		{"trigger match CronJob complete", "Complete"},
		{"trigger match CronJob failed", "Failed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			docs := migrated(t, fmt.Sprintf(`apiVersion: batch/v1
kind: CronJob
metadata: {name: cronjob}
spec:
  schedule: "*/1 * * * *"
  jobTemplate: {spec: {template: {spec: {containers: [{name: c, image: busybox}], restartPolicy: OnFailure}}}}
---
apiVersion: batch.kitagry.github.io/v1
kind: EventJob
metadata: {name: e}
spec:
  trigger: {apiVersion: batch/v1, kind: CronJob, name: cronjob, type: %s}
  jobTemplate: {spec: {template: {spec: {containers: [{name: c, image: busybox}], restartPolicy: OnFailure}}}}
`, tt.triggerType))
			admitted(t, docs, tableEpoch)
			if len(docs) != 2 || docs[1].Object.GetKind() != "EventJob" {
				t.Fatalf("migrated to %v", docs)
			}
			trigger, _, _ := unstructured.NestedMap(docs[1].Object.Object, "spec", "trigger")
			want := map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "name": "cronjob", "type": tt.triggerType}
			if fmt.Sprint(trigger) != fmt.Sprint(want) {
				t.Errorf("trigger %v, want %v", trigger, want)
			}
		})
	}
}
