// Package calendars_test checks the way from a public-holiday feed to what almanac skips:
// `almanac calendar import` on the committed iCalendar example, then `almanac preview` of a
// ScheduledJob that skips the imported calendar, against the dates the iCalendar library reads
// in the file.
package calendars_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	ical "github.com/emersion/go-ical"
	"github.com/google/go-cmp/cmp"

	"github.com/almanac-dev/almanac/api/timing"
	"github.com/almanac-dev/almanac/commands/calendar"
	"github.com/almanac-dev/almanac/commands/manifest"
	"github.com/almanac-dev/almanac/commands/preview"
)

const feed = "../../examples/calendars/de-berlin-holidays-2027.ics"

const job = `apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: noon-report, namespace: default}
spec:
  schedule: "0 12 * * *"
  timeZone: Europe/Berlin
  calendars:
    skip: [{kind: ClusterCalendar, name: de-berlin-holidays}]
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: report, image: busybox}]
`

// TestImportedFeedPreviewSkipsTheFilesDates: the preview of a daily noon Job over 2027 skips
// exactly the days of the feed, each by its SUMMARY.
func TestImportedFeedPreviewSkipsTheFilesDates(t *testing.T) {
	f, err := os.Open(feed)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	imported, err := calendar.Import(f, calendar.Options{Name: "de-berlin-holidays", Cluster: true, From: "2027-01-01"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, content := range map[string][]byte{"calendar.yaml": imported.Manifest, "job.yaml": []byte(job)} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	docs, err := manifest.Read([]string{dir}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	from, to := instant(t, "2027-01-01T00:00:00Z"), instant(t, "2028-01-01T00:00:00Z")
	report, warnings, err := preview.Build(docs, preview.Range{From: from, To: to})
	if err != nil || len(warnings) > 0 {
		t.Fatalf("preview: %v, warnings %v", err, warnings)
	}
	if len(report.Jobs) != 1 {
		t.Fatalf("%d Jobs previewed, want 1", len(report.Jobs))
	}
	berlin, err := timing.NormalizeZone("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{} // date → reason
	for _, s := range report.Jobs[0].Skipped {
		got[s.Start.In(berlin.Location).Format(time.DateOnly)] = s.Reason
	}
	if n := len(report.Jobs[0].Runs) + len(got); n != 365 {
		t.Errorf("%d runs and skipped slots in 2027, want 365", n)
	}

	// The file's dates in 2027, as the iCalendar library reads them.
	want := feedDates(t, from, to)
	if diff := cmp.Diff(slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(got))); diff != "" {
		t.Errorf("skipped dates (-file +preview):\n%s", diff)
	}
	for date, summary := range want {
		if reason := got[date]; !strings.Contains(reason, summary) || !strings.Contains(reason, "ClusterCalendar de-berlin-holidays") {
			t.Errorf("%s skipped for %q, want it named %q (ClusterCalendar de-berlin-holidays)", date, reason, summary)
		}
	}
}

// feedDates returns the dates (yyyy-MM-dd) of the feed's all-day events in [from, to), with
// their SUMMARY, recurrences expanded by the library.
func feedDates(t *testing.T, from, to time.Time) map[string]string {
	t.Helper()
	f, err := os.Open(feed)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	cal, err := ical.NewDecoder(f).Decode()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
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
		starts := []time.Time{start}
		if set, err := ev.RecurrenceSet(time.UTC); err != nil {
			t.Fatal(err)
		} else if set != nil {
			starts = set.Between(from, to, true)
		}
		for _, s := range starts {
			for d := s; d.Before(s.Add(end.Sub(start))); d = d.Add(24 * time.Hour) {
				if !d.Before(from) && d.Before(to) {
					out[d.Format(time.DateOnly)] = summary
				}
			}
		}
	}
	if len(out) < 10 {
		t.Fatalf("the feed has %d dates in 2027, want at least Berlin's 10 public holidays", len(out))
	}
	return out
}

func instant(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}
