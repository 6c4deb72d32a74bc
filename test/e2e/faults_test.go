//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

// The fault suite: almanac's promises (one Job per slot and per upstream Job, every boundary
// applied on time) kept while the cluster fails under it, with the chart's image and real
// Pods. One namespace holds a workload whose Cron Schedule opens and closes a window at every
// minute, an every-minute ScheduledJob, an EventJob that follows an every-minute CronJob
// whose Jobs run for about 20 s, and a fan-in: an EventJob that waits for three every-minute
// ScheduledJobs of each slot (faults_fanin_test.go). Then, one fault after another:
//
//	(a) kube-apiserver restarted 2 s before a boundary and a slot;
//	(b) etcd stopped (SIGSTOP) for 10 s across a boundary and a slot;
//	(c) the leader killed (SIGKILL) at random instants around boundaries and slots, and
//	    between the fan-in's last upstream Job of a slot completing and the set's Job
//	    (ALMANAC_E2E_KILLS of them, 20 by default, half of each);
//	(d) status writes of ScheduledJobs and EventJobs refused by a ValidatingAdmissionPolicy
//	    for two slots, while every Job almanac creates is deleted as soon as it is seen.
//
// A watch counts the Jobs of every slot and of every upstream Job; a poll of the HPA times
// every boundary; a poll of the Lease says when a leader acted again after each fault. A
// boundary may be late by the outage (until the Lease is renewed after the fault) plus 3 s;
// no slot and no upstream Job may be missed or run twice. The suite prints a table.
func testFaults(t *testing.T) {
	kills := 20
	if v := os.Getenv("ALMANAC_E2E_KILLS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			t.Fatalf("ALMANAC_E2E_KILLS=%q: want a count", v)
		}
		kills = n
	}
	started := time.Now()
	ns := namespace(t, "e2e-faults")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	first := nextBoundary(50 * time.Second)
	// The plan, minute by minute.
	var (
		aAt   = first.Add(time.Minute)                                                       // (a)
		bAt   = aAt.Add(time.Minute)                                                         // (b)
		killM = func(i int) time.Time { return bAt.Add(time.Duration(1+i/2) * time.Minute) } // (c)
		dAt   = bAt.Add(time.Duration(1+(kills+1)/2) * time.Minute)                          // (d): this slot and the next
		last  = dAt.Add(2 * time.Minute)                                                     // the last boundary and slot counted
	)
	t.Logf("faults: baseline %s, (a) %s, (b) %s, (c) %d kills, (d) %s, last slot %s",
		first.Format(time.TimeOnly), aAt.Format(time.TimeOnly), bAt.Format(time.TimeOnly), kills, dAt.Format(time.TimeOnly), last.Format(time.TimeOnly))
	// A boundary at every minute: a window opens at first, closes a minute later, the next
	// opens a minute after that, and so on. (A Cron Schedule may not open more than one
	// window an hour on average, so these are OneShot Schedules.)
	var windows strings.Builder
	for b := first; b.Before(last.Add(time.Minute)); b = b.Add(2 * time.Minute) {
		fmt.Fprintf(&windows, `
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: window-%s}
spec:
  scaleTargetRef: {name: app}
  type: OneShot
  startTime: "%s"
  endTime: "%s"
  minReplicas: 2
  maxReplicas: 3`, b.Format("1504"), wall(b), wall(b.Add(time.Minute)))
	}
	mustApply(t, ns, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  replicas: 1
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - {name: app, image: `+busybox+`, imagePullPolicy: Never, command: [sleep, "3600"], resources: {requests: {cpu: 5m, memory: 8Mi}}}
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: app}
spec:
  horizontalPodAutoscalerSpec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: app}
    minReplicas: 1
    maxReplicas: 2`+windows.String()+`
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: every-minute}
spec:
  schedule: "* * * * *"`+jobTemplate("echo tick")+`
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: upstream}
spec:
  schedule: "* * * * *"
  successfulJobsHistoryLimit: 100
  jobTemplate:
    spec:
      backoffLimit: 0
      template:
        spec:
          restartPolicy: Never
          terminationGracePeriodSeconds: 1
          containers:
          - {name: up, image: `+busybox+`, imagePullPolicy: Never, command: [sleep, "20"]}
