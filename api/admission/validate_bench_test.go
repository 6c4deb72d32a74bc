package admission

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
)

// BenchmarkValidateScheduleForbid is the validating webhook's own work for the admission
// figure of test/bench: a new Weekly Schedule checked against the 100 one-hour Weekly
// siblings of an autoscaler with overlapPolicy Forbid, none of which it overlaps, from an
// in-memory lookup (no cache, no HTTP).
func BenchmarkValidateScheduleForbid(b *testing.B) {
	spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       autoscalingv1alpha1.ScheduledPodAutoscalerSpec{OverlapPolicy: autoscalingv1alpha1.OverlapPolicyForbid},
	}
	objs := []Object{spa}
	monday := time.Date(2027, time.January, 18, 0, 0, 0, 0, time.UTC)
	for i := range 100 {
		start, end := monday.Add(time.Duration(i)*time.Hour), monday.Add(time.Duration(i+1)*time.Hour)
		objs = append(objs, &autoscalingv1alpha1.Schedule{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("sibling-%03d", i)},
			Spec: autoscalingv1alpha1.ScheduleSpec{
				ScaleTargetRef: autoscalingv1alpha1.ScaleTargetReference{Name: "web"},
				MinReplicas:    ptr.To[int32](2),
				Type:           autoscalingv1alpha1.ScheduleTypeWeekly,
				StartDayOfWeek: start.Weekday().String(), StartTime: start.Format("15:04"),
				EndDayOfWeek: end.Weekday().String(), EndTime: end.Format("15:04"),
				TimeZone: "Europe/Berlin",
			},
		})
	}
	env := Env{Now: now, Objects: lookupOf(objs...)}
	s := &autoscalingv1alpha1.Schedule{
		ObjectMeta: metav1.ObjectMeta{Name: "sunday", Namespace: "ns"},
		Spec: autoscalingv1alpha1.ScheduleSpec{
			ScaleTargetRef: autoscalingv1alpha1.ScaleTargetReference{Name: "web"},
			MinReplicas:    ptr.To[int32](3),
			Type:           autoscalingv1alpha1.ScheduleTypeWeekly,
			StartDayOfWeek: "Sunday", StartTime: "10:00", EndDayOfWeek: "Sunday", EndTime: "11:00",
			TimeZone: "Europe/Berlin",
		},
	}
	for b.Loop() {
		errs, _, err := ValidateSchedule(context.Background(), s, nil, env)
		if err != nil || len(errs) > 0 {
			b.Fatal(err, errs)
		}
	}
}
