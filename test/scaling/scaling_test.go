package scaling_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	autoscalingv2ac "k8s.io/client-go/applyconfigurations/autoscaling/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/api/index"
	"github.com/almanac-dev/almanac/test/testenv"
)

// boundaryTolerance is how late after a boundary the HPA may be observed with the new
// bounds in these tests (the benchmark measures the real lag; this only catches polling).
const boundaryTolerance = 2 * time.Second

// TestBoundsFollowAWindow: creating an autoscaler creates its HPA; a Schedule's window that
// opens a few seconds ahead changes the HPA's bounds at the boundary (not before), nothing is
// written while the window is open, and the baseline comes back when it closes.
func TestBoundsFollowAWindow(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	open := time.Date(2030, 1, 7, 10, 0, 0, 0, time.UTC)
	closing := open.Add(time.Minute)
	clk := newOffsetClock(open.Add(-5 * time.Second))
	writes := watchWrites(t, clk, ns)

	spa := newAutoscaler(ns, "web", 2, 10)
	create(t, spa, oneShot(ns, "launch", "web", open, closing, 5, 20))
	startManager(t, clk, ns)

	// The HPA is created with the baseline and a controller reference.
	eventually(t, 10*time.Second, hasBounds(ns, "web", 2, 10))
	hpa, _ := getHPA(ns, "web")
	if ref := metav1.GetControllerOf(hpa); ref == nil || ref.Kind != "ScheduledPodAutoscaler" || ref.Name != "web" || !ptr.Deref(ref.BlockOwnerDeletion, false) {
		t.Errorf("HPA controller reference = %+v, want the ScheduledPodAutoscaler web", ref)
	}
	if len(hpa.Spec.Metrics) != 2 || hpa.Spec.ScaleTargetRef.Name != "web" {
		t.Errorf("HPA spec = %+v, want the baseline's scaleTargetRef and two metrics", hpa.Spec)
	}

	clk.sleepUntil(closing.Add(boundaryTolerance))
	eventually(t, 5*time.Second, hasBounds(ns, "web", 2, 10))

	// Every write to the HPA, in order: created with the baseline before the window, the
	// window's bounds at its start, the baseline at its end; nothing in between.
	var hpaWrites []write
	for _, w := range writes.all() {
		if w.kind == "HorizontalPodAutoscaler" {
			hpaWrites = append(hpaWrites, w)
		}
	}
	if len(hpaWrites) != 3 {
		t.Fatalf("HPA writes:\n%s\nwant exactly 3: created, opened, closed", joinWrites(hpaWrites))
	}
	for i, want := range []struct {
		min, max   int32
		notBefore  time.Time
		notAfter   time.Time
		descriptor string
	}{
		{2, 10, time.Time{}, open, "created with the baseline before the window"},
		{5, 20, open, open.Add(boundaryTolerance), "window bounds at the opening boundary"},
		{2, 10, closing, closing.Add(boundaryTolerance), "baseline at the closing boundary"},
	} {
		w := hpaWrites[i]
		if w.min != want.min || w.max != want.max || w.at.Before(want.notBefore) || w.at.After(want.notAfter) {
			t.Errorf("HPA write %d = %s, want %s: %d-%d within [%s, %s]", i, w, want.descriptor, want.min, want.max,
				want.notBefore.Format(time.RFC3339), want.notAfter.Format(time.RFC3339Nano))
		}
	}

	// Status tells the story.
	got := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(spa), got); err != nil {
		t.Fatal(err)
	}
	st := got.Status
	if ptr.Deref(st.MinReplicas, 0) != 2 || st.MaxReplicas != 10 || len(st.ActiveSchedules) != 0 || st.NextTransitionTime != nil || st.ObservedGeneration != got.Generation {
		t.Errorf("status = %+v, want 2-10, no active Schedule, no next transition, observedGeneration %d", st, got.Generation)
	}
	if lt := st.LastAppliedTransition; lt == nil || !lt.BoundaryTime.Time.Equal(closing) || lt.MinReplicas != 2 || lt.MaxReplicas != 10 || lt.Lag.Duration < 0 || lt.Lag.Duration > boundaryTolerance {
		t.Errorf("lastAppliedTransition = %+v, want the closing boundary %s, 2-10 and a small lag", lt, closing)
	}
	if c := meta.FindStatusCondition(st.Conditions, autoscalingv1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue || c.Reason != autoscalingv1alpha1.ReasonBoundsApplied {
		t.Errorf("Ready = %+v, want True/BoundsApplied", c)
	}

	// The Schedule's own status was written when it was created and when its last window
	// closed, not when it opened (its autoscaler's status says that).
	s := &autoscalingv1alpha1.Schedule{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "launch"}, s); err != nil {
		t.Fatal(err)
	}
	if s.Status.Phase != autoscalingv1alpha1.SchedulePhaseCompleted {
		t.Errorf("Schedule phase = %s, want Completed", s.Status.Phase)
	}
	var phases []string
	for _, w := range writes.all() {
		if w.kind == "Schedule" {
			phases = append(phases, w.at.Format(time.RFC3339))
		}
	}
	if len(phases) != 3 { // created; Scheduled; Completed at close
		t.Errorf("Schedule writes at %v, want 3 (create, Scheduled, Completed)", phases)
	}

	// Events: the first bounds, and nothing else: each transition is in the status
	// (lastAppliedTransition), which is written anyway.
	want := []string{"BoundsApplied"}
	eventually(t, 5*time.Second, func() error {
		if got := eventReasons(t, ns, "web"); !slices.Equal(got, want) {
			return fmt.Errorf("event reasons %v, want %v", got, want)
		}
		if msgs := eventMessages(t, ns, "web"); len(msgs) != 1 {
			return fmt.Errorf("events %q, want one", msgs)
		}
		return nil
	})
}

