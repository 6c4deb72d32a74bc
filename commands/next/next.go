// Package next is `almanac next` (`kubectl almanac next`): for each ScheduledPodAutoscaler of a
// namespace, or of the cluster, the next instant at which its bounds change, to what, and
// because of which Schedule's window (or why nothing changes); for each ScheduledJob its next
// run, and for each EventJob what it waits for, each with the reason it is what it is
// (suspended, a slot a calendar skips, a missing calendar that holds it, concurrencyPolicy
// Forbid while a Job runs). It reads the live objects through the kubeconfig and answers with
// the reconcilers' own engine: api/scaling for bounds, the time engine (api/timing) for slots,
// and the calendars read as the controller reads them (calendarv1alpha1.ReadBook).
package next

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/commands/kube"
)

// Options are the flags of `almanac next`.
type Options struct {
	// Flags are the kubeconfig flags; Namespace is the namespace to read.
	kube.Flags
	// AllNamespaces reads every namespace.
	AllNamespaces bool
	// Output is "" (a table), "wide", "json" or "yaml".
	Output string
	// Clock tells "now" (nil: the real clock).
	Clock clock.PassiveClock
}

// NewCommand returns the `almanac next` command.
func NewCommand() *cobra.Command {
	opts := Options{}
	cmd := &cobra.Command{
		Use:   "next [-n NAMESPACE | -A] [-o wide|json|yaml]",
		Short: "Show when each autoscaler's bounds change next, and when each ScheduledJob runs next, and why",
		Long: `Show, for the live objects of a namespace (or of every namespace with -A), what happens next:

  ScheduledPodAutoscaler  the next instant its minReplicas or maxReplicas change, from what to
                          what, and which Schedules' windows open or close then; or why nothing
                          changes (suspended, held by a calendar that does not exist, no windows
                          ahead), and the windows that calendars skip before it.
  ScheduledJob            its next run, and why it is that one: the slots that calendars skip
                          before it, suspended, held by a missing calendar, concurrencyPolicy
                          Forbid while a Job runs.
  EventJob                what it waits for (the upstream Jobs and their outcome), and the next
                          run of an upstream ScheduledJob; with several triggers (fan-in), the
                          rule of its sets, its open sets with the runs they have and those they
                          wait for until their horizon, and how many sets failed or expired.

The answers come from the controller's own engine, with the calendars that the objects name as
the controller finds them, so they are what the controller will do if nothing changes. Times
are written in the time zone of the Schedule or ScheduledJob they come from, with how far
ahead they are; -o json and -o yaml add them in UTC (RFC 3339).

You need get and list on almanac's kinds in the namespace (the built-in view role has them
once almanac's chart is installed), and get on the Calendars and ClusterCalendars they name.

Exit status: 0 done, 1 refused by the cluster (forbidden), 2 usage or kubeconfig error.`,
		Example: `  almanac next -n shop
  almanac next -A -o wide
  almanac next -n reports -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return Run(cmd.Context(), opts, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	kube.AddFlags(f, &opts.Flags, "Namespace to read (default: the context's namespace).")
	f.BoolVarP(&opts.AllNamespaces, "all-namespaces", "A", false, "Read every namespace.")
	f.StringVarP(&opts.Output, "output", "o", "", "Output format: wide (more columns), json or yaml; a table when omitted.")
	return cmd
}

// Run reads the objects that opts name and writes what happens next to out. Failures are
// *kube.Error.
func Run(ctx context.Context, opts Options, out io.Writer) error {
	switch opts.Output {
	case "", "wide", "json", "yaml":
	default:
		return kube.Usage("-o %q is not an output format: use wide, json or yaml, or leave -o out for a table", opts.Output)
	}
	if opts.AllNamespaces && opts.Namespace != "" {
		return kube.Usage("-A (--all-namespaces) and -n %s both given: read one namespace or all of them", opts.Namespace)
	}
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	c, ns, err := kube.Connect(opts.Flags, nil)
	if err != nil {
		return err
	}
	if opts.AllNamespaces {
		ns = ""
	}
	objs, err := Read(ctx, c, ns)
	if err != nil {
		return err
	}
	now := clk.Now()
	entries := Entries(ctx, objs, now)
	switch opts.Output {
	case "json", "yaml":
		return WriteData(out, opts.Output, entries, now)
	}
	WriteTable(out, entries, now, opts.AllNamespaces, opts.Output == "wide", where(ns))
	return nil
}

func where(ns string) string {
	if ns == "" {
		return "any namespace"
	}
	return fmt.Sprintf("namespace %q", ns)
}

// Objects are the live objects that `almanac next` reads, and the calendars they name by
// namespace (calendarv1alpha1.ReadBook of each namespace).
type Objects struct {
	Autoscalers   []autoscalingv1alpha1.ScheduledPodAutoscaler
	Schedules     []autoscalingv1alpha1.Schedule
	ScheduledJobs []batchv1alpha1.ScheduledJob
	EventJobs     []batchv1alpha1.EventJob
	Books         map[string]*calendarv1alpha1.Book
}

// Read lists almanac's objects in ns (every namespace when ns is "") and reads the calendars
// they name.
func Read(ctx context.Context, c client.Reader, ns string) (Objects, error) {
	var objs Objects
	spas := &autoscalingv1alpha1.ScheduledPodAutoscalerList{}
	schedules := &autoscalingv1alpha1.ScheduleList{}
	sjs := &batchv1alpha1.ScheduledJobList{}
	ejs := &batchv1alpha1.EventJobList{}
	for _, l := range []struct {
		r    kube.Resource
		list client.ObjectList
	}{{kube.ScheduledPodAutoscalers, spas}, {kube.Schedules, schedules}, {kube.ScheduledJobs, sjs}, {kube.EventJobs, ejs}} {
		if err := kube.List(ctx, c, l.r, ns, l.list); err != nil {
			return Objects{}, err
		}
	}
	objs.Autoscalers, objs.Schedules, objs.ScheduledJobs, objs.EventJobs = spas.Items, schedules.Items, sjs.Items, ejs.Items
	refs := map[string][]*calendarv1alpha1.Calendars{}
	for i := range objs.Schedules {
		s := &objs.Schedules[i]
		refs[s.Namespace] = append(refs[s.Namespace], s.Spec.Calendars)
	}
	for i := range objs.ScheduledJobs {
		sj := &objs.ScheduledJobs[i]
		refs[sj.Namespace] = append(refs[sj.Namespace], sj.Spec.Calendars)
	}
	objs.Books = map[string]*calendarv1alpha1.Book{}
	for namespace, list := range refs {
		book, err := calendarv1alpha1.ReadBook(ctx, kube.CalendarGetter{Reader: c}, namespace, list...)
		if err != nil {
			return Objects{}, kube.ReadRefused(err, "get", kube.Calendars, fmt.Sprintf("namespace %q (or ClusterCalendars in the cluster)", namespace))
		}
		objs.Books[namespace] = book
	}
	return objs, nil
}

// Entries says what happens next to each object of objs after now: autoscalers first, then
// ScheduledJobs, then EventJobs, each by namespace and name. It is a pure function of objs and
// now.
func Entries(ctx context.Context, objs Objects, now time.Time) []Entry {
	var out []Entry
	for i := range objs.Autoscalers {
		spa := &objs.Autoscalers[i]
		out = append(out, autoscalerEntry(ctx, spa, objs.Schedules, objs.Books[spa.Namespace], now))
	}
	jobs := map[string]Entry{}
	for i := range objs.ScheduledJobs {
		sj := &objs.ScheduledJobs[i]
		e := scheduledJobEntry(ctx, sj, objs.Books[sj.Namespace], now)
		jobs[sj.Namespace+"/"+sj.Name] = e
		out = append(out, e)
	}
	for i := range objs.EventJobs {
		out = append(out, eventJobEntry(&objs.EventJobs[i], jobs, now))
	}
	order := map[string]int{kube.ScheduledPodAutoscalers.Kind: 0, kube.ScheduledJobs.Kind: 1, kube.EventJobs.Kind: 2}
	slices.SortStableFunc(out, func(a, b Entry) int {
		if c := order[a.Kind] - order[b.Kind]; c != 0 {
			return c
		}
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}
