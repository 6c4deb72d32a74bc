package jobs

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

// ReportNotReady records a Warning event with the reason and message of a Ready condition
// that is False in the status just written (now) and was not in the status before it (old),
// or that again is true (a new failure of the same kind).
func ReportNotReady(rec events.EventRecorder, obj runtime.Object, old, now []metav1.Condition, again bool, action string) {
	ready := meta.FindStatusCondition(now, batchv1alpha1.ConditionReady)
	if ready == nil || ready.Status != metav1.ConditionFalse {
		return
	}
	if prev := meta.FindStatusCondition(old, batchv1alpha1.ConditionReady); again || prev == nil || prev.Reason != ready.Reason || prev.Message != ready.Message {
		rec.Eventf(obj, nil, corev1.EventTypeWarning, ready.Reason, action, "%s", ready.Message)
	}
}

// ReportFinished records JobSucceeded or JobFailed for each Job that the status before this
// reconcile listed as running (wasActive) and that has finished since.
func ReportFinished(rec events.EventRecorder, owner runtime.Object, wasActive []corev1.ObjectReference, current []*batchv1.Job) {
	byName := map[string]*batchv1.Job{}
	for _, j := range current {
		byName[j.Name] = j
	}
	for _, ref := range wasActive {
		if j := byName[ref.Name]; j != nil {
			ReportOutcome(rec, owner, j)
		}
	}
}

// ReportOutcome records JobSucceeded or JobFailed for a Job that has finished.
func ReportOutcome(rec events.EventRecorder, owner runtime.Object, j *batchv1.Job) {
	switch OutcomeOf(j).Type {
	case batchv1.JobComplete:
		rec.Eventf(owner, j, corev1.EventTypeNormal, EventJobSucceeded, ActionObserve, "Job %s completed", j.Name)
	case batchv1.JobFailed:
		rec.Eventf(owner, j, corev1.EventTypeWarning, EventJobFailed, ActionObserve, "Job %s failed", j.Name)
	}
}
