// Package preview is `almanac preview`: the effective bounds of each ScheduledPodAutoscaler in
// the given manifests (with the Schedules from the same manifests) over a time range, and the
// runs of each ScheduledJob, computed offline by the same code as the reconcilers (the
// time engine in api/timing and the autoscaler's desired state in api/scaling). It owns no
// objects; with --cluster it reads the live objects instead of files, and previews them by the
// same code.
package preview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/api/scaling"
	"github.com/almanac-dev/almanac/api/timing"
	"github.com/almanac-dev/almanac/commands/kube"
	"github.com/almanac-dev/almanac/commands/manifest"
)

// DefaultNamespace is the namespace of objects that name none, as for `almanac validate`.
const DefaultNamespace = "default"

// MaxSteps is the most work one preview does (see timing.Budget): the windows of every
// Schedule and the runs of every ScheduledJob in the range, and under overlapPolicy Forbid the
// comparisons of Schedules at each boundary, two million in all: a year of a hundred
// Schedules that open every hour, or of three ScheduledJobs that run every minute.
const MaxSteps = 2_000_000

type options struct {
	files     []string
	recursive bool
	from      string
	to        string
	// now is the instant admission judges the input as of (--now; default: the earlier of
	// the range's start and now).
	now      string
	duration string
	output   string
	// cluster previews the live objects that kube and all name instead of files.
	cluster bool
	kube    kube.Flags
	all     bool
}