// TestRestartMidWindowConverges: the window opens while the manager is down; the next
// manager applies it at once, records the lag, and lands on the right bounds.
func TestRestartMidWindowConverges(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	open := time.Date(2030, 1, 8, 10, 0, 0, 0, time.UTC)
	clk := newOffsetClock(open.Add(-3 * time.Second))
	create(t, newAutoscaler(ns, "web", 2, 10), oneShot(ns, "sale", "web", open, open.Add(time.Hour), 6, 30))

	stop := startManager(t, clk, ns)
	eventually(t, 10*time.Second, func() error {
		spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
		if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "web"}, spa); err != nil {
			return err
		}
		if spa.Status.NextTransitionTime == nil {
			return fmt.Errorf("no status yet")
		}
		return hasBounds(ns, "web", 2, 10)()
	})
	stop()

	clk.sleepUntil(open.Add(2 * time.Second))
	if err := hasBounds(ns, "web", 2, 10)(); err != nil {
		t.Fatalf("with no manager running: %v", err)
	}
	startManager(t, clk, ns)
	eventually(t, 10*time.Second, hasBounds(ns, "web", 6, 30))

	spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "web"}, spa); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() error {
		if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "web"}, spa); err != nil {
			return err
		}
		if lt := spa.Status.LastAppliedTransition; lt == nil || !lt.BoundaryTime.Time.Equal(open) || lt.Lag.Duration < 2*time.Second {
			return fmt.Errorf("lastAppliedTransition = %+v, want the boundary %s with a lag of the downtime (≥ 2s)", lt, open)
		}
		if !slices.Equal(spa.Status.ActiveSchedules, []string{"sale"}) {
			return fmt.Errorf("activeSchedules = %v", spa.Status.ActiveSchedules)
		}
		return nil
	})
}

// TestCreatedInsideAWindowIsOneEvent: an autoscaler created while a Schedule is active gets
// one event, BoundsApplied naming that Schedule (it did not become active: it was); a
// Schedule that opens later is a transition: the status says it, and no event is added.
func TestCreatedInsideAWindowIsOneEvent(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	now := time.Date(2030, 1, 10, 10, 0, 45, 0, time.UTC)
	clk := newOffsetClock(now)
	later := now.Truncate(time.Minute).Add(time.Minute) // a Schedule opens in 15 s
	create(t, newAutoscaler(ns, "web", 2, 10),
		oneShot(ns, "sale", "web", now.Add(-time.Hour), now.Add(time.Hour), 6, 30),
		oneShot(ns, "rush", "web", later, later.Add(time.Hour), 8, 30))
	startManager(t, clk, ns)
	eventually(t, 10*time.Second, hasBounds(ns, "web", 6, 30))
	eventually(t, 5*time.Second, func() error {
		msgs := eventMessages(t, ns, "web")
		if len(msgs) != 1 || !strings.HasPrefix(msgs[0], "BoundsApplied: ") || !strings.Contains(msgs[0], "(was none; active Schedules: sale)") {
			return fmt.Errorf("events %q, want one BoundsApplied that names Schedule sale", msgs)
		}
		return nil
	})
	clk.sleepUntil(later)
	eventually(t, 10*time.Second, hasBounds(ns, "web", 8, 30))
	eventually(t, 5*time.Second, func() error {
		got := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, got); err != nil {
			return err
		}
		if lt := got.Status.LastAppliedTransition; lt == nil || !lt.BoundaryTime.Time.Equal(later) || !slices.Equal(got.Status.ActiveSchedules, []string{"rush", "sale"}) {
			return fmt.Errorf("lastAppliedTransition %+v, active %v; want the boundary %s, rush and sale", lt, got.Status.ActiveSchedules, later)
		}
		if msgs := eventMessages(t, ns, "web"); len(msgs) != 1 {
			return fmt.Errorf("events %q, want only the first BoundsApplied", msgs)
		}
		return nil
	})
}

