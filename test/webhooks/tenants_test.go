package webhooks_test

import (
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// TestTouchingWindowsAreAnsweredInTime is what a tenant with only edit rights in one namespace
// can send to the webhooks that every namespace shares (failurePolicy Fail, 5 s timeout):
// dozens of Cron Schedules of one autoscaler whose one-minute windows touch, created one by
// one, under both overlap policies. Before admission had a work budget, a Schedule that opens
// every other minute was compared with each sibling by walking a year of intervals (about
// 155 ms a pair), so the creates got slower with every sibling until they timed out, and the
// webhook worked on after the API server had given up.
//
// Now each create is answered: the Schedules that open every other minute are refused on
// spec.schedule, with the limit and the fix, before any comparison; those that open once an
// hour (the limit) touch without overlapping and are admitted under both policies. No create
// fails any other way (a webhook timeout would).
func TestTouchingWindowsAreAnsweredInTime(t *testing.T) {
	for _, policy := range []string{"Max", "Forbid"} {
		t.Run(policy, func(t *testing.T) {
			ns := newNamespace(t)
			mustCreate(t, ns, fmt.Sprintf(`
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: web}
spec:
  overlapPolicy: %s
  horizontalPodAutoscalerSpec: {scaleTargetRef: {kind: Deployment, name: web}, maxReplicas: 10}`, policy))
			const dozens = 40
			for i := range dozens {
				// Even and odd minutes, in alternation (each touches the other kind), and hourly
				// windows at minutes 0 to 39 (each touches the next).
				dense := fmt.Sprintf("%d-59/2 * * * *", i%2)
				hourly := fmt.Sprintf("%d * * * *", i)
				for _, c := range []struct {
					name, schedule string
					admitted       bool
				}{{fmt.Sprintf("dense-%02d", i), dense, false}, {fmt.Sprintf("hourly-%02d", i), hourly, true}} {
					obj, _, err := create(t, ns, fmt.Sprintf(`
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: %s}
spec: {scaleTargetRef: {name: web}, type: Cron, schedule: %q, duration: 1m, minReplicas: 3}`, c.name, c.schedule))
					switch {
					case c.admitted && err != nil:
						t.Fatalf("create %s (%q): %v", c.name, c.schedule, err)
					case c.admitted:
						waitCached(t, obj)
					case err == nil:
						t.Fatalf("create %s (%q): admitted; want it refused for opening too many windows", c.name, c.schedule)
					case !apierrors.IsInvalid(err):
						t.Fatalf("create %s (%q): %v; want a 422 that names spec.schedule", c.name, c.schedule, err)
					default:
						got := causes(t, err)
						if len(got) != 1 || got[0].Field != "spec.schedule" ||
							!strings.Contains(got[0].Message, "opens more than 8784 separate windows in the next 366 days, and a Schedule may open at most 8784") {
							t.Fatalf("create %s (%q): causes %+v; want one on spec.schedule that names the limit", c.name, c.schedule, got)
						}
					}
				}
			}
		})
	}
}
