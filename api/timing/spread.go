package timing

import (
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"
	"time"
)

// FieldSpread is the field name of a JobSpec's spread, as FieldError.Field reports it.
const FieldSpread = "spread"

// MinSpread is the shortest spread: one second, the unit of the offset.
const MinSpread = time.Second

// MaxSpread is the longest spread: one hour. A run starts at most MaxSpread − 1s after its
// cron slot, which keeps "the 02:00 Job" recognizably the 02:00 Job.
const MaxSpread = time.Hour

// durationSyntax is the form of a Go duration without a sign, as the schema checks it.
var durationSyntax = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`)

// spreadExpected says what a spread is, for messages.
const spreadExpected = `expected a Go duration of whole seconds from 1s to 1h, e.g. "5m" or "90s"`

// ParseSpread reads a ScheduledJob's spec.spread: a Go duration of whole seconds, at least
// MinSpread and at most MaxSpread. "" means no spread (0). The errors say what was wrong and
// what to write instead.
func ParseSpread(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	// time.ParseDuration skips nothing, but says little: "1e9h", "５m", " 5m" and a value
	// past ~292 years all fail there.
	d, err := time.ParseDuration(s)
	switch {
	case err != nil && durationSyntax.MatchString(s):
		// Written like a duration, but longer than a time.Duration holds (about 292 years).
		return 0, fmt.Errorf("%q is longer than 1h, the longest spread (every run starts up to spread after its slot); write at most \"1h\", or move the slots themselves in schedule", s)
	case err != nil || strings.TrimSpace(s) != s:
		return 0, fmt.Errorf("%q is not a duration: %s", s, spreadExpected)
	}
	switch {
	case d < 0:
		return 0, fmt.Errorf("%q is negative: a spread delays every run by an offset in [0, spread); %s", s, spreadExpected)
	case d < MinSpread:
		return 0, fmt.Errorf("%q is shorter than 1s, the shortest spread (the offset is whole seconds); write at least \"1s\", or omit spread to run at each slot's instant", s)
	case d > MaxSpread:
		return 0, fmt.Errorf("%q is longer than 1h, the longest spread (every run starts up to spread after its slot); write at most \"1h\", or move the slots themselves in schedule", s)
	case d%time.Second != 0:
		return 0, fmt.Errorf("%q is not a whole number of seconds: the offset is whole seconds; write e.g. %q", s, d.Truncate(time.Second).String())
	}
	return d, nil
}

// SpreadOffset is the offset by which spread shifts every slot of the ScheduledJob
// namespace/name: a whole number of seconds in [0, spread), the FNV-1a 64-bit hash of
// "namespace/name" modulo the spread in seconds. It depends only on the namespace, the name
// and spread, so that the reconciler, admission and `almanac preview` (offline) agree, and
// ScheduledJobs of one schedule start at different seconds. It is 0 when spread is shorter
// than a second.
func SpreadOffset(namespace, name string, spread time.Duration) time.Duration {
	return spreadOffset(namespace+"/"+name, spread)
}

func spreadOffset(key string, spread time.Duration) time.Duration {
	seconds := int64(spread / time.Second)
	if seconds <= 0 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	return time.Duration(h.Sum64()%uint64(seconds)) * time.Second
}

// errSpreadOneShot is the error of a spread set with at (or a timestamp in schedule).
var errSpreadOneShot = errors.New("spread shifts the slots of a cron schedule, but this ScheduledJob runs once (at): remove spread, or write the time you want into at")
