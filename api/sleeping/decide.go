package sleeping

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/almanac-dev/almanac/api/putback"
	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
)

// Workload is a workload as the reconciler observed it.
type Workload struct {
	GVK      schema.GroupVersionKind
	Handling sleepv1alpha1.Handling
	// Namespace, Name and ResourceVersion name the object and the version observed (the
	// precondition of every write).
	Namespace, Name, ResourceVersion string
	Labels, Annotations              map[string]string
	Deleting                         bool
	// Replicas is spec.replicas (HandleReplicas) or the scale subresource's (HandleScale).
	Replicas *int32
	// Ready: the workload reports its replicas Ready (readyReplicas at least replicas, and
	// its controller has seen its spec). Kinds that start no Pods of their own (CronJobs,
	// ScheduledJobs, EventJobs, ScaledObjects) are always Ready.
	Ready bool
	// Suspend is spec.suspend (HandleSuspend).
	Suspend *bool
	// ScaledBy names the ScaledObject that scales this workload ("" for none): KEDA scales
	// it, so a sleep pauses the ScaledObject instead of scaling the workload.
	ScaledBy string
	// PodCPUMillicores and PodMemoryMebibytes are one Pod's requests, from its template.
	PodCPUMillicores, PodMemoryMebibytes int64
	// InScope: the workload's namespace is one the sleep selects (the caller decides that;
	// kinds, labels and opt-outs are decided here).
	InScope bool
}

// Ref names the workload for messages: "Deployment team-a/web".
func (w *Workload) Ref() string { return w.GVK.Kind + " " + w.Namespace + "/" + w.Name }

// Asleep reports whether the workload is in its slept state: 0 replicas, suspended, or paused
// at 0.
func (w *Workload) Asleep() bool {
	switch w.Handling {
	case sleepv1alpha1.HandleReplicas, sleepv1alpha1.HandleScale:
		return w.Replicas != nil && *w.Replicas == 0
	case sleepv1alpha1.HandleSuspend:
		return w.Suspend != nil && *w.Suspend
	case sleepv1alpha1.HandlePause:
		return w.Annotations[sleepv1alpha1.KEDAPausedReplicasAnnotation] == "0"
	}
	return false
}

// Field is the path of the field that a sleep changes on the workload's kind.
func Field(h sleepv1alpha1.Handling) []string {
	switch h {
	case sleepv1alpha1.HandleSuspend:
		return []string{"spec", "suspend"}
	case sleepv1alpha1.HandlePause:
		return []string{"metadata", "annotations", sleepv1alpha1.KEDAPausedReplicasAnnotation}
	}
	return []string{"spec", "replicas"}
}

// Action is what a reconcile does to one workload.
type Action string

const (
	// ActSleep records the workload and puts it to sleep.
	ActSleep Action = "Sleep"
	// ActWake puts back what the record says and removes it.
	ActWake Action = "Wake"
	// ActResleep puts a held workload that someone woke back to sleep, by the put-back rule
	// (PutBack decides, once the writer knows who woke it).
	ActResleep Action = "Resleep"
)

// Step is one write (or pair of writes) to one workload.
type Step struct {
	Action Action
	W      *Workload
	// Record is the record to write (ActSleep) or the one the workload carries.
	Record *sleepv1alpha1.Record
	// Why says, for ActWake, why it wakes.
	Why string
	// Pods are the Pods a wake starts (its recorded replicas).
	Pods int32
	// ByTime: a wake because the sleep ends (through the tiers and at the pace), not because
	// of an opt-out, a deselection, a suspension or a deletion (at once).
	ByTime bool
}

// Input is what Decide looks at.
type Input struct {
	Plan *Plan
	// Holder is the sleep's name in records (sleepv1alpha1.Holder); Generation its
	// metadata.generation.
	Holder     string
	Generation int64
	// State is what the windows call for now (Plan.At).
	State State
	// Releasing: the sleep is being deleted; everything it holds wakes at once.
	Releasing bool
	Workloads []Workload
	// Wake is status.wake as read: the wake under way, if any.
	Wake *sleepv1alpha1.WakeProgress
	Now  time.Time
}

