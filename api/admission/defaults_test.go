package admission

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

var defaultRef = autoscalingv1alpha1.ScaleTargetReference{APIVersion: "autoscaling.almanac.dev/v1alpha1", Kind: "ScheduledPodAutoscaler", Name: "web"}

func TestDefaultSchedule(t *testing.T) {
	tests := []struct {
		name         string
		in, want     autoscalingv1alpha1.ScheduleSpec
		wantWarnings []string
	}{{
		name: "zone, times and reference filled in",
		in:   autoscalingv1alpha1.ScheduleSpec{ScaleTargetRef: autoscalingv1alpha1.ScaleTargetReference{Name: "web"}, Type: "Daily", StartTime: "9:00", EndTime: "17:00:00"},
		want: autoscalingv1alpha1.ScheduleSpec{ScaleTargetRef: defaultRef, Type: "Daily", StartTime: "09:00", EndTime: "17:00", TimeZone: "UTC"},
	}, {
		name: "canonical zone name and days",
		in:   autoscalingv1alpha1.ScheduleSpec{ScaleTargetRef: defaultRef, Type: "Weekly", StartDayOfWeek: "mon", EndDayOfWeek: "FRIDAY", StartTime: "18:00", EndTime: "8:00", TimeZone: "asia/tokyo"},
		want: autoscalingv1alpha1.ScheduleSpec{ScaleTargetRef: defaultRef, Type: "Weekly", StartDayOfWeek: "Monday", EndDayOfWeek: "Friday", StartTime: "18:00", EndTime: "08:00", TimeZone: "Asia/Tokyo"},
	}, {
		name: "UTC alias and whole-hour offsets",
		in:   autoscalingv1alpha1.ScheduleSpec{ScaleTargetRef: defaultRef, Type: "Daily", StartTime: "09:00", EndTime: "17:00", TimeZone: "+09:00"},
		want: autoscalingv1alpha1.ScheduleSpec{ScaleTargetRef: defaultRef, Type: "Daily", StartTime: "09:00", EndTime: "17:00", TimeZone: "Etc/GMT-9"},
	}, {
		name: "Zulu is UTC",
		in:   autoscalingv1alpha1.ScheduleSpec{ScaleTargetRef: defaultRef, Type: "Daily", StartTime: "09:00", EndTime: "17:00", TimeZone: "Zulu"},
		want: autoscalingv1alpha1.ScheduleSpec{ScaleTargetRef: defaultRef, Type: "Daily", StartTime: "09:00", EndTime: "17:00", TimeZone: "UTC"},
	}, {
		name:         "OneShot RFC 3339 times become wall times in the zone",
		in:           autoscalingv1alpha1.ScheduleSpec{ScaleTargetRef: defaultRef, Type: "OneShot", StartTime: "2027-09-01T10:00:00+09:00", EndTime: "2027-09-01T09:00:00Z", TimeZone: "Asia/Tokyo"},
		want:         autoscalingv1alpha1.ScheduleSpec{ScaleTargetRef: defaultRef, Type: "OneShot", StartTime: "2027-09-01T10:00", EndTime: "2027-09-01T18:00", TimeZone: "Asia/Tokyo"},
		wantWarnings: []string{`spec.endTime: "2027-09-01T09:00:00Z" was stored as the wall time "2027-09-01T18:00" in Asia/Tokyo, the time zone of this object`},
	}, {
		name: "cron spelling",
		in:   autoscalingv1alpha1.ScheduleSpec{ScaleTargetRef: defaultRef, Type: "Cron", Schedule: "  @MIDNIGHT ", Duration: "1h", TimeZone: "UTC"},
		want: autoscalingv1alpha1.ScheduleSpec{ScaleTargetRef: defaultRef, Type: "Cron", Schedule: "@daily", Duration: "1h", TimeZone: "UTC"},
	}, {
		name: "what cannot be normalized is left for validation",
		in:   autoscalingv1alpha1.ScheduleSpec{ScaleTargetRef: defaultRef, Type: "OneShot", StartTime: "2027-09-01T10:00", EndTime: "tomorrow", TimeZone: "Asia/Tokio"},
		want: autoscalingv1alpha1.ScheduleSpec{ScaleTargetRef: defaultRef, Type: "OneShot", StartTime: "2027-09-01T10:00", EndTime: "tomorrow", TimeZone: "Asia/Tokio"},
	}, {
		name: "daysOfWeek: full names, Monday first, each day once",
		in:   autoscalingv1alpha1.ScheduleSpec{ScaleTargetRef: defaultRef, Type: "Daily", StartTime: "09:00", EndTime: "18:00", DaysOfWeek: []string{"fri", "MON", "Wednesday", "monday", " tue ", "thursday"}},
		want: autoscalingv1alpha1.ScheduleSpec{ScaleTargetRef: defaultRef, Type: "Daily", StartTime: "09:00", EndTime: "18:00", DaysOfWeek: []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"}, TimeZone: "UTC"},
	}, {
		name: "daysOfWeek with a day that is not one is left for validation to name",
		in:   autoscalingv1alpha1.ScheduleSpec{ScaleTargetRef: defaultRef, Type: "Daily", StartTime: "09:00", EndTime: "18:00", DaysOfWeek: []string{"fri", "Fryday"}},
		want: autoscalingv1alpha1.ScheduleSpec{ScaleTargetRef: defaultRef, Type: "Daily", StartTime: "09:00", EndTime: "18:00", DaysOfWeek: []string{"fri", "Fryday"}, TimeZone: "UTC"},
	}, {
		name: "a bad time does not stop the others",
		in:   autoscalingv1alpha1.ScheduleSpec{ScaleTargetRef: defaultRef, Type: "Daily", StartTime: "9:00", EndTime: "25:00"},
		want: autoscalingv1alpha1.ScheduleSpec{ScaleTargetRef: defaultRef, Type: "Daily", StartTime: "09:00", EndTime: "25:00", TimeZone: "UTC"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &autoscalingv1alpha1.Schedule{Spec: tt.in}
			warnings := DefaultSchedule(s)
			if diff := cmp.Diff(tt.want, s.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantWarnings, warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			again := s.DeepCopy()
			if w := DefaultSchedule(again); len(w) > 0 || !cmp.Equal(s, again) {
				t.Errorf("not idempotent: %s, warnings %q", cmp.Diff(s, again), w)
			}
		})
	}
}

func TestDefaultScheduledJob(t *testing.T) {
	policy := func(spec batchv1alpha1.ScheduledJobSpec) batchv1alpha1.ScheduledJobSpec {
		spec.ConcurrencyPolicy = "Allow"
		spec.SuccessfulJobsHistoryLimit = ptr.To(int32(3))
		spec.FailedJobsHistoryLimit = ptr.To(int32(1))
		if spec.StartingDeadlineSeconds == nil {
			spec.StartingDeadlineSeconds = ptr.To(int64(600))
		}
		return spec
	}
	tests := []struct {
		name         string
		in, want     batchv1alpha1.ScheduledJobSpec
		wantWarnings []string
	}{{
		name: "defaults",
		in:   batchv1alpha1.ScheduledJobSpec{Schedule: "30 2 * * *"},
		want: policy(batchv1alpha1.ScheduledJobSpec{Schedule: "30 2 * * *", TimeZone: "UTC"}),
	}, {
		name: "explicit policies are kept",
		in: batchv1alpha1.ScheduledJobSpec{Schedule: "@hourly", StartingDeadlineSeconds: ptr.To(int64(30)), JobPolicy: batchv1alpha1.JobPolicy{
			ConcurrencyPolicy: "Forbid", SuccessfulJobsHistoryLimit: ptr.To(int32(0)), FailedJobsHistoryLimit: ptr.To(int32(5)),
		}},
		want: batchv1alpha1.ScheduledJobSpec{Schedule: "@hourly", TimeZone: "UTC", StartingDeadlineSeconds: ptr.To(int64(30)), JobPolicy: batchv1alpha1.JobPolicy{
			ConcurrencyPolicy: "Forbid", SuccessfulJobsHistoryLimit: ptr.To(int32(0)), FailedJobsHistoryLimit: ptr.To(int32(5)),
		}},
	}, {
		name: "at with an offset becomes wall time",
		in:   batchv1alpha1.ScheduledJobSpec{At: "2027-03-14T09:30:00-04:00", TimeZone: "america/new_york"},
		want: policy(batchv1alpha1.ScheduledJobSpec{At: "2027-03-14T09:30", TimeZone: "America/New_York"}),
	}, {
		name:         "at in UTC, stored in the zone",
		in:           batchv1alpha1.ScheduledJobSpec{At: "2027-03-14T13:30Z", TimeZone: "Europe/Berlin"},
		want:         policy(batchv1alpha1.ScheduledJobSpec{At: "2027-03-14T14:30", TimeZone: "Europe/Berlin"}),
		wantWarnings: []string{`spec.at: "2027-03-14T13:30Z" was stored as the wall time "2027-03-14T14:30" in Europe/Berlin, the time zone of this object`},
	}, {
		name:         "legacy AT manifest: the timestamp in schedule moves to at, to the second",
		in:           batchv1alpha1.ScheduledJobSpec{Schedule: "2020-03-21T13:53:55Z"},
		want:         policy(batchv1alpha1.ScheduledJobSpec{At: "2020-03-21T13:53:55", TimeZone: "UTC"}),
		wantWarnings: []string{`spec.schedule: "2020-03-21T13:53:55Z" is a date and time, not a cron schedule: it was moved to spec.at as "2020-03-21T13:53:55", a wall time in UTC`},
	}, {
		name: "at keeps whole seconds; seconds 00 are dropped",
		in:   batchv1alpha1.ScheduledJobSpec{At: "2036-03-21T13:53:55"},
		want: policy(batchv1alpha1.ScheduledJobSpec{At: "2036-03-21T13:53:55", TimeZone: "UTC"}),
	}, {
		name: "at with seconds 00",
		in:   batchv1alpha1.ScheduledJobSpec{At: "2036-03-21T13:53:00", TimeZone: "utc"},
		want: policy(batchv1alpha1.ScheduledJobSpec{At: "2036-03-21T13:53", TimeZone: "UTC"}),
	}, {
		name:         "at in RFC 3339 with seconds, stored as the wall time to the second",
		in:           batchv1alpha1.ScheduledJobSpec{At: "2036-03-21T13:53:55Z", TimeZone: "+09:00"},
		want:         policy(batchv1alpha1.ScheduledJobSpec{At: "2036-03-21T22:53:55", TimeZone: "Etc/GMT-9"}),
		wantWarnings: []string{`spec.at: "2036-03-21T13:53:55Z" was stored as the wall time "2036-03-21T22:53:55" in Etc/GMT-9, the time zone of this object`},
	}, {
		name: "a fraction of a second is left for validation to reject",
		in:   batchv1alpha1.ScheduledJobSpec{At: "2036-03-21T13:53:55.5"},
		want: policy(batchv1alpha1.ScheduledJobSpec{At: "2036-03-21T13:53:55.5", TimeZone: "UTC"}),
	}, {
		name:         "a wall time in schedule moves to at",
		in:           batchv1alpha1.ScheduledJobSpec{Schedule: "2036-03-21T13:53", TimeZone: "Asia/Tokyo"},
		want:         policy(batchv1alpha1.ScheduledJobSpec{At: "2036-03-21T13:53", TimeZone: "Asia/Tokyo"}),
		wantWarnings: []string{`spec.schedule: "2036-03-21T13:53" is a date and time, not a cron schedule: it was moved to spec.at as "2036-03-21T13:53", a wall time in Asia/Tokyo`},
	}, {
		name: "a timestamp in schedule is not moved when at is set too",
		in:   batchv1alpha1.ScheduledJobSpec{At: "2036-01-01T00:00", Schedule: "2036-03-21T13:53"},
		want: policy(batchv1alpha1.ScheduledJobSpec{At: "2036-01-01T00:00", Schedule: "2036-03-21T13:53", TimeZone: "UTC"}),
	}, {
		name: "an invalid date in schedule stays for validation",
		in:   batchv1alpha1.ScheduledJobSpec{Schedule: "2027-02-29T10:00Z"},
		want: policy(batchv1alpha1.ScheduledJobSpec{Schedule: "2027-02-29T10:00Z", TimeZone: "UTC"}),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sj := &batchv1alpha1.ScheduledJob{Spec: tt.in}
			warnings := DefaultScheduledJob(sj)
			if diff := cmp.Diff(tt.want, sj.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantWarnings, warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			again := sj.DeepCopy()
			if w := DefaultScheduledJob(again); len(w) > 0 || !cmp.Equal(sj, again) {
				t.Errorf("not idempotent: %s, warnings %q", cmp.Diff(sj, again), w)
			}
		})
	}
}

func TestDefaultScheduledPodAutoscaler(t *testing.T) {
	cpu80 := []autoscalingv2.MetricSpec{{
		Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{
			Name:   corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(int32(80))},
		},
	}}
	memory := []autoscalingv2.MetricSpec{{
		Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{
			Name:   corev1.ResourceMemory,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(int32(60))},
		},
	}}
	tests := []struct {
		name     string
		in, want autoscalingv1alpha1.ScheduledPodAutoscalerSpec
	}{{
		name: "everything omitted",
		in: autoscalingv1alpha1.ScheduledPodAutoscalerSpec{HorizontalPodAutoscalerSpec: &autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web"}, MaxReplicas: 5,
		}},
		want: autoscalingv1alpha1.ScheduledPodAutoscalerSpec{OverlapPolicy: "Max", HorizontalPodAutoscalerSpec: &autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To(int32(1)), MaxReplicas: 5, Metrics: cpu80,
		}},
	}, {
		name: "given values are kept; other kinds get no apiVersion",
		in: autoscalingv1alpha1.ScheduledPodAutoscalerSpec{OverlapPolicy: "Forbid", HorizontalPodAutoscalerSpec: &autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Rollout", Name: "web"}, MinReplicas: ptr.To(int32(3)), MaxReplicas: 5, Metrics: memory,
		}},
		want: autoscalingv1alpha1.ScheduledPodAutoscalerSpec{OverlapPolicy: "Forbid", HorizontalPodAutoscalerSpec: &autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Rollout", Name: "web"}, MinReplicas: ptr.To(int32(3)), MaxReplicas: 5, Metrics: memory,
		}},
	}, {
		name: "StatefulSet",
		in: autoscalingv1alpha1.ScheduledPodAutoscalerSpec{HorizontalPodAutoscalerSpec: &autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "StatefulSet", Name: "db"}, MinReplicas: ptr.To(int32(2)), MaxReplicas: 5,
		}},
		want: autoscalingv1alpha1.ScheduledPodAutoscalerSpec{OverlapPolicy: "Max", HorizontalPodAutoscalerSpec: &autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db"},
			MinReplicas:    ptr.To(int32(2)), MaxReplicas: 5, Metrics: cpu80,
		}},
	}, {
		name: "attached: only overlapPolicy is filled in; targetRef and the bounds are kept as written",
		in: autoscalingv1alpha1.ScheduledPodAutoscalerSpec{
			TargetRef:   &autoscalingv1alpha1.TargetReference{APIVersion: "keda.sh/v1alpha1", Kind: "ScaledObject", Name: "worker"},
			MinReplicas: ptr.To(int32(0)), MaxReplicas: ptr.To(int32(20)),
		},
		want: autoscalingv1alpha1.ScheduledPodAutoscalerSpec{
			OverlapPolicy: "Max",
			TargetRef:     &autoscalingv1alpha1.TargetReference{APIVersion: "keda.sh/v1alpha1", Kind: "ScaledObject", Name: "worker"},
			MinReplicas:   ptr.To(int32(0)), MaxReplicas: ptr.To(int32(20)),
		},
	}, {
		name: "attached to a workload without maxReplicas: none is made up",
		in: autoscalingv1alpha1.ScheduledPodAutoscalerSpec{OverlapPolicy: "Forbid",
			TargetRef:   &autoscalingv1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas: ptr.To(int32(2)),
		},
		want: autoscalingv1alpha1.ScheduledPodAutoscalerSpec{OverlapPolicy: "Forbid",
			TargetRef:   &autoscalingv1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas: ptr.To(int32(2)),
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{Spec: tt.in}
			if w := DefaultScheduledPodAutoscaler(spa); len(w) > 0 {
				t.Errorf("unexpected warnings %q", w)
			}
			if diff := cmp.Diff(tt.want, spa.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			again := spa.DeepCopy()
			DefaultScheduledPodAutoscaler(again)
			if diff := cmp.Diff(spa, again); diff != "" {
				t.Errorf("not idempotent:\n%s", diff)
			}
		})
	}
}

