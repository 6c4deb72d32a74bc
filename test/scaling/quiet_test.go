package scaling_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/test/testenv"
)

// quietStart is a Monday, 12:01 UTC. The Schedules that populate creates have no boundary
// between 12:00 and 12:30 UTC that day, and windows of two of them are open.
var quietStart = time.Date(2030, 1, 14, 12, 1, 0, 0, time.UTC)

// populate creates n autoscalers with 5 Schedules each in ns: every Schedule type, several
// zones, open and closed windows, a suspended Schedule, partially specified behaviors that the
// API server completes with defaults, and (with invalid) one Schedule that cannot be
// evaluated. It creates them in parallel.
func populate(t testing.TB, ns string, n int, invalid bool) {
	t.Helper()
	c, err := client.New(restConfig(), client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	parallel(t, n, func(i int) error {
		for _, obj := range objectsOf(ns, i, invalid && i == 0) {
			if err := c.Create(context.Background(), obj); err != nil {
				return fmt.Errorf("create %s: %w", obj.GetName(), err)
			}
		}
		return nil
	})
}

func objectsOf(ns string, i int, invalid bool) []client.Object {
	name := fmt.Sprintf("app-%05d", i)
	spa := newAutoscaler(ns, name, 2, 10)
	if i%2 == 0 {
		spa.Spec.HorizontalPodAutoscalerSpec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{
			ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](120)},
		}
	}
	sched := func(suffix string, minReplicas, maxReplicas int32, spec autoscalingv1alpha1.ScheduleSpec) *autoscalingv1alpha1.Schedule {
		spec.ScaleTargetRef = autoscalingv1alpha1.ScaleTargetReference{Name: name}
		if minReplicas > 0 {
			spec.MinReplicas = ptr.To(minReplicas)
		}
		if maxReplicas > 0 {
			spec.MaxReplicas = ptr.To(maxReplicas)
		}
		return &autoscalingv1alpha1.Schedule{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-" + suffix}, Spec: spec}
	}
	office := sched("office", 3, 0, autoscalingv1alpha1.ScheduleSpec{Type: autoscalingv1alpha1.ScheduleTypeDaily, StartTime: "09:00", EndTime: "17:00", TimeZone: "UTC"})
	week := sched("week", 0, 30, autoscalingv1alpha1.ScheduleSpec{
		Type: autoscalingv1alpha1.ScheduleTypeWeekly, StartDayOfWeek: "Monday", StartTime: "06:00", EndDayOfWeek: "Wednesday", EndTime: "06:00", TimeZone: "America/New_York",
	})
	cron := sched("cron", 8, 40, autoscalingv1alpha1.ScheduleSpec{Type: autoscalingv1alpha1.ScheduleTypeCron, Schedule: "30 */6 * * *", Duration: "2h", TimeZone: "UTC"})
	launch := sched("launch", 15, 50, autoscalingv1alpha1.ScheduleSpec{
		Type: autoscalingv1alpha1.ScheduleTypeOneShot, StartTime: "2030-01-20T10:00", EndTime: "2030-01-20T12:00", TimeZone: "Asia/Tokyo",
	})
	night := sched("night", 1, 0, autoscalingv1alpha1.ScheduleSpec{Type: autoscalingv1alpha1.ScheduleTypeDaily, StartTime: "22:00", EndTime: "02:00", TimeZone: "Europe/Berlin"})
	night.Spec.Suspend = i%3 == 0
	if invalid {
		night.Spec.TimeZone = "Europe/Atlantis"
	}
	return []client.Object{spa, office, week, cron, launch, night}
}

