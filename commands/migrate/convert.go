package migrate

import (
	"errors"
	"fmt"
	"strings"
	"time"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
)

// Each converter below reads one replaced kind as its project's code read it; the comment
// says where. docs/migrate.md has the same mappings for readers.

var (
	autoscalingAPIVersion = autoscalingv1alpha1.GroupVersion.String()
	batchAPIVersion       = batchv1alpha1.GroupVersion.String()
)

// dkuroAPIVersion is scheduled-pod-autoscaler's only API version.
const dkuroAPIVersion = "autoscaling.d-kuro.github.io/v1"

// convertDKuroAutoscaler: scheduled-pod-autoscaler's ScheduledPodAutoscaler wraps an
// autoscaling/v2beta2 HorizontalPodAutoscalerSpec, which has the fields of autoscaling/v2.
func convertDKuroAutoscaler(c *conversion, obj map[string]any) (map[string]any, error) {
	var spec struct {
		HorizontalPodAutoscalerSpec map[string]any `json:"horizontalPodAutoscalerSpec"`
	}
	if err := decodeSpec(obj, &spec); err != nil {
		return nil, err
	}
	if spec.HorizontalPodAutoscalerSpec == nil {
		return nil, errors.New("spec.horizontalPodAutoscalerSpec is missing: there is no baseline to scale from")
	}
	return object(autoscalingAPIVersion, "ScheduledPodAutoscaler", metadata(c, obj),
		map[string]any{"horizontalPodAutoscalerSpec": spec.HorizontalPodAutoscalerSpec}), nil
}

// dkuroScheduleSpec is scheduled-pod-autoscaler's ScheduleSpec (apis/autoscaling/v1/
// schedule_types.go).
type dkuroScheduleSpec struct {
	ScaleTargetRef struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Name       string `json:"name"`
	} `json:"scaleTargetRef"`
	Suspend        bool   `json:"suspend"`
	Description    string `json:"description"`
	TimeZone       string `json:"timeZone"`
	MinReplicas    *int32 `json:"minReplicas"`
	MaxReplicas    *int32 `json:"maxReplicas"`
	Type           string `json:"type"`
	StartDayOfWeek string `json:"startDayOfWeek"`
	EndDayOfWeek   string `json:"endDayOfWeek"`
	StartTime      string `json:"startTime"`
	EndTime        string `json:"endTime"`
}

// descriptionAnnotation keeps a scheduled-pod-autoscaler Schedule's description, a field
// almanac's Schedule does not have.
const descriptionAnnotation = "autoscaling.almanac.dev/description"

