// Package run implements `almanac run`: one run of a ScheduledJob now, outside its schedule,
// counted. It sets the ScheduledJob's run-now annotation (batchv1alpha1.AnnotationRunNow) to a
// fresh token, which the controller turns into exactly one Job under the ScheduledJob's
// concurrencyPolicy and records in status.runNow; the command waits for that record and
// prints the Job's name. Setting the annotation goes through almanac's admission webhooks
// like any update, and their permission check asks whether the user may create Jobs in the
// namespace, since that is what it does.
package run

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/commands/kube"
)

// Options are the flags of `almanac run`.
type Options struct {
	// Flags are the kubeconfig flags; Namespace is the ScheduledJob's.
	kube.Flags
	// Wait waits for the Job to finish; its outcome is the exit status.
	Wait bool
	// Timeout bounds the wait for the controller's record and, with Wait, for the Job.
	Timeout time.Duration
	// Clock tells the time of the token (nil: the real clock).
	Clock clock.PassiveClock
	// Poll is how often status is read while waiting (0: 500 ms).
	Poll time.Duration
}

// NewCommand returns the `almanac run` command.
func NewCommand() *cobra.Command {
	opts := Options{}
	cmd := &cobra.Command{
		Use:   "run scheduledjob/NAME",
		Short: "Run a ScheduledJob's Job now, once, counted in its status",
		Long: `Run a ScheduledJob's Job now, outside its schedule: exactly one Job, under the ScheduledJob's
concurrencyPolicy, recorded in its status.runNow.

The command sets the annotation batch.almanac.dev/run-now on the ScheduledJob to a fresh token
(the time of the request and a random suffix). The controller starts one Job per distinct token,
named <name>-now<7 hex digits of the token's hash>, whose Pods read the instant of the request in
the annotation batch.almanac.dev/scheduled-time; it records the token in status.runNow, so that
no retry, restart or leader change starts a second Job for it. With concurrencyPolicy Forbid and
a Job running, the request is refused and recorded as refused (an event and the RunNow
condition say why); with Replace the running Jobs are deleted first. The slots of the schedule
are not changed.

Setting the annotation is an update of the ScheduledJob (you need patch on
scheduledjobs.batch.almanac.dev) and a request to create a Job: almanac's admission webhook asks
whether you may create Jobs in the namespace, as it does for the jobTemplate.

The ScheduledJob is scheduledjob/NAME, sj/NAME, scheduledjobs/NAME or NAME. The command prints
the Job's name once the controller has started it; with --wait it then waits for the Job to
finish.

Exit status: 0 done (with --wait: the Job completed), 1 refused (not found, forbidden, refused by
admission or by concurrencyPolicy, no answer from the controller within --timeout; with --wait:
the Job failed), 2 usage or kubeconfig error (nothing was sent).`,
		Example: `  almanac run scheduledjob/nightly-report -n reports
  almanac run sj/nightly-report -n reports --wait --timeout 30m`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return Run(cmd.Context(), opts, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	kube.AddFlags(f, &opts.Flags, "Namespace of the ScheduledJob (default: the context's namespace).")
	f.BoolVar(&opts.Wait, "wait", false, "Wait for the Job to finish; exit 0 when it completed, 1 when it failed.")
	f.DurationVar(&opts.Timeout, "timeout", 5*time.Minute, "How long to wait for the controller to start the Job and, with --wait, for the Job to finish.")
	return cmd
}

// ScheduledJobArg returns the ScheduledJob's name from the command's argument.
func ScheduledJobArg(arg string) (string, error) {
	name := arg
	if kind, rest, ok := strings.Cut(arg, "/"); ok {
		switch strings.ToLower(kind) {
		case "scheduledjob", "scheduledjobs", "sj", "scheduledjob.batch.almanac.dev", "scheduledjobs.batch.almanac.dev":
			name = rest
		default:
			return "", fmt.Errorf("%q is not a ScheduledJob: give scheduledjob/NAME, sj/NAME or NAME (%s run runs ScheduledJobs; an EventJob runs when its upstream Job ends)", arg, kube.Command)
		}
	}
	if name == "" || strings.Contains(name, "/") {
		return "", fmt.Errorf("%q names no ScheduledJob: give scheduledjob/NAME, sj/NAME or NAME", arg)
	}
	return name, nil
}

// NewToken returns a fresh run-now token: the time of the request in UTC and 8 random hex
// digits, "20270115T120000Z-1a2b3c4d" (25 characters).
func NewToken(now time.Time) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
}

// Run does what opts and args say and reports it: the Job's name to out, progress to errOut.
// Failures are *kube.Error.
func Run(ctx context.Context, opts Options, args []string, out, errOut io.Writer) error {
	if len(args) != 1 {
		return kube.Usage("give one ScheduledJob: %s run scheduledjob/NAME [-n NAMESPACE] [--wait]", kube.Command)
	}
	name, err := ScheduledJobArg(args[0])
	if err != nil {
		return kube.Usage("%v", err)
	}
	if opts.Timeout <= 0 {
		return kube.Usage("--timeout=%s: give a positive duration such as 5m", opts.Timeout)
	}
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	poll := opts.Poll
	if poll == 0 {
		poll = 500 * time.Millisecond
	}
	c, ns, err := kube.Connect(opts.Flags, nil)
	if err != nil {
		return err
	}
	token := NewToken(clk.Now())
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{batchv1alpha1.AnnotationRunNow: token}}})
	sj := &batchv1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := c.Patch(ctx, sj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return explain(err, ns, name)
	}
	_, _ = fmt.Fprintf(errOut, "Asked ScheduledJob %s/%s to run now (run-now token %s)\n", ns, name, token)

	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	var rec *batchv1alpha1.RunNowStatus
	err = wait.PollUntilContextCancel(ctx, poll, true, func(ctx context.Context) (bool, error) {
		cur := &batchv1alpha1.ScheduledJob{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cur); err != nil {
			if apierrors.IsNotFound(err) {
				return false, kube.Refused("ScheduledJob %s/%s was deleted before its controller ran it", ns, name)
			}
			return false, nil // a transient error: read again
		}
		if r := cur.Status.RunNow; r != nil && r.Token == token {
			rec = r
			return true, nil
		}
		if batchv1alpha1.RunNowToken(cur) != token {
			return false, kube.Refused("the run-now annotation of ScheduledJob %s/%s was changed to %q before the controller handled %q: someone else asked for a run too",
				ns, name, batchv1alpha1.RunNowToken(cur), token)
		}
		return false, nil
	})
	var coded *kube.Error
	switch {
	case errors.As(err, &coded):
		return coded
	case err != nil:
		return kube.Refused("the almanac controller did not record run-now token %s on ScheduledJob %s/%s within %s: is it running? "+
			"(kubectl get scheduledjob %s -n %s -o jsonpath='{.status.runNow}'; the request stays and runs when it does)", token, ns, name, opts.Timeout, name, ns)
	case rec.Refused != "":
		return kube.Refused("ScheduledJob %s/%s started no Job: %s", ns, name, rec.Refused)
	}
	_, _ = fmt.Fprintln(out, rec.JobName)
	_, _ = fmt.Fprintf(errOut, "Job %s/%s started for ScheduledJob %s (its Pods read %s as their instant)\n", ns, rec.JobName, name, batchv1alpha1.FormatTime(rec.Time.Time))
	if !opts.Wait {
		return nil
	}
	return waitJob(ctx, c, ns, rec.JobName, poll, opts.Timeout, errOut)
}

