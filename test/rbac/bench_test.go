package rbac_test

import (
	"context"
	"slices"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/almanac-dev/almanac/webhooks"
)

// BenchmarkPermissionCheck measures what the permission check costs:
//
//   - SubjectAccessReview: one review, created as the manager's ServiceAccount, as the
//     webhook does once per ScheduledJob or EventJob it checks (twice per
//     ScheduledPodAutoscaler);
//   - ScheduledJobDryRun: a server-side dry-run create of a ScheduledJob by a user bound to
//     edit, through the mutating and the validating webhook with its check.
//
// Each reports ns/op and the p50 and p99 latency.
func BenchmarkPermissionCheck(b *testing.B) {
	ns := namespace(b, "bench")
	bind(b, ns, "edit", userSubject("bench-user"))
	user := authenticationv1.UserInfo{Username: "bench-user", Groups: []string{"system:authenticated"}}
	waitAllowed(b, user, ns, "create", "batch", "jobs")

	b.Run("SubjectAccessReview", func(b *testing.B) {
		asManager := rest.CopyConfig(env.Config)
		asManager.Impersonate = rest.ImpersonationConfig{UserName: managerSA, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + releaseNS, "system:authenticated"}}
		c := newClient(b, asManager)
		var latencies []time.Duration
		for b.Loop() {
			sar := webhooks.SubjectAccessReview(user, ns, webhooks.Delegated{Verb: "create", Group: "batch", Version: "v1", Resource: "jobs", Kind: "Job"})
			start := time.Now()
			if err := c.Create(context.Background(), sar); err != nil {
				b.Fatal(err)
			}
			latencies = append(latencies, time.Since(start))
			if !sar.Status.Allowed {
				b.Fatal("not allowed")
			}
		}
		reportPercentiles(b, latencies)
	})
	b.Run("ScheduledJobDryRun", func(b *testing.B) {
		c := userClient(b, user.Username)
		var latencies []time.Duration
		for b.Loop() {
			sj := scheduledJob("nightly")
			start := time.Now()
			if err := create(c, ns, sj, client.DryRunAll); err != nil {
				b.Fatal(err)
			}
			latencies = append(latencies, time.Since(start))
		}
		reportPercentiles(b, latencies)
	})
}

func reportPercentiles(b *testing.B, latencies []time.Duration) {
	if len(latencies) == 0 {
		return
	}
	slices.Sort(latencies)
	at := func(p float64) time.Duration { return latencies[min(len(latencies)-1, int(p*float64(len(latencies))))] }
	b.ReportMetric(float64(at(0.50).Microseconds()), "p50-µs")
	b.ReportMetric(float64(at(0.99).Microseconds()), "p99-µs")
}
