package timing

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNormalizeZone(t *testing.T) {
	tests := []struct {
		in          string
		want        string
		wantWarning string // a substring of the warning; "" means no warning
		wantErr     string
	}{
		// Canonical spelling.
		{in: "Asia/Tokyo", want: "Asia/Tokyo"},
		{in: "asia/tokyo", want: "Asia/Tokyo"},
		{in: "AMERICA/NEW_YORK", want: "America/New_York"},
		{in: "america/argentina/buenos_aires", want: "America/Argentina/Buenos_Aires"},
		{in: " Europe/Berlin ", want: "Europe/Berlin"},
		{in: "Japan", want: "Japan"},

		// UTC aliases.
		{in: "UTC", want: "UTC"},
		{in: "utc", want: "UTC"},
		{in: "Z", want: "UTC"},
		{in: "z", want: "UTC"},
		{in: "Etc/UTC", want: "UTC"},
		{in: "etc/utc", want: "UTC"},
		{in: "Etc/Zulu", want: "UTC"},
		{in: "Zulu", want: "UTC"},
		{in: "UCT", want: "UTC"},
		{in: "Universal", want: "UTC"},
		{in: "GMT", want: "UTC"},
		{in: "gmt", want: "UTC"},
		{in: "Etc/GMT", want: "UTC"},
		{in: "GMT0", want: "UTC"},
		{in: "Etc/GMT+0", want: "UTC"},
		{in: "Greenwich", want: "UTC"},

		// Whole-hour offsets: the POSIX sign is inverted.
		{in: "+09:00", want: "Etc/GMT-9"},
		{in: "+0900", want: "Etc/GMT-9"},
		{in: "+9", want: "Etc/GMT-9"},
		{in: "+09", want: "Etc/GMT-9"},
		{in: "UTC+9", want: "Etc/GMT-9"},
		{in: "utc+09:00", want: "Etc/GMT-9"},
		{in: "GMT+09:00", want: "Etc/GMT-9"},
		{in: "-05:00", want: "Etc/GMT+5"},
		{in: "UTC-5", want: "Etc/GMT+5"},
		{in: "GMT-0500", want: "Etc/GMT+5"},
		{in: "+14:00", want: "Etc/GMT-14"},
		{in: "-12:00", want: "Etc/GMT+12"},
		{in: "+00:00", want: "UTC"},
		{in: "-00:00", want: "UTC"},
		{in: "UTC+0", want: "UTC"},
		// Etc/ names keep their POSIX meaning.
		{in: "Etc/GMT-9", want: "Etc/GMT-9"},
		{in: "etc/gmt+5", want: "Etc/GMT+5"},

		// Legacy names: accepted, with a warning naming the zone probably meant.
		{in: "EST", want: "EST", wantWarning: "EST is a fixed UTC-05:00 offset without daylight saving time; for US Eastern time use America/New_York"},
		{in: "est", want: "EST", wantWarning: "America/New_York"},
		{in: "MST", want: "MST", wantWarning: "America/Denver"},
		{in: "HST", want: "HST", wantWarning: "Pacific/Honolulu"},
		{in: "EST5EDT", want: "EST5EDT", wantWarning: "America/New_York"},
		{in: "CST6CDT", want: "CST6CDT", wantWarning: "America/Chicago"},
		{in: "MST7MDT", want: "MST7MDT", wantWarning: "America/Denver"},
		{in: "pst8pdt", want: "PST8PDT", wantWarning: "America/Los_Angeles"},
		{in: "CET", want: "CET", wantWarning: "Europe/Berlin"},
		{in: "WET", want: "WET", wantWarning: "Europe/Lisbon"},

		// Rejected forms.
		{in: "", wantErr: `a time zone is required: expected an IANA name such as "Europe/Berlin", or "UTC"`},
		{in: "Local", wantErr: `"Local" means the zone of the machine that evaluates the schedule, which differs between machines: use an IANA name such as "Europe/Berlin", or "UTC"`},
		{in: "local", wantErr: `"local" means the zone of the machine`},
		{in: "TZ=Asia/Tokyo", wantErr: `"TZ=Asia/Tokyo" has a "TZ=" prefix: write the zone name alone, e.g. "Asia/Tokyo"`},
		{in: "TZ=", wantErr: `"TZ=" is a "TZ=" prefix without a zone: write an IANA zone name alone, such as "Europe/Berlin", or "UTC"`},
		{in: "cron_tz= ", wantErr: `"cron_tz=" is a "cron_tz=" prefix without a zone: write an IANA zone name alone, such as "Europe/Berlin", or "UTC"`},
		{in: "CRON_TZ=Europe/Berlin", wantErr: `"CRON_TZ=Europe/Berlin" has a "CRON_TZ=" prefix: write the zone name alone, e.g. "Europe/Berlin"`},
		{in: "Factory", wantErr: `"Factory" is not a known IANA time zone`},
		{in: "+05:30", wantErr: `"+05:30" is not a whole-hour offset: only whole-hour offsets have a fixed zone (Etc/GMT±N); use the IANA zone of the place instead, e.g. "Asia/Kolkata" for +05:30`},
		{in: "UTC+5:30", wantErr: `e.g. "Asia/Kolkata" for +05:30`},
		{in: "+05:45", wantErr: `e.g. "Asia/Kathmandu" for +05:45`},
		{in: "+09:30", wantErr: `e.g. "Australia/Darwin" for +09:30`},
		{in: "-03:30", wantErr: `e.g. "America/St_Johns" for -03:30`},
		{in: "+03:30", wantErr: `e.g. "Asia/Tehran" for +03:30`},
		{in: "+04:30", wantErr: `e.g. "Asia/Kabul" for +04:30`},
		{in: "+06:30", wantErr: `e.g. "Asia/Yangon" for +06:30`},
		{in: "+08:45", wantErr: `e.g. "Australia/Eucla" for +08:45`},
		{in: "+10:30", wantErr: `e.g. "Australia/Lord_Howe" for +10:30`},
		{in: "+12:45", wantErr: `e.g. "Pacific/Chatham" for +12:45`},
		{in: "-09:30", wantErr: `e.g. "Pacific/Marquesas" for -09:30`},
		{in: "+07:30", wantErr: `"+07:30" is not a whole-hour offset: only whole-hour offsets have a fixed zone (Etc/GMT±N); use the IANA zone of the place instead (Area/City)`},
		{in: "+05:60", wantErr: `"+05:60" is not a valid UTC offset: minutes go from 00 to 59`},
		{in: "+15", wantErr: `"+15" is not a UTC offset in use: offsets go from -12:00 to +14:00`},
		{in: "-13:00", wantErr: `"-13:00" is not a UTC offset in use: offsets go from -12:00 to +14:00`},

		// Unknown names, with suggestions.
		{in: "Asia/Tokio", wantErr: `"Asia/Tokio" is not a known IANA time zone: did you mean "Asia/Tokyo"?`},
		{in: "America/NewYork", wantErr: `"America/NewYork" is not a known IANA time zone: did you mean "America/New_York"?`},
		{in: "Tokyo", wantErr: `"Tokyo" is not a known IANA time zone: did you mean "Asia/Tokyo"?`},
		{in: "new york", wantErr: `"new york" is not a known IANA time zone: did you mean "America/New_York"?`},
		{in: "Europe/Berln", wantErr: `"Europe/Berln" is not a known IANA time zone: did you mean "Europe/Berlin"?`},
		{in: "PST", wantErr: `"PST" is not a known IANA time zone: did you mean "America/Los_Angeles"?`},
		{in: "IST", wantErr: `"IST" is not a known IANA time zone: did you mean "Asia/Kolkata", "Europe/Dublin" or "Asia/Jerusalem"?`},
		{in: "Mars/Olympus_Mons", wantErr: `"Mars/Olympus_Mons" is not a known IANA time zone: expected a name such as "Europe/Berlin", "America/New_York" or "UTC", or a whole-hour offset such as "+09:00"`},
		{in: "+900", wantErr: `"+900" is not a known IANA time zone: expected a name such as`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := NormalizeZone(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) && !strings.HasSuffix(err.Error(), tt.wantErr) {
					t.Fatalf("NormalizeZone(%q) error = %v, want one starting or ending with %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("NormalizeZone(%q) = %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got.Name); diff != "" {
				t.Errorf("NormalizeZone(%q).Name mismatch (-want +got):\n%s", tt.in, diff)
			}
			if got.Location == nil || got.Location.String() != tt.want {
				t.Errorf("NormalizeZone(%q).Location = %v, want %s", tt.in, got.Location, tt.want)
			}
			if (tt.wantWarning == "") != (got.Warning == "") || !strings.Contains(got.Warning, tt.wantWarning) {
				t.Errorf("NormalizeZone(%q).Warning = %q, want one containing %q", tt.in, got.Warning, tt.wantWarning)
			}
			again, err := NormalizeZone(got.Name)
			if err != nil || again.Name != got.Name {
				t.Errorf("NormalizeZone(%q) = %q, %v; normalization is not idempotent", got.Name, again.Name, err)
			}
		})
	}
}

// TestEveryZoneNameNormalizesToItself checks that every generated name loads and is its own
// canonical form (or UTC), so the generated list and the loader agree.
func TestEveryZoneNameNormalizesToItself(t *testing.T) {
	for _, name := range zoneNames {
		z, err := NormalizeZone(name)
		if err != nil {
			t.Errorf("NormalizeZone(%q) = %v", name, err)
			continue
		}
		if z.Name != name && z.Name != DefaultZone {
			t.Errorf("NormalizeZone(%q).Name = %q", name, z.Name)
		}
	}
}

func TestFixedOffsetZonesHaveTheGivenOffset(t *testing.T) {
	for in, wantSeconds := range map[string]int{"+09:00": 9 * 3600, "-05:00": -5 * 3600, "UTC+14": 14 * 3600} {
		z, err := NormalizeZone(in)
		if err != nil {
			t.Fatal(err)
		}
		_, offset := instant(t, "2027-07-01T00:00:00Z").In(z.Location).Zone()
		if diff := cmp.Diff(wantSeconds, offset); diff != "" {
			t.Errorf("offset of %s (%s) mismatch (-want +got):\n%s", in, z.Name, diff)
		}
	}
}
