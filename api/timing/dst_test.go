package timing

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestDSTNotes(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		from string
		want []DSTNote
	}{
		{
			name: "Daily in New York",
			spec: Spec{Type: TypeDaily, StartTime: "02:30", EndTime: "01:30", TimeZone: "America/New_York"},
			from: "2027-01-01T00:00:00Z",
			want: []DSTNote{
				{Field: FieldStartTime, Date: "2027-03-14", Kind: Gap, Message: "02:30 does not exist in America/New_York on 2027-03-14 (clocks jump from 02:00 to 03:00): the window starts at 03:00 EDT (07:00 UTC)"},
				{Field: FieldEndTime, Date: "2027-11-07", Kind: Repeat, Message: "01:30 occurs twice in America/New_York on 2027-11-07 (clocks go back from 02:00 to 01:00): the window ends at the first occurrence, 01:30 EDT (05:30 UTC)"},
			},
		},
		{
			name: "next occurrence after from",
			spec: Spec{Type: TypeDaily, StartTime: "02:30", EndTime: "04:00", TimeZone: "America/New_York"},
			from: "2027-03-15T00:00:00Z",
			want: []DSTNote{
				{Field: FieldStartTime, Date: "2028-03-12", Kind: Gap, Message: "02:30 does not exist in America/New_York on 2028-03-12 (clocks jump from 02:00 to 03:00): the window starts at 03:00 EDT (07:00 UTC)"},
			},
		},
		{
			name: "Weekly on the transition weekday",
			spec: Spec{Type: TypeWeekly, StartDayOfWeek: "Sunday", StartTime: "02:30", EndDayOfWeek: "Sunday", EndTime: "05:00", TimeZone: "Europe/Berlin"},
			from: "2027-01-01T00:00:00Z",
			want: []DSTNote{
				{Field: FieldStartTime, Date: "2027-03-28", Kind: Gap, Message: "02:30 does not exist in Europe/Berlin on 2027-03-28 (clocks jump from 02:00 to 03:00): the window starts at 03:00 CEST (01:00 UTC)"},
				{Field: FieldStartTime, Date: "2027-10-31", Kind: Repeat, Message: "02:30 occurs twice in Europe/Berlin on 2027-10-31 (clocks go back from 03:00 to 02:00): the window starts at the first occurrence, 02:30 CEST (00:30 UTC)"},
			},
		},
		{
			name: "Weekly on another weekday",
			spec: Spec{Type: TypeWeekly, StartDayOfWeek: "Saturday", StartTime: "02:30", EndDayOfWeek: "Saturday", EndTime: "05:00", TimeZone: "Europe/Berlin"},
			from: "2027-01-01T00:00:00Z",
		},
		{
			name: "Sydney repeats in April and skips in October",
			spec: Spec{Type: TypeDaily, StartTime: "02:30", EndTime: "03:30", TimeZone: "Australia/Sydney"},
			from: "2027-01-01T00:00:00Z",
			want: []DSTNote{
				{Field: FieldStartTime, Date: "2027-04-04", Kind: Repeat, Message: "02:30 occurs twice in Australia/Sydney on 2027-04-04 (clocks go back from 03:00 to 02:00): the window starts at the first occurrence, 02:30 AEDT (2027-04-03 15:30 UTC)"},
				{Field: FieldStartTime, Date: "2027-10-03", Kind: Gap, Message: "02:30 does not exist in Australia/Sydney on 2027-10-03 (clocks jump from 02:00 to 03:00): the window starts at 03:00 AEDT (2027-10-02 16:00 UTC)"},
			},
		},
		{
			name: "Sao Paulo midnight",
			spec: Spec{Type: TypeDaily, StartTime: "00:00", EndTime: "06:00", TimeZone: "America/Sao_Paulo"},
			from: "2018-01-01T00:00:00Z",
			want: []DSTNote{
				{Field: FieldStartTime, Date: "2018-11-04", Kind: Gap, Message: "00:00 does not exist in America/Sao_Paulo on 2018-11-04 (clocks jump from 00:00 to 01:00): the window starts at 01:00 -02 (03:00 UTC)"},
			},
		},
		{
			name: "Chatham",
			spec: Spec{Type: TypeDaily, StartTime: "03:00", EndTime: "06:00", TimeZone: "Pacific/Chatham"},
			from: "2027-01-01T00:00:00Z",
			want: []DSTNote{
				{Field: FieldStartTime, Date: "2027-04-04", Kind: Repeat, Message: "03:00 occurs twice in Pacific/Chatham on 2027-04-04 (clocks go back from 03:45 to 02:45): the window starts at the first occurrence, 03:00 +1345 (2027-04-03 13:15 UTC)"},
				{Field: FieldStartTime, Date: "2027-09-26", Kind: Gap, Message: "03:00 does not exist in Pacific/Chatham on 2027-09-26 (clocks jump from 02:45 to 03:45): the window starts at 03:45 +1345 (2027-09-25 14:00 UTC)"},
			},
		},
		{
			name: "Tokyo has none",
			spec: Spec{Type: TypeDaily, StartTime: "02:30", EndTime: "01:30", TimeZone: "Asia/Tokyo"},
			from: "2027-01-01T00:00:00Z",
		},
		{
			name: "OneShot in the repeated hour",
			spec: Spec{Type: TypeOneShot, StartTime: "2027-11-07T01:30", EndTime: "2027-11-07T03:00", TimeZone: "America/New_York"},
			from: "2027-01-01T00:00:00Z",
			want: []DSTNote{
				{Field: FieldStartTime, Date: "2027-11-07", Kind: Repeat, Message: "01:30 occurs twice in America/New_York on 2027-11-07 (clocks go back from 02:00 to 01:00): the window starts at the first occurrence, 01:30 EDT (05:30 UTC)"},
			},
		},
		{
			name: "Cron slot in the gap",
			spec: Spec{Type: TypeCron, Schedule: "30 2 * * *", Duration: "1h", TimeZone: "America/New_York"},
			from: "2027-01-01T00:00:00Z",
			want: []DSTNote{
				{Field: FieldSchedule, Date: "2027-03-14", Kind: Gap, Message: "the 02:30 run does not exist in America/New_York on 2027-03-14 (clocks jump from 02:00 to 03:00): it runs at 03:00 EDT (07:00 UTC)"},
			},
		},
		{
			name: "Cron slot in the repeat",
			spec: Spec{Type: TypeCron, Schedule: "0 1 * * *", Duration: "1h", TimeZone: "America/New_York"},
			from: "2027-01-01T00:00:00Z",
			want: []DSTNote{
				{Field: FieldSchedule, Date: "2027-11-07", Kind: Repeat, Message: "the 01:00 run occurs twice in America/New_York on 2027-11-07 (clocks go back from 02:00 to 01:00): it runs once, at its first occurrence, 01:00 EDT (05:00 UTC)"},
			},
		},
		{
			name: "Cron slots in both",
			spec: Spec{Type: TypeCron, Schedule: "*/15 * * * *", Duration: "1h", TimeZone: "Europe/Berlin"},
			from: "2027-01-01T00:00:00Z",
			want: []DSTNote{
				{Field: FieldSchedule, Date: "2027-03-28", Kind: Gap, Message: "the 4 runs from 02:00 to 02:45 do not exist in Europe/Berlin on 2027-03-28 (clocks jump from 02:00 to 03:00): they run once, at 03:00 CEST (01:00 UTC), together with the 03:00 run"},
				{Field: FieldSchedule, Date: "2027-10-31", Kind: Repeat, Message: "the 4 runs from 02:00 to 02:45 occur twice in Europe/Berlin on 2027-10-31 (clocks go back from 03:00 to 02:00): each runs once, at its first occurrence, the first at 02:00 CEST (00:00 UTC)"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := compile(t, tt.spec).DSTNotes(instant(t, tt.from))
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("DSTNotes mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLocalDateTimeDSTNote(t *testing.T) {
	zone, err := NormalizeZone("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	at, err := ParseLocalDateTime("2027-03-14T02:30", zone.Location)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := at.DSTNote(zone, "at", "the Job runs")
	want := DSTNote{Field: "at", Date: "2027-03-14", Kind: Gap, Message: "02:30 does not exist in America/New_York on 2027-03-14 (clocks jump from 02:00 to 03:00): the Job runs at 03:00 EDT (07:00 UTC)"}
	if diff := cmp.Diff(want, got); !ok || diff != "" {
		t.Errorf("DSTNote = %v (-want +got):\n%s", ok, diff)
	}
	if _, ok := (LocalDateTime{Year: 2027, Month: 3, Day: 14, Hour: 3}).DSTNote(zone, "at", "the Job runs"); ok {
		t.Error("DSTNote for a normal time")
	}
}
