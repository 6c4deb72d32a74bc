// Package override implements `almanac override`: a temporary change of a
// ScheduledPodAutoscaler's bounds, from now until a given time, for an incident or a launch
// that no Schedule foresaw. An override is an ordinary OneShot Schedule, labelled
// autoscaling.almanac.dev/override=true: it goes through the same admission webhooks and RBAC
// as any Schedule, combines with the others as the largest bounds, and the Schedule reconciler
// deletes it once its window has ended. The command also lists the overrides (--list) and
// deletes one before it ends (--remove).
package override

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/api/scaling"
	"github.com/almanac-dev/almanac/api/timing"
	"github.com/almanac-dev/almanac/commands/kube"
)

// Exit statuses of `almanac override` (kube's).
const (
	ExitOK      = kube.ExitOK
	ExitRefused = kube.ExitRefused
	ExitUsage   = kube.ExitUsage
)

// Error is returned when the command did not do what it was asked; its ExitCode is the
// process's exit status.
type Error = kube.Error

var (
	usage   = kube.Usage
	refused = kube.Refused
)

// Options are the flags of `almanac override`.
type Options struct {
	// Flags are the kubeconfig flags; Namespace is the autoscaler's and its override's.
	kube.Flags
	// AllNamespaces lists the overrides of every namespace (--list only).
	AllNamespaces bool
	// Min and Max are the bounds while the override is in force; Max nil leaves the
	// autoscaler's maxReplicas as it would be (raised to Min if below it).
	Min, Max *int32
	// Until or For says when the override ends (exactly one).
	Until string
	For   time.Duration
	// TimeZone is the zone of a wall-time Until and of the Schedule (default: Zone("")).
	TimeZone string
	// DryRun sends the create or delete as a server-side dry run: admission answers, nothing
	// is stored.
	DryRun bool
	// List lists the overrides instead of creating one.
	List bool
	// Remove names an override Schedule to delete instead of creating one.
	Remove string
	// Clock tells "now" (nil: the real clock); tests pass the clock of their manager.
	Clock clock.PassiveClock
}