// TestOtherManagersAreNotFought: labels and a behavior that someone else sets on the HPA stay
// as they are, through almanac's own later writes; only minReplicas and maxReplicas, which
// almanac owns, are taken back.
func TestOtherManagersAreNotFought(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	clk := newOffsetClock(time.Date(2030, 1, 9, 10, 0, 0, 0, time.UTC))
	spa := newAutoscaler(ns, "web", 2, 10)
	create(t, spa)
	reconciles := startCountedManager(t, clk, ns)
	eventually(t, 10*time.Second, hasBounds(ns, "web", 2, 10))
	key := client.ObjectKeyFromObject(spa)

	// kubectl edit: a label and a behavior. The edit of the spec brings a reconcile (the fence):
	// once it is over, almanac has written nothing.
	hpa, err := getHPA(ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	reconciles.Fence(t, "scheduledpodautoscaler", key, func() {
		patch := client.MergeFrom(hpa.DeepCopy())
		hpa.Labels = map[string]string{"team": "checkout"}
		hpa.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{
			ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60)},
		}
		if err := env.Client.Patch(ctx, hpa, patch, client.FieldOwner("kubectl-edit")); err != nil {
			t.Fatal(err)
		}
	})
	edited := hpa.ResourceVersion
	if hpa, _ := getHPA(ns, "web"); hpa.ResourceVersion != edited {
		t.Fatalf("almanac wrote the HPA after another manager's edit of its own fields (resourceVersion %s → %s)", edited, hpa.ResourceVersion)
	}

	// The HPA controller writes the status every 15 s; almanac neither reacts nor fights it.
	// The status write brings no reconcile; the fence is another edit of a field almanac does
	// not own, through the same watch after it: once its reconcile is over, anything the status
	// write would have brought is over too, and the fence's edit is the only write since.
	hpa.Status = autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 3, DesiredReplicas: 4}
	if err := env.Client.Status().Update(ctx, hpa, client.FieldOwner("horizontal-pod-autoscaler")); err != nil {
		t.Fatal(err)
	}
	statusWritten := hpa.ResourceVersion
	var fence string
	reconciles.Fence(t, "scheduledpodautoscaler", key, func() {
		patch := client.MergeFrom(hpa.DeepCopy())
		if hpa.Spec.Behavior.ScaleUp == nil { // the API server defaults it with scaleDown
			hpa.Spec.Behavior.ScaleUp = &autoscalingv2.HPAScalingRules{}
		}
		hpa.Spec.Behavior.ScaleUp.StabilizationWindowSeconds = ptr.To[int32](30)
		if err := env.Client.Patch(ctx, hpa, patch, client.FieldOwner("kubectl-edit")); err != nil {
			t.Fatal(err)
		}
		fence = hpa.ResourceVersion
	})
	if fence == statusWritten {
		t.Fatal("the fence's edit changed nothing")
	}
	if hpa, _ := getHPA(ns, "web"); hpa.ResourceVersion != fence {
		t.Fatalf("almanac wrote the HPA after the HPA controller's status write (resourceVersion %s → %s, then %s)", statusWritten, fence, hpa.ResourceVersion)
	}

	// almanac writes the HPA again (the baseline changed); the edit survives.
	latest := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(spa), latest); err != nil {
		t.Fatal(err)
	}
	spaPatch := client.MergeFrom(latest.DeepCopy())
	latest.Spec.HorizontalPodAutoscalerSpec.MaxReplicas = 12
	if err := env.Client.Patch(ctx, latest, spaPatch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, hasBounds(ns, "web", 2, 12))
	hpa, _ = getHPA(ns, "web")
	if hpa.Labels["team"] != "checkout" || hpa.Spec.Behavior == nil || hpa.Spec.Behavior.ScaleDown == nil ||
		ptr.Deref(hpa.Spec.Behavior.ScaleDown.StabilizationWindowSeconds, 0) != 60 {
		t.Errorf("after almanac's write the HPA has labels %v and behavior %+v; want kubectl's label and behavior kept", hpa.Labels, hpa.Spec.Behavior)
	}
	if owned := managerOf(hpa, "kubectl-edit"); !strings.Contains(owned, "f:behavior") || !strings.Contains(owned, "f:team") {
		t.Errorf("kubectl-edit no longer manages its fields: %s", owned)
	}
	if owned := managerOf(hpa, index.FieldManager); strings.Contains(owned, "f:behavior") || strings.Contains(owned, "f:labels") {
		t.Errorf("almanac took fields it does not set: %s", owned)
	}

	// minReplicas is almanac's: an edit of it is taken back.
	patch := client.MergeFrom(hpa.DeepCopy())
	hpa.Spec.MinReplicas = ptr.To[int32](7)
	if err := env.Client.Patch(ctx, hpa, patch, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, hasBounds(ns, "web", 2, 12))
	hpa, _ = getHPA(ns, "web")
	if hpa.Labels["team"] != "checkout" || hpa.Spec.Behavior == nil {
		t.Errorf("restoring minReplicas dropped kubectl's label or behavior: %v %+v", hpa.Labels, hpa.Spec.Behavior)
	}
}