// Decision is what a sleep does now, and what it reports.
type Decision struct {
	Steps  []Step
	Counts sleepv1alpha1.WorkloadCounts
	// Contested are up to 16 of the contested workloads, in order.
	Contested []sleepv1alpha1.ContestedWorkload
	// Unreadable are up to 8 messages about workloads whose record annotation is not a
	// record: left alone, since what they were before they slept is not known.
	Unreadable []string
	// Notes are up to 8 messages about workloads left awake or kept awake (an opt-out that does
	// not parse, a ScaledObject already paused, a workload a ScaledObject scales), in order.
	Notes []string
	// AsleepPods, AsleepCPUMillicores and AsleepMemoryMebibytes are what this sleep keeps
	// asleep once its steps are done: recorded replicas and their requests.
	AsleepPods, AsleepCPUMillicores, AsleepMemoryMebibytes int64
	// Waking: a wake of this sleep's boundary is under way: workloads still to wake by tier
	// and pace, or woken ones not Ready yet.
	Waking bool
	// Tier is the tier that wakes in this reconcile (or waits to), -1 for none.
	Tier int
	// TierStarted: this reconcile wakes the first workloads of Tier.
	TierStarted bool
	// TimedOut: Tier woke although the tiers before it were not all Ready, after the tier
	// timeout; Waiting names them.
	TimedOut bool
	// Waiting names up to 5 workloads that the wake waits for (not Ready).
	Waiting []string
	// WakeDone: the wake of this boundary is over: everything this sleep held is woken and
	// every workload it selects is Ready, or the last tier's timeout passed (TimedOut: the
	// wake is not measured).
	WakeDone bool
	// Paced is the new pace ledger (status.wake.paced).
	Paced []sleepv1alpha1.PaceEntry
	// Next is when to look again for the steps' sake (the pace frees up, a tier times out,
	// an opt-out ends); zero: not for them.
	Next time.Time
}

// Bounds of what a decision reports.
const (
	maxContested = 16
	maxProblems  = 8
	maxWaiting   = 5
)

type queued struct {
	w    *Workload
	rec  *sleepv1alpha1.Record
	tier int
}

