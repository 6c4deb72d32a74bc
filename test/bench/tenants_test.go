package bench_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
)

// A tenant shape is a set of Cron Schedules of one autoscaler, each with a one-minute window,
// whose boundaries fall on the minutes after the set is created.
type tenantShape struct {
	name string
	// schedule is the cron schedule of the i-th Schedule, whose window first opens at first
	// (a minute's turn, UTC).
	schedule func(i int, first time.Time) string
	// refused: admission refuses each of them (they open too many windows).
	refused bool
}

var (
	// dailyShape is the ordinary set: each opens once a day, at consecutive minutes, so each
	// touches the next.
	dailyShape = tenantShape{name: "daily", schedule: func(i int, first time.Time) string {
		t := first.Add(time.Duration(i) * time.Minute)
		return fmt.Sprintf("%d %d * * *", t.Minute(), t.Hour())
	}}
	// hourlyShape opens every hour (timing.MaxWindows in a year, the limit), at consecutive
	// minutes.
	hourlyShape = tenantShape{name: "hourly", schedule: func(i int, first time.Time) string {
		return fmt.Sprintf("%d * * * *", first.Add(time.Duration(i)*time.Minute).Minute())
	}}
	// denseShape opens every other minute, on even and odd minutes in alternation: each
	// touches the other kind (before the work budget, about 155 ms a comparison).
	denseShape = tenantShape{name: "every other minute", refused: true, schedule: func(i int, _ time.Time) string {
		return fmt.Sprintf("%d-59/2 * * * *", i%2)
	}}
)

// tenantsResult is what the tenants figure measured.
type tenantsResult struct {
	// N is the number of Schedules of each shape.
	N int
	// Admission: the create of each Schedule of a shape, one by one, under a policy
	// (shape/policy → latencies, admitted or refused).
	Admission map[string]dist
	// CPU: the manager's CPU while a shape's Schedules are stored under overlapPolicy Forbid,
	// in the 2 s from each boundary and in the rest of each minute, per minute.
	CPU map[string]tenantCPU
}

type tenantCPU struct {
	Minutes             int
	AtBoundary, Between time.Duration // per minute
}

func (c tenantCPU) String() string {
	if c.Minutes == 0 {
		return "not measured"
	}
	return fmt.Sprintf("%s in the 2 s from each boundary, %s in the other 58 s (per minute, %d minutes)", ms(c.AtBoundary), ms(c.Between), c.Minutes)
}

// BenchmarkTenants: the shapes of Schedules a tenant with edit rights can send, next to an
// ordinary set, in one run: admission latency of each create, and the manager's CPU at and
// between boundaries while they are stored (ALMANAC_BENCH_TENANTS_N Schedules a shape, 40;
// ALMANAC_BENCH_TENANTS_MINUTES boundaries measured, 2), then the same with the memo of
// overlaps off (a manager started with --overlap-memo=false).
func BenchmarkTenants(b *testing.B) {
	n := size(b, "ALMANAC_BENCH_TENANTS_N", 40)
	minutes := size(b, "ALMANAC_BENCH_TENANTS_MINUTES", 2)
	for range b.N {
		tenants(b, n, minutes).report()
	}
}

// The keys of tenantsResult.CPU.
const (
	cpuDaily        = "daily"
	cpuHourly       = "hourly"
	cpuHourlyNoMemo = "hourly, memo of overlaps off"
	cpuStored       = "every other minute and hourly, stored past admission"
)