// NewCommand returns the `almanac override` command.
func NewCommand() *cobra.Command {
	opts := Options{}
	var minReplicas, maxReplicas int32
	cmd := &cobra.Command{
		Use:   "override scheduledpodautoscaler/NAME --min N [--max M] (--until TIME | --for DURATION)",
		Short: "Change an autoscaler's bounds from now until a given time, with a Schedule that removes itself",
		Long: `Change the bounds of a ScheduledPodAutoscaler from now until a given time, for an incident
or a launch that no Schedule foresaw. The override is a OneShot Schedule named
NAME-override-<yyyymmddhhmm> (its start in UTC), labelled autoscaling.almanac.dev/override=true,
that the almanac controller deletes once its window has ended. It passes through almanac's
admission webhooks and your RBAC like any Schedule you apply (you need create on
schedules.autoscaling.almanac.dev in the namespace), and while it is open it combines with the
autoscaler's other open Schedules as they always do: the largest minReplicas and the largest
maxReplicas win.

The window starts now, rounded DOWN to the minute (a OneShot's times are whole minutes), and
ends at --until, or after --for rounded UP to the minute. --until is RFC 3339 with an offset
("2027-01-15T18:00:00+01:00", "2027-01-15T17:00:00Z") or a wall time "yyyy-MM-ddTHH:mm" in
--time-zone; a wall time that a daylight-saving change skips means the instant the clocks
jumped, one that occurs twice its first occurrence. --time-zone defaults to $TZ, else to the
zone /etc/localtime links to, when that is an IANA name, else UTC. The Schedule is written in
that zone, or in UTC when its start or end falls in an hour that the clocks repeat.

The autoscaler is scheduledpodautoscaler/NAME, spa/NAME, scheduledpodautoscalers/NAME or NAME.

  --list     lists the overrides (of -n NAMESPACE, or of every namespace with -A): autoscaler,
             bounds, window and time left. An override whose window has ended is listed as
             "ended" until the controller has deleted it.
  --remove   deletes an override before it ends: --remove NAME or --remove schedule/NAME.
             Only Schedules labelled as overrides are deleted this way.

Exit status: 0 done, 1 refused by the cluster (not found, forbidden, refused by admission),
2 usage or kubeconfig error (nothing was sent).`,
		Example: `  # At least 10 replicas of web for the next two hours:
  almanac override spa/web --min 10 --for 2h -n shop

  # Between 20 and 40 until 18:00 Berlin time:
  almanac override scheduledpodautoscaler/web --min 20 --max 40 --until 2027-01-15T18:00 --time-zone Europe/Berlin -n shop

  almanac override --list -A
  almanac override --remove web-override-202701151200 -n shop`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("min") {
				opts.Min = ptr.To(minReplicas)
			}
			if cmd.Flags().Changed("max") {
				opts.Max = ptr.To(maxReplicas)
			}
			return Run(cmd.Context(), opts, args, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	kube.AddFlags(f, &opts.Flags, "Namespace of the autoscaler and its overrides (default: the context's namespace).")
	f.BoolVarP(&opts.AllNamespaces, "all-namespaces", "A", false, "With --list: the overrides of every namespace.")
	f.Int32Var(&minReplicas, "min", 0, "minReplicas while the override is in force (required to create one).")
	f.Int32Var(&maxReplicas, "max", 0, "maxReplicas while the override is in force (default: the autoscaler's, raised to --min if below it).")
	f.StringVar(&opts.Until, "until", "", `When the override ends: RFC 3339 with an offset, or "yyyy-MM-ddTHH:mm" in --time-zone.`)
	f.DurationVar(&opts.For, "for", 0, "How long the override lasts from now (e.g. 30m, 2h), its end rounded up to the minute.")
	f.StringVar(&opts.TimeZone, "time-zone", "", "IANA zone of a wall-time --until and of the Schedule (default: $TZ, else /etc/localtime's zone, else UTC).")
	f.BoolVar(&opts.DryRun, "dry-run", false, "Send the create or delete as a server-side dry run: admission answers, nothing is stored.")
	f.BoolVar(&opts.List, "list", false, "List the overrides instead of creating one.")
	f.StringVar(&opts.Remove, "remove", "", "Delete this override (NAME or schedule/NAME) before it ends, instead of creating one.")
	return cmd
}

// Run does what opts and args say and reports it to out; failures are *Error.
func Run(ctx context.Context, opts Options, args []string, out io.Writer) error {
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	var create *Plan
	switch {
	case opts.List:
		if err := onlyFlags("--list", opts, args); err != nil {
			return err
		}
	case opts.Remove != "":
		if err := onlyFlags("--remove", opts, args); err != nil {
			return err
		}
		if opts.AllNamespaces {
			return usage("-A (--all-namespaces) is for --list only: --remove deletes one override, in -n NAMESPACE")
		}
		if _, err := ScheduleArg(opts.Remove); err != nil {
			return usage("%v", err)
		}
	default:
		if opts.AllNamespaces {
			return usage("-A (--all-namespaces) is for --list only: an override is created in -n NAMESPACE")
		}
		p, err := NewPlan(opts, args, clk.Now())
		if err != nil {
			return usage("%v", err)
		}
		create = &p
	}
	c, ns, warnings, err := connect(opts)
	if err != nil {
		return err
	}
	switch {
	case opts.List:
		return list(ctx, c, ns, opts.AllNamespaces, clk.Now(), out)
	case opts.Remove != "":
		return remove(ctx, c, ns, opts.Remove, opts.DryRun, out)
	}
	return createOverride(ctx, c, ns, *create, opts.DryRun, warnings, out)
}

// onlyFlags refuses, with --list or --remove (mode), the arguments and flags of a create.
func onlyFlags(mode string, opts Options, args []string) error {
	var extra []string
	if len(args) > 0 {
		extra = append(extra, "an autoscaler ("+strings.Join(args, " ")+")")
	}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"--min", opts.Min != nil}, {"--max", opts.Max != nil}, {"--until", opts.Until != ""},
		{"--for", opts.For != 0}, {"--time-zone", opts.TimeZone != ""},
		{"--list", mode != "--list" && opts.List}, {"--remove", mode != "--remove" && opts.Remove != ""},
	} {
		if f.set {
			extra = append(extra, f.name)
		}
	}
	if len(extra) > 0 {
		return usage("%s takes none of %s: leave them out, or leave out %s to create an override", mode, strings.Join(extra, ", "), mode)
	}
	return nil
}

// Plan is a checked request to create an override: everything the flags say, before any
// request is sent.
type Plan struct {
	Autoscaler string
	Min        int32
	Max        *int32
	Window     Window
}

