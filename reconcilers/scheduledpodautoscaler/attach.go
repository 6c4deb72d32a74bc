package scheduledpodautoscaler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/api/scaling"
	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
)

// Event reasons of attached autoscalers.
const (
	// EventTargetChanged (Warning): another field manager changed a field that almanac owns
	// on the target, and almanac put its value back.
	EventTargetChanged = "TargetChanged"
	// EventTargetReleased: almanac let go of a target (the autoscaler was deleted or its
	// targetRef changed), leaving it at the baseline.
	EventTargetReleased = "TargetReleased"
)

// holdTarget puts the release finalizer on an attached autoscaler, so that deleting it lets go
// of its target first (release).
func (r *Reconciler) holdTarget(ctx context.Context, spa *autoscalingv1alpha1.ScheduledPodAutoscaler) error {
	if controllerutil.ContainsFinalizer(spa, autoscalingv1alpha1.ReleaseFinalizer) {
		return nil
	}
	orig := spa.DeepCopy()
	controllerutil.AddFinalizer(spa, autoscalingv1alpha1.ReleaseFinalizer)
	if err := r.Client.Patch(ctx, spa, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("failed to add finalizer %s to ScheduledPodAutoscaler %s: %w", autoscalingv1alpha1.ReleaseFinalizer, klog.KObj(spa), err)
	}
	return nil
}

// release lets go of the target of an autoscaler being deleted (leaving it at the baseline and
// owned by no almanac field manager), then removes the release finalizer.
func (r *Reconciler) release(ctx context.Context, spa *autoscalingv1alpha1.ScheduledPodAutoscaler) error {
	if !controllerutil.ContainsFinalizer(spa, autoscalingv1alpha1.ReleaseFinalizer) {
		return nil
	}
	for _, ref := range spa.TargetsHeld() {
		if err := r.letGo(ctx, spa.Namespace, ref, spa.Spec); err != nil {
			return err
		}
		r.Recorder.Eventf(spa, nil, corev1.EventTypeNormal, EventTargetReleased, "Release",
			"Let go of %s: left at the baseline (%s), owned by no almanac field manager", ref.String(), baselineText(spa))
	}
	patch, _ := autoscalingv1alpha1.ReleaseFinalizerRemoval(spa.Finalizers)
	return client.IgnoreNotFound(r.Client.Patch(ctx, spa, client.RawPatch(types.JSONPatchType, patch)))
}

// conflictHeld reports whether the fight rule stopped almanac from writing the target at the
// spec's current generation.
func conflictHeld(spa *autoscalingv1alpha1.ScheduledPodAutoscaler) bool {
	c := meta.FindStatusCondition(spa.Status.Conditions, autoscalingv1alpha1.ConditionConflict)
	return c != nil && c.Status == "True" && c.ObservedGeneration == spa.Generation
}

