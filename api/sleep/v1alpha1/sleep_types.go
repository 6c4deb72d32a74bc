package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
)

// Limits of a sleep (docs/webhooks.md#limits): what the reconciler walks or multiplies at each
// reconcile is bounded by the schema, and admission refuses what would go past it.
const (
	// MaxWindows is the most windows of asleep or awake.
	MaxWindows = 16
	// MaxTiers is the most wake tiers.
	MaxTiers = 8
	// MaxKinds is the most kinds one sleep names.
	MaxKinds = 16
	// MaxNamespaces is the most namespaces a ClusterSleep names in spec.namespaces.
	MaxNamespaces = 256
	// MaxSelectorTerms is the most terms (matchLabels entries plus matchExpressions values,
	// each expression counting at least one) of one label selector.
	MaxSelectorTerms = 32
	// MaxLead is the longest a wake may start before its boundary.
	MaxLead = "24h"
	// MaxPodsPerMinute is the largest pace.
	MaxPodsPerMinute = 100000
)

// WindowType is the kind of recurrence of a sleep's window: the window types of Schedules.
// +kubebuilder:validation:Enum=Daily;Weekly;OneShot;Cron
type WindowType string

const (
	// WindowDaily opens every day (or on each of daysOfWeek) from startTime to endTime.
	WindowDaily WindowType = "Daily"
	// WindowWeekly opens every week from startDayOfWeek startTime to endDayOfWeek endTime.
	WindowWeekly WindowType = "Weekly"
	// WindowOneShot opens once, from startTime to endTime (yyyy-MM-ddTHH:mm).
	WindowOneShot WindowType = "OneShot"
	// WindowCron opens a window of duration at every firing of schedule.
	WindowCron WindowType = "Cron"
)

