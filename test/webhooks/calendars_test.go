package webhooks_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestCalendars: the API server calls almanac's webhooks for Calendars and ClusterCalendars:
// a wrong calendar is refused with the field path of each problem, a valid one is stored
// normalized; and a Schedule or ScheduledJob that names a calendar that does not exist is
// admitted with a warning naming the field, while one naming the same calendar twice is
// refused.
func TestCalendars(t *testing.T) {
	ns := newNamespace(t)

	_, _, err := create(t, ns, `
apiVersion: almanac.dev/v1alpha1
kind: Calendar
metadata: {name: bad}
spec:
  timeZone: Europe/Berln
  days: [{date: "12-25"}, {date: "2027-02-29"}]
  periods: [{start: "2027-12-31T00:00", end: "2027-12-20T00:00"}]`)
	badDays := []metav1.StatusCause{
		invalid("spec.days[1].date", `Invalid value: "2027-02-29": "2027-02-29" is not a valid date: February 2027 has 28 days`),
		invalid("spec.periods[0].end", `Invalid value: "2027-12-20T00:00": 2027-12-20T00:00 is not after the start 2027-12-31T00:00: `+
			`a period must end after it starts: set end to a later wall time than start (swap them if they were written the wrong way round)`),
	}
	want := append([]metav1.StatusCause{
		invalid("spec.timeZone", `Invalid value: "Europe/Berln": "Europe/Berln" is not a known IANA time zone: did you mean "Europe/Berlin"?`),
	}, badDays...)
	if diff := cmp.Diff(want, causes(t, err)); diff != "" {
		t.Errorf("Calendar: causes (-want +got):\n%s", diff)
	}
	_, _, err = create(t, "", `
apiVersion: almanac.dev/v1alpha1
kind: ClusterCalendar
metadata: {name: bad-`+ns+`}
spec:
  days: [{date: "12-25"}, {date: "2027-02-29"}]
  periods: [{start: "2027-12-31T00:00", end: "2027-12-20T00:00"}]`)
	if diff := cmp.Diff(badDays, causes(t, err)); diff != "" {
		t.Errorf("ClusterCalendar: causes (-want +got):\n%s", diff)
	}

	holidays, warnings, err := create(t, ns, `
apiVersion: almanac.dev/v1alpha1
kind: Calendar
metadata: {name: holidays}
spec:
  timeZone: europe/berlin
  days: [{date: "12-25"}, {date: "12-25"}]
  periods: [{start: "2027-12-24T18:00:00+01:00", end: "2027-12-27T00:00"}]`)
	if err != nil {
		t.Fatal(err)
	}
	wantWarnings := []string{
		`spec.days[1].date: "12-25" is listed already at spec.days[0]: a day is in the calendar once, however often it is listed; remove one of them, or correct the date if another day was meant`,
	}
	if diff := cmp.Diff(wantWarnings, warnings); diff != "" {
		t.Errorf("holidays: warnings (-want +got):\n%s", diff)
	}
	if zone, start := fieldOf(holidays, "spec.timeZone"), holidays.Object["spec"].(map[string]any)["periods"].([]any)[0].(map[string]any)["start"]; zone != "Europe/Berlin" || start != "2027-12-24T18:00" {
		t.Errorf("holidays stored with timeZone %v and periods[0].start %v, want Europe/Berlin and 2027-12-24T18:00", zone, start)
	}
	waitCached(t, holidays)

	_, warnings, err = create(t, ns, `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: web}
spec: {horizontalPodAutoscalerSpec: {scaleTargetRef: {kind: Deployment, name: web}, maxReplicas: 10}}`)
	if err != nil || len(warnings) > 0 {
		t.Fatalf("autoscaler: %v %q", err, warnings)
	}
	_, warnings, err = create(t, ns, `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: office}
spec:
  scaleTargetRef: {name: web}
  minReplicas: 2
  type: Daily
  startTime: "09:00"
  endTime: "17:00"
  calendars:
    skip: [{name: holidays}, {kind: ClusterCalendar, name: no-such-calendar}]
    only: [{name: trading-days}]`)
	if err != nil {
		t.Fatal(err)
	}
	wantWarnings = []string{
		`spec.calendars.skip[1]: ClusterCalendar no-such-calendar does not exist in the cluster: until it does, no window of this object opens and no run starts (a missing calendar holds it); ` +
			`create it, or correct the name or kind (Calendar or ClusterCalendar)`,
		`spec.calendars.only[0]: Calendar trading-days does not exist in namespace "` + ns + `": until it does, no window of this object opens and no run starts (a missing calendar holds it); ` +
			`create it, or correct the name or kind (Calendar or ClusterCalendar)`,
	}
	if diff := cmp.Diff(wantWarnings, warnings); diff != "" {
		t.Errorf("Schedule: warnings (-want +got):\n%s", diff)
	}

	_, _, err = create(t, ns, `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: report}
spec:
  schedule: "0 9 * * *"
  calendars: {skip: [{name: holidays}, {kind: Calendar, name: holidays}]}`+jobTemplate)
	want = []metav1.StatusCause{{Type: metav1.CauseType(field.ErrorTypeDuplicate), Field: "spec.calendars.skip[1]",
		Message: `Duplicate value: "Calendar holidays": Calendar holidays is named already at spec.calendars.skip[0]: remove one of them`}}
	if diff := cmp.Diff(want, causes(t, err)); diff != "" {
		t.Errorf("ScheduledJob: causes (-want +got):\n%s", diff)
	}
}
