package scheduledpodautoscaler

import (
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
)

// hpaFor returns spa's HPA as the API server holds it after almanac applied bounds b to it:
// defaults filled in, and the HPA controller's status.
func hpaFor(t testing.TB, spa *autoscalingv1alpha1.ScheduledPodAutoscaler, b timing.Bounds) *autoscalingv2.HorizontalPodAutoscaler {
	t.Helper()
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: spa.Name, Namespace: spa.Namespace},
		Spec:       *spa.Spec.HorizontalPodAutoscalerSpec.DeepCopy(),
		Status:     autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 3, DesiredReplicas: 3},
	}
	hpa.Spec.MinReplicas, hpa.Spec.MaxReplicas = ptr.To(b.Min), b.Max
	hpa.Spec.ScaleTargetRef.APIVersion = "apps/v1"
	hpa.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ // defaulted
		ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](300)},
	}
	hpa.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: autoscalingv1alpha1.GroupVersion.String(), Kind: "ScheduledPodAutoscaler",
		Name: spa.Name, UID: spa.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}}
	return hpa
}

func testAutoscaler() *autoscalingv1alpha1.ScheduledPodAutoscaler {
	return &autoscalingv1alpha1.ScheduledPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "u-1"},
		Spec: autoscalingv1alpha1.ScheduledPodAutoscalerSpec{
			HorizontalPodAutoscalerSpec: &autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web"},
				MinReplicas:    ptr.To[int32](2),
				MaxReplicas:    10,
				Metrics: []autoscalingv2.MetricSpec{{
					Type: autoscalingv2.ResourceMetricSourceType,
					Resource: &autoscalingv2.ResourceMetricSource{
						Name:   corev1.ResourceCPU,
						Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](70)},
					},
				}},
			},
		},
	}
}

// upToDate: other bounds (the boundary's case) or another metric target are a difference;
// what the API server defaulted, the HPA controller's status and the same bounds are not.
func TestUpToDate(t *testing.T) {
	spa := testAutoscaler()
	b := timing.Bounds{Min: 4, Max: 12}
	want, err := desiredHPA(spa, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		change func(*autoscalingv2.HorizontalPodAutoscaler)
		want   bool
	}{
		{"as applied, with defaults and status", func(*autoscalingv2.HorizontalPodAutoscaler) {}, true},
		{"another minReplicas", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MinReplicas = ptr.To[int32](2) }, false},
		{"minReplicas unset", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MinReplicas = nil }, false},
		{"another maxReplicas", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MaxReplicas = 10 }, false},
		{"another metric target", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[0].Resource.Target.AverageUtilization = ptr.To[int32](80)
		}, false},
		{"no owner reference", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.OwnerReferences = nil }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hpa := hpaFor(t, spa, b)
			tc.change(hpa)
			if got := upToDate(hpa, want); got != tc.want {
				t.Errorf("upToDate = %v, want %v", got, tc.want)
			}
		})
	}
}

// The reconcile of an autoscaler at a boundary, up to its HPA write: the HPA it wants, and
// the comparison with the cached HPA, which has the bounds of the window that closed.
func BenchmarkBoundaryUpToDate(b *testing.B) {
	spa := testAutoscaler()
	live := hpaFor(b, spa, timing.Bounds{Min: 6, Max: 12})
	b.ReportAllocs()
	for b.Loop() {
		want, err := desiredHPA(spa, timing.Bounds{Min: 2, Max: 10})
		if err != nil {
			b.Fatal(err)
		}
		if upToDate(live, want) {
			b.Fatal("up to date across a boundary")
		}
	}
}