// TestBrokenScheduleDoesNotBlockOthers: a Schedule that slipped past admission (no webhook
// runs here) is skipped and reported; the valid one applies.
func TestBrokenScheduleDoesNotBlockOthers(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	now := time.Date(2030, 1, 10, 10, 30, 0, 0, time.UTC)
	clk := newOffsetClock(now)
	good := oneShot(ns, "good", "web", now.Add(-30*time.Minute), now.Add(time.Hour), 4, 12)
	bad := oneShot(ns, "bad", "web", now.Add(-30*time.Minute), now.Add(time.Hour), 40, 80)
	bad.Spec.TimeZone = "Mars/Olympus_Mons"
	create(t, newAutoscaler(ns, "web", 2, 10), good, bad)
	startManager(t, clk, ns)
	eventually(t, 10*time.Second, hasBounds(ns, "web", 4, 12))
	eventually(t, 10*time.Second, func() error {
		spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
		if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "web"}, spa); err != nil {
			return err
		}
		c := meta.FindStatusCondition(spa.Status.Conditions, autoscalingv1alpha1.ConditionSchedulesValid)
		if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, `Schedule "bad" is skipped: spec.timeZone: `) {
			return fmt.Errorf("SchedulesValid = %+v", c)
		}
		s := &autoscalingv1alpha1.Schedule{}
		if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "bad"}, s); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(s.Status.Conditions, autoscalingv1alpha1.ConditionValid); c == nil || c.Status != metav1.ConditionFalse {
			return fmt.Errorf("Schedule bad: Valid = %+v", c)
		}
		if reasons := eventReasons(t, ns, "web"); !slices.Contains(reasons, autoscalingv1alpha1.ReasonInvalidSchedule) {
			return fmt.Errorf("events %v have no InvalidSchedule", reasons)
		}
		return nil
	})
}

// TestMinAboveMaxIsRaised: overlapping Schedules whose largest minReplicas is above their
// largest maxReplicas give an HPA with maxReplicas raised to minReplicas, which the API
// server accepts (an HPA with min > max would be refused and the window missed).
func TestMinAboveMaxIsRaised(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	now := time.Date(2030, 1, 10, 12, 30, 0, 0, time.UTC)
	floor := oneShot(ns, "floor", "web", now.Add(-time.Hour), now.Add(time.Hour), 15, 0)
	floor.Spec.MaxReplicas = nil // the baseline's 10
	create(t, newAutoscaler(ns, "web", 2, 10), floor,
		oneShot(ns, "cap", "web", now.Add(-time.Hour), now.Add(time.Hour), 1, 12))
	startManager(t, newOffsetClock(now), ns)
	eventually(t, 10*time.Second, hasBounds(ns, "web", 15, 15)) // min max(2,15,1)=15; max max(10,12)=12 → raised to 15
	eventually(t, 10*time.Second, func() error {
		spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
		if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "web"}, spa); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(spa.Status.Conditions, autoscalingv1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue ||
			ptr.Deref(spa.Status.MinReplicas, 0) != 15 || spa.Status.MaxReplicas != 15 {
			return fmt.Errorf("status %d-%d, Ready %+v; want 15-15 and Ready", ptr.Deref(spa.Status.MinReplicas, 0), spa.Status.MaxReplicas, c)
		}
		return nil
	})
}

// TestSuspendHoldsTheBaseline: suspending an autoscaler in the middle of a window brings the
// HPA back to the baseline; resuming brings the window's bounds back.
func TestSuspendHoldsTheBaseline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	now := time.Date(2030, 1, 11, 10, 30, 0, 0, time.UTC)
	clk := newOffsetClock(now)
	spa := newAutoscaler(ns, "web", 2, 10)
	create(t, spa, oneShot(ns, "w", "web", now.Add(-time.Hour), now.Add(time.Hour), 5, 20))
	startManager(t, clk, ns)
	eventually(t, 10*time.Second, hasBounds(ns, "web", 5, 20))

	setSuspend := func(suspend bool) {
		latest := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(spa), latest); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(latest.DeepCopy())
		latest.Spec.Suspend = suspend
		if err := env.Client.Patch(ctx, latest, patch); err != nil {
			t.Fatal(err)
		}
	}
	setSuspend(true)
	eventually(t, 10*time.Second, hasBounds(ns, "web", 2, 10))
	eventually(t, 10*time.Second, func() error {
		latest := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(spa), latest); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(latest.Status.Conditions, autoscalingv1alpha1.ConditionReady); c == nil || c.Reason != autoscalingv1alpha1.ReasonSuspended {
			return fmt.Errorf("Ready = %+v, want reason Suspended", c)
		}
		return nil
	})
	setSuspend(false)
	eventually(t, 10*time.Second, hasBounds(ns, "web", 5, 20))
}

