package timing

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestCompileRejects(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want []FieldError
	}{
		{
			name: "Daily start equals end",
			spec: Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "9:00"},
			want: []FieldError{{Field: FieldEndTime, Value: "9:00", Detail: `"9:00" equals the start time: the window would be empty; an end at or before the start crosses midnight (e.g. 22:00 to 02:00)`}},
		},
		{
			name: "Weekly same day and time",
			spec: Spec{Type: TypeWeekly, StartDayOfWeek: "Monday", StartTime: "09:00", EndDayOfWeek: "mon", EndTime: "09:00"},
			want: []FieldError{{Field: FieldEndTime, Value: "09:00", Detail: "Monday 09:00 is the same day and time as the start: the window would be empty; choose a different end day or time"}},
		},
		{
			name: "OneShot end before start",
			spec: Spec{Type: TypeOneShot, StartTime: "2027-03-14T10:00", EndTime: "2027-03-14T09:00"},
			want: []FieldError{{Field: FieldEndTime, Value: "2027-03-14T09:00", Detail: "2027-03-14T09:00 is not after the start 2027-03-14T10:00: a OneShot window must end after it starts"}},
		},
		{
			name: "OneShot end equals start given in another form",
			spec: Spec{Type: TypeOneShot, StartTime: "2027-03-14T10:00", EndTime: "2027-03-14T10:00:00Z"},
			want: []FieldError{{Field: FieldEndTime, Value: "2027-03-14T10:00:00Z", Detail: "2027-03-14T10:00 is not after the start 2027-03-14T10:00: a OneShot window must end after it starts"}},
		},
		{
			name: "OneShot inside one gap",
			spec: Spec{Type: TypeOneShot, StartTime: "2027-03-14T02:10", EndTime: "2027-03-14T02:40", TimeZone: "America/New_York"},
			want: []FieldError{{Field: FieldEndTime, Value: "2027-03-14T02:40", Detail: "2027-03-14T02:40 and the start 2027-03-14T02:10 both fall into the same daylight saving gap in America/New_York, so the window would be empty: end it at 2027-03-14T03:01 or later"}},
		},
		{
			name: "Cron duration under a minute",
			spec: Spec{Type: TypeCron, Schedule: "0 9 * * *", Duration: "30s"},
			want: []FieldError{{Field: FieldDuration, Value: "30s", Detail: `"30s" is shorter than one minute: expected a Go duration of at least 1m, e.g. "90m" or "2h30m"`}},
		},
		{
			name: "a Cron duration over 366 days",
			spec: Spec{Type: TypeCron, Schedule: "0 0 1 1 *", Duration: "2562047h"},
			want: []FieldError{{Field: FieldDuration, Value: "2562047h", Detail: `"2562047h" is longer than 366 days (8784h), the longest window a Cron window may open: ` +
				`a window that long reaches past the next firing of any schedule that fires at least once a year; use a shorter duration`}},
		},
		{
			name: "Cron duration missing and not a duration",
			spec: Spec{Type: TypeCron, Schedule: "0 9 * * *", Duration: "1 hour"},
			want: []FieldError{{Field: FieldDuration, Value: "1 hour", Detail: `"1 hour" is not a duration: expected a Go duration of at least 1m, e.g. "90m" or "2h30m"`}},
		},
		{
			name: "Cron never fires",
			spec: Spec{Type: TypeCron, Schedule: "0 0 30 2 *", Duration: "1h"},
			want: []FieldError{{Field: FieldSchedule, Value: "0 0 30 2 *", Detail: `"0 0 30 2 *" never fires: no calendar date matches both its day-of-month and month fields (February has no 30th, April no 31st); check those fields`}},
		},
		{
			name: "Cron @every",
			spec: Spec{Type: TypeCron, Schedule: "@every 1h", Duration: "1h"},
			want: []FieldError{{Field: FieldSchedule, Value: "@every 1h", Detail: `"@every 1h" is not supported: @every counts from when the controller started and ignores the time zone; use a 5-field schedule such as "0 * * * *"`}},
		},
		{
			name: "Cron TZ prefix",
			spec: Spec{Type: TypeCron, Schedule: "TZ=Asia/Tokyo 0 9 * * *", Duration: "1h"},
			want: []FieldError{{Field: FieldSchedule, Value: "TZ=Asia/Tokyo 0 9 * * *", Detail: `"TZ=Asia/Tokyo 0 9 * * *" sets a time zone inside the schedule: remove "TZ=Asia/Tokyo" and set the schedule's time zone to "Asia/Tokyo" instead`}},
		},
		{
			name: "unknown type",
			spec: Spec{Type: "Monthly", TimeZone: "Local"},
			want: []FieldError{
				{Field: FieldTimeZone, Value: "Local", Detail: `"Local" means the zone of the machine that evaluates the schedule, which differs between machines: use an IANA name such as "Europe/Berlin", or "UTC"`},
				{Field: FieldType, Value: "Monthly", Detail: `"Monthly" is not a window type: expected one of Daily, Weekly, OneShot or Cron`},
			},
		},
		{
			name: "every error at once",
			spec: Spec{Type: TypeDaily, StartTime: "25:00", EndTime: "", Schedule: "* * * * *", StartDayOfWeek: "Monday", TimeZone: "Asia/Tokio"},
			want: []FieldError{
				{Field: FieldTimeZone, Value: "Asia/Tokio", Detail: `"Asia/Tokio" is not a known IANA time zone: did you mean "Asia/Tokyo"?`},
				{Field: FieldStartDayOfWeek, Value: "Monday", Detail: `"Monday" is set, but Daily windows do not use this field: remove it`},
				{Field: FieldSchedule, Value: "* * * * *", Detail: `"* * * * *" is set, but Daily windows do not use this field: remove it`},
				{Field: FieldStartTime, Value: "25:00", Detail: `"25:00" is not a time of day: expected HH:mm on a 24-hour clock, e.g. "09:30"`},
				{Field: FieldEndTime, Value: "", Detail: `a time of day is required: expected HH:mm on a 24-hour clock, e.g. "09:30"`},
			},
		},
		{
			name: "Weekly with bad days",
			spec: Spec{Type: TypeWeekly, StartDayOfWeek: "Fryday", StartTime: "18:00", EndTime: "08:00"},
			want: []FieldError{
				{Field: FieldStartDayOfWeek, Value: "Fryday", Detail: `"Fryday" is not a day of the week (did you mean "Friday"?): expected Monday to Sunday, or Mon to Sun, e.g. "Friday"`},
				{Field: FieldEndDayOfWeek, Value: "", Detail: `a day of the week is required: expected Monday to Sunday, or Mon to Sun, e.g. "Friday"`},
			},
		},
		{
			name: "OneShot with invalid dates",
			spec: Spec{Type: TypeOneShot, StartTime: "2027-02-29T10:00", EndTime: "2027-03-01T10:00:30"},
			want: []FieldError{
				{Field: FieldStartTime, Value: "2027-02-29T10:00", Detail: `"2027-02-29T10:00" is not a valid date: February 2027 has 28 days`},
				{Field: FieldEndTime, Value: "2027-03-01T10:00:30", Detail: `"2027-03-01T10:00:30" has seconds: times are whole minutes (seconds must be 00), e.g. "2027-03-01T10:00"`},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, errs := tt.spec.Compile()
			if w != nil {
				t.Errorf("Compile returned a window for an invalid spec")
			}
			if diff := cmp.Diff(tt.want, errs); diff != "" {
				t.Errorf("Compile errors mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompileCanonical(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want Spec
	}{
		{
			name: "Daily",
			spec: Spec{Type: TypeDaily, StartTime: "9:00", EndTime: "17:30:00"},
			want: Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "17:30", TimeZone: "UTC"},
		},
		{
			name: "Weekly",
			spec: Spec{Type: TypeWeekly, StartDayOfWeek: "fri", StartTime: "18:00", EndDayOfWeek: "MONDAY", EndTime: "8:00", TimeZone: "europe/berlin"},
			want: Spec{Type: TypeWeekly, StartDayOfWeek: "Friday", StartTime: "18:00", EndDayOfWeek: "Monday", EndTime: "08:00", TimeZone: "Europe/Berlin"},
		},
		{
			name: "OneShot from RFC 3339",
			spec: Spec{Type: TypeOneShot, StartTime: "2028-02-29T00:00:00Z", EndTime: "2028-02-29T18:00", TimeZone: "+09:00"},
			want: Spec{Type: TypeOneShot, StartTime: "2028-02-29T09:00", EndTime: "2028-02-29T18:00", TimeZone: "Etc/GMT-9"},
		},
		{
			name: "Cron",
			spec: Spec{Type: TypeCron, Schedule: " @midnight ", Duration: "90m", TimeZone: "Z"},
			want: Spec{Type: TypeCron, Schedule: "@daily", Duration: "1h30m0s", TimeZone: "UTC"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := compile(t, tt.spec)
			if diff := cmp.Diff(tt.want, w.Canonical()); diff != "" {
				t.Errorf("Canonical mismatch (-want +got):\n%s", diff)
			}
			again := compile(t, w.Canonical())
			if diff := cmp.Diff(w.Canonical(), again.Canonical()); diff != "" {
				t.Errorf("canonical form is not stable (-want +got):\n%s", diff)
			}
		})
	}
}

// ivs builds intervals from pairs of RFC 3339 instants.
func ivs(t *testing.T, pairs ...string) []Interval {
	t.Helper()
	var out []Interval
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, Interval{Start: instant(t, pairs[i]), End: instant(t, pairs[i+1])})
	}
	return out
}