func (res tenantsResult) report() {
	n := res.N
	for _, policy := range []string{"Forbid", "Max"} {
		figure := fmt.Sprintf("tenants: admission of %d touching Cron Schedules one by one, overlapPolicy %s", n, policy)
		daily := res.Admission[dailyShape.name+"/"+policy]
		table.add(row{
			Figure: figure,
			Almanac: fmt.Sprintf("hourly (admitted): %s; every other minute (refused): %s",
				res.Admission[hourlyShape.name+"/"+policy], res.Admission[denseShape.name+"/"+policy]),
			Other: "daily (admitted): " + daily.String(),
			Ratio: fmt.Sprintf("max %s and %s against %s", times(ratio(res.Admission[hourlyShape.name+"/"+policy].Max, daily.Max)),
				times(ratio(res.Admission[denseShape.name+"/"+policy].Max, daily.Max)), ms(daily.Max)),
			Goal: "each answered well within the 5 s webhook timeout",
			Met:  yes(max(res.Admission[hourlyShape.name+"/"+policy].Max, res.Admission[denseShape.name+"/"+policy].Max) < time.Second),
		})
	}
	daily := res.CPU[cpuDaily]
	for _, key := range []string{cpuHourly, cpuStored, cpuHourlyNoMemo} {
		c := res.CPU[key]
		table.add(row{
			Figure:  fmt.Sprintf("tenants: manager CPU, %d Schedules under overlapPolicy Forbid: %s", n, key),
			Almanac: c.String(),
			Other:   "daily: " + daily.String(),
			Ratio:   fmt.Sprintf("%s at the boundary, %s between", times(ratio(c.AtBoundary, daily.AtBoundary)), times(ratio(c.Between, daily.Between))),
			Goal:    "near idle between boundaries: ≤ 2× the ordinary set's CPU there",
			Met:     yes(c.Minutes > 0 && daily.Minutes > 0 && c.Between <= 2*daily.Between),
		})
	}
}

// tenants runs the figure: n Schedules of each shape, created one by one through the
// webhooks under each policy; then the manager's CPU with each shape stored under Forbid; then
// the hourly shape with a manager whose memo of overlaps is off. It starts (and stops) its own
// managers, so no other may run.
func tenants(tb testing.TB, n, minutes int) tenantsResult {
	tb.Helper()
	res := tenantsResult{N: n, Admission: map[string]dist{}, CPU: map[string]tenantCPU{}}
	m := startManager(tb, "tenants")
	for _, policy := range []autoscalingv1alpha1.OverlapPolicy{autoscalingv1alpha1.OverlapPolicyForbid, autoscalingv1alpha1.OverlapPolicyMax} {
		for _, shape := range []tenantShape{dailyShape, hourlyShape, denseShape} {
			res.Admission[shape.name+"/"+string(policy)] = tenantAdmission(tb, shape, policy, n)
		}
	}
	res.CPU[cpuDaily] = tenantCPUOf(tb, m, minutes, true, tenantSet{dailyShape, n})
	res.CPU[cpuHourly] = tenantCPUOf(tb, m, minutes, true, tenantSet{hourlyShape, n})
	// Past admission (a namespace the webhooks do not see): the dense ones are stored, older
	// than the hourly ones, and left out without a comparison.
	res.CPU[cpuStored] = tenantCPUOf(tb, m, minutes, false, tenantSet{denseShape, n}, tenantSet{hourlyShape, n})
	m.stop()

	off := startManager(tb, "tenants-no-memo", "--overlap-memo=false")
	res.CPU[cpuHourlyNoMemo] = tenantCPUOf(tb, off, minutes, true, tenantSet{hourlyShape, n})
	off.stop()
	return res
}

// tenantAdmission creates n Schedules of shape, one by one, for an autoscaler with policy,
// through almanac's webhooks, and returns how long each create took; it fails the benchmark
// when one is answered otherwise than the shape says (admitted, or refused on spec.schedule).
func tenantAdmission(tb testing.TB, shape tenantShape, policy autoscalingv1alpha1.OverlapPolicy, n int) dist {
	tb.Helper()
	ctx := context.Background()
	ns := newNamespace(tb, "tenants", false)
	cleanup(tb, ns)
	c := newClient(tb, harnessConfig())
	spa := newAutoscaler(ns, "web")
	spa.Spec.OverlapPolicy = policy
	if err := c.Create(ctx, spa); err != nil {
		tb.Fatal(err)
	}
	first := time.Now().UTC().Truncate(time.Minute).Add(2 * time.Minute)
	var took []time.Duration
	for i := range n {
		s := tenantSchedule(ns, shape, i, first)
		start := time.Now()
		err := c.Create(ctx, s)
		took = append(took, time.Since(start))
		switch {
		case !shape.refused && err != nil:
			tb.Fatalf("create %s (%q): %v", s.Name, s.Spec.Schedule, err)
		case shape.refused && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.schedule")):
			tb.Fatalf("create %s (%q): %v; want it refused on spec.schedule", s.Name, s.Spec.Schedule, err)
		}
	}
	return summarize(took)
}

