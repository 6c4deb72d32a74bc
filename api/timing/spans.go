package timing

import (
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Materialized intervals. Overlap checks (admission under overlapPolicy Forbid, and the
// reconciler's safety net behind it) compare each window with many others over
// OverlapHorizon; generating a window's intervals resolves two wall-clock times per interval
// in its zone, which is most of the cost. So the intervals of a Daily, Weekly or Cron window
// from a day on are generated once and kept in a bounded memo, keyed by the window's
// canonical spec and that day, and shared by every request and reconcile of that day.

const (
	// spanLimit is the most intervals kept for one window: a year of a Cron window that opens
	// every half hour is 17,568 intervals. Windows with more are walked lazily.
	spanLimit = 1 << 14
	// spanBudget is the most intervals kept in one generation of the memo (64 bytes each); at
	// most two generations are kept.
	spanBudget = 1 << 17
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

// spanList is a window's intervals that end after day-spanLead and start before
// day+24h+OverlapHorizon, in order; tooMany records that there are more than spanLimit.
type spanList struct {
	intervals []Interval
	// nanos holds each interval's start and end in Unix nanoseconds, for the merge (the years
	// time.Time.UnixNano can hold reach far beyond searchHorizon).
	nanos   []int64
	tooMany bool
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
	fields := [...]string{string(s.Type), s.StartTime, s.EndTime, s.StartDayOfWeek, s.EndDayOfWeek, s.Schedule, s.Duration, s.TimeZone}
	n := 4 * (len(fields) + len(s.DaysOfWeek) + 1)
	for _, f := range fields {
		n += len(f)
	}
	for _, d := range s.DaysOfWeek {
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
	return string(b)
}

// spansFor returns, in order, the intervals of w that intervals(from) yields and that start
// before from+horizon (and maybe some after), or false when they are not materialized (a
// horizon beyond OverlapHorizon, or too many intervals): then the caller walks intervals.
func (w *Window) spansFor(from time.Time, horizon time.Duration) (spanList, bool) {
	if horizon > OverlapHorizon || w.key == "" {
		return spanList{}, false
	}
	if w.Type() == TypeOneShot {
		if w.oneShot.End.After(from) {
			return spanList{intervals: []Interval{w.oneShot}, nanos: []int64{w.oneShot.Start.UnixNano(), w.oneShot.End.UnixNano()}}, true
		}
		return spanList{}, true
	}
	day := from.UTC().Truncate(24 * time.Hour)
	list := lookupSpans(w, day)
	if list.tooMany {
		return spanList{}, false
	}
	// Intervals end in order: the first one that ends after from is where intervals(from)
	// starts.
	f := from.UnixNano()
	i := sort.Search(len(list.intervals), func(i int) bool { return list.nanos[2*i+1] > f })
	ivs := list.intervals[i:]
	if w.Type() == TypeCron {
		// A Cron run is split at the first firing of each local date, which can make the run
		// that contains from depend on where the walk began when a zone sets its clocks back
		// over midnight: check the first interval against the walk from from.
		first, ok := w.NextInterval(from)
		if ok != (len(ivs) > 0) || ok && (!ivs[0].Start.Equal(first.Start) || !ivs[0].End.Equal(first.End)) {
			return spanList{}, false
		}
	}
	return spanList{intervals: ivs, nanos: list.nanos[2*i:]}, true
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
	list = &spanList{}
	end := day.Add(24*time.Hour + OverlapHorizon)
	for iv := range w.intervals(day.Add(-spanLead)) {
		if !iv.Start.Before(end) {
			break
		}
		if len(list.intervals) == spanLimit {
			list = &spanList{tooMany: true}
			break
		}
		list.intervals = append(list.intervals, iv)
		list.nanos = append(list.nanos, iv.Start.UnixNano(), iv.End.UnixNano())
	}
	list.intervals = slices.Clip(list.intervals)
	list.nanos = slices.Clip(list.nanos)
	spanMemo.Lock()
	spanMemo.put(key, list)
	spanMemo.Unlock()
	return list
}

// put stores list in the current generation, starting a new one when it is full. The caller
// holds the lock.
func (m *spanCache) put(key spanKey, list *spanList) {
	n := len(list.intervals) + 1
	if m.size+n > spanBudget {
		m.previous, m.current, m.size = m.current, map[spanKey]*spanList{}, 0
	}
	if _, ok := m.current[key]; !ok {
		m.current[key] = list
		m.size += n
	}
}