// NewCommand returns `almanac preview`.
func NewCommand() *cobra.Command {
	opts := options{}
	cmd := &cobra.Command{
		Use:   "preview (-f FILE|DIR|- | --cluster [-n NAMESPACE | -A]) [--from TIME] [--to TIME | --for DURATION] [--now TIME] [-o text|json|svg]",
		Short: "Show the bounds that ScheduledPodAutoscalers will have, and when ScheduledJobs will run, over a time range",
		Long: `Preview reads manifests (as kubectl apply -f would) and shows, for each ScheduledPodAutoscaler,
the minReplicas and maxReplicas that almanac will give its HorizontalPodAutoscaler over a time
range, with the Schedules active in each stretch; and for each ScheduledJob, the instants at
which it will run. For an autoscaler attached to an object that exists (spec.targetRef), it
names the object and says what it is given in each stretch: minReplicas and maxReplicas for a
HorizontalPodAutoscaler, minReplicaCount and maxReplicaCount for a KEDA ScaledObject, and
replicas (the effective minReplicas; a scale subresource has no maximum) for any other kind.
It uses the same time engine as the controller: time zones, daylight saving gaps and repeats,
overlaps (largest minReplicas and largest maxReplicas), the baseline outside every window, and
maxReplicas raised to minReplicas when needed.

It previews only what admission admits. First it runs what almanac validate runs, in
kubectl apply order, as a create: strict decoding against almanac's CRDs, schema defaulting,
the mutating webhook, the OpenAPI schema and CEL rules, and the validating webhook. Admission
judges the input as of the start of the range when that is past (--from), and as of now
otherwise (--now sets another instant): a preview of a past range (an incident replayed, a
migration compared with the replaced system's history) admits a one-shot of that time as the
cluster admitted it then, and a preview of a future range admits what a create now admits
(validate judges as of now). Each refused object is reported on standard error with the
lines almanac validate prints for it (the field, the value and the fix) and is not previewed;
the admitted objects are previewed as they would be stored. Admission warnings are validate's
to show.

Schedules are matched to autoscalers in the same input by namespace and
spec.scaleTargetRef.name; objects without a namespace are in "default". An EventJob with several
triggers paired by slot (fan-in) is shown with the sets that the runs of its upstream
ScheduledJobs in the input make, slot by slot: which start its Job (after the last upstream run
of the slot), and which expire, with the ScheduledJob that does not run the slot and why (a
calendar skips it, another schedule); a trigger that is not a ScheduledJob of the input is
named in a note. Objects of other kinds, and other EventJobs (which run when an upstream Job
ends), are ignored.

The Calendars and ClusterCalendars of the input are the calendars that Schedules and
ScheduledJobs name in spec.calendars: what they close is listed by name ("skipped: …" after
an autoscaler's stretches, "skipped — …" beside a ScheduledJob's runs; "skipped" fields in
JSON; hatched in the SVG). A calendar that the input does not hold holds the objects that name
it, as in the cluster, with a note that says so. A calendar that admission would refuse is
reported with its file and field, as a refused object.

Output: text (a timeline in UTC and in the time zones of each autoscaler's Schedules), json
(contiguous segments over [from, to), UTC, adjacent segments with the same bounds and
Schedules merged; an attached autoscaler has a "target" object, and each of its segments a
"target" with the values by the target's field names) or svg (a step chart of minReplicas and
maxReplicas with the windows shaded and labelled, to open in a browser). Refusals and warnings go to standard error.

With --cluster, preview reads the live objects instead of files: the ScheduledPodAutoscalers,
Schedules, ScheduledJobs and EventJobs of the namespace (-n, default the context's; every namespace with
-A) and the Calendars and ClusterCalendars that they name, through the kubeconfig
(--kubeconfig, --context). They are previewed by the same code as -f, as they are stored (the
cluster admitted them), so the timeline is the one -f draws from the same objects. A calendar
that the cluster does not have holds the objects that name it, as in the controller. You need
get and list on almanac's kinds (the built-in view role has them once almanac's chart is
installed).

Exit status: 0 when every almanac object is admitted and previewed, 1 when an object is
refused by admission (the others are previewed), 2 for usage errors, unreadable files and
malformed YAML; with --cluster, 0 when previewed, 1 when the cluster refused a read (forbidden), 2
for usage and kubeconfig errors.`,
		Example: `  almanac preview -f examples/
  almanac preview -f deploy/ -R --from 2027-03-08T00:00:00Z --for 14d
  almanac preview -f examples/migrate/almanac/k8s-at.yaml --from 2020-03-21T00:00:00Z --for 1d
  kustomize build overlays/prod | almanac preview -f - -o svg > week.svg
  almanac preview --cluster -n shop --for 14d`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runContext(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), opts, time.Now())
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&opts.files, "filename", "f", nil, "File, directory or - (standard input) to read manifests from; repeatable.")
	f.BoolVarP(&opts.recursive, "recursive", "R", false, "Read directories given with -f recursively.")
	f.StringVar(&opts.from, "from", "", "Start of the range, RFC 3339 (default: now).")
	f.StringVar(&opts.to, "to", "", "End of the range (exclusive), RFC 3339. Exclusive with --for.")
	f.StringVar(&opts.now, "now", "", "The instant admission judges the input as of (staleness, starting deadlines), RFC 3339 (default: the start of the range when it is past, else now). Not with --cluster.")
	f.StringVar(&opts.duration, "for", "", `Length of the range: a Go duration ("36h") or a number of days ("14d"; a day is 24 hours). Default 7d.`)
	f.StringVarP(&opts.output, "output", "o", "text", "Output format: text, json or svg.")
	f.BoolVar(&opts.cluster, "cluster", false, "Preview the live objects of the cluster (of -n NAMESPACE, or of every namespace with -A) instead of files.")
	kube.AddFlags(f, &opts.kube, "With --cluster: the namespace to preview (default: the context's namespace).")
	f.BoolVarP(&opts.all, "all-namespaces", "A", false, "With --cluster: preview every namespace.")
	return cmd
}

// Range is the half-open time range [From, To) of a preview, in UTC.
type Range struct{ From, To time.Time }

// Report is everything a preview shows.
type Report struct {
	Range       Range
	Autoscalers []Autoscaler
	Jobs        []Job
	// FanIns are the EventJobs with several triggers, by the runs of their upstream
	// ScheduledJobs in the input.
	FanIns []FanIn
}

// Autoscaler is the preview of one ScheduledPodAutoscaler.
type Autoscaler struct {
	Namespace, Name string
	Baseline        timing.Bounds
	Suspended       bool
	// Target is the object the autoscaler is attached to (spec.targetRef); nil when it
	// generates its HorizontalPodAutoscaler. See Gets for what the target is given.
	Target *autoscalingv1alpha1.TargetReference
	// TargetMax is spec.maxReplicas of an attached autoscaler; nil when unset.
	TargetMax *int32
	Schedules []Schedule // the valid Schedules of the autoscaler, sorted by name
	Segments  []timing.Segment
	// Skipped are the stretches of its Schedules' windows in the range that calendars close
	// (spec.calendars), in order of start, then of Schedule name.
	Skipped []SkippedWindow
	// Notes say which calendars that its Schedules name are not in the input (such a
	// calendar holds the Schedule: its windows are all skipped).
	Notes []string
}

