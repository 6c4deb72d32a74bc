package scheduledpodautoscaler

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/api/conditions"
	"github.com/almanac-dev/almanac/api/scaling"
	"github.com/almanac-dev/almanac/api/timing"
	"github.com/almanac-dev/almanac/reconcilers/base"
)

// hpaState is what Reconcile found out about the HorizontalPodAutoscaler.
type hpaState struct {
	// conflict is set when an HPA of the same name exists that this autoscaler does not
	// control.
	conflict bool
	// applyErr is the API server's answer when writing the HPA failed.
	applyErr error
	// appliedAt is when this reconcile patched the HPA; zero if it did not need to.
	appliedAt time.Time
	// appliedVersion is the HPA's resourceVersion that the patch returned.
	appliedVersion string

	// Of an attached autoscaler: target is the target that has (or was just given) the
	// bounds; notFound is set when it does not exist, notServed when its kind is not served;
	// fight, when the fight rule stops almanac from writing it, is the Conflict condition's
	// message.
	target    *autoscalingv1alpha1.TargetReference
	notFound  bool
	notServed error
	fight     string
	// asleep: a Sleep or ClusterSleep holds the target asleep (sleepv1alpha1.Holds); the
	// autoscaler writes nothing to it until it wakes.
	asleep bool
}

// failed reports whether the bounds are not on the HPA or target.
func (hs hpaState) failed() bool {
	return hs.conflict || hs.applyErr != nil || hs.notFound || hs.notServed != nil || hs.fight != ""
}

// nextStatus returns the status that describes d, starting from the current status (so that
// condition transition times and the last applied transition are kept).
func nextStatus(spa *autoscalingv1alpha1.ScheduledPodAutoscaler, d scaling.Desired, hs hpaState, applied *autoscalingv1alpha1.AppliedTransition, now time.Time) autoscalingv1alpha1.ScheduledPodAutoscalerStatus {
	st := *spa.Status.DeepCopy()
	st.ObservedGeneration = spa.Generation
	st.MinReplicas = ptr.To(d.Bounds.Min)
	st.MaxReplicas = d.Bounds.Max
	st.ActiveSchedules = d.Active
	st.NextTransitionTime = nil
	if !d.Next.IsZero() {
		st.NextTransitionTime = ptr.To(metav1.NewTime(d.Next.UTC()))
	}
	if applied != nil {
		st.LastAppliedTransition = applied
	}
	if spa.Attached() && !hs.notFound && hs.notServed == nil && hs.applyErr == nil {
		st.Target = hs.target
	}
	if !spa.Attached() {
		st.Target = nil
	}
	conditions.Set(&st.Conditions, readyCondition(spa, d, hs), spa.Generation, now)
	if hs.fight != "" {
		conditions.Set(&st.Conditions, metav1.Condition{
			Type:    autoscalingv1alpha1.ConditionConflict,
			Status:  metav1.ConditionTrue,
			Reason:  autoscalingv1alpha1.ReasonFieldManagerConflict,
			Message: hs.fight,
		}, spa.Generation, now)
	} else {
		meta.RemoveStatusCondition(&st.Conditions, autoscalingv1alpha1.ConditionConflict)
	}
	conditions.Set(&st.Conditions, schedulesValidCondition(d), spa.Generation, now)
	if len(d.LeftOut) > 0 {
		conditions.Set(&st.Conditions, forbiddenOverlapCondition(d.LeftOut), spa.Generation, now)
	} else {
		meta.RemoveStatusCondition(&st.Conditions, autoscalingv1alpha1.ConditionForbiddenOverlap)
	}
	conditions.SetStalled(&st.Conditions, st.Stalled(), spa.Generation, now) // kstatus: Failed while True
	return st
}

// forbiddenOverlapCondition names the Schedules that overlapPolicy Forbid leaves out.
func forbiddenOverlapCondition(leftOut []scaling.LeftOut) metav1.Condition {
	parts := make([]string, 0, len(leftOut))
	for _, l := range leftOut {
		if l.NotCompared != "" {
			parts = append(parts, fmt.Sprintf("Schedule %q is left out of the bounds: its windows were not compared with those of the other Schedules: %s",
				l.Name, l.NotCompared))
			continue
		}
		parts = append(parts, fmt.Sprintf("Schedule %q is left out of the bounds: its windows overlap those of Schedule %q, created earlier, from %s",
			l.Name, l.Kept, timing.IntervalText(l.Overlap, l.Zone)))
	}
	msg := "overlapPolicy is Forbid, but Schedules overlap. " + strings.Join(parts, ". ") +
		". Move or shorten one of the windows, delete one of the Schedules, or set overlapPolicy to Max"
	if len(msg) > maxMessage {
		msg = msg[:maxMessage-len(truncatedForbid)] + truncatedForbid
	}
	return metav1.Condition{
		Type:    autoscalingv1alpha1.ConditionForbiddenOverlap,
		Status:  metav1.ConditionTrue,
		Reason:  autoscalingv1alpha1.ReasonSchedulesLeftOut,
		Message: msg,
	}
}

const truncatedForbid = " … (truncated; see the Schedules' ForbiddenOverlap conditions)"

