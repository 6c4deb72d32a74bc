package next

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
)

// TestEntries: the states that the envtest suite (test/plugin) does not show, from objects in
// memory.
func TestEntries(t *testing.T) {
	now := time.Date(2030, time.March, 4, 9, 30, 0, 0, time.UTC)
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: "shop", Name: name} }
	spa := func(name string) autoscalingv1alpha1.ScheduledPodAutoscaler {
		return autoscalingv1alpha1.ScheduledPodAutoscaler{ObjectMeta: meta(name), Spec: autoscalingv1alpha1.ScheduledPodAutoscalerSpec{
			HorizontalPodAutoscalerSpec: &autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: ptr.To[int32](2), MaxReplicas: 10},
		}}
	}
	daily := func(name, target, start, end string, minReplicas int32) autoscalingv1alpha1.Schedule {
		return autoscalingv1alpha1.Schedule{ObjectMeta: meta(name), Spec: autoscalingv1alpha1.ScheduleSpec{
			ScaleTargetRef: autoscalingv1alpha1.ScaleTargetReference{Name: target}, MinReplicas: ptr.To(minReplicas),
			Type: autoscalingv1alpha1.ScheduleTypeDaily, StartTime: start, EndTime: end, TimeZone: "UTC",
		}}
	}
	replace := batchv1alpha1.ScheduledJob{ObjectMeta: meta("replace"), Spec: batchv1alpha1.ScheduledJobSpec{Schedule: "0 * * * *", TimeZone: "UTC"}}
	replace.Spec.ConcurrencyPolicy = batchv1alpha1.ConcurrencyPolicyReplace
	replace.Status.Active = []corev1.ObjectReference{{Name: "replace-1"}, {Name: "replace-2"}}
	once := batchv1alpha1.ScheduledJob{ObjectMeta: meta("once"), Spec: batchv1alpha1.ScheduledJobSpec{At: "2030-03-04T08:00", TimeZone: "UTC"},
		Status: batchv1alpha1.ScheduledJobStatus{Phase: batchv1alpha1.ScheduledJobPhaseSucceeded}}
	later := batchv1alpha1.ScheduledJob{ObjectMeta: meta("later"), Spec: batchv1alpha1.ScheduledJobSpec{At: "2030-03-05T08:00", TimeZone: "Europe/Berlin"}}
	triggered := batchv1alpha1.EventJob{ObjectMeta: meta("triggered"), Spec: batchv1alpha1.EventJobSpec{
		Trigger: batchv1alpha1.Trigger{Kind: batchv1alpha1.TriggerKindJob, Name: "migrate", Type: batchv1alpha1.TriggerTypeAny}},
		Status: batchv1alpha1.EventJobStatus{LastTrigger: &batchv1alpha1.TriggerRecord{JobName: "migrate", Condition: "Complete"}}}
	waiting := batchv1alpha1.EventJob{ObjectMeta: meta("waiting"), Spec: batchv1alpha1.EventJobSpec{
		Trigger: batchv1alpha1.Trigger{Kind: batchv1alpha1.TriggerKindCronJob, Name: "backup", Type: batchv1alpha1.TriggerTypeFailed}}}
	paused := waiting
	paused.Name, paused.Spec.Suspend = "paused", true

	strict := spa("strict")
	strict.Spec.OverlapPolicy = autoscalingv1alpha1.OverlapPolicyForbid
	early, late := daily("early", "strict", "09:00", "12:00", 4), daily("late", "strict", "11:00", "13:00", 6)
	early.CreationTimestamp = metav1.NewTime(now.Add(-2 * time.Hour))
	late.CreationTimestamp = metav1.NewTime(now.Add(-time.Hour))

	objs := Objects{
		Autoscalers: []autoscalingv1alpha1.ScheduledPodAutoscaler{spa("chained"), spa("bare"), strict},
		// Two windows that touch with the same bounds: 10:00 changes nothing, 11:00 does.
		Schedules:     []autoscalingv1alpha1.Schedule{daily("first", "chained", "09:00", "10:00", 5), daily("second", "chained", "10:00", "11:00", 5), early, late},
		ScheduledJobs: []batchv1alpha1.ScheduledJob{replace, once, later},
		EventJobs:     []batchv1alpha1.EventJob{triggered, waiting, paused},
	}
	got := map[string]Entry{}
	for _, e := range Entries(context.Background(), objs, now) {
		got[e.Name] = e
	}
	check := func(name string, next time.Time, what string, reasons ...string) {
		t.Helper()
		e := got[name]
		if !e.Next.Equal(next) || e.What != what {
			t.Errorf("%s: next %s, what %q; want %s, %q", name, e.Next, e.What, next, what)
		}
		joined := strings.Join(e.Reasons, "; ")
		for _, r := range reasons {
			if !strings.Contains(joined, r) {
				t.Errorf("%s: the reasons lack %q: %s", name, r, joined)
			}
		}
	}
	check("chained", time.Date(2030, time.March, 4, 11, 0, 0, 0, time.UTC), "5-10 → 2-10", "Schedule second closes")
	if e := got["chained"]; len(e.Closes) != 1 || e.Closes[0] != "second" || len(e.Opens) != 0 || *e.From != (timing.Bounds{Min: 5, Max: 10}) {
		t.Errorf("chained: %+v", e)
	}
	// Under Forbid, late is left out: its windows overlap early's every day. 12:00 closes early,
	// and late, still left out, does not raise the bounds.
	check("strict", time.Date(2030, time.March, 4, 12, 0, 0, 0, time.UTC), "4-10 → 2-10", "Schedule early closes",
		"Schedule late is left out now (overlapPolicy Forbid: its windows overlap those of Schedule early, created earlier)")
	check("bare", time.Time{}, "-", "no windows ahead: it has no Schedules")
	check("replace", time.Date(2030, time.March, 4, 10, 0, 0, 0, time.UTC), "run", "concurrencyPolicy Replace: 2 Jobs run (replace-1, replace-2); the run deletes it first")
	check("once", time.Time{}, "-", "no run ahead: it runs once, at 2030-03-04 08:00 UTC, which has passed (phase Succeeded)")
	check("later", time.Date(2030, time.March, 5, 7, 0, 0, 0, time.UTC), "run", "its one run, at 2030-03-05T08:00")
	check("triggered", time.Time{}, "-", "Job migrate has started its run already (Complete): a Job triggers once")
	check("waiting", time.Time{}, "-", "waits until a Job of CronJob backup fails")
	check("paused", time.Time{}, "-", "suspended (spec.suspend)")
}