// SkippedWindow is a stretch of a Schedule's window that calendars close, clipped to the
// range.
type SkippedWindow struct {
	Schedule string
	Zone     timing.Zone // the Schedule's zone
	timing.Skipped
}

// Schedule is a Schedule of a previewed autoscaler and its intervals in the range.
type Schedule struct {
	Name      string
	Spec      timing.Spec // canonical
	Min, Max  *int32
	Suspended bool
	Intervals []timing.Interval
}

// Job is the preview of one ScheduledJob: its nominal run instants in the range, in UTC.
type Job struct {
	Namespace, Name string
	// What describes the schedule: `at 2027-11-05T12:00` or `cron "30 1 * * *"`.
	What      string
	Zone      timing.Zone
	Suspended bool
	Runs      []time.Time
	// Skipped are the slots in the range that calendars skip (spec.calendars), each with
	// Start == End, the slot's nominal instant; they are not in Runs.
	Skipped []timing.Skipped
	// Notes say which calendars that the ScheduledJob names are not in the input (such a
	// calendar holds it: every slot is skipped).
	Notes []string
}

func run(stdin io.Reader, stdout, stderr io.Writer, opts options, now time.Time) error {
	return runContext(context.Background(), stdin, stdout, stderr, opts, now)
}

// runContext is run, with the context of the requests of --cluster.
func runContext(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, opts options, now time.Time) error {
	clusterFlags := opts.kube != (kube.Flags{}) || opts.all
	switch {
	case opts.cluster && len(opts.files) > 0:
		return kube.Usage("--cluster and -f both given: preview the live objects or files, not both")
	case !opts.cluster && clusterFlags:
		return kube.Usage("--kubeconfig, --context, -n and -A are for --cluster: add --cluster to preview the live objects, or leave them out to preview files")
	case !opts.cluster && len(opts.files) == 0:
		return fmt.Errorf("no input: give manifests with -f FILE, -f DIR or -f - (standard input), or preview the live objects with --cluster")
	case opts.cluster && opts.now != "":
		return kube.Usage("--now is for -f: the live objects are previewed as the cluster stored them, with no admission")
	}
	switch opts.output {
	case "text", "json", "svg":
	default:
		return fmt.Errorf("-o %q is not an output format: use text, json or svg", opts.output)
	}
	rng, err := parseRange(opts, now)
	if err != nil {
		return err
	}
	asOf, err := admissionNow(opts, rng, now)
	if err != nil {
		return err
	}
	if opts.cluster {
		return runCluster(ctx, stdout, stderr, opts, rng)
	}
	docs, err := manifest.Read(opts.files, opts.recursive, stdin)
	if err != nil {
		return err
	}
	// First what admission does: only what it admits is previewed, as it would be stored
	// (calendars included).
	docs, refused, err := admit(context.Background(), docs, asOf)
	if err != nil {
		return err
	}
	// The calendars of the input, which the Schedules and ScheduledJobs name.
	docs, cals, refusedCals := takeCalendars(docs)
	cals.markRefused(refused)
	refused = append(refused, refusedCals...)
	writeRefused(stderr, refused)
	report, warnings, err := build(docs, cals, rng)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(stderr, "Warning:", w)
	}
	err = write(stdout, opts.output, report)
	if err == nil && len(refused) > 0 {
		err = &manifest.ExitError{Code: ExitRefused}
	}
	return err
}

// admissionNow is the instant admission judges the input as of: --now, or the earlier of the
// range's start and now, so that a preview of a past range shows what the objects did then (a
// one-shot of that time is not stale as of then), and one of a future range what the objects
// applied now will do (a one-shot due before the range is admitted, and draws nothing in it).
func admissionNow(opts options, rng Range, now time.Time) (time.Time, error) {
	if opts.now == "" {
		if rng.From.Before(now) {
			return rng.From, nil
		}
		return now, nil
	}
	t, err := time.Parse(time.RFC3339, opts.now)
	if err != nil {
		return time.Time{}, fmt.Errorf("--now %q is not an RFC 3339 time, e.g. 2027-03-08T00:00:00Z", opts.now)
	}
	return t.UTC(), nil
}