func TestIntervals(t *testing.T) {
	tests := []struct {
		name     string
		spec     Spec
		from, to string
		want     []Interval
	}{
		{
			name: "Daily in New York across spring-forward",
			spec: Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "17:00", TimeZone: "America/New_York"},
			from: "2027-03-13T00:00:00Z", to: "2027-03-15T00:00:00Z",
			want: ivs(t, "2027-03-13T14:00:00Z", "2027-03-13T22:00:00Z", "2027-03-14T13:00:00Z", "2027-03-14T21:00:00Z"),
		},
		{
			name: "Daily crossing midnight into the gap",
			spec: Spec{Type: TypeDaily, StartTime: "22:00", EndTime: "02:00", TimeZone: "America/New_York"},
			from: "2027-03-14T00:00:00Z", to: "2027-03-15T12:00:00Z",
			// Mar 13 22:00 EST → Mar 14 02:00, which does not exist: 03:00 EDT.
			want: ivs(t, "2027-03-14T03:00:00Z", "2027-03-14T07:00:00Z", "2027-03-15T02:00:00Z", "2027-03-15T06:00:00Z"),
		},
		{
			name: "Daily crossing midnight over fall-back lasts five hours",
			spec: Spec{Type: TypeDaily, StartTime: "22:00", EndTime: "02:00", TimeZone: "America/New_York"},
			from: "2027-11-07T00:00:00Z", to: "2027-11-07T12:00:00Z",
			want: ivs(t, "2027-11-07T02:00:00Z", "2027-11-07T07:00:00Z"),
		},
		{
			name: "Daily inside the repeated hour uses first occurrences",
			spec: Spec{Type: TypeDaily, StartTime: "01:00", EndTime: "01:30", TimeZone: "America/New_York"},
			from: "2027-11-07T00:00:00Z", to: "2027-11-08T00:00:00Z",
			want: ivs(t, "2027-11-07T05:00:00Z", "2027-11-07T05:30:00Z"),
		},
		{
			name: "Daily inside the gap is empty that day",
			spec: Spec{Type: TypeDaily, StartTime: "02:10", EndTime: "02:40", TimeZone: "America/New_York"},
			from: "2027-03-13T00:00:00Z", to: "2027-03-16T00:00:00Z",
			want: ivs(t, "2027-03-13T07:10:00Z", "2027-03-13T07:40:00Z", "2027-03-15T06:10:00Z", "2027-03-15T06:40:00Z"),
		},
		{
			name: "Daily starting in the gap starts at the jump",
			spec: Spec{Type: TypeDaily, StartTime: "02:30", EndTime: "03:30", TimeZone: "America/New_York"},
			from: "2027-03-14T00:00:00Z", to: "2027-03-15T00:00:00Z",
			want: ivs(t, "2027-03-14T07:00:00Z", "2027-03-14T07:30:00Z"),
		},
		{
			name: "Daily in Europe/Berlin across fall-back",
			spec: Spec{Type: TypeDaily, StartTime: "02:30", EndTime: "06:00", TimeZone: "Europe/Berlin"},
			from: "2027-10-30T12:00:00Z", to: "2027-11-01T00:00:00Z",
			want: ivs(t, "2027-10-31T00:30:00Z", "2027-10-31T05:00:00Z"),
		},
		{
			name: "Daily in Sydney on the October spring-forward",
			spec: Spec{Type: TypeDaily, StartTime: "01:00", EndTime: "03:00", TimeZone: "Australia/Sydney"},
			from: "2027-10-02T12:00:00Z", to: "2027-10-03T12:00:00Z",
			want: ivs(t, "2027-10-02T15:00:00Z", "2027-10-02T16:00:00Z"),
		},
		{
			name: "Daily in Sydney on the April fall-back",
			spec: Spec{Type: TypeDaily, StartTime: "01:00", EndTime: "03:00", TimeZone: "Australia/Sydney"},
			from: "2027-04-03T12:00:00Z", to: "2027-04-04T12:00:00Z",
			want: ivs(t, "2027-04-03T14:00:00Z", "2027-04-03T17:00:00Z"),
		},
		{
			name: "Daily from midnight in Sao Paulo when midnight did not exist",
			spec: Spec{Type: TypeDaily, StartTime: "00:00", EndTime: "06:00", TimeZone: "America/Sao_Paulo"},
			from: "2018-11-04T00:00:00Z", to: "2018-11-04T12:00:00Z",
			want: ivs(t, "2018-11-04T03:00:00Z", "2018-11-04T08:00:00Z"),
		},
		{
			name: "Daily across the repeated hour before midnight in Sao Paulo",
			spec: Spec{Type: TypeDaily, StartTime: "23:30", EndTime: "00:30", TimeZone: "America/Sao_Paulo"},
			from: "2019-02-16T12:00:00Z", to: "2019-02-17T12:00:00Z",
			want: ivs(t, "2019-02-17T01:30:00Z", "2019-02-17T03:30:00Z"),
		},
		{
			name: "Daily in Chatham on spring-forward",
			spec: Spec{Type: TypeDaily, StartTime: "02:00", EndTime: "04:00", TimeZone: "Pacific/Chatham"},
			from: "2027-09-25T00:00:00Z", to: "2027-09-26T00:00:00Z",
			want: ivs(t, "2027-09-25T13:15:00Z", "2027-09-25T14:15:00Z"),
		},
		{
			name: "Daily in Chatham on fall-back",
			spec: Spec{Type: TypeDaily, StartTime: "02:00", EndTime: "04:00", TimeZone: "Pacific/Chatham"},
			from: "2027-04-03T00:00:00Z", to: "2027-04-04T00:00:00Z",
			want: ivs(t, "2027-04-03T12:15:00Z", "2027-04-03T15:15:00Z"),
		},
		{
			name: "Daily in Tokyo crossing midnight",
			spec: Spec{Type: TypeDaily, StartTime: "22:00", EndTime: "06:00", TimeZone: "Asia/Tokyo"},
			from: "2027-03-13T20:00:00Z", to: "2027-03-15T00:00:00Z",
			want: ivs(t, "2027-03-13T13:00:00Z", "2027-03-13T21:00:00Z", "2027-03-14T13:00:00Z", "2027-03-14T21:00:00Z"),
		},
		{
			name: "Weekly across the weekend with spring-forward on Sunday",
			spec: Spec{Type: TypeWeekly, StartDayOfWeek: "Friday", StartTime: "18:00", EndDayOfWeek: "Monday", EndTime: "08:00", TimeZone: "Europe/Berlin"},
			from: "2027-03-22T12:00:00Z", to: "2027-04-03T00:00:00Z",
			want: ivs(t, "2027-03-26T17:00:00Z", "2027-03-29T06:00:00Z", "2027-04-02T16:00:00Z", "2027-04-05T06:00:00Z"),
		},
		{
			name: "Weekly on the same day with the end before the start lasts nearly a week",
			spec: Spec{Type: TypeWeekly, StartDayOfWeek: "Monday", StartTime: "10:00", EndDayOfWeek: "Monday", EndTime: "09:00"},
			from: "2027-03-15T09:30:00Z", to: "2027-03-16T00:00:00Z",
			want: ivs(t, "2027-03-08T10:00:00Z", "2027-03-15T09:00:00Z", "2027-03-15T10:00:00Z", "2027-03-22T09:00:00Z")[1:],
		},
		{
			name: "Weekly weekday is the local one",
			spec: Spec{Type: TypeWeekly, StartDayOfWeek: "Monday", StartTime: "01:00", EndDayOfWeek: "Monday", EndTime: "05:00", TimeZone: "Asia/Tokyo"},
			from: "2027-03-14T00:00:00Z", to: "2027-03-15T00:00:00Z",
			want: ivs(t, "2027-03-14T16:00:00Z", "2027-03-14T20:00:00Z"), // a Sunday in UTC
		},
		{
			name: "Weekly Saturday night into the New York gap",
			spec: Spec{Type: TypeWeekly, StartDayOfWeek: "Sat", StartTime: "22:00", EndDayOfWeek: "Sun", EndTime: "02:30", TimeZone: "America/New_York"},
			from: "2027-03-13T00:00:00Z", to: "2027-03-15T00:00:00Z",
			want: ivs(t, "2027-03-14T03:00:00Z", "2027-03-14T07:00:00Z"),
		},
		{
			name: "Weekly across the weekend with fall-back on Sunday in Berlin lasts 63 hours",
			spec: Spec{Type: TypeWeekly, StartDayOfWeek: "Friday", StartTime: "18:00", EndDayOfWeek: "Monday", EndTime: "08:00", TimeZone: "Europe/Berlin"},
			from: "2027-10-26T00:00:00Z", to: "2027-11-02T00:00:00Z",
			want: ivs(t, "2027-10-29T16:00:00Z", "2027-11-01T07:00:00Z"),
		},
		{
			name: "Weekly across the weekend with fall-back on Sunday in New York",
			spec: Spec{Type: TypeWeekly, StartDayOfWeek: "Friday", StartTime: "18:00", EndDayOfWeek: "Monday", EndTime: "08:00", TimeZone: "America/New_York"},
			from: "2027-11-02T00:00:00Z", to: "2027-11-09T00:00:00Z",
			want: ivs(t, "2027-11-05T22:00:00Z", "2027-11-08T13:00:00Z"),
		},
		{
			name: "Weekly across the weekend with spring-forward on Sunday in Sydney lasts 61 hours",
			spec: Spec{Type: TypeWeekly, StartDayOfWeek: "Friday", StartTime: "18:00", EndDayOfWeek: "Monday", EndTime: "08:00", TimeZone: "Australia/Sydney"},
			from: "2027-09-28T00:00:00Z", to: "2027-10-05T00:00:00Z",
			want: ivs(t, "2027-10-01T08:00:00Z", "2027-10-03T21:00:00Z"),
		},
		{
			name: "Weekly Saturday night to Sunday midnight in Sao Paulo when midnight did not exist",
			spec: Spec{Type: TypeWeekly, StartDayOfWeek: "Saturday", StartTime: "22:00", EndDayOfWeek: "Sunday", EndTime: "00:00", TimeZone: "America/Sao_Paulo"},
			from: "2018-11-01T00:00:00Z", to: "2018-11-06T00:00:00Z",
			want: ivs(t, "2018-11-04T01:00:00Z", "2018-11-04T03:00:00Z"), // ends at 01:00 -02, the jump
		},
		{
			name: "Weekly Saturday night into the Chatham gap",
			spec: Spec{Type: TypeWeekly, StartDayOfWeek: "Saturday", StartTime: "22:00", EndDayOfWeek: "Sunday", EndTime: "03:00", TimeZone: "Pacific/Chatham"},
			from: "2027-09-22T00:00:00Z", to: "2027-09-28T00:00:00Z",
			want: ivs(t, "2027-09-25T09:15:00Z", "2027-09-25T14:00:00Z"), // 03:00 does not exist: 03:45 +1345
		},
		{
			name: "Weekly across the weekend in Tokyo lasts 62 hours while New York springs forward",
			spec: Spec{Type: TypeWeekly, StartDayOfWeek: "Friday", StartTime: "18:00", EndDayOfWeek: "Monday", EndTime: "08:00", TimeZone: "Asia/Tokyo"},
			from: "2027-03-10T00:00:00Z", to: "2027-03-16T00:00:00Z",
			want: ivs(t, "2027-03-12T09:00:00Z", "2027-03-14T23:00:00Z"),
		},
		{
			name: "Daily crossing midnight into and out of Feb 29 in Tokyo",
			spec: Spec{Type: TypeDaily, StartTime: "22:00", EndTime: "02:00", TimeZone: "Asia/Tokyo"},
			from: "2028-02-28T12:00:00Z", to: "2028-02-29T18:00:00Z",
			want: ivs(t, "2028-02-28T13:00:00Z", "2028-02-28T17:00:00Z", "2028-02-29T13:00:00Z", "2028-02-29T17:00:00Z"),
		},
		{
			name: "Weekly from Tuesday Feb 29 to Thursday Mar 2",
			spec: Spec{Type: TypeWeekly, StartDayOfWeek: "Tue", StartTime: "00:00", EndDayOfWeek: "Thu", EndTime: "00:00"},
			from: "2028-02-27T00:00:00Z", to: "2028-03-03T00:00:00Z",
			want: ivs(t, "2028-02-29T00:00:00Z", "2028-03-02T00:00:00Z"),
		},
		{
			name: "Cron window on Feb 29 only, in leap years",
			spec: Spec{Type: TypeCron, Schedule: "0 12 29 2 *", Duration: "2h"},
			from: "2027-01-01T00:00:00Z", to: "2033-01-01T00:00:00Z",
			want: ivs(t, "2028-02-29T12:00:00Z", "2028-02-29T14:00:00Z", "2032-02-29T12:00:00Z", "2032-02-29T14:00:00Z"),
		},
		{
			name: "OneShot on Feb 29",
			spec: Spec{Type: TypeOneShot, StartTime: "2028-02-29T09:00", EndTime: "2028-02-29T17:00", TimeZone: "Asia/Tokyo"},
			from: "2028-01-01T00:00:00Z", to: "2029-01-01T00:00:00Z",
			want: ivs(t, "2028-02-29T00:00:00Z", "2028-02-29T08:00:00Z"),
		},
		{
			name: "Cron window every weekday",
			spec: Spec{Type: TypeCron, Schedule: "0 9 * * MON-FRI", Duration: "8h", TimeZone: "America/New_York"},
			from: "2027-03-12T00:00:00Z", to: "2027-03-16T00:00:00Z",
			want: ivs(t, "2027-03-12T14:00:00Z", "2027-03-12T22:00:00Z", "2027-03-15T13:00:00Z", "2027-03-15T21:00:00Z"),
		},
		{
			name: "Cron windows that overlap are merged",
			spec: Spec{Type: TypeCron, Schedule: "0 9,10 * * *", Duration: "90m"},
			from: "2027-01-01T00:00:00Z", to: "2027-01-02T00:00:00Z",
			want: ivs(t, "2027-01-01T09:00:00Z", "2027-01-01T11:30:00Z"),
		},
		{
			name: "Cron windows that touch are merged",
			spec: Spec{Type: TypeCron, Schedule: "0 9,10 * * *", Duration: "1h"},
			from: "2027-01-01T00:00:00Z", to: "2027-01-02T00:00:00Z",
			want: ivs(t, "2027-01-01T09:00:00Z", "2027-01-01T11:00:00Z"),
		},
		{
			name: "Cron windows apart stay apart",
			spec: Spec{Type: TypeCron, Schedule: "0 9,11 * * *", Duration: "1h"},
			from: "2027-01-01T00:00:00Z", to: "2027-01-02T00:00:00Z",
			want: ivs(t, "2027-01-01T09:00:00Z", "2027-01-01T10:00:00Z", "2027-01-01T11:00:00Z", "2027-01-01T12:00:00Z"),
		},
		{
			name: "always-open Cron window is one interval per local day",
			spec: Spec{Type: TypeCron, Schedule: "*/5 * * * *", Duration: "10m", TimeZone: "America/New_York"},
			from: "2027-03-14T04:00:00Z", to: "2027-03-16T00:00:00Z",
			want: ivs(t,
				"2027-03-13T05:00:00Z", "2027-03-14T05:00:00Z",
				"2027-03-14T05:00:00Z", "2027-03-15T04:00:00Z", // the 23-hour day
				"2027-03-15T04:00:00Z", "2027-03-16T04:00:00Z"),
		},
		{
			name: "Cron window longer than its period is cut at each day's first firing",
			spec: Spec{Type: TypeCron, Schedule: "0 9 * * *", Duration: "25h"},
			from: "2027-01-01T12:00:00Z", to: "2027-01-02T12:00:00Z",
			want: ivs(t, "2027-01-01T09:00:00Z", "2027-01-02T09:00:00Z", "2027-01-02T09:00:00Z", "2027-01-03T09:00:00Z"),
		},
		{
			name: "Cron window in a gap opens at the jump",
			spec: Spec{Type: TypeCron, Schedule: "30 2 * * *", Duration: "1h", TimeZone: "Europe/Berlin"},
			from: "2027-03-28T00:00:00Z", to: "2027-03-29T00:00:00Z",
			want: ivs(t, "2027-03-28T01:00:00Z", "2027-03-28T02:00:00Z"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := compile(t, tt.spec)
			got := intervals(t, w, instant(t, tt.from), instant(t, tt.to))
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Intervals mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWindowQueries(t *testing.T) {
	// 09:00-17:00 in New York: on 2027-03-15 that is 13:00Z-21:00Z.
	daily := compile(t, Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "17:00", TimeZone: "America/New_York"})
	today := Interval{Start: instant(t, "2027-03-15T13:00:00Z"), End: instant(t, "2027-03-15T21:00:00Z")}
	tomorrow := Interval{Start: instant(t, "2027-03-16T13:00:00Z"), End: instant(t, "2027-03-16T21:00:00Z")}

	tests := []struct {
		name         string
		at           string
		wantActive   bool
		wantNext     Interval
		wantBoundary string
	}{
		{name: "before the start", at: "2027-03-15T12:59:59Z", wantNext: today, wantBoundary: "2027-03-15T13:00:00Z"},
		{name: "at the start", at: "2027-03-15T13:00:00Z", wantActive: true, wantNext: today, wantBoundary: "2027-03-15T21:00:00Z"},
		{name: "inside", at: "2027-03-15T20:59:59Z", wantActive: true, wantNext: today, wantBoundary: "2027-03-15T21:00:00Z"},
		{name: "at the end", at: "2027-03-15T21:00:00Z", wantNext: tomorrow, wantBoundary: "2027-03-16T13:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at := instant(t, tt.at)
			iv, active := daily.ActiveAt(at)
			if diff := cmp.Diff(tt.wantActive, active); diff != "" {
				t.Errorf("ActiveAt active mismatch (-want +got):\n%s", diff)
			}
			if active {
				if diff := cmp.Diff(tt.wantNext, iv); diff != "" {
					t.Errorf("ActiveAt interval mismatch (-want +got):\n%s", diff)
				}
			}
			next, ok := daily.NextInterval(at)
			if diff := cmp.Diff(tt.wantNext, next); !ok || diff != "" {
				t.Errorf("NextInterval = %v (-want +got):\n%s", ok, diff)
			}
			boundary, ok := daily.NextBoundary(at)
			if diff := cmp.Diff(instant(t, tt.wantBoundary), boundary); !ok || diff != "" {
				t.Errorf("NextBoundary = %v (-want +got):\n%s", ok, diff)
			}
		})
	}
}

func TestOneShotStaleAndPast(t *testing.T) {
	w := compile(t, Spec{Type: TypeOneShot, StartTime: "2028-02-29T09:00", EndTime: "2028-02-29T17:00", TimeZone: "Asia/Tokyo"})
	end := instant(t, "2028-02-29T08:00:00Z")
	if w.Stale(end.Add(-time.Second)) {
		t.Error("Stale a second before the end")
	}
	if !w.Stale(end) {
		t.Error("not Stale at the end")
	}
	if iv, ok := w.NextInterval(end); ok {
		t.Errorf("NextInterval after the end = %v", iv)
	}
	if b, ok := w.NextBoundary(end); ok {
		t.Errorf("NextBoundary after the end = %v", b)
	}
	if b, ok := w.NextBoundary(end.Add(-time.Second)); !ok || !b.Equal(end) {
		t.Errorf("NextBoundary before the end = %v, %v; want %v", b, ok, end)
	}
	daily := compile(t, Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "17:00"})
	if daily.Stale(end) {
		t.Error("a Daily window is Stale")
	}
}

