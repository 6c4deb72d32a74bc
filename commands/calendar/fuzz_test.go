package calendar

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/almanac-dev/almanac/commands/kube"
)

// FuzzImport: whatever the file, Import returns a manifest or a *kube.Error, never panics, and
// never writes more days or periods than a calendar holds (the manifest it writes compiles:
// Import checks that itself).
func FuzzImport(f *testing.F) {
	if data, err := os.ReadFile(exampleICS); err == nil {
		f.Add(string(data), "")
	}
	f.Add(ics(vevent("UID:1", "DTSTART;TZID=America/New_York:20270105T090000", "DURATION:PT1H", "RRULE:FREQ=WEEKLY;COUNT=4",
		"EXDATE;TZID=America/New_York:20270112T090000")), "Europe/Berlin")
	f.Add(ics(vevent("UID:1", "DTSTART;VALUE=DATE:20270101", "RRULE:FREQ=DAILY")), "")
	f.Add(ics(vevent("UID:r", "DTSTART;VALUE=DATE:20270105", "RRULE:FREQ=WEEKLY", "RDATE;VALUE=DATE:20270130")+
		vevent("UID:r", "RECURRENCE-ID;VALUE=DATE:20270112", "DTSTART;VALUE=DATE:20270113")), "Asia/Tokyo")
	f.Fuzz(func(t *testing.T, file, zone string) {
		res, err := Import(strings.NewReader(file), Options{Name: "fuzz", TimeZone: zone, From: "2027-01-01", Horizon: "1y"}, now)
		if err != nil {
			var ke *kube.Error
			if !errors.As(err, &ke) {
				t.Fatalf("error %v is a %T, want *kube.Error", err, err)
			}
			return
		}
		if len(res.Spec.Days) > 1000 || len(res.Spec.Periods) > 1000 {
			t.Fatalf("%d days and %d periods", len(res.Spec.Days), len(res.Spec.Periods))
		}
	})
}