---
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: after-upstream}
spec:
  trigger: {apiVersion: batch/v1, kind: CronJob, name: upstream, type: Complete}`+jobTemplate("echo after"))
	mustApply(t, ns, fanInManifests(nil))

	jobs := watchJobs(t, ctx, ns)
	lease := watchLease(ctx)
	bounds := watchBounds(hpaBounds(ns, "app"), last.Add(40*time.Second))
	var faults []fault

	// (a) The API server restarted 2 s before a boundary and a slot.
	sleepUntil(aAt.Add(-2 * time.Second))
	f := fault{name: "(a) kube-apiserver restarted 2 s before", start: time.Now()}
	if err := clusterScript("restart", "kube-apiserver"); err != nil {
		t.Fatal(err)
	}
	f.end = time.Now()
	faults = append(faults, f)
	t.Logf("kube-apiserver restarted at %s, ready again after %s", stamp(f.start), f.end.Sub(f.start).Round(100*time.Millisecond))

	// (b) etcd stopped for 10 s across a boundary and a slot.
	sleepUntil(bAt.Add(-5 * time.Second))
	f = fault{name: "(b) etcd stopped 10 s across", start: time.Now()}
	f.end = stopEtcd(t, 10*time.Second)
	faults = append(faults, f)

	// (c) The leader killed at random instants around a boundary and its slot (-4 s to +3 s),
	// and between the fan-in's last upstream Job of the minute completing (about 25 s after
	// it, also about when the CronJob's upstream Job completes) and the set's Job.
	// Two a minute: each takeover waits for the dead leader's Lease to expire (15 s).
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 24))
	var fanInKills []fanInKill
	for i := range kills {
		if i%2 == 1 {
			k, err := killBeforeFanIn(t, ctx, lease, ns, killM(i))
			if err != nil {
				t.Fatalf("kill %d: %v", i+1, err)
			}
			faults = append(faults, k.fault)
			fanInKills = append(fanInKills, k)
			continue
		}
		sleepUntil(killM(i).Add(time.Duration(rng.IntN(7000)-4000) * time.Millisecond))
		f, err := killLeader(t, lease)
		if err != nil {
			t.Fatalf("kill %d: %v", i+1, err)
		}
		faults = append(faults, f)
	}

	// (d) Two slots and two upstream Jobs while every status write of a ScheduledJob or an
	// EventJob is refused and every Job almanac creates is deleted on sight.
	sleepUntil(dAt.Add(-15 * time.Second))
	f = fault{name: "(d) status refused, Jobs deleted on sight", start: time.Now(), noLeaderOutage: true}
	refuseStatus(t, ns)
	jobs.deleteOnSight(true)
	sleepUntil(dAt.Add(time.Minute + 35*time.Second))
	jobs.deleteOnSight(false)
	allowStatus(t)
	f.end = time.Now()
	faults = append(faults, f)
	t.Logf("status writes refused and Jobs deleted on sight from %s to %s", stamp(f.start), stamp(f.end))

	// The end: no more slots and upstream Jobs; those under way finish and are recorded.
	sleepUntil(last.Add(30 * time.Second))
	mustKubectl(t, "patch", "scheduledjob", "every-minute", "-n", ns, "--type=merge", "-p", `{"spec":{"suspend":true}}`)
	mustKubectl(t, "patch", "cronjob", "upstream", "-n", ns, "--type=merge", "-p", `{"spec":{"suspend":true}}`)
	for _, u := range fanInUpstreams {
		mustKubectl(t, "patch", "scheduledjob", u.name, "-n", ns, "--type=merge", "-p", `{"spec":{"suspend":true}}`)
	}
	eventually(t, 2*time.Minute, "every upstream Job finished and followed, every Job released", func() error {
		if err := jobs.settled(); err != nil {
			return err
		}
		return jobs.fanInSettled()
	})
	time.Sleep(5 * time.Second)
	<-bounds.done

	r := jobs.report(first, last)
	r.boundaries = boundaryLags(bounds, first, last, faults, lease)
	r.errors = append(r.errors, boundaryErrors(r.boundaries, bounds)...)
	r.errors = append(r.errors, slotErrors(r, faults, lease)...)
	fanInErrs, fanInSummary := fanInErrors(jobs, fanInKills)
	r.errors = append(r.errors, fanInErrs...)
	printFaultTable(t, faults, lease, r)
	t.Log(fanInSummary)
	for _, e := range r.errors {
		t.Error(e)
	}
	t.Logf("the fault suite took %s", time.Since(started).Round(time.Second))
	eventually(t, 2*time.Minute, "2 replicas ready again", func() error {
		if p := almanacPods(t); len(p) != 2 {
			return fmt.Errorf("%v", p)
		}
		return waitDeploymentReady(t)
	})
}

// --- faults --------------------------------------------------------------------------------

// fault is one fault, from start to end; the first renewal of the Lease after its end
// (leaseLog.resumed) is when a leader acts again.
type fault struct {
	name       string
	start, end time.Time
	// noLeaderOutage: the fault does not stop the leader, so boundaries get no allowance.
	noLeaderOutage bool
	killed         string
}

func sleepUntil(at time.Time) { time.Sleep(time.Until(at)) }

func stamp(t time.Time) string { return t.UTC().Format("15:04:05.0") }

// stopEtcd stops etcd with SIGSTOP for d and continues it, and says when it did.
func stopEtcd(t *testing.T, d time.Duration) time.Time {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(cluster.dir, "pids", "etcd"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	defer func() { _ = syscall.Kill(pid, syscall.SIGCONT) }()
	time.Sleep(d)
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	t.Logf("etcd (pid %d) stopped at %s for %s", pid, stamp(stopped), d)
	return time.Now()
}

// killLeader kills the leader's manager process with SIGKILL, as a crash or the OOM killer
// does (no drain, no Lease given up), then deletes its Pod, so that its replacement is a
// fresh replica rather than a container in crash-loop back-off.
func killLeader(t *testing.T, lease *leaseLog) (fault, error) {
	t.Helper()
	// The leader is the holder of a Lease renewed in the last few seconds: right after a
	// kill, the Lease still names the dead one until it expires.
	var pod string
	deadline := time.Now().Add(40 * time.Second)
	for {
		holder, renewed, ok := lease.current()
		if ok && time.Since(renewed) < 4*time.Second {
			pod, _, _ = strings.Cut(holder, "_")
			break
		}
		if time.Now().After(deadline) {
			return fault{}, errors.New("no leader renewed its Lease in 40 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	pid, err := managerPID(pod)
	if err != nil {
		return fault{}, err
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fault{}, fmt.Errorf("kill %d (%s): %w", pid, pod, err)
	}
	f := fault{name: "(c) leader killed", start: time.Now(), killed: pod}
	f.end = f.start
	if r := kubectl(t, "delete", "pod", pod, "-n", releaseNS, "--wait=false"); r.code != 0 {
		return fault{}, fmt.Errorf("kubectl delete pod: %s", r)
	}
	return f, nil
}

// managerPID finds the manager process of a Pod on this node: the process whose mount
// namespace has the Pod's name in /etc/hostname and whose arguments start the manager.
func managerPID(pod string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !slices.Contains(strings.Split(string(cmdline), "\x00"), "manager") {
			continue
		}
		hostname, err := os.ReadFile(filepath.Join("/proc", e.Name(), "root", "etc", "hostname"))
		if err == nil && strings.TrimSpace(string(hostname)) == pod {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no manager process of Pod %s on this node", pod)
}

const refusalPolicy = "e2e-refuse-job-records"

// refuseStatus installs a ValidatingAdmissionPolicy that refuses every write to the status
// of ScheduledJobs and EventJobs in the namespace, and waits until the API server applies
// it (a server-side dry run of a status patch is refused).
func refuseStatus(t *testing.T, ns string) {
	t.Helper()
	t.Cleanup(func() {
		kubectl(t, "delete", "validatingadmissionpolicybinding,validatingadmissionpolicy", refusalPolicy, "--ignore-not-found")
	})
	mustApply(t, "", `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: `+refusalPolicy+`}
