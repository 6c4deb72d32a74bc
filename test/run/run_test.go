package run_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/commands/kube"
	"github.com/almanac-dev/almanac/commands/run"
)

// Each `almanac run` starts exactly one Job, prints its name, and is recorded; the Job's Pods
// carry the instant of the request for the downward API.
func TestRunStartsOneJobEachTime(t *testing.T) {
	ns := newNamespace(t)
	create(t, scheduledJob(ns, "report", batchv1alpha1.ConcurrencyPolicyAllow))
	var names []string
	for range 2 {
		out, errOut, err := runCommand(ns, "", run.Options{}, "sj/report")
		if err != nil {
			t.Fatalf("almanac run: %v\n%s", err, errOut)
		}
		names = append(names, strings.TrimSpace(out))
		t.Logf("almanac run printed %q; %s", strings.TrimSpace(out), strings.TrimSpace(errOut))
	}
	if names[0] == names[1] || !strings.HasPrefix(names[0], "report-now") {
		t.Fatalf("Job names %v, want two distinct report-now… names", names)
	}
	list := &batchv1.JobList{}
	if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 {
		t.Fatalf("%d Jobs, want exactly 2", len(list.Items))
	}
	for _, j := range list.Items {
		if _, ok := batchv1alpha1.ParseTime(j.Spec.Template.Annotations[batchv1alpha1.AnnotationScheduledTime]); !ok || j.Spec.Template.Annotations[batchv1alpha1.AnnotationRunNowToken] == "" {
			t.Errorf("Job %s: Pod template annotations %v, want the instant and the token", j.Name, j.Spec.Template.Annotations)
		}
	}
}

// concurrencyPolicy Forbid: while the first run's Job runs, a second run is refused, with the
// reason, and exit status 1.
func TestRunRefusedByForbid(t *testing.T) {
	ns := newNamespace(t)
	create(t, scheduledJob(ns, "single", batchv1alpha1.ConcurrencyPolicyForbid))
	if _, errOut, err := runCommand(ns, "", run.Options{}, "scheduledjob/single"); err != nil {
		t.Fatalf("the first run: %v\n%s", err, errOut)
	}
	_, _, err := runCommand(ns, "", run.Options{}, "scheduledjob/single")
	wantRefused(t, err, "started no Job: concurrencyPolicy is Forbid and Job single-now")
}

// --wait follows the Job: exit 0 when it completes, 1 when it fails.
func TestRunWait(t *testing.T) {
	ns := newNamespace(t)
	create(t, scheduledJob(ns, "report", batchv1alpha1.ConcurrencyPolicyAllow))
	previous := ""
	for _, outcome := range []batchv1.JobConditionType{batchv1.JobComplete, batchv1.JobFailed} {
		done := make(chan error, 1)
		var out bytes.Buffer
		go func() {
			_, _, err := runCommandTo(ns, "", run.Options{Wait: true, Timeout: time.Minute, Poll: 50 * time.Millisecond}, &out, "report")
			done <- err
		}()
		name := ""
		deadline := time.Now().Add(30 * time.Second)
		// The second run's record, not the first one's: until the command's patch of the
		// token lands, status.runNow still names the first run's Job with the first token.
		for name == "" && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			sj := &batchv1alpha1.ScheduledJob{}
			if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "report"}, sj); err == nil && sj.Status.RunNow != nil &&
				sj.Status.RunNow.Token == batchv1alpha1.RunNowToken(sj) && sj.Status.RunNow.JobName != previous {
				name = sj.Status.RunNow.JobName
			}
		}
		if name == "" {
			t.Fatal("no run-now Job recorded")
		}
		previous = name
		finish(t, ns, name, outcome)
		select {
		case err := <-done:
			if outcome == batchv1.JobComplete && err != nil {
				t.Errorf("--wait on a Job that completed: %v", err)
			}
			if outcome == batchv1.JobFailed {
				wantRefused(t, err, "failed")
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("--wait did not return after Job %s got %s", name, outcome)
		}
	}
}

func TestRunNotFound(t *testing.T) {
	ns := newNamespace(t)
	_, _, err := runCommand(ns, "", run.Options{}, "sj/nothing")
	wantRefused(t, err, fmt.Sprintf(`ScheduledJob "nothing" not found in namespace %q`, ns))
}

func TestRunUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"a", "b"}, {"cronjob/a"}, {"sj/"}} {
		_, _, err := runCommand("default", "", run.Options{}, args...)
		var e *kube.Error
		if !errors.As(err, &e) || e.ExitCode() != kube.ExitUsage {
			t.Errorf("almanac run %v: %v, want exit status %d", args, err, kube.ExitUsage)
		}
	}
}

