package timing

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Materialized intervals. Overlap checks (admission, and under overlapPolicy Forbid the
// reconciler's safety net behind it) compare each window with many others over
// OverlapHorizon; generating a window's intervals resolves two wall-clock times per interval
// in its zone, which is most of the cost. So the intervals of a Daily, Weekly or Cron window
// from a day on are generated once and kept in a bounded memo, keyed by the window's
// canonical spec and that day, and shared by every request and reconcile of that day. The
// lists also count a window's intervals for Window.Comparable.

const (
	// spanLimit is the most intervals kept for one window, more than a window that may be
	// compared (MaxWindows) can have in the range a list covers. Windows with more are not
	// compared (TooManyWindowsError), and no list is kept for them.
	spanLimit = 1 << 14
	// spanBudget is the most intervals kept in one generation of the memo (16 bytes each, so
	// 8 MiB); at most two generations are kept: enough for the lists of a hundred Schedules
	// that each open a window every hour, so that comparing them does not evict each other's.
	spanBudget = 1 << 19
	// spanLead is how far before the day of from the lists start: earlier than any interval
	// that intervals(from) yields first, even where a DST change sets the clocks back over
	// midnight.
	spanLead = 48 * time.Hour
)

// spanKey names a window's intervals from a day on.
type spanKey struct {
	window string // Window.key
	day    int64  // the UTC day the list covers from, in Unix seconds
}

// spanList is a window's intervals that end after day-spanLead and start before until
// (day+24h+OverlapHorizon), in order; tooMany records that there are more than spanLimit.
type spanList struct {
	// nanos holds each interval's start and end in Unix nanoseconds (the years that
	// time.Time.UnixNano can hold reach far beyond searchHorizon).
	nanos []int64
	// until is the end of the range the list covers: every interval of the window that
	// starts before until and ends after the list's first one starts is in the list.
	until   int64
	tooMany bool
}

// len returns the number of intervals in l.
func (l spanList) len() int { return len(l.nanos) / 2 }

// after returns the index of the first interval of l that ends after t.
func (l spanList) after(t int64) int {
	return sort.Search(l.len(), func(i int) bool { return l.nanos[2*i+1] > t })
}

// before returns the index of the first interval of l that starts at or after t.
func (l spanList) before(t int64) int {
	return sort.Search(l.len(), func(i int) bool { return l.nanos[2*i] >= t })
}

// spanMemo holds the lists of two generations: lookups read the current one, then the
// previous one (moving the list found to the current one); when the current one is over
// spanBudget it becomes the previous one.
var spanMemo = &spanCache{current: map[spanKey]*spanList{}}

type spanCache struct {
	sync.Mutex
	current, previous map[spanKey]*spanList
	size              int // intervals in current
}

// windowKey names a spec in the memos: every field, each preceded by its length, so that
// different specs never share a name.
func windowKey(s Spec) string {
	fields := [...]string{string(s.Type), s.StartTime, s.EndTime, s.StartDayOfWeek, s.EndDayOfWeek, s.Schedule, s.Duration, s.TimeZone, s.Calendars.key()}
	n := 4 * (len(fields) + len(s.DaysOfWeek) + len(s.BusinessDays) + 2)
	for _, f := range fields {
		n += len(f)
	}
	for _, d := range s.DaysOfWeek {
		n += len(d)
	}
	for _, d := range s.BusinessDays {
		n += len(d)
	}
	b := make([]byte, 0, n)
	add := func(f string) {
		b = strconv.AppendInt(b, int64(len(f)), 10)
		b = append(b, ':')
		b = append(b, f...)
	}
	for _, f := range fields {
		add(f)
	}
	b = strconv.AppendInt(b, int64(len(s.DaysOfWeek)), 10)
	for _, d := range s.DaysOfWeek {
		add(d)
	}
	b = strconv.AppendInt(b, int64(len(s.BusinessDays)), 10)
	for _, d := range s.BusinessDays {
		add(d)
	}
	return string(b)
}

// spansFor returns, in order, the intervals of w that intervals(from) yields, as far as the
// memo's list covers them (at least OverlapHorizon past from), or false when they are not
// materialized: then the caller walks intervals. A window with too many intervals to keep
// has none (see Window.Comparable).
func (w *Window) spansFor(from time.Time) (spanList, bool) {
	if w.key == "" {
		return spanList{}, false
	}
	if w.Type() == TypeOneShot && !w.Masked() {
		if w.oneShot.End.After(from) {
			return spanList{nanos: []int64{w.oneShot.Start.UnixNano(), w.oneShot.End.UnixNano()}, until: math.MaxInt64}, true
		}
		return spanList{until: math.MaxInt64}, true
	}
	list := lookupSpans(w, from.UTC().Truncate(24*time.Hour))
	if list.tooMany {
		return spanList{}, false
	}
	// Intervals end in order: the first one that ends after from is where intervals(from)
	// starts.
	i := list.after(from.UnixNano())
	out := spanList{nanos: list.nanos[2*i:], until: list.until}
	if w.Type() == TypeCron {
		// A Cron run is split at the first firing of each local date, which can make the run
		// that contains from depend on where the walk began when a zone sets its clocks back
		// over midnight: check the first interval against the walk from from.
		first, ok := w.NextInterval(from)
		if ok != (out.len() > 0) || ok && (first.Start.UnixNano() != out.nanos[0] || first.End.UnixNano() != out.nanos[1]) {
			return spanList{}, false
		}
	}
	return out, true
}

// lookupSpans returns the memoized intervals of w from day on, generating them if needed.
func lookupSpans(w *Window, day time.Time) *spanList {
	key := spanKey{window: w.key, day: day.Unix()}
	spanMemo.Lock()
	list, ok := spanMemo.current[key]
	if !ok {
		if list, ok = spanMemo.previous[key]; ok {
			spanMemo.put(key, list)
		}
	}
	spanMemo.Unlock()
	if ok {
		return list
	}

	// Generated outside the lock; two requests may both generate the same list.
	end := day.Add(24*time.Hour + OverlapHorizon)
	list = &spanList{until: end.UnixNano()}
	for iv := range w.intervals(day.Add(-spanLead)) {
		if !iv.Start.Before(end) {
			break
		}
		if list.len() == spanLimit {
			list = &spanList{until: list.until, tooMany: true}
			break
		}
		list.nanos = append(list.nanos, iv.Start.UnixNano(), iv.End.UnixNano())
	}
	list.nanos = slices.Clip(list.nanos)
	spanMemo.Lock()
	spanMemo.put(key, list)
	spanMemo.Unlock()
	return list
}

// put stores list in the current generation, starting a new one when it is full. The caller
// holds the lock.
func (m *spanCache) put(key spanKey, list *spanList) {
	n := list.len() + 1
	if m.size+n > spanBudget {
		m.previous, m.current, m.size = m.current, map[spanKey]*spanList{}, 0
	}
	if _, ok := m.current[key]; !ok {
		m.current[key] = list
		m.size += n
	}
}