// Window is one window of a sleep, read exactly as a Schedule's: the same types, formats,
// zones and daylight-saving rule (docs/time-semantics.md). Windows are half-open, [start, end).
//
// +kubebuilder:validation:XValidation:rule="self.type == 'Cron' || (has(self.startTime) && has(self.endTime))",message="startTime and endTime are required for type Daily, Weekly and OneShot"
// +kubebuilder:validation:XValidation:rule="self.type != 'Cron' || (has(self.schedule) && has(self.duration))",message="schedule and duration are required for type Cron"
// +kubebuilder:validation:XValidation:rule="self.type != 'Cron' || (!has(self.startTime) && !has(self.endTime))",message="startTime and endTime are not used by type Cron: its windows open at each firing of schedule and last duration"
// +kubebuilder:validation:XValidation:rule="self.type == 'Cron' || (!has(self.schedule) && !has(self.duration))",message="schedule and duration are only used by type Cron"
// +kubebuilder:validation:XValidation:rule="self.type != 'Weekly' || (has(self.startDayOfWeek) && has(self.endDayOfWeek))",message="startDayOfWeek and endDayOfWeek are required for type Weekly"
// +kubebuilder:validation:XValidation:rule="self.type == 'Weekly' || (!has(self.startDayOfWeek) && !has(self.endDayOfWeek))",message="startDayOfWeek and endDayOfWeek are only used by type Weekly"
// +kubebuilder:validation:XValidation:rule="self.type == 'Cron' || !has(self.businessDays)",message="businessDays is only used by type Cron, with a business-day form in schedule (LW, 15W, W#2)",fieldPath=".businessDays"
// +kubebuilder:validation:XValidation:rule="self.type == 'Daily' || !has(self.daysOfWeek) || size(self.daysOfWeek) == 0",message="daysOfWeek is only used by type Daily: a Weekly window is one stretch from startDayOfWeek to endDayOfWeek; for the same hours on several days use type Daily with daysOfWeek",fieldPath=".daysOfWeek"
// +kubebuilder:validation:XValidation:rule="self.type == 'Cron' || self.type == 'OneShot' || !has(self.startTime) || !has(self.endTime) || self.startTime != self.endTime || (self.type == 'Weekly' && has(self.startDayOfWeek) && has(self.endDayOfWeek) && self.startDayOfWeek != self.endDayOfWeek)",message="the window is empty: the end must differ from the start",fieldPath=".endTime"
type Window struct {
	// type of recurrence: Daily (startTime, endTime as HH:mm, every day or on daysOfWeek),
	// Weekly (one stretch from startDayOfWeek startTime to endDayOfWeek endTime), OneShot
	// (startTime, endTime as yyyy-MM-ddTHH:mm) or Cron (schedule, duration).
	// +required
	Type WindowType `json:"type"`

	// startTime is when the window opens, a wall-clock time in timeZone: "HH:mm" for Daily
	// and Weekly, "yyyy-MM-ddTHH:mm" for OneShot (admission normalizes "H:mm", seconds and,
	// for OneShot, RFC 3339 with an offset). A time skipped by a daylight-saving change means
	// the instant the clocks jumped; a repeated one, its first occurrence.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	StartTime string `json:"startTime,omitempty"`

	// endTime is when the window closes, in the same format as startTime. For Daily, an
	// endTime at or before startTime crosses midnight ("20:00" to "07:00").
	// +optional
	// +kubebuilder:validation:MaxLength=64
	EndTime string `json:"endTime,omitempty"`

	// startDayOfWeek is the day on which a Weekly window opens: Monday … Sunday.
	// +optional
	// +kubebuilder:validation:Enum=Monday;Tuesday;Wednesday;Thursday;Friday;Saturday;Sunday
	StartDayOfWeek string `json:"startDayOfWeek,omitempty"`

	// endDayOfWeek is the day on which a Weekly window closes (Friday 19:00 to Monday 07:00
	// is one stretch over the weekend).
	// +optional
	// +kubebuilder:validation:Enum=Monday;Tuesday;Wednesday;Thursday;Friday;Saturday;Sunday
	EndDayOfWeek string `json:"endDayOfWeek,omitempty"`

	// daysOfWeek (type Daily) are the days on which the window opens; omitted or empty:
	// every day. A window that crosses midnight belongs to the day it opens.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=7
	// +kubebuilder:validation:items:Enum=Monday;Tuesday;Wednesday;Thursday;Friday;Saturday;Sunday
	DaysOfWeek []string `json:"daysOfWeek,omitempty"`

	// schedule (type Cron) is a 5-field cron expression or a macro (@daily …), read in
	// timeZone, with the day forms of Schedules (L, LW, 15W, W#2, MON#1, FRIL). Each firing
	// opens a window of duration.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Schedule string `json:"schedule,omitempty"`

	// businessDays (type Cron) are the weekdays that the business-day forms of schedule
	// count; omitted: Monday to Friday.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=7
	// +kubebuilder:validation:items:Enum=Monday;Tuesday;Wednesday;Thursday;Friday;Saturday;Sunday
	BusinessDays []string `json:"businessDays,omitempty"`

	// duration (type Cron) is how long each window stays open, a Go duration ("10h"), from
	// 1m to 8784h.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	Duration string `json:"duration,omitempty"`

	// timeZone is the IANA time zone in which the times and days above are read. Default
	// UTC; admission stores the canonical spelling. An empty string is rejected.
	// +optional
	// +kubebuilder:default=UTC
	// +kubebuilder:validation:XValidation:rule="self != ''",message="timeZone is empty: omit the field for UTC, or write an IANA time zone name such as \"Europe/Berlin\""
	// +kubebuilder:validation:MaxLength=64
	TimeZone string `json:"timeZone,omitempty"`
}

// WorkloadKind names a kind of workload that a sleep puts to sleep.
type WorkloadKind struct {
	// apiVersion of the kind, e.g. "apps/v1", "argoproj.io/v1alpha1".
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	APIVersion string `json:"apiVersion"`
	// kind, e.g. Deployment, Rollout.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`
}

// LeadMode says where the lead of a wake comes from.
// +kubebuilder:validation:Enum=Auto;Fixed;Off
type LeadMode string

const (
	// LeadAuto learns the lead from the measured durations of earlier wakes
	// (timing.LearnedLead), fixed until one was measured.
	LeadAuto LeadMode = "Auto"
	// LeadFixed starts every wake fixed before its boundary.
	LeadFixed LeadMode = "Fixed"
	// LeadOff starts every wake at its boundary.
	LeadOff LeadMode = "Off"
)