// convertDKuroSchedule reads a Schedule as apis/autoscaling/v1/contains.go does: times in
// timeZone (UTC when empty); Daily is the window from startTime to endTime each day (an end
// before the start crosses midnight and belongs to the day it starts); Weekly is that daily
// window on each day from startDayOfWeek to endDayOfWeek, both included, wrapping past
// Saturday; OneShot is one window between two wall times.
func convertDKuroSchedule(c *conversion, obj map[string]any) (map[string]any, error) {
	var spec dkuroScheduleSpec
	if err := decodeSpec(obj, &spec); err != nil {
		return nil, err
	}
	ref := spec.ScaleTargetRef
	if (ref.Kind != "" && ref.Kind != "ScheduledPodAutoscaler") || (ref.APIVersion != "" && ref.APIVersion != dkuroAPIVersion) || ref.Name == "" {
		return nil, fmt.Errorf("spec.scaleTargetRef is %s %s %q: a scheduled-pod-autoscaler Schedule names its ScheduledPodAutoscaler (%s)",
			ref.APIVersion, ref.Kind, ref.Name, dkuroAPIVersion)
	}
	switch {
	case spec.MinReplicas == nil && spec.MaxReplicas == nil:
		return nil, errors.New("neither minReplicas nor maxReplicas is set: the Schedule changed nothing in scheduled-pod-autoscaler, " +
			"and an almanac Schedule needs at least one of them; delete it, or give the bounds it should apply")
	case spec.MinReplicas != nil && spec.MaxReplicas != nil && *spec.MinReplicas > *spec.MaxReplicas:
		return nil, fmt.Errorf("minReplicas %d is greater than maxReplicas %d: scheduled-pod-autoscaler wrote a HorizontalPodAutoscaler that the API server refused; fix the bounds",
			*spec.MinReplicas, *spec.MaxReplicas)
	}
	zone, err := dkuroZone(spec.TimeZone)
	if err != nil {
		return nil, err
	}

	var window timing.Spec
	switch spec.Type {
	case "Daily", "OneShot":
		if spec.StartDayOfWeek != "" || spec.EndDayOfWeek != "" {
			c.note("type %s ignores startDayOfWeek and endDayOfWeek (%q, %q) in scheduled-pod-autoscaler: dropped", spec.Type, spec.StartDayOfWeek, spec.EndDayOfWeek)
		}
		window = timing.Spec{Type: timing.Type(spec.Type), StartTime: spec.StartTime, EndTime: spec.EndTime, TimeZone: zone.Name}
	case "Weekly":
		first, err := timing.ParseWeekday(spec.StartDayOfWeek)
		if err != nil {
			return nil, fmt.Errorf("spec.startDayOfWeek: %w", err)
		}
		last, err := timing.ParseWeekday(spec.EndDayOfWeek)
		if err != nil {
			return nil, fmt.Errorf("spec.endDayOfWeek: %w", err)
		}
		window = timing.EachDay(first, last, spec.StartTime, spec.EndTime, zone.Name)
		days := "(every day)"
		if len(window.DaysOfWeek) > 0 {
			days = "with daysOfWeek [" + strings.Join(window.DaysOfWeek, ", ") + "]"
		}
		c.note("Weekly %s–%s %s–%s (the daily window on each day, as scheduled-pod-autoscaler reads it) → Daily %s",
			first, last, spec.StartTime, spec.EndTime, days)
	default:
		return nil, fmt.Errorf("spec.type %q is not a scheduled-pod-autoscaler type (Daily, Weekly or OneShot)", spec.Type)
	}
	w, errs := window.Compile()
	if len(errs) > 0 {
		if window.Type != timing.TypeOneShot && strings.TrimSpace(spec.StartTime) == strings.TrimSpace(spec.EndTime) && spec.StartTime != "" {
			return nil, fmt.Errorf("startTime and endTime are both %s: the window is empty, so scheduled-pod-autoscaler never activated it, "+
				"and almanac refuses an empty window; delete the Schedule, or give it the times it should have", spec.StartTime)
		}
		msgs := make([]string, 0, len(errs))
		for _, e := range errs {
			msgs = append(msgs, "spec."+e.Path()+": "+e.Detail)
		}
		return nil, errors.New(strings.Join(msgs, "; "))
	}

	canonical := w.Canonical()
	out := map[string]any{
		"scaleTargetRef": map[string]any{"apiVersion": autoscalingAPIVersion, "kind": "ScheduledPodAutoscaler", "name": ref.Name},
		"type":           string(canonical.Type),
		"startTime":      canonical.StartTime,
		"endTime":        canonical.EndTime,
		"timeZone":       canonical.TimeZone,
	}
	if spec.MinReplicas != nil {
		out["minReplicas"] = int64(*spec.MinReplicas)
	}
	if spec.MaxReplicas != nil {
		out["maxReplicas"] = int64(*spec.MaxReplicas)
	}
	if len(canonical.DaysOfWeek) > 0 {
		days := make([]any, len(canonical.DaysOfWeek))
		for i, d := range canonical.DaysOfWeek {
			days[i] = d
		}
		out["daysOfWeek"] = days
	}
	if spec.Suspend {
		out["suspend"] = true
	}
	meta := metadata(c, obj)
	if spec.Description != "" {
		annotations, _ := meta["annotations"].(map[string]any)
		if annotations == nil {
			annotations = map[string]any{}
		}
		annotations[descriptionAnnotation] = spec.Description
		meta["annotations"] = annotations
		c.note("description moved to the annotation %s (an almanac Schedule has no description field)", descriptionAnnotation)
	}
	return object(autoscalingAPIVersion, "Schedule", meta, out), nil
}

