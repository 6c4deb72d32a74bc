package admission

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

// FuzzDefaultSchedule checks that defaulting and validating a Schedule never panics, that
// defaulting is idempotent, and that a Schedule that validates still validates after being
// defaulted again.
func FuzzDefaultSchedule(f *testing.F) {
	for _, seed := range [][6]string{
		{"Daily", "9:00", "17:00:00", "", "", "asia/tokyo"},
		{"Weekly", "18:00", "8:00", "fri", "MON", "+09:00"},
		{"OneShot", "2027-09-01T10:00:00+09:00", "2027-09-01T09:00:00Z", "", "", "Asia/Tokyo"},
		{"OneShot", "2027-03-14T02:30", "2027-03-14T02:45", "", "", "America/New_York"},
		{"Cron", "", "", "", "", "TZ="},
		{"Daily", "24:00", "00:00", "", "", "UTC-12"},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3], seed[4], seed[5])
	}
	f.Fuzz(func(t *testing.T, typ, start, end, startDay, endDay, zone string) {
		s := schedule("a", autoscalingv1alpha1.ScheduleSpec{
			Type: autoscalingv1alpha1.ScheduleType(typ), StartTime: start, EndTime: end, StartDayOfWeek: startDay, EndDayOfWeek: endDay, TimeZone: zone,
		})
		if typ == "Cron" {
			s.Spec.Schedule, s.Spec.Duration, s.Spec.StartTime, s.Spec.EndTime = start, end, "", ""
		}
		DefaultSchedule(s)
		again := s.DeepCopy()
		DefaultSchedule(again)
		if diff := cmp.Diff(s, again); diff != "" {
			t.Fatalf("defaulting is not idempotent:\n%s", diff)
		}
		errs, _, err := ValidateSchedule(context.Background(), s, nil, Env{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if len(errs) == 0 {
			if errs, _, _ := ValidateSchedule(context.Background(), again, nil, Env{Now: now}); len(errs) > 0 {
				t.Fatalf("valid once, invalid after defaulting again: %v", errs)
			}
		}
	})
}

// FuzzDefaultScheduledJob does the same for ScheduledJobs, whose defaulting also parses
// timestamps written in schedule.
func FuzzDefaultScheduledJob(f *testing.F) {
	for _, seed := range [][3]string{
		{"", "2020-03-21T13:53:55Z", ""},
		{"", "2036-03-21T13:53:59.999+05:30", "Asia/Tokyo"},
		{"", "2036-03-21T13:53:01", "Europe/Berlin"},
		{"2027-03-14T09:30:00-04:00", "", "america/new_york"},
		{"", "30 2 * * *", "Europe/Berlin"},
		{"", "9999-12-31T23:59:59Z", "Pacific/Kiritimati"},
		{"", "0000-01-01T00:00:01-23:59", "UTC"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, at, sched, zone string) {
		sj := scheduledJob("a", batchv1alpha1.ScheduledJobSpec{At: at, Schedule: sched, TimeZone: zone})
		DefaultScheduledJob(sj)
		again := sj.DeepCopy()
		if w := DefaultScheduledJob(again); len(w) > 0 {
			t.Fatalf("defaulting again warned: %q", w)
		}
		if diff := cmp.Diff(sj, again); diff != "" {
			t.Fatalf("defaulting is not idempotent:\n%s", diff)
		}
		if _, _, err := ValidateScheduledJob(context.Background(), sj, nil, Env{Now: now}); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzDefaultCalendar checks that defaulting and validating a calendar never panics, that
// defaulting is idempotent (and warns only once), and that a calendar that validates still
// validates after being defaulted again.
func FuzzDefaultCalendar(f *testing.F) {
	for _, seed := range [][4]string{
		{"europe/berlin", "12-25", "2027-12-24T18:00:00+01:00", "2027-12-31T23:00:00Z"},
		{"", "02-29", "2027-03-28T02:30", "2027-03-28T03:00"},
		{"America/New_York", "2027-02-29", "2027-11-07T01:30", "2027-11-07T01:15"},
		{"UTC+9", "13-01", "9999-12-31T23:59:59Z", "0000-01-01T00:00:00-23:59"},
		{"Local", " 12-25 ", "", "2027-01-01T00:00"},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3])
	}
	f.Fuzz(func(t *testing.T, zone, date, start, end string) {
		c := calendar("a", zone, days(date), period(start, end))
		DefaultCalendar(c)
		again := c.DeepCopy()
		if w := DefaultCalendar(again); len(w) > 0 {
			t.Fatalf("defaulting again warned: %q", w)
		}
		if diff := cmp.Diff(c, again); diff != "" {
			t.Fatalf("defaulting is not idempotent:\n%s", diff)
		}
		errs, _, err := ValidateCalendar(context.Background(), c, nil, Env{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if len(errs) == 0 {
			if errs, _, _ := ValidateCalendar(context.Background(), again, nil, Env{Now: now}); len(errs) > 0 {
				t.Fatalf("valid once, invalid after defaulting again: %v", errs)
			}
		}
	})
}
