package scaling

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
)

const ns = "default"

func autoscaler(minReplicas, maxReplicas int32) *autoscalingv1alpha1.ScheduledPodAutoscaler {
	return &autoscalingv1alpha1.ScheduledPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: autoscalingv1alpha1.ScheduledPodAutoscalerSpec{
			HorizontalPodAutoscalerSpec: &autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
				MinReplicas:    ptr.To(minReplicas),
				MaxReplicas:    maxReplicas,
			},
		},
	}
}

// schedule returns a Schedule of the autoscaler "web"; minReplicas or maxReplicas 0 means
// omitted.
func schedule(name string, minReplicas, maxReplicas int32, spec autoscalingv1alpha1.ScheduleSpec) autoscalingv1alpha1.Schedule {
	spec.ScaleTargetRef = autoscalingv1alpha1.ScaleTargetReference{Name: "web"}
	if minReplicas != 0 {
		spec.MinReplicas = ptr.To(minReplicas)
	}
	if maxReplicas != 0 {
		spec.MaxReplicas = ptr.To(maxReplicas)
	}
	return autoscalingv1alpha1.Schedule{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
}

func daily(start, end, zone string) autoscalingv1alpha1.ScheduleSpec {
	return autoscalingv1alpha1.ScheduleSpec{Type: autoscalingv1alpha1.ScheduleTypeDaily, StartTime: start, EndTime: end, TimeZone: zone}
}

func instant(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return at.UTC()
}

// simulate runs the reconciler's decision loop with a fake clock from `from` until `to`: at
// each wake-up it computes the desired state, records it, and sleeps for exactly the
// RequeueAfter it would return. The steps are therefore also the list of every wake-up: a
// reconciler that polled would show steps where nothing changed.
func simulate(t *testing.T, spa *autoscalingv1alpha1.ScheduledPodAutoscaler, schedules []autoscalingv1alpha1.Schedule, from, to string) []string {
	t.Helper()
	clk := clocktesting.NewFakeClock(instant(t, from))
	end := instant(t, to)
	var steps []string
	for i := 0; ; i++ {
		if i > 1000 {
			t.Fatal("more than 1000 wake-ups: the reconciler is polling")
		}
		d := compute(t, spa, schedules, clk.Now())
		steps = append(steps, fmt.Sprintf("%s %d-%d %v", clk.Now().UTC().Format(time.RFC3339), d.Bounds.Min, d.Bounds.Max, d.Active))
		if d.Next.IsZero() || !d.Next.Before(end) {
			return steps
		}
		if !d.Next.After(clk.Now()) {
			t.Fatalf("at %s the next transition %s is not in the future", clk.Now(), d.Next)
		}
		clk.Step(d.Next.Sub(clk.Now()))
	}
}

func diff(t *testing.T, want, got []string) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
}

func TestWeekDaily(t *testing.T) {
	// 09:00–17:00 in Tokyo (UTC+9, no DST) is 00:00–08:00 UTC, every day.
	s := schedule("office", 5, 20, daily("09:00", "17:00", "Asia/Tokyo"))
	var want []string
	for day := 1; day <= 7; day++ {
		want = append(want,
			fmt.Sprintf("2027-03-%02dT00:00:00Z 5-20 [office]", day),
			fmt.Sprintf("2027-03-%02dT08:00:00Z 2-10 []", day))
	}
	diff(t, want, simulate(t, autoscaler(2, 10), []autoscalingv1alpha1.Schedule{s}, "2027-03-01T00:00:00Z", "2027-03-08T00:00:00Z"))
}

// TestWeekDailyOnWeekdays: daysOfWeek reaches the desired state through
// ScheduleSpec.Timing(), the one place a Schedule becomes a timing.Spec (issue 12 added the
// field to two such conversions). 2027-03-01 is a Monday; 22:00-02:00 in Tokyo crosses
// midnight and belongs to the day it opens, so Friday's window ends on Saturday and none opens
// on Saturday or Sunday.
func TestWeekDailyOnWeekdays(t *testing.T) {
	spec := daily("22:00", "02:00", "Asia/Tokyo")
	spec.DaysOfWeek = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"}
	s := schedule("nightly", 5, 20, spec)
	var want []string
	for day := 1; day <= 5; day++ { // 22:00 JST is 13:00Z the same day; 02:00 JST is 17:00Z
		want = append(want,
			fmt.Sprintf("2027-03-%02dT13:00:00Z 5-20 [nightly]", day),
			fmt.Sprintf("2027-03-%02dT17:00:00Z 2-10 []", day))
	}
	want = append(want, "2027-03-08T13:00:00Z 5-20 [nightly]")
	diff(t, append([]string{"2027-03-01T00:00:00Z 2-10 []"}, want...),
		simulate(t, autoscaler(2, 10), []autoscalingv1alpha1.Schedule{s}, "2027-03-01T00:00:00Z", "2027-03-08T14:00:00Z"))
}