// NewPlan checks the flags and the argument of a create at now. It is a pure function of its
// inputs (and of $TZ and /etc/localtime when opts.TimeZone is empty).
func NewPlan(opts Options, args []string, now time.Time) (Plan, error) {
	if len(args) != 1 {
		return Plan{}, fmt.Errorf("expected one autoscaler, scheduledpodautoscaler/NAME (or spa/NAME, or NAME), got %d arguments; or use --list or --remove", len(args))
	}
	name, err := AutoscalerName(args[0])
	if err != nil {
		return Plan{}, err
	}
	if err := checkBounds(opts.Min, opts.Max); err != nil {
		return Plan{}, err
	}
	zone, err := Zone(opts.TimeZone)
	if err != nil {
		return Plan{}, err
	}
	w, err := NewWindow(now, opts.Until, opts.For, zone)
	if err != nil {
		return Plan{}, err
	}
	return Plan{Autoscaler: name, Min: *opts.Min, Max: opts.Max, Window: w}, nil
}

// checkBounds checks --min and --max as the Schedule's schema would, so that a mistake is
// told before anything is sent.
func checkBounds(minReplicas, maxReplicas *int32) error {
	switch {
	case minReplicas == nil:
		return fmt.Errorf("--min is required: the override's minReplicas, e.g. --min 10")
	case *minReplicas < 0:
		return fmt.Errorf("--min=%d is negative: give 0 or more replicas", *minReplicas)
	case maxReplicas == nil:
		return nil
	case *maxReplicas < 1:
		return fmt.Errorf("--max=%d: maxReplicas is at least 1; give 1 or more, or leave --max out to keep the autoscaler's", *maxReplicas)
	case *minReplicas > *maxReplicas:
		return fmt.Errorf("--min=%d is greater than --max=%d: give a --max of at least %d, or leave --max out (the autoscaler's maxReplicas is then raised to --min if below it)",
			*minReplicas, *maxReplicas, *minReplicas)
	}
	return nil
}

// resourcePrefixes are the accepted spellings of the autoscaler's kind before "/".
var resourcePrefixes = []string{
	"scheduledpodautoscaler", "scheduledpodautoscalers", "spa",
	"scheduledpodautoscaler.autoscaling.almanac.dev", "scheduledpodautoscalers.autoscaling.almanac.dev",
}

// AutoscalerName reads the argument: scheduledpodautoscaler/NAME, spa/NAME,
// scheduledpodautoscalers/NAME (also with .autoscaling.almanac.dev) or NAME.
func AutoscalerName(arg string) (string, error) {
	name := arg
	if kind, rest, ok := strings.Cut(arg, "/"); ok {
		if !slices.Contains(resourcePrefixes, strings.ToLower(kind)) {
			return "", fmt.Errorf("%q: an override changes a ScheduledPodAutoscaler; write scheduledpodautoscaler/NAME, spa/NAME or NAME, not %s/", arg, kind)
		}
		name = rest
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "", fmt.Errorf("%q is not the name of a ScheduledPodAutoscaler: %s", name, strings.Join(errs, "; "))
	}
	return name, nil
}

// ScheduleName is the override's name, NAME-override-<yyyymmddhhmm> of its start in UTC, and
// the generateName prefix used instead when that name is taken (a second override of the
// same autoscaler in the same minute) or too long: NAME-override- with NAME cut so that the
// API server keeps all of it (it keeps 58 characters of a generateName).
func ScheduleName(autoscaler string, start time.Time) (name, generateName string) {
	const suffix = "-override-"
	const keep = 63 - 5 // the API server's generated names: 63 characters, 5 of them random
	prefix := autoscaler
	if len(prefix) > keep-len(suffix) {
		prefix = strings.TrimRight(prefix[:keep-len(suffix)], ".-")
	}
	generateName = prefix + suffix
	name = autoscaler + suffix + start.UTC().Format("200601021504")
	if len(validation.IsDNS1123Subdomain(name)) > 0 {
		name = ""
	}
	return name, generateName
}

// Schedule returns the override's Schedule in namespace.
func (p Plan) Schedule(namespace string) *autoscalingv1alpha1.Schedule {
	name, generateName := ScheduleName(p.Autoscaler, p.Window.Start)
	meta := metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{autoscalingv1alpha1.OverrideLabel: "true"}}
	if name == "" {
		meta.GenerateName = generateName
	}
	return &autoscalingv1alpha1.Schedule{
		TypeMeta:   metav1.TypeMeta{APIVersion: autoscalingv1alpha1.GroupVersion.String(), Kind: "Schedule"},
		ObjectMeta: meta,
		Spec: autoscalingv1alpha1.ScheduleSpec{
			ScaleTargetRef: autoscalingv1alpha1.ScaleTargetReference{Name: p.Autoscaler},
			MinReplicas:    ptr.To(p.Min),
			MaxReplicas:    p.Max,
			Type:           autoscalingv1alpha1.ScheduleTypeOneShot,
			StartTime:      p.Window.StartTime(),
			EndTime:        p.Window.EndTime(),
			TimeZone:       p.Window.ScheduleZone.Name,
		},
	}
}

