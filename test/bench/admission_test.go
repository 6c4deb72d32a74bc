package bench_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
)

// siblings is the number of Schedules the new one is checked against under Forbid: with it,
// the autoscaler has the most Schedules it may have.
const siblings = autoscalingv1alpha1.MaxSchedules - 1

// normalizeSunday is the JSON patch with which almanac's mutating webhook answers the create
// of the figure's Schedule as a user writes it (startDayOfWeek and endDayOfWeek "sun",
// timeZone "europe/berlin"), and the patching no-op pair too.
var normalizeSunday = []byte(`[{"op":"replace","path":"/spec/endDayOfWeek","value":"Sunday"},` +
	`{"op":"replace","path":"/spec/startDayOfWeek","value":"Sunday"},{"op":"replace","path":"/spec/timeZone","value":"Europe/Berlin"}]`)

// admissionResult is what the admission figure measured.
type admissionResult struct {
	Samples int
	// With and Without: server-side dry-run creates of the same Schedule through the API
	// server, in a namespace where almanac's webhooks are in the path and in one where they
	// are not. Noop: in a namespace where a pair of webhooks that admit everything unchanged
	// is in the path instead (startNoopWebhooks), the floor of what webhooks add. Patching:
	// where the pair in the path answers with the patch that almanac's mutating webhook
	// answers with, the floor of what webhooks that normalize the Schedule add.
	With, Without, Noop, Patching dist
	CPU                           cpuUse
	Profile                       string
}

// BenchmarkAdmission: ALMANAC_BENCH_ADMISSION_N creates (500) with and as many without the
// webhooks, interleaved.
func BenchmarkAdmission(b *testing.B) {
	n := size(b, "ALMANAC_BENCH_ADMISSION_N", 500)
	m := startManager(b, "admission")
	for range b.N {
		res := admission(b, m, n)
		b.ReportMetric(float64((res.With.P50-res.Without.P50).Microseconds())/1000, "added-p50-ms")
		b.ReportMetric(float64((res.With.P99-res.Without.P99).Microseconds())/1000, "added-p99-ms")
		b.ReportMetric(float64((res.Noop.P50-res.Without.P50).Microseconds())/1000, "noop-added-p50-ms")
		b.ReportMetric(float64((res.Noop.P99-res.Without.P99).Microseconds())/1000, "noop-added-p99-ms")
		b.ReportMetric(float64((res.Patching.P50-res.Without.P50).Microseconds())/1000, "patching-added-p50-ms")
		b.ReportMetric(float64((res.Patching.P99-res.Without.P99).Microseconds())/1000, "patching-added-p99-ms")
		res.report()
	}
}

func (res admissionResult) report() {
	figure := fmt.Sprintf("admission: create a Schedule, autoscaler with overlapPolicy Forbid and %d other Schedules", siblings)
	p50, p99 := res.With.P50-res.Without.P50, res.With.P99-res.Without.P99
	table.add(row{
		Figure:  figure,
		Almanac: "with the webhooks: " + res.With.String(),
		Other: "without: " + res.Without.String() + "; with two no-op webhooks: " + res.Noop.String() +
			"; with two no-op webhooks, the mutating one answering with almanac's patch: " + res.Patching.String(),
		Ratio: fmt.Sprintf("adds p50 %s, p99 %s; the no-op pair adds %s / %s, the patching one %s / %s",
			ms(p50), ms(p99), ms(res.Noop.P50-res.Without.P50), ms(res.Noop.P99-res.Without.P99),
			ms(res.Patching.P50-res.Without.P50), ms(res.Patching.P99-res.Without.P99)),
		Goal: "adds ≤ 1 ms at p50, ≤ 3 ms at p99",
		Met:  yes(p50 <= time.Millisecond && p99 <= 3*time.Millisecond),
	})
	table.note(figure, "server-side dry-run creates, with almanac's webhooks, without webhooks and with each no-op pair interleaved; CPU: %s; profile %s", res.CPU, res.Profile)
}