func TestCronWindowActiveAt(t *testing.T) {
	// Firings at 09:00 and 10:00 with 90 minutes merge into 09:00-11:30; any instant inside
	// reports the whole merged interval.
	w := compile(t, Spec{Type: TypeCron, Schedule: "0 9,10 * * *", Duration: "90m"})
	want := Interval{Start: instant(t, "2027-01-01T09:00:00Z"), End: instant(t, "2027-01-01T11:30:00Z")}
	for _, at := range []string{"2027-01-01T09:00:00Z", "2027-01-01T10:00:00Z", "2027-01-01T10:45:00Z", "2027-01-01T11:29:59Z"} {
		iv, ok := w.ActiveAt(instant(t, at))
		if diff := cmp.Diff(want, iv); !ok || diff != "" {
			t.Errorf("ActiveAt(%s) = %v (-want +got):\n%s", at, ok, diff)
		}
	}
	for _, at := range []string{"2027-01-01T08:59:59Z", "2027-01-01T11:30:00Z"} {
		if iv, ok := w.ActiveAt(instant(t, at)); ok {
			t.Errorf("ActiveAt(%s) = %v, want inactive", at, iv)
		}
	}
}

// TestIntervalsAreConsistent checks, for windows of every type in DST zones, that ActiveAt
// agrees with Intervals at every 10 minutes of a month around transitions, and that
// intervals are ordered, non-empty and disjoint.
func TestIntervalsAreConsistent(t *testing.T) {
	specs := []Spec{
		{Type: TypeDaily, StartTime: "02:30", EndTime: "01:30"},
		{Type: TypeDaily, StartTime: "00:00", EndTime: "02:15"},
		{Type: TypeWeekly, StartDayOfWeek: "Saturday", StartTime: "23:30", EndDayOfWeek: "Sunday", EndTime: "02:30"},
		{Type: TypeCron, Schedule: "*/20 0-3 * * *", Duration: "30m"},
		{Type: TypeCron, Schedule: "0 */6 * * *", Duration: "7h"},
	}
	periods := map[string][2]string{
		"America/New_York":  {"2027-03-01T00:00:00Z", "2027-03-31T00:00:00Z"},
		"Australia/Sydney":  {"2027-03-20T00:00:00Z", "2027-04-20T00:00:00Z"},
		"America/Sao_Paulo": {"2018-10-20T00:00:00Z", "2018-11-20T00:00:00Z"},
		"Pacific/Chatham":   {"2027-09-10T00:00:00Z", "2027-10-10T00:00:00Z"},
	}
	for zone, period := range periods {
		from, to := instant(t, period[0]), instant(t, period[1])
		for _, spec := range specs {
			spec.TimeZone = zone
			w := compile(t, spec)
			all := intervals(t, w, from, to)
			for i, iv := range all {
				if !iv.End.After(iv.Start) || (i > 0 && iv.Start.Before(all[i-1].End)) {
					t.Fatalf("%s %+v: intervals not ordered, disjoint and non-empty: %v", zone, spec, all)
				}
			}
			for at := from; at.Before(to); at = at.Add(10 * time.Minute) {
				var want Interval
				inside := false
				for _, iv := range all {
					if iv.Contains(at) {
						want, inside = iv, true
					}
				}
				got, ok := w.ActiveAt(at)
				if ok != inside || got != want {
					t.Fatalf("%s %+v: ActiveAt(%s) = %v, %v; Intervals say %v, %v", zone, spec, at, got, ok, want, inside)
				}
			}
		}
	}
}