// What a user may make almanac do is never more than what that user may do: mallory may patch
// ScheduledJobs but not create Jobs, and the permission check refuses her run; eve may only
// read, and the API server refuses her patch. Neither starts a Job.
func TestRunRefusedToUsersWhoMayNotCreateJobs(t *testing.T) {
	ns := newNamespace(t)
	create(t, scheduledJob(ns, "report", batchv1alpha1.ConcurrencyPolicyAllow))
	grant(t, ns, "mallory", []string{"get", "list", "watch", "patch"})
	grant(t, ns, "eve", []string{"get", "list", "watch"})

	_, _, err := runCommand(ns, impersonating(t, "mallory"), run.Options{}, "sj/report")
	wantRefused(t, err, "refused by admission")
	wantRefused(t, err, `user "mallory" may not create Jobs (batch/v1 jobs)`)
	wantRefused(t, err, "metadata.annotations[batch.almanac.dev/run-now]")
	t.Logf("as mallory: %v", err)
	_, _, err = runCommand(ns, impersonating(t, "eve"), run.Options{}, "sj/report")
	wantRefused(t, err, fmt.Sprintf("you may not patch ScheduledJobs (scheduledjobs.batch.almanac.dev) in namespace %q", ns))
	t.Logf("as eve: %v", err)

	list := &batchv1.JobList{}
	if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil || len(list.Items) != 0 {
		t.Errorf("Jobs in %s: %d (%v), want none", ns, len(list.Items), err)
	}
}

func scheduledJob(ns, name string, policy batchv1alpha1.ConcurrencyPolicy) *batchv1alpha1.ScheduledJob {
	return &batchv1alpha1.ScheduledJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1alpha1.ScheduledJobSpec{
			Schedule: "0 3 * * *",
			TimeZone: "UTC",
			JobPolicy: batchv1alpha1.JobPolicy{
				ConcurrencyPolicy: policy,
				JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
				}}}},
			},
		},
	}
}

// finish gives Job ns/name the condition outcome, as the Job controller would (envtest runs
// none).
func finish(t *testing.T, ns, name string, outcome batchv1.JobConditionType) {
	t.Helper()
	// The reconciler writes the Job too (its finalizer): retry on a conflict.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error { return finishOnce(ns, name, outcome) }); err != nil {
		t.Fatal(err)
	}
}

func finishOnce(ns, name string, outcome batchv1.JobConditionType) error {
	j := &batchv1.Job{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
		return err
	}
	now := metav1.Now()
	j.Status.StartTime = &now
	if outcome == batchv1.JobComplete {
		j.Status.CompletionTime = &now
		j.Status.Succeeded = 1
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now})
	} else {
		j.Status.Failed = 1
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: outcome, Status: corev1.ConditionTrue, LastTransitionTime: now})
	return env.Client.Status().Update(context.Background(), j)
}

func grant(t *testing.T, ns, user string, verbs []string) {
	t.Helper()
	create(t,
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user},
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{batchv1alpha1.GroupVersion.Group},
				Resources: []string{"scheduledjobs"},
				Verbs:     verbs,
			}},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		})
}

// runCommand runs `almanac run` with opts in ns, through env's kubeconfig (or kubeconfig),
// and returns what it printed on its standard output and error.
func runCommand(ns, kubeconfig string, opts run.Options, args ...string) (string, string, error) {
	var out bytes.Buffer
	return runCommandTo(ns, kubeconfig, opts, &out, args...)
}

func runCommandTo(ns, kubeconfig string, opts run.Options, out *bytes.Buffer, args ...string) (string, string, error) {
	if kubeconfig == "" {
		kubeconfig = env.KubeconfigPath
	}
	opts.Kubeconfig, opts.Namespace = kubeconfig, ns
	if opts.Timeout == 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.Poll == 0 {
		opts.Poll = 50 * time.Millisecond
	}
	var errOut bytes.Buffer
	err := run.Run(context.Background(), opts, args, out, &errOut)
	return out.String(), errOut.String(), err
}

// impersonating writes a kubeconfig that impersonates user (testenv's).
func impersonating(t *testing.T, user string) string {
	t.Helper()
	path, err := env.ImpersonatingKubeconfig(t.TempDir(), user)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func wantRefused(t *testing.T, err error, want string) {
	t.Helper()
	var e *kube.Error
	if !errors.As(err, &e) || e.ExitCode() != kube.ExitRefused || !strings.Contains(e.Msg, want) {
		t.Fatalf("got %v, want exit status %d and an error with %q", err, kube.ExitRefused, want)
	}
}

func newNamespace(t *testing.T) string { return env.NewNamespace(t, "run") }

func create(t *testing.T, objs ...client.Object) { t.Helper(); env.Create(t, objs...) }
