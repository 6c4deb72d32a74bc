package preview

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
)

// FanIn is the preview of an EventJob with several triggers (spec.triggers) paired by slot:
// the sets that the runs of its upstream ScheduledJobs in the input make, slot by slot, and
// which of them start its Job. What its other triggers do (a CronJob, a Job, an EventJob, a
// ScheduledJob not in the input) preview does not know: a note says so, and the sets are
// judged by the ScheduledJobs it knows.
type FanIn struct {
	Namespace, Name string
	// Rule says when it starts a Job (batchv1alpha1.EventJob.FanInCondition).
	Rule      string
	Suspended bool
	Sets      []PreviewSet
	// Unknown names the triggers whose runs preview does not know (AllOf: every set waits
	// for them too).
	Unknown []string
	Notes   []string
	allOf   bool
}

// PreviewSet is the set of one slot.
type PreviewSet struct {
	Slot time.Time
	// Runs is true when the set starts the EventJob's Job: it has a run of every trigger
	// (AllOf) or of one (AnyOf), as far as the ScheduledJobs of the input tell, after the
	// last of them ends.
	Runs bool
	// Upstream names the ScheduledJobs that run the slot; Missing those that do not, each
	// with why ("skipped — …" by a calendar, or no run then).
	Upstream, Missing []string
}

// fanIn previews ej from the previews of the ScheduledJobs of the input (jobs).
func fanIn(ej *batchv1alpha1.EventJob, jobs []Job) FanIn {
	f := ej.Spec.EffectiveFanIn()
	out := FanIn{Namespace: ej.Namespace, Name: ej.Name, Rule: "starts a Job once " + ej.FanInCondition(), Suspended: ej.Spec.Suspend,
		allOf: f.Require == batchv1alpha1.FanInAllOf}
	if f.PairBy != batchv1alpha1.FanInPairBySlot {
		out.Notes = append(out.Notes, fmt.Sprintf("EventJob %s/%s pairs its upstream Jobs by the time they end (fanIn.pairBy: Window), which preview cannot tell: no sets are drawn", ej.Namespace, ej.Name))
		return out
	}
	type known struct {
		name string
		job  *Job
	}
	var upstream []known
	for _, t := range ej.Spec.Triggers {
		i := slices.IndexFunc(jobs, func(j Job) bool { return j.Namespace == ej.Namespace && j.Name == t.Name })
		if t.Kind != batchv1alpha1.TriggerKindScheduledJob || i < 0 {
			out.Unknown = append(out.Unknown, fmt.Sprintf("%s %s", t.Kind, t.Name))
			out.Notes = append(out.Notes, fmt.Sprintf("EventJob %s/%s: %s %s is not a ScheduledJob of the input, so preview does not know its runs: the sets are drawn from the others, and each waits for its run too",
				ej.Namespace, ej.Name, t.Kind, t.Name))
			continue
		}
		upstream = append(upstream, known{name: "ScheduledJob " + t.Name, job: &jobs[i]})
	}
	slots := map[time.Time]bool{}
	for _, u := range upstream {
		for _, t := range u.job.Runs {
			slots[t.UTC()] = true
		}
	}
	sorted := make([]time.Time, 0, len(slots))
	for t := range slots {
		sorted = append(sorted, t)
	}
	slices.SortFunc(sorted, time.Time.Compare)
	for _, slot := range sorted {
		s := PreviewSet{Slot: slot}
		for _, u := range upstream {
			switch {
			case u.job.Suspended:
				s.Missing = append(s.Missing, u.name+" (suspended)")
			case slices.ContainsFunc(u.job.Runs, slot.Equal):
				s.Upstream = append(s.Upstream, u.name)
			default:
				why := "no run at that slot"
				if i := slices.IndexFunc(u.job.Skipped, func(sk timing.Skipped) bool { return sk.Start.Equal(slot) }); i >= 0 {
					why = "skipped — " + u.job.Skipped[i].Reason
				}
				s.Missing = append(s.Missing, fmt.Sprintf("%s (%s)", u.name, why))
			}
		}
		if f.Require == batchv1alpha1.FanInAnyOf {
			s.Runs = len(s.Upstream) > 0
		} else {
			s.Runs = len(s.Missing) == 0
		}
		s.Runs = s.Runs && !out.Suspended
		out.Sets = append(out.Sets, s)
	}
	return out
}

// fanIn writes the preview of a fan-in EventJob: per slot, whether its set starts the
// Job and from which upstream runs, or why it expires.
func (p *printer) fanIn(f FanIn) {
	p.printf("\nEventJob %s/%s: %s", f.Namespace, f.Name, f.Rule)
	if f.Suspended {
		p.printf(" (suspended: nothing runs)")
	}
	p.printf("\n")
	p.notes(f.Notes)
	if len(f.Sets) == 0 {
		p.printf("  No sets in this range.\n")
		return
	}
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  SLOT (UTC)\tSET")
	for _, s := range f.Sets {
		what := "expires — no run of " + strings.Join(s.Missing, ", ")
		switch {
		case f.Suspended:
			what = "starts no Job (suspended)"
		case s.Runs && len(s.Missing) > 0:
			what = "runs after " + strings.Join(s.Upstream, ", ") + " (AnyOf; not " + strings.Join(s.Missing, ", ") + ")"
		case s.Runs && f.allOf && len(f.Unknown) > 0:
			what = "runs after " + strings.Join(s.Upstream, ", ") + ", once " + strings.Join(f.Unknown, ", ") + " ran it too"
		case s.Runs:
			what = "runs after " + strings.Join(s.Upstream, ", ")
		}
		fmt.Fprintf(tw, "  %s\t%s\n", s.Slot.UTC().Format(wallFormat), what)
	}
	p.flush(tw)
}

// jsonFanIn is the JSON form of a FanIn.
type jsonFanIn struct {
	Namespace string         `json:"namespace"`
	Name      string         `json:"name"`
	Sets      []jsonFanInSet `json:"sets"`
	Notes     []string       `json:"notes,omitempty"`
}

type jsonFanInSet struct {
	Slot     string   `json:"slot"`
	Runs     bool     `json:"runs"`
	Upstream []string `json:"upstream"`
	Missing  []string `json:"missing,omitempty"`
}

func toJSONFanIn(f FanIn) jsonFanIn {
	out := jsonFanIn{Namespace: f.Namespace, Name: f.Name, Sets: []jsonFanInSet{}, Notes: f.Notes}
	for _, s := range f.Sets {
		out.Sets = append(out.Sets, jsonFanInSet{Slot: utc(s.Slot), Runs: s.Runs, Upstream: append([]string{}, s.Upstream...), Missing: s.Missing})
	}
	return out
}
