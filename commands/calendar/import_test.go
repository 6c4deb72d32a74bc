package calendar

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/commands/kube"
)

// now is the instant the tests run at: --from defaults to its date.
var now = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

// ics wraps VEVENTs (and calendar properties) in a VCALENDAR, with CRLF line ends as feeds
// write them.
func ics(body string) string {
	lines := []string{"BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//almanac tests//EN"}
	for l := range strings.SplitSeq(strings.TrimSpace(body), "\n") {
		lines = append(lines, strings.TrimSpace(l))
	}
	return strings.Join(append(lines, "END:VCALENDAR"), "\r\n") + "\r\n"
}

func vevent(props ...string) string {
	return "BEGIN:VEVENT\n" + strings.Join(props, "\n") + "\nEND:VEVENT\n"
}

type day = calendarv1alpha1.CalendarDay
type period = calendarv1alpha1.CalendarPeriod

func TestImportMapping(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		opts    Options
		want    calendarv1alpha1.CalendarSpec
		notes   []string // each a substring of one note, in order
		noNotes bool
	}{{
		name: "all-day event: one day",
		file: ics(vevent("UID:1", "DTSTART;VALUE=DATE:20270101", "DTEND;VALUE=DATE:20270102", "SUMMARY:Neujahr")),
		want: calendarv1alpha1.CalendarSpec{TimeZone: "UTC", Days: []day{{Date: "2027-01-01", Name: "Neujahr"}}},
	}, {
		name: "all-day event without DTEND, and a date without VALUE=DATE: one day each",
		file: ics(vevent("UID:1", "DTSTART;VALUE=DATE:20270101", "SUMMARY:A") + vevent("UID:2", "DTSTART:20270102", "SUMMARY:B")),
		want: calendarv1alpha1.CalendarSpec{TimeZone: "UTC", Days: []day{{Date: "2027-01-01", Name: "A"}, {Date: "2027-01-02", Name: "B"}}},
	}, {
		name: "multi-day all-day event of at most 7 days: a day per date, DTEND exclusive",
		file: ics(vevent("UID:1", "DTSTART;VALUE=DATE:20271230", "DTEND;VALUE=DATE:20280102", "SUMMARY:Year end")),
		want: calendarv1alpha1.CalendarSpec{TimeZone: "UTC", Days: []day{
			{Date: "2027-12-30", Name: "Year end"}, {Date: "2027-12-31", Name: "Year end"}, {Date: "2028-01-01", Name: "Year end"},
		}},
	}, {
		name: "all-day event of more than 7 days, or given by DURATION: one period",
		file: ics(vevent("UID:1", "DTSTART;VALUE=DATE:20270719", "DTEND;VALUE=DATE:20270831", "SUMMARY:Sommerferien") +
			vevent("UID:2", "DTSTART;VALUE=DATE:20271220", "DURATION:P14D", "SUMMARY:Freeze")),
		opts: Options{TimeZone: "Europe/Berlin"},
		want: calendarv1alpha1.CalendarSpec{TimeZone: "Europe/Berlin", Periods: []period{
			{Start: "2027-07-19T00:00", End: "2027-08-31T00:00", Name: "Sommerferien"},
			{Start: "2027-12-20T00:00", End: "2028-01-03T00:00", Name: "Freeze"},
		}},
	}, {
		name: "timed events: wall times in the calendar's zone, whatever the event's TZID",
		file: ics(`X-WR-TIMEZONE:Europe/Berlin
` + vevent("UID:ny", "DTSTART;TZID=America/New_York:20270310T090000", "DTEND;TZID=America/New_York:20270310T170000", "SUMMARY:NY trading day") +
			vevent("UID:utc", "DTSTART:20270401T220000Z", "DURATION:PT3H", "SUMMARY:Maintenance") +
			vevent("UID:floating", "DTSTART:20270501T120000", "DTEND:20270501T130000", "SUMMARY:Lunch") +
			vevent("UID:seconds", "DTSTART;TZID=europe/berlin:20270601T080030", "DTEND;TZID=Europe/Berlin:20270601T090030", "SUMMARY:Odd")),
		want: calendarv1alpha1.CalendarSpec{TimeZone: "Europe/Berlin", Periods: []period{
			// New York is still on EST (UTC-5) on March 10, Berlin on CET (UTC+1).
			{Start: "2027-03-10T15:00", End: "2027-03-10T23:00", Name: "NY trading day"},
			{Start: "2027-04-02T00:00", End: "2027-04-02T03:00", Name: "Maintenance"},
			{Start: "2027-05-01T12:00", End: "2027-05-01T13:00", Name: "Lunch"},
			{Start: "2027-06-01T08:00", End: "2027-06-01T09:01", Name: "Odd"},
		}},
	}, {
		name: "timed event in another zone across the calendar's daylight-saving change",
		file: ics(vevent("UID:1", "DTSTART;TZID=Asia/Tokyo:20270328T080000", "DTEND;TZID=Asia/Tokyo:20270328T120000", "SUMMARY:Tokyo morning")),
		opts: Options{TimeZone: "Europe/Berlin"},
		// Berlin springs forward at 02:00 on March 28, 2027: 08:00 JST is 00:00 CET, 12:00 JST is 05:00 CEST.
		want: calendarv1alpha1.CalendarSpec{TimeZone: "Europe/Berlin", Periods: []period{
			{Start: "2027-03-28T00:00", End: "2027-03-28T05:00", Name: "Tokyo morning"},
		}},
	}, {
		name: "yearly all-day rules: MM-dd days, not expanded",
		file: ics(vevent("UID:xmas", "DTSTART;VALUE=DATE:20201225", "DTEND;VALUE=DATE:20201227", "RRULE:FREQ=YEARLY", "SUMMARY:Weihnachten") +
			vevent("UID:ny", "DTSTART;VALUE=DATE:20270101", "RRULE:FREQ=YEARLY;BYMONTH=1;BYMONTHDAY=1", "SUMMARY:Neujahr") +
			vevent("UID:leap", "DTSTART;VALUE=DATE:20280229", "RRULE:FREQ=YEARLY", "SUMMARY:Leap day")),
		want: calendarv1alpha1.CalendarSpec{TimeZone: "UTC", Days: []day{
			{Date: "01-01", Name: "Neujahr"}, {Date: "02-29", Name: "Leap day"},
			{Date: "12-25", Name: "Weihnachten"}, {Date: "12-26", Name: "Weihnachten"},
		}},
		noNotes: true,
	}, {
		name: "a yearly rule with an end, or on a weekday, is expanded over the horizon",
		file: ics(vevent("UID:until", "DTSTART;VALUE=DATE:20260704", "RRULE:FREQ=YEARLY;UNTIL=20280705", "SUMMARY:Picnic") +
			vevent("UID:thanksgiving", "DTSTART;VALUE=DATE:20261126", "RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=4TH", "SUMMARY:Thanksgiving")),
		opts: Options{Horizon: "2y"},
		want: calendarv1alpha1.CalendarSpec{TimeZone: "UTC", Days: []day{
			{Date: "2027-07-04", Name: "Picnic"}, {Date: "2027-11-25", Name: "Thanksgiving"},
			{Date: "2028-07-04", Name: "Picnic"}, {Date: "2028-11-23", Name: "Thanksgiving"},
		}},
		notes: []string{
			`expanded the recurring event "Picnic" (UID until, line 4): 2 occurrences from 2026-11-27 to 2028-11-26 (--from, --horizon 2y)`,
			`expanded the recurring event "Thanksgiving" (UID thanksgiving, line 10): 2 occurrences from 2026-11-27 to 2028-11-26`,
		},
	}, {
		name: "weekly timed rule: expanded from --from over --horizon, with EXDATEs (one per line, and comma-separated) left out",
		file: ics(vevent("UID:standup", "DTSTART;TZID=Europe/Berlin:20270104T093000", "DTEND;TZID=Europe/Berlin:20270104T094500",
			"RRULE:FREQ=WEEKLY;BYDAY=MO", "EXDATE;TZID=Europe/Berlin:20270111T093000",
			"EXDATE;TZID=Europe/Berlin:20270125T093000,20270201T093000", "SUMMARY:Stand-up")),
		opts: Options{TimeZone: "Europe/Berlin", From: "2027-01-01", Horizon: "5w"},
		want: calendarv1alpha1.CalendarSpec{TimeZone: "Europe/Berlin", Periods: []period{
			{Start: "2027-01-04T09:30", End: "2027-01-04T09:45", Name: "Stand-up"},
			{Start: "2027-01-18T09:30", End: "2027-01-18T09:45", Name: "Stand-up"},
		}},
		notes: []string{`expanded the recurring event "Stand-up" (UID standup, line 4): 2 occurrences from 2027-01-01 to 2027-02-04 (--from, --horizon 5w)`},
	}, {
		name: "weekly rule across a daylight-saving change keeps its wall time in its own zone",
		file: ics(vevent("UID:1", "DTSTART;TZID=America/New_York:20270306T090000", "DTEND;TZID=America/New_York:20270306T100000",
			"RRULE:FREQ=WEEKLY;COUNT=3", "SUMMARY:NY call")),
		opts: Options{TimeZone: "UTC", From: "2027-03-01", Horizon: "1mo"},
		// New York springs forward on March 14, 2027.
		want: calendarv1alpha1.CalendarSpec{TimeZone: "UTC", Periods: []period{
			{Start: "2027-03-06T14:00", End: "2027-03-06T15:00", Name: "NY call"},
			{Start: "2027-03-13T14:00", End: "2027-03-13T15:00", Name: "NY call"},
			{Start: "2027-03-20T13:00", End: "2027-03-20T14:00", Name: "NY call"},
		}},
		notes: []string{`3 occurrences`},
	}, {
		name: "all-day EXDATE, RDATE, and an occurrence moved by RECURRENCE-ID",
		file: ics(vevent("UID:review", "DTSTART;VALUE=DATE:20270105", "RRULE:FREQ=WEEKLY;COUNT=4",
			"EXDATE;VALUE=DATE:20270112", "RDATE;VALUE=DATE:20270130", "SUMMARY:Review") +
			vevent("UID:review", "RECURRENCE-ID;VALUE=DATE:20270119", "DTSTART;VALUE=DATE:20270120", "SUMMARY:Review (moved)")),
		opts: Options{From: "2027-01-01"},
		want: calendarv1alpha1.CalendarSpec{TimeZone: "UTC", Days: []day{
			{Date: "2027-01-05", Name: "Review"}, {Date: "2027-01-20", Name: "Review (moved)"},
			{Date: "2027-01-26", Name: "Review"}, {Date: "2027-01-30", Name: "Review"},
		}},
		notes: []string{`3 occurrences`},
	}, {
		name: "duplicated dates and periods merged, names joined once each",
		file: ics(vevent("UID:1", "DTSTART;VALUE=DATE:20270501", "SUMMARY:Tag der Arbeit") +
			vevent("UID:2", "DTSTART;VALUE=DATE:20270501", "SUMMARY:Maifeiertag") +
			vevent("UID:3", "DTSTART;VALUE=DATE:20270501", "SUMMARY:Tag der Arbeit") +
			vevent("UID:4", "DTSTART;VALUE=DATE:20270430", "DTEND;VALUE=DATE:20270502", "SUMMARY:Brückentag") +
			vevent("UID:5", "DTSTART:20270601T080000Z", "DTEND:20270601T090000Z", "SUMMARY:Deploy freeze") +
			vevent("UID:6", "DTSTART;TZID=Europe/Berlin:20270601T100000", "DTEND;TZID=Europe/Berlin:20270601T110000", "SUMMARY:Audit")),
		want: calendarv1alpha1.CalendarSpec{TimeZone: "UTC",
			Days: []day{
				{Date: "2027-04-30", Name: "Brückentag"},
				{Date: "2027-05-01", Name: "Tag der Arbeit / Maifeiertag / Brückentag"},
			},
			Periods: []period{{Start: "2027-06-01T08:00", End: "2027-06-01T09:00", Name: "Deploy freeze / Audit"}},
		},
	}, {
		name: "cancelled events, events without DTSTART and timed events without an end: skipped, with a note",
		file: ics(vevent("UID:ok", "DTSTART;VALUE=DATE:20270101", "SUMMARY:Kept") +
			vevent("UID:c", "DTSTART;VALUE=DATE:20270102", "STATUS:CANCELLED", "SUMMARY:Called off") +
			vevent("UID:n", "SUMMARY:No start") +
			vevent("UID:z", "DTSTART:20270103T100000Z", "SUMMARY:Instant")),
		want: calendarv1alpha1.CalendarSpec{TimeZone: "UTC", Days: []day{{Date: "2027-01-01", Name: "Kept"}}},
		notes: []string{
			`skipped "Called off" (UID c, line 9): it is cancelled`,
			`skipped "No start" (UID n, line 15): it has no DTSTART`,
			`skipped "Instant" (UID z, line 19): it has no duration`,
		},
	}, {
		name: "zone: X-WR-TIMEZONE in any spelling, made canonical",
		file: ics("X-WR-TIMEZONE:asia/tokyo\n" + vevent("UID:1", "DTSTART;VALUE=DATE:20270101", "SUMMARY:Ganjitsu")),
		want: calendarv1alpha1.CalendarSpec{TimeZone: "Asia/Tokyo", Days: []day{{Date: "2027-01-01", Name: "Ganjitsu"}}},
	}, {
		name: "zone: --time-zone wins over X-WR-TIMEZONE",
		file: ics("X-WR-TIMEZONE:Asia/Tokyo\n" + vevent("UID:1", "DTSTART:20270101T000000Z", "DTEND:20270101T010000Z", "SUMMARY:X")),
		opts: Options{TimeZone: "europe/paris"},
		want: calendarv1alpha1.CalendarSpec{TimeZone: "Europe/Paris", Periods: []period{{Start: "2027-01-01T01:00", End: "2027-01-01T02:00", Name: "X"}}},
	}, {
		name:  "zone: an invalid X-WR-TIMEZONE gives UTC, with a note",
		file:  ics("X-WR-TIMEZONE:Mars/Olympus\n" + vevent("UID:1", "DTSTART;VALUE=DATE:20270101", "SUMMARY:X")),
		want:  calendarv1alpha1.CalendarSpec{TimeZone: "UTC", Days: []day{{Date: "2027-01-01", Name: "X"}}},
		notes: []string{`names the time zone X-WR-TIMEZONE:Mars/Olympus, which is not valid`},
	}, {
		name: "long and escaped names",
		file: ics(vevent("UID:1", "DTSTART;VALUE=DATE:20270101", "SUMMARY:Neujahr\\, Jahresanfang; "+strings.Repeat("x", 200))),
		want: calendarv1alpha1.CalendarSpec{TimeZone: "UTC", Days: []day{{Date: "2027-01-01", Name: "Neujahr, Jahresanfang; " + strings.Repeat("x", 104) + "…"}}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Name = "test"
			res, err := Import(strings.NewReader(tt.file), tt.opts, now)
			if err != nil {
				t.Fatalf("Import: %v (notes: %q)", err, res.Notes)
			}
			if diff := cmp.Diff(tt.want, res.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			checkNotes(t, res.Notes, tt.notes)
			if tt.noNotes && len(res.Notes) > 0 {
				t.Errorf("notes: %q, want none", res.Notes)
			}
			if strings.Contains(string(res.Manifest), "Recurring events expanded") != (len(res.Notes) > 0 && strings.Contains(strings.Join(res.Notes, ""), "expanded")) {
				t.Errorf("the manifest's header says recurrences were expanded only when they were:\n%s", res.Manifest)
			}
		})
	}
}