// TestEntriesBusinessDays: the next run of a business-day form is the slot the reconciler will
// run; one whose calendars close every business day has none, and the entry says why.
func TestEntriesBusinessDays(t *testing.T) {
	now := time.Date(2030, time.March, 4, 9, 30, 0, 0, time.UTC)
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: "shop", Name: name} }
	skip := &calendarv1alpha1.Calendars{Skip: []calendarv1alpha1.CalendarReference{{Name: "closed"}}}
	closeOfMonth := batchv1alpha1.ScheduledJob{ObjectMeta: meta("close"), Spec: batchv1alpha1.ScheduledJobSpec{Schedule: "0 18 LW * *", TimeZone: "Europe/Berlin"}}
	frozen := batchv1alpha1.ScheduledJob{ObjectMeta: meta("frozen"), Spec: batchv1alpha1.ScheduledJobSpec{Schedule: "0 18 LW * *", TimeZone: "Europe/Berlin", Calendars: skip}}
	closed := calendarv1alpha1.Calendar{ObjectMeta: meta("closed"), Spec: calendarv1alpha1.CalendarSpec{TimeZone: "UTC",
		Periods: []calendarv1alpha1.CalendarPeriod{{Start: "2020-01-01T00:00", End: "2045-01-01T00:00", Name: "closed"}}}}
	objs := Objects{
		ScheduledJobs: []batchv1alpha1.ScheduledJob{closeOfMonth, frozen},
		Books:         map[string]*calendarv1alpha1.Book{"shop": calendarv1alpha1.NewBook([]calendarv1alpha1.Calendar{closed}, nil)},
	}
	got := map[string]Entry{}
	for _, e := range Entries(context.Background(), objs, now) {
		got[e.Name] = e
	}
	// 2030-03-29 is a Friday; the 31st a Sunday.
	if e := got["close"]; !e.Next.Equal(time.Date(2030, time.March, 29, 17, 0, 0, 0, time.UTC)) ||
		!strings.Contains(strings.Join(e.Reasons, "; "), `the next slot of cron "0 18 LW * *" on business days Monday to Friday`) {
		t.Errorf("close: %+v", e)
	}
	want := `no run ahead: "0 18 LW * *" has no slot within eight years after 2030-03-04 10:30 Europe/Berlin: its business days (Monday to Friday, at 18:00) ` +
		`are all closed by Calendar closed, so its business-day forms find no day; check the calendars (spec.calendars) and the business days (spec.businessDays)`
	if e := got["frozen"]; !e.Next.IsZero() || len(e.Reasons) == 0 || e.Reasons[0] != want {
		t.Errorf("frozen: %+v, want the reason %q", e, want)
	}
}