// converged is a condition for eventually: every autoscaler and Schedule in ns has a status
// for its generation, and every autoscaler's HPA has the bounds its status reports.
func converged(ns string, n int) func() error {
	return func() error {
		ctx := context.Background()
		spas := &autoscalingv1alpha1.ScheduledPodAutoscalerList{}
		if err := env.Client.List(ctx, spas, client.InNamespace(ns)); err != nil {
			return err
		}
		hpas := &autoscalingv2.HorizontalPodAutoscalerList{}
		if err := env.Client.List(ctx, hpas, client.InNamespace(ns)); err != nil {
			return err
		}
		bounds := map[string][2]int32{}
		for _, h := range hpas.Items {
			bounds[h.Name] = [2]int32{ptr.Deref(h.Spec.MinReplicas, 0), h.Spec.MaxReplicas}
		}
		done := 0
		for _, spa := range spas.Items {
			ready := meta.FindStatusCondition(spa.Status.Conditions, autoscalingv1alpha1.ConditionReady)
			if spa.Status.ObservedGeneration == spa.Generation && ready != nil && ready.Status == metav1.ConditionTrue &&
				bounds[spa.Name] == [2]int32{ptr.Deref(spa.Status.MinReplicas, 0), spa.Status.MaxReplicas} {
				done++
			}
		}
		if done < n {
			return fmt.Errorf("%d of %d autoscalers converged", done, n)
		}
		schedules := &autoscalingv1alpha1.ScheduleList{}
		if err := env.Client.List(ctx, schedules, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, s := range schedules.Items {
			if s.Status.ObservedGeneration != s.Generation || s.Status.Phase == "" {
				return fmt.Errorf("Schedule %s has no status for generation %d yet", s.Name, s.Generation)
			}
		}
		return nil
	}
}

// TestNothingIsWrittenBetweenBoundaries is the proof that almanac writes nothing while no
// boundary passes: after 20 autoscalers × 5 Schedules converged, the manager is restarted
// (a cold start: every object re-listed and reconciled) and left running for a quiet period
// without a boundary; a watch of every kind almanac writes (HPAs, autoscalers, Schedules,
// Events of both APIs) from the current resourceVersion must see no write at all.
//
// It does not run in parallel, so that its reconcile counts are its own.
func TestNothingIsWrittenBetweenBoundaries(t *testing.T) {
	const n = 20
	ns := newNamespace(t)
	clk := newOffsetClock(quietStart)
	populate(t, ns, n, true)
	stop := startManager(t, clk, ns)
	eventually(t, 30*time.Second, converged(ns, n))
	time.Sleep(time.Second) // let the event broadcaster flush
	stop()

	writes := watchWrites(t, clk, ns)
	reconciles := testenv.NewReconciles()
	startManagerOpts(t, clk, managerOpts{reconciles: reconciles}, ns)
	// The fence: the restarted manager has reconciled every autoscaler and Schedule, its
	// queues are idle, and nothing is due before the next boundary (12:30), by the queues' own
	// record; then every watch has delivered what was written. (An event comes only with a
	// status that changed, which the watches see.)
	eventually(t, 30*time.Second, func() error {
		for i := range n {
			for _, obj := range objectsOf(ns, i, false) {
				c := "schedule"
				if _, ok := obj.(*autoscalingv1alpha1.ScheduledPodAutoscaler); ok {
					c = "scheduledpodautoscaler"
				}
				if reconciles.Done(c, client.ObjectKeyFromObject(obj)) == 0 {
					return fmt.Errorf("%s %s not reconciled yet by the restarted manager", c, obj.GetName())
				}
			}
		}
		return nil
	})
	boundary := quietStart.Add(29 * time.Minute)
	for _, c := range []string{"scheduledpodautoscaler", "schedule"} {
		reconciles.WaitIdle(t, c)
		if next, key, ok := reconciles.NextWake(c); ok {
			if at := clk.Now().Add(time.Until(next)); at.Before(boundary) {
				t.Errorf("%s %s is due to be reconciled again at %s, before the next boundary %s", c, key, at.Format(time.TimeOnly), boundary.Format(time.TimeOnly))
			}
		}
	}
	if got := reconciles.Reconciled("scheduledpodautoscaler") + reconciles.Reconciled("schedule"); got < 6*n {
		t.Fatalf("the restarted manager reconciled %d times, want at least %d (every autoscaler and Schedule)", got, 6*n)
	}
	first := objectsOf(ns, 0, false)
	hpa, err := getHPA(ns, first[0].GetName())
	if err != nil {
		t.Fatal(err)
	}
	mine := writes.fence(t, ns, first[0], first[1], hpa)
	if w := notMine(writes.all(), mine); len(w) > 0 {
		t.Errorf("%d writes while no boundary passed:\n%s", len(w), joinWrites(w))
	}
}