// dkuroZone reads a scheduled-pod-autoscaler timeZone as time.LoadLocation did: empty is UTC.
func dkuroZone(name string) (timing.Zone, error) {
	if name == "" {
		name = timing.DefaultZone
	}
	zone, err := timing.NormalizeZone(name)
	if err != nil {
		return timing.Zone{}, fmt.Errorf("spec.timeZone: %w", err)
	}
	return zone, nil
}

// convertAT reads k8s-at's AT as controllers/at_controller.go does: spec.schedule is a
// metav1.Time (RFC 3339), and the Job is created once, at the first reconcile after that
// instant however late, from spec.jobTemplate.
func convertAT(c *conversion, obj map[string]any) (map[string]any, error) {
	var spec struct {
		Schedule    string         `json:"schedule"`
		JobTemplate map[string]any `json:"jobTemplate"`
	}
	if err := decodeSpec(obj, &spec); err != nil {
		return nil, err
	}
	if spec.JobTemplate == nil {
		return nil, errors.New("spec.jobTemplate is missing: there is no Job to run")
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(spec.Schedule))
	if err != nil {
		return nil, fmt.Errorf("spec.schedule %q is not an RFC 3339 time, which k8s-at required (e.g. \"2020-03-21T13:53:55Z\")", spec.Schedule)
	}
	rounded := ""
	if t.Nanosecond() != 0 {
		t = t.Truncate(time.Second).Add(time.Second)
		rounded = " (rounded up to the next second: at is whole seconds, and the Job must not run early)"
	}
	// The zone the time was written in: UTC for Z, an Etc zone for a whole-hour offset.
	_, offset := t.Zone()
	zoneName, zoneNote := timing.DefaultZone, ""
	if offset != 0 {
		sign := "+"
		if offset < 0 {
			sign, offset = "-", -offset
		}
		name := fmt.Sprintf("%s%02d:%02d", sign, offset/3600, offset%3600/60)
		if z, err := timing.NormalizeZone(name); err == nil {
			zoneName = z.Name
		} else {
			zoneNote = fmt.Sprintf(" (the offset %s has no fixed IANA zone, so the wall time is written in UTC: the same instant)", name)
		}
	}
	zone, err := timing.NormalizeZone(zoneName)
	if err != nil {
		return nil, err
	}
	at, err := timing.ParseAt(t.In(zone.Location).Format("2006-01-02T15:04:05"), zone.Location)
	if err != nil {
		return nil, fmt.Errorf("spec.schedule: %w", err)
	}
	c.note("schedule %s → at %q in %s%s%s; k8s-at started the Job at its first reconcile after that instant, however late, "+
		"while almanac starts it within startingDeadlineSeconds (600 unless set) and otherwise records it as Missed",
		spec.Schedule, at.String(), zone.Name, rounded, zoneNote)
	return object(batchAPIVersion, "ScheduledJob", metadata(c, obj), map[string]any{
		"at":          at.String(),
		"timeZone":    zone.Name,
		"jobTemplate": spec.JobTemplate,
	}), nil
}

// convertCronTab reads the CronTab controller's CronTab as its main.go does: it prepends a
// seconds field "0 " to a schedule that does not start with "@" and hands it to robfig/cron,
// which evaluates it in the controller's local zone (UTC in its image); spec.jobTemplate is a
// Pod spec, which becomes the template of each Job.
func convertCronTab(c *conversion, obj map[string]any) (map[string]any, error) {
	var spec struct {
		Schedule    string         `json:"schedule"`
		JobTemplate map[string]any `json:"jobTemplate"`
	}
	if err := decodeSpec(obj, &spec); err != nil {
		return nil, err
	}
	if spec.JobTemplate == nil {
		return nil, errors.New("spec.jobTemplate (a Pod spec) is missing: there is nothing to run")
	}
	schedule := strings.TrimSpace(spec.Schedule)
	if !strings.HasPrefix(schedule, "@") {
		switch fields := strings.Fields(schedule); len(fields) {
		case 5:
			schedule = strings.Join(fields, " ")
		case 4:
			// With the prepended seconds, robfig/cron read five fields as having no
			// day-of-week field: every day of the week.
			schedule = strings.Join(fields, " ") + " *"
			c.note("schedule %q has 4 fields, which robfig/cron completed with a day-of-week field *: written as %q", spec.Schedule, schedule)
		default:
			return nil, fmt.Errorf("spec.schedule %q has %d fields: the controller prepended a seconds field, so robfig/cron refused it and the CronTab never ran; "+
				"write the 5-field schedule it should have", spec.Schedule, len(fields))
		}
	}
	cron, err := robfigCron(schedule, "CronTab")
	if err != nil {
		return nil, err
	}
	c.note("schedule %q (robfig/cron after the controller's seconds field, in the controller's zone, UTC) → schedule %q, timeZone UTC; "+
		"the Pod spec → jobTemplate.spec.template.spec; the controller kept every Job and never ran a missed run, "+
		"almanac keeps 3 succeeded and 1 failed Job and, after downtime, runs the latest missed run within startingDeadlineSeconds (600)",
		spec.Schedule, cron.String())
	return object(batchAPIVersion, "ScheduledJob", metadata(c, obj), map[string]any{
		"schedule": cron.String(),
		"timeZone": timing.DefaultZone,
		"jobTemplate": map[string]any{
			"spec": map[string]any{"template": map[string]any{"spec": spec.JobTemplate}},
		},
	}), nil
}

