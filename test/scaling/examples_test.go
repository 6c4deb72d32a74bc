package scaling_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/commands/manifest"
	"github.com/almanac-dev/almanac/reconcilers/base"
	"github.com/almanac-dev/almanac/reconcilers/scheduledpodautoscaler"
	"github.com/almanac-dev/almanac/test/testenv"
)

// TestMigratedExamples applies examples/scheduledpodautoscaler.yaml and examples/schedule.yaml
// (scheduled-pod-autoscaler's README sample as `almanac migrate` converts it, beside three
// almanac Schedules) and checks, at chosen instants of a fake clock, what scheduled-pod-autoscaler
// documented: its Weekly Monday-Wednesday 11:50-13:00 is that daily window on each of the three
// days (active on Tuesday at noon, not on Tuesday at 03:27 nor on Thursday); outside every
// window the baseline applies; overlapping Schedules give the largest minReplicas and the largest
// maxReplicas; each Schedule is read in its own time zone.
//
// The reconciler is called directly with the fake clock (its client reads from a real
// manager's cache), and the HPA is read back from the API server.
func TestMigratedExamples(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	docs, err := manifest.Read([]string{
		filepath.Join(testenv.RepoRoot(), "examples", "scheduledpodautoscaler.yaml"),
		filepath.Join(testenv.RepoRoot(), "examples", "schedule.yaml"),
	}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		d.Object.SetNamespace(ns)
		if err := env.Client.Create(ctx, d.Object); err != nil {
			t.Fatalf("%s %s: %v", d.Object.GetKind(), d.Object.GetName(), err)
		}
	}

	mgr := newManager(t, ns)
	run(t, mgr)
	clk := clocktesting.NewFakeClock(time.Time{})
	r := &scheduledpodautoscaler.Reconciler{Base: base.Base{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Clock: clk, Recorder: mgr.GetEventRecorder("almanac")}}
	eventually(t, 10*time.Second, func() error {
		schedules := &autoscalingv1alpha1.ScheduleList{}
		err := mgr.GetClient().List(ctx, schedules, client.InNamespace(ns), client.MatchingFields{autoscalingv1alpha1.ScheduleTargetField: "nginx"})
		if err == nil && len(schedules.Items) != 4 {
			err = fmt.Errorf("the cache has %d Schedules of nginx, want 4", len(schedules.Items))
		}
		return err
	})

	const (
		push   = "nginx-push-notification" // Daily 11:50 – 13:00 Monday to Wednesday Asia/Tokyo, 10–20
		batch  = "nginx-nightly-batch"     // Daily 22:00 – 02:00 America/New_York, min 5
		month  = "nginx-month-start"       // Cron "0 9 1 * *" for 3h Europe/Berlin, 8–30
		launch = "nginx-launch"            // OneShot 2036-09-01 10:00 – 18:00 Asia/Tokyo, 15–40
	)
	for _, tt := range []struct {
		at       string
		min, max int32
		active   []string
		why      string
	}{
		{"2036-08-27T12:00:00Z", 3, 10, nil, "Wednesday 21:00 Tokyo, 08:00 New York, 14:00 Berlin: no window, the baseline"},
		{"2036-09-01T01:30:00Z", 15, 40, []string{launch}, "Monday 10:30 Tokyo: the launch window only (push opens at 11:50)"},
		{"2036-09-01T02:50:00Z", 15, 40, []string{launch, batch, push}, "Monday 11:50 Tokyo = Sunday 22:50 New York: three windows, largest min and max"},
		{"2036-09-01T07:30:00Z", 15, 40, []string{launch, month}, "Monday 16:30 Tokyo: push closed at 13:00; 09:30 in Berlin (CEST) on the 1st"},
		{"2036-09-01T09:30:00Z", 8, 30, []string{month}, "launch over: month-start alone"},
		{"2036-09-01T18:27:00Z", 3, 10, nil, "Tuesday 03:27 Tokyo: push is closed (one 49-hour Weekly window would be open)"},
		{"2036-09-02T03:00:00Z", 10, 20, []string{batch, push}, "Tuesday 12:00 Tokyo: push again; Monday 23:00 New York: min from push (10 > 5), max from push (20 > 10)"},
		{"2036-09-03T04:00:00Z", 5, 10, []string{batch}, "Wednesday 13:00 Tokyo: push closed; midnight in New York: batch's min, the baseline's max"},
		{"2036-09-03T06:00:00Z", 3, 10, nil, "02:00 New York (EDT): the nightly batch ends, the baseline returns"},
		{"2036-09-04T03:00:00Z", 5, 10, []string{batch}, "Thursday 12:00 Tokyo: push does not open on Thursdays; Wednesday 23:00 New York"},
		{"2036-12-01T02:59:00Z", 10, 20, []string{push}, "Monday 11:59 Tokyo; 21:59 New York on Sunday: batch opens at 22:00 EST, 03:00Z in winter"},
		{"2036-12-01T06:30:00Z", 5, 10, []string{batch}, "01:30 New York (EST, so 06:30Z, not 05:30Z); 15:30 Tokyo: push closed"},
		{"2036-12-01T07:30:00Z", 3, 10, nil, "08:30 Berlin (CET): month-start opens at 09:00 Berlin, 08:00Z in winter"},
		{"2036-12-01T08:30:00Z", 8, 30, []string{month}, "09:30 Berlin (CET)"},
	} {
		t.Run(tt.at, func(t *testing.T) {
			clk.SetTime(instant(t, tt.at))
			// The reconciler compares with its cache, as in a cluster, where the next
			// boundary is minutes away; here the next call comes at once, so let the
			// cache see the previous writes first.
			eventually(t, 5*time.Second, cacheCaughtUp(mgr.GetClient(), ns, "nginx"))
			if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "nginx"}}); err != nil {
				t.Fatal(err)
			}
			if err := hasBounds(ns, "nginx", tt.min, tt.max)(); err != nil {
				t.Errorf("%s: %v", tt.why, err)
			}
			slices.Sort(tt.active)
			eventually(t, 5*time.Second, func() error {
				spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
				if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nginx"}, spa); err != nil {
					return err
				}
				if !slices.Equal(spa.Status.ActiveSchedules, tt.active) || ptr.Deref(spa.Status.MinReplicas, 0) != tt.min || spa.Status.MaxReplicas != tt.max {
					return fmt.Errorf("%s: status has %d-%d %v, want %d-%d %v", tt.why,
						ptr.Deref(spa.Status.MinReplicas, 0), spa.Status.MaxReplicas, spa.Status.ActiveSchedules, tt.min, tt.max, tt.active)
				}
				return nil
			})
		})
	}
}

// cacheCaughtUp is a condition for eventually: the cache has the latest HPA and autoscaler.
func cacheCaughtUp(cached client.Reader, ns, name string) func() error {
	return func() error {
		for _, pair := range [][2]client.Object{
			{&autoscalingv2.HorizontalPodAutoscaler{}, &autoscalingv2.HorizontalPodAutoscaler{}},
			{&autoscalingv1alpha1.ScheduledPodAutoscaler{}, &autoscalingv1alpha1.ScheduledPodAutoscaler{}},
		} {
			key := client.ObjectKey{Namespace: ns, Name: name}
			if err := env.Client.Get(context.Background(), key, pair[0]); client.IgnoreNotFound(err) != nil {
				return err
			}
			if err := cached.Get(context.Background(), key, pair[1]); client.IgnoreNotFound(err) != nil {
				return err
			}
			if pair[0].GetResourceVersion() != pair[1].GetResourceVersion() {
				return fmt.Errorf("the cache has %T %s at resourceVersion %q, the API server at %q", pair[0], name, pair[1].GetResourceVersion(), pair[0].GetResourceVersion())
			}
		}
		return nil
	}
}

func instant(t testing.TB, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return at.UTC()
}