func parseRange(opts options, now time.Time) (Range, error) {
	from := now.UTC().Truncate(time.Second)
	if opts.from != "" {
		t, err := time.Parse(time.RFC3339, opts.from)
		if err != nil {
			return Range{}, fmt.Errorf("--from %q is not an RFC 3339 time, e.g. 2027-03-08T00:00:00Z", opts.from)
		}
		from = t.UTC()
	}
	if opts.to != "" && opts.duration != "" {
		return Range{}, fmt.Errorf("--to and --for both set: give the end of the range or its length, not both")
	}
	to := from.Add(7 * 24 * time.Hour)
	switch {
	case opts.to != "":
		t, err := time.Parse(time.RFC3339, opts.to)
		if err != nil {
			return Range{}, fmt.Errorf("--to %q is not an RFC 3339 time, e.g. 2027-03-15T00:00:00Z", opts.to)
		}
		to = t.UTC()
	case opts.duration != "":
		d, err := parseLength(opts.duration)
		if err != nil {
			return Range{}, err
		}
		to = from.Add(d)
	}
	if !to.After(from) {
		return Range{}, fmt.Errorf("the range is empty: the end %s is not after the start %s", to.Format(time.RFC3339), from.Format(time.RFC3339))
	}
	const longest = 400 * 24 * time.Hour
	if to.Sub(from) > longest {
		return Range{}, fmt.Errorf("the range is %s long: preview at most 400 days at a time", to.Sub(from))
	}
	return Range{From: from, To: to}, nil
}

// parseLength parses --for: a Go duration, or a whole number of days written "Nd".
func parseLength(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n > 0 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf(`--for %q is not a positive length: use a Go duration ("36h", "90m") or a number of days ("14d")`, s)
	}
	return d, nil
}

var (
	spaGK      = schema.GroupKind{Group: autoscalingv1alpha1.GroupVersion.Group, Kind: "ScheduledPodAutoscaler"}
	scheduleGK = schema.GroupKind{Group: autoscalingv1alpha1.GroupVersion.Group, Kind: "Schedule"}
	jobGK      = schema.GroupKind{Group: batchv1alpha1.GroupVersion.Group, Kind: "ScheduledJob"}
	eventJobGK = schema.GroupKind{Group: batchv1alpha1.GroupVersion.Group, Kind: "EventJob"}
)

// Build computes the preview of the objects in docs over rng. Problems with single objects
// (a Schedule that cannot be evaluated, a Schedule whose autoscaler is not in the input, a
// calendar that does not compile or is not in the input) are warnings; only undecodable
// almanac objects are errors. The Calendars and ClusterCalendars of docs are the calendars
// that the Schedules and ScheduledJobs name.
func Build(docs []manifest.Document, rng Range) (Report, []string, error) {
	docs, cals, refused := takeCalendars(docs)
	var warnings []string
	for _, r := range refused {
		name := r.Name
		if r.Namespace != "" {
			name = r.Namespace + "/" + r.Name
		}
		for _, e := range r.Errors {
			warnings = append(warnings, fmt.Sprintf("%s %s is not used: %s", r.Kind, name, e.Message))
		}
	}
	report, more, err := build(docs, cals, rng)
	return report, append(warnings, more...), err
}