func tenantSchedule(ns string, shape tenantShape, i int, first time.Time) *autoscalingv1alpha1.Schedule {
	return &autoscalingv1alpha1.Schedule{
		ObjectMeta: objectMeta(ns, fmt.Sprintf("%s-%03d", strings.ReplaceAll(shape.name, " ", "-"), i)),
		Spec: autoscalingv1alpha1.ScheduleSpec{
			ScaleTargetRef: autoscalingv1alpha1.ScaleTargetReference{Name: "web"},
			MinReplicas:    ptr.To(int32(2 + i%5)),
			Type:           autoscalingv1alpha1.ScheduleTypeCron, Schedule: shape.schedule(i, first), Duration: "1m", TimeZone: "UTC",
		},
	}
}

// tenantSet is n Schedules of a shape.
type tenantSet struct {
	shape tenantShape
	n     int
}

// tenantCPUOf stores the sets (in order of creation) for an autoscaler with overlapPolicy
// Forbid, through the webhooks or past them, waits until the manager has settled, and measures
// its CPU over the next `minutes` boundaries (a minute's turn each): in the 2 s from each, and
// in the other 58 s. With minutes 0 (the smoke test) it measures 2 s wherever they fall.
func tenantCPUOf(tb testing.TB, m *manager, minutes int, webhooks bool, sets ...tenantSet) tenantCPU {
	tb.Helper()
	ctx := context.Background()
	ns := newNamespace(tb, "tenants-cpu", !webhooks)
	c := newClient(tb, harnessConfig())
	spa := newAutoscaler(ns, "web")
	spa.Spec.OverlapPolicy = autoscalingv1alpha1.OverlapPolicyForbid
	if err := c.Create(ctx, spa); err != nil {
		tb.Fatal(err)
	}
	first := time.Now().UTC().Truncate(time.Minute).Add(time.Minute)
	for _, set := range sets {
		for i := range set.n {
			if err := c.Create(ctx, tenantSchedule(ns, set.shape, i, first)); err != nil {
				tb.Fatal(err)
			}
		}
	}
	rec := record(tb, ns, false, "ScheduledPodAutoscaler", "Schedule")
	if _, err := rec.quiet(time.Second, time.Minute); err != nil {
		tb.Fatal(err)
	}
	procs := map[string]int{"almanac": m.pid()}
	out := tenantCPU{Minutes: minutes}
	if minutes == 0 {
		before := cpuNow(procs)
		time.Sleep(2 * time.Second)
		out.Between = cpuNow(procs).since(before)["almanac"]
	}
	next := time.Now().UTC().Truncate(time.Minute).Add(time.Minute)
	for range minutes {
		sleepUntil(ctx, next)
		atBoundary := cpuNow(procs)
		sleepUntil(ctx, next.Add(2*time.Second))
		between := cpuNow(procs)
		out.AtBoundary += between.since(atBoundary)["almanac"]
		next = next.Add(time.Minute)
		sleepUntil(ctx, next.Add(-50*time.Millisecond))
		out.Between += cpuNow(procs).since(between)["almanac"]
	}
	if minutes > 0 {
		out.AtBoundary /= time.Duration(minutes)
		out.Between /= time.Duration(minutes)
	}
	if err := deleteAll(ctx, ns); err != nil {
		tb.Fatal(err)
	}
	return out
}
