package webhooks

import (
	"context"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

	apiadmission "github.com/almanac-dev/almanac/api/admission"
	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
)

// BenchmarkMutateSchedule is the mutating webhook's own work for the admission figure of
// test/bench: the Schedule as a user writes it (days and zone to normalize) and as stored
// (nothing to change), after the API server's schema defaults.
func BenchmarkMutateSchedule(b *testing.B) {
	m := &mutator{rules: apiadmission.RulesFor(autoscalingv1alpha1.GroupVersion.WithKind("Schedule"))}
	for _, bm := range []struct{ name, obj string }{{
		name: "normalize",
		obj: `{"apiVersion":"autoscaling.almanac.dev/v1alpha1","kind":"Schedule","metadata":{"name":"sunday","namespace":"ns","creationTimestamp":null},` +
			`"spec":{"scaleTargetRef":{"apiVersion":"autoscaling.almanac.dev/v1alpha1","kind":"ScheduledPodAutoscaler","name":"web"},"minReplicas":3,"type":"Weekly",` +
			`"startDayOfWeek":"sun","startTime":"10:00","endDayOfWeek":"sun","endTime":"11:00","timeZone":"europe/berlin"}}`,
	}, {
		name: "canonical",
		obj: `{"apiVersion":"autoscaling.almanac.dev/v1alpha1","kind":"Schedule","metadata":{"name":"sunday","namespace":"ns","creationTimestamp":null},` +
			`"spec":{"scaleTargetRef":{"apiVersion":"autoscaling.almanac.dev/v1alpha1","kind":"ScheduledPodAutoscaler","name":"web"},"minReplicas":3,"type":"Weekly",` +
			`"startDayOfWeek":"Sunday","startTime":"10:00","endDayOfWeek":"Sunday","endTime":"11:00","timeZone":"Europe/Berlin"}}`,
	}} {
		b.Run(bm.name, func(b *testing.B) {
			req := request(admissionv1.Create, bm.obj, "")
			b.ReportAllocs()
			for b.Loop() {
				if resp := m.Handle(context.Background(), req); !resp.Allowed {
					b.Fatal(resp.Result)
				}
			}
		})
	}
}