// readyCondition says whether the HorizontalPodAutoscaler has the bounds in status.
func readyCondition(spa *autoscalingv1alpha1.ScheduledPodAutoscaler, d scaling.Desired, hs hpaState) metav1.Condition {
	what := subject(spa)
	switch {
	case hs.asleep:
		return metav1.Condition{
			Type:    autoscalingv1alpha1.ConditionReady,
			Status:  metav1.ConditionTrue,
			Reason:  autoscalingv1alpha1.ReasonHeldAsleep,
			Message: fmt.Sprintf("%s is held asleep by a Sleep or ClusterSleep (annotation almanac.dev/asleep): the sleep wins, and almanac writes the bounds again when it wakes", what),
		}
	case hs.fight != "":
		return metav1.Condition{
			Type:    autoscalingv1alpha1.ConditionReady,
			Status:  metav1.ConditionFalse,
			Reason:  autoscalingv1alpha1.ReasonFieldManagerConflict,
			Message: fmt.Sprintf("almanac has stopped writing %s: another field manager keeps changing it (condition Conflict)", what),
		}
	case hs.notFound:
		return metav1.Condition{
			Type:   autoscalingv1alpha1.ConditionReady,
			Status: metav1.ConditionFalse,
			Reason: autoscalingv1alpha1.ReasonTargetNotFound,
			Message: fmt.Sprintf("%s does not exist in namespace %s: almanac writes nothing until it exists; create it, or correct spec.targetRef",
				spa.Spec.TargetRef.String(), spa.Namespace),
		}
	case hs.notServed != nil:
		return metav1.Condition{
			Type:   autoscalingv1alpha1.ConditionReady,
			Status: metav1.ConditionFalse,
			Reason: autoscalingv1alpha1.ReasonTargetKindNotServed,
			Message: fmt.Sprintf("almanac cannot change %s: %v. Install what serves the kind (KEDA for a ScaledObject), correct spec.targetRef.apiVersion and kind, "+
				"or grant the manager get, list, watch and patch on the kind and its scale subresource (docs/scaling.md)", spa.Spec.TargetRef.String(), hs.notServed),
		}
	case hs.conflict:
		return metav1.Condition{
			Type:   autoscalingv1alpha1.ConditionReady,
			Status: metav1.ConditionFalse,
			Reason: autoscalingv1alpha1.ReasonHPAConflict,
			Message: fmt.Sprintf("HorizontalPodAutoscaler %s already exists and is not controlled by this ScheduledPodAutoscaler, so almanac leaves it alone: "+
				"delete it (the ScheduledPodAutoscaler then creates its own) or rename one of the two", spa.Name),
		}
	case base.Refused(hs.applyErr):
		return metav1.Condition{
			Type:    autoscalingv1alpha1.ConditionReady,
			Status:  metav1.ConditionFalse,
			Reason:  autoscalingv1alpha1.ReasonRequestRefused,
			Message: fmt.Sprintf("almanac could not write %s. %s", what, base.RefusalMessage(hs.applyErr)),
		}
	case hs.applyErr != nil:
		return metav1.Condition{
			Type:    autoscalingv1alpha1.ConditionReady,
			Status:  metav1.ConditionFalse,
			Reason:  autoscalingv1alpha1.ReasonApplyFailed,
			Message: fmt.Sprintf("Writing %s failed, retrying with backoff: %v", what, hs.applyErr),
		}
	case d.Suspended:
		return metav1.Condition{
			Type:   autoscalingv1alpha1.ConditionReady,
			Status: metav1.ConditionTrue,
			Reason: autoscalingv1alpha1.ReasonSuspended,
			Message: fmt.Sprintf("Suspended: %s is held at the baseline, minReplicas %d and maxReplicas %d; Schedules are ignored until spec.suspend is false",
				what, d.Bounds.Min, d.Bounds.Max),
		}
	default:
		return metav1.Condition{
			Type:    autoscalingv1alpha1.ConditionReady,
			Status:  metav1.ConditionTrue,
			Reason:  autoscalingv1alpha1.ReasonBoundsApplied,
			Message: fmt.Sprintf("%s has minReplicas %d and maxReplicas %d (%s)", what, d.Bounds.Min, d.Bounds.Max, source(d)),
		}
	}
}

// schedulesValidCondition says whether every Schedule could be evaluated.
func schedulesValidCondition(d scaling.Desired) metav1.Condition {
	if len(d.Invalid) == 0 {
		return metav1.Condition{
			Type:    autoscalingv1alpha1.ConditionSchedulesValid,
			Status:  metav1.ConditionTrue,
			Reason:  autoscalingv1alpha1.ReasonAllSchedulesValid,
			Message: "Every Schedule of this autoscaler could be evaluated",
		}
	}
	return metav1.Condition{
		Type:    autoscalingv1alpha1.ConditionSchedulesValid,
		Status:  metav1.ConditionFalse,
		Reason:  autoscalingv1alpha1.ReasonInvalidSchedule,
		Message: invalidMessage(d.Invalid),
	}
}

func invalidMessage(invalid []scaling.InvalidSchedule) string {
	parts := make([]string, 0, len(invalid))
	for _, s := range invalid {
		parts = append(parts, fmt.Sprintf("Schedule %q is skipped: %s", s.Name, s.Message))
	}
	msg := strings.Join(parts, ". ") + ". The other Schedules still apply; fix the fields named and re-apply"
	if len(msg) > maxMessage {
		msg = msg[:maxMessage-len(truncated)] + truncated
	}
	return msg
}

// maxMessage keeps condition messages well below the API's limit of 32768 bytes.
const maxMessage = 4096

const truncated = " … (truncated; see the Schedules' Valid conditions)"

// source says where the bounds come from, for messages.
func source(d scaling.Desired) string {
	if len(d.Active) == 0 {
		return "baseline: no Schedule is active"
	}
	return "active Schedules: " + strings.Join(d.Active, ", ")
}