// Lead is how early a wake starts, so that the last tier is Ready at the wake boundary.
type Lead struct {
	// mode: Auto (the default) learns the lead from the last measured wakes (a high
	// percentile plus a margin, capped by max), using fixed until a wake was measured; Fixed
	// starts each wake fixed early; Off starts it at the boundary.
	// +optional
	// +kubebuilder:default=Auto
	Mode LeadMode `json:"mode,omitempty"`
	// fixed is the lead of mode Fixed, and of mode Auto before any wake was measured, e.g.
	// "2m". Default 0. At most max.
	// +optional
	Fixed *metav1.Duration `json:"fixed,omitempty"`
	// max caps the lead. Default 1h; at most 24h.
	// +optional
	Max *metav1.Duration `json:"max,omitempty"`
}

// Tier is one step of an ordered wake.
type Tier struct {
	// name of the tier, for status and messages, e.g. "databases".
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// selector selects the tier's workloads by their labels. A workload is in the first
	// tier whose selector matches it; workloads that no tier matches wake last, after every
	// tier.
	// +required
	Selector metav1.LabelSelector `json:"selector"`
}

// Wake is how the workloads wake.
type Wake struct {
	// tiers wake in order: each tier's workloads are put back only once every workload of
	// the tiers before it reports Ready (readyReplicas), or tierTimeout after that tier's
	// wake began. At most 8.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	Tiers []Tier `json:"tiers,omitempty"`

	// podsPerMinute is the most Pods that a wake starts within any minute, across every
	// namespace and tier of this sleep (the replicas it puts back). A workload with more
	// replicas than that wakes alone, in a minute of its own. Omitted: no limit.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	PodsPerMinute *int32 `json:"podsPerMinute,omitempty"`

	// tierTimeout is how long a tier may take to be Ready before the next one wakes anyway
	// (condition Ready says so). Default 10m; at most 1h.
	// +optional
	TierTimeout *metav1.Duration `json:"tierTimeout,omitempty"`

	// lead is how early the wake starts, so that the last tier is Ready at the wake boundary.
	// +optional
	Lead Lead `json:"lead,omitempty"`
}

