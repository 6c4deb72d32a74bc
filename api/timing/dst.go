package timing

import (
	"fmt"
	"time"
)

// DSTNote says that a wall-clock field of a window falls into a daylight saving gap or repeat
// on some date, and what happens then. Webhooks return the Message as an admission warning.
type DSTNote struct {
	Field   string   // FieldStartTime, FieldEndTime or FieldSchedule
	Date    string   // the local date, yyyy-MM-dd
	Kind    WallKind // Gap or Repeat
	Message string
}

// dstNoteHorizon is how far ahead DSTNotes looks: two years show both of a zone's yearly
// transitions even when one of them was just missed.
const dstNoteHorizon = 2 * 366 * 24 * time.Hour

// DSTNotes returns, for each wall-clock field of the window, the next date within about two
// years after from when it falls into a gap, and the next date when it falls into a repeat,
// with what will happen. A OneShot's times are checked on their own dates. For a Cron window
// it reports the first gap and the first repeat that contain slots.
func (w *Window) DSTNotes(from time.Time) []DSTNote {
	loc := w.zone.Location
	var notes []DSTNote
	switch w.Type() {
	case TypeOneShot:
		if note, ok := w.startWall.DSTNote(w.zone, FieldStartTime, "the window starts"); ok {
			notes = append(notes, note)
		}
		if note, ok := w.endWall.DSTNote(w.zone, FieldEndTime, "the window ends"); ok {
			notes = append(notes, note)
		}
	case TypeCron:
		notes = w.cron.DSTNotes(w.zone, from)
	default:
		trs := transitions(loc, from, from.Add(dstNoteHorizon))
		// The days on which the start and the end times occur: for a Daily window, the days
		// it opens on, and for its end the next day when it crosses midnight.
		startDay, endDay := w.opensOn, w.opensOn
		if w.crossesMidnight() {
			endDay = func(d time.Weekday) bool { return w.opensOn((d + 6) % 7) }
		}
		if w.Type() == TypeWeekly {
			startDay = func(d time.Weekday) bool { return d == w.startDay }
			endDay = func(d time.Weekday) bool { return d == w.endDay }
		}
		notes = append(notes, w.recurringNotes(trs, FieldStartTime, "the window starts", w.start, startDay)...)
		notes = append(notes, w.recurringNotes(trs, FieldEndTime, "the window ends", w.end, endDay)...)
	}
	return notes
}

// recurringNotes returns the first gap note and the first repeat note for a Daily or Weekly
// time of day c, which occurs on the dates whose weekday satisfies onDay.
func (w *Window) recurringNotes(trs []transition, field, subject string, c Clock, onDay func(time.Weekday) bool) []DSTNote {
	var notes []DSTNote
	seen := map[WallKind]bool{}
	for _, tr := range trs {
		kind := Repeat
		if tr.isGap() {
			kind = Gap
		}
		if seen[kind] {
			continue
		}
		lo, hi := tr.walls()
		for date := civil(lo.Year(), lo.Month(), lo.Day(), 0, 0); date.Before(hi); date = date.AddDate(0, 0, 1) {
			wall := date.Add(time.Duration(c.minutes()) * time.Minute)
			if wall.Before(lo) || !wall.Before(hi) || !onDay(date.Weekday()) {
				continue
			}
			notes = append(notes, wallNote(w.zone, field, subject, wall, resolve(w.zone.Location, wall)))
			seen[kind] = true
			break
		}
	}
	return notes
}

// DSTNote reports whether l falls into a gap or a repeat in zone and, if so, describes
// what happens; subject says what the time is used for, e.g. "the Job runs".
func (l LocalDateTime) DSTNote(zone Zone, field, subject string) (DSTNote, bool) {
	wall := l.wall()
	res := resolve(orUTC(zone.Location), wall)
	if res.kind == Normal {
		return DSTNote{}, false
	}
	return wallNote(zone, field, subject, wall, res), true
}

