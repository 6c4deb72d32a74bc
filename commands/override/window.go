package override

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/almanac-dev/almanac/api/timing"
)

// wallLayout is how a OneShot Schedule writes its startTime and endTime: a wall time in its
// timeZone, to the minute.
const wallLayout = "2006-01-02T15:04"

// Window is the override's window, [Start, End), both whole minutes.
type Window struct {
	Start, End time.Time
	// Zone is the zone of --time-zone, in which the window is shown.
	Zone timing.Zone
	// ScheduleZone is the zone the Schedule is written in: Zone, or UTC when a wall time in
	// Zone would not name Start or End again (an instant in the second occurrence of an hour
	// that the clocks repeat: the DST rule reads such a wall time as its first occurrence).
	ScheduleZone timing.Zone
}

// StartTime and EndTime are the Schedule's startTime and endTime: wall times in
// ScheduleZone.
func (w Window) StartTime() string { return w.Start.In(w.ScheduleZone.Location).Format(wallLayout) }

// EndTime is the Schedule's endTime (see StartTime).
func (w Window) EndTime() string { return w.End.In(w.ScheduleZone.Location).Format(wallLayout) }

// NewWindow returns the window of an override asked for at now: from now rounded down to the
// minute (a OneShot's wall times are minute-precise, so the window may open up to 59 seconds
// before now, which changes nothing), to until or now+forDuration rounded up to the minute
// (the override lasts at least as long as asked). Exactly one of until and forDuration is
// given (non-empty, non-zero). until is RFC 3339 with an offset or Z, or yyyy-MM-ddTHH:mm[:ss]
// as a wall time in zone read by the DST rule (a time in a spring-forward gap is the instant
// the clocks jumped; one that occurs twice, its first occurrence). It is a pure function.
func NewWindow(now time.Time, until string, forDuration time.Duration, zone timing.Zone) (Window, error) {
	w := Window{Start: now.Truncate(time.Minute).UTC(), Zone: zone, ScheduleZone: zone}
	var end time.Time
	switch {
	case until != "" && forDuration != 0:
		return Window{}, errors.New("--until and --for both given: the override ends at one time; give --until TIME or --for DURATION, not both")
	case until == "" && forDuration == 0:
		return Window{}, errors.New("the end of the override is missing: give --until TIME (e.g. --until 2027-01-15T18:00) or --for DURATION (e.g. --for 2h)")
	case forDuration < 0:
		return Window{}, fmt.Errorf("--for=%s is negative: give a positive duration such as 30m or 2h", forDuration)
	case forDuration > 0:
		end = now.Add(forDuration)
	default:
		t, err := parseUntil(until, zone)
		if err != nil {
			return Window{}, err
		}
		if !t.After(now) {
			return Window{}, fmt.Errorf("--until=%q is %s, which is not after now (%s): give a time in the future",
				until, timing.SecondText(t, zone), timing.SecondText(now, zone))
		}
		end = t
	}
	w.End = ceilMinute(end).UTC()
	if !resolvesTo(w.StartTime(), w.Start, zone) || !resolvesTo(w.EndTime(), w.End, zone) {
		w.ScheduleZone = timing.Zone{Name: timing.DefaultZone, Location: time.UTC}
	}
	if y := w.End.In(w.ScheduleZone.Location).Year(); y > timing.MaxYear {
		return Window{}, fmt.Errorf("the override would end at %s, after %d, the last year almanac schedules: give a shorter --for or an earlier --until",
			timing.SecondText(w.End, zone), timing.MaxYear)
	}
	return w, nil
}

// parseUntil reads --until: RFC 3339 with an offset names an instant; anything else is a wall
// time in zone, by the rules of a OneShot's times (timing.ParseAt, which also takes seconds).
func parseUntil(s string, zone timing.Zone) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, strings.TrimSpace(s)); err == nil {
		return t, nil
	}
	l, err := timing.ParseAt(s, zone.Location)
	if err != nil {
		return time.Time{}, fmt.Errorf("--until=%q: %w", s, err)
	}
	return l.In(zone.Location), nil
}

// ceilMinute rounds t up to a whole minute.
func ceilMinute(t time.Time) time.Time {
	if f := t.Truncate(time.Minute); f.Before(t) {
		return f.Add(time.Minute)
	}
	return t
}

// resolvesTo reports whether the wall time wall (wallLayout) names instant t again in zone.
func resolvesTo(wall string, t time.Time, zone timing.Zone) bool {
	l, err := timing.ParseLocalDateTime(wall, zone.Location)
	return err == nil && l.In(zone.Location).Equal(t)
}

// Zone returns the zone of --time-zone: name normalized (timing.NormalizeZone), or when name
// is empty the machine's zone if it has an IANA name, else UTC (DefaultZoneName).
func Zone(name string) (timing.Zone, error) {
	if name == "" {
		link, _ := os.Readlink("/etc/localtime")
		name = DefaultZoneName(os.Getenv("TZ"), link)
	}
	zone, err := timing.NormalizeZone(name)
	if err != nil {
		return timing.Zone{}, fmt.Errorf("--time-zone=%q: %w", name, err)
	}
	return zone, nil
}

// DefaultZoneName is the zone when --time-zone is not given: $TZ (tz, without a leading ":")
// when it is a zone name that almanac accepts, else the zone that /etc/localtime links to
// (link, e.g. /usr/share/zoneinfo/Europe/Berlin) when it is one, else UTC. The machine's
// zone is used only by its name: "Local" means nothing to the controller.
func DefaultZoneName(tz, link string) string {
	if z, err := timing.NormalizeZone(strings.TrimPrefix(tz, ":")); tz != "" && err == nil {
		return z.Name
	}
	if _, name, ok := strings.Cut(link, "zoneinfo/"); ok {
		if z, err := timing.NormalizeZone(name); err == nil {
			return z.Name
		}
	}
	return timing.DefaultZone
}