// Decide returns what a sleep does to its workloads now: a pure function of its plan, its
// state, the workloads with their records, the wake under way and now. The rules
// (docs/sleep.md):
//
//   - A selected workload (a namespace in scope, a kind of spec.kinds, the selector, no
//     opt-out, not scaled by a ScaledObject) sleeps while the windows say so; the first sleep
//     to record it holds it, and no other sleep touches it until that one wakes it.
//   - A held workload wakes when its sleep ends, through the tiers and at the pace; at once
//     when it is opted out, no longer selected, the sleep is suspended or being deleted.
//   - A held workload that someone woke is put back to sleep (ActResleep, by the put-back
//     rule), unless it is contested at the sleep's current generation.
func Decide(in Input) Decision {
	p := in.Plan
	d := Decision{Tier: -1}
	var queue []queued
	type readiness struct {
		w    *Workload
		tier int
	}
	var awake []readiness // selected, awake, not opted out: what a wake waits for
	for i := range in.Workloads {
		w := &in.Workloads[i]
		rec, err := sleepv1alpha1.DecodeRecord(w.Annotations)
		if err != nil {
			if len(d.Unreadable) < maxProblems {
				d.Unreadable = append(d.Unreadable, w.Ref()+": "+err.Error())
			}
			continue
		}
		selected := w.InScope && p.HasKind(w.GVK.GroupKind()) && p.Selector.Matches(labels.Set(w.Labels))
		scaledBy := w.ScaledBy != "" && (w.Handling == sleepv1alpha1.HandleReplicas || w.Handling == sleepv1alpha1.HandleScale)
		if selected && scaledBy && p.HasKind(schema.GroupKind{Group: "keda.sh", Kind: "ScaledObject"}) {
			selected = false // its ScaledObject is what sleeps
		}
		if rec != nil && rec.By != in.Holder {
			if selected {
				d.Counts.Selected++
				d.Counts.HeldElsewhere++
			}
			continue
		}
		if !selected && rec == nil {
			continue
		}
		if selected {
			d.Counts.Selected++
		}
		optOut, until, problem := sleepv1alpha1.StayAwake(w.Annotations, in.Now)
		if problem != "" {
			d.problem(w.Ref() + ": " + problem)
		}
		if !until.IsZero() {
			d.next(until)
		}
		notSlept := ""
		switch {
		case selected && scaledBy:
			notSlept = fmt.Sprintf("%s is scaled by ScaledObject %s, and ScaledObject is not among spec.kinds: it is left awake (add keda.sh/v1alpha1 ScaledObject to spec.kinds to pause it)", w.Ref(), w.ScaledBy)
		case selected && rec == nil && w.Handling == sleepv1alpha1.HandlePause && w.Annotations[sleepv1alpha1.KEDAPausedReplicasAnnotation] == "" &&
			w.Annotations[sleepv1alpha1.KEDAPausedAnnotation] != "" && w.Annotations[sleepv1alpha1.KEDAPausedAnnotation] != "false":
			notSlept = fmt.Sprintf("%s is paused already (%s): it is left as it is", w.Ref(), sleepv1alpha1.KEDAPausedAnnotation)
		}
		if notSlept != "" {
			d.Counts.NotSlept++
			d.problem(notSlept)
		}
		want := in.State.Asleep && selected && !optOut && notSlept == "" && !w.Deleting && !in.Releasing
		switch {
		case rec != nil && !want:
			d.Counts.Asleep++
			d.addAsleep(w, rec)
			timeWake := selected && !optOut && notSlept == "" && !w.Deleting && !in.Releasing && !p.Suspend
			if timeWake {
				queue = append(queue, queued{w: w, rec: rec, tier: p.TierOf(w.Labels)})
				continue
			}
			d.Steps = append(d.Steps, Step{Action: ActWake, W: w, Record: rec, Why: wakeReason(w, selected, optOut, in.Releasing, p.Suspend)})
		case rec != nil && want:
			d.Counts.Asleep++
			d.addAsleep(w, rec)
			switch {
			case w.Asleep():
			case rec.Contested != nil && rec.Contested.Generation == in.Generation:
				d.Counts.Contested++
				if len(d.Contested) < maxContested {
					d.Contested = append(d.Contested, sleepv1alpha1.ContestedWorkload{Namespace: w.Namespace, Kind: w.GVK.Kind, Name: w.Name,
						Manager: rec.Contested.Manager, Field: rec.Contested.Field})
				}
			default:
				d.Steps = append(d.Steps, Step{Action: ActResleep, W: w, Record: rec})
			}
		case rec == nil && want:
			rec := NewRecord(in.Holder, w, in.Now)
			d.Counts.Asleep++
			d.addAsleep(w, rec)
			d.Steps = append(d.Steps, Step{Action: ActSleep, W: w, Record: rec})
		case selected && optOut:
			d.Counts.OptedOut++
		case selected && notSlept == "":
			d.Counts.Awake++
			awake = append(awake, readiness{w: w, tier: p.TierOf(w.Labels)})
		}
	}
	// The wake of the boundary: tiers in order, each once the tiers before it are Ready, at
	// the pace.
	wakeUnderWay := in.Wake != nil && !in.State.Asleep
	if len(queue) == 0 {
		if !wakeUnderWay {
			return d
		}
		for _, r := range awake {
			if !r.w.Ready {
				d.wait(r.w)
			}
		}
		d.Waking = len(d.Waiting) > 0
		d.WakeDone = !d.Waking
		if d.Waking && in.Wake.TierStartedAt != nil {
			// The last tier waits for Ready at most the tier timeout too.
			if end := in.Wake.TierStartedAt.Add(p.TierTimeout); in.Now.Before(end) {
				d.next(end)
			} else {
				d.Waking, d.WakeDone, d.TimedOut = false, true, true
			}
		}
		d.Paced = ledger(in.Wake, in.Now)
		return d
	}
	d.Waking = true
	slices.SortFunc(queue, func(a, b queued) int {
		return cmp.Or(cmp.Compare(a.tier, b.tier), strings.Compare(a.w.Namespace, b.w.Namespace), strings.Compare(a.w.GVK.Kind, b.w.GVK.Kind), strings.Compare(a.w.Name, b.w.Name))
	})
	k := queue[0].tier
	d.Tier = k
	for _, r := range awake {
		if r.tier < k && !r.w.Ready {
			d.wait(r.w)
		}
	}
	d.TierStarted = in.Wake == nil || int(in.Wake.Tier) != k || in.Wake.TierStartedAt == nil
	if len(d.Waiting) > 0 && k > 0 {
		// The tier before waits for its workloads to be Ready, at most TierTimeout after it
		// began to wake.
		var since time.Time
		if in.Wake != nil && in.Wake.TierStartedAt != nil && int(in.Wake.Tier) < k {
			since = in.Wake.TierStartedAt.Time
		}
		if since.IsZero() || in.Now.Before(since.Add(p.TierTimeout)) {
			if !since.IsZero() {
				d.next(since.Add(p.TierTimeout))
			}
			d.TierStarted = false
			d.Tier = -1
			d.Paced = ledger(in.Wake, in.Now)
			return d
		}
		d.TimedOut = true
	}
	d.Paced = ledger(in.Wake, in.Now)
	used := int32(0)
	for _, e := range d.Paced {
		used += e.Pods
	}
	woke := 0
	for _, q := range queue {
		if q.tier != k {
			break
		}
		pods := recordedPods(q.w, q.rec)
		if p.PodsPerMinute > 0 && used+pods > p.PodsPerMinute && (used > 0 || woke > 0) {
			// The pace is used up: the next Pods may start once the oldest of the last
			// minute's are a minute old.
			if len(d.Paced) > 0 {
				d.next(paceExpiry(d.Paced[0]))
			}
			break
		}
		used += pods
		woke++
		d.Steps = append(d.Steps, Step{Action: ActWake, W: q.w, Record: q.rec, Why: "its sleep ends", Pods: pods, ByTime: true})
		if pods > 0 {
			d.Paced = addPaced(d.Paced, in.Now, pods)
		}
	}
	if woke == 0 {
		d.TierStarted = false
	}
	return d
}