// waitJob waits until the Job has finished and turns its outcome into the exit status.
func waitJob(ctx context.Context, c client.Client, ns, name string, poll, timeout time.Duration, errOut io.Writer) error {
	var outcome batchv1.JobConditionType
	err := wait.PollUntilContextCancel(ctx, poll, true, func(ctx context.Context) (bool, error) {
		j := &batchv1.Job{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
			if apierrors.IsNotFound(err) {
				return false, kube.Refused("Job %s/%s was deleted before it finished", ns, name)
			}
			return false, nil
		}
		for _, cond := range j.Status.Conditions {
			if (cond.Type == batchv1.JobComplete || cond.Type == batchv1.JobFailed) && cond.Status == corev1.ConditionTrue {
				outcome = cond.Type
				return true, nil
			}
		}
		return false, nil
	})
	var coded *kube.Error
	switch {
	case errors.As(err, &coded):
		return coded
	case err != nil:
		return kube.Refused("Job %s/%s had not finished within --timeout=%s; it goes on running (kubectl get job %s -n %s)", ns, name, timeout, name, ns)
	case outcome == batchv1.JobFailed:
		return kube.Refused("Job %s/%s failed (kubectl describe job %s -n %s)", ns, name, name, ns)
	}
	_, _ = fmt.Fprintf(errOut, "Job %s/%s completed\n", ns, name)
	return nil
}

// explain turns the API server's refusal of the patch into a message that says what was
// refused and what to do.
func explain(err error, ns, name string) error {
	var s apierrors.APIStatus
	msg := err.Error()
	if errors.As(err, &s) {
		msg = s.Status().Message
	}
	switch {
	case apierrors.IsNotFound(err):
		return kube.Refused("ScheduledJob %q not found in namespace %q: check the name with `kubectl get scheduledjobs -n %s`, or give its namespace with -n", name, ns, ns)
	case apierrors.IsForbidden(err) && strings.Contains(msg, "admission webhook"):
		return kube.Refused("ScheduledJob %s/%s: the run was refused by admission: %s", ns, name, msg)
	case apierrors.IsForbidden(err):
		return kube.Refused("you may not patch ScheduledJobs (scheduledjobs.batch.almanac.dev) in namespace %q, and a run is asked for with a patch of its annotation. "+
			"The API server answered: %s. Ask for a Role there that grants patch on scheduledjobs.batch.almanac.dev (almanac's chart adds it to the built-in edit and admin roles)", ns, msg)
	case apierrors.IsInvalid(err):
		return kube.Refused("ScheduledJob %s/%s: the run was refused: %s", ns, name, msg)
	}
	return kube.Refused("failed to ask ScheduledJob %s/%s to run: %v", ns, name, err)
}