func TestWeekWeeklyAcrossEuropeanDST(t *testing.T) {
	// Friday 18:00 to Monday 08:00 in Berlin. The weekend of 2027-03-27/28 switches from CET
	// (UTC+1) to CEST (UTC+2): the window opens at 17:00Z and closes at 06:00Z.
	s := schedule("weekend", 1, 4, autoscalingv1alpha1.ScheduleSpec{
		Type: autoscalingv1alpha1.ScheduleTypeWeekly, StartDayOfWeek: "Friday", StartTime: "18:00",
		EndDayOfWeek: "Monday", EndTime: "08:00", TimeZone: "Europe/Berlin",
	})
	diff(t, []string{
		"2027-03-22T00:00:00Z 1-4 [weekend]", // still the weekend of 19–22 March
		"2027-03-22T07:00:00Z 2-10 []",
		"2027-03-26T17:00:00Z 1-4 [weekend]",
		"2027-03-29T06:00:00Z 2-10 []",
	}, simulate(t, autoscaler(2, 10), []autoscalingv1alpha1.Schedule{s}, "2027-03-22T00:00:00Z", "2027-03-29T12:00:00Z"))
}

func TestWeekOneShot(t *testing.T) {
	// 10:00–18:30 New York time (EST, UTC-5) on Wednesday; afterwards nothing is due, so
	// the reconciler does not wake up again.
	s := schedule("launch", 15, 40, autoscalingv1alpha1.ScheduleSpec{
		Type: autoscalingv1alpha1.ScheduleTypeOneShot, StartTime: "2027-03-03T10:00", EndTime: "2027-03-03T18:30", TimeZone: "America/New_York",
	})
	diff(t, []string{
		"2027-03-01T00:00:00Z 2-10 []",
		"2027-03-03T15:00:00Z 15-40 [launch]",
		"2027-03-03T23:30:00Z 2-10 []",
	}, simulate(t, autoscaler(2, 10), []autoscalingv1alpha1.Schedule{s}, "2027-03-01T00:00:00Z", "2027-03-08T00:00:00Z"))
}

func TestWeekCronAcrossAmericanDST(t *testing.T) {
	// 02:00 New York time for 2 hours. 2027-03-14 02:00 does not exist (clocks jump from
	// 02:00 EST to 03:00 EDT): that day the window opens at the jump, 07:00Z, and still
	// lasts 2 hours. Before: 07:00Z–09:00Z; after: 06:00Z–08:00Z.
	s := schedule("nightly", 3, 0, autoscalingv1alpha1.ScheduleSpec{
		Type: autoscalingv1alpha1.ScheduleTypeCron, Schedule: "0 2 * * *", Duration: "2h", TimeZone: "America/New_York",
	})
	want := []string{"2027-03-10T00:00:00Z 2-10 []"}
	for _, w := range []struct {
		day        int
		start, end string
	}{{10, "07", "09"}, {11, "07", "09"}, {12, "07", "09"}, {13, "07", "09"}, {14, "07", "09"}, {15, "06", "08"}, {16, "06", "08"}} {
		want = append(want,
			fmt.Sprintf("2027-03-%02dT%s:00:00Z 3-10 [nightly]", w.day, w.start),
			fmt.Sprintf("2027-03-%02dT%s:00:00Z 2-10 []", w.day, w.end))
	}
	diff(t, want, simulate(t, autoscaler(2, 10), []autoscalingv1alpha1.Schedule{s}, "2027-03-10T00:00:00Z", "2027-03-17T00:00:00Z"))
}

func TestOverlaps(t *testing.T) {
	schedules := []autoscalingv1alpha1.Schedule{
		schedule("a-min-only", 5, 0, daily("08:00", "12:00", "UTC")),
		schedule("b-max-only", 0, 20, daily("10:00", "14:00", "UTC")),
		schedule("c-high-min", 15, 0, daily("11:00", "11:30", "UTC")),
		schedule("e-low-max", 0, 1, daily("16:00", "17:00", "UTC")),
		schedule("f-min", 15, 0, daily("18:00", "19:00", "UTC")),
		schedule("g-max", 0, 12, daily("18:00", "19:00", "UTC")),
	}
	diff(t, []string{
		"2027-03-01T00:00:00Z 2-10 []",
		"2027-03-01T08:00:00Z 5-10 [a-min-only]",                        // omitted max: the baseline's 10
		"2027-03-01T10:00:00Z 5-20 [a-min-only b-max-only]",             // max of min, max of max
		"2027-03-01T11:00:00Z 15-20 [a-min-only b-max-only c-high-min]", // c's omitted max (10) loses to b's 20
		"2027-03-01T11:30:00Z 5-20 [a-min-only b-max-only]",
		"2027-03-01T12:00:00Z 2-20 [b-max-only]", // omitted min: the baseline's 2
		"2027-03-01T14:00:00Z 2-10 []",
		"2027-03-01T16:00:00Z 2-2 [e-low-max]", // max 1 < baseline min 2: max raised to 2
		"2027-03-01T17:00:00Z 2-10 []",
		"2027-03-01T18:00:00Z 15-15 [f-min g-max]", // min 15 > max 12: max raised to 15
		"2027-03-01T19:00:00Z 2-10 []",
	}, simulate(t, autoscaler(2, 10), schedules, "2027-03-01T00:00:00Z", "2027-03-02T00:00:00Z"))
}