// robfigCron reads a schedule that the replaced system handed to robfig/cron's standard
// parser. almanac reads day forms (L, L-n, LW, nW, W#n, D#n, DL) that robfig/cron refused: an
// object with one never ran there, and converting it would start runs that it never had.
func robfigCron(schedule, kind string) (timing.Cron, error) {
	cron, err := timing.ParseCron(schedule)
	if err != nil {
		return timing.Cron{}, fmt.Errorf("spec.schedule: %w", err)
	}
	if cron.HasDayForms() {
		return timing.Cron{}, fmt.Errorf("spec.schedule %q has a day form (L, LW, 15W, W#2, MON#1, FRIL) that robfig/cron refused, so the %s never ran: "+
			"almanac would run it (LW is the last business day of the month, MON#1 the first Monday); if that is what it should do, write the ScheduledJob with this schedule yourself",
			schedule, kind)
	}
	return cron, nil
}

// convertTutorialCronJob reads the kubebuilder tutorial's CronJob as its controller does:
// cron.ParseStandard in the controller's local zone (UTC in its image); a missed run starts
// however late unless startingDeadlineSeconds is set; the defaulting webhook sets
// concurrencyPolicy Allow, suspend false and history limits 3 and 1, as almanac does.
func convertTutorialCronJob(c *conversion, obj map[string]any) (map[string]any, error) {
	var spec struct {
		Schedule                   string         `json:"schedule"`
		StartingDeadlineSeconds    *int64         `json:"startingDeadlineSeconds"`
		ConcurrencyPolicy          string         `json:"concurrencyPolicy"`
		Suspend                    *bool          `json:"suspend"`
		JobTemplate                map[string]any `json:"jobTemplate"`
		SuccessfulJobsHistoryLimit *int32         `json:"successfulJobsHistoryLimit"`
		FailedJobsHistoryLimit     *int32         `json:"failedJobsHistoryLimit"`
	}
	if err := decodeSpec(obj, &spec); err != nil {
		return nil, err
	}
	if spec.JobTemplate == nil {
		return nil, errors.New("spec.jobTemplate is missing: there is no Job to run")
	}
	cron, err := robfigCron(spec.Schedule, "CronJob")
	if err != nil {
		return nil, err
	}
	out := map[string]any{"schedule": cron.String(), "timeZone": timing.DefaultZone, "jobTemplate": spec.JobTemplate}
	switch batchv1alpha1.ConcurrencyPolicy(spec.ConcurrencyPolicy) {
	case "":
	case batchv1alpha1.ConcurrencyPolicyAllow, batchv1alpha1.ConcurrencyPolicyForbid, batchv1alpha1.ConcurrencyPolicyReplace:
		out["concurrencyPolicy"] = spec.ConcurrencyPolicy
	default:
		return nil, fmt.Errorf("spec.concurrencyPolicy %q is not Allow, Forbid or Replace", spec.ConcurrencyPolicy)
	}
	if spec.Suspend != nil && *spec.Suspend {
		out["suspend"] = true
	}
	for _, h := range []struct {
		field string
		limit *int32
	}{{"successfulJobsHistoryLimit", spec.SuccessfulJobsHistoryLimit}, {"failedJobsHistoryLimit", spec.FailedJobsHistoryLimit}} {
		if h.limit == nil {
			continue
		}
		kept := int64(*h.limit)
		if most := int64(batchv1alpha1.MaxJobsHistoryLimit); kept > most {
			c.note("%s %d → %d, almanac's maximum: the tutorial kept %d Jobs, almanac keeps %d", h.field, kept, most, kept, most)
			kept = most
		}
		out[h.field] = kept
	}
	deadline := ""
	if spec.StartingDeadlineSeconds != nil {
		seconds := *spec.StartingDeadlineSeconds
		if most := batchv1alpha1.MaxStartingDeadlineSeconds; seconds > most {
			c.note("startingDeadlineSeconds %d → %d, almanac's maximum (3650 days): a missed run still starts up to ten years late", seconds, most)
			seconds = most
		}
		out["startingDeadlineSeconds"] = seconds
	} else {
		deadline = "; without startingDeadlineSeconds the tutorial started a missed run however late, almanac within 600 seconds (set startingDeadlineSeconds for more)"
	}
	c.note("schedule %q in the controller's zone (UTC) → timeZone UTC%s", spec.Schedule, deadline)
	return object(batchAPIVersion, "ScheduledJob", metadata(c, obj), out), nil
}

