package preview

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/almanac-dev/almanac/api/timing"
)

// wallFormat shows an instant as a reader of one zone sees it, with the zone's abbreviation,
// which tells daylight saving time apart (EST/EDT, CET/CEST).
const wallFormat = "Mon 2006-01-02 15:04 MST"

// secondFormat is wallFormat to the second, for runs that are not on the minute.
const secondFormat = "Mon 2006-01-02 15:04:05 MST"

// WriteText writes a readable timeline: per autoscaler, its Schedules and one line per
// stretch of constant bounds, with the start in UTC and in each zone its Schedules use; per
// ScheduledJob, its runs; per EventJob with several triggers, its sets.
func WriteText(w io.Writer, r Report) error {
	p := &printer{w: w}
	p.printf("Preview from %s to %s\n", r.Range.From.Format(wallFormat), r.Range.To.Format(wallFormat))
	if len(r.Autoscalers) == 0 && len(r.Jobs) == 0 && len(r.FanIns) == 0 {
		p.printf("\nNo ScheduledPodAutoscaler or ScheduledJob in the input.\n")
	}
	for _, a := range r.Autoscalers {
		p.autoscaler(a, r.Range)
	}
	for _, j := range r.Jobs {
		p.job(j)
	}
	for _, f := range r.FanIns {
		p.fanIn(f)
	}
	return p.err
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func (p *printer) autoscaler(a Autoscaler, rng Range) {
	if a.Target == nil {
		p.printf("\nScheduledPodAutoscaler %s/%s: baseline minReplicas %d, maxReplicas %d", a.Namespace, a.Name, a.Baseline.Min, a.Baseline.Max)
	} else {
		p.printf("\nScheduledPodAutoscaler %s/%s%s", a.Namespace, a.Name, a.attachedText())
	}
	if a.Suspended {
		p.printf(" (suspended: Schedules are ignored)")
	}
	p.printf("\n")
	p.notes(a.Notes)
	if len(a.Schedules) == 0 {
		p.printf("  No Schedules.\n")
	} else {
		tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
		// A scale subresource is given only the minimum: its Schedules' maxReplicas are not
		// shown, nothing would enforce them.
		if a.scaleTarget() {
			fmt.Fprintln(tw, "  SCHEDULE\tWINDOW\tTIME ZONE\tREPLICAS")
		} else {
			fmt.Fprintln(tw, "  SCHEDULE\tWINDOW\tTIME ZONE\tMIN\tMAX")
		}
		for _, s := range a.Schedules {
			name := s.Name
			if s.Suspended {
				name += " (suspended)"
			}
			if a.scaleTarget() {
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", name, describe(s.Spec), s.Spec.TimeZone, bound(s.Min))
				continue
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", name, describe(s.Spec), s.Spec.TimeZone, bound(s.Min), bound(s.Max))
		}
		p.flush(tw)
	}

	zones := zonesOf(a)
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	header := []string{"  FROM (UTC)"}
	for _, z := range zones {
		header = append(header, "FROM ("+z.String()+")")
	}
	// For an attached autoscaler, one column says what its target is given.
	values := []string{"MIN", "MAX"}
	if a.Target != nil {
		values = []string{"TARGET GETS"}
	}
	fmt.Fprintln(tw, strings.Join(append(append(header, values...), "ACTIVE SCHEDULES"), "\t"))
	for _, s := range a.Segments {
		row := []string{"  " + s.Start.UTC().Format(wallFormat)}
		for _, z := range zones {
			row = append(row, s.Start.In(z).Format(wallFormat))
		}
		active := "-"
		if len(s.Active) > 0 {
			active = strings.Join(s.Active, ", ")
		}
		if a.Target != nil {
			row = append(row, a.getsText(s.Bounds))
		} else {
			row = append(row, fmt.Sprint(s.Bounds.Min), fmt.Sprint(s.Bounds.Max))
		}
		fmt.Fprintln(tw, strings.Join(append(row, active), "\t"))
	}
	row := []string{"  " + rng.To.UTC().Format(wallFormat)}
	for _, z := range zones {
		row = append(row, rng.To.In(z).Format(wallFormat))
	}
	for range values {
		row = append(row, "")
	}
	fmt.Fprintln(tw, strings.Join(append(row, "(end of preview)"), "\t"))
	p.printf("\n")
	p.flush(tw)
	if len(a.Skipped) > 0 {
		p.printf("\n")
	}
	for _, sk := range a.Skipped {
		p.printf("  skipped: Schedule %s %s — %s\n", sk.Schedule, timing.IntervalText(sk.Interval, sk.Zone), sk.Reason)
	}
}

// notes prints what the preview says about an object before its timeline: calendars that the
// input does not hold.
func (p *printer) notes(notes []string) {
	for _, n := range notes {
		p.printf("  note: %s\n", n)
	}
}

func (p *printer) job(j Job) {
	p.printf("\nScheduledJob %s/%s: %s in %s", j.Namespace, j.Name, j.What, j.Zone.Name)
	if j.Suspended {
		p.printf(" (suspended: nothing runs)")
	}
	p.printf("\n")
	p.notes(j.Notes)
	if len(j.Runs) == 0 && len(j.Skipped) == 0 {
		p.printf("  No runs in this range.\n")
		return
	}
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	if j.Zone.Name == timing.DefaultZone {
		fmt.Fprintln(tw, "  RUN (UTC)")
	} else {
		fmt.Fprintf(tw, "  RUN (UTC)\tRUN (%s)\n", j.Zone.Name)
	}
	// Runs shifted by spec.spread (or an at to the second) are shown to the second. The
	// slots that calendars skip are listed among the runs, in order, with why.
	format := wallFormat
	for _, t := range j.Runs {
		if t.Second() != 0 {
			format = secondFormat
		}
	}
	skipped := j.Skipped
	row := func(t time.Time, why string) {
		if j.Zone.Name == timing.DefaultZone {
			fmt.Fprintf(tw, "  %s", t.UTC().Format(format))
		} else {
			fmt.Fprintf(tw, "  %s	%s", t.UTC().Format(format), t.In(j.Zone.Location).Format(format))
		}
		if why != "" {
			fmt.Fprintf(tw, "\tskipped — %s", why)
		}
		fmt.Fprintln(tw)
	}
	for _, t := range j.Runs {
		for len(skipped) > 0 && skipped[0].Start.Before(t) {
			row(skipped[0].Start, skipped[0].Reason)
			skipped = skipped[1:]
		}
		row(t, "")
	}
	for _, sk := range skipped {
		row(sk.Start, sk.Reason)
	}
	p.flush(tw)
}

func (p *printer) flush(tw *tabwriter.Writer) {
	if err := tw.Flush(); err != nil && p.err == nil {
		p.err = err
	}
}

// zonesOf returns the zones of the autoscaler's Schedules other than UTC, sorted by name.
func zonesOf(a Autoscaler) []*time.Location {
	var names []string
	locs := map[string]*time.Location{}
	for _, s := range a.Schedules {
		z, err := timing.NormalizeZone(s.Spec.TimeZone)
		if err != nil || z.Name == timing.DefaultZone || locs[z.Name] != nil {
			continue
		}
		names = append(names, z.Name)
		locs[z.Name] = z.Location
	}
	slices.Sort(names)
	out := make([]*time.Location, 0, len(names))
	for _, n := range names {
		out = append(out, locs[n])
	}
	return out
}

// describe says when a window is open, in the words of its spec.
func describe(s timing.Spec) string {
	switch s.Type {
	case timing.TypeDaily:
		if len(s.DaysOfWeek) > 0 {
			return fmt.Sprintf("Daily %s-%s on %s", s.StartTime, s.EndTime, strings.Join(s.DaysOfWeek, ", "))
		}
		return fmt.Sprintf("Daily %s-%s", s.StartTime, s.EndTime)
	case timing.TypeWeekly:
		return fmt.Sprintf("Weekly %s %s - %s %s", s.StartDayOfWeek, s.StartTime, s.EndDayOfWeek, s.EndTime)
	case timing.TypeOneShot:
		return fmt.Sprintf("OneShot %s - %s", s.StartTime, s.EndTime)
	default:
		if days := s.BusinessDaysText(); days != "" {
			return fmt.Sprintf("Cron %q for %s on business days %s", s.Schedule, s.Duration, days)
		}
		return fmt.Sprintf("Cron %q for %s", s.Schedule, s.Duration)
	}
}

func bound(v *int32) string {
	if v == nil {
		return "baseline"
	}
	return fmt.Sprint(*v)
}