// SleepSpec is when the selected workloads sleep, which ones, and how they wake.
//
// +kubebuilder:validation:XValidation:rule="(has(self.asleep) && size(self.asleep) > 0) != (has(self.awake) && size(self.awake) > 0)",message="exactly one of asleep (the windows in which the workloads sleep) and awake (the windows in which they are awake; they sleep at every other instant) is required"
type SleepSpec struct {
	// asleep are the windows in which the selected workloads sleep; they are awake at every
	// other instant. Exactly one of asleep and awake. At most 16.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Asleep []Window `json:"asleep,omitempty"`

	// awake are the windows in which the selected workloads are awake; they sleep at every
	// other instant (awake on weekdays 07:00 to 19:00: asleep every night and all weekend).
	// Exactly one of asleep and awake. At most 16.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Awake []Window `json:"awake,omitempty"`

	// calendars cut the windows of asleep or awake as they cut a Schedule's (no window is
	// open on an instant of a skip calendar, nor, with only, outside every only calendar).
	// With awake, a skip calendar of holidays keeps the workloads asleep all day on a holiday;
	// with asleep, it keeps them awake then. A calendar that does not exist holds the windows
	// closed (condition Calendars says so).
	// +optional
	Calendars *calendarv1alpha1.Calendars `json:"calendars,omitempty"`

	// selector selects the workloads by their labels. Omitted: every workload of kinds. A
	// workload annotated almanac.dev/stay-awake ("true", or an RFC 3339 instant until which
	// it stays awake) is never put to sleep, and is woken if it sleeps.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	// kinds are the kinds of workload put to sleep. Deployments, StatefulSets, ReplicaSets
	// and any other kind with a scale subresource (an Argo Rollout) are scaled to 0; CronJobs,
	// ScheduledJobs and EventJobs are suspended; KEDA ScaledObjects are paused at 0 replicas
	// (autoscaling.keda.sh/paused-replicas), and the workload a ScaledObject scales is left
	// to it. Default (written at admission): apps/v1 Deployment, StatefulSet and ReplicaSet,
	// batch/v1 CronJob, batch.almanac.dev/v1alpha1 ScheduledJob and EventJob, keda.sh/v1alpha1
	// ScaledObject. At most 16.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Kinds []WorkloadKind `json:"kinds,omitempty"`

	// wake is how the workloads wake: tiers in order, a pace, and a lead.
	// +optional
	Wake Wake `json:"wake,omitempty"`

	// suspend, when true, wakes every workload this sleep holds and puts none to sleep.
	// Default false.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// SleepPhase is what a sleep is doing now.
// +kubebuilder:validation:Enum=Awake;Asleep;Waking;Suspended
type SleepPhase string

const (
	// PhaseAwake: outside its sleep, everything it selects is awake.
	PhaseAwake SleepPhase = "Awake"
	// PhaseAsleep: within its sleep; what it selects is put to sleep.
	PhaseAsleep SleepPhase = "Asleep"
	// PhaseWaking: a wake is under way (tiers, pace), from the lead before the boundary
	// until every workload it woke is Ready.
	PhaseWaking SleepPhase = "Waking"
	// PhaseSuspended: spec.suspend; everything it held is woken.
	PhaseSuspended SleepPhase = "Suspended"
)

// WorkloadCounts count the workloads a sleep selects, by state.
type WorkloadCounts struct {
	// selected is every workload selected (in every namespace, for a ClusterSleep).
	// +optional
	Selected int32 `json:"selected,omitempty"`
	// asleep are those this sleep holds asleep.
	// +optional
	Asleep int32 `json:"asleep,omitempty"`
	// awake are those awake.
	// +optional
	Awake int32 `json:"awake,omitempty"`
	// optedOut are those annotated almanac.dev/stay-awake.
	// +optional
	OptedOut int32 `json:"optedOut,omitempty"`
	// contested are those that another field manager keeps putting back (condition
	// Contested).
	// +optional
	Contested int32 `json:"contested,omitempty"`
	// heldElsewhere are those asleep under another Sleep or ClusterSleep (the first to put a
	// workload to sleep holds it until it wakes it).
	// +optional
	HeldElsewhere int32 `json:"heldElsewhere,omitempty"`
	// notSlept are those left awake because almanac cannot put them to sleep as this sleep
	// asks (a workload that a ScaledObject scales while ScaledObject is not among kinds).
	// +optional
	NotSlept int32 `json:"notSlept,omitempty"`
}

// ContestedWorkload is a workload whose sleep another field manager keeps undoing.
type ContestedWorkload struct {
	// namespace of the workload.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// kind of the workload.
	Kind string `json:"kind"`
	// name of the workload.
	Name string `json:"name"`
	// manager is the field manager that put it back ("" when managedFields do not say).
	// +optional
	Manager string `json:"manager,omitempty"`
	// field is the field it wrote, e.g. spec.replicas.
	Field string `json:"field"`
}

// PaceEntry is the Pods that a wake started in one second.
type PaceEntry struct {
	// time is the second.
	Time metav1.Time `json:"time"`
	// pods started then.
	Pods int32 `json:"pods"`
}

// WakeProgress is the wake under way.
type WakeProgress struct {
	// boundary is when the sleep ends: the last tier is to be Ready by then.
	Boundary metav1.Time `json:"boundary"`
	// startedAt is when the wake put back its first workload.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// tier is the index of the tier waking now (len(spec.wake.tiers): the workloads of no
	// tier).
	// +optional
	Tier int32 `json:"tier"`
	// tierStartedAt is when that tier began to wake.
	// +optional
	TierStartedAt *metav1.Time `json:"tierStartedAt,omitempty"`
	// paced are the Pods started within the last minute, per second (spec.wake.podsPerMinute).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=61
	Paced []PaceEntry `json:"paced,omitempty"`
}

// MeasuredWake is one wake that finished: what the learned lead is made of.
type MeasuredWake struct {
	// boundary is when the sleep ended.
	Boundary metav1.Time `json:"boundary"`
	// startedAt is when the wake put back its first workload.
	StartedAt metav1.Time `json:"startedAt"`
	// readyAt is when the last workload it woke was Ready.
	ReadyAt metav1.Time `json:"readyAt"`
	// duration is readyAt − startedAt.
	Duration metav1.Duration `json:"duration"`
	// lateness is max(0, readyAt − boundary): 0 when the wake was Ready on time.
	Lateness metav1.Duration `json:"lateness"`
}

// LeadStatus is the lead in force.
type LeadStatus struct {
	// duration of the lead.
	Duration metav1.Duration `json:"duration"`
	// source: Off, Fixed, or Learned (from measured wakes).
	Source string `json:"source"`
	// samples is how many measured wakes it was learned from.
	// +optional
	Samples int32 `json:"samples,omitempty"`
}

// Reclaimed is what a sleep saved: the Pods it kept from running and their requests, over
// time. CPU is in millicores, memory in mebibytes; each multiplied by seconds asleep.
type Reclaimed struct {
	// podSeconds are Pod-seconds not run (a Pod-hour is 3600).
	// +optional
	PodSeconds int64 `json:"podSeconds,omitempty"`
	// cpuMillicoreSeconds are CPU requests not held, in millicore-seconds (a core-hour is
	// 3,600,000).
	// +optional
	CPUMillicoreSeconds int64 `json:"cpuMillicoreSeconds,omitempty"`
	// memoryMebibyteSeconds are memory requests not held, in MiB-seconds (a GiB-hour is
	// 3,686,400).
	// +optional
	MemoryMebibyteSeconds int64 `json:"memoryMebibyteSeconds,omitempty"`
}

// Savings is what sleeping saved.
type Savings struct {
	// asleepPods, asleepCPUMillicores and asleepMemoryMebibytes are what is asleep now: the
	// replicas put to sleep and their Pods' requests.
	// +optional
	AsleepPods int64 `json:"asleepPods,omitempty"`
	// +optional
	AsleepCPUMillicores int64 `json:"asleepCPUMillicores,omitempty"`
	// +optional
	AsleepMemoryMebibytes int64 `json:"asleepMemoryMebibytes,omitempty"`
	// accountedAt is the instant up to which the current sleep is counted.
	// +optional
	AccountedAt *metav1.Time `json:"accountedAt,omitempty"`
	// current is what the sleep under way has saved so far.
	// +optional
	Current Reclaimed `json:"current,omitempty"`
	// last is what the last finished sleep saved.
	// +optional
	Last Reclaimed `json:"last,omitempty"`
	// total is what every sleep of this object saved.
	// +optional
	Total Reclaimed `json:"total,omitempty"`
}

// SleepStatus is the observed state of a Sleep or ClusterSleep.
type SleepStatus struct {
	// observedGeneration is the metadata.generation that this status describes; 0 until the
	// controller has written a status.
	// +optional
	// +kubebuilder:default=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// phase is Awake, Asleep, Waking or Suspended.
	// +optional
	Phase SleepPhase `json:"phase,omitempty"`

	// nextTransitionTime is the next instant at which the sleep starts, or its wake starts
	// (the wake boundary minus the lead).
	// +optional
	NextTransitionTime *metav1.Time `json:"nextTransitionTime,omitempty"`

	// wakeTime is when the current (or next) sleep ends: its last tier is to be Ready then.
	// +optional
	WakeTime *metav1.Time `json:"wakeTime,omitempty"`

	// lead is the lead in force.
	// +optional
	Lead *LeadStatus `json:"lead,omitempty"`

	// namespaces is how many namespaces a ClusterSleep selects.
	// +optional
	Namespaces int32 `json:"namespaces,omitempty"`

	// workloads count the selected workloads by state.
	// +optional
	Workloads WorkloadCounts `json:"workloads,omitempty"`

	// contested are up to 16 of the workloads that another field manager keeps putting back
	// (workloads.contested counts them all).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Contested []ContestedWorkload `json:"contested,omitempty"`

	// wake is the wake under way.
	// +optional
	Wake *WakeProgress `json:"wake,omitempty"`

	// wakes are the last measured wakes, oldest first (at most 10).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	Wakes []MeasuredWake `json:"wakes,omitempty"`

	// savings is what sleeping saved.
	// +optional
	Savings Savings `json:"savings,omitempty"`

	// conditions: Ready (what the sleep did, or why it cannot), Contested (another field
	// manager keeps putting a workload back), Calendars (spec.calendars), Stalled.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Sleep puts the selected workloads of its namespace to sleep in its windows (scaled to 0,
// suspended, paused) and wakes them, in tiers and at a pace, exactly as they were.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=almanac
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Asleep",type=integer,JSONPath=`.status.workloads.asleep`
// +kubebuilder:printcolumn:name="Awake",type=integer,JSONPath=`.status.workloads.awake`
// +kubebuilder:printcolumn:name="Contested",type=integer,JSONPath=`.status.workloads.contested`,priority=1
// +kubebuilder:printcolumn:name="Next",type=string,JSONPath=`.status.nextTransitionTime`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Sleep struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is when and what sleeps, and how it wakes.
	// +required
	Spec SleepSpec `json:"spec"`

	// status is written by the controller.
	// +optional
	// +kubebuilder:default={}
	Status SleepStatus `json:"status,omitempty"`
}

// SleepList is a list of Sleeps.
//
// +kubebuilder:object:root=true
type SleepList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Sleep `json:"items"`
}