// warningList collects the API server's warnings (admission's, e.g. an overlap with another
// Schedule), to print them after the result.
type warningList struct {
	mu   sync.Mutex
	list []string
}

func (w *warningList) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !slices.Contains(w.list, text) {
		w.list = append(w.list, text)
	}
}

func (w *warningList) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list
	w.list = nil
	return out
}

// connect returns a client of the kubeconfig's cluster, the namespace to use, and the API
// server's warnings as they come.
func connect(opts Options) (client.Client, string, *warningList, error) {
	warnings := &warningList{}
	c, ns, err := kube.Connect(opts.Flags, warnings)
	return c, ns, warnings, err
}

// createOverride checks that the autoscaler exists, then creates the Schedule.
func createOverride(ctx context.Context, c client.Client, ns string, p Plan, dryRun bool, warnings *warningList, out io.Writer) error {
	spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: p.Autoscaler}, spa)
	switch {
	case apierrors.IsNotFound(err):
		return refused("ScheduledPodAutoscaler %q not found in namespace %q: an override changes an existing autoscaler; check the name with `kubectl get scheduledpodautoscalers -n %s`, or give its namespace with -n",
			p.Autoscaler, ns, ns)
	case err != nil && !apierrors.IsForbidden(err):
		// Forbidden to read it: the create's answer is the one that counts.
		return refused("failed to read ScheduledPodAutoscaler %s/%s: %v", ns, p.Autoscaler, err)
	}
	s := p.Schedule(ns)
	var opts []client.CreateOption
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	err = c.Create(ctx, s, opts...)
	if apierrors.IsAlreadyExists(err) && s.Name != "" {
		// A second override of the autoscaler in the same minute: a name of its own.
		_, s.GenerateName = ScheduleName(p.Autoscaler, p.Window.Start)
		s.Name = ""
		err = c.Create(ctx, s, opts...)
	}
	if err != nil {
		return explain(err, "create", ns, s.Name)
	}
	w := p.Window
	done := "Created"
	if dryRun {
		done = "Would create (server dry run: admitted, nothing stored)"
	}
	_, _ = fmt.Fprintf(out, "%s Schedule %s/%s, an override of ScheduledPodAutoscaler %s:\n", done, ns, s.Name, p.Autoscaler)
	_, _ = fmt.Fprintf(out, "  from   %s (now, rounded down to the minute)\n", timing.InstantText(w.Start, w.Zone))
	_, _ = fmt.Fprintf(out, "  until  %s (the window lasts %s)\n", timing.InstantText(w.End, w.Zone), w.End.Sub(w.Start))
	_, _ = fmt.Fprintf(out, "  bounds %s\n", boundsText(p.Min, p.Max))
	if w.ScheduleZone.Name != w.Zone.Name {
		_, _ = fmt.Fprintf(out, "  written in UTC (%s to %s): in %s its start or end falls in an hour that the clocks repeat\n", s.Spec.StartTime, s.Spec.EndTime, w.Zone.Name)
	}
	if w.Zone.Warning != "" {
		_, _ = fmt.Fprintf(out, "Warning: --time-zone: %s\n", w.Zone.Warning)
	}
	for _, text := range warnings.take() {
		_, _ = fmt.Fprintf(out, "Warning: %s\n", text)
	}
	if !dryRun {
		_, _ = fmt.Fprintf(out, "It is deleted once it has ended; to end it sooner: %s override --remove %s -n %s\n", kube.Command, s.Name, ns)
	}
	return nil
}

// boundsText writes an override's bounds.
func boundsText(minReplicas int32, maxReplicas *int32) string {
	if maxReplicas == nil {
		return fmt.Sprintf("minReplicas %d, maxReplicas the autoscaler's (raised to %d if below it); while other Schedules are open the largest values win", minReplicas, minReplicas)
	}
	return fmt.Sprintf("minReplicas %d, maxReplicas %d; while other Schedules are open the largest values win", minReplicas, *maxReplicas)
}

