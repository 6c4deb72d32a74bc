package jobs_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/api/scheme"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

// countWrites counts, from a watch, the writes of ScheduledJob name in ns (each a new
// resourceVersion): with its spec left alone, every one is a status write.
func countWrites(t *testing.T, ns, name string) *atomic.Int64 {
	t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(context.Background(), &batchv1alpha1.ScheduledJobList{}, client.InNamespace(ns),
		client.MatchingFields{"metadata.name": name}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: getSJ(t, ns, name).ResourceVersion}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	var n atomic.Int64
	go func() {
		for ev := range w.ResultChan() {
			if ev.Type == watch.Modified {
				n.Add(1)
			}
		}
	}()
	return &n
}

// eventsAbout counts the events.k8s.io Events about name in ns, each as often as it happened
// (a series counts each time).
func eventsAbout(t *testing.T, ns, name string) int {
	t.Helper()
	list := &eventsv1.EventList{}
	if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range list.Items {
		if e.Regarding.Name == name {
			n++
			if e.Series != nil {
				n += int(e.Series.Count) - 1
			}
		}
	}
	return n
}

// A week-long freeze (a skip Calendar's period) of an every-minute ScheduledJob, with time
// passing through it in two-hour steps: the reconciler is not woken at the 10,080 slots the
// freeze skips, and writes nothing and reports nothing until the first slot after it, which
// runs; that one look counts every skipped slot, in one status write and one RunSkipped event.
// Issue 38: it woke at each skipped slot, here once per step (84 status writes and 84 events;
// a month-long freeze cost about 43,000 of each per object).
func TestAWeekLongFreezeIsWrittenOnce(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	startManager(t, ns, clk, nil)
	ctx := context.Background()

	start := nextMinute(clk.Now(), 2*time.Minute).UTC()
	end := start.Add(7 * 24 * time.Hour)
	cal := &calendarv1alpha1.Calendar{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "freeze"},
		Spec: calendarv1alpha1.CalendarSpec{TimeZone: "UTC", Periods: []calendarv1alpha1.CalendarPeriod{
			{Start: start.Format("2006-01-02T15:04"), End: end.Format("2006-01-02T15:04"), Name: "Release freeze"}}},
	}
	sj := newSJ(ns, "every-minute")
	sj.Spec.Schedule = "* * * * *"
	sj.Spec.Calendars = &calendarv1alpha1.Calendars{Skip: []calendarv1alpha1.CalendarReference{{Name: "freeze"}}}
	for _, obj := range []client.Object{cal, sj} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the first status", func() (bool, error) {
		return getSJ(t, ns, sj.Name).Status.NextScheduleTime != nil, nil
	})
	// The slots before the freeze run, then the freeze starts: the next run is after it.
	clk.JumpTo(start.Add(-30 * time.Second))
	eventually(t, "the next run after the freeze", func() (bool, error) {
		next := getSJ(t, ns, sj.Name).Status.NextScheduleTime
		return next != nil && next.Time.Equal(end), nil
	})
	clk.JumpTo(clk.Now())
	time.Sleep(time.Second) // let the event broadcaster flush
	before := getSJ(t, ns, sj.Name).Status
	writes, events := countWrites(t, ns, sj.Name), eventsAbout(t, ns, sj.Name)

	for at := start.Add(2 * time.Hour); at.Before(end); at = at.Add(2 * time.Hour) {
		clk.JumpTo(at)
	}
	clk.JumpTo(end.Add(time.Second))
	eventually(t, "the first slot after the freeze run", func() (bool, error) {
		st := getSJ(t, ns, sj.Name).Status
		return st.LastScheduleTime != nil && st.LastScheduleTime.Time.Equal(end), nil
	})
	clk.JumpTo(clk.Now())
	time.Sleep(time.Second) // let the event broadcaster flush

	st := getSJ(t, ns, sj.Name).Status
	if got, want := st.SkippedRuns-before.SkippedRuns, int64(7*24*60); got != want || st.LastSkippedReason != "Release freeze (Calendar freeze)" {
		t.Errorf("skipped %d slots (%q), want %d", got, st.LastSkippedReason, want)
	}
	if st.MissedRuns != before.MissedRuns {
		t.Errorf("missedRuns %d → %d: a skipped slot is not missed", before.MissedRuns, st.MissedRuns)
	}
	if _, err := getJob(ns, batchv1alpha1.ScheduledJobName(sj.Name, end)); err != nil {
		t.Errorf("the first slot after the freeze: %v", err)
	}
	// The first slot after it: its status write and its Job's; its JobCreated and RunSkipped
	// events.
	const handful = 3
	t.Logf("across the freeze: %d status writes, %d events", writes.Load(), eventsAbout(t, ns, sj.Name)-events)
	if n := writes.Load(); n > handful {
		t.Errorf("%d status writes across the freeze, want at most %d", n, handful)
	}
	if n := eventsAbout(t, ns, sj.Name) - events; n > handful {
		t.Errorf("%d events across the freeze, want at most %d", n, handful)
	}
	if n := eventReasons(t, ns, sj.Name)[jobs.EventRunSkipped]; n != 1 {
		t.Errorf("%d RunSkipped events, want 1 for the whole freeze", n)
	}
}