// ClusterSleepSpec is a SleepSpec for the workloads of many namespaces (the rules of SleepSpec
// apply to it too: controller-gen carries an inlined type's rules over).
//
// +kubebuilder:validation:XValidation:rule="has(self.namespaceSelector) || (has(self.namespaces) && size(self.namespaces) > 0)",message="at least one of namespaceSelector and namespaces is required: a ClusterSleep names the namespaces it puts to sleep (namespaceSelector {} selects every namespace but the system's and almanac's own)"
// +kubebuilder:validation:XValidation:rule="!has(self.calendars) || ((!has(self.calendars.skip) || self.calendars.skip.all(c, c.kind == 'ClusterCalendar')) && (!has(self.calendars.only) || self.calendars.only.all(c, c.kind == 'ClusterCalendar')))",message="a ClusterSleep names ClusterCalendars only (kind: ClusterCalendar): it has no namespace to find a Calendar in",fieldPath=".calendars"
type ClusterSleepSpec struct {
	SleepSpec `json:",inline"`

	// namespaceSelector selects namespaces by their labels; {} selects every namespace.
	// kube-system, kube-public, kube-node-lease and the namespace almanac runs in are never
	// put to sleep, nor a namespace annotated almanac.dev/stay-awake. At least one of
	// namespaceSelector and namespaces.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// namespaces names namespaces, each selected whatever its labels. At most 256.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=63
	Namespaces []string `json:"namespaces,omitempty"`
}

// ClusterSleep puts the selected workloads of the selected namespaces to sleep. Only cluster
// administrators write it (the aggregated roles let namespace users read it).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=almanac
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Namespaces",type=integer,JSONPath=`.status.namespaces`
// +kubebuilder:printcolumn:name="Asleep",type=integer,JSONPath=`.status.workloads.asleep`
// +kubebuilder:printcolumn:name="Awake",type=integer,JSONPath=`.status.workloads.awake`
// +kubebuilder:printcolumn:name="Contested",type=integer,JSONPath=`.status.workloads.contested`,priority=1
// +kubebuilder:printcolumn:name="Next",type=string,JSONPath=`.status.nextTransitionTime`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterSleep struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is when and what sleeps, where, and how it wakes.
	// +required
	Spec ClusterSleepSpec `json:"spec"`

	// status is written by the controller.
	// +optional
	// +kubebuilder:default={}
	Status SleepStatus `json:"status,omitempty"`
}

// ClusterSleepList is a list of ClusterSleeps.
//
// +kubebuilder:object:root=true
type ClusterSleepList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterSleep `json:"items"`
}
