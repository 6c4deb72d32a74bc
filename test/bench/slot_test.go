package bench_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

// slotResult is what the slot burst measured.
type slotResult struct {
	N, Slots int
	// Almanac and CronJob: from each slot's instant to each Job seen on the watch.
	Almanac, CronJob dist
	// Peer is false when kube-controller-manager was not available.
	Peer    bool
	CPU     cpuUse
	Profile string
}

// BenchmarkSlotBurst: ALMANAC_BENCH_SLOT_N ScheduledJobs (20) and as many CronJobs run by
// kube-controller-manager, all on `* * * * *` in UTC, over ALMANAC_BENCH_SLOTS slots (2):
// whole minutes of the real clock.
func BenchmarkSlotBurst(b *testing.B) {
	n, slots := size(b, "ALMANAC_BENCH_SLOT_N", 20), size(b, "ALMANAC_BENCH_SLOTS", 2)
	m := startManager(b, "slot")
	for range b.N {
		res := slotBurst(b, m, n, slots, true)
		b.ReportMetric(float64(res.Almanac.P50.Microseconds())/1000, "almanac-p50-ms")
		b.ReportMetric(float64(res.Almanac.P99.Microseconds())/1000, "almanac-p99-ms")
		b.ReportMetric(float64(res.CronJob.P50.Microseconds())/1000, "cronjob-p50-ms")
		b.ReportMetric(float64(res.CronJob.P99.Microseconds())/1000, "cronjob-p99-ms")
		res.report()
	}
}

func (res slotResult) report() {
	figure := fmt.Sprintf("slot burst: %d ScheduledJobs and %d CronJobs × %d slots → Job seen", res.N, res.N, res.Slots)
	x := row{Figure: figure, Almanac: res.Almanac.String(), Goal: "p50 and p99 ≤ ⅓ of CronJob's"}
	if res.Peer {
		p50, p99 := ratio(res.Almanac.P50, res.CronJob.P50), ratio(res.Almanac.P99, res.CronJob.P99)
		x.Other = "CronJob (kube-controller-manager): " + res.CronJob.String()
		x.Ratio = fmt.Sprintf("p50 %s, p99 %s", times(p50), times(p99))
		x.Met = yes(p50 <= 1.0/3 && p99 <= 1.0/3)
	} else {
		x.Other = "kube-controller-manager missing: run hack/envtest.sh --with-kcm"
		x.Ratio = "n/a"
	}
	table.add(x)
	table.note(figure, "CPU from each slot until its Jobs were seen and the writes settled: %s; profile %s", res.CPU, res.Profile)
}

// slotBurst creates n ScheduledJobs and n CronJobs on the same schedule and measures, at
// each of `slots` slots, the time from the slot to each Job appearing on a watch. With cron
// false (the smoke test, which cannot wait for whole minutes), the ScheduledJobs are
// one-shots a few seconds ahead, `at` to the second, and no CronJob runs.
func slotBurst(tb testing.TB, m *manager, n, slots int, cron bool) slotResult {
	tb.Helper()
	ctx := context.Background()
	ns := newNamespace(tb, "slot", false)
	cleanup(tb, ns)
	c := newClient(tb, harnessConfig())
	res := slotResult{N: n, Slots: slots, CPU: cpuUse{}}
	var kcm *process
	if cron {
		kcm = startKCM(tb, "slot")
		res.Peer = kcm != nil
	} else {
		slots = 1
	}
	rec := record(tb, ns, true, "Job")

	// The first slot leaves time to create the objects and for both controllers to see them.
	first := time.Now().Add(2*time.Second + time.Duration(n)*50*time.Millisecond)
	if cron {
		first = first.Add(3 * time.Second).Truncate(time.Minute).Add(time.Minute)
	} else {
		first = first.Truncate(time.Second).Add(time.Second)
	}
	if err := parallel(16, n, func(i int) error {
		sj := &batchv1alpha1.ScheduledJob{
			ObjectMeta: objectMeta(ns, fmt.Sprintf("sj-%02d", i)),
			Spec: batchv1alpha1.ScheduledJobSpec{
				Schedule:  "* * * * *",
				TimeZone:  "UTC",
				JobPolicy: batchv1alpha1.JobPolicy{JobTemplate: jobTemplate()},
			},
		}
		if !cron {
			sj.Spec.Schedule, sj.Spec.At = "", first.UTC().Format("2006-01-02T15:04:05")
		}
		if err := c.Create(ctx, sj); err != nil {
			return err
		}
		if !res.Peer {
			return nil
		}
		return c.Create(ctx, &batchv1.CronJob{
			ObjectMeta: objectMeta(ns, fmt.Sprintf("cj-%02d", i)),
			Spec: batchv1.CronJobSpec{
				Schedule:    "* * * * *",
				TimeZone:    ptr.To("UTC"),
				JobTemplate: jobTemplate(),
			},
		})
	}); err != nil {
		tb.Fatal(err)
	}
	if time.Until(first) < time.Second {
		tb.Fatalf("creating the objects ended %s the first slot", until(first))
	}
	procs := pids(m, kcm)
	var almanac, peer []time.Duration
	var profiles []string
	for s := range slots {
		slot := first.Add(time.Duration(s) * time.Minute)
		sleepUntil(ctx, slot.Add(-time.Second))
		wait := m.profile(tb, fmt.Sprintf("slot-%d", s), 5*time.Second)
		sleepUntil(ctx, slot.Add(-20*time.Millisecond))
		before := cpuNow(procs)
		want := n
		if res.Peer {
			want = 2 * n
		}
		var a, p []time.Duration
		err := rec.waitFor(45*time.Second, slot.Add(-time.Second), func(evs []seen) error {
			a, p = a[:0], p[:0]
			for _, e := range evs {
				j, ok := e.Obj.(*batchv1.Job)
				if !ok || e.Type != "ADDED" {
					continue
				}
				kind, at := jobSlot(j)
				if !at.Equal(slot) {
					continue
				}
				switch kind {
				case "ScheduledJob":
					a = append(a, e.At.Sub(slot))
				case "CronJob":
					p = append(p, e.At.Sub(slot))
				}
			}
			if len(a)+len(p) < want {
				return fmt.Errorf("%d ScheduledJob and %d CronJob Jobs seen for the slot %s, want %d of each", len(a), len(p), slot.Format(time.RFC3339), n)
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
		almanac, peer = append(almanac, a...), append(peer, p...)
		if _, err := rec.quiet(500*time.Millisecond, 30*time.Second); err != nil {
			tb.Fatal(err)
		}
		res.CPU.add(cpuNow(procs).since(before))
		profiles = append(profiles, wait())
	}
	res.Almanac, res.CronJob = summarize(almanac), summarize(peer)
	res.Profile = fmt.Sprint(profiles)
	return res
}

// jobSlot returns the kind of a Job's controller and the slot it was created for: almanac's
// scheduled-time annotation, or the CronJob controller's scheduled-timestamp annotation.
func jobSlot(j *batchv1.Job) (string, time.Time) {
	ref := j.OwnerReferences
	if len(ref) == 0 {
		return "", time.Time{}
	}
	switch ref[0].Kind {
	case "ScheduledJob":
		t, _ := batchv1alpha1.ParseTime(j.Annotations[batchv1alpha1.AnnotationScheduledTime])
		return ref[0].Kind, t
	case "CronJob":
		t, _ := time.Parse(time.RFC3339, j.Annotations[batchv1.CronJobScheduledTimestampAnnotation])
		return ref[0].Kind, t
	}
	return "", time.Time{}
}