// TestTerminatingScheduleIsGoneAtOnce: a Schedule held by someone's finalizer after
// `kubectl delete` stops raising its autoscaler at once (the reconcile that the deletion
// wakes), although the Schedule is still there; the HPA returns to the baseline and the
// autoscaler no longer names it.
func TestTerminatingScheduleIsGoneAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	now := time.Date(2030, 1, 11, 10, 30, 0, 0, time.UTC)
	clk := newOffsetClock(now)
	s := oneShot(ns, "black-friday", "web", now.Add(-time.Hour), now.Add(24*time.Hour), 5, 20)
	s.Finalizers = []string{"example.com/hold"}
	create(t, newAutoscaler(ns, "web", 2, 10), s)
	t.Cleanup(func() {
		latest := &autoscalingv1alpha1.Schedule{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(s), latest); err == nil {
			latest.Finalizers = nil
			_ = env.Client.Update(ctx, latest)
		}
	})
	startManager(t, clk, ns)
	eventually(t, 10*time.Second, hasBounds(ns, "web", 5, 20))

	if err := env.Client.Delete(ctx, s); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, hasBounds(ns, "web", 2, 10))
	eventually(t, 10*time.Second, func() error {
		spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, spa); err != nil {
			return err
		}
		if len(spa.Status.ActiveSchedules) != 0 || spa.Status.NextTransitionTime != nil {
			return fmt.Errorf("status names %v active and the next transition %v, want neither", spa.Status.ActiveSchedules, spa.Status.NextTransitionTime)
		}
		return nil
	})
	held := &autoscalingv1alpha1.Schedule{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(s), held); err != nil || held.DeletionTimestamp == nil {
		t.Fatalf("the Schedule should still be there, being deleted: %v", err)
	}
}

// TestConflictingHPAIsLeftAlone: an HPA of the same name that almanac does not control is not
// touched, and the autoscaler says so.
func TestConflictingHPAIsLeftAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	foreign := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](1), MaxReplicas: 3,
		},
	}
	create(t, foreign)
	create(t, newAutoscaler(ns, "web", 2, 10))
	startManager(t, newOffsetClock(time.Date(2030, 1, 12, 10, 0, 0, 0, time.UTC)), ns)
	eventually(t, 10*time.Second, func() error {
		spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, spa); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(spa.Status.Conditions, autoscalingv1alpha1.ConditionReady); c == nil || c.Reason != autoscalingv1alpha1.ReasonHPAConflict {
			return fmt.Errorf("Ready = %+v, want reason %s", c, autoscalingv1alpha1.ReasonHPAConflict)
		}
		return nil
	})
	hpa, _ := getHPA(ns, "web")
	if hpa.ResourceVersion != foreign.ResourceVersion {
		t.Errorf("the foreign HPA was written (resourceVersion %s → %s)", foreign.ResourceVersion, hpa.ResourceVersion)
	}

	// Once it is gone, almanac creates its own.
	if err := env.Client.Delete(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, hasBounds(ns, "web", 2, 10))
}

func managerOf(hpa *autoscalingv2.HorizontalPodAutoscaler, manager string) string {
	var out []string
	for _, m := range hpa.ManagedFields {
		if m.Manager == manager && m.FieldsV1 != nil && m.Subresource == "" {
			out = append(out, m.FieldsV1.GetRawString())
		}
	}
	return strings.Join(out, " ")
}

// eventMessages returns "reason: note" of the events regarding the object named regarding.
func eventMessages(t testing.TB, ns, regarding string) []string {
	t.Helper()
	list := &eventsv1.EventList{}
	if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Name == regarding {
			out = append(out, e.Reason+": "+e.Note)
		}
	}
	slices.Sort(out)
	return out
}

func eventReasons(t testing.TB, ns, regarding string) []string {
	t.Helper()
	list := &eventsv1.EventList{}
	if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, e := range list.Items {
		if e.Regarding.Name == regarding {
			reasons = append(reasons, e.Reason)
		}
	}
	slices.Sort(reasons)
	return slices.Compact(reasons)
}

func joinWrites(ws []write) string {
	var b strings.Builder
	for _, w := range ws {
		b.WriteString("  " + w.String() + "\n")
	}
	return b.String()
}