spec:
  failurePolicy: Fail
  matchConstraints:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: `+ns+`}}
    resourceRules:
    - apiGroups: [batch.almanac.dev]
      apiVersions: ["*"]
      operations: [UPDATE]
      resources: [scheduledjobs/status, eventjobs/status]
  validations:
  - expression: "false"
    message: the fault suite refuses every status write of ScheduledJobs and EventJobs
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: `+refusalPolicy+`}
spec:
  policyName: `+refusalPolicy+`
  validationActions: [Deny]
`)
	eventually(t, 30*time.Second, "the policy refusing status writes", func() error {
		r := kubectl(t, "patch", "scheduledjob", "every-minute", "-n", ns, "--subresource=status", "--type=merge",
			"-p", `{"status":{"missedRuns":12345}}`, "--dry-run=server")
		if r.code == 0 || !strings.Contains(r.stderr, "refuses every status write") {
			return fmt.Errorf("a status patch was not refused by the policy: %s", r)
		}
		return nil
	})
}

func allowStatus(t *testing.T) {
	t.Helper()
	mustKubectl(t, "delete", "validatingadmissionpolicybinding,validatingadmissionpolicy", refusalPolicy)
}

// --- the Lease -----------------------------------------------------------------------------

// leaseLog polls the leader-election Lease every 100 ms and keeps every renewal it sees.
type leaseLog struct {
	mu       sync.Mutex
	renewals []renewal
}

type renewal struct {
	holder string
	at     time.Time
}

func watchLease(ctx context.Context) *leaseLog {
	l := &leaseLog{}
	go func() {
		for ctx.Err() == nil {
			lease := &coordinationv1.Lease{}
			if err := kube.Get(ctx, client.ObjectKey{Namespace: releaseNS, Name: leaseName}, lease); err == nil &&
				lease.Spec.HolderIdentity != nil && lease.Spec.RenewTime != nil {
				r := renewal{*lease.Spec.HolderIdentity, lease.Spec.RenewTime.Time}
				l.mu.Lock()
				if n := len(l.renewals); n == 0 || l.renewals[n-1] != r {
					l.renewals = append(l.renewals, r)
				}
				l.mu.Unlock()
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return l
}

// current is the latest renewal seen.
func (l *leaseLog) current() (string, time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.renewals) == 0 {
		return "", time.Time{}, false
	}
	r := l.renewals[len(l.renewals)-1]
	return r.holder, r.at, true
}

// resumed is the first renewal after the instant: when a leader was acting again.
func (l *leaseLog) resumed(after time.Time) (renewal, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.renewals {
		if r.at.After(after) {
			return r, true
		}
	}
	return renewal{}, false
}

// --- Jobs ----------------------------------------------------------------------------------

// jobLog watches the namespace's Jobs and keeps every one it sees, by UID: a Job created and
// deleted between two reads still counts.
type jobLog struct {
	ns   string
	mu   sync.Mutex
	seen map[string]*batchv1.Job
	// at is when the watch first saw each Job, and done when it first saw it complete.
	at, done map[string]time.Time
	deleting bool
	errs     []string
}

func watchJobs(t *testing.T, ctx context.Context, ns string) *jobLog {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := &jobLog{ns: ns, seen: map[string]*batchv1.Job{}, at: map[string]time.Time{}, done: map[string]time.Time{}}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := factory.Batch().V1().Jobs().Informer()
	see := func(obj any) {
		j, ok := obj.(*batchv1.Job)
		if !ok {
			return
		}
		now := time.Now()
		l.mu.Lock()
		prev := l.seen[string(j.UID)]
		if prev == nil {
			l.at[string(j.UID)] = now
		}
		if prev == nil || !jobComplete(*prev) {
			l.seen[string(j.UID)] = j.DeepCopy()
			if jobComplete(*j) {
				l.done[string(j.UID)] = now
			}
		}
		del := l.deleting && almanacJob(j) && j.DeletionTimestamp == nil
		l.mu.Unlock()
		if del {
			go func() {
				err := kube.Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground))
				if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
					l.mu.Lock()
					l.errs = append(l.errs, fmt.Sprintf("deleting Job %s: %v", j.Name, err))
					l.mu.Unlock()
				}
			}()
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    see,
		UpdateFunc: func(_, obj any) { see(obj) },
	}); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return l
}

func almanacJob(j *batchv1.Job) bool {
	_, sj := j.Labels[batchv1alpha1.LabelScheduledJob]
	_, ej := j.Labels[batchv1alpha1.LabelEventJob]
	return sj || ej
}

func upstreamJob(j *batchv1.Job) bool {
	ref := metav1.GetControllerOf(j)
	return ref != nil && ref.Kind == "CronJob"
}

func (l *jobLog) deleteOnSight(on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.deleting = on
}

// settled: every upstream Job has finished, each complete one has a Job of the EventJob, and
// no Job of almanac's still waits for its record (the outcome finalizer).
func (l *jobLog) settled() error {
	l.mu.Lock()
	followed := map[string]bool{}
	for _, j := range l.seen {
		if uid := j.Labels[batchv1alpha1.LabelTriggerUID]; uid != "" {
			followed[uid] = true
		}
	}
	for _, j := range l.seen {
		if upstreamJob(j) && !jobComplete(*j) && !jobCondition(*j, batchv1.JobFailed) {
			l.mu.Unlock()
			return fmt.Errorf("upstream Job %s still runs", j.Name)
		}
		if upstreamJob(j) && jobComplete(*j) && !followed[string(j.UID)] {
			l.mu.Unlock()
			return fmt.Errorf("upstream Job %s (complete) not followed yet", j.Name)
		}
	}
	l.mu.Unlock()
	var list batchv1.JobList
	if err := kube.List(context.Background(), &list, client.InNamespace(l.ns)); err != nil {
		return err
	}
	for _, j := range list.Items {
		if slices.Contains(j.Finalizers, batchv1alpha1.FinalizerOutcome) {
			return fmt.Errorf("Job %s still waits for its record (finalizer %s)", j.Name, batchv1alpha1.FinalizerOutcome)
		}
	}
	return nil
}

// faultReport is what the suite counted.
type faultReport struct {
	slots      map[time.Time][]*batchv1.Job // slot → the ScheduledJob's Jobs for it
	upstream   map[string]*batchv1.Job      // UID → a complete upstream Job
	downstream map[string][]*batchv1.Job    // upstream UID → the EventJob's Jobs for it
	boundaries []boundaryLag
	// slotLag: from the slot to its first Job seen; followLag: from an upstream Job seen
	// complete to its follower seen.
	slotLag   map[time.Time]time.Duration
	followLag map[string]time.Duration
	// completed is when each upstream Job was seen complete.
	completed map[string]time.Time
	errors    []string
}

// report counts the Jobs of every slot from first to last, and of every complete upstream
// Job.
func (l *jobLog) report(first, last time.Time) faultReport {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := faultReport{slots: map[time.Time][]*batchv1.Job{}, upstream: map[string]*batchv1.Job{}, downstream: map[string][]*batchv1.Job{},
		slotLag: map[time.Time]time.Duration{}, followLag: map[string]time.Duration{}, completed: map[string]time.Time{}}
	r.errors = append(r.errors, l.errs...)
	for s := first; !s.After(last); s = s.Add(time.Minute) {
		r.slots[s] = nil
	}
	for _, j := range l.seen {
		switch {
		case j.Labels[batchv1alpha1.LabelScheduledJob] == "every-minute":
			s, err := time.Parse(time.RFC3339, j.Annotations[batchv1alpha1.AnnotationScheduledTime])
			if err != nil {
				r.errors = append(r.errors, fmt.Sprintf("Job %s: scheduled time: %v", j.Name, err))
				continue
			}
			r.slots[s] = append(r.slots[s], j) // outside first..last, only "twice" counts
			if lag := l.at[string(j.UID)].Sub(s); len(r.slots[s]) == 1 || lag < r.slotLag[s] {
				r.slotLag[s] = lag
			}
		case j.Labels[batchv1alpha1.LabelEventJob] == "after-upstream":
			uid := j.Labels[batchv1alpha1.LabelTriggerUID]
			r.downstream[uid] = append(r.downstream[uid], j)
		case upstreamJob(j) && jobComplete(*j):
			r.upstream[string(j.UID)] = j
			r.completed[string(j.UID)] = l.done[string(j.UID)]
		}
	}
	for uid := range r.upstream {
		if js := r.downstream[uid]; len(js) > 0 {
			r.followLag[uid] = l.at[string(js[0].UID)].Sub(r.completed[uid])
		}
	}
	for s, js := range r.slots {
		inRange := !s.Before(first) && !s.After(last)
		if len(js) == 0 && inRange {
			r.errors = append(r.errors, fmt.Sprintf("the slot %s was missed: no Job", s.Format(time.TimeOnly)))
		}
		if len(js) > 1 {
			r.errors = append(r.errors, fmt.Sprintf("the slot %s ran %d times: %s", s.Format(time.TimeOnly), len(js), jobNames(js)))
		}
	}
	for uid, up := range r.upstream {
		if n := len(r.downstream[uid]); n != 1 {
			r.errors = append(r.errors, fmt.Sprintf("upstream Job %s (complete at %s) was followed %d times, want once: %s",
				up.Name, stamp(r.completed[uid]), n, jobNames(r.downstream[uid])))
		}
	}
	for uid, js := range r.downstream {
		if r.upstream[uid] == nil {
			r.errors = append(r.errors, fmt.Sprintf("Jobs %s follow an upstream Job (%s) that was never seen complete", jobNames(js), uid))
		}
	}
	return r
}

func jobNames(js []*batchv1.Job) string {
	var names []string
	for _, j := range js {
		names = append(names, j.Name)
	}
	return strings.Join(names, ", ")
}

// --- boundaries ----------------------------------------------------------------------------

type boundaryLag struct {
	at, applied, latest time.Time
	ok                  bool
}

// allowance is when what is due at an instant must be done by: 3 s after it, or, when it
// falls in a fault that stops the leader (or within 3 s before one), 3 s after the Lease was
// first renewed once the fault ended.
func allowance(at time.Time, faults []fault, lease *leaseLog) time.Time {
	const slack = 3 * time.Second
	latest := at.Add(slack)
	for _, f := range faults {
		if f.noLeaderOutage {
			continue
		}
		r, ok := lease.resumed(f.end)
		if !ok {
			continue
		}
		if !at.Before(f.start.Add(-slack)) && !at.After(r.at) && r.at.Add(slack).After(latest) {
			latest = r.at.Add(slack)
		}
	}
	return latest
}

// boundaryLags times every boundary from first to last. A window opens at first and at
// every second minute after it (2-3) and closes a minute later (1-2).
func boundaryLags(seen *boundsLog, first, last time.Time, faults []fault, lease *leaseLog) []boundaryLag {
	var out []boundaryLag
	for b := first; !b.After(last); b = b.Add(time.Minute) {
		minR, maxR := int32(1), int32(2)
		if b.Sub(first)/time.Minute%2 == 0 {
			minR, maxR = 2, 3
		}
		l := boundaryLag{at: b, latest: allowance(b, faults, lease)}
		l.applied, l.ok = seen.firstSeen(minR, maxR, b.Add(-30*time.Second))
		out = append(out, l)
	}
	return out
}

// slotErrors says which slots' Jobs came later than their allowance.
func slotErrors(r faultReport, faults []fault, lease *leaseLog) []string {
	var errs []string
	for s, lag := range r.slotLag {
		if latest := allowance(s, faults, lease); s.Add(lag).After(latest) {
			errs = append(errs, fmt.Sprintf("the slot %s got its Job %s late; allowed until %s", stamp(s), lag.Round(10*time.Millisecond), stamp(latest)))
		}
	}
	slices.Sort(errs)
	return errs
}

// --- the table -----------------------------------------------------------------------------

func printFaultTable(t *testing.T, faults []fault, lease *leaseLog, r faultReport) {
	t.Helper()
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "fault\tat\tleader acting again after\tslots: once / twice / missed (worst lag)\tupstream Jobs: followed once / twice / missed (worst lag)\tboundaries: on time / late (worst lag, allowed)")
	// Each fault owns what happens from its start to the next fault's start (the first row,
	// the baseline, what comes before the first fault).
	rows := append([]fault{{name: "none (baseline)", noLeaderOutage: true}}, faults...)
	for i, f := range rows {
		from, to := f.start.Add(-20*time.Second), time.Now().Add(time.Hour)
		if i == 0 {
			from = time.Time{}
		}
		if i+1 < len(rows) {
			to = rows[i+1].start.Add(-20 * time.Second)
		}
		in := func(at time.Time) bool { return !at.Before(from) && at.Before(to) }

		var once, twice, missed int
		var slotWorst, followWorst time.Duration
		for s, js := range r.slots {
			if !in(s) {
				continue
			}
			slotWorst = max(slotWorst, r.slotLag[s])
			switch len(js) {
			case 0:
				missed++
			case 1:
				once++
			default:
				twice++
			}
		}
		var fOnce, fTwice, fMissed int
		for uid := range r.upstream {
			if !in(r.completed[uid]) {
				continue
			}
			followWorst = max(followWorst, r.followLag[uid])
			switch len(r.downstream[uid]) {
			case 0:
				fMissed++
			case 1:
				fOnce++
			default:
				fTwice++
			}
		}
		var onTime, late int
		var worst, allowed time.Duration
		for _, bl := range r.boundaries {
			if !in(bl.at) {
				continue
			}
			lag := bl.applied.Sub(bl.at)
			if bl.ok && !bl.applied.After(bl.latest) {
				onTime++
			} else {
				late++
			}
			if !bl.ok || lag > worst {
				worst, allowed = lag, bl.latest.Sub(bl.at)
			}
		}
		acting := "-"
		if !f.noLeaderOutage {
			if rn, ok := lease.resumed(f.end); ok {
				acting = rn.at.Sub(f.start).Round(100 * time.Millisecond).String()
			}
		}
		when := "-"
		if !f.start.IsZero() {
			when = stamp(f.start)
		}
		name := f.name
		if f.killed != "" {
			name += " " + f.killed
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d / %d / %d (%s)\t%d / %d / %d (%s)\t%d / %d (%s, %s)\n", name, when, acting,
			once, twice, missed, slotWorst.Round(10*time.Millisecond), fOnce, fTwice, fMissed, followWorst.Round(10*time.Millisecond),
			onTime, late, worst.Round(10*time.Millisecond), allowed.Round(100*time.Millisecond))
	}
	_ = w.Flush()
	t.Logf("the fault suite:\n%s", b.String())

}

// boundaryErrors says which boundaries were missed, early or late.
func boundaryErrors(lags []boundaryLag, seen *boundsLog) []string {
	var errs []string
	for _, bl := range lags {
		switch {
		case !bl.ok:
			errs = append(errs, fmt.Sprintf("the boundary at %s was never applied; the HPA went through %v", stamp(bl.at), seen.all()))
		case bl.applied.Before(bl.at):
			errs = append(errs, fmt.Sprintf("the boundary at %s was applied early, at %s", stamp(bl.at), stamp(bl.applied)))
		case bl.applied.After(bl.latest):
			errs = append(errs, fmt.Sprintf("the boundary at %s was applied at %s, %s late; allowed until %s",
				stamp(bl.at), stamp(bl.applied), bl.applied.Sub(bl.at).Round(10*time.Millisecond), stamp(bl.latest)))
		}
	}
	return errs
}