func TestDSTDaysInTwoZones(t *testing.T) {
	tests := []struct {
		name     string
		schedule autoscalingv1alpha1.Schedule
		from, to string
		want     []string
	}{{
		// 2027-03-14: New York skips 02:00–03:00. 02:30 resolves to 03:00 EDT (07:00Z).
		name:     "New York spring forward, start in the gap",
		schedule: schedule("s", 4, 0, daily("02:30", "03:30", "America/New_York")),
		from:     "2027-03-13T00:00:00Z", to: "2027-03-16T00:00:00Z",
		want: []string{
			"2027-03-13T00:00:00Z 2-10 []",
			"2027-03-13T07:30:00Z 4-10 [s]", "2027-03-13T08:30:00Z 2-10 []", // EST
			"2027-03-14T07:00:00Z 4-10 [s]", "2027-03-14T07:30:00Z 2-10 []", // half an hour only
			"2027-03-15T06:30:00Z 4-10 [s]", "2027-03-15T07:30:00Z 2-10 []", // EDT
		},
	}, {
		// 2027-11-07: New York repeats 01:00–02:00. 01:30 is its first occurrence (EDT,
		// 05:30Z); 02:30 happens once, in EST (07:30Z): that day the window lasts 2 hours.
		name:     "New York fall back, start in the repeat",
		schedule: schedule("s", 4, 0, daily("01:30", "02:30", "America/New_York")),
		from:     "2027-11-06T00:00:00Z", to: "2027-11-09T00:00:00Z",
		want: []string{
			"2027-11-06T00:00:00Z 2-10 []",
			"2027-11-06T05:30:00Z 4-10 [s]", "2027-11-06T06:30:00Z 2-10 []",
			"2027-11-07T05:30:00Z 4-10 [s]", "2027-11-07T07:30:00Z 2-10 []",
			"2027-11-08T06:30:00Z 4-10 [s]", "2027-11-08T07:30:00Z 2-10 []",
		},
	}, {
		// 2027-03-28: Berlin skips 02:00–03:00 (01:00Z). 02:30 resolves to 03:00 CEST.
		name:     "Berlin spring forward, start in the gap",
		schedule: schedule("s", 4, 0, daily("02:30", "03:30", "Europe/Berlin")),
		from:     "2027-03-27T00:00:00Z", to: "2027-03-30T00:00:00Z",
		want: []string{
			"2027-03-27T00:00:00Z 2-10 []",
			"2027-03-27T01:30:00Z 4-10 [s]", "2027-03-27T02:30:00Z 2-10 []", // CET
			"2027-03-28T01:00:00Z 4-10 [s]", "2027-03-28T01:30:00Z 2-10 []",
			"2027-03-29T00:30:00Z 4-10 [s]", "2027-03-29T01:30:00Z 2-10 []", // CEST
		},
	}, {
		// 2027-10-31: Berlin repeats 02:00–03:00. Both ends are in the repeat and resolve to
		// their first occurrence (CEST).
		name:     "Berlin fall back, both ends in the repeat",
		schedule: schedule("s", 4, 0, daily("02:00", "02:30", "Europe/Berlin")),
		from:     "2027-10-30T00:00:00Z", to: "2027-11-02T00:00:00Z",
		want: []string{
			"2027-10-30T00:00:00Z 4-10 [s]", "2027-10-30T00:30:00Z 2-10 []",
			"2027-10-31T00:00:00Z 4-10 [s]", "2027-10-31T00:30:00Z 2-10 []",
			"2027-11-01T01:00:00Z 4-10 [s]", "2027-11-01T01:30:00Z 2-10 []", // CET
		},
	}, {
		// The end falls into the gap: 02:30 resolves to 03:00 EDT (07:00Z). The window is
		// half an hour that day; it is not lost, and it does not run on until the next end.
		name:     "New York spring forward, end in the gap",
		schedule: schedule("s", 4, 0, daily("01:30", "02:30", "America/New_York")),
		from:     "2027-03-13T00:00:00Z", to: "2027-03-16T00:00:00Z",
		want: []string{
			"2027-03-13T00:00:00Z 2-10 []",
			"2027-03-13T06:30:00Z 4-10 [s]", "2027-03-13T07:30:00Z 2-10 []", // EST
			"2027-03-14T06:30:00Z 4-10 [s]", "2027-03-14T07:00:00Z 2-10 []", // 01:30 EST to the jump
			"2027-03-15T05:30:00Z 4-10 [s]", "2027-03-15T06:30:00Z 2-10 []", // EDT
		},
	}, {
		// A window whose start and end both fall into the gap is empty that day.
		name:     "New York, window inside the gap",
		schedule: schedule("s", 4, 0, daily("02:10", "02:50", "America/New_York")),
		from:     "2027-03-13T12:00:00Z", to: "2027-03-15T12:00:00Z",
		want: []string{
			"2027-03-13T12:00:00Z 2-10 []",
			"2027-03-15T06:10:00Z 4-10 [s]", "2027-03-15T06:50:00Z 2-10 []",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diff(t, tt.want, simulate(t, autoscaler(2, 10), []autoscalingv1alpha1.Schedule{tt.schedule}, tt.from, tt.to))
		})
	}
}