// NewRecord is the record of w as it is now, held by holder from now.
func NewRecord(holder string, w *Workload, now time.Time) *sleepv1alpha1.Record {
	r := &sleepv1alpha1.Record{Version: sleepv1alpha1.RecordVersion, By: holder, At: now.UTC()}
	switch w.Handling {
	case sleepv1alpha1.HandleReplicas, sleepv1alpha1.HandleScale:
		r.Replicas = new(int32(0))
		if w.Replicas != nil {
			*r.Replicas = *w.Replicas
		}
	case sleepv1alpha1.HandleSuspend:
		r.Suspend = new(w.Suspend != nil && *w.Suspend)
	case sleepv1alpha1.HandlePause:
		if v, ok := w.Annotations[sleepv1alpha1.KEDAPausedReplicasAnnotation]; ok {
			r.PausedReplicas = &v
		}
	}
	return r
}

// PutBack decides a put-back (ActResleep): given who changed the workload's field since it
// was recorded (changedBy: other field managers that own it and wrote it after the record,
// from managedFields), it returns the record to write and whether almanac puts the workload
// back to sleep (false: contested, it stops).
//
// A change that no other manager made (almanac's own write that a crash interrupted, an
// autoscaler's write that raced the sleep) is put back without counting. A change by another
// manager is that manager's new wish: the record takes the value it wrote (what the
// workload wakes to), and almanac puts it back to sleep, at most putback.Max times within
// putback.Window; the next time it stops and records the contest, until the sleep's spec
// changes (generation) or its sleep ends.
func PutBack(rec *sleepv1alpha1.Record, w *Workload, changedBy []string, generation int64, now time.Time) (out *sleepv1alpha1.Record, resleep bool) {
	out = &sleepv1alpha1.Record{}
	*out = *rec
	out.Contested = nil
	if rec.Contested != nil && rec.Contested.Generation != generation {
		out.PutBacks = nil // resumed by a spec change: the count starts again
	}
	if len(changedBy) == 0 {
		return out, true
	}
	// The other manager's value is the workload's new wish.
	switch w.Handling {
	case sleepv1alpha1.HandleReplicas, sleepv1alpha1.HandleScale:
		if w.Replicas != nil {
			out.Replicas = new(*w.Replicas)
		}
	case sleepv1alpha1.HandleSuspend:
		if w.Suspend != nil {
			out.Suspend = new(*w.Suspend)
		}
	case sleepv1alpha1.HandlePause:
		if v, ok := w.Annotations[sleepv1alpha1.KEDAPausedReplicasAnnotation]; ok {
			out.PausedReplicas = &v
		} else {
			out.PausedReplicas = nil
		}
	}
	recent, allowed := putback.Count(out.PutBacks, now)
	out.PutBacks = recent
	if !allowed {
		out.PutBacks = rec.PutBacks
		out.Contested = &sleepv1alpha1.Contest{Manager: strings.Join(changedBy, ", "), Field: strings.Join(Field(w.Handling), "."), Generation: generation}
		return out, false
	}
	return out, true
}

