package scheduledjob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

func spreadSJ(schedule, zone, spread string, created time.Time) *batchv1alpha1.ScheduledJob {
	sj := cronSJ(schedule, zone, created)
	sj.Spec.Spread = spread
	return sj
}

// offsetOf is the offset of the test's ScheduledJob (ns/report) for spread.
func offsetOf(t *testing.T, spread time.Duration) time.Duration {
	t.Helper()
	off := timing.SpreadOffset("ns", "report", spread)
	if off <= time.Minute || off%time.Minute == 0 {
		t.Fatalf("offset %v: the tests need one past the first minute, not on the minute", off)
	}
	return off
}

// TestSpreadRunsAtTheShiftedInstant: a slot runs at its cron time plus the offset, not
// before; the Job's name, its scheduled-time annotation and lastScheduleTime and
// nextScheduleTime all hold the shifted instant.
func TestSpreadRunsAtTheShiftedInstant(t *testing.T) {
	off := offsetOf(t, 5*time.Minute)
	midnight := utc("2027-01-15T00:00:00Z")
	shifted := midnight.Add(off)
	w := &world{t: t, sj: spreadSJ("0 0 * * *", "UTC", "5m", utc("2027-01-14T12:00:00Z"))}

	for _, now := range []time.Time{midnight.Add(-time.Second), midnight, shifted.Add(-time.Second)} {
		p := w.step(now)
		if !p.run.IsZero() {
			t.Fatalf("at %s: run %s, before the shifted instant %s", now, p.run, shifted)
		}
		if !p.next.Equal(shifted) || p.requeueAfter != shifted.Sub(now) {
			t.Errorf("at %s: next %s, requeueAfter %v; want %s, %v", now, p.next, p.requeueAfter, shifted, shifted.Sub(now))
		}
	}
	if got := w.sj.Status.NextScheduleTime; got == nil || !got.Time.Equal(shifted) {
		t.Errorf("nextScheduleTime = %v, want %s", got, shifted)
	}

	p := w.step(shifted)
	if !p.run.Equal(shifted) {
		t.Fatalf("at the shifted instant: run = %s, want %s", p.run, shifted)
	}
	if len(w.jobs) != 1 {
		t.Fatalf("%d Jobs, want 1", len(w.jobs))
	}
	j := w.jobs[0]
	if want := "report-" + fmtInt(shifted.Unix()/60); j.Name != want {
		t.Errorf("Job name %s, want %s (the shifted instant's minute)", j.Name, want)
	}
	if got, want := j.Annotations[batchv1alpha1.AnnotationScheduledTime], batchv1alpha1.FormatTime(shifted); got != want {
		t.Errorf("scheduled-time %s, want %s", got, want)
	}
	st := w.sj.Status
	if st.LastScheduleTime == nil || !st.LastScheduleTime.Time.Equal(shifted) {
		t.Errorf("lastScheduleTime = %v, want %s", st.LastScheduleTime, shifted)
	}
	if next := shifted.Add(24 * time.Hour); st.NextScheduleTime == nil || !st.NextScheduleTime.Time.Equal(next) {
		t.Errorf("nextScheduleTime = %v, want %s", st.NextScheduleTime, next)
	}
	// The slot ran: it does not run again, later that day or after its Job is gone.
	w.finish(shifted.Add(time.Second))
	if p := w.step(shifted.Add(time.Minute)); !p.run.IsZero() {
		t.Errorf("the slot ran again at %s", p.run)
	}
	w.jobs = nil
	if p := w.step(shifted.Add(2 * time.Minute)); !p.run.IsZero() {
		t.Errorf("the slot ran again, its Job gone, at %s", p.run)
	}
}

// TestSpreadDeadlineFromTheShiftedInstant: startingDeadlineSeconds counts from the shifted
// instant, not from the cron time.
func TestSpreadDeadlineFromTheShiftedInstant(t *testing.T) {
	off := offsetOf(t, 5*time.Minute)
	shifted := utc("2027-01-15T00:00:00Z").Add(off)
	for _, tt := range []struct {
		late    time.Duration
		run     bool
		missedR string
	}{
		{600 * time.Second, true, ""},
		{600*time.Second + 999*time.Millisecond, true, ""},
		{601 * time.Second, false, jobs.MissDeadline},
	} {
		sj := spreadSJ("0 0 * * *", "UTC", "5m", utc("2027-01-14T12:00:00Z"))
		sj.Spec.StartingDeadlineSeconds = ptr.To[int64](600)
		p := decideAt(sj, nil, nil, time.Time{}, shifted.Add(tt.late))
		if got := !p.run.IsZero(); got != tt.run {
			t.Errorf("%v after the shifted instant: run = %v, want %v", tt.late, got, tt.run)
		}
		if tt.run && !p.run.Equal(shifted) {
			t.Errorf("run = %s, want %s", p.run, shifted)
		}
		if tt.missedR != "" && (p.missed[tt.missedR] != 1 || !p.lastMissed.Equal(shifted)) {
			t.Errorf("%v late: missed %v, last %s; want 1 %s at %s", tt.late, p.missed, p.lastMissed, tt.missedR, shifted)
		}
	}
}

