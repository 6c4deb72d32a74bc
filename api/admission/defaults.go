package admission

import (
	"fmt"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
)

// The defaulting functions below normalize an object in place: what the mutating webhook
// stores and what `almanac validate` checks. They never fail: a value they cannot normalize is
// left as written, for the schema or the validating webhook to reject with a message. They
// are idempotent (defaulting a defaulted object changes nothing), and they return warnings for
// the few changes a user should hear about.

// DefaultCPUUtilization is the average CPU utilization (percent of the Pods' requests) that
// the HorizontalPodAutoscaler of a ScheduledPodAutoscaler aims at when no metric is given.
const DefaultCPUUtilization = int32(80)

// DefaultScheduledPodAutoscaler fills in the baseline HorizontalPodAutoscaler spec:
// minReplicas 1, an 80 % average CPU utilization metric when there is no metric, and
// scaleTargetRef.apiVersion apps/v1 for a Deployment, StatefulSet or ReplicaSet; and
// overlapPolicy Max.
func DefaultScheduledPodAutoscaler(spa *autoscalingv1alpha1.ScheduledPodAutoscaler) []string {
	if spa.Spec.OverlapPolicy == "" {
		spa.Spec.OverlapPolicy = autoscalingv1alpha1.OverlapPolicyMax
	}
	hpa := spa.Spec.HorizontalPodAutoscalerSpec
	if hpa == nil { // attached (spec.targetRef): nothing of a generated HPA to fill in
		return nil
	}
	if hpa.MinReplicas == nil {
		hpa.MinReplicas = ptr.To(int32(1))
	}
	if len(hpa.Metrics) == 0 {
		hpa.Metrics = []autoscalingv2.MetricSpec{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{
					Type:               autoscalingv2.UtilizationMetricType,
					AverageUtilization: ptr.To(DefaultCPUUtilization),
				},
			},
		}}
	}
	if hpa.ScaleTargetRef.APIVersion == "" {
		hpa.ScaleTargetRef.APIVersion = autoscalingv1alpha1.DefaultScaleTargetAPIVersion(hpa.ScaleTargetRef.Kind)
	}
	return nil
}

// DefaultSchedule writes the default time zone (UTC), the zone's canonical name, the
// canonical forms of the times (HH:mm, or yyyy-MM-ddTHH:mm wall time in the zone for OneShot,
// converting RFC 3339 times with an offset), of the days (Monday; daysOfWeek and businessDays
// Monday first, without repeats) and of the cron schedule, and the scaleTargetRef's apiVersion
// and kind.
func DefaultSchedule(s *autoscalingv1alpha1.Schedule) []string {
	spec := &s.Spec
	if spec.ScaleTargetRef.APIVersion == "" {
		spec.ScaleTargetRef.APIVersion = autoscalingv1alpha1.GroupVersion.String()
	}
	if spec.ScaleTargetRef.Kind == "" {
		spec.ScaleTargetRef.Kind = "ScheduledPodAutoscaler"
	}
	zone, zoneOK := defaultZone(&spec.TimeZone)
	var warnings []string
	switch spec.Type {
	case autoscalingv1alpha1.ScheduleTypeDaily, autoscalingv1alpha1.ScheduleTypeWeekly:
		spec.StartTime = canonicalClock(spec.StartTime)
		spec.EndTime = canonicalClock(spec.EndTime)
	case autoscalingv1alpha1.ScheduleTypeOneShot:
		if zoneOK {
			var w string
			spec.StartTime, w = canonicalDateTime(spec.StartTime, zone, "spec.startTime")
			warnings = appendNonEmpty(warnings, w)
			spec.EndTime, w = canonicalDateTime(spec.EndTime, zone, "spec.endTime")
			warnings = appendNonEmpty(warnings, w)
		}
	case autoscalingv1alpha1.ScheduleTypeCron:
		spec.Schedule = canonicalCron(spec.Schedule)
	}
	spec.StartDayOfWeek = canonicalWeekday(spec.StartDayOfWeek)
	spec.EndDayOfWeek = canonicalWeekday(spec.EndDayOfWeek)
	if days, ok := timing.CanonicalWeekdays(spec.DaysOfWeek); ok && len(days) > 0 {
		spec.DaysOfWeek = days
	}
	if days, ok := timing.CanonicalWeekdays(spec.BusinessDays); ok && len(days) > 0 {
		spec.BusinessDays = days
	}
	return warnings
}

// DefaultScheduledJob writes the default time zone and its canonical name, moves a
// timestamp written in schedule (the form of the "AT" controller) to at, writes at as a wall
// time in the zone (to the second when its seconds are not 00), the cron schedule in its
// canonical spelling and businessDays as full names, Monday first, without repeats, and fills
// in the Job policies.
func DefaultScheduledJob(sj *batchv1alpha1.ScheduledJob) []string {
	spec := &sj.Spec
	zone, zoneOK := defaultZone(&spec.TimeZone)
	var warnings []string
	switch {
	case spec.At == "" && zoneOK:
		if sched, errs := sj.Timing().Compile(); len(errs) == 0 && sched.FromSchedule {
			warnings = append(warnings, fmt.Sprintf("spec.schedule: %q is a date and time, not a cron schedule: it was moved to spec.at as %q, a wall time in %s",
				spec.Schedule, sched.At.String(), zone.Name))
			spec.At, spec.Schedule = sched.At.String(), ""
		}
	case zoneOK:
		var w string
		spec.At, w = canonicalAt(spec.At, zone)
		warnings = appendNonEmpty(warnings, w)
	}
	spec.Schedule = canonicalCron(spec.Schedule)
	if days, ok := timing.CanonicalWeekdays(spec.BusinessDays); ok && len(days) > 0 {
		spec.BusinessDays = days
	}
	if spec.StartingDeadlineSeconds == nil {
		spec.StartingDeadlineSeconds = ptr.To(batchv1alpha1.DefaultStartingDeadlineSeconds)
	}
	defaultJobPolicy(&spec.JobPolicy)
	return warnings
}

