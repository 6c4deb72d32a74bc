package admission

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

// TestValidateScheduledJobSpread: spec.spread is a duration of whole seconds from 1s to 1h, on
// a cron schedule only; every error names spec.spread, the limit and the fix.
func TestValidateScheduledJobSpread(t *testing.T) {
	cron := func(spread string) *batchv1alpha1.ScheduledJob {
		return scheduledJob("a", batchv1alpha1.ScheduledJobSpec{Schedule: "0 0 * * *", Spread: spread})
	}
	const notDuration = `is not a duration: expected a Go duration of whole seconds from 1s to 1h, e.g. "5m" or "90s"`
	tests := []struct {
		name string
		obj  *batchv1alpha1.ScheduledJob
		old  *batchv1alpha1.ScheduledJob
		want result
	}{
		{name: "5m", obj: cron("5m")},
		{name: "the shortest", obj: cron("1s")},
		{name: "the longest", obj: cron("1h")},
		{name: "in seconds", obj: cron("90s")},
		{name: "zero", obj: cron("0s"), want: result{Errors: []string{
			`spec.spread: Invalid value: "0s": "0s" is shorter than 1s, the shortest spread (the offset is whole seconds); write at least "1s", or omit spread to run at each slot's instant`}}},
		{name: "milliseconds", obj: cron("250ms"), want: result{Errors: []string{
			`spec.spread: Invalid value: "250ms": "250ms" is shorter than 1s, the shortest spread (the offset is whole seconds); write at least "1s", or omit spread to run at each slot's instant`}}},
		{name: "a fraction of a second", obj: cron("2.5s"), want: result{Errors: []string{
			`spec.spread: Invalid value: "2.5s": "2.5s" is not a whole number of seconds: the offset is whole seconds; write e.g. "2s"`}}},
		{name: "negative", obj: cron("-5m"), want: result{Errors: []string{
			`spec.spread: Invalid value: "-5m": "-5m" is negative: a spread delays every run by an offset in [0, spread); expected a Go duration of whole seconds from 1s to 1h, e.g. "5m" or "90s"`}}},
		{name: "over the maximum", obj: cron("61m"), want: result{Errors: []string{
			`spec.spread: Invalid value: "61m": "61m" is longer than 1h, the longest spread (every run starts up to spread after its slot); write at most "1h", or move the slots themselves in schedule`}}},
		{name: "huge", obj: cron("9223372036854775807h"), want: result{Errors: []string{
			`spec.spread: Invalid value: "9223372036854775807h": "9223372036854775807h" is longer than 1h, the longest spread (every run starts up to spread after its slot); write at most "1h", or move the slots themselves in schedule`}}},
		{name: "an exponent", obj: cron("1e9h"), want: result{Errors: []string{`spec.spread: Invalid value: "1e9h": "1e9h" ` + notDuration}}},
		{name: "no unit", obj: cron("300"), want: result{Errors: []string{`spec.spread: Invalid value: "300": "300" ` + notDuration}}},
		{name: "fullwidth digits", obj: cron("\uff15m"), want: result{Errors: []string{"spec.spread: Invalid value: \"\uff15m\": \"\uff15m\" " + notDuration}}},
		{name: "a zero-width space", obj: cron("5m\u200b"), want: result{Errors: []string{
			// %q spells the invisible character out.
			`spec.spread: Invalid value: "5m\u200b": "5m\u200b" ` + notDuration}}},
		{name: "with at", obj: scheduledJob("a", batchv1alpha1.ScheduledJobSpec{At: "2027-06-01T10:00", Spread: "5m"}), want: result{Errors: []string{
			`spec.spread: Invalid value: "5m": spread shifts the slots of a cron schedule, but this ScheduledJob runs once (at): remove spread, or write the time you want into at`}}},
		{name: "with an invalid schedule too", obj: scheduledJob("a", batchv1alpha1.ScheduledJobSpec{Schedule: "@every 5m", Spread: "2h"}), want: result{Errors: []string{
			`spec.schedule: Invalid value: "@every 5m": "@every 5m" is not supported: @every counts from when the controller started and ignores the time zone; use a 5-field schedule such as "*/5 * * * *"`,
			`spec.spread: Invalid value: "2h": "2h" is longer than 1h, the longest spread (every run starts up to spread after its slot); write at most "1h", or move the slots themselves in schedule`}}},
		// Changing spread is admitted without a word: the controller moves its record of the
		// slots with the offset (status.spreadOffsetSeconds), so no slot runs twice.
		{name: "spread lengthened", obj: cron("1h"), old: cron("5m")},
		{name: "spread added", obj: cron("5m"), old: cron("")},
		{name: "spread shortened", obj: cron("5m"), old: cron("1h")},
		{name: "spread removed", obj: cron(""), old: cron("5m")},
		{name: "spread unchanged", obj: cron("5m"), old: cron("5m")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs, warnings, err := ValidateScheduledJob(context.Background(), tt.obj, tt.old, Env{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, toResult(errs, warnings)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
