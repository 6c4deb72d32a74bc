package timing

import (
	"fmt"
	"strings"
	"time"
)

// The forms in which messages write instants and intervals: local time in the zone and UTC,
// so that a reader in either can check them.
const (
	localLayout = "2006-01-02 15:04"
	utcLayout   = "2006-01-02 15:04 UTC"
)

// InstantText writes an instant in local time and in UTC: "2027-03-14 03:00 America/New_York
// (2027-03-14 07:00 UTC)", or just the UTC form for zone UTC (and the zero Zone); with seconds
// when they are not zero (a ScheduledJob's at to the second).
func InstantText(t time.Time, zone Zone) string {
	local, utc := localLayout, utcLayout
	if t.Second() != 0 {
		local, utc = localLayout+":05", "2006-01-02 15:04:05 UTC"
	}
	if zone.Name == DefaultZone || zone.Location == nil {
		return t.UTC().Format(utc)
	}
	return fmt.Sprintf("%s %s (%s)", t.In(zone.Location).Format(local), zone.Name, t.UTC().Format(utc))
}

// SecondText is InstantText to the second (truncated), for deadlines, which are counted in
// seconds: "2027-01-15 20:10:00 Asia/Tokyo (2027-01-15 11:10:00 UTC)".
func SecondText(t time.Time, zone Zone) string {
	const local, utc = "2006-01-02 15:04:05", "2006-01-02 15:04:05 UTC"
	t = t.Truncate(time.Second)
	if zone.Name == DefaultZone || zone.Location == nil {
		return t.UTC().Format(utc)
	}
	return fmt.Sprintf("%s %s (%s)", t.In(zone.Location).Format(local), zone.Name, t.UTC().Format(utc))
}

// IntervalText writes an interval in local time and in UTC, the end's date only when it
// differs from the start's: "2027-03-01 09:00 to 10:00 Asia/Tokyo (2027-03-01 00:00 to 01:00
// UTC)".
func IntervalText(iv Interval, zone Zone) string {
	span := func(loc *time.Location) string {
		s, e := iv.Start.In(loc), iv.End.In(loc)
		end := e.Format(localLayout)
		if s.Format(time.DateOnly) == e.Format(time.DateOnly) {
			end = e.Format("15:04")
		}
		return s.Format(localLayout) + " to " + end
	}
	if zone.Name == DefaultZone || zone.Location == nil {
		return span(time.UTC) + " UTC"
	}
	return fmt.Sprintf("%s %s (%s UTC)", span(zone.Location), zone.Name, span(time.UTC))
}

// orList quotes names and joins them for a message: "a", "a or b", "a, b or c".
func orList(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	if len(quoted) <= 1 {
		return strings.Join(quoted, "")
	}
	return strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1]
}

// EditDistance is the Levenshtein distance between a and b, counted in bytes (zone, day and
// field names are ASCII). It ranks the "did you mean" hints of admission errors.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// leadingDigits counts the ASCII digits at the start of s, up to limit. (strconv would also
// accept signs and, for some functions, underscores; formats here allow digits only.)
func leadingDigits(s string, limit int) int {
	n := 0
	for n < len(s) && n < limit && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// atoi converts a string of ASCII digits, already checked by leadingDigits.
func atoi(digits string) int {
	n := 0
	for _, c := range []byte(digits) {
		n = n*10 + int(c-'0')
	}
	return n
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
