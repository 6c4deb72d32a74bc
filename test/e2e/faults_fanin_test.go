//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

// The fault suite's fan-in: three every-minute ScheduledJobs whose Jobs take about 5, 15 and
// 25 s, and an AllOf EventJob "load" over them (fanInManifests). Half of the leader kills of
// (c) are aimed at the moment that matters most to it: between the last upstream Job of a
// slot completing and the set's Job being created. The leader's manager process is stopped
// (SIGSTOP) just before extract-c's container ends, so that it can create nothing from then on; once
// the Job controller has marked extract-c's Job complete, the process is killed (SIGKILL) and
// its Pod deleted. The next leader must create the set's Job, once: every slot whose three
// upstream Jobs completed has exactly one Job of the EventJob, none lost, none twice.

// fanInOwner is the EventJob of fanInManifests.
const fanInOwner = "load"

// fanInKill is what killBeforeFanIn did.
type fanInKill struct {
	fault
	slot time.Time
	// between is true when the leader was stopped before extract-c's Job was complete and
	// killed after it was, with no Job of the set yet: the case this kill is for. It is false
	// when extract-c had ended before a leader could be stopped (the leader was still being
	// elected after the previous kill); the kill is then an ordinary one.
	between bool
	// completedAfter is how long after the leader was stopped extract-c's Job was complete.
	completedAfter time.Duration
}

// killBeforeFanIn stops the leader just before extract-c's Job of slot ends (its container
// sleeps 25 s: 24.5 s after it started), waits until that Job is complete, and kills the
// leader (see above).
func killBeforeFanIn(t *testing.T, ctx context.Context, lease *leaseLog, ns string, slot time.Time) (fanInKill, error) {
	t.Helper()
	k := fanInKill{slot: slot}
	key := slot.UTC().Format(time.RFC3339)
	deadline := slot.Add(time.Minute)
	var job batchv1.Job
	var started time.Time
	for started.IsZero() {
		if time.Now().After(deadline) {
			return k, fmt.Errorf("extract-c's Pod of %s did not start within a minute", key)
		}
		time.Sleep(100 * time.Millisecond)
		i := slices.IndexFunc(jobsOf(t, ns, "ScheduledJob", "extract-c"), func(j batchv1.Job) bool {
			return j.Annotations[batchv1alpha1.AnnotationScheduledTime] == key
		})
		if i < 0 {
			continue
		}
		job = jobsOf(t, ns, "ScheduledJob", "extract-c")[i]
		pods := &corev1.PodList{}
		if err := kube.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"job-name": job.Name}); err != nil {
			return k, err
		}
		for _, p := range pods.Items {
			for _, c := range p.Status.ContainerStatuses {
				switch {
				case c.State.Running != nil:
					started = c.State.Running.StartedAt.Time
				case c.State.Terminated != nil:
					started = c.State.Terminated.StartedAt.Time
				}
			}
		}
	}
	// The container started within the second that startedAt names, and ends 25 s later; the
	// Job controller marks the Job complete a second or two after that. Stopped 24.5 s after
	// startedAt, the leader is stopped for about 1 to 3 s: within even a short Lease (the
	// other replica takes over only once it expires, which between reports).
	sleepUntil(started.Add(24*time.Second + 500*time.Millisecond))
	pod, pid, err := leaderProcess(lease, 40*time.Second)
	if err != nil {
		return k, err
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return k, fmt.Errorf("stop %d (%s): %w", pid, pod, err)
	}
	k.fault = fault{name: "(c) leader killed between the fan-in's last upstream and its Job", start: time.Now(), killed: pod}
	stopped := k.start
	completeBefore := false
	if err := kube.Get(ctx, client.ObjectKeyFromObject(&job), &job); err == nil {
		completeBefore = jobComplete(job)
	}
	// The Job controller marks the Job complete once its Pod has ended.
	for !jobComplete(job) && time.Since(stopped) < 30*time.Second {
		time.Sleep(50 * time.Millisecond)
		if err := kube.Get(ctx, client.ObjectKeyFromObject(&job), &job); err != nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			return k, err
		}
	}
	k.completedAfter = time.Since(stopped)
	err = kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: batchv1alpha1.FanInJobName(fanInOwner, key)}, &batchv1.Job{})
	setJobExists := err == nil
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return k, fmt.Errorf("kill %d (%s): %w", pid, pod, err)
	}
	k.end = time.Now()
	// Still the leader when it was killed: no other replica renewed the Lease meanwhile.
	holder, _, _ := lease.current()
	stillLeader := strings.HasPrefix(holder, pod+"_")
	k.between = jobComplete(job) && !completeBefore && !setJobExists && stillLeader
	if r := kubectl(t, "delete", "pod", pod, "-n", releaseNS, "--wait=false"); r.code != 0 {
		return k, fmt.Errorf("kubectl delete pod: %s", r)
	}
	if k.between {
		t.Logf("fan-in kill: the leader %s stopped at %s, extract-c's Job %s complete %s later, the leader killed with no Job of the set %s yet",
			pod, stamp(stopped), job.Name, k.completedAfter.Round(10*time.Millisecond), hm(slot))
	} else {
		t.Logf("fan-in kill at %s: not between (extract-c complete before the stop: %v; the set's Job there: %v; %s still the leader: %v)",
			stamp(stopped), completeBefore, setJobExists, pod, stillLeader)
	}
	return k, nil
}