// TestBoundaryPassingDuringAReconcileIsNotLost: a reconcile that starts just before a
// boundary (here: a spec edit 1.5 s before it) and whose writes take longer than the time
// left (here: a status write held for 3 s) must still apply the boundary. Its RequeueAfter,
// computed after the writes, is then negative, which controller-runtime would drop: the
// window would be lost until something else changed.
func TestBoundaryPassingDuringAReconcileIsNotLost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	open := time.Date(2030, 1, 16, 10, 0, 0, 0, time.UTC)
	clk := newOffsetClock(open.Add(-15 * time.Second))
	spa := newAutoscaler(ns, "web", 2, 10)
	create(t, spa, oneShot(ns, "w", "web", open, open.Add(time.Hour), 5, 20))

	var slow atomic.Bool
	startManagerWith(t, clk, func(c client.Client) client.Client {
		return &slowStatusClient{Client: c, slow: &slow, delay: 3 * time.Second}
	}, ns)
	eventually(t, 10*time.Second, hasBounds(ns, "web", 2, 10))
	eventually(t, 10*time.Second, func() error {
		got := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(spa), got); err != nil {
			return err
		}
		if got.Status.NextTransitionTime == nil {
			return errNotYet
		}
		return nil
	})
	if !clk.Now().Before(open.Add(-2 * time.Second)) {
		t.Fatalf("the manager converged only at %s, too close to the boundary %s for this test", clk.Now(), open)
	}
	clk.sleepUntil(open.Add(-1500 * time.Millisecond))
	slow.Store(true)
	latest := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(spa), latest); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(latest.DeepCopy())
	latest.Spec.OverlapPolicy = autoscalingv1alpha1.OverlapPolicyForbid // read only by admission: the bounds stay
	if err := env.Client.Patch(ctx, latest, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, hasBounds(ns, "web", 5, 20))
	eventually(t, 10*time.Second, func() error {
		got := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(spa), got); err != nil {
			return err
		}
		if lt := got.Status.LastAppliedTransition; lt == nil || !lt.BoundaryTime.Time.Equal(open) {
			return fmt.Errorf("lastAppliedTransition = %+v, want the boundary %s", lt, open)
		}
		return nil
	})
}

// slowStatusClient holds each status write for delay while slow is set.
type slowStatusClient struct {
	client.Client
	slow  *atomic.Bool
	delay time.Duration
}

func (c *slowStatusClient) Status() client.SubResourceWriter {
	return slowWriter{SubResourceWriter: c.Client.Status(), c: c}
}

type slowWriter struct {
	client.SubResourceWriter
	c *slowStatusClient
}

func (w slowWriter) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	if w.c.slow.Load() {
		time.Sleep(w.c.delay)
	}
	return w.SubResourceWriter.Apply(ctx, obj, opts...)
}

// TestApplyFailureIsReported: when writing the HPA fails in a way that may pass when asked
// again (here an admission webhook that cannot be reached: a 500), the autoscaler says so
// (Ready False, ApplyFailed, a Warning event) and retries with backoff; once the write goes
// through, the HPA gets its bounds and Ready comes back. (A refusal, which would be refused
// again, waits instead: TestARefusedApplyWaits.)
func TestApplyFailureIsReported(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	var failing atomic.Bool
	failing.Store(true)
	create(t, newAutoscaler(ns, "web", 2, 10))
	startManagerWith(t, newOffsetClock(time.Date(2030, 1, 17, 10, 0, 0, 0, time.UTC)), func(c client.Client) client.Client {
		return &refusingClient{Client: c, refuse: &failing}
	}, ns)
	ready := func(status metav1.ConditionStatus, reason string) func() error {
		return func() error {
			spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
			if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, spa); err != nil {
				return err
			}
			if c := meta.FindStatusCondition(spa.Status.Conditions, autoscalingv1alpha1.ConditionReady); c == nil || c.Status != status || c.Reason != reason {
				return fmt.Errorf("Ready = %+v, want %s/%s", c, status, reason)
			}
			return nil
		}
	}
	eventually(t, 10*time.Second, ready(metav1.ConditionFalse, autoscalingv1alpha1.ReasonApplyFailed))
	eventually(t, 10*time.Second, func() error {
		if reasons := eventReasons(t, ns, "web"); !slices.Contains(reasons, autoscalingv1alpha1.ReasonApplyFailed) {
			return fmt.Errorf("events %v have no %s", reasons, autoscalingv1alpha1.ReasonApplyFailed)
		}
		return nil
	})
	if _, err := getHPA(ns, "web"); err == nil {
		t.Fatal("an HPA exists although every apply was refused")
	}
	failing.Store(false)
	eventually(t, 30*time.Second, hasBounds(ns, "web", 2, 10))
	eventually(t, 10*time.Second, ready(metav1.ConditionTrue, autoscalingv1alpha1.ReasonBoundsApplied))
}

// refusingClient fails every HorizontalPodAutoscaler apply while refuse is set, as an API
// server whose admission webhook cannot be reached does (500).
type refusingClient struct {
	client.Client
	refuse *atomic.Bool
}

func (c *refusingClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	if _, ok := obj.(*autoscalingv2ac.HorizontalPodAutoscalerApplyConfiguration); ok && c.refuse.Load() {
		return apierrors.NewInternalError(errors.New(`failed calling webhook "policy.example.com": no endpoints available for service "policy"`))
	}
	return c.Client.Apply(ctx, obj, opts...)
}