// explain turns the API server's refusal of verb on a Schedule in ns into a message that says
// what was refused and what to do.
func explain(err error, verb, ns, name string) error {
	what := "Schedule"
	if name != "" {
		what = fmt.Sprintf("Schedule %q", name)
	}
	status, ok := apiStatus(err)
	switch {
	case ok && apierrors.IsForbidden(err) && strings.Contains(status.Message, "admission webhook"):
		return refused("%s was refused by admission in namespace %q: %s", what, ns, status.Message)
	case ok && apierrors.IsForbidden(err):
		return refused("you may not %s Schedules (schedules.autoscaling.almanac.dev) in namespace %q, and an override is a Schedule. "+
			"The API server answered: %s. Ask for a Role there that grants %s on schedules.autoscaling.almanac.dev "+
			"(almanac's chart adds it to the built-in edit and admin roles)", verb, ns, status.Message, verb)
	case ok && apierrors.IsInvalid(err) && status.Details != nil && len(status.Details.Causes) > 0:
		// One line per cause, as kubectl prints them.
		by := ""
		if _, rest, found := strings.Cut(status.Message, "admission webhook "); found {
			if hook, _, found := strings.Cut(rest, " denied"); found {
				by = " by admission webhook " + hook
			}
		}
		lines := []string{fmt.Sprintf("%s was refused%s in namespace %q:", what, by, ns)}
		for _, c := range status.Details.Causes {
			lines = append(lines, fmt.Sprintf("  %s: %s", c.Field, c.Message))
		}
		return refused("%s", strings.Join(lines, "\n"))
	case ok && apierrors.IsInvalid(err):
		return refused("%s was refused in namespace %q: %s", what, ns, status.Message)
	case ok:
		return refused("failed to %s %s in namespace %q: %s", verb, what, ns, status.Message)
	}
	return refused("failed to %s %s in namespace %q: %v", verb, what, ns, err)
}

func apiStatus(err error) (metav1.Status, bool) {
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		return s.Status(), true
	}
	return metav1.Status{}, false
}

// Entry is one override as --list shows it.
type Entry struct {
	Namespace, Name, Autoscaler string
	Min, Max                    *int32
	// Window is the OneShot's window; zero when the Schedule cannot be evaluated or is not a
	// OneShot (labelled by hand).
	Window timing.Interval
	Zone   timing.Zone
	// State is what the REMAINING column says.
	State string
}