// convertKitagryEventJob reads kitagry's EventJob as its controller does: it runs a Job when
// an Event about the trigger object (apiVersion, kind, name) has a message ending in
// "status: <type>", which the CronJob controller writes when a Job of the CronJob finishes.
func convertKitagryEventJob(c *conversion, obj map[string]any) (map[string]any, error) {
	var spec struct {
		Trigger struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Name       string `json:"name"`
			Type       string `json:"type"`
		} `json:"trigger"`
		JobTemplate map[string]any `json:"jobTemplate"`
	}
	if err := decodeSpec(obj, &spec); err != nil {
		return nil, err
	}
	tr := spec.Trigger
	if spec.JobTemplate == nil {
		return nil, errors.New("spec.jobTemplate is missing: there is no Job to run")
	}
	if tr.Name == "" {
		return nil, errors.New("spec.trigger.name is missing: the EventJob follows nothing")
	}
	switch batchv1alpha1.TriggerType(tr.Type) {
	case batchv1alpha1.TriggerTypeComplete, batchv1alpha1.TriggerTypeFailed:
	default:
		return nil, fmt.Errorf("spec.trigger.type %q: kitagry/eventjob fired only on Complete or Failed (an Event ending in \"status: Complete\" or \"status: Failed\"), so this EventJob never ran; "+
			"set Complete or Failed (almanac also has Any)", tr.Type)
	}
	what := "the Jobs of CronJob " + tr.Name
	switch tr.Kind {
	case "CronJob":
	case "Job":
		what = "Job " + tr.Name
		c.note("trigger Job %s: kitagry/eventjob matched only Events ending in \"status: %s\", which the CronJob controller writes about CronJobs, so a Job trigger never fired; "+
			"almanac runs once when the Job reaches %s", tr.Name, tr.Type, tr.Type)
	default:
		return nil, fmt.Errorf("spec.trigger.kind %q: almanac's EventJob follows a Job or the Jobs of a CronJob (or of almanac's ScheduledJobs and EventJobs)", tr.Kind)
	}
	if tr.APIVersion != "batch/v1" {
		c.note("trigger apiVersion %q → batch/v1", tr.APIVersion)
	}
	c.note("trigger %s %s on %s → the same trigger; kitagry/eventjob fired on Events about it (lost when they expired or the controller was down, "+
		"and completions between two reconciles ran once), almanac runs once for each of %s that reaches %s after the EventJob is created",
		tr.Kind, tr.Name, tr.Type, what, tr.Type)
	return object(batchAPIVersion, "EventJob", metadata(c, obj), map[string]any{
		"trigger":     map[string]any{"apiVersion": "batch/v1", "kind": tr.Kind, "name": tr.Name, "type": tr.Type},
		"jobTemplate": spec.JobTemplate,
	}), nil
}