func TestDefaultEventJob(t *testing.T) {
	policy := batchv1alpha1.JobPolicy{ConcurrencyPolicy: "Allow", SuccessfulJobsHistoryLimit: ptr.To(int32(3)), FailedJobsHistoryLimit: ptr.To(int32(1))}
	tests := []struct {
		in, want batchv1alpha1.Trigger
	}{
		{batchv1alpha1.Trigger{Kind: "Job", Name: "a"}, batchv1alpha1.Trigger{APIVersion: "batch/v1", Kind: "Job", Name: "a", Type: "Complete"}},
		{batchv1alpha1.Trigger{Kind: "CronJob", Name: "a", Type: "Failed"}, batchv1alpha1.Trigger{APIVersion: "batch/v1", Kind: "CronJob", Name: "a", Type: "Failed"}},
		{batchv1alpha1.Trigger{Kind: "ScheduledJob", Name: "a"}, batchv1alpha1.Trigger{APIVersion: "batch.almanac.dev/v1alpha1", Kind: "ScheduledJob", Name: "a", Type: "Complete"}},
		{batchv1alpha1.Trigger{Kind: "EventJob", Name: "a", Type: "Any"}, batchv1alpha1.Trigger{APIVersion: "batch.almanac.dev/v1alpha1", Kind: "EventJob", Name: "a", Type: "Any"}},
		{batchv1alpha1.Trigger{Kind: "Deployment", Name: "a"}, batchv1alpha1.Trigger{Kind: "Deployment", Name: "a", Type: "Complete"}},
		{batchv1alpha1.Trigger{APIVersion: "batch/v1", Kind: "EventJob", Name: "a"}, batchv1alpha1.Trigger{APIVersion: "batch/v1", Kind: "EventJob", Name: "a", Type: "Complete"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.in.Kind), func(t *testing.T) {
			ej := &batchv1alpha1.EventJob{Spec: batchv1alpha1.EventJobSpec{Trigger: tt.in}}
			DefaultEventJob(ej)
			want := batchv1alpha1.EventJobSpec{Trigger: tt.want, JobPolicy: policy}
			if diff := cmp.Diff(want, ej.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}