// Entries returns the overrides among schedules at now, by namespace and end. It is a pure
// function.
func Entries(schedules []autoscalingv1alpha1.Schedule, now time.Time) []Entry {
	out := make([]Entry, 0, len(schedules))
	for i := range schedules {
		s := &schedules[i]
		e := Entry{Namespace: s.Namespace, Name: s.Name, Autoscaler: s.Spec.ScaleTargetRef.Name, Min: s.Spec.MinReplicas, Max: s.Spec.MaxReplicas}
		w, err := scaling.Compile(s, nil)
		iv, oneShot := timing.Interval{}, false
		if err == nil {
			e.Zone = w.Zone()
			iv, oneShot = w.OneShotInterval()
		}
		switch {
		case err != nil:
			e.State = "invalid: " + err.Error()
		case !oneShot:
			e.State = fmt.Sprintf("type %s: never removed by itself", s.Spec.Type)
		case !s.DeletionTimestamp.IsZero():
			e.Window, e.State = iv, "being deleted"
		case !iv.End.After(now):
			e.Window, e.State = iv, "ended (the controller deletes it)"
		case s.Spec.Suspend:
			e.Window, e.State = iv, "suspended"
		case iv.Start.After(now):
			e.Window, e.State = iv, "starts in "+iv.Start.Sub(now).Truncate(time.Second).String()
		default:
			e.Window, e.State = iv, iv.End.Sub(now).Truncate(time.Second).String()+" left"
		}
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b Entry) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		if c := a.Window.End.Compare(b.Window.End); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// list prints the overrides of ns (all: of every namespace).
func list(ctx context.Context, c client.Client, ns string, all bool, now time.Time, out io.Writer) error {
	schedules := &autoscalingv1alpha1.ScheduleList{}
	opts := []client.ListOption{client.MatchingLabels{autoscalingv1alpha1.OverrideLabel: "true"}}
	where := fmt.Sprintf("namespace %q", ns)
	if all {
		where = "any namespace"
	} else {
		opts = append(opts, client.InNamespace(ns))
	}
	if err := c.List(ctx, schedules, opts...); err != nil {
		if apierrors.IsForbidden(err) {
			return refused("you may not list Schedules (schedules.autoscaling.almanac.dev) in %s: %v", where, err)
		}
		return refused("failed to list the overrides in %s: %v", where, err)
	}
	WriteList(out, Entries(schedules.Items, now), all, where)
	return nil
}

// WriteList writes entries as a table (with a NAMESPACE column when all), or says that there
// are none in where.
func WriteList(out io.Writer, entries []Entry, all bool, where string) {
	if len(entries) == 0 {
		_, _ = fmt.Fprintf(out, "No overrides in %s.\n", where)
		return
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	header := "NAME\tAUTOSCALER\tMIN\tMAX\tFROM\tUNTIL\tTIME ZONE\tUNTIL (UTC)\tREMAINING"
	if all {
		header = "NAMESPACE\t" + header
	}
	_, _ = fmt.Fprintln(tw, header)
	replicas := func(n *int32) string {
		if n == nil {
			return "-"
		}
		return fmt.Sprint(*n)
	}
	for _, e := range entries {
		from, until, zone, utc := "-", "-", "-", "-"
		if !e.Window.End.IsZero() {
			from = e.Window.Start.In(e.Zone.Location).Format("2006-01-02 15:04")
			until = e.Window.End.In(e.Zone.Location).Format("2006-01-02 15:04")
			zone = e.Zone.Name
			utc = e.Window.End.UTC().Format("2006-01-02 15:04")
		}
		row := strings.Join([]string{e.Name, e.Autoscaler, replicas(e.Min), replicas(e.Max), from, until, zone, utc, e.State}, "\t")
		if all {
			row = e.Namespace + "\t" + row
		}
		_, _ = fmt.Fprintln(tw, row)
	}
	_ = tw.Flush()
}

// ScheduleArg reads --remove: NAME, or schedule/NAME (schedules/, and with
// .autoscaling.almanac.dev).
func ScheduleArg(arg string) (string, error) {
	name := arg
	if kind, rest, ok := strings.Cut(arg, "/"); ok {
		switch strings.ToLower(kind) {
		case "schedule", "schedules", "schedule.autoscaling.almanac.dev", "schedules.autoscaling.almanac.dev":
			name = rest
		default:
			return "", fmt.Errorf("--remove=%q: an override is a Schedule; write NAME or schedule/NAME, not %s/", arg, kind)
		}
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "", fmt.Errorf("--remove=%q: %q is not the name of a Schedule: %s", arg, name, strings.Join(errs, "; "))
	}
	return name, nil
}

// remove deletes the override arg in ns, only if it is one, under a precondition on the UID
// and resourceVersion read.
func remove(ctx context.Context, c client.Client, ns, arg string, dryRun bool, out io.Writer) error {
	name, _ := ScheduleArg(arg) // checked by Run
	s := &autoscalingv1alpha1.Schedule{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return refused("Schedule %q not found in namespace %q: it may have ended and been deleted; see the overrides with `%s override --list -n %s`", name, ns, kube.Command, ns)
		}
		return explain(err, "get", ns, name)
	}
	if s.Labels[autoscalingv1alpha1.OverrideLabel] != "true" {
		return refused("Schedule %s/%s is not an override (it has no label %s=true): --remove deletes only overrides; delete another Schedule with `kubectl delete schedule %s -n %s`",
			ns, name, autoscalingv1alpha1.OverrideLabel, name, ns)
	}
	opts := []client.DeleteOption{client.Preconditions{UID: &s.UID, ResourceVersion: &s.ResourceVersion}}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	if err := c.Delete(ctx, s, opts...); err != nil {
		switch {
		case apierrors.IsNotFound(err):
			return refused("Schedule %s/%s was deleted meanwhile (its window may have ended)", ns, name)
		case apierrors.IsConflict(err):
			return refused("Schedule %s/%s changed while it was being removed: run the command again", ns, name)
		}
		return explain(err, "delete", ns, name)
	}
	done := "Deleted"
	if dryRun {
		done = "Would delete (server dry run: nothing deleted)"
	}
	_, _ = fmt.Fprintf(out, "%s Schedule %s/%s, an override of ScheduledPodAutoscaler %s: its bounds now come from its other open Schedules, or its baseline.\n",
		done, ns, name, s.Spec.ScaleTargetRef.Name)
	return nil
}