// build is Build with the calendars already taken out of docs.
func build(docs []manifest.Document, cals Calendars, rng Range) (Report, []string, error) {
	var (
		spas      []*autoscalingv1alpha1.ScheduledPodAutoscaler
		schedules []autoscalingv1alpha1.Schedule
		jobs      []*batchv1alpha1.ScheduledJob
		eventJobs []*batchv1alpha1.EventJob
		warnings  []string
	)
	for _, d := range docs {
		var into any
		switch d.Object.GroupVersionKind().GroupKind() {
		case spaGK:
			spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
			spas, into = append(spas, spa), spa
		case scheduleGK:
			schedules = append(schedules, autoscalingv1alpha1.Schedule{})
			into = &schedules[len(schedules)-1]
		case jobGK:
			job := &batchv1alpha1.ScheduledJob{}
			jobs, into = append(jobs, job), job
		case eventJobGK:
			ej := &batchv1alpha1.EventJob{}
			eventJobs, into = append(eventJobs, ej), ej
		default:
			continue
		}
		if err := json.Unmarshal(d.Raw, into); err != nil {
			return Report{}, nil, fmt.Errorf("%s: document %d: %s %s: %w", d.File, d.Index, d.Object.GetKind(), d.Object.GetName(), err)
		}
	}
	for _, spa := range spas {
		spa.Namespace = namespaceOf(spa.Namespace)
	}
	for i := range schedules {
		schedules[i].Namespace = namespaceOf(schedules[i].Namespace)
	}

	report := Report{Range: rng}
	budget := timing.NewBudget(context.Background(), MaxSteps)
	stopped := func(kind, namespace, name string, err error) error {
		return fmt.Errorf("%s %s/%s: the preview stopped: %w: the range holds more windows, runs and comparisons of Schedules than a preview draws (%d); "+
			"preview a shorter range (--for, --to)", kind, namespace, name, err, MaxSteps)
	}
	targets := map[string]bool{}
	for _, spa := range spas {
		targets[spa.Namespace+"/"+spa.Name] = true
		a, ws, err := autoscaler(budget, spa, schedules, cals, rng)
		if err != nil {
			return Report{}, nil, stopped("ScheduledPodAutoscaler", spa.Namespace, spa.Name, err)
		}
		report.Autoscalers = append(report.Autoscalers, a)
		warnings = append(warnings, ws...)
	}
	for _, s := range schedules {
		if !targets[s.Namespace+"/"+s.Spec.ScaleTargetRef.Name] {
			warnings = append(warnings, fmt.Sprintf("Schedule %s/%s: its ScheduledPodAutoscaler %q is not in the input, so it is not previewed",
				s.Namespace, s.Name, s.Spec.ScaleTargetRef.Name))
		}
	}
	for _, j := range jobs {
		j.Namespace = namespaceOf(j.Namespace)
		job, err := scheduledJob(budget, j, cals, rng)
		if errors.Is(err, timing.ErrBudgetSpent) {
			return Report{}, nil, stopped("ScheduledJob", j.Namespace, j.Name, err)
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("ScheduledJob %s/%s is skipped: %v", j.Namespace, j.Name, err))
			continue
		}
		report.Jobs = append(report.Jobs, job)
		warnings = append(warnings, job.Notes...)
	}
	slices.SortFunc(report.Autoscalers, func(a, b Autoscaler) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	slices.SortFunc(report.Jobs, func(a, b Job) int { return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name) })
	for _, ej := range eventJobs {
		ej.Namespace = namespaceOf(ej.Namespace)
		if !ej.IsFanIn() {
			continue // it runs when its upstream Job ends, which preview cannot tell
		}
		f := fanIn(ej, report.Jobs)
		report.FanIns = append(report.FanIns, f)
		warnings = append(warnings, f.Notes...)
	}
	slices.SortFunc(report.FanIns, func(a, b FanIn) int { return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name) })
	return report, warnings, nil
}

func namespaceOf(ns string) string {
	if ns == "" {
		return DefaultNamespace
	}
	return ns
}

