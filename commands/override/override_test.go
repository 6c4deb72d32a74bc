package override

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
)

func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v.UTC()
}

func zone(t *testing.T, name string) timing.Zone {
	t.Helper()
	z, err := timing.NormalizeZone(name)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// TestNewWindow: the start is now rounded down to the minute, --for's end is rounded up,
// --until is read as RFC 3339 or as a wall time in the zone by the DST rule, and the Schedule
// is written in the zone unless a wall time there would name another instant (a repeated
// hour), then in UTC.
func TestNewWindow(t *testing.T) {
	type want struct {
		start, end, startTime, endTime, scheduleZone string
	}
	for _, tc := range []struct {
		name, now, zone, until string
		forDuration            time.Duration
		want                   want
	}{
		{name: "--for from a whole minute", now: "2027-01-15T12:00:00Z", zone: "UTC", forDuration: 30 * time.Minute,
			want: want{"2027-01-15T12:00:00Z", "2027-01-15T12:30:00Z", "2027-01-15T12:00", "2027-01-15T12:30", "UTC"}},
		{name: "--for rounded up", now: "2027-01-15T12:00:30Z", zone: "UTC", forDuration: 30 * time.Minute,
			want: want{"2027-01-15T12:00:00Z", "2027-01-15T12:31:00Z", "2027-01-15T12:00", "2027-01-15T12:31", "UTC"}},
		{name: "--for one second", now: "2027-01-15T12:00:30.5Z", zone: "UTC", forDuration: time.Second,
			want: want{"2027-01-15T12:00:00Z", "2027-01-15T12:01:00Z", "2027-01-15T12:00", "2027-01-15T12:01", "UTC"}},
		{name: "--until as a wall time in Berlin", now: "2027-01-15T12:00:30Z", zone: "Europe/Berlin", until: "2027-01-15T18:00",
			want: want{"2027-01-15T12:00:00Z", "2027-01-15T17:00:00Z", "2027-01-15T13:00", "2027-01-15T18:00", "Europe/Berlin"}},
		{name: "--until with :00 seconds", now: "2027-01-15T12:00:30Z", zone: "Asia/Tokyo", until: "2027-01-15T22:00:00",
			want: want{"2027-01-15T12:00:00Z", "2027-01-15T13:00:00Z", "2027-01-15T21:00", "2027-01-15T22:00", "Asia/Tokyo"}},
		{name: "--until in RFC 3339, another offset than the zone's", now: "2027-01-15T12:00:30Z", zone: "Europe/Berlin", until: "2027-01-15T22:00:00+09:00",
			want: want{"2027-01-15T12:00:00Z", "2027-01-15T13:00:00Z", "2027-01-15T13:00", "2027-01-15T14:00", "Europe/Berlin"}},
		{name: "--until with seconds rounded up", now: "2027-01-15T12:00:30Z", zone: "UTC", until: "2027-01-15T13:00:30Z",
			want: want{"2027-01-15T12:00:00Z", "2027-01-15T13:01:00Z", "2027-01-15T12:00", "2027-01-15T13:01", "UTC"}},
		{name: "--until on a spring-forward day, in the gap: the instant the clocks jumped", now: "2027-03-14T06:10:20Z", zone: "America/New_York", until: "2027-03-14T02:30",
			want: want{"2027-03-14T06:10:00Z", "2027-03-14T07:00:00Z", "2027-03-14T01:10", "2027-03-14T03:00", "America/New_York"}},
		{name: "--until on a spring-forward day, after the gap", now: "2027-03-14T06:10:20Z", zone: "America/New_York", until: "2027-03-14T04:00",
			want: want{"2027-03-14T06:10:00Z", "2027-03-14T08:00:00Z", "2027-03-14T01:10", "2027-03-14T04:00", "America/New_York"}},
		{name: "--for across the spring-forward gap: two hours of real time", now: "2027-03-14T06:10:20Z", zone: "America/New_York", forDuration: 2 * time.Hour,
			want: want{"2027-03-14T06:10:00Z", "2027-03-14T08:11:00Z", "2027-03-14T01:10", "2027-03-14T04:11", "America/New_York"}},
		{name: "--until on a fall-back day, a repeated time: its first occurrence", now: "2027-11-07T05:10:00Z", zone: "America/New_York", until: "2027-11-07T01:30",
			want: want{"2027-11-07T05:10:00Z", "2027-11-07T05:30:00Z", "2027-11-07T01:10", "2027-11-07T01:30", "America/New_York"}},
		{name: "--for ending in the repeated hour's second occurrence: written in UTC", now: "2027-11-07T05:10:00Z", zone: "America/New_York", forDuration: time.Hour,
			want: want{"2027-11-07T05:10:00Z", "2027-11-07T06:10:00Z", "2027-11-07T05:10", "2027-11-07T06:10", "UTC"}},
		{name: "--until in RFC 3339 in the second occurrence: written in UTC", now: "2027-11-07T05:10:00Z", zone: "America/New_York", until: "2027-11-07T01:30:00-05:00",
			want: want{"2027-11-07T05:10:00Z", "2027-11-07T06:30:00Z", "2027-11-07T05:10", "2027-11-07T06:30", "UTC"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := NewWindow(at(t, tc.now), tc.until, tc.forDuration, zone(t, tc.zone))
			if err != nil {
				t.Fatal(err)
			}
			got := want{w.Start.Format(time.RFC3339), w.End.Format(time.RFC3339), w.StartTime(), w.EndTime(), w.ScheduleZone.Name}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
			// What the Schedule says names the window again.
			for field, v := range map[string]string{"startTime": w.StartTime(), "endTime": w.EndTime()} {
				l, err := timing.ParseLocalDateTime(v, w.ScheduleZone.Location)
				if err != nil {
					t.Fatal(err)
				}
				if inst, want := l.In(w.ScheduleZone.Location), map[string]time.Time{"startTime": w.Start, "endTime": w.End}[field]; !inst.Equal(want) {
					t.Errorf("%s %s in %s is %s, want %s", field, v, w.ScheduleZone.Name, inst, want)
				}
			}
		})
	}
}

func TestNewWindowRefused(t *testing.T) {
	now := "2027-01-15T12:00:30Z"
	for _, tc := range []struct {
		name, zone, until string
		forDuration       time.Duration
		want              string
	}{
		{name: "--until in the past", zone: "Europe/Berlin", until: "2027-01-15T12:00",
			want: `--until="2027-01-15T12:00" is 2027-01-15 12:00:00 Europe/Berlin (2027-01-15 11:00:00 UTC), which is not after now (2027-01-15 13:00:30 Europe/Berlin (2027-01-15 12:00:30 UTC)): give a time in the future`},
		{name: "--until now", zone: "UTC", until: "2027-01-15T12:00:30Z", want: "which is not after now"},
		{name: "--until in the past, RFC 3339", zone: "UTC", until: "2027-01-15T20:00:00+09:00", want: "which is not after now"},
		{name: "both", zone: "UTC", until: "2027-01-15T13:00", forDuration: time.Hour,
			want: "--until and --for both given: the override ends at one time; give --until TIME or --for DURATION, not both"},
		{name: "neither", zone: "UTC", want: "the end of the override is missing: give --until TIME"},
		{name: "negative --for", zone: "UTC", forDuration: -time.Hour, want: "--for=-1h0m0s is negative"},
		// An end past timing.MaxYear would be refused by admission: refused here first.
		{name: "--for past the last year", zone: "UTC", forDuration: 250 * 365 * 24 * time.Hour, want: "after 2261, the last year almanac schedules"},
		{name: "--until past the last year", zone: "UTC", until: "2262-01-01T00:00", want: "outside the years almanac schedules"},
		{name: "--until not a time", zone: "UTC", until: "tomorrow", want: `--until="tomorrow": `},
		{name: "--until not a date", zone: "UTC", until: "2027-02-29T10:00", want: `--until="2027-02-29T10:00": `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewWindow(at(t, now), tc.until, tc.forDuration, zone(t, tc.zone))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestNewPlan: the argument and the bounds are checked before anything is sent.
func TestNewPlan(t *testing.T) {
	now := at(t, "2027-01-15T12:00:30Z")
	ok := Options{Min: ptr.To[int32](5), Max: ptr.To[int32](10), For: time.Hour, TimeZone: "UTC"}
	for _, arg := range []string{"web", "spa/web", "scheduledpodautoscaler/web", "scheduledpodautoscalers/web", "SPA/web", "scheduledpodautoscaler.autoscaling.almanac.dev/web"} {
		p, err := NewPlan(ok, []string{arg}, now)
		if err != nil {
			t.Fatalf("%s: %v", arg, err)
		}
		if p.Autoscaler != "web" || p.Min != 5 || *p.Max != 10 {
			t.Errorf("%s: got %+v", arg, p)
		}
	}
	with := func(f func(*Options)) Options {
		o := ok
		f(&o)
		return o
	}
	for _, tc := range []struct {
		name string
		opts Options
		args []string
		want string
	}{
		{"--min > --max", with(func(o *Options) { o.Min, o.Max = ptr.To[int32](5), ptr.To[int32](3) }), []string{"spa/web"},
			"--min=5 is greater than --max=3: give a --max of at least 5, or leave --max out"},
		{"no --min", with(func(o *Options) { o.Min = nil }), []string{"spa/web"}, "--min is required"},
		{"negative --min", with(func(o *Options) { o.Min = ptr.To[int32](-1) }), []string{"spa/web"}, "--min=-1 is negative"},
		{"--max 0", with(func(o *Options) { o.Min, o.Max = ptr.To[int32](0), ptr.To[int32](0) }), []string{"spa/web"}, "--max=0: maxReplicas is at least 1"},
		{"no autoscaler", ok, nil, "expected one autoscaler, scheduledpodautoscaler/NAME (or spa/NAME, or NAME), got 0 arguments"},
		{"two autoscalers", ok, []string{"a", "b"}, "got 2 arguments"},
		{"another kind", ok, []string{"deployment/web"}, `"deployment/web": an override changes a ScheduledPodAutoscaler; write scheduledpodautoscaler/NAME, spa/NAME or NAME, not deployment/`},
		{"not a name", ok, []string{"spa/Web_1"}, `"Web_1" is not the name of a ScheduledPodAutoscaler`},
		{"unknown zone", with(func(o *Options) { o.TimeZone = "Europe/Berln" }), []string{"web"}, `--time-zone="Europe/Berln": `},
		{"both --until and --for", with(func(o *Options) { o.Until = "2027-01-15T18:00" }), []string{"web"}, "--until and --for both given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewPlan(tc.opts, tc.args, now)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestFlagsRefusedBeforeAnyRequest runs the command with a kubeconfig that does not exist:
// wrong flags are told (exit status 2) before the kubeconfig is even read.
func TestFlagsRefusedBeforeAnyRequest(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "missing")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"spa/web", "--min", "5", "--max", "3", "--for", "1h"}, "--min=5 is greater than --max=3"},
		{[]string{"spa/web", "--min", "5", "--for", "1h", "--until", "2099-01-01T00:00"}, "--until and --for both given"},
		{[]string{"spa/web", "--min", "5", "--until", "2001-01-01T00:00", "--time-zone", "UTC"}, "which is not after now"},
		{[]string{"spa/web", "--max", "5", "--for", "1h"}, "--min is required"},
		{[]string{"--list", "--min", "5"}, "--list takes none of --min"},
		{[]string{"--list", "spa/web"}, "--list takes none of an autoscaler (spa/web)"},
		{[]string{"--remove", "x", "--for", "1h"}, "--remove takes none of --for"},
		{[]string{"--list", "--remove", "x"}, "--list takes none of --remove"},
		{[]string{"spa/web", "--min", "5", "--for", "1h", "-A"}, "-A (--all-namespaces) is for --list only"},
		{[]string{"--remove", "deployment/x"}, `--remove="deployment/x": an override is a Schedule`},
		// Flags that are right reach the kubeconfig.
		{[]string{"spa/web", "--min", "5", "--max", "5", "--for", "1h"}, "failed to load the kubeconfig"},
		{[]string{"--list", "-A"}, "failed to load the kubeconfig"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cmd := NewCommand()
			cmd.SetArgs(append(tc.args, "--kubeconfig", kubeconfig))
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			cmd.SilenceErrors, cmd.SilenceUsage = true, true
			err := cmd.ExecuteContext(context.Background())
			var e *Error
			if !errors.As(err, &e) || e.ExitCode() != ExitUsage || !strings.Contains(e.Msg, tc.want) {
				t.Fatalf("got %v, want exit status %d and an error with %q", err, ExitUsage, tc.want)
			}
		})
	}
}

func TestScheduleName(t *testing.T) {
	start := at(t, "2027-01-15T12:00:30Z")
	name, gen := ScheduleName("web", start)
	if name != "web-override-202701151200" || gen != "web-override-" {
		t.Errorf("got %q, %q", name, gen)
	}
	long := strings.Repeat("a", 47) + "." + strings.Repeat("b", 200) // 248 characters
	name, gen = ScheduleName(long, start)
	if name != "" {
		t.Errorf("a name over 253 characters: got %q, want none (generateName)", name)
	}
	if gen != strings.Repeat("a", 47)+"-override-" { // cut to 48, the trailing "." dropped
		t.Errorf("generateName %q", gen)
	}
	if len(gen) > 58 {
		t.Errorf("generateName %q is longer than the 58 characters the API server keeps", gen)
	}
}

func TestPlanSchedule(t *testing.T) {
	p, err := NewPlan(Options{Min: ptr.To[int32](5), For: 90 * time.Minute, TimeZone: "europe/berlin"}, []string{"spa/web"}, at(t, "2027-01-15T12:00:30Z"))
	if err != nil {
		t.Fatal(err)
	}
	want := &autoscalingv1alpha1.Schedule{
		TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling.almanac.dev/v1alpha1", Kind: "Schedule"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-override-202701151200",
			Labels: map[string]string{"autoscaling.almanac.dev/override": "true"}},
		Spec: autoscalingv1alpha1.ScheduleSpec{
			ScaleTargetRef: autoscalingv1alpha1.ScaleTargetReference{Name: "web"},
			MinReplicas:    ptr.To[int32](5),
			Type:           autoscalingv1alpha1.ScheduleTypeOneShot,
			StartTime:      "2027-01-15T13:00",
			EndTime:        "2027-01-15T14:31",
			TimeZone:       "Europe/Berlin",
		},
	}
	if diff := cmp.Diff(want, p.Schedule("shop")); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestDefaultZoneName(t *testing.T) {
	for _, tc := range []struct{ tz, link, want string }{
		{"Asia/Tokyo", "/usr/share/zoneinfo/Europe/Berlin", "Asia/Tokyo"},
		{":Asia/Tokyo", "", "Asia/Tokyo"},
		{"", "/usr/share/zoneinfo/Europe/Berlin", "Europe/Berlin"},
		{"", "../usr/share/zoneinfo/America/New_York", "America/New_York"},
		{"not/a/zone", "/usr/share/zoneinfo/Europe/Berlin", "Europe/Berlin"},
		{":/etc/localtime", "", "UTC"},
		{"", "/etc/some-file", "UTC"},
		{"", "", "UTC"},
	} {
		if got := DefaultZoneName(tc.tz, tc.link); got != tc.want {
			t.Errorf("DefaultZoneName(%q, %q) = %q, want %q", tc.tz, tc.link, got, tc.want)
		}
	}
}

func TestScheduleArg(t *testing.T) {
	for _, arg := range []string{"x", "schedule/x", "schedules/x", "Schedule.autoscaling.almanac.dev/x"} {
		if got, err := ScheduleArg(arg); err != nil || got != "x" {
			t.Errorf("ScheduleArg(%q) = %q, %v", arg, got, err)
		}
	}
}

// TestList: overrides in force with the time left, ended ones marked, sorted by namespace and
// end.
func TestList(t *testing.T) {
	s := func(ns, name, start, end string, minReplicas int32, maxReplicas *int32) autoscalingv1alpha1.Schedule {
		return autoscalingv1alpha1.Schedule{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: autoscalingv1alpha1.ScheduleSpec{
				ScaleTargetRef: autoscalingv1alpha1.ScaleTargetReference{Name: "web"},
				Type:           autoscalingv1alpha1.ScheduleTypeOneShot, StartTime: start, EndTime: end, TimeZone: "Europe/Berlin",
				MinReplicas: ptr.To(minReplicas), MaxReplicas: maxReplicas,
			},
		}
	}
	now := at(t, "2027-01-15T12:00:30Z") // 13:00:30 in Berlin
	entries := Entries([]autoscalingv1alpha1.Schedule{
		s("b", "web-override-202701151200", "2027-01-15T13:00", "2027-01-15T15:00", 5, nil),
		s("a", "web-override-202701151100", "2027-01-15T12:00", "2027-01-15T13:00", 7, ptr.To[int32](9)),
		s("a", "web-override-202701151201", "2027-01-15T13:01", "2027-01-15T13:30", 8, nil),
	}, now)
	var out bytes.Buffer
	WriteList(&out, entries, true, "any namespace")
	want := `NAMESPACE  NAME                       AUTOSCALER  MIN  MAX  FROM              UNTIL             TIME ZONE      UNTIL (UTC)       REMAINING
a          web-override-202701151100  web         7    9    2027-01-15 12:00  2027-01-15 13:00  Europe/Berlin  2027-01-15 12:00  ended (the controller deletes it)
a          web-override-202701151201  web         8    -    2027-01-15 13:01  2027-01-15 13:30  Europe/Berlin  2027-01-15 12:30  starts in 30s
b          web-override-202701151200  web         5    -    2027-01-15 13:00  2027-01-15 15:00  Europe/Berlin  2027-01-15 14:00  1h59m30s left
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	out.Reset()
	WriteList(&out, nil, false, `namespace "a"`)
	if got := out.String(); got != "No overrides in namespace \"a\".\n" {
		t.Errorf("got %q", got)
	}
}
