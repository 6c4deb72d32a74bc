package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
)

// ScheduleType is the kind of recurrence of a Schedule's window.
// +kubebuilder:validation:Enum=Daily;Weekly;OneShot;Cron
type ScheduleType string

const (
	// ScheduleTypeDaily opens a window every day (or on each of daysOfWeek) from startTime to
	// endTime (HH:mm).
	ScheduleTypeDaily ScheduleType = "Daily"
	// ScheduleTypeWeekly opens a window every week from startDayOfWeek startTime to the
	// next endDayOfWeek endTime.
	ScheduleTypeWeekly ScheduleType = "Weekly"
	// ScheduleTypeOneShot opens a single window from startTime to endTime
	// (yyyy-MM-ddTHH:mm).
	ScheduleTypeOneShot ScheduleType = "OneShot"
	// ScheduleTypeCron opens a window of duration at every firing of schedule.
	ScheduleTypeCron ScheduleType = "Cron"
)

// SchedulePhase says what a Schedule will do, as its spec says it: it does not follow the
// clock from window to window (whether a window is open now is the autoscaler's
// status.activeSchedules, written at each transition anyway).
// +kubebuilder:validation:Enum=Scheduled;Suspended;Completed;Invalid
type SchedulePhase string

const (
	// SchedulePhaseScheduled means windows are to come (or one is open).
	SchedulePhaseScheduled SchedulePhase = "Scheduled"
	// SchedulePhaseSuspended means the Schedule is suspended: it changes nothing.
	SchedulePhaseSuspended SchedulePhase = "Suspended"
	// SchedulePhaseCompleted means the Schedule's last window has closed (a OneShot's).
	SchedulePhaseCompleted SchedulePhase = "Completed"
	// SchedulePhaseInvalid means the Schedule cannot be evaluated (condition Valid says why).
	SchedulePhaseInvalid SchedulePhase = "Invalid"
)