func TestSuspend(t *testing.T) {
	open := schedule("open", 5, 20, daily("00:00", "23:00", "UTC"))
	now := instant(t, "2027-03-01T12:00:00Z")

	t.Run("suspended autoscaler is held at the baseline and never wakes up", func(t *testing.T) {
		spa := autoscaler(2, 10)
		spa.Spec.Suspend = true
		d := compute(t, spa, []autoscalingv1alpha1.Schedule{open}, now)
		want := Desired{Baseline: Baseline(spa), Bounds: Baseline(spa), Suspended: true}
		if diff := cmp.Diff(want, d, cmpopts.IgnoreUnexported(Desired{})); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("suspended Schedule is ignored, and so are its boundaries", func(t *testing.T) {
		s := open
		s.Spec.Suspend = true
		other := schedule("other", 3, 0, daily("13:00", "14:00", "UTC"))
		d := compute(t, autoscaler(2, 10), []autoscalingv1alpha1.Schedule{s, other}, now)
		if d.Bounds.Min != 2 || d.Bounds.Max != 10 || len(d.Active) != 0 {
			t.Errorf("bounds %v active %v, want the baseline 2-10 and no active Schedule", d.Bounds, d.Active)
		}
		if want := instant(t, "2027-03-01T13:00:00Z"); !d.Next.Equal(want) {
			t.Errorf("next transition %s, want %s (the suspended Schedule's end at 23:00 is not one)", d.Next, want)
		}
	})
}

func TestBrokenScheduleBesideGoodOnes(t *testing.T) {
	schedules := []autoscalingv1alpha1.Schedule{
		schedule("good", 5, 20, daily("09:00", "17:00", "UTC")),
		schedule("bad-zone", 50, 100, daily("09:00", "17:00", "Mars/Olympus_Mons")),
		schedule("bad-cron", 50, 100, autoscalingv1alpha1.ScheduleSpec{Type: autoscalingv1alpha1.ScheduleTypeCron, Schedule: "@every 5m", Duration: "1h"}),
		schedule("also-good", 0, 30, daily("10:00", "11:00", "UTC")),
	}
	d := compute(t, autoscaler(2, 10), schedules, instant(t, "2027-03-01T10:30:00Z"))
	if d.Bounds.Min != 5 || d.Bounds.Max != 30 {
		t.Errorf("bounds %v, want 5-30 from the two valid Schedules", d.Bounds)
	}
	if diff := cmp.Diff([]string{"also-good", "good"}, d.Active); diff != "" {
		t.Errorf("active (-want +got):\n%s", diff)
	}
	if want := instant(t, "2027-03-01T11:00:00Z"); !d.Next.Equal(want) {
		t.Errorf("next %s, want %s", d.Next, want)
	}
	var names []string
	for _, inv := range d.Invalid {
		names = append(names, inv.Name)
	}
	if diff := cmp.Diff([]string{"bad-cron", "bad-zone"}, names); diff != "" {
		t.Errorf("invalid (-want +got):\n%s", diff)
	}
	for _, inv := range d.Invalid {
		field := map[string]string{"bad-zone": "spec.timeZone: ", "bad-cron": "spec.schedule: "}[inv.Name]
		if !strings.HasPrefix(inv.Message, field) {
			t.Errorf("message for %s = %q, want it to start with %q", inv.Name, inv.Message, field)
		}
	}
}

func TestSchedulesOfOtherAutoscalersAreIgnored(t *testing.T) {
	other := schedule("other", 50, 100, daily("00:00", "23:00", "UTC"))
	other.Spec.ScaleTargetRef.Name = "api"
	elsewhere := schedule("elsewhere", 50, 100, daily("00:00", "23:00", "UTC"))
	elsewhere.Namespace = "other"
	d := compute(t, autoscaler(2, 10), []autoscalingv1alpha1.Schedule{other, elsewhere}, instant(t, "2027-03-01T12:00:00Z"))
	if d.Bounds != Baseline(autoscaler(2, 10)) || !d.Next.IsZero() {
		t.Errorf("got %+v, want the baseline and no transition", d)
	}
}

// A Schedule held by someone's finalizer after `kubectl delete` changes nothing: not the
// bounds, not the next transition, not the timeline, not the overlaps of the others.
func TestTerminatingScheduleChangesNothing(t *testing.T) {
	deleted := schedule("black-friday", 50, 100, daily("00:00", "23:00", "UTC"))
	deleted.DeletionTimestamp = ptr.To(metav1.NewTime(instant(t, "2027-03-01T11:59:00Z")))
	deleted.Finalizers = []string{"example.com/hold"}
	later := schedule("later", 3, 0, daily("10:00", "13:00", "UTC"))
	spa := autoscaler(2, 10)
	spa.Spec.OverlapPolicy = autoscalingv1alpha1.OverlapPolicyForbid
	now := instant(t, "2027-03-01T12:00:00Z")
	d := compute(t, spa, []autoscalingv1alpha1.Schedule{deleted, later}, now)
	if d.Bounds.Min != 3 || d.Bounds.Max != 10 || !slices.Equal(d.Active, []string{"later"}) || len(d.LeftOut) != 0 {
		t.Errorf("bounds %v, active %v, left out %v; want 3-10 from Schedule later alone, nothing left out", d.Bounds, d.Active, d.LeftOut)
	}
	if want := instant(t, "2027-03-01T13:00:00Z"); !d.Next.Equal(want) {
		t.Errorf("next transition %s, want %s (the deleted Schedule's end at 23:00 is not one)", d.Next, want)
	}
	if named := Named(spa, []autoscalingv1alpha1.Schedule{deleted}, nil, nil); len(named) != 0 {
		t.Errorf("Named compiles the deleted Schedule: %v", named)
	}
	segs, err := Timeline(timing.NewBudget(context.Background(), 1000), spa, []autoscalingv1alpha1.Schedule{deleted}, nil, now, now.Add(48*time.Hour), nil)
	if err != nil || len(segs) != 1 || segs[0].Bounds != Baseline(spa) {
		t.Errorf("timeline %v (%v), want the baseline throughout", segs, err)
	}
	if InEffect(&deleted) || !InEffect(&later) {
		t.Errorf("InEffect: %v for the deleted Schedule, %v for the other", InEffect(&deleted), InEffect(&later))
	}
}

func TestBaselineDefaultsMinReplicasToOne(t *testing.T) {
	spa := autoscaler(2, 10)
	spa.Spec.HorizontalPodAutoscalerSpec.MinReplicas = nil
	if b := Baseline(spa); b.Min != 1 || b.Max != 10 {
		t.Errorf("Baseline = %+v, want 1-10", b)
	}
}

func TestBoundarySince(t *testing.T) {
	schedules := []autoscalingv1alpha1.Schedule{
		schedule("a", 5, 0, daily("08:00", "12:00", "UTC")),
		schedule("b", 3, 0, daily("09:00", "10:00", "UTC")), // changes the active set, not the bounds
	}
	spa := autoscaler(2, 10)
	now := instant(t, "2027-03-01T09:30:00Z")
	d := compute(t, spa, schedules, now)
	tests := []struct{ since, want string }{
		{"2027-03-01T07:00:00Z", "2027-03-01T08:00:00Z"}, // the bounds changed at 08:00; b's start at 09:00 did not change them
		{"2027-03-01T08:00:00Z", "2027-03-01T08:00:00Z"},
		{"2027-03-01T08:30:00Z", "2027-03-01T08:30:00Z"}, // nothing changed after since
	}
	for _, tt := range tests {
		if got := d.BoundarySince(instant(t, tt.since), now); !got.Equal(instant(t, tt.want)) {
			t.Errorf("BoundarySince(%s) = %s, want %s", tt.since, got, tt.want)
		}
	}
}

func TestCompileNamesFieldPaths(t *testing.T) {
	s := schedule("s", 1, 0, daily("25:00", "09:00", "utc"))
	_, err := Compile(&s, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "spec.startTime: ") {
		t.Errorf("Compile error = %v, want one naming spec.startTime", err)
	}
}

func TestWeekdayIsTakenInTheSchedulesZone(t *testing.T) {
	// Monday 07:00–08:00 in Tokyo is Sunday 22:00–23:00 UTC: the day of the week is the
	// Schedule's own, not UTC's.
	s := schedule("tokyo-monday", 6, 0, autoscalingv1alpha1.ScheduleSpec{
		Type: autoscalingv1alpha1.ScheduleTypeWeekly, StartDayOfWeek: "Monday", StartTime: "07:00",
		EndDayOfWeek: "Monday", EndTime: "08:00", TimeZone: "Asia/Tokyo",
	})
	diff(t, []string{
		"2027-03-01T00:00:00Z 2-10 []", // a Monday in UTC, and already Monday 09:00 in Tokyo
		"2027-03-07T22:00:00Z 6-10 [tokyo-monday]",
		"2027-03-07T23:00:00Z 2-10 []",
	}, simulate(t, autoscaler(2, 10), []autoscalingv1alpha1.Schedule{s}, "2027-03-01T00:00:00Z", "2027-03-08T12:00:00Z"))
}

func TestWindowsAcrossMidnightMonthAndYear(t *testing.T) {
	// 22:00–02:00 in Berlin (CET, UTC+1): each window crosses midnight, and the dates cross
	// a year end and, in 2028, a 29 February. Hand-rolled comparisons of hours, days or
	// months get these wrong.
	s := schedule("night", 3, 0, daily("22:00", "02:00", "Europe/Berlin"))
	diff(t, []string{
		"2027-12-30T12:00:00Z 2-10 []",
		"2027-12-30T21:00:00Z 3-10 [night]", "2027-12-31T01:00:00Z 2-10 []",
		"2027-12-31T21:00:00Z 3-10 [night]", "2028-01-01T01:00:00Z 2-10 []",
		"2028-01-01T21:00:00Z 3-10 [night]", "2028-01-02T01:00:00Z 2-10 []",
	}, simulate(t, autoscaler(2, 10), []autoscalingv1alpha1.Schedule{s}, "2027-12-30T12:00:00Z", "2028-01-02T12:00:00Z"))
	diff(t, []string{
		"2028-02-28T12:00:00Z 2-10 []",
		"2028-02-28T21:00:00Z 3-10 [night]", "2028-02-29T01:00:00Z 2-10 []",
		"2028-02-29T21:00:00Z 3-10 [night]", "2028-03-01T01:00:00Z 2-10 []",
	}, simulate(t, autoscaler(2, 10), []autoscalingv1alpha1.Schedule{s}, "2028-02-28T12:00:00Z", "2028-03-01T12:00:00Z"))
}

// TestTheProcessTimeZoneIsIgnored: a TZ of the process (time.Local) changes nothing; every
// Schedule is read in its own zone. Not parallel: it changes time.Local.
func TestTheProcessTimeZoneIsIgnored(t *testing.T) {
	schedules := []autoscalingv1alpha1.Schedule{
		schedule("utc-default", 4, 0, daily("09:00", "17:00", "")), // the default zone is UTC, not Local
		schedule("tokyo", 0, 20, daily("09:00", "17:00", "Asia/Tokyo")),
	}
	run := func() []string {
		return simulate(t, autoscaler(2, 10), schedules, "2027-03-01T00:00:00Z", "2027-03-02T00:00:00Z")
	}
	want := []string{
		"2027-03-01T00:00:00Z 2-20 [tokyo]",
		"2027-03-01T08:00:00Z 2-10 []",
		"2027-03-01T09:00:00Z 4-10 [utc-default]",
		"2027-03-01T17:00:00Z 2-10 []",
	}
	diff(t, want, run())
	kiritimati, err := time.LoadLocation("Pacific/Kiritimati") // UTC+14
	if err != nil {
		t.Fatal(err)
	}
	saved := time.Local
	t.Cleanup(func() { time.Local = saved })
	time.Local = kiritimati
	diff(t, want, run())
}

// TestForbidLeavesOutTheLaterOfOverlappingSchedules is the reconciler's safety net behind
// admission: under overlapPolicy Forbid, Schedules that overlap anyway (admission reads a
// cache, and two created at the same moment can both pass) are resolved by creation time,
// then name; the later one is left out of the bounds. Issue 11, finding 3: the autoscaler
// silently got Max semantics.
func TestForbidLeavesOutTheLaterOfOverlappingSchedules(t *testing.T) {
	created := func(s autoscalingv1alpha1.Schedule, at string) autoscalingv1alpha1.Schedule {
		s.CreationTimestamp = metav1.NewTime(instant(t, at))
		return s
	}
	spa := autoscaler(2, 10)
	spa.Spec.OverlapPolicy = autoscalingv1alpha1.OverlapPolicyForbid
	schedules := []autoscalingv1alpha1.Schedule{
		created(schedule("b-late", 20, 30, daily("10:00", "12:00", "UTC")), "2027-01-01T00:00:01Z"),
		created(schedule("a-early", 5, 8, daily("09:00", "11:00", "UTC")), "2027-01-01T00:00:00Z"),
		created(schedule("c-same-time", 6, 9, daily("10:30", "11:30", "UTC")), "2027-01-01T00:00:01Z"),
		created(schedule("d-apart", 3, 4, daily("13:00", "14:00", "UTC")), "2027-01-01T00:00:02Z"),
	}
	now := instant(t, "2027-03-01T10:30:00Z")
	d := compute(t, spa, schedules, now)
	if diff := cmp.Diff([]string{"a-early"}, d.Active); diff != "" {
		t.Errorf("active (-want +got):\n%s", diff)
	}
	if d.Bounds != (timing.Bounds{Min: 5, Max: 8}) {
		t.Errorf("bounds %v, want a-early's 5-8 only", d.Bounds)
	}
	var got []string
	for _, l := range d.LeftOut {
		got = append(got, l.Name+" overlaps "+l.Kept+" at "+l.Overlap.Start.Format(time.RFC3339))
	}
	want := []string{
		"b-late overlaps a-early at 2027-03-01T10:00:00Z",      // the overlap already under way counts
		"c-same-time overlaps a-early at 2027-03-01T10:30:00Z", // a tie on creation time goes by name: b-late, then c-same-time
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("left out (-want +got):\n%s", diff)
	}
	// The boundaries of left-out Schedules still wake the reconciler.
	if want := instant(t, "2027-03-01T11:00:00Z"); !d.Next.Equal(want) {
		t.Errorf("next %s, want %s", d.Next, want)
	}

	// Under Max the same Schedules combine.
	spa.Spec.OverlapPolicy = autoscalingv1alpha1.OverlapPolicyMax
	if d := compute(t, spa, schedules, now); len(d.LeftOut) != 0 || d.Bounds != (timing.Bounds{Min: 20, Max: 30}) {
		t.Errorf("Max: left out %v, bounds %v; want none and 20-30", d.LeftOut, d.Bounds)
	}

	// A suspended Schedule is never active, so it keeps nothing out.
	spa.Spec.OverlapPolicy = autoscalingv1alpha1.OverlapPolicyForbid
	suspended := slices.Clone(schedules)
	suspended[1].Spec.Suspend = true
	if d := compute(t, spa, suspended, now); len(d.LeftOut) != 1 || d.LeftOut[0].Name != "c-same-time" || d.LeftOut[0].Kept != "b-late" {
		t.Errorf("with a-early suspended: left out %+v, want c-same-time (kept: b-late)", d.LeftOut)
	}
}

// TestForbidTimelineResolvesAtEachBoundary: preview's timeline resolves Forbid again at every
// boundary, as the reconciler does when it wakes there: a OneShot that overlaps a Daily
// Schedule created earlier is left out until the overlap is over.
func TestForbidTimelineResolvesAtEachBoundary(t *testing.T) {
	spa := autoscaler(2, 10)
	spa.Spec.OverlapPolicy = autoscalingv1alpha1.OverlapPolicyForbid
	daily := schedule("daily", 5, 0, daily("09:00", "11:00", "UTC"))
	daily.CreationTimestamp = metav1.NewTime(instant(t, "2027-01-01T00:00:00Z"))
	launch := schedule("launch", 20, 30, autoscalingv1alpha1.ScheduleSpec{Type: autoscalingv1alpha1.ScheduleTypeOneShot, StartTime: "2027-03-01T10:00", EndTime: "2027-03-01T12:00", TimeZone: "UTC"})
	launch.CreationTimestamp = metav1.NewTime(instant(t, "2027-02-01T00:00:00Z"))
	schedules := []autoscalingv1alpha1.Schedule{daily, launch}
	var got []string
	for _, seg := range timeline(t, spa, schedules, instant(t, "2027-03-01T08:00:00Z"), instant(t, "2027-03-01T13:00:00Z"), nil) {
		got = append(got, fmt.Sprintf("%s %d-%d %v", seg.Start.Format("15:04"), seg.Bounds.Min, seg.Bounds.Max, seg.Active))
	}
	want := []string{
		"08:00 2-10 []",
		"09:00 5-10 [daily]",
		"11:00 20-30 [launch]", // the overlap (10:00-11:00) is over: launch is no longer left out
		"12:00 2-10 []",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
	// The reconciler agrees at each instant.
	if d := compute(t, spa, schedules, instant(t, "2027-03-01T10:30:00Z")); d.Bounds != (timing.Bounds{Min: 5, Max: 10}) {
		t.Errorf("at 10:30: bounds %v, want daily's 5-10", d.Bounds)
	}
	if d := compute(t, spa, schedules, instant(t, "2027-03-01T11:30:00Z")); d.Bounds != (timing.Bounds{Min: 20, Max: 30}) {
		t.Errorf("at 11:30: bounds %v, want launch's 20-30", d.Bounds)
	}
}

// cron is a Cron window in UTC.
func cron(schedule, duration string) autoscalingv1alpha1.ScheduleSpec {
	return autoscalingv1alpha1.ScheduleSpec{Type: autoscalingv1alpha1.ScheduleTypeCron, Schedule: schedule, Duration: duration, TimeZone: "UTC"}
}

// TestForbidWithinABudget is what a hostile or careless tenant can make the resolution of
// overlapPolicy Forbid do with Schedules stored past admission (webhooks off): Schedules that
// open a window every other minute, and more Schedules than admission lets an autoscaler
// have, all touching but never overlapping. The resolution stays within MaxComparisons and
// leaves out, as NotCompared, what it could not compare: the dense Schedules, and those after
// the budget ran out in creation order; the others are kept and apply.
func TestForbidWithinABudget(t *testing.T) {
	spa := autoscaler(2, 10)
	spa.Spec.OverlapPolicy = autoscalingv1alpha1.OverlapPolicyForbid
	created := instant(t, "2027-01-01T00:00:00Z")
	var schedules []autoscalingv1alpha1.Schedule
	// Minute m of the day, for a minute: each touches the next, none overlaps another.
	for m := range autoscalingv1alpha1.MaxSchedules + 2 {
		s := schedule(fmt.Sprintf("m%03d", m), int32(m%50+3), 60, cron(fmt.Sprintf("%d %d * * *", m%60, m/60), "1m"))
		s.CreationTimestamp = metav1.NewTime(created.Add(time.Duration(m) * time.Second))
		schedules = append(schedules, s)
	}
	every := schedule("every-other-minute", 50, 60, cron("*/2 * * * *", "1m"))
	every.CreationTimestamp = metav1.NewTime(created.Add(-time.Hour)) // the oldest: it would be kept first
	schedules = append(schedules, every)

	now := instant(t, "2027-03-01T00:00:30Z")
	d := compute(t, spa, schedules, now)
	reasons := map[string][]string{}
	for _, l := range d.LeftOut {
		if l.NotCompared == "" {
			t.Errorf("%s left out as overlapping %s: none of these Schedules overlap", l.Name, l.Kept)
			continue
		}
		reasons[l.NotCompared] = append(reasons[l.NotCompared], l.Name)
	}
	if got := reasons[notComparedTooManyWindows]; !slices.Equal(got, []string{"every-other-minute"}) {
		t.Errorf("left out for too many windows: %v, want [every-other-minute]", got)
	}
	// Schedule k (0-based) is compared with the k kept before it: the budget of every pair of
	// MaxSchedules Schedules lasts through Schedule MaxSchedules-1, and is spent during the
	// next one.
	if got, want := reasons[notComparedTooManySchedules], []string{fmt.Sprintf("m%03d", autoscalingv1alpha1.MaxSchedules), fmt.Sprintf("m%03d", autoscalingv1alpha1.MaxSchedules+1)}; !slices.Equal(got, want) {
		t.Errorf("left out for too many Schedules: %v, want %v", got, want)
	}
	if diff := cmp.Diff([]string{"m000"}, d.Active); diff != "" {
		t.Errorf("active at 00:00:30 (-want +got):\n%s", diff)
	}
	if d.Bounds != (timing.Bounds{Min: 3, Max: 60}) {
		t.Errorf("bounds %v, want m000's 3-60 (every-other-minute is left out)", d.Bounds)
	}

	// The same answer again (the memo of overlaps answers) and with it off.
	for _, memo := range []bool{true, false} {
		timing.SetOverlapMemo(memo)
		again := compute(t, spa, schedules, now)
		if !slices.EqualFunc(d.LeftOut, again.LeftOut, func(a, b LeftOut) bool {
			return a.Name == b.Name && a.Kept == b.Kept && a.NotCompared == b.NotCompared
		}) || !slices.Equal(d.Active, again.Active) {
			t.Errorf("memo %v: another answer: left out %d, active %v", memo, len(again.LeftOut), again.Active)
		}
	}
	timing.SetOverlapMemo(true)

	// A done context stops the resolution with its error instead of an answer.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Compute(ctx, spa, schedules, nil, now); !errors.Is(err, context.Canceled) {
		t.Errorf("Compute with a done context: %v, want context.Canceled", err)
	}
	// Under Max nothing is compared, nothing left out.
	spa.Spec.OverlapPolicy = autoscalingv1alpha1.OverlapPolicyMax
	if d := compute(t, spa, schedules, now); len(d.LeftOut) != 0 {
		t.Errorf("Max: %d left out, want none", len(d.LeftOut))
	}
}

// TestTimelineWithinABudget: the timeline of a preview stops, with the budget's error, once
// the intervals (and under Forbid the comparisons) of its range are more than its budget; one
// within it is drawn.
func TestTimelineWithinABudget(t *testing.T) {
	spa := autoscaler(2, 10)
	schedules := []autoscalingv1alpha1.Schedule{
		schedule("hourly", 5, 10, cron("0 * * * *", "30m")),
		schedule("half-past", 6, 10, cron("30 * * * *", "30m")),
	}
	from := instant(t, "2027-03-01T00:00:00Z")
	for _, policy := range []autoscalingv1alpha1.OverlapPolicy{autoscalingv1alpha1.OverlapPolicyMax, autoscalingv1alpha1.OverlapPolicyForbid} {
		spa.Spec.OverlapPolicy = policy
		// A day: 48 intervals (and under Forbid one comparison at each of 48 boundaries).
		if _, err := Timeline(timing.NewBudget(context.Background(), 200), spa, schedules, nil, from, from.Add(24*time.Hour), nil); err != nil {
			t.Errorf("%s: a day within the budget: %v", policy, err)
		}
		segs, err := Timeline(timing.NewBudget(context.Background(), 200), spa, schedules, nil, from, from.Add(30*24*time.Hour), nil)
		if !errors.Is(err, timing.ErrBudgetSpent) || segs != nil {
			t.Errorf("%s: 30 days with a budget of 200: %d segments, %v; want none and ErrBudgetSpent", policy, len(segs), err)
		}
	}
}

// compute is Compute, which only fails for a done context.
func compute(t testing.TB, spa *autoscalingv1alpha1.ScheduledPodAutoscaler, schedules []autoscalingv1alpha1.Schedule, now time.Time) Desired {
	t.Helper()
	d, err := Compute(context.Background(), spa, schedules, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// timeline is Timeline with a budget that no test spends.
func timeline(t testing.TB, spa *autoscalingv1alpha1.ScheduledPodAutoscaler, schedules []autoscalingv1alpha1.Schedule, from, to time.Time, invalid func(string, error)) []timing.Segment {
	t.Helper()
	segs, err := Timeline(timing.NewBudget(context.Background(), 1<<40), spa, schedules, nil, from, to, invalid)
	if err != nil {
		t.Fatal(err)
	}
	return segs
}