// TestEntriesFanIn: what an EventJob with several triggers waits for: the rule of its sets,
// its open sets (newest first) with the runs they have and those they wait for, until when,
// what its sets came to, and the next run of each upstream ScheduledJob.
func TestEntriesFanIn(t *testing.T) {
	now := time.Date(2030, time.March, 4, 9, 30, 0, 0, time.UTC)
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: "shop", Name: name} }
	ej := batchv1alpha1.EventJob{ObjectMeta: meta("report"), Spec: batchv1alpha1.EventJobSpec{Triggers: []batchv1alpha1.Trigger{
		{Kind: batchv1alpha1.TriggerKindScheduledJob, Name: "a"}, {Kind: batchv1alpha1.TriggerKindScheduledJob, Name: "b"}, {Kind: batchv1alpha1.TriggerKindCronJob, Name: "c"},
	}, FanIn: &batchv1alpha1.FanIn{HorizonSeconds: ptr.To(int64(3600))}}}
	slot := func(h int) metav1.Time { return metav1.NewTime(time.Date(2030, time.March, 4, h, 0, 0, 0, time.UTC)) }
	ej.Status.FanIn = &batchv1alpha1.FanInStatus{FailedSets: 1, ExpiredSets: 2, Sets: []batchv1alpha1.FanInSet{
		{Key: "2030-03-04T08:00:00Z", Time: slot(8), Decision: batchv1alpha1.FanInStarted},
		{Key: "2030-03-04T09:00:00Z", Time: slot(9), Members: []batchv1alpha1.FanInMember{
			{Trigger: 0, JobName: "a-1", Condition: "Complete"}, {Trigger: 2, JobName: "c-1", Condition: "Complete"}}},
	}}
	a := batchv1alpha1.ScheduledJob{ObjectMeta: meta("a"), Spec: batchv1alpha1.ScheduledJobSpec{Schedule: "0 * * * *", TimeZone: "UTC"}}
	got := Entries(context.Background(), Objects{ScheduledJobs: []batchv1alpha1.ScheduledJob{a}, EventJobs: []batchv1alpha1.EventJob{ej}}, now)
	var e Entry
	for _, x := range got {
		if x.Name == "report" {
			e = x
		}
	}
	want := []string{
		"waits until each of ScheduledJob a, ScheduledJob b and CronJob c has a Job that completed, for the same slot (a set waits 3600 s after its slot; a Job that ended otherwise skips its set)",
		"the set of slot 2030-03-04 09:00 UTC has a-1 (Complete), c-1 (Complete); it waits for ScheduledJob b until 2030-03-04 10:00 UTC (in 30m)",
		"so far 1 sets started no run because an upstream Job failed, 2 because they expired",
		"ScheduledJob a runs next at 2030-03-04 10:00 UTC (in 30m)",
	}
	if diff := cmp.Diff(want, e.Reasons); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
}