// ScaleTargetReference names the ScheduledPodAutoscaler that a Schedule changes.
type ScaleTargetReference struct {
	// apiVersion of the autoscaler. Default autoscaling.almanac.dev/v1alpha1, the only
	// accepted value.
	// +optional
	// +kubebuilder:default="autoscaling.almanac.dev/v1alpha1"
	// +kubebuilder:validation:Enum="autoscaling.almanac.dev/v1alpha1"
	APIVersion string `json:"apiVersion,omitempty"`
	// kind of the autoscaler. Default ScheduledPodAutoscaler, the only accepted value.
	// +optional
	// +kubebuilder:default=ScheduledPodAutoscaler
	// +kubebuilder:validation:Enum=ScheduledPodAutoscaler
	Kind string `json:"kind,omitempty"`
	// name of the ScheduledPodAutoscaler, in the Schedule's namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// ScheduleSpec is a window (recurring or once) during which an autoscaler's bounds change.
//
// +kubebuilder:validation:XValidation:rule="has(self.minReplicas) || has(self.maxReplicas)",message="at least one of minReplicas and maxReplicas is required"
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas",message="minReplicas must not be greater than maxReplicas",fieldPath=".minReplicas"
// +kubebuilder:validation:XValidation:rule="self.type == 'Cron' || (has(self.startTime) && has(self.endTime))",message="startTime and endTime are required for type Daily, Weekly and OneShot"
// +kubebuilder:validation:XValidation:rule="self.type != 'Cron' || (has(self.schedule) && has(self.duration))",message="schedule and duration are required for type Cron"
// +kubebuilder:validation:XValidation:rule="self.type != 'Cron' || (!has(self.startTime) && !has(self.endTime))",message="startTime and endTime are not used by type Cron: its windows open at each firing of schedule and last duration"
// +kubebuilder:validation:XValidation:rule="self.type == 'Cron' || (!has(self.schedule) && !has(self.duration))",message="schedule and duration are only used by type Cron"
// +kubebuilder:validation:XValidation:rule="self.type != 'Weekly' || (has(self.startDayOfWeek) && has(self.endDayOfWeek))",message="startDayOfWeek and endDayOfWeek are required for type Weekly"
// +kubebuilder:validation:XValidation:rule="self.type == 'Weekly' || (!has(self.startDayOfWeek) && !has(self.endDayOfWeek))",message="startDayOfWeek and endDayOfWeek are only used by type Weekly"
// +kubebuilder:validation:XValidation:rule="self.type == 'Cron' || !has(self.businessDays)",message="businessDays is only used by type Cron, with a business-day form in schedule (LW, 15W, W#2)",fieldPath=".businessDays"
// +kubebuilder:validation:XValidation:rule="self.type == 'Daily' || !has(self.daysOfWeek) || size(self.daysOfWeek) == 0",message="daysOfWeek is only used by type Daily: a Weekly window is one stretch from startDayOfWeek to endDayOfWeek; for the same hours on several days use type Daily with daysOfWeek",fieldPath=".daysOfWeek"
// +kubebuilder:validation:XValidation:rule="self.type != 'Daily' || !has(self.startTime) || self.startTime.matches('^([01][0-9]|2[0-3]):[0-5][0-9]$')",message="type Daily takes startTime as HH:mm on a 24-hour clock, e.g. \"09:30\"",fieldPath=".startTime"
// +kubebuilder:validation:XValidation:rule="self.type != 'Daily' || !has(self.endTime) || self.endTime.matches('^([01][0-9]|2[0-3]):[0-5][0-9]$')",message="type Daily takes endTime as HH:mm on a 24-hour clock, e.g. \"18:00\"",fieldPath=".endTime"
// +kubebuilder:validation:XValidation:rule="self.type != 'Weekly' || !has(self.startTime) || self.startTime.matches('^([01][0-9]|2[0-3]):[0-5][0-9]$')",message="type Weekly takes startTime as HH:mm on a 24-hour clock, e.g. \"09:30\"",fieldPath=".startTime"
// +kubebuilder:validation:XValidation:rule="self.type != 'Weekly' || !has(self.endTime) || self.endTime.matches('^([01][0-9]|2[0-3]):[0-5][0-9]$')",message="type Weekly takes endTime as HH:mm on a 24-hour clock, e.g. \"18:00\"",fieldPath=".endTime"
// +kubebuilder:validation:XValidation:rule="self.type != 'OneShot' || !has(self.startTime) || self.startTime.matches('^[0-9]{4}-[0-9]{2}-[0-9]{2}T([01][0-9]|2[0-3]):[0-5][0-9]$')",message="type OneShot takes startTime as yyyy-MM-ddTHH:mm, a wall time in timeZone, e.g. \"2027-09-01T10:00\"",fieldPath=".startTime"
// +kubebuilder:validation:XValidation:rule="self.type != 'OneShot' || !has(self.endTime) || self.endTime.matches('^[0-9]{4}-[0-9]{2}-[0-9]{2}T([01][0-9]|2[0-3]):[0-5][0-9]$')",message="type OneShot takes endTime as yyyy-MM-ddTHH:mm, a wall time in timeZone, e.g. \"2027-09-01T18:00\"",fieldPath=".endTime"
// +kubebuilder:validation:XValidation:rule="self.type == 'Cron' || self.type == 'OneShot' || !has(self.startTime) || !has(self.endTime) || self.startTime != self.endTime || (self.type == 'Weekly' && has(self.startDayOfWeek) && has(self.endDayOfWeek) && self.startDayOfWeek != self.endDayOfWeek)",message="the window is empty: the end must differ from the start",fieldPath=".endTime"
// +kubebuilder:validation:XValidation:rule="self.type != 'OneShot' || !has(self.startTime) || !has(self.endTime) || self.endTime > self.startTime",message="type OneShot needs endTime after startTime",fieldPath=".endTime"
type ScheduleSpec struct {
	// scaleTargetRef names the ScheduledPodAutoscaler, in the same namespace, whose
	// bounds this Schedule changes. Deleting that autoscaler does not delete its
	// Schedules.
	// +required
	ScaleTargetRef ScaleTargetReference `json:"scaleTargetRef"`

	// minReplicas is the autoscaler's minReplicas while the window is open. Omitted: the
	// baseline's value. While several Schedules are open the largest value wins. Zero only
	// where the autoscaler's target can scale to zero (a ScaledObject, or a workload
	// attached through its scale subresource); admission says why elsewhere.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// maxReplicas is the autoscaler's maxReplicas while the window is open. Omitted: the
	// baseline's value. While several Schedules are open the largest value wins; if the
	// result is below the effective minReplicas, maxReplicas is raised to it.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`

	// type of recurrence: Daily (startTime, endTime as HH:mm, every day or on daysOfWeek),
	// Weekly (one stretch from startDayOfWeek startTime to endDayOfWeek endTime), OneShot
	// (startTime, endTime as yyyy-MM-ddTHH:mm) or Cron (schedule, duration). Windows are
	// half-open: [start, end).
	// +required
	Type ScheduleType `json:"type"`

	// startTime is when the window opens, a wall-clock time in timeZone: "HH:mm" for Daily
	// and Weekly, "yyyy-MM-ddTHH:mm" for OneShot ("H:mm", seconds ":00", and for OneShot
	// RFC 3339 with an offset are accepted and normalized at admission). A time that does
	// not exist on a day (skipped by a daylight-saving change) means the instant the
	// clocks jumped; a time that occurs twice means its first occurrence.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	StartTime string `json:"startTime,omitempty"`

	// endTime is when the window closes (the window is [startTime, endTime)), in the same
	// format as startTime. For Daily, an endTime at or before startTime means the window
	// crosses midnight ("22:00" to "02:00"); for OneShot it must be after startTime.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	EndTime string `json:"endTime,omitempty"`

	// startDayOfWeek is the day on which a Weekly window opens: Monday … Sunday
	// (case-insensitive names and three-letter abbreviations are normalized at admission).
	// +optional
	// +kubebuilder:validation:Enum=Monday;Tuesday;Wednesday;Thursday;Friday;Saturday;Sunday
	StartDayOfWeek string `json:"startDayOfWeek,omitempty"`

	// endDayOfWeek is the day on which a Weekly window closes: the window runs to the next
	// occurrence of endDayOfWeek endTime after the start, in one stretch, so Friday 18:00 to
	// Monday 08:00 crosses the weekend, and Monday 11:50 to Wednesday 13:00 lasts 49 hours 10
	// minutes. For the same hours on each of several days, use type Daily with daysOfWeek.
	// +optional
	// +kubebuilder:validation:Enum=Monday;Tuesday;Wednesday;Thursday;Friday;Saturday;Sunday
	EndDayOfWeek string `json:"endDayOfWeek,omitempty"`

	// daysOfWeek (type Daily) are the days on which the window opens: Monday … Sunday
	// (case-insensitive names and three-letter abbreviations are normalized at admission,
	// which also sorts them Monday first and drops repeats). A window that crosses midnight
	// belongs to the day it opens: Friday 22:00 to 02:00 is open early on Saturday, not early
	// on Friday. Omitted or empty: every day. For example [Monday, Tuesday, Wednesday,
	// Thursday, Friday] with 09:00 to 18:00 is open on weekdays.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=7
	// +kubebuilder:validation:items:Enum=Monday;Tuesday;Wednesday;Thursday;Friday;Saturday;Sunday
	DaysOfWeek []string `json:"daysOfWeek,omitempty"`

	// schedule (type Cron) is a 5-field cron expression (minute hour day-of-month month
	// day-of-week) or one of @yearly, @annually, @monthly, @weekly, @daily, @midnight,
	// @hourly, evaluated in timeZone. Each firing opens a window of duration. The
	// day-of-month field also takes L (the month's last day), L-3 (three days before it), LW
	// (the last business day), 15W (the business day nearest the 15th, within the month) and
	// W#2 (the second business day); the day-of-week field MON#1 (the first Monday) and FRIL
	// or 5L (the last Friday). A business day is one of businessDays that the calendars leave
	// open at the schedule's first time of day. @every and TZ= prefixes are rejected (use
	// timeZone). A firing time skipped by a daylight-saving change fires at the instant the
	// clocks jumped; a repeated one fires once.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Schedule string `json:"schedule,omitempty"`

	// businessDays (type Cron) are the days of the week that count as business days for the
	// business-day forms of schedule (LW, 15W, W#2): Monday … Sunday (case-insensitive names
	// and three-letter abbreviations are normalized at admission). Omitted: Monday to
	// Friday. Holidays are not listed here: a day that a skip calendar of spec.calendars
	// closes (or, with only, that no only calendar opens) at the schedule's first time of day
	// is not a business day either. Only a schedule with a business-day form may set it.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=7
	// +kubebuilder:validation:items:Enum=Monday;Tuesday;Wednesday;Thursday;Friday;Saturday;Sunday
	BusinessDays []string `json:"businessDays,omitempty"`

	// duration (type Cron) is how long each window stays open, as a Go duration
	// ("90m", "1h30m"); at least 1m and at most 8784h (366 days). Windows that touch or
	// overlap merge into one. A schedule that opens more than 8,784 separate windows in 366
	// days (one an hour on average) is refused: open it less often, or make the windows
	// long enough to merge.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	Duration string `json:"duration,omitempty"`

	// timeZone is the IANA time zone name in which the times and days above are read,
	// e.g. "Asia/Tokyo". Default UTC. Admission stores the canonical spelling
	// ("asia/tokyo" → "Asia/Tokyo"; "Z", "GMT", "Etc/UTC" → "UTC") and turns whole-hour
	// offsets into Etc zones ("+09:00" → "Etc/GMT-9"); unknown names are rejected with
	// suggestions. An empty string is rejected: omit the field for UTC.
	// +optional
	// +kubebuilder:default=UTC
	// +kubebuilder:validation:XValidation:rule="self != ''",message="timeZone is empty: omit the field for UTC, or write an IANA time zone name such as \"Europe/Berlin\""
	// +kubebuilder:validation:MaxLength=64
	TimeZone string `json:"timeZone,omitempty"`

	// suspend, when true, keeps this Schedule's windows from changing the autoscaler.
	// Default false.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// calendars cut the windows: no window is open on an instant of a skip calendar, and,
	// when only is given, on an instant outside every only calendar (a 22:00–02:00 window
	// before a holiday closes at midnight). A calendar that does not exist holds the
	// Schedule closed until it does (condition Valid says so).
	// +optional
	Calendars *calendarv1alpha1.Calendars `json:"calendars,omitempty"`
}

// ScheduleStatus is the observed state of a Schedule.
type ScheduleStatus struct {
	// observedGeneration is the metadata.generation that this status describes. It reads 0
	// until the controller has written a status (a default of the schema), so that a new
	// object is seen as not yet reconciled: by kstatus (Flux, kpt, `kubectl wait`) as
	// InProgress, by the Argo CD health checks as Progressing (docs/gitops.md).
	// +optional
	// +kubebuilder:default=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// phase is Scheduled while windows are to come, Suspended, Completed once the last
	// window has closed (a OneShot's), or Invalid. It is written when the spec changes and
	// when the last window closes, never at each window's boundaries: those are the
	// autoscaler's status (activeSchedules, nextTransitionTime), which a boundary writes
	// anyway, and `almanac preview` shows the windows to come.
	// +optional
	Phase SchedulePhase `json:"phase,omitempty"`

	// conditions: Valid says whether the Schedule can be evaluated (a bad time zone or
	// cron expression that slipped past admission is reported here).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Schedule raises or lowers the bounds of a ScheduledPodAutoscaler while its window is
// open. Overlapping Schedules combine as the largest minReplicas and the largest
// maxReplicas; outside every window the autoscaler's baseline applies.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=almanac
// +kubebuilder:printcolumn:name="Reference",type=string,JSONPath=`.spec.scaleTargetRef.name`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="StartTime",type=string,JSONPath=`.spec.startTime`,priority=1
// +kubebuilder:printcolumn:name="EndTime",type=string,JSONPath=`.spec.endTime`,priority=1
// +kubebuilder:printcolumn:name="StartDayOfWeek",type=string,JSONPath=`.spec.startDayOfWeek`,priority=1
// +kubebuilder:printcolumn:name="EndDayOfWeek",type=string,JSONPath=`.spec.endDayOfWeek`,priority=1
// +kubebuilder:printcolumn:name="DaysOfWeek",type=string,JSONPath=`.spec.daysOfWeek`,priority=1
// +kubebuilder:printcolumn:name="TimeZone",type=string,JSONPath=`.spec.timeZone`,priority=1
// +kubebuilder:printcolumn:name="MinPods",type=integer,JSONPath=`.spec.minReplicas`
// +kubebuilder:printcolumn:name="MaxPods",type=integer,JSONPath=`.spec.maxReplicas`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Schedule struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the window and the bounds it applies.
	// +required
	Spec ScheduleSpec `json:"spec"`

	// status is written by the controller.
	// +optional
	// +kubebuilder:default={}
	Status ScheduleStatus `json:"status,omitempty"`
}

// ScheduleList is a list of Schedules.
//
// +kubebuilder:object:root=true
type ScheduleList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Schedule `json:"items"`
}
