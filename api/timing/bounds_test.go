package timing

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

func ptr(v int32) *int32 { return &v }

func TestEffective(t *testing.T) {
	baseline := Bounds{Min: 2, Max: 10}
	tests := []struct {
		name   string
		active []Override
		want   Bounds
	}{
		{name: "none active is the baseline", want: baseline},
		{name: "one schedule", active: []Override{{Name: "a", Min: ptr(5), Max: ptr(20)}}, want: Bounds{5, 20}},
		{name: "one schedule may scale down", active: []Override{{Name: "a", Min: ptr(1), Max: ptr(3)}}, want: Bounds{1, 3}},
		{
			name:   "largest min and largest max",
			active: []Override{{Name: "a", Min: ptr(5), Max: ptr(8)}, {Name: "b", Min: ptr(3), Max: ptr(30)}},
			want:   Bounds{5, 30},
		},
		{name: "omitted min takes the baseline's", active: []Override{{Name: "a", Max: ptr(20)}}, want: Bounds{2, 20}},
		{name: "omitted max takes the baseline's", active: []Override{{Name: "a", Min: ptr(4)}}, want: Bounds{4, 10}},
		{
			name:   "omitted bounds compete with the baseline's value",
			active: []Override{{Name: "a", Min: ptr(1), Max: ptr(3)}, {Name: "b"}},
			want:   Bounds{2, 10},
		},
		{name: "min above max raises max", active: []Override{{Name: "a", Min: ptr(15)}}, want: Bounds{15, 15}},
		{
			name:   "min above max across schedules raises max",
			active: []Override{{Name: "a", Min: ptr(12), Max: ptr(12)}, {Name: "b", Min: ptr(20), Max: ptr(8)}},
			want:   Bounds{20, 20},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Effective(baseline, tt.active)); diff != "" {
				t.Errorf("Effective mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFirstOverlap(t *testing.T) {
	tests := []struct {
		name    string
		a, b    Spec
		from    string
		horizon time.Duration
		want    *Interval
	}{
		{
			name: "overlapping Daily windows",
			a:    Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "17:00", TimeZone: "Europe/Berlin"},
			b:    Spec{Type: TypeDaily, StartTime: "16:00", EndTime: "18:00", TimeZone: "Europe/Berlin"},
			from: "2027-07-01T00:00:00Z", horizon: OverlapHorizon,
			want: &Interval{Start: instant(t, "2027-07-01T14:00:00Z"), End: instant(t, "2027-07-01T15:00:00Z")},
		},
		{
			name: "touching half-open windows do not overlap",
			a:    Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "12:00", TimeZone: "Europe/Berlin"},
			b:    Spec{Type: TypeDaily, StartTime: "12:00", EndTime: "15:00", TimeZone: "Europe/Berlin"},
			from: "2027-01-01T00:00:00Z", horizon: OverlapHorizon,
		},
		{
			name: "zones meet only in summer, after a day on which one window is empty",
			a:    Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "10:00", TimeZone: "Asia/Tokyo"},
			b:    Spec{Type: TypeDaily, StartTime: "01:00", EndTime: "02:00", TimeZone: "Europe/London"},
			from: "2027-01-01T00:00:00Z", horizon: OverlapHorizon,
			// On 2027-03-28 London's 01:00-02:00 is the gap itself; on 03-29 it is 00:00Z-01:00Z.
			want: &Interval{Start: instant(t, "2027-03-29T00:00:00Z"), End: instant(t, "2027-03-29T01:00:00Z")},
		},
		{
			name: "Weekly and OneShot",
			a:    Spec{Type: TypeWeekly, StartDayOfWeek: "Friday", StartTime: "18:00", EndDayOfWeek: "Monday", EndTime: "08:00", TimeZone: "America/New_York"},
			b:    Spec{Type: TypeOneShot, StartTime: "2027-03-15T07:00", EndTime: "2027-03-15T12:00", TimeZone: "America/New_York"},
			from: "2027-01-01T00:00:00Z", horizon: OverlapHorizon,
			want: &Interval{Start: instant(t, "2027-03-15T11:00:00Z"), End: instant(t, "2027-03-15T12:00:00Z")},
		},
		{
			name: "overlap beyond the horizon is not reported",
			a:    Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "17:00"},
			b:    Spec{Type: TypeOneShot, StartTime: "2029-01-01T10:00", EndTime: "2029-01-01T11:00"},
			from: "2027-01-01T00:00:00Z", horizon: OverlapHorizon,
		},
		{
			name: "both already active: the intersection is not clipped to from",
			a:    Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "17:00"},
			b:    Spec{Type: TypeCron, Schedule: "0 10 * * *", Duration: "2h"},
			from: "2027-01-01T11:00:00Z", horizon: OverlapHorizon,
			want: &Interval{Start: instant(t, "2027-01-01T10:00:00Z"), End: instant(t, "2027-01-01T12:00:00Z")},
		},
		{
			name: "Cron windows in different zones",
			a:    Spec{Type: TypeCron, Schedule: "0 9 * * MON", Duration: "1h", TimeZone: "Asia/Tokyo"},
			b:    Spec{Type: TypeCron, Schedule: "30 0 * * MON", Duration: "1h", TimeZone: "UTC"},
			from: "2027-01-01T00:00:00Z", horizon: OverlapHorizon,
			want: &Interval{Start: instant(t, "2027-01-04T00:30:00Z"), End: instant(t, "2027-01-04T01:00:00Z")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := firstOverlap(t, compile(t, tt.a), compile(t, tt.b), instant(t, tt.from), tt.horizon)
			var gotPtr *Interval
			if ok {
				gotPtr = &got
			}
			if diff := cmp.Diff(tt.want, gotPtr); diff != "" {
				t.Errorf("FirstOverlap mismatch (-want +got):\n%s", diff)
			}
			// Overlap is symmetric.
			got, ok = firstOverlap(t, compile(t, tt.b), compile(t, tt.a), instant(t, tt.from), tt.horizon)
			gotPtr = nil
			if ok {
				gotPtr = &got
			}
			if diff := cmp.Diff(tt.want, gotPtr); diff != "" {
				t.Errorf("FirstOverlap(b, a) mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTimeline(t *testing.T) {
	baseline := Bounds{Min: 2, Max: 10}
	schedules := []Named{
		{Name: "morning", Window: compile(t, Spec{Type: TypeDaily, StartTime: "08:00", EndTime: "12:00"}), Min: ptr(5)},
		{Name: "midday", Window: compile(t, Spec{Type: TypeDaily, StartTime: "11:00", EndTime: "14:00"}), Min: ptr(4), Max: ptr(20)},
		{Name: "same-as-midday", Window: compile(t, Spec{Type: TypeDaily, StartTime: "14:00", EndTime: "15:00"}), Min: ptr(4), Max: ptr(20)},
		{Name: "suspended", Window: compile(t, Spec{Type: TypeDaily, StartTime: "00:00", EndTime: "23:00"}), Min: ptr(50), Suspended: true},
		{Name: "invalid", Window: nil, Min: ptr(60)},
	}
	from, to := instant(t, "2027-01-01T06:00:00Z"), instant(t, "2027-01-01T16:00:00Z")
	want := []Segment{
		{Start: from, End: instant(t, "2027-01-01T08:00:00Z"), Bounds: baseline},
		{Start: instant(t, "2027-01-01T08:00:00Z"), End: instant(t, "2027-01-01T11:00:00Z"), Bounds: Bounds{5, 10}, Active: []string{"morning"}},
		{Start: instant(t, "2027-01-01T11:00:00Z"), End: instant(t, "2027-01-01T12:00:00Z"), Bounds: Bounds{5, 20}, Active: []string{"midday", "morning"}},
		{Start: instant(t, "2027-01-01T12:00:00Z"), End: instant(t, "2027-01-01T14:00:00Z"), Bounds: Bounds{4, 20}, Active: []string{"midday"}},
		// Same bounds but another Schedule: not merged.
		{Start: instant(t, "2027-01-01T14:00:00Z"), End: instant(t, "2027-01-01T15:00:00Z"), Bounds: Bounds{4, 20}, Active: []string{"same-as-midday"}},
		{Start: instant(t, "2027-01-01T15:00:00Z"), End: to, Bounds: baseline},
	}
	if diff := cmp.Diff(want, timeline(t, baseline, schedules, from, to)); diff != "" {
		t.Errorf("Timeline mismatch (-want +got):\n%s", diff)
	}

	next, ok := NextTransition(schedules, instant(t, "2027-01-01T12:30:00Z"))
	if diff := cmp.Diff(instant(t, "2027-01-01T14:00:00Z"), next); !ok || diff != "" {
		t.Errorf("NextTransition = %v (-want +got):\n%s", ok, diff)
	}
	if _, ok := NextTransition(schedules[3:], from); ok {
		t.Error("NextTransition of only suspended and invalid schedules reports a transition")
	}
}

func TestTimelineMergesEqualSegments(t *testing.T) {
	// Two touching intervals of one Cron window on different local days have the same bounds
	// and active set: one segment.
	w := compile(t, Spec{Type: TypeCron, Schedule: "0 0 * * *", Duration: "24h"})
	got := timeline(t, Bounds{1, 5}, []Named{{Name: "always", Window: w, Min: ptr(3)}}, instant(t, "2027-01-01T00:00:00Z"), instant(t, "2027-01-04T00:00:00Z"))
	want := []Segment{{Start: instant(t, "2027-01-01T00:00:00Z"), End: instant(t, "2027-01-04T00:00:00Z"), Bounds: Bounds{3, 5}, Active: []string{"always"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Timeline mismatch (-want +got):\n%s", diff)
	}
}

// TestGoldenTimelineAcrossDST renders a week of an autoscaler in New York across the 2027
// spring-forward, and the week of the fall-back, and compares them with
// testdata/*.golden. Run with -update to rewrite them, then review the diff by eye.
func TestGoldenTimelineAcrossDST(t *testing.T) {
	const zone = "America/New_York"
	baseline := Bounds{Min: 2, Max: 10}
	schedules := []Named{
		{Name: "business-hours", Window: compile(t, Spec{Type: TypeWeekly, StartDayOfWeek: "Mon", StartTime: "08:00", EndDayOfWeek: "Fri", EndTime: "18:00", TimeZone: zone}), Min: ptr(5), Max: ptr(20)},
		{Name: "nightly-batch", Window: compile(t, Spec{Type: TypeCron, Schedule: "30 1 * * *", Duration: "90m", TimeZone: zone}), Min: ptr(8)},
		{Name: "weekend", Window: compile(t, Spec{Type: TypeWeekly, StartDayOfWeek: "Friday", StartTime: "22:00", EndDayOfWeek: "Sunday", EndTime: "02:30", TimeZone: zone}), Max: ptr(4)},
		{Name: "lunch", Window: compile(t, Spec{Type: TypeDaily, StartTime: "12:00", EndTime: "13:00", TimeZone: zone}), Min: ptr(6), Suspended: true},
	}
	for _, week := range []struct{ name, from string }{
		{"timeline_spring_forward", "2027-03-08T05:00:00Z"},
		{"timeline_fall_back", "2027-11-01T04:00:00Z"},
	} {
		t.Run(week.name, func(t *testing.T) {
			from := instant(t, week.from)
			var b strings.Builder
			for _, s := range timeline(t, baseline, schedules, from, from.Add(7*24*time.Hour)) {
				active := strings.Join(s.Active, ",")
				if active == "" {
					active = "-"
				}
				fmt.Fprintf(&b, "%s  %s  min=%-2d max=%-2d  %s\n", localRange(s.Start, s.End, loc(t, zone)), utcRange(s.Start, s.End), s.Bounds.Min, s.Bounds.Max, active)
			}
			compareGolden(t, filepath.Join("testdata", week.name+".golden"), b.String())
		})
	}
}

func localRange(start, end time.Time, l *time.Location) string {
	const layout = "Mon 2006-01-02 15:04 MST"
	return fmt.Sprintf("%s → %s", start.In(l).Format(layout), end.In(l).Format(layout))
}

func utcRange(start, end time.Time) string {
	return fmt.Sprintf("(%s → %s)", start.UTC().Format("01-02T15:04Z"), end.UTC().Format("01-02T15:04Z"))
}

func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}