func autoscaler(budget *timing.Budget, spa *autoscalingv1alpha1.ScheduledPodAutoscaler, all []autoscalingv1alpha1.Schedule, cals Calendars, rng Range) (Autoscaler, []string, error) {
	var warnings []string
	book := cals.Book
	named := scaling.Named(spa, all, book, func(name string, err error) {
		warnings = append(warnings, fmt.Sprintf("Schedule %s/%s is skipped: %v", spa.Namespace, name, err))
	})
	a := Autoscaler{Namespace: spa.Namespace, Name: spa.Name, Baseline: scaling.Baseline(spa), Suspended: spa.Spec.Suspend}
	if spa.Attached() {
		ref := *spa.Spec.TargetRef
		a.Target, a.TargetMax = &ref, spa.Spec.MaxReplicas
	}
	for _, n := range named {
		s := Schedule{Name: n.Name, Spec: n.Window.Canonical(), Min: n.Min, Max: n.Max, Suspended: n.Suspended}
		if !n.Suspended {
			var err error
			if s.Intervals, err = n.Window.Intervals(budget, rng.From, rng.To); err != nil {
				return Autoscaler{}, nil, err
			}
		}
		a.Schedules = append(a.Schedules, s)
		if i := slices.IndexFunc(all, func(s autoscalingv1alpha1.Schedule) bool { return s.Namespace == spa.Namespace && s.Name == n.Name }); i >= 0 {
			a.Notes = append(a.Notes, cals.notes("Schedule", spa.Namespace, n.Name, all[i].Spec.Calendars, "no window opens")...)
		}
		if n.Suspended || a.Suspended {
			continue
		}
		skipped, err := n.Window.Skipped(budget, rng.From, rng.To)
		if err != nil {
			return Autoscaler{}, nil, err
		}
		for _, sk := range skipped {
			if sk.Start.Before(rng.From) {
				sk.Start = rng.From
			}
			if sk.End.After(rng.To) {
				sk.End = rng.To
			}
			if sk.Start.Before(sk.End) {
				a.Skipped = append(a.Skipped, SkippedWindow{Schedule: n.Name, Zone: n.Window.Zone(), Skipped: sk})
			}
		}
	}
	slices.SortStableFunc(a.Skipped, func(x, y SkippedWindow) int {
		if c := x.Start.Compare(y.Start); c != 0 {
			return c
		}
		return strings.Compare(x.Schedule, y.Schedule)
	})
	warnings = append(warnings, a.Notes...)
	// The bounds the reconciler applies: a suspended autoscaler is held at its baseline, and
	// under overlapPolicy Forbid a Schedule that overlaps an earlier one is left out.
	var err error
	if a.Segments, err = scaling.Timeline(budget, spa, all, book, rng.From, rng.To, nil); err != nil {
		return Autoscaler{}, nil, err
	}
	if !a.Suspended {
		d, err := scaling.Compute(context.Background(), spa, all, book, rng.From)
		if err != nil {
			return Autoscaler{}, nil, err
		}
		for _, l := range d.LeftOut {
			if l.NotCompared != "" {
				warnings = append(warnings, fmt.Sprintf("Schedule %s/%s is left out of ScheduledPodAutoscaler %s's bounds: its windows were not compared with those of the other Schedules: %s "+
					"(overlapPolicy Forbid)", spa.Namespace, l.Name, spa.Name, l.NotCompared))
				continue
			}
			warnings = append(warnings, fmt.Sprintf("Schedule %s/%s is left out of ScheduledPodAutoscaler %s's bounds while its windows overlap those of Schedule %q, created earlier, "+
				"from %s (overlapPolicy Forbid)", spa.Namespace, l.Name, spa.Name, l.Kept, timing.IntervalText(l.Overlap, l.Zone)))
		}
	}
	return a, warnings, nil
}

// scheduledJob previews a ScheduledJob with the time engine's reading of it, which admission
// and the reconciler share: a timestamp written in schedule is a one-shot, as admission
// stores it; the slots that the calendars it names skip do not run (a calendar that is not
// in the input skips every slot, as the controller holds the ScheduledJob).
func scheduledJob(budget *timing.Budget, j *batchv1alpha1.ScheduledJob, cals Calendars, rng Range) (Job, error) {
	spec, _ := j.TimingWith(cals.Book)
	sched, errs := spec.Compile()
	if len(errs) > 0 {
		return Job{}, timing.Join("spec.", errs)
	}
	job := Job{Namespace: j.Namespace, Name: j.Name, What: sched.String(), Zone: sched.Zone, Suspended: j.Spec.Suspend,
		Notes: cals.notes("ScheduledJob", j.Namespace, j.Name, j.Spec.Calendars, "no run starts")}
	if !job.Suspended {
		var err error
		if job.Runs, err = sched.Runs(budget, rng.From, rng.To); err != nil {
			return Job{}, err
		}
		if job.Skipped, err = sched.SkippedRuns(budget, rng.From, rng.To); err != nil {
			return Job{}, err
		}
	}
	return job, nil
}

// jsonReport is the JSON form of a Report, as documented for `almanac preview -o json`.
type jsonReport struct {
	Autoscalers []jsonAutoscaler `json:"autoscalers"`
	Jobs        []jsonJob        `json:"jobs"`
	// EventJobs are the EventJobs with several triggers; absent when there are none.
	EventJobs []jsonFanIn `json:"eventJobs,omitempty"`
}

type jsonAutoscaler struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Target is only there for an attached autoscaler.
	Target   *jsonTarget   `json:"target,omitempty"`
	Segments []jsonSegment `json:"segments"`
	// Skipped are the stretches of its Schedules' windows that calendars close; absent when
	// there are none.
	Skipped []jsonSkippedWindow `json:"skipped,omitempty"`
	// Notes name the calendars that its Schedules name and the input does not hold.
	Notes []string `json:"notes,omitempty"`
}

type jsonSkippedWindow struct {
	Schedule string `json:"schedule"`
	Start    string `json:"start"`
	End      string `json:"end"`
	Reason   string `json:"reason"`
}