// applyTarget brings an attached target to the bounds d calls for: it lets go of a target that
// spec.targetRef no longer names, reads the target, and writes it if it differs, unless the
// fight rule holds.
func (r *Reconciler) applyTarget(ctx context.Context, spa *autoscalingv1alpha1.ScheduledPodAutoscaler, d scaling.Desired, last *applied, now time.Time) (hpaState, error) {
	ref := *spa.Spec.TargetRef
	if old := spa.Status.Target; old != nil && *old != ref {
		if err := r.letGo(ctx, spa.Namespace, *old, spa.Spec); err != nil {
			return hpaState{applyErr: err}, err
		}
		r.Recorder.Eventf(spa, nil, corev1.EventTypeNormal, EventTargetReleased, "Release",
			"Let go of %s (targetRef now names %s): left at the baseline (%s), owned by no almanac field manager",
			old.String(), ref.String(), baselineText(spa))
	}
	l, err := r.readTargetCached(ctx, spa.Namespace, ref, last)
	switch {
	case errors.Is(err, autoscalingv1alpha1.ErrTargetNotServed):
		return hpaState{notServed: err}, nil
	case err != nil:
		return hpaState{applyErr: err}, err
	}
	// Watched only once the manager could read the kind (the target exists or not): a kind it
	// may not read, or that is not served, starts no informer that fails forever; the number
	// of informers is at most the number of kinds the manager may read.
	if err := r.watchTarget(ref); err != nil {
		return hpaState{applyErr: err}, err
	}
	if l == nil {
		return hpaState{notFound: true}, nil
	}
	kind := ref.TargetKind()
	hs := hpaState{target: &ref}
	if kind == autoscalingv1alpha1.TargetScale && sleepv1alpha1.Holds(l.Object.GetAnnotations()) {
		// The one rule between sleeps and autoscalers (sleepv1alpha1.Holds): while a sleep holds
		// the workload asleep, the sleep wins and the autoscaler writes nothing to it; at wake
		// the sleep puts back what it recorded, and the target's change brings the autoscaler
		// back to its bounds.
		hs.asleep = true
		return hs, nil
	}
	if l.Has(kind, d.Bounds.Min, d.Bounds.Max) {
		return hs, nil
	}
	if conflictHeld(spa) {
		hs.fight = findCondition(spa.Status.Conditions, autoscalingv1alpha1.ConditionConflict).Message
		return hs, nil
	}
	// A put-back: the status says that the target has these bounds, so someone else changed it.
	st := spa.Status
	var changedBy []string
	var fieldName, was string
	if st.Target != nil && *st.Target == ref && st.MinReplicas != nil && *st.MinReplicas == d.Bounds.Min && st.MaxReplicas == d.Bounds.Max {
		// Read around the cache: a cache behind almanac's own last apply is no put-back, and
		// who changed the field is in managedFields, of which the cache keeps only almanac's.
		full, err := r.readTarget(ctx, spa.Namespace, ref)
		switch {
		case err != nil:
			return hpaState{applyErr: err, target: st.Target}, err
		case full == nil:
			return hpaState{notFound: true}, nil
		case full.Has(kind, d.Bounds.Min, d.Bounds.Max):
			return hs, nil
		}
		l = full
		minPath, maxPath := autoscalingv1alpha1.TargetFields(kind)
		path, value := minPath, l.Min
		if l.Min != nil && *l.Min == d.Bounds.Min {
			path, value = maxPath, l.Max
		}
		fieldName, was = strings.Join(path, "."), "removed it"
		if value != nil {
			was = fmt.Sprintf("set it to %d", *value)
		}
		changedBy = otherManagers(l.Object.GetManagedFields(), path)
		if r.putBacks.add(types.NamespacedName{Namespace: spa.Namespace, Name: spa.Name}, spa.Generation, now) {
			hs.fight = conflictMessage(ref, changedBy, fieldName)
			return hs, nil
		}
	}
	version, err := r.writeTarget(ctx, spa.Namespace, ref, l, d.Bounds)
	if err != nil {
		return hpaState{applyErr: err, target: spa.Status.Target}, err
	}
	hs.appliedAt, hs.appliedVersion = r.Clock.Now(), version
	ctrl.LoggerFrom(ctx).V(1).Info("Applied the bounds to the target", "target", ref.String(),
		"minReplicas", d.Bounds.Min, "maxReplicas", d.Bounds.Max, "active", d.Active)
	if fieldName != "" {
		who := "another field manager"
		if len(changedBy) > 0 {
			who = "field manager " + strings.Join(quoteAll(changedBy), ", ")
		}
		r.Recorder.Eventf(spa, nil, corev1.EventTypeWarning, EventTargetChanged, "PutBack",
			"%s changed %s of %s (%s); almanac put back minReplicas %d and maxReplicas %d (%s). After %d such changes within %s almanac stops and sets the Conflict condition",
			who, fieldName, ref.String(), was, d.Bounds.Min, d.Bounds.Max, source(d), autoscalingv1alpha1.MaxPutBacks, autoscalingv1alpha1.PutBackWindow)
	}
	return hs, nil
}

// subject names what carries the bounds, for messages: the generated HorizontalPodAutoscaler
// or the attached target.
func subject(spa *autoscalingv1alpha1.ScheduledPodAutoscaler) string {
	if ref := spa.Spec.TargetRef; ref != nil {
		if ref.TargetKind() == autoscalingv1alpha1.TargetScale {
			return ref.Kind + " " + ref.Name + " (its scale subresource)"
		}
		return ref.Kind + " " + ref.Name
	}
	return "HorizontalPodAutoscaler " + spa.Name
}

// baselineText is an attached autoscaler's baseline, for messages.
func baselineText(spa *autoscalingv1alpha1.ScheduledPodAutoscaler) string {
	if spa.Spec.MaxReplicas == nil {
		return fmt.Sprintf("minReplicas %d; the maximum unchanged", ptr.Deref(spa.Spec.MinReplicas, 0))
	}
	return fmt.Sprintf("minReplicas %d and maxReplicas %d", ptr.Deref(spa.Spec.MinReplicas, 0), *spa.Spec.MaxReplicas)
}
