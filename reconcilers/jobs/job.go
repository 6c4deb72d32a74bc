package jobs

import (
	"slices"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

// Run says which Job to build: its name, where it lives, who controls it, and the labels and
// annotations that say which slot or upstream Job it belongs to.
type Run struct {
	Name        string
	Namespace   string
	Owner       metav1.Object
	OwnerGVK    schema.GroupVersionKind
	Labels      map[string]string
	Annotations map[string]string
}

// NewJob builds the Job for a run from the owner's jobTemplate: the template's labels,
// annotations and spec, plus almanac's labels and annotations (which win on a clash), the
// same annotations on the Pod template (so that a container reads its slot or upstream Job
// with the downward API), a controller ownerReference to the owner, and
// batchv1alpha1.FinalizerOutcome: the rule of
// every Job owner is that a Job cannot vanish before its run is recorded in the owner's
// status (a Job deleted before that stays, being deleted, until the owner's reconcile
// records it and removes the finalizer: Releaser).
func NewJob(tmpl *batchv1.JobTemplateSpec, run Run) *batchv1.Job {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:            run.Name,
			Namespace:       run.Namespace,
			Labels:          merge(tmpl.Labels, run.Labels),
			Annotations:     merge(tmpl.Annotations, run.Annotations),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(run.Owner, run.OwnerGVK)},
			Finalizers:      []string{batchv1alpha1.FinalizerOutcome},
		},
		Spec: *tmpl.Spec.DeepCopy(),
	}
	job.Spec.Template.Annotations = merge(job.Spec.Template.Annotations, run.Annotations)
	return job
}

func merge(base, over map[string]string) map[string]string {
	if len(base)+len(over) == 0 {
		return nil
	}
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// Outcome is how a Job ended, read from its conditions.
type Outcome struct {
	// Type is batchv1.JobComplete or batchv1.JobFailed; empty while the Job runs.
	Type batchv1.JobConditionType
	// Time is when the Job got that condition (its lastTransitionTime, whole seconds).
	Time time.Time
}

// Finished reports whether the Job has ended.
func (o Outcome) Finished() bool { return o.Type != "" }

// OutcomeOf reads a Job's outcome from its Complete and Failed conditions, as the Job
// controller writes them once every Pod has terminated. SuccessCriteriaMet and
// FailureTarget, which come earlier, do not count: the Job still has running Pods then.
func OutcomeOf(job *batchv1.Job) Outcome {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			t := c.LastTransitionTime.Time
			if t.IsZero() && job.Status.CompletionTime != nil {
				t = job.Status.CompletionTime.Time
			}
			return Outcome{Type: c.Type, Time: t.UTC()}
		}
	}
	return Outcome{}
}

// IsControlledBy reports whether obj's controller ownerReference points at the owner with
// that UID.
func IsControlledBy(obj metav1.Object, owner metav1.Object) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil && ref.UID == owner.GetUID()
}

// Active returns the Jobs that have not ended and are not being deleted (one that someone
// deleted stays only until its run is recorded, see NewJob), sorted by name.
func Active(jobs []*batchv1.Job) []*batchv1.Job {
	var out []*batchv1.Job
	for _, j := range jobs {
		if !OutcomeOf(j).Finished() && j.DeletionTimestamp == nil {
			out = append(out, j)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// ActiveStatus returns status.active and status.activeOverflow for the Jobs of an owner: the
// running Jobs, sorted by name, at most batchv1alpha1.MaxActive of them. When more run, the
// oldest (by creation, then name) are left out and counted, so that a status write never
// exceeds the schema's MaxItems (which the API server would refuse, freezing the record of
// what ran).
func ActiveStatus(jobs []*batchv1.Job) ([]corev1.ObjectReference, int32) {
	running := Active(jobs)
	overflow := len(running) - batchv1alpha1.MaxActive
	if overflow <= 0 {
		return References(running), 0
	}
	byAge := slices.Clone(running)
	slices.SortStableFunc(byAge, func(a, b *batchv1.Job) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	kept := byAge[overflow:]
	slices.SortFunc(kept, func(a, b *batchv1.Job) int { return strings.Compare(a.Name, b.Name) })
	return References(kept), int32(overflow)
}

// References returns object references to the Jobs, for status.active.
func References(jobs []*batchv1.Job) []corev1.ObjectReference {
	if len(jobs) == 0 {
		return nil
	}
	out := make([]corev1.ObjectReference, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, corev1.ObjectReference{
			APIVersion: "batch/v1",
			Kind:       "Job",
			Namespace:  j.Namespace,
			Name:       j.Name,
			UID:        j.UID,
		})
	}
	return out
}