// admission measures what the webhooks add to creating a Schedule through the API server:
// the same create (a server-side dry run, so that the measure is admission and not etcd's
// disk) in a namespace where the API server calls almanac's mutating and validating
// webhooks, in one where it calls none, and in one for each pair of no-op webhooks
// (startNoopWebhooks), one after the other. The validating webhook checks the new Schedule
// against the 99 others of its autoscaler over the next 366 days (overlapPolicy Forbid): the
// most Schedules an autoscaler may have.
func admission(tb testing.TB, m *manager, samples int) admissionResult {
	tb.Helper()
	ctx := context.Background()
	noops := startNoopWebhooks(tb, normalizeSunday)
	with, without := newNamespace(tb, "admission", false), newNamespace(tb, "admission-plain", true)
	noop, patching := newNamespace(tb, "admission-noop", true, noopWebhooksLabel), newNamespace(tb, "admission-patching", true, patchingWebhooksLabel)
	namespaces := []string{with, without, noop, patching}
	for _, ns := range namespaces {
		cleanup(tb, ns)
	}
	c := newClient(tb, harnessConfig())
	monday := time.Date(2027, time.January, 18, 0, 0, 0, 0, time.UTC)
	for _, ns := range namespaces {
		spa := newAutoscaler(ns, "web")
		spa.Spec.OverlapPolicy = autoscalingv1alpha1.OverlapPolicyForbid
		if err := c.Create(ctx, spa); err != nil {
			tb.Fatal(err)
		}
		if err := parallel(16, siblings, func(i int) error {
			start, end := monday.Add(time.Duration(i)*time.Hour), monday.Add(time.Duration(i+1)*time.Hour)
			return c.Create(ctx, &autoscalingv1alpha1.Schedule{
				ObjectMeta: objectMeta(ns, fmt.Sprintf("sibling-%03d", i)),
				Spec: autoscalingv1alpha1.ScheduleSpec{
					ScaleTargetRef: autoscalingv1alpha1.ScaleTargetReference{Name: "web"},
					MinReplicas:    ptr.To[int32](2),
					Type:           autoscalingv1alpha1.ScheduleTypeWeekly,
					StartDayOfWeek: start.Weekday().String(), StartTime: start.Format("15:04"),
					EndDayOfWeek: end.Weekday().String(), EndTime: end.Format("15:04"),
					TimeZone: "Europe/Berlin",
				},
			})
		}); err != nil {
			tb.Fatal(err)
		}
	}
	// Sunday 10:00 to 11:00 is free: the siblings fill Monday 00:00 to Friday 04:00. With
	// almanac's webhooks and with the patching pair, as a user writes it (the mutating webhook
	// normalizes it: normalizeSunday); without and with the no-op pair, as stored.
	sunday := func(ns string, canonical bool) *autoscalingv1alpha1.Schedule {
		s := &autoscalingv1alpha1.Schedule{
			ObjectMeta: objectMeta(ns, "sunday"),
			Spec: autoscalingv1alpha1.ScheduleSpec{
				ScaleTargetRef: autoscalingv1alpha1.ScaleTargetReference{Name: "web"},
				MinReplicas:    ptr.To[int32](3),
				Type:           autoscalingv1alpha1.ScheduleTypeWeekly,
				StartDayOfWeek: "sun", StartTime: "10:00", EndDayOfWeek: "sun", EndTime: "11:00",
				TimeZone: "europe/berlin",
			},
		}
		if canonical {
			s.Spec.StartDayOfWeek, s.Spec.EndDayOfWeek, s.Spec.TimeZone = "Sunday", "Sunday", "Europe/Berlin"
		}
		return s
	}
	// The webhooks' cache has every sibling once a Schedule overlapping the last one is
	// refused.
	last := monday.Add(time.Duration(siblings-1) * time.Hour)
	lastName := fmt.Sprintf("sibling-%03d", siblings-1)
	eventually(tb, time.Minute, 100*time.Millisecond, func() error {
		s := sunday(with, false)
		s.Name, s.Spec.StartDayOfWeek, s.Spec.EndDayOfWeek = "probe", last.Weekday().String(), last.Weekday().String()
		s.Spec.StartTime, s.Spec.EndTime = last.Add(30*time.Minute).Format("15:04"), last.Add(45*time.Minute).Format("15:04")
		s.Spec.TimeZone = "Europe/Berlin"
		err := c.Create(ctx, s, client.DryRunAll)
		switch {
		case err == nil:
			return fmt.Errorf("a Schedule that overlaps %s was admitted: the webhooks' cache has not caught up", lastName)
		case apierrors.IsInvalid(err) && strings.Contains(err.Error(), lastName):
			return nil
		default:
			return err
		}
	})
	// The reconcilers settle the siblings of all namespaces (phases, overlap conditions)
	// before the measure, which their CPU would otherwise share.
	for _, ns := range namespaces {
		rec := record(tb, ns, false, "ScheduledPodAutoscaler", "Schedule", "Event")
		if _, err := rec.quiet(time.Second, time.Minute); err != nil {
			tb.Fatal(err)
		}
	}
	normalized := func(ns string) bool { return ns == with || ns == patching }
	isCanonical := func(s *autoscalingv1alpha1.Schedule) error {
		if got, want := [3]string{s.Spec.StartDayOfWeek, s.Spec.EndDayOfWeek, s.Spec.TimeZone}, [3]string{"Sunday", "Sunday", "Europe/Berlin"}; got != want {
			return fmt.Errorf("the Schedule to measure is stored with days and zone %q, not %q", got, want)
		}
		return nil
	}
	for _, ns := range []string{with, without} {
		s := sunday(ns, !normalized(ns))
		if err := c.Create(ctx, s, client.DryRunAll); err != nil {
			tb.Fatalf("the Schedule to measure is refused in %s: %v", ns, err)
		}
		if err := isCanonical(s); err != nil {
			tb.Fatalf("in %s: %v", ns, err)
		}
	}
	// The API server calls the no-op webhooks once its informer has their configurations.
	eventually(tb, time.Minute, 100*time.Millisecond, func() error {
		for _, ns := range []string{noop, patching} {
			before, err := noops.answered()
			if err != nil {
				return err
			}
			s := sunday(ns, !normalized(ns))
			if err := c.Create(ctx, s, client.DryRunAll); err != nil {
				return err
			}
			after, err := noops.answered()
			if err != nil {
				return err
			}
			if after < before+2 {
				return fmt.Errorf("the API server does not call the no-op webhooks of %s yet", ns)
			}
			// The patching pair makes of it what almanac's webhooks make of it.
			if err := isCanonical(s); err != nil {
				return fmt.Errorf("in %s: %w", ns, err)
			}
		}
		return nil
	})

	procs := pids(m, nil)
	procs["no-op webhooks"] = noops.pid
	wait := m.profile(tb, "admission", time.Duration(samples)*20*time.Millisecond+time.Second)
	before := cpuNow(procs)
	var a, b, f, p []time.Duration
	create := func(ns string) time.Duration {
		s := sunday(ns, !normalized(ns))
		start := time.Now()
		if err := c.Create(ctx, s, client.DryRunAll); err != nil {
			tb.Fatalf("dry-run create in %s: %v", ns, err)
		}
		return time.Since(start)
	}
	// Each round creates in every namespace, starting with a different one each time.
	order := []struct {
		ns  string
		out *[]time.Duration
	}{{with, &a}, {without, &b}, {noop, &f}, {patching, &p}}
	for i := range samples {
		for j := range order {
			o := order[(i+j)%len(order)]
			*o.out = append(*o.out, create(o.ns))
		}
	}
	res := admissionResult{Samples: samples, With: summarize(a), Without: summarize(b), Noop: summarize(f), Patching: summarize(p), CPU: cpuNow(procs).since(before)}
	res.Profile = wait()
	return res
}
