package webhooks_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestDryRunEveryKind checks, for each kind, that a server-side dry-run create goes through
// the mutating webhook (the answer is normalized) and the validating webhook (an invalid
// object is refused by it), and that neither persists anything.
func TestDryRunEveryKind(t *testing.T) {
	ns := newNamespace(t)
	tests := []struct {
		name       string
		manifest   string
		normalized map[string]any // field path → value in the dry run's answer
		warning    string         // a prefix of the first warning; "" for none
		breakFrom  string         // replacing this...
		breakTo    string         // ...with this makes the object invalid
		wantCause  string         // the field of the validating webhook's cause
	}{{
		name: "Schedule",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: dry}
spec: {scaleTargetRef: {name: web}, minReplicas: 2, type: Cron, schedule: "0  9 * * mon-fri", duration: 90m, timeZone: hst}`,
		normalized: map[string]any{"spec.timeZone": "HST", "spec.schedule": "0 9 * * mon-fri", "spec.scaleTargetRef.kind": "ScheduledPodAutoscaler"},
		warning:    "spec.timeZone: HST is a fixed UTC-10:00 offset",
		breakFrom:  "hst}", breakTo: "Pacific/Honolul}", wantCause: "spec.timeZone",
	}, {
		name: "ScheduledJob",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: dry}
spec:
  schedule: "2036-03-21T13:53:00+01:00"
  timeZone: europe/berlin` + jobTemplate,
		normalized: map[string]any{"spec.at": "2036-03-21T13:53", "spec.schedule": nil, "spec.timeZone": "Europe/Berlin", "spec.startingDeadlineSeconds": int64(600)},
		warning:    `spec.schedule: "2036-03-21T13:53:00+01:00" is a date and time, not a cron schedule`,
		breakFrom:  "2036-03-21T13:53:00+01:00", breakTo: "2020-03-21T13:53:00+01:00", wantCause: "spec.at",
	}, {
		name: "EventJob",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: dry}
spec:
  trigger: {kind: ScheduledJob, name: nightly}` + jobTemplate,
		normalized: map[string]any{"spec.trigger.apiVersion": "batch.almanac.dev/v1alpha1", "spec.trigger.type": "Complete"},
		warning:    `spec.trigger.name: ScheduledJob "nightly" does not exist`,
		breakFrom:  "kind: ScheduledJob, name: nightly", breakTo: "kind: EventJob, name: dry", wantCause: "spec.trigger.name",
	}, {
		name: "ScheduledPodAutoscaler",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: dry}
spec: {horizontalPodAutoscalerSpec: {scaleTargetRef: {kind: Deployment, name: web}, maxReplicas: 10}}`,
		normalized: map[string]any{"spec.horizontalPodAutoscalerSpec.scaleTargetRef.apiVersion": "apps/v1", "spec.horizontalPodAutoscalerSpec.minReplicas": int64(1)},
		breakFrom:  "kind: Deployment, name: web", breakTo: "kind: Rollout, name: web", wantCause: "spec.horizontalPodAutoscalerSpec.scaleTargetRef.apiVersion",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, warnings, err := create(t, ns, tt.manifest, client.DryRunAll)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]any{}
			for path := range tt.normalized {
				got[path] = fieldOf(obj, path)
			}
			if diff := cmp.Diff(tt.normalized, got); diff != "" {
				t.Errorf("the dry run's answer (-want +got):\n%s", diff)
			}
			if tt.warning == "" && len(warnings) > 0 || tt.warning != "" && (len(warnings) == 0 || !strings.HasPrefix(warnings[0], tt.warning)) {
				t.Errorf("warnings = %q, want the first to start with %q", warnings, tt.warning)
			}
			assertNotFound(t, obj)

			bad, _, err := create(t, ns, strings.Replace(tt.manifest, tt.breakFrom, tt.breakTo, 1), client.DryRunAll)
			if err == nil || !strings.Contains(err.Error(), `admission webhook "v`) {
				t.Fatalf("the dry run of an invalid %s: want a rejection by the validating webhook, got %v", tt.name, err)
			}
			if cs := causes(t, err); len(cs) == 0 || cs[0].Field != tt.wantCause {
				t.Errorf("causes %+v, want one for %s", cs, tt.wantCause)
			}
			assertNotFound(t, bad)
		})
	}
}
