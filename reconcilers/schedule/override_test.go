package schedule

import (
	"testing"

	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
)

// TestOverrideEnded: only a Schedule labelled as an override, of type OneShot and valid, is
// deleted, and only from the end of its window on (the window is half-open: at its end it has
// ended); the end is read in the Schedule's zone.
func TestOverrideEnded(t *testing.T) {
	oneShot := func(override string, spec autoscalingv1alpha1.ScheduleSpec) *autoscalingv1alpha1.Schedule {
		s := newSchedule(spec)
		if override != "" {
			s.Labels = map[string]string{autoscalingv1alpha1.OverrideLabel: override}
		}
		return s
	}
	berlin := autoscalingv1alpha1.ScheduleSpec{Type: autoscalingv1alpha1.ScheduleTypeOneShot, MinReplicas: ptr.To[int32](5),
		StartTime: "2027-01-15T12:00", EndTime: "2027-01-15T14:00", TimeZone: "Europe/Berlin"} // 11:00 to 13:00 UTC
	daily := autoscalingv1alpha1.ScheduleSpec{Type: autoscalingv1alpha1.ScheduleTypeDaily, MinReplicas: ptr.To[int32](5),
		StartTime: "09:00", EndTime: "10:00", TimeZone: "UTC"}
	suspended := berlin
	suspended.Suspend = true
	broken := berlin
	broken.TimeZone = "Mars/Olympus"
	for _, tc := range []struct {
		name string
		s    *autoscalingv1alpha1.Schedule
		now  string
		want bool
	}{
		{"open", oneShot("true", berlin), "2027-01-15T12:59:59Z", false},
		{"at its end", oneShot("true", berlin), "2027-01-15T13:00:00Z", true},
		{"after its end", oneShot("true", berlin), "2027-01-16T00:00:00Z", true},
		{"suspended, after its end", oneShot("true", suspended), "2027-01-15T13:00:00Z", true},
		{"not an override", oneShot("", berlin), "2027-01-16T00:00:00Z", false},
		{"label not true", oneShot("false", berlin), "2027-01-16T00:00:00Z", false},
		{"not a OneShot", oneShot("true", daily), "2027-01-16T00:00:00Z", false},
		{"cannot be evaluated", oneShot("true", broken), "2027-01-16T00:00:00Z", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := OverrideEnded(tc.s, instant(t, tc.now)); got != tc.want {
				t.Errorf("OverrideEnded at %s = %v, want %v", tc.now, got, tc.want)
			}
		})
	}
}

// TestOverrideEndWakes: the reconciler is woken at an override's end even when it is
// suspended, whose status never changes by itself.
func TestOverrideEndWakes(t *testing.T) {
	s := newSchedule(autoscalingv1alpha1.ScheduleSpec{Type: autoscalingv1alpha1.ScheduleTypeOneShot, MinReplicas: ptr.To[int32](5),
		StartTime: "2027-01-15T12:00", EndTime: "2027-01-15T14:00", TimeZone: "Europe/Berlin", Suspend: true})
	s.Labels = map[string]string{autoscalingv1alpha1.OverrideLabel: "true"}
	if _, next := Status(s, nil, instant(t, "2027-01-15T11:30:00Z")); !next.IsZero() {
		t.Fatalf("a suspended Schedule's status wakes at %s; the test expects never", next)
	}
	end, ok := OverrideEnd(s)
	if want := instant(t, "2027-01-15T13:00:00Z"); !ok || !end.Equal(want) {
		t.Errorf("OverrideEnd = %s, %v; want %s", end, ok, want)
	}
	delete(s.Labels, autoscalingv1alpha1.OverrideLabel)
	if _, ok := OverrideEnd(s); ok {
		t.Error("OverrideEnd of a Schedule without the label")
	}
}
