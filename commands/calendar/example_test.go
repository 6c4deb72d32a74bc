package calendar

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-ical"
	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
	"github.com/almanac-dev/almanac/commands/kube"
)

var update = flag.Bool("update", false, "rewrite the example manifests in examples/calendars/ from their .ics files")

// The example: a public-holiday feed and the manifest committed next to it, which
// `almanac calendar import` must still write (go test ./commands/calendar/ -update rewrites it).
var (
	exampleICS      = filepath.Join("..", "..", "examples", "calendars", "de-berlin-holidays-2027.ics")
	exampleManifest = filepath.Join("..", "..", "examples", "calendars", "de-berlin-holidays.yaml")
	exampleOptions  = Options{Name: "de-berlin-holidays", Cluster: true, Source: "de-berlin-holidays-2027.ics"}
)

func importExample(t *testing.T) *Result {
	t.Helper()
	f, err := os.Open(exampleICS)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	res, err := Import(f, exampleOptions, now)
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	return res
}

func TestExampleGolden(t *testing.T) {
	res := importExample(t)
	if *update {
		if err := os.WriteFile(exampleManifest, res.Manifest, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(exampleManifest)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(res.Manifest)); diff != "" {
		t.Errorf("%s is not what almanac calendar import writes from %s (-committed +written); rerun with -update and review:\n%s",
			exampleManifest, exampleICS, diff)
	}
	if len(res.Notes) > 0 {
		t.Errorf("the example imports with notes %q, want none (its yearly events are MM-dd days, not expanded)", res.Notes)
	}
}

// TestExampleCoversTheFilesDates reads the committed manifest as the controller would (a
// ClusterCalendar, compiled by the time engine) and checks, through the engine's exported
// Mask, that it covers exactly the dates of the file's events in 2027 and 2028 (the file's
// yearly events in every year), each with its SUMMARY as the reason. The file's dates are read
// here with the library alone, not with the import's mapping.
func TestExampleCoversTheFilesDates(t *testing.T) {
	data, err := os.ReadFile(exampleManifest)
	if err != nil {
		t.Fatal(err)
	}
	var cc calendarv1alpha1.ClusterCalendar
	if err := yaml.UnmarshalStrict(data, &cc); err != nil {
		t.Fatalf("%s is not a ClusterCalendar: %v", exampleManifest, err)
	}
	spec := timing.CalendarSpec{Name: "ClusterCalendar " + cc.Name, TimeZone: cc.Spec.TimeZone}
	for _, d := range cc.Spec.Days {
		spec.Days = append(spec.Days, timing.CalendarDay{Date: d.Date, Name: d.Name})
	}
	for _, p := range cc.Spec.Periods {
		spec.Periods = append(spec.Periods, timing.CalendarPeriod{Start: p.Start, End: p.End, Name: p.Name})
	}
	compiled, errs := spec.Compile()
	if len(errs) > 0 {
		t.Fatalf("the manifest does not compile: %v", errs)
	}
	mask := timing.Mask{Skip: []*timing.Calendar{compiled}}
	berlin, err := time.LoadLocation(cc.Spec.TimeZone)
	if err != nil {
		t.Fatal(err)
	}

	// The file's dates, by the library.
	f, err := os.Open(exampleICS)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	cal, err := ical.NewDecoder(f).Decode()
	if err != nil {
		t.Fatal(err)
	}
	if got := cal.Props.Get("X-WR-TIMEZONE").Value; got != cc.Spec.TimeZone {
		t.Errorf("timeZone %q, want the file's X-WR-TIMEZONE %q", cc.Spec.TimeZone, got)
	}
	want := map[string]string{} // date → SUMMARY
	for _, ev := range cal.Events() {
		start, err := ev.DateTimeStart(time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		end, err := ev.DateTimeEnd(time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		summary, _ := ev.Props.Text(ical.PropSummary)
		set, err := ev.RecurrenceSet(time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		starts := []time.Time{start}
		if set != nil {
			starts = set.Between(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC), true)
		}
		for _, s := range starts {
			for d := s; d.Before(s.Add(end.Sub(start))) && d.Year() < 2029; d = d.AddDate(0, 0, 1) {
				want[d.Format(dateLayout)] = summary
			}
		}
	}
	if len(want) < 10 {
		t.Fatalf("the example has %d dates in 2027 and 2028, want at least the 10 public holidays of Berlin in 2027", len(want))
	}

	// Every date of 2027 and 2028, as the engine sees it at 00:00, noon and 23:59 Berlin time.
	var got []string
	for d := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() < 2029; d = d.AddDate(0, 0, 1) {
		date := d.Format(dateLayout)
		var covered []bool
		for _, hm := range [][2]int{{0, 0}, {12, 0}, {23, 59}} {
			reason, excluded := mask.Excludes(time.Date(d.Year(), d.Month(), d.Day(), hm[0], hm[1], 0, 0, berlin))
			covered = append(covered, excluded)
			if excluded && !strings.Contains(reason, want[date]) {
				t.Errorf("%s: reason %q does not name %q", date, reason, want[date])
			}
		}
		switch {
		case !slices.Contains(covered, false):
			got = append(got, date)
		case slices.Contains(covered, true):
			t.Errorf("%s is covered only in part (00:00, 12:00, 23:59): %v", date, covered)
		}
	}
	var wantDates []string
	for d := range want {
		wantDates = append(wantDates, d)
	}
	slices.Sort(wantDates)
	if diff := cmp.Diff(wantDates, got); diff != "" {
		t.Errorf("dates the calendar covers in 2027 and 2028 (-file's +manifest's):\n%s", diff)
	}
}

// newRoot is `almanac calendar` as main runs it, under a root that prints neither usage nor
// errors.
func newRoot() *cobra.Command {
	root := &cobra.Command{Use: "almanac", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(NewCommand())
	return root
}

// TestCommand runs the command as main does: the file from standard input, the manifest to
// a file, notes and refusals on standard error.
func TestCommand(t *testing.T) {
	data, err := os.ReadFile(exampleICS)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "holidays.yaml")
	root := newRoot()
	var stdout, stderr bytes.Buffer
	root.SetIn(bytes.NewReader(data))
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	root.SetArgs([]string{"calendar", "import", "-", "--name", "de-berlin-holidays", "--cluster", "-o", out})
	if err := root.Execute(); err != nil {
		t.Fatalf("almanac calendar import: %v\n%s", err, stderr.String())
	}
	written, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(exampleManifest)
	if err != nil {
		t.Fatal(err)
	}
	// From standard input the header names no file.
	if want := strings.Replace(string(committed), "de-berlin-holidays-2027.ics", "standard input", 1); string(written) != want {
		t.Errorf("-o %s:\n%s\nwant\n%s", out, written, want)
	}
	if stdout.Len() > 0 {
		t.Errorf("with -o, standard output has %q", stdout.String())
	}
	if want := "Wrote ClusterCalendar de-berlin-holidays (10 days, 0 periods) to " + out; !strings.Contains(stderr.String(), want) {
		t.Errorf("standard error %q, want %q", stderr.String(), want)
	}

	// A refusal: the notes first, then the error for main to print, with its exit status.
	stdout.Reset()
	stderr.Reset()
	root = newRoot()
	root.SetIn(strings.NewReader(ics(vevent("UID:1", "DTSTART;VALUE=DATE:20270101", "RRULE:FREQ=DAILY", "SUMMARY:Daily"))))
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	root.SetArgs([]string{"calendar", "import", "-", "--name", "x", "--horizon", "5y"})
	err = root.Execute()
	var ke *kube.Error
	if !errors.As(err, &ke) || ke.ExitCode() != kube.ExitRefused {
		t.Fatalf("error %v, want a refusal", err)
	}
	if !strings.Contains(stderr.String(), `Note: expanded the recurring event "Daily" (UID 1, line 4): more than 1000 occurrences`) {
		t.Errorf("standard error %q does not say what was expanded", stderr.String())
	}
	if stdout.Len() > 0 {
		t.Errorf("a refused import wrote %q", stdout.String())
	}

	// No file.
	root = newRoot()
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	root.SetArgs([]string{"calendar", "import", "--name", "x"})
	if err := root.Execute(); !errors.As(err, &ke) || ke.ExitCode() != kube.ExitUsage {
		t.Errorf("without a file: %v, want a usage error", err)
	}
}