// TestForbidIsBackedByTheReconciler: under overlapPolicy Forbid, Schedules that overlap anyway
// (admission reads a cache and admits two concurrent creates; this test has no webhooks at
// all) are resolved by the reconcilers: the one created first is kept, the later one is left
// out of the bounds, and both the autoscaler and the left-out Schedule say so (condition
// ForbiddenOverlap, event). When the overlap goes away, so do the conditions. Issue 11,
// finding 3: the autoscaler silently got Max semantics.
func TestForbidIsBackedByTheReconciler(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	now := time.Date(2030, 1, 10, 10, 30, 0, 0, time.UTC)
	clk := newOffsetClock(now)
	spa := newAutoscaler(ns, "web", 2, 10)
	spa.Spec.OverlapPolicy = autoscalingv1alpha1.OverlapPolicyForbid
	first := oneShot(ns, "first", "web", now.Add(-30*time.Minute), now.Add(time.Hour), 4, 12)
	create(t, spa, first)
	time.Sleep(1100 * time.Millisecond) // creation timestamps have whole seconds
	later := oneShot(ns, "later", "web", now.Add(-10*time.Minute), now.Add(2*time.Hour), 20, 40)
	create(t, later)
	startManager(t, clk, ns)

	eventually(t, 10*time.Second, hasBounds(ns, "web", 4, 12)) // not 20-40 (Max)
	condition := func(obj client.Object, conds *[]metav1.Condition) (*metav1.Condition, error) {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return nil, err
		}
		return meta.FindStatusCondition(*conds, autoscalingv1alpha1.ConditionForbiddenOverlap), nil
	}
	gotSPA, gotLater, gotFirst := &autoscalingv1alpha1.ScheduledPodAutoscaler{}, &autoscalingv1alpha1.Schedule{}, &autoscalingv1alpha1.Schedule{}
	gotSPA.Namespace, gotSPA.Name = ns, "web"
	gotLater.Namespace, gotLater.Name = ns, "later"
	gotFirst.Namespace, gotFirst.Name = ns, "first"
	eventually(t, 10*time.Second, func() error {
		c, err := condition(gotSPA, &gotSPA.Status.Conditions)
		if err != nil {
			return err
		}
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != autoscalingv1alpha1.ReasonSchedulesLeftOut ||
			!strings.Contains(c.Message, `Schedule "later" is left out of the bounds: its windows overlap those of Schedule "first", created earlier, from 2030-01-10 10:20 to 11:30 UTC`) {
			return fmt.Errorf("autoscaler: ForbiddenOverlap = %+v", c)
		}
		if !slices.Equal(gotSPA.Status.ActiveSchedules, []string{"first"}) {
			return fmt.Errorf("active Schedules %v, want [first]", gotSPA.Status.ActiveSchedules)
		}
		if c, err = condition(gotLater, &gotLater.Status.Conditions); err != nil {
			return err
		}
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != autoscalingv1alpha1.ReasonLeftOut || !strings.Contains(c.Message, `Schedule "first", created earlier`) {
			return fmt.Errorf("Schedule later: ForbiddenOverlap = %+v", c)
		}
		if c, err = condition(gotFirst, &gotFirst.Status.Conditions); err != nil {
			return err
		} else if c != nil {
			return fmt.Errorf("Schedule first: ForbiddenOverlap = %+v, want none: it is kept", c)
		}
		for _, name := range []string{"web", "later"} {
			if reasons := eventReasons(t, ns, name); !slices.Contains(reasons, autoscalingv1alpha1.ConditionForbiddenOverlap) {
				return fmt.Errorf("events of %s: %v, want ForbiddenOverlap", name, reasons)
			}
		}
		return nil
	})

	// The overlap goes away: "later" applies, and no condition remains.
	if err := env.Client.Delete(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, hasBounds(ns, "web", 20, 40))
	eventually(t, 10*time.Second, func() error {
		for _, obj := range []struct {
			o     client.Object
			conds *[]metav1.Condition
		}{{gotSPA, &gotSPA.Status.Conditions}, {gotLater, &gotLater.Status.Conditions}} {
			c, err := condition(obj.o, obj.conds)
			if err != nil {
				return err
			}
			if c != nil {
				return fmt.Errorf("%s: ForbiddenOverlap = %+v, want none", obj.o.GetName(), c)
			}
		}
		return nil
	})
}

