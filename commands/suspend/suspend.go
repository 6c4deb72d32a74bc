// Package suspend is `almanac suspend` and `almanac resume` (`kubectl almanac suspend
// sj/report`): set spec.suspend of a ScheduledPodAutoscaler, Schedule, ScheduledJob or
// EventJob to true or false with a merge patch under the field manager kubectl-almanac, and
// say what changed and what it means. The patch goes through almanac's admission webhooks and
// your RBAC like any other.
package suspend

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/commands/kube"
)

// FieldManager is the field manager of the patches (managedFields names it, and the
// ScheduledJob controller reads the time of its write as the instant of a resume).
const FieldManager = "kubectl-almanac"

// Kinds are the resources that suspend and resume take.
var Kinds = []kube.Resource{kube.ScheduledPodAutoscalers, kube.Schedules, kube.ScheduledJobs, kube.EventJobs}

// Options are the flags of `almanac suspend` and `almanac resume`.
type Options struct {
	// Flags are the kubeconfig flags; Namespace is the objects'.
	kube.Flags
	// DryRun sends the patch as a server-side dry run.
	DryRun bool
}

// NewCommand returns `almanac suspend` (suspend true) or `almanac resume` (false).
func NewCommand(suspend bool) *cobra.Command {
	opts := Options{}
	verb, effect := "resume", "spec.suspend: false"
	if suspend {
		verb, effect = "suspend", "spec.suspend: true"
	}
	cmd := &cobra.Command{
		Use:   verb + " KIND/NAME...",
		Short: strings.ToUpper(verb[:1]) + verb[1:] + " ScheduledPodAutoscalers, Schedules, ScheduledJobs or EventJobs (" + effect + ")",
		Long: strings.ToUpper(verb[:1]) + verb[1:] + ` the named objects: set ` + effect + ` with a merge patch, under the field manager
kubectl-almanac, and print what changed. An object that is so already is left alone.

  ScheduledPodAutoscaler  suspended: held at its baseline bounds; resumed: its Schedules apply.
  Schedule                suspended: its windows change nothing; resumed: they do again.
  ScheduledJob            suspended: no Job starts, and the slots that fall due meanwhile do
                          not run later; resumed: from the next slot on.
  EventJob                suspended: upstream Jobs that finish meanwhile start no run; resumed:
                          those that finish from then on do.

KIND is the kind, its plural or its short name, as kubectl names them: spa, schedule, sj, ej
(scheduledjob/report, sj/report, scheduledjobs.batch.almanac.dev/report). You need patch on the
resource in the namespace (almanac's chart adds it to the built-in edit and admin roles); to
resume a ScheduledJob or EventJob, which starts Jobs again, also create on jobs there (almanac's
permission check refuses the resume otherwise).

Exit status: 0 done, 1 refused by the cluster (not found, forbidden, refused by admission),
2 usage or kubeconfig error (nothing was sent).`,
		Example: fmt.Sprintf(`  almanac %[1]s sj/nightly-report -n reports
  almanac %[1]s spa/web schedule/black-friday -n shop`, verb),
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return Run(cmd.Context(), opts, suspend, args, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	kube.AddFlags(f, &opts.Flags, "Namespace of the objects (default: the context's namespace).")
	f.BoolVar(&opts.DryRun, "dry-run", false, "Send the patch as a server-side dry run: admission answers, nothing is stored.")
	return cmd
}

// Run sets spec.suspend of each object of args to suspend and reports it to out, in order; it
// stops at the first failure, a *kube.Error.
func Run(ctx context.Context, opts Options, suspend bool, args []string, out io.Writer) error {
	verb := map[bool]string{true: "suspend", false: "resume"}[suspend]
	if len(args) == 0 {
		return kube.Usage("give the objects to %s: %s %s KIND/NAME... [-n NAMESPACE], e.g. sj/nightly-report", verb, kube.Command, verb)
	}
	refs := make([]kube.Ref, 0, len(args))
	for _, a := range args {
		ref, err := kube.ParseRef(a, Kinds...)
		if err != nil {
			return kube.Usage("%v", err)
		}
		refs = append(refs, ref)
	}
	c, ns, err := kube.Connect(opts.Flags, nil)
	if err != nil {
		return err
	}
	for _, ref := range refs {
		if err := set(ctx, c, ns, ref, suspend, opts.DryRun, out); err != nil {
			return err
		}
	}
	return nil
}

// suspendOf reads spec.suspend of one of Kinds.
func suspendOf(obj client.Object) bool {
	switch o := obj.(type) {
	case *autoscalingv1alpha1.ScheduledPodAutoscaler:
		return o.Spec.Suspend
	case *autoscalingv1alpha1.Schedule:
		return o.Spec.Suspend
	case *batchv1alpha1.ScheduledJob:
		return o.Spec.Suspend
	case *batchv1alpha1.EventJob:
		return o.Spec.Suspend
	}
	return false
}

// meaning says what suspend (or resume) does to an object of kind.
func meaning(kind string, suspend bool) string {
	switch {
	case kind == kube.ScheduledPodAutoscalers.Kind && suspend:
		return "it is held at its baseline bounds"
	case kind == kube.ScheduledPodAutoscalers.Kind:
		return "its Schedules apply again"
	case kind == kube.Schedules.Kind && suspend:
		return "its windows change nothing"
	case kind == kube.Schedules.Kind:
		return "its windows apply again"
	case kind == kube.ScheduledJobs.Kind && suspend:
		return "no Job starts; running Jobs go on; slots that fall due meanwhile do not run later"
	case kind == kube.ScheduledJobs.Kind:
		return "it runs from its next slot on (see " + kube.Command + " next)"
	case kind == kube.EventJobs.Kind && suspend:
		return "upstream Jobs that finish meanwhile start no run"
	}
	return "upstream Jobs that finish from now on start runs"
}

// set patches spec.suspend of ref in ns, unless it is so already.
func set(ctx context.Context, c client.Client, ns string, ref kube.Ref, suspend, dryRun bool, out io.Writer) error {
	verb := map[bool]string{true: "suspend", false: "resume"}[suspend]
	obj := ref.Resource.NewEmpty()
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return kube.Refused("%s %q not found in namespace %q: check the name with `kubectl get %s -n %s`, or give its namespace with -n",
				ref.Resource.Kind, ref.Name, ns, ref.Resource.Plural, ns)
		}
		if !apierrors.IsForbidden(err) {
			return kube.Refused("failed to read %s %s/%s: %v", ref.Resource.Kind, ns, ref.Name, err)
		}
		// Forbidden to read it: the patch's answer is the one that counts.
	} else if suspendOf(obj) == suspend {
		_, _ = fmt.Fprintf(out, "%s unchanged (spec.suspend is %t already)\n", ref, suspend)
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"suspend": suspend}})
	opts := []client.PatchOption{client.FieldOwner(FieldManager)}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	obj = ref.Resource.NewEmpty()
	obj.SetNamespace(ns)
	obj.SetName(ref.Name)
	if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch), opts...); err != nil {
		return explain(err, verb, ns, ref)
	}
	done := map[bool]string{true: "suspended", false: "resumed"}[suspend]
	if dryRun {
		done += " (server dry run: nothing stored)"
	}
	_, _ = fmt.Fprintf(out, "%s %s (spec.suspend: %t → %t): %s\n", ref, done, !suspend, suspendOf(obj), meaning(ref.Resource.Kind, suspend))
	return nil
}

