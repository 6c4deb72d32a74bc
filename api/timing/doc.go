// Package timing is the one implementation of almanac's time semantics
// (docs/time-semantics.md). The webhooks, the reconcilers and the CLI all import it, so
// that validation, scaling, Jobs and previews give the same answer for the same input.
//
// Everything here is a pure function of its arguments: the current time is always a
// parameter (now, after, from), never time.Now, and nothing depends on the machine's time
// zone. Zones are read from the package's own copy of the tz database (zz_generated_tzdata.go,
// release TZDataVersion, generated from the data that time/tzdata embeds), never from the host
// or ZONEINFO, so that every binary that links it answers alike, in any image and on any
// machine.
//
// # Parsers
//
// NormalizeZone, ParseClock, ParseWeekday, ParseLocalDateTime, ParseAt, ParseCron,
// Spec.Compile and JobSpec.Compile accept what users write and return canonical values whose
// String form parses back to the same value (normalization is idempotent). Errors are plain
// messages that say what was wrong, what was expected and how to fix it; they never name the
// field, because callers map them to their own field paths (the Compile functions return
// FieldErrors that name the spec's field).
//
// # The DST rule
//
// Schedules are written in wall-clock time, and a wall-clock time does not always name exactly
// one instant. One rule applies to every wall-clock time (window boundaries, OneShot times,
// cron slots):
//
//   - A wall time that does not exist, because clocks jumped forward over it, resolves to
//     the instant the clocks jumped: the first instant after the gap. In America/New_York,
//     2027-03-14 02:30 resolves to 03:00 EDT (2027-03-14T07:00:00Z).
//   - A wall time that occurs twice, because clocks were set back, resolves to its first
//     occurrence. In America/New_York, 2027-11-07 01:30 resolves to 01:30 EDT
//     (2027-11-07T05:30:00Z).
//
// ResolveWall implements the rule by looking at the zone's actual transitions, so it also
// holds for 30- and 45-minute shifts (Australia/Lord_Howe, Pacific/Chatham) and for zones
// whose clocks changed at midnight (America/Sao_Paulo until 2019, where some days had no
// 00:00). time.Date does not promise which instant it picks in these cases.
//
// Consequences: a window whose start and end fall into the same gap is empty that day, and
// resolving is monotonic (a later wall time never resolves to an earlier instant).
//
// # Why the engine computes cron slots itself
//
// robfig/cron's scheduling loop walks instants, not wall-clock slots: it skips slots that fall
// into a spring-forward gap (a "30 2 * * *" Job would not run that day) and fires slots in
// the repeated fall-back hour twice. Both contradict the rule above, and the second one runs a
// Job twice. So this package uses robfig/cron only to parse a spec into its field sets, and
// enumerates wall-clock slots itself: each slot resolves by the DST rule, slots that resolve
// to the same instant (all slots of one gap, and the slot at the jump instant) fire once,
// and a repeated slot fires once, at its first occurrence. Cron.Next and Cron.Prev find the
// neighbouring slot with calendar arithmetic and resolve only that one, so their cost does
// not grow with the distance between firings, and they search at most eight years (a
// schedule that passed ParseCron always fires within that time).
//
// # Month ends and business days
//
// Cron schedules also take the day forms of Quartz, which robfig/cron never had: L, L-n, LW,
// nW and W#n in the day-of-month field, D#n and DL in the day-of-week field (monthdays.go).
// The business-day forms (LW, nW, W#n) count the object's business weekdays that its
// calendars leave open at the schedule's first time of day, so that the slot they pick is
// never one that the calendars skip. ParseCron refuses forms that never fire, or that can go
// longer than the eight-year horizon without firing; calendars that close every business day
// are found by the walks, which then answer with ErrNoSlot and the reason (NextWithin,
// JobSchedule.NextSlot), never with a zero time that a caller could loop on.
//
// # Windows
//
// A Window (compiled from a Spec) is a recurrence of half-open intervals [start, end) of UTC
// instants, computed from wall-clock dates in the window's zone: the weekday of a Weekly
// window is the local weekday, never the UTC one.
//
//go:generate go run ./internal/genzones
package timing