// checkNotes checks that each of want is part of one note, in order.
func checkNotes(t *testing.T, notes, want []string) {
	t.Helper()
	i := 0
	for _, n := range notes {
		if i < len(want) && strings.Contains(n, want[i]) {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("notes %q\ndo not contain %q (in order)", notes, want[i:])
	}
}

func TestImportManifest(t *testing.T) {
	file := ics(vevent("UID:1", "DTSTART;VALUE=DATE:20270101", "SUMMARY:Neujahr"))
	res, err := Import(strings.NewReader(file), Options{Name: "holidays", Namespace: "payments", TimeZone: "Europe/Berlin", Source: "h.ics"}, now)
	if err != nil {
		t.Fatal(err)
	}
	want := `# Imported from h.ics by almanac calendar import.
apiVersion: almanac.dev/v1alpha1
kind: Calendar
metadata:
  name: holidays
  namespace: payments
spec:
  days:
  - date: "2027-01-01"
    name: Neujahr
  timeZone: Europe/Berlin
`
	if diff := cmp.Diff(want, string(res.Manifest)); diff != "" {
		t.Errorf("manifest (-want +got):\n%s", diff)
	}
	res, err = Import(strings.NewReader(file), Options{Name: "holidays", Cluster: true}, now)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Manifest); !strings.Contains(got, "kind: ClusterCalendar\nmetadata:\n  name: holidays\nspec:") {
		t.Errorf("manifest with --cluster:\n%s", got)
	}
}

