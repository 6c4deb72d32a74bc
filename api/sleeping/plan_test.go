package sleeping

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
)

func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func compile(t *testing.T, spec sleepv1alpha1.SleepSpec) *Plan {
	t.Helper()
	p, problems := Compile(&spec, timing.Mask{})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	return p
}

func TestPlanAt(t *testing.T) {
	nights := sleepv1alpha1.SleepSpec{Asleep: []sleepv1alpha1.Window{{Type: "Daily", StartTime: "20:00", EndTime: "07:00", TimeZone: "Europe/Berlin"}}}
	weekdays := sleepv1alpha1.SleepSpec{Awake: []sleepv1alpha1.Window{{Type: "Daily", StartTime: "07:00", EndTime: "19:00",
		DaysOfWeek: []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"}, TimeZone: "UTC"}}}
	for _, tc := range []struct {
		name string
		spec sleepv1alpha1.SleepSpec
		now  string
		lead time.Duration
		want State
	}{
		{"asleep at night: wakes at 07:00 Berlin", nights, "2027-03-01T22:00:00Z", 0,
			State{Asleep: true, WakeAt: at(t, "2027-03-02T06:00:00Z"), Next: at(t, "2027-03-02T06:00:00Z")}},
		{"asleep: the wake starts a lead early", nights, "2027-03-01T22:00:00Z", 10 * time.Minute,
			State{Asleep: true, WakeAt: at(t, "2027-03-02T06:00:00Z"), Next: at(t, "2027-03-02T05:50:00Z")}},
		{"within the lead: waking, the next sleep next", nights, "2027-03-02T05:55:00Z", 10 * time.Minute,
			State{InLead: true, WakeAt: at(t, "2027-03-02T06:00:00Z"), Next: at(t, "2027-03-02T19:00:00Z")}},
		{"awake by day: sleeps at 20:00 Berlin", nights, "2027-03-01T12:00:00Z", 0,
			State{WakeAt: at(t, "2027-03-02T06:00:00Z"), Next: at(t, "2027-03-01T19:00:00Z")}},
		// Berlin springs forward on 2027-03-28: the night is an hour shorter in real time.
		{"across DST: 07:00 CEST", nights, "2027-03-27T22:00:00Z", 0,
			State{Asleep: true, WakeAt: at(t, "2027-03-28T05:00:00Z"), Next: at(t, "2027-03-28T05:00:00Z")}},
		{"awake mode: asleep on Friday night until Monday 07:00", weekdays, "2027-03-05T20:00:00Z", 0,
			State{Asleep: true, WakeAt: at(t, "2027-03-08T07:00:00Z"), Next: at(t, "2027-03-08T07:00:00Z")}},
		{"awake mode: awake at noon, asleep from 19:00", weekdays, "2027-03-03T12:00:00Z", 0,
			State{WakeAt: at(t, "2027-03-04T07:00:00Z"), Next: at(t, "2027-03-03T19:00:00Z")}},
		// A sleep no longer than the lead is skipped: its wake would start before it.
		{"a sleep shorter than the lead is skipped", sleepv1alpha1.SleepSpec{Asleep: []sleepv1alpha1.Window{
			{Type: "OneShot", StartTime: "2027-03-01T12:00", EndTime: "2027-03-01T12:05"},
			{Type: "OneShot", StartTime: "2027-03-02T12:00", EndTime: "2027-03-02T14:00"}}}, "2027-03-01T10:00:00Z", 10 * time.Minute,
			State{WakeAt: at(t, "2027-03-02T14:00:00Z"), Next: at(t, "2027-03-02T12:00:00Z")}},
		{"suspended: awake, nothing next", sleepv1alpha1.SleepSpec{Asleep: nights.Asleep, Suspend: true}, "2027-03-01T22:00:00Z", 0, State{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := compile(t, tc.spec).At(context.Background(), at(t, tc.now), tc.lead)
			if err != nil {
				t.Fatal(err)
			}
			if got.Asleep != tc.want.Asleep || got.InLead != tc.want.InLead || !got.WakeAt.Equal(tc.want.WakeAt) || !got.Next.Equal(tc.want.Next) {
				t.Errorf("At = %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestPlanAtCalendars(t *testing.T) {
	// Awake on weekdays, and a skip calendar of holidays: asleep all day on a holiday.
	holidays, errs := timing.CalendarSpec{Name: "ClusterCalendar holidays", TimeZone: "UTC", Days: []timing.CalendarDay{{Date: "2027-03-03"}}}.Compile()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	spec := sleepv1alpha1.SleepSpec{Awake: []sleepv1alpha1.Window{{Type: "Daily", StartTime: "07:00", EndTime: "19:00", TimeZone: "UTC"}}}
	p, problems := Compile(&spec, timing.Mask{Skip: []*timing.Calendar{holidays}})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	got, err := p.At(context.Background(), at(t, "2027-03-03T12:00:00Z"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Asleep || !got.WakeAt.Equal(at(t, "2027-03-04T07:00:00Z")) {
		t.Errorf("on the holiday: %+v, want asleep until the next day's 07:00", got)
	}
}

func TestLeadFrom(t *testing.T) {
	wakes := []sleepv1alpha1.MeasuredWake{{Duration: metav1.Duration{Duration: 40 * time.Second}}}
	p := compile(t, sleepv1alpha1.SleepSpec{Asleep: []sleepv1alpha1.Window{{Type: "Daily", StartTime: "20:00", EndTime: "07:00"}},
		Wake: sleepv1alpha1.Wake{Lead: sleepv1alpha1.Lead{Fixed: &metav1.Duration{Duration: time.Minute}}}})
	if got := p.LeadFrom(nil); got.Duration.Duration != time.Minute || got.Source != "Fixed" {
		t.Errorf("before any wake: %+v", got)
	}
	if got := p.LeadFrom(wakes); got.Duration.Duration != 50*time.Second || got.Source != "Learned" || got.Samples != 1 {
		t.Errorf("learned: %+v", got)
	}
	p.Lead = sleepv1alpha1.LeadOff
	if got := p.LeadFrom(wakes); got.Duration.Duration != 0 {
		t.Errorf("off: %+v", got)
	}
}