// explain turns the API server's refusal of the patch into a message that says what was
// refused and what to do.
func explain(err error, verb, ns string, ref kube.Ref) error {
	r := ref.Resource
	msg := kube.StatusMessage(err)
	switch {
	case apierrors.IsNotFound(err):
		return kube.Refused("%s %q not found in namespace %q: check the name with `kubectl get %s -n %s`, or give its namespace with -n", r.Kind, ref.Name, ns, r.Plural, ns)
	case apierrors.IsForbidden(err) && strings.Contains(msg, "admission webhook"):
		return kube.Refused("%s %s/%s: the %s was refused by admission: %s", r.Kind, ns, ref.Name, verb, msg)
	case apierrors.IsForbidden(err):
		return kube.Refused("you may not patch %s (%s) in namespace %q, and %s sets spec.suspend with a patch. "+
			"The API server answered: %s. Ask for a Role there that grants patch on %s (almanac's chart adds it to the built-in edit and admin roles)",
			r.Plural, r.GroupResource(), ns, verb, msg, r.GroupResource())
	case apierrors.IsInvalid(err):
		return kube.Refused("%s %s/%s: the %s was refused: %s", r.Kind, ns, ref.Name, verb, msg)
	case apierrors.IsConflict(err):
		return kube.Refused("%s %s/%s changed while it was being patched: run the command again", r.Kind, ns, ref.Name)
	}
	return kube.Refused("failed to %s %s %s/%s: %v", verb, r.Kind, ns, ref.Name, err)
}