func TestImportRefused(t *testing.T) {
	oneDay := ics(vevent("UID:1", "DTSTART;VALUE=DATE:20270101", "SUMMARY:Neujahr"))
	tests := []struct {
		name string
		file string
		opts Options
		code int
		want []string // substrings of the message
	}{{
		name: "no --name",
		file: oneDay, opts: Options{Name: ""},
		code: kube.ExitUsage, want: []string{"--name is required"},
	}, {
		name: "bad --name",
		file: oneDay, opts: Options{Name: "Holidays_DE"},
		code: kube.ExitUsage, want: []string{`--name "Holidays_DE" is not a valid name`},
	}, {
		name: "--namespace and --cluster",
		file: oneDay, opts: Options{Name: "h", Namespace: "a", Cluster: true},
		code: kube.ExitUsage, want: []string{"--namespace and --cluster both set"},
	}, {
		name: "bad --time-zone",
		file: oneDay, opts: Options{Name: "h", TimeZone: "Europe/Berln"},
		code: kube.ExitUsage, want: []string{`--time-zone "Europe/Berln"`, `did you mean "Europe/Berlin"`},
	}, {
		name: "bad --horizon",
		file: oneDay, opts: Options{Name: "h", Horizon: "3 years"},
		code: kube.ExitUsage, want: []string{`--horizon "3 years" is not a length of time`, `"3y"`},
	}, {
		name: "too long --horizon",
		file: oneDay, opts: Options{Name: "h", Horizon: "101y"},
		code: kube.ExitUsage, want: []string{`longer than 100 years`},
	}, {
		name: "bad --from",
		file: oneDay, opts: Options{Name: "h", From: "27-01-01"},
		code: kube.ExitUsage, want: []string{`--from "27-01-01" is not a date: expected yyyy-MM-dd`},
	}, {
		name: "not an iCalendar file",
		file: "apiVersion: v1\nkind: ConfigMap\n", opts: Options{Name: "h", Source: "cm.yaml"},
		code: kube.ExitUsage, want: []string{"cm.yaml is not an iCalendar file"},
	}, {
		name: "no events",
		file: ics("BEGIN:VTODO\nUID:1\nSUMMARY:Buy milk\nEND:VTODO"), opts: Options{Name: "h", Source: "todo.ics"},
		code: kube.ExitRefused, want: []string{"todo.ics has no events (VEVENT)"},
	}, {
		name: "every event skipped",
		file: ics(vevent("UID:1", "SUMMARY:No start")), opts: Options{Name: "h"},
		code: kube.ExitRefused, want: []string{"makes no day and no period", "every event is skipped"},
	}, {
		name: "a recurrence with no occurrence in the range",
		file: ics(vevent("UID:1", "DTSTART;VALUE=DATE:20200101", "RRULE:FREQ=WEEKLY;COUNT=2", "SUMMARY:Past")), opts: Options{Name: "h"},
		code: kube.ExitRefused, want: []string{"makes no day and no period", "from 2026-11-27 to 2029-11-26", "longer --horizon"},
	}, {
		name: "a misspelt TZID, with the event and its line",
		file: ics(vevent("UID:1", "DTSTART;VALUE=DATE:20270101", "SUMMARY:Fine") +
			vevent("UID:bad@x", "DTSTART;TZID=Europe/Berln:20270101T090000", "DTEND;TZID=Europe/Berln:20270101T100000", "SUMMARY:Meeting")),
		opts: Options{Name: "h", Source: "team.ics"},
		code: kube.ExitRefused, want: []string{`team.ics cannot be imported`, `"Meeting" (UID bad@x, line 9): DTSTART has TZID=Europe/Berln`, `did you mean "Europe/Berlin"`},
	}, {
		name: "an unreadable RRULE",
		file: ics(vevent("UID:1", "DTSTART;VALUE=DATE:20270101", "RRULE:FREQ=FORTNIGHTLY", "SUMMARY:Sprint")),
		opts: Options{Name: "h"},
		code: kube.ExitRefused, want: []string{`"Sprint" (UID 1, line 4): RRULE cannot be read`},
	}, {
		name: "a rule every minute",
		file: ics(vevent("UID:1", "DTSTART:20270101T000000Z", "DURATION:PT1M", "RRULE:FREQ=MINUTELY", "SUMMARY:Tick")),
		opts: Options{Name: "h"},
		code: kube.ExitRefused, want: []string{`"Tick" (UID 1, line 4) recurs every second or minute`},
	}, {
		// The adversarial input: one line of RRULE that would make a day of every date.
		name: "too many days: a daily all-day rule over a long horizon",
		file: ics(vevent("UID:1", "DTSTART;VALUE=DATE:20270101", "SUMMARY:Neujahr") +
			vevent("UID:daily@x", "DTSTART;VALUE=DATE:20200101", "RRULE:FREQ=DAILY", "SUMMARY:Every day")),
		opts: Options{Name: "h", Horizon: "50y", Source: "daily.ics"},
		code: kube.ExitRefused, want: []string{
			`daily.ics makes more than 1000 days, more than a calendar holds (1000)`,
			`"Every day" (UID daily@x, line 9) made more than 1000 (recurring, expanded)`,
			`give a shorter --horizon than 50y`, `split the file`,
		},
	}, {
		name: "too many periods: a daily timed rule over three years",
		file: ics(vevent("UID:1", "DTSTART;TZID=Europe/Berlin:20260101T220000", "DTEND;TZID=Europe/Berlin:20260102T060000", "RRULE:FREQ=DAILY", "SUMMARY:Nightly batch")),
		opts: Options{Name: "h"},
		code: kube.ExitRefused, want: []string{`makes more than 1000 periods`, `"Nightly batch" (UID 1, line 4) made more than 1000`, `shorter --horizon than 3y`},
	}, {
		name: "too many days without recurrence: split the file",
		file: ics(func() string {
			var b strings.Builder
			for i := range 1001 {
				d := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i)
				b.WriteString(vevent("UID:d"+d.Format("20060102"), "DTSTART;VALUE=DATE:"+d.Format("20060102"), "SUMMARY:Day"))
			}
			return b.String()
		}()),
		opts: Options{Name: "h"},
		code: kube.ExitRefused, want: []string{`makes 1001 days, more than a calendar holds (1000)`, `"Day" (UID d20270101, line 4) made 1`, `; split the file`},
	}, {
		name: "a rule that recurs too often to expand",
		file: ics(vevent("UID:1", "DTSTART:19000101T000000Z", "DURATION:PT10M", "RRULE:FREQ=HOURLY", "SUMMARY:Chime")),
		opts: Options{Name: "h"},
		code: kube.ExitRefused, want: []string{`"Chime" (UID 1, line 4) recurs too often to expand`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Import(strings.NewReader(tt.file), tt.opts, now)
			if err == nil {
				t.Fatalf("Import succeeded:\n%s", res.Manifest)
			}
			var ke *kube.Error
			if !errors.As(err, &ke) {
				t.Fatalf("error %v is a %T, want *kube.Error", err, err)
			}
			if ke.Code != tt.code {
				t.Errorf("exit code %d, want %d (%v)", ke.Code, tt.code, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\ndoes not contain\n%s", err, w)
				}
			}
			if res == nil || res.Manifest != nil {
				t.Errorf("a refused import returns a Result with notes and no manifest, got %+v", res)
			}
		})
	}
}