// TestHPAWritesComeFirstAtABoundary: when more autoscalers share a boundary than the
// controller has workers, every HPA write of the boundary is stored before any status of it
// (the autoscalers'; a boundary writes no Schedule's status and no event): those wait (base.Lanes) so that they do not delay the
// writes the boundary is for. resourceVersions are etcd's revisions, a total order of writes.
func TestHPAWritesComeFirstAtABoundary(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	open := time.Date(2030, 1, 7, 10, 0, 0, 0, time.UTC)
	clk := newOffsetClock(open.Add(-10 * time.Second))
	const n = 24
	createSharedBoundary(t, ns, open, n)
	reconciles := testenv.NewReconciles()
	startManagerOpts(t, clk, managerOpts{workers: 4, reconciles: reconciles}, ns)
	eventually(t, 30*time.Second, converged(ns, n))
	writes := watchWrites(t, clk, ns)
	clk.sleepUntil(open)
	eventually(t, 30*time.Second, sharedBoundaryApplied(ns, n))
	// The fence: the reconciles of the boundary are over (both controllers idle), and every
	// watch has delivered what was written before the fence's own writes.
	reconciles.WaitIdle(t, "scheduledpodautoscaler")
	reconciles.WaitIdle(t, "schedule")
	hpa0, err := getHPA(ns, "app-00")
	if err != nil {
		t.Fatal(err)
	}
	mine := writes.fence(t, ns, &autoscalingv1alpha1.ScheduledPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-00"}},
		&autoscalingv1alpha1.Schedule{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-00"}}, hpa0)

	rv := func(w write) int64 {
		v, err := strconv.ParseInt(w.resourceVersion, 10, 64)
		if err != nil {
			t.Fatalf("resourceVersion of %s: %v", w, err)
		}
		return v
	}
	var hpas, reports []write
	for _, w := range notMine(writes.since(open), mine) {
		if w.kind == "HorizontalPodAutoscaler" {
			hpas = append(hpas, w)
		} else {
			reports = append(reports, w)
		}
	}
	if len(hpas) != n {
		t.Fatalf("%d HPA writes at the boundary, want %d:\n%s", len(hpas), n, joinWrites(hpas))
	}
	// n autoscaler statuses, and nothing else (issue 23: no Schedule status, no event).
	if len(reports) != n {
		t.Fatalf("%d status and event writes at the boundary, want %d:\n%s", len(reports), n, joinWrites(reports))
	}
	lastHPA := slices.MaxFunc(hpas, func(a, b write) int { return cmp.Compare(rv(a), rv(b)) })
	for _, w := range reports {
		if rv(w) < rv(lastHPA) {
			t.Errorf("%s was stored before the last HPA write of the boundary, %s", w, lastHPA)
		}
	}
}

// createSharedBoundary creates n autoscalers app-00… (2-10) whose one Schedule each opens at
// open (5-20): n HPA writes due at one boundary.
func createSharedBoundary(t testing.TB, ns string, open time.Time, n int) {
	t.Helper()
	for i := range n {
		name := fmt.Sprintf("app-%02d", i)
		create(t, newAutoscaler(ns, name, 2, 10), oneShot(ns, name, name, open, open.Add(time.Hour), 5, 20))
	}
}

// sharedBoundaryApplied reports whether every autoscaler of createSharedBoundary has its HPA
// at the open bounds and its status converged.
func sharedBoundaryApplied(ns string, n int) func() error {
	return func() error {
		for i := range n {
			if err := hasBounds(ns, fmt.Sprintf("app-%02d", i), 5, 20)(); err != nil {
				return err
			}
		}
		return converged(ns, n)()
	}
}

// TestForeignHPAsCostNoReconcile: HorizontalPodAutoscalers that no ScheduledPodAutoscaler
// has the name of (other controllers', users') are none of almanac's business: creating and
// changing them reconciles nothing. (Not parallel: it reads the process's reconcile counter.)
func TestForeignHPAsCostNoReconcile(t *testing.T) {
	ns := newNamespace(t)
	clk := newOffsetClock(time.Date(2030, 1, 7, 10, 0, 0, 0, time.UTC))
	create(t, newAutoscaler(ns, "web", 2, 10))
	reconciles := startCountedManager(t, clk, ns)
	eventually(t, 30*time.Second, converged(ns, 1))
	reconciles.WaitIdle(t, "scheduledpodautoscaler")
	before := reconciles.Reconciled("scheduledpodautoscaler")

	c, err := client.New(restConfig(), client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		name := fmt.Sprintf("foreign-%d", i)
		for _, minReplicas := range []int32{2, 3} {
			spec := autoscalingv2ac.HorizontalPodAutoscalerSpec().
				WithScaleTargetRef(autoscalingv2ac.CrossVersionObjectReference().WithAPIVersion("apps/v1").WithKind("Deployment").WithName(name)).
				WithMinReplicas(minReplicas).WithMaxReplicas(10)
			if err := c.Apply(context.Background(), autoscalingv2ac.HorizontalPodAutoscaler(name, ns).WithSpec(spec), client.FieldOwner("someone-else")); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The fence: an edit of web's HPA (a field almanac does not own), through the same watch
	// after the foreign ones, brings one reconcile of web; once it and whatever the foreign
	// HPAs brought before it are over, only that one has run.
	web := client.ObjectKey{Namespace: ns, Name: "web"}
	reconciles.Fence(t, "scheduledpodautoscaler", web, func() {
		hpa, err := getHPA(ns, "web")
		if err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(hpa.DeepCopy())
		hpa.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{
			ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60)},
		}
		if err := env.Client.Patch(context.Background(), hpa, patch, client.FieldOwner("kubectl-edit")); err != nil {
			t.Fatal(err)
		}
	})
	reconciles.WaitIdle(t, "scheduledpodautoscaler")
	if after := reconciles.Reconciled("scheduledpodautoscaler"); after != before+1 {
		t.Errorf("creating and changing 10 HPAs without an autoscaler, then a fence, cost %d reconciles, want 1 (the fence's)", after-before)
	}
}
