package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
)

// ScheduledJobPhase summarizes where a ScheduledJob stands.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed;Missed;Skipped
type ScheduledJobPhase string

const (
	// ScheduledJobPhasePending: no Job runs now; a run is due later.
	ScheduledJobPhasePending ScheduledJobPhase = "Pending"
	// ScheduledJobPhaseRunning: a Job of this ScheduledJob runs now.
	ScheduledJobPhaseRunning ScheduledJobPhase = "Running"
	// ScheduledJobPhaseSucceeded: the one-shot's Job completed.
	ScheduledJobPhaseSucceeded ScheduledJobPhase = "Succeeded"
	// ScheduledJobPhaseFailed: the one-shot's Job failed.
	ScheduledJobPhaseFailed ScheduledJobPhase = "Failed"
	// ScheduledJobPhaseMissed: the one-shot could not be started before at +
	// startingDeadlineSeconds, so it was not run.
	ScheduledJobPhaseMissed ScheduledJobPhase = "Missed"
	// ScheduledJobPhaseSkipped: the one-shot's instant was in a skip calendar (or outside
	// every only calendar), so it was not run.
	ScheduledJobPhaseSkipped ScheduledJobPhase = "Skipped"
)

// ScheduledJobSpec says when to run a Job: once at an instant (at) or on a cron schedule.
//
// +kubebuilder:validation:XValidation:rule="has(self.at) != has(self.schedule)",message="exactly one of at and schedule is required: at runs the Job once, schedule runs it on a cron schedule"
// +kubebuilder:validation:XValidation:rule="!has(self.businessDays) || has(self.schedule)",message="businessDays are for the business-day forms of a cron schedule (LW, 15W, W#2): set them only with schedule",fieldPath=".businessDays"
// +kubebuilder:validation:XValidation:rule="!has(self.spread) || has(self.schedule)",message="spread shifts the slots of a cron schedule: set it only with schedule (remove spread from a ScheduledJob that runs once at)",fieldPath=".spread"
// +kubebuilder:validation:XValidation:rule="!has(self.at) || self.at.matches('^[0-9]{4}-[0-9]{2}-[0-9]{2}T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?$')",message="at is a wall time in timeZone written yyyy-MM-ddTHH:mm, or yyyy-MM-ddTHH:mm:ss to the second, e.g. \"2027-09-01T10:00\" or \"2027-09-01T10:00:30\"",fieldPath=".at"
type ScheduledJobSpec struct {
	// at runs the Job once, at this wall-clock time in timeZone, written
	// "yyyy-MM-ddTHH:mm", or "yyyy-MM-ddTHH:mm:ss" for a time to the second (seconds ":00"
	// are dropped at admission; RFC 3339 with an offset or Z is accepted and converted to
	// the wall time in timeZone). A time skipped by a daylight-saving change means the
	// instant the clocks jumped; a repeated time means its first occurrence. A time whose
	// deadline (at + startingDeadlineSeconds) has passed is rejected on create.
	// Exactly one of at and schedule.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	At string `json:"at,omitempty"`

	// schedule runs the Job on a cron schedule evaluated in timeZone: 5 fields (minute
	// hour day-of-month month day-of-week) or @yearly, @annually, @monthly, @weekly,
	// @daily, @midnight, @hourly. The day-of-month field also takes L (the month's last
	// day), L-3 (three days before it), LW (the last business day), 15W (the business day
	// nearest the 15th, within the month) and W#2 (the second business day); the
	// day-of-week field MON#1 (the first Monday) and FRIL or 5L (the last Friday). A
	// business day is one of businessDays that the calendars leave open at the schedule's
	// first time of day, so a run that a business-day form picks is never skipped by a
	// calendar. Each wall-clock slot runs at most once: a slot skipped by a daylight-saving
	// change runs at the instant the clocks jumped, a repeated slot runs once. @every and
	// TZ= prefixes are rejected (use timeZone). A timestamp given here is moved to at by
	// admission. Exactly one of at and schedule; an empty schedule (and no at) is rejected.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Schedule string `json:"schedule,omitempty"`

	// businessDays (only with schedule) are the days of the week that count as business
	// days for the business-day forms of schedule (LW, 15W, W#2): Monday … Sunday
	// (case-insensitive names and three-letter abbreviations are normalized at admission).
	// Omitted: Monday to Friday. Holidays are not listed here: a day that a skip calendar of
	// spec.calendars closes (or, with only, that no only calendar opens) at the schedule's
	// first time of day is not a business day either. Only a schedule with a business-day
	// form may set it.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=7
	// +kubebuilder:validation:items:Enum=Monday;Tuesday;Wednesday;Thursday;Friday;Saturday;Sunday
	BusinessDays []string `json:"businessDays,omitempty"`

	// timeZone is the IANA time zone name in which at and schedule are read, e.g.
	// "Europe/Berlin". Default UTC. Admission stores the canonical spelling and turns
	// whole-hour offsets into Etc zones ("+09:00" → "Etc/GMT-9"). An empty string is
	// rejected: omit the field for UTC.
	// +optional
	// +kubebuilder:default=UTC
	// +kubebuilder:validation:XValidation:rule="self != ''",message="timeZone is empty: omit the field for UTC, or write an IANA time zone name such as \"Europe/Berlin\""
	// +kubebuilder:validation:MaxLength=64
	TimeZone string `json:"timeZone,omitempty"`

	// startingDeadlineSeconds is how late, in seconds after its nominal time, a run may
	// still start. A one-shot that cannot start in time becomes Missed; a cron slot that
	// cannot start in time is counted in status.missedRuns. After downtime only the latest
	// missed slot within the deadline runs. Default 600; at most 315360000 (3650 days, about
	// ten years): to let a run start however late, write 315360000.
	// +optional
	// +kubebuilder:default=600
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=315360000
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`

	// spread (only with schedule) shifts every slot by the same offset in [0, spread), a
	// whole number of seconds derived from the ScheduledJob's namespace and name, so that
	// ScheduledJobs of one schedule (every "0 0 * * *" of a cluster) do not all start in the
	// same second. A Go duration of whole seconds from 1s to 1h, e.g. "5m". The shifted
	// instant is the slot's nominal time: the Job's name and scheduled-time annotation,
	// status.lastScheduleTime and nextScheduleTime hold it, startingDeadlineSeconds counts
	// from it, and `almanac preview` shows it. Every slot moves by the same offset, so slots
	// stay in order even when spread is longer than the time between them. Changing spread
	// (or recreating the ScheduledJob under another name) moves the slots.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$')",message="spread is a Go duration of whole seconds from 1s to 1h, written with digits and the units h, m and s, e.g. \"5m\" or \"90s\""
	Spread string `json:"spread,omitempty"`

	// calendars skip slots: a slot (cron or at) whose nominal instant is in a skip
	// calendar, or outside every only calendar when only is given, does not run and is
	// counted in status.skippedRuns, not missed. A calendar that does not exist skips every
	// slot until it does (condition Ready says so).
	// +optional
	Calendars *calendarv1alpha1.Calendars `json:"calendars,omitempty"`

	JobPolicy `json:",inline"`
}

// ScheduledJobStatus is the observed state of a ScheduledJob.
type ScheduledJobStatus struct {
	// observedGeneration is the metadata.generation that this status describes. It reads 0
	// until the controller has written a status (a default of the schema), so that a new
	// object is seen as not yet reconciled: by kstatus (Flux, kpt, `kubectl wait`) as
	// InProgress, by the Argo CD health checks as Progressing (docs/gitops.md).
	// +optional
	// +kubebuilder:default=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// phase: Pending until a Job runs, Running while one does; a one-shot then ends
	// Succeeded or Failed with its Job, or Missed when it could not start before its
	// deadline.
	// +optional
	Phase ScheduledJobPhase `json:"phase,omitempty"`

	// lastScheduleTime is the nominal time (UTC) of the latest slot that was run. It is the
	// record of what ran: a slot at or before it never runs again, even if its Job is
	// deleted.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// nextScheduleTime is the nominal time (UTC) of the next run.
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`

	// active lists the Jobs of this ScheduledJob that are running, at most 1024: when more
	// run, the oldest are left out and counted in activeOverflow.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1024
	Active []corev1.ObjectReference `json:"active,omitempty"`

	// activeOverflow counts the running Jobs that active leaves out because it is full (the
	// oldest ones). Absent when active lists every running Job.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ActiveOverflow int32 `json:"activeOverflow,omitempty"`

	// missedRuns counts the slots that were due but not run (the controller was down past
	// the deadline, or the run was skipped).
	// +optional
	MissedRuns int64 `json:"missedRuns,omitempty"`

	// lastMissedTime is the nominal time (UTC) of the latest slot that was not run.
	// +optional
	LastMissedTime *metav1.Time `json:"lastMissedTime,omitempty"`

	// skippedRuns counts the slots that calendars skipped (spec.calendars).
	// +optional
	SkippedRuns int64 `json:"skippedRuns,omitempty"`

	// lastSkippedTime is the nominal time (UTC) of the latest slot that calendars skipped.
	// +optional
	LastSkippedTime *metav1.Time `json:"lastSkippedTime,omitempty"`

	// lastSkippedReason names the calendar entries that skipped that slot ("Christmas Day
	// (Calendar holidays)").
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	LastSkippedReason string `json:"lastSkippedReason,omitempty"`

	// spreadOffsetSeconds is the offset of spec.spread (seconds after each cron slot) with
	// which lastScheduleTime, lastMissedTime and lastSkippedTime were written. When spread
	// changes, the controller moves that record by the difference, so that the slot that ran
	// last does not run again at its new instant, and no slot is passed over uncounted.
	// +optional
	// +kubebuilder:validation:Minimum=0
	SpreadOffsetSeconds int64 `json:"spreadOffsetSeconds,omitempty"`

	// lastResumeTime is when spec.suspend last went from true to false (UTC, to the second,
	// as the API server recorded the write; when the write left no time, because it removed
	// the field instead of writing false, when the controller saw it): slots due before it
	// were counted as skipped (Suspended), and slots after it run as
	// startingDeadlineSeconds allows, whether or not the controller was running at the
	// resume.
	// +optional
	LastResumeTime *metav1.Time `json:"lastResumeTime,omitempty"`

	// runNow records the latest run-now request (the batch.almanac.dev/run-now annotation)
	// that was handled: a token recorded here never starts a Job again.
	// +optional
	RunNow *RunNowStatus `json:"runNow,omitempty"`

	// conditions of the ScheduledJob.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// RunNowStatus is the record of a run-now request.
type RunNowStatus struct {
	// token is the value of the batch.almanac.dev/run-now annotation that was handled.
	// +kubebuilder:validation:MaxLength=63
	Token string `json:"token"`

	// jobName is the Job started for it; absent when the request was refused.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	JobName string `json:"jobName,omitempty"`

	// time is when the request was handled (UTC): the instant its Job runs for, in the
	// Job's batch.almanac.dev/scheduled-time annotation.
	Time metav1.Time `json:"time"`

	// refused says why no Job was started (concurrencyPolicy Forbid while a Job runs, a Job
	// of that name that is not this ScheduledJob's); absent when one was.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Refused string `json:"refused,omitempty"`
}

// ScheduledJob runs a Job once at an instant (at) or on a cron schedule, in its own time zone,
// exactly once per slot.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=sj,categories=almanac
// +kubebuilder:printcolumn:name="At",type=string,JSONPath=`.spec.at`
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="TimeZone",type=string,JSONPath=`.spec.timeZone`
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Last",type=date,JSONPath=`.status.lastScheduleTime`
// +kubebuilder:printcolumn:name="Next",type=string,JSONPath=`.status.nextScheduleTime`
// +kubebuilder:printcolumn:name="Missed",type=integer,JSONPath=`.status.missedRuns`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ScheduledJob struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says when and what to run.
	// +required
	Spec ScheduledJobSpec `json:"spec"`

	// status is written by the controller.
	// +optional
	// +kubebuilder:default={}
	Status ScheduledJobStatus `json:"status,omitempty"`
}

// ScheduledJobList is a list of ScheduledJobs.
//
// +kubebuilder:object:root=true
type ScheduledJobList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ScheduledJob `json:"items"`
}