// TestSpreadAcrossDST: with the fake clock, days of runs across a spring-forward change and a
// spread longer than the time between slots: every run is its cron slot plus the offset, once,
// in order, and no slot is missed.
func TestSpreadAcrossDST(t *testing.T) {
	off := offsetOf(t, time.Hour)
	for _, tt := range []struct {
		name, schedule, zone string
		from, until          time.Time
		slots                []string // the cron slots, unshifted
	}{{
		name: "Berlin spring forward", schedule: "30 2 * * *", zone: "Europe/Berlin",
		from: utc("2027-03-26T12:00:00Z"), until: utc("2027-03-29T12:00:00Z"),
		slots: []string{"2027-03-27T01:30:00Z", "2027-03-28T01:00:00Z", "2027-03-29T00:30:00Z"},
	}, {
		name: "New York fall back", schedule: "30 1 * * *", zone: "America/New_York",
		from: utc("2027-11-05T12:00:00Z"), until: utc("2027-11-08T12:00:00Z"),
		slots: []string{"2027-11-06T05:30:00Z", "2027-11-07T05:30:00Z", "2027-11-08T06:30:00Z"},
	}, {
		name: "every 10 minutes, spread 1h", schedule: "*/10 * * * *", zone: "UTC",
		from: utc("2027-01-15T09:00:00Z"), until: utc("2027-01-15T10:00:00Z"),
		slots: []string{"2027-01-15T08:10:00Z", "2027-01-15T08:20:00Z", "2027-01-15T08:30:00Z", "2027-01-15T08:40:00Z", "2027-01-15T08:50:00Z",
			"2027-01-15T09:00:00Z", "2027-01-15T09:10:00Z", "2027-01-15T09:20:00Z", "2027-01-15T09:30:00Z"},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			w := &world{t: t, sj: spreadSJ(tt.schedule, tt.zone, "1h", tt.from)}
			w.sj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](100)
			w.run(tt.from, tt.until)
			var want, got []string
			for _, s := range tt.slots {
				if shifted := utc(s).Add(off); shifted.After(tt.from) && shifted.Before(tt.until) {
					want = append(want, batchv1alpha1.FormatTime(shifted))
				}
			}
			for _, s := range w.created {
				got = append(got, batchv1alpha1.FormatTime(s))
			}
			if diff := cmp.Diff(want, got); diff != "" || len(want) < 3 {
				t.Errorf("runs (-want +got):\n%s", diff)
			}
			if w.sj.Status.MissedRuns != 0 {
				t.Errorf("missedRuns = %d, want 0", w.sj.Status.MissedRuns)
			}
		})
	}
}

// TestSpreadChangeRunsNoSlotTwice: spread added, grown and shrunk after a slot ran: the slot
// that ran last never runs again at its new instant, and the next slot runs once, at its
// instant under the spread of the moment.
func TestSpreadChangeRunsNoSlotTwice(t *testing.T) {
	midnight := utc("2027-01-15T00:00:00Z")
	w := &world{t: t, sj: spreadSJ("0 0 * * *", "UTC", "", utc("2027-01-14T12:00:00Z"))}
	w.sj.Spec.StartingDeadlineSeconds = ptr.To[int64](3600)
	w.step(midnight)
	if len(w.created) != 1 {
		t.Fatalf("created %v, want midnight's Job", w.created)
	}
	for _, spread := range []string{"5m", "1h", "10s"} {
		w.sj.Spec.Spread = spread
		d, _ := time.ParseDuration(spread)
		off := timing.SpreadOffset("ns", "report", d)
		w.step(midnight.Add(off).Add(time.Second))
		if len(w.created) != 1 {
			t.Fatalf("spread %s (offset %s): created %v, the slot that ran ran again", spread, off, w.created)
		}
	}
	next := midnight.Add(24 * time.Hour).Add(timing.SpreadOffset("ns", "report", 10*time.Second))
	w.step(next)
	if diff := cmp.Diff([]time.Time{midnight, next}, w.created); diff != "" {
		t.Errorf("Jobs created (-want +got):\n%s", diff)
	}
	if w.sj.Status.MissedRuns != 0 {
		t.Errorf("missedRuns %d", w.sj.Status.MissedRuns)
	}
}