// DefaultEventJob fills in each trigger's apiVersion from its kind (batch/v1 for Job and
// CronJob, batch.almanac.dev/v1alpha1 for ScheduledJob and EventJob) and its type Complete;
// with triggers, fanIn's require AllOf, pairBy Slot, onFailure Skip and, for pairBy Slot,
// horizonSeconds (batchv1alpha1.EventJobSpec.EffectiveFanIn); and the Job policies.
func DefaultEventJob(ej *batchv1alpha1.EventJob) []string {
	if ej.Spec.Trigger != (batchv1alpha1.Trigger{}) {
		defaultTrigger(&ej.Spec.Trigger)
	}
	for i := range ej.Spec.Triggers {
		defaultTrigger(&ej.Spec.Triggers[i])
	}
	if ej.IsFanIn() {
		f := ej.Spec.EffectiveFanIn()
		ej.Spec.FanIn = &f
	}
	defaultJobPolicy(&ej.Spec.JobPolicy)
	return nil
}

func defaultTrigger(t *batchv1alpha1.Trigger) {
	if t.APIVersion == "" {
		t.APIVersion = triggerAPIVersion(t.Kind)
	}
	if t.Type == "" {
		t.Type = batchv1alpha1.TriggerTypeComplete
	}
}

func defaultJobPolicy(p *batchv1alpha1.JobPolicy) {
	if p.ConcurrencyPolicy == "" {
		p.ConcurrencyPolicy = batchv1alpha1.DefaultConcurrencyPolicy
	}
	if p.SuccessfulJobsHistoryLimit == nil {
		p.SuccessfulJobsHistoryLimit = ptr.To(batchv1alpha1.DefaultSuccessfulJobsHistoryLimit)
	}
	if p.FailedJobsHistoryLimit == nil {
		p.FailedJobsHistoryLimit = ptr.To(batchv1alpha1.DefaultFailedJobsHistoryLimit)
	}
}

// triggerAPIVersion is the apiVersion of a trigger kind, or "" for an unknown kind (which the
// schema rejects).
func triggerAPIVersion(kind batchv1alpha1.TriggerKind) string {
	switch kind {
	case batchv1alpha1.TriggerKindJob, batchv1alpha1.TriggerKindCronJob:
		return "batch/v1"
	case batchv1alpha1.TriggerKindScheduledJob, batchv1alpha1.TriggerKindEventJob:
		return batchv1alpha1.GroupVersion.String()
	}
	return ""
}

// defaultZone writes the default zone into an empty timeZone and the canonical name into a
// valid one, and returns the zone; ok is false when the zone is not valid (then it is left as
// written, for validation to report).
func defaultZone(tz *string) (zone timing.Zone, ok bool) {
	if *tz == "" {
		*tz = timing.DefaultZone
	}
	zone, err := timing.NormalizeZone(*tz)
	if err != nil {
		return timing.Zone{}, false
	}
	*tz = zone.Name
	return zone, true
}

func canonicalClock(s string) string {
	if s == "" {
		return s
	}
	c, err := timing.ParseClock(s)
	if err != nil {
		return s
	}
	return c.String()
}

func canonicalWeekday(s string) string {
	if s == "" {
		return s
	}
	d, err := timing.ParseWeekday(s)
	if err != nil {
		return s
	}
	return d.String()
}

func canonicalCron(s string) string {
	if s == "" {
		return s
	}
	c, err := timing.ParseCron(s)
	if err != nil {
		return s
	}
	return c.String()
}

// canonicalDateTime returns the canonical wall time of s in zone, and a warning when s had an
// offset that made the stored wall-clock reading differ from the one written.
func canonicalDateTime(s string, zone timing.Zone, path string) (string, string) {
	return canonicalWallTime(s, zone, path, timing.ParseLocalDateTime)
}

// canonicalAt is canonicalDateTime for a ScheduledJob's at, which keeps whole seconds.
func canonicalAt(s string, zone timing.Zone) (string, string) {
	return canonicalWallTime(s, zone, "spec.at", timing.ParseAt)
}

func canonicalWallTime(s string, zone timing.Zone, path string, parse func(string, *time.Location) (timing.LocalDateTime, error)) (string, string) {
	if s == "" {
		return s, ""
	}
	l, err := parse(s, zone.Location)
	if err != nil {
		return s, ""
	}
	canonical := l.String()
	if t := strings.TrimSpace(s); len(t) >= len(canonical) && !strings.EqualFold(t[:len(canonical)], canonical) {
		return canonical, fmt.Sprintf("%s: %q was stored as the wall time %q in %s, the time zone of this object", path, s, canonical, zone.Name)
	}
	return canonical, ""
}

func appendNonEmpty(list []string, s string) []string {
	if s == "" {
		return list
	}
	return append(list, s)
}