// jsonTarget is the object an attached autoscaler changes: spec.targetRef, how almanac
// changes it (mode: the TargetKind) and the fields of it that almanac owns.
type jsonTarget struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Name       string   `json:"name"`
	Mode       string   `json:"mode"`
	Fields     []string `json:"fields"`
	// MaxReplicas is spec.maxReplicas of an autoscaler attached to a scale subresource, which
	// has no maximum: almanac writes only the replicas.
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`
}

type jsonSegment struct {
	Start       string   `json:"start"`
	End         string   `json:"end"`
	MinReplicas int32    `json:"minReplicas"`
	MaxReplicas int32    `json:"maxReplicas"`
	Schedules   []string `json:"schedules"`
	// Target is what an attached autoscaler's target is given in this segment, by the names
	// of its fields; absent for a generated HorizontalPodAutoscaler.
	Target *TargetValues `json:"target,omitempty"`
}

type jsonJob struct {
	Namespace string   `json:"namespace"`
	Name      string   `json:"name"`
	Runs      []string `json:"runs"`
	// Skipped are the slots that calendars skip (not in runs); absent when there are none.
	Skipped []jsonSkippedRun `json:"skipped,omitempty"`
	// Notes name the calendars that it names and the input does not hold.
	Notes []string `json:"notes,omitempty"`
}

type jsonSkippedRun struct {
	Time   string `json:"time"`
	Reason string `json:"reason"`
}

func utc(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// WriteJSON writes the report as
// {"autoscalers":[{"namespace","name","segments":[{"start","end","minReplicas","maxReplicas","schedules"}]}],"jobs":[{"namespace","name","runs"}]}.
// An attached autoscaler has "target":{"apiVersion","kind","name","mode","fields"[,"maxReplicas"]}
// too, and each of its segments "target", what the target is given:
// {"minReplicas","maxReplicas"}, {"minReplicaCount","maxReplicaCount"} or {"replicas"}.
// Where calendars skip something, an autoscaler has "skipped":[{"schedule","start","end","reason"}]
// and a ScheduledJob "skipped":[{"time","reason"}]; "notes" name the calendars that the input
// does not hold. These fields are absent when empty. EventJobs with several triggers are in
// "eventJobs":[{"namespace","name","sets":[{"slot","runs","upstream"[,"missing"]}][,"notes"]}],
// absent when there are none.
func WriteJSON(w io.Writer, r Report) error {
	out := jsonReport{Autoscalers: []jsonAutoscaler{}, Jobs: []jsonJob{}}
	for _, a := range r.Autoscalers {
		ja := jsonAutoscaler{Namespace: a.Namespace, Name: a.Name, Segments: []jsonSegment{}}
		if t := a.Target; t != nil {
			ja.Target = &jsonTarget{APIVersion: t.APIVersion, Kind: t.Kind, Name: t.Name, Mode: string(t.TargetKind()), Fields: targetFields(t.TargetKind())}
			if t.TargetKind() == autoscalingv1alpha1.TargetScale {
				ja.Target.MaxReplicas = a.TargetMax
			}
		}
		for _, s := range a.Segments {
			js := jsonSegment{
				Start: utc(s.Start), End: utc(s.End), MinReplicas: s.Bounds.Min, MaxReplicas: s.Bounds.Max,
				Schedules: append([]string{}, s.Active...),
			}
			if a.Target != nil {
				v := a.Gets(s.Bounds)
				js.Target = &v
			}
			ja.Segments = append(ja.Segments, js)
		}
		for _, sk := range a.Skipped {
			ja.Skipped = append(ja.Skipped, jsonSkippedWindow{Schedule: sk.Schedule, Start: utc(sk.Start), End: utc(sk.End), Reason: sk.Reason})
		}
		ja.Notes = a.Notes
		out.Autoscalers = append(out.Autoscalers, ja)
	}
	for _, j := range r.Jobs {
		jj := jsonJob{Namespace: j.Namespace, Name: j.Name, Runs: []string{}}
		for _, t := range j.Runs {
			jj.Runs = append(jj.Runs, utc(t))
		}
		for _, sk := range j.Skipped {
			jj.Skipped = append(jj.Skipped, jsonSkippedRun{Time: utc(sk.Start), Reason: sk.Reason})
		}
		jj.Notes = j.Notes
		out.Jobs = append(out.Jobs, jj)
	}
	for _, f := range r.FanIns {
		out.EventJobs = append(out.EventJobs, toJSONFanIn(f))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