// wallNote describes what happens to a wall time that falls into a gap or repeat, given its
// resolution: "02:30 does not exist in America/New_York on 2027-03-14 (clocks jump from
// 02:00 to 03:00): the window starts at 03:00 EDT (07:00 UTC)".
func wallNote(zone Zone, field, subject string, wall time.Time, res resolution) DSTNote {
	loc := orUTC(zone.Location)
	date := wall.Format(time.DateOnly)
	lo, hi := res.cause.walls()
	clock := wall.Format("15:04")
	if wall.Second() != 0 {
		clock = wall.Format("15:04:05")
	}
	var msg string
	if res.kind == Gap {
		msg = fmt.Sprintf("%s does not exist in %s on %s (clocks jump from %s to %s): %s at %s",
			clock, zone.Name, date, wallText(lo, date), wallText(hi, date), subject, instantText(res.at, loc))
	} else {
		msg = fmt.Sprintf("%s occurs twice in %s on %s (clocks go back from %s to %s): %s at the first occurrence, %s",
			clock, zone.Name, date, wallText(hi, date), wallText(lo, date), subject, instantText(res.at, loc))
	}
	return DSTNote{Field: field, Date: date, Kind: res.kind, Message: msg}
}

// DSTNotes describes the first gap and the first repeat in zone, within about two years after
// from, that contain slots of the schedule, and how the slots run then. Notes name the field
// FieldSchedule.
func (c Cron) DSTNotes(zone Zone, from time.Time) []DSTNote {
	loc := orUTC(zone.Location)
	var notes []DSTNote
	seen := map[WallKind]bool{}
	for _, tr := range transitions(loc, from, from.Add(dstNoteHorizon)) {
		kind := Repeat
		if tr.isGap() {
			kind = Gap
		}
		lo, hi := tr.walls()
		first, ok := c.nextSlot(lo)
		if seen[kind] || !ok || !first.Before(hi) {
			continue
		}
		last, _ := c.prevSlot(hi.Add(-time.Minute))
		count := 0
		for s := first; !s.After(last); s, _ = c.nextSlot(s.Add(time.Minute)) {
			count++
		}
		date := first.Format(time.DateOnly)
		at := resolve(loc, first).at
		clocks := fmt.Sprintf("clocks jump from %s to %s", wallText(lo, date), wallText(hi, date))
		if kind == Repeat {
			clocks = fmt.Sprintf("clocks go back from %s to %s", wallText(hi, date), wallText(lo, date))
		}
		var msg string
		switch {
		case kind == Gap && count == 1:
			msg = fmt.Sprintf("the %s run does not exist in %s on %s (%s): it runs at %s", first.Format("15:04"), zone.Name, date, clocks, instantText(at, loc))
		case kind == Gap:
			msg = fmt.Sprintf("the %d runs from %s to %s do not exist in %s on %s (%s): they run once, at %s", count, wallText(first, date), wallText(last, date), zone.Name, date, clocks, instantText(at, loc))
		case count == 1:
			msg = fmt.Sprintf("the %s run occurs twice in %s on %s (%s): it runs once, at its first occurrence, %s", first.Format("15:04"), zone.Name, date, clocks, instantText(at, loc))
		default:
			msg = fmt.Sprintf("the %d runs from %s to %s occur twice in %s on %s (%s): each runs once, at its first occurrence, the first at %s", count, wallText(first, date), wallText(last, date), zone.Name, date, clocks, instantText(at, loc))
		}
		if next, ok := c.nextSlot(hi); kind == Gap && ok && next.Equal(hi) {
			msg += fmt.Sprintf(", together with the %s run", hi.Format("15:04"))
		}
		notes = append(notes, DSTNote{Field: FieldSchedule, Date: date, Kind: kind, Message: msg})
		seen[kind] = true
	}
	return notes
}

// wallText formats a wall as HH:mm, with its date if that differs from the note's date.
func wallText(wall time.Time, date string) string {
	if wall.Format(time.DateOnly) != date {
		return wall.Format("2006-01-02 15:04")
	}
	return wall.Format("15:04")
}

// instantText formats an instant as local time with the zone's abbreviation, and in UTC:
// "03:00 EDT (07:00 UTC)", with seconds when they are not zero.
func instantText(at time.Time, loc *time.Location) string {
	local, utc := at.In(loc), at.UTC()
	clock := "15:04"
	if at.Second() != 0 {
		clock = "15:04:05"
	}
	if local.YearDay() != utc.YearDay() {
		return fmt.Sprintf("%s (%s UTC)", local.Format(clock+" MST"), utc.Format("2006-01-02 "+clock))
	}
	return fmt.Sprintf("%s (%s UTC)", local.Format(clock+" MST"), utc.Format(clock))
}