// recordedPods are the Pods that waking w to rec starts.
func recordedPods(w *Workload, rec *sleepv1alpha1.Record) int32 {
	if (w.Handling == sleepv1alpha1.HandleReplicas || w.Handling == sleepv1alpha1.HandleScale) && rec.Replicas != nil {
		return *rec.Replicas
	}
	return 0
}

func (d *Decision) addAsleep(w *Workload, rec *sleepv1alpha1.Record) {
	pods := int64(recordedPods(w, rec))
	d.AsleepPods += pods
	d.AsleepCPUMillicores += pods * w.PodCPUMillicores
	d.AsleepMemoryMebibytes += pods * w.PodMemoryMebibytes
}

func (d *Decision) problem(msg string) {
	if len(d.Notes) < maxProblems {
		d.Notes = append(d.Notes, msg)
	}
}

func (d *Decision) wait(w *Workload) {
	if len(d.Waiting) < maxWaiting {
		d.Waiting = append(d.Waiting, w.Ref())
	}
}

func (d *Decision) next(t time.Time) {
	if d.Next.IsZero() || t.Before(d.Next) {
		d.Next = t
	}
}

func wakeReason(w *Workload, selected, optOut, releasing, suspended bool) string {
	switch {
	case releasing:
		return "its sleep is being deleted"
	case suspended:
		return "its sleep is suspended"
	case w.Deleting:
		return "it is being deleted"
	case optOut:
		return "it is annotated " + sleepv1alpha1.StayAwakeAnnotation
	case !selected:
		return "its sleep no longer selects it"
	}
	return "it is left to its ScaledObject"
}

// ledger returns the wake's pace entries of the last PaceWindow before now.
func ledger(wake *sleepv1alpha1.WakeProgress, now time.Time) []sleepv1alpha1.PaceEntry {
	if wake == nil {
		return nil
	}
	var out []sleepv1alpha1.PaceEntry
	for _, e := range wake.Paced {
		if now.Before(paceExpiry(e)) {
			out = append(out, e)
		}
	}
	return out
}

// paceExpiry is when the Pods of a ledger entry stop counting: a minute after the end of its
// second (entries are per second, truncated), so that no minute ever holds more than the pace.
func paceExpiry(e sleepv1alpha1.PaceEntry) time.Time { return e.Time.Add(PaceWindow + time.Second) }

// addPaced adds pods started at now to the ledger, one entry per second (at most 61).
func addPaced(l []sleepv1alpha1.PaceEntry, now time.Time, pods int32) []sleepv1alpha1.PaceEntry {
	sec := metav1.NewTime(now.UTC().Truncate(time.Second))
	if n := len(l); n > 0 && l[n-1].Time.Equal(&sec) {
		l[n-1].Pods += pods
		return l
	}
	return append(l, sleepv1alpha1.PaceEntry{Time: sec, Pods: pods})
}