// leaderProcess finds the leader (the holder of a Lease renewed in the last few seconds: right
// after a kill the Lease still names the dead one until it expires) and its manager process.
func leaderProcess(lease *leaseLog, wait time.Duration) (string, int, error) {
	deadline := time.Now().Add(wait)
	for {
		holder, renewed, ok := lease.current()
		if ok && time.Since(renewed) < 4*time.Second {
			pod, _, _ := strings.Cut(holder, "_")
			pid, err := managerPID(pod)
			return pod, pid, err
		}
		if time.Now().After(deadline) {
			return "", 0, fmt.Errorf("no leader renewed its Lease in %s", wait)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// fanInErrors checks the fan-in of the fault suite on every Job the watch saw: each slot whose
// three upstream Jobs completed has exactly one Job of the EventJob, and no slot has one
// without them; each kill aimed between a slot's last upstream and its set's Job hit that
// moment at least once. It returns the errors and a summary.
func fanInErrors(l *jobLog, kills []fanInKill) ([]string, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	complete := map[string]map[string]bool{} // slot → the extracts complete for it
	sets := map[string][]*batchv1.Job{}      // slot → the EventJob's Jobs for it
	for _, j := range l.seen {
		ref := metav1.GetControllerOf(j)
		switch {
		case ref != nil && ref.Kind == "ScheduledJob" && strings.HasPrefix(ref.Name, "extract-") && jobComplete(*j):
			s := j.Annotations[batchv1alpha1.AnnotationScheduledTime]
			if complete[s] == nil {
				complete[s] = map[string]bool{}
			}
			complete[s][ref.Name] = true
		case j.Labels[batchv1alpha1.LabelEventJob] == fanInOwner:
			s := j.Annotations[batchv1alpha1.AnnotationFanInSet]
			sets[s] = append(sets[s], j)
		}
	}
	var errs []string
	once := 0
	for s, done := range complete {
		if len(done) < len(fanInUpstreams) {
			continue
		}
		switch n := len(sets[s]); n {
		case 1:
			once++
		case 0:
			errs = append(errs, fmt.Sprintf("fan-in: the slot %s had its three upstream Jobs complete, and no Job of the EventJob (lost)", s))
		default:
			errs = append(errs, fmt.Sprintf("fan-in: the slot %s has %d Jobs of the EventJob, want one: %s", s, n, jobNames(sets[s])))
		}
	}
	for s, js := range sets {
		if len(complete[s]) < len(fanInUpstreams) {
			errs = append(errs, fmt.Sprintf("fan-in: Jobs %s for the slot %s, whose three upstream Jobs were not all seen complete", jobNames(js), s))
		}
	}
	hit := 0
	for _, k := range kills {
		if k.between {
			hit++
		}
	}
	if len(kills) > 0 && hit == 0 {
		errs = append(errs, fmt.Sprintf("fan-in: none of the %d kills aimed between a slot's last upstream Job and its set's Job hit that moment", len(kills)))
	}
	slices.Sort(errs)
	return errs, fmt.Sprintf("fan-in: %d slots with their three upstream Jobs complete, each with one Job of the EventJob; %d of %d kills between the last upstream's completion and the set's Job",
		once, hit, len(kills))
}

// fanInSettled: every slot whose three upstream Jobs completed has its set's Job.
func (l *jobLog) fanInSettled() error {
	errs, _ := fanInErrors(l, nil)
	for _, e := range errs {
		if strings.Contains(e, "(lost)") {
			return errors.New(e)
		}
	}
	return nil
}
