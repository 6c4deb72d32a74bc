package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Limits of a calendar (docs/webhooks.md#limits): the engine turns every day and period into
// instants for each year it looks at, so their number is bounded.
const (
	// MaxDays is the most days one calendar lists.
	MaxDays = 1000
	// MaxPeriods is the most periods one calendar lists.
	MaxPeriods = 1000
	// MaxReferences is the most calendars one list of spec.calendars (skip or only) names.
	MaxReferences = 8
)

// CalendarSpec is a set of instants: whole days and periods, in one time zone.
type CalendarSpec struct {
	// timeZone is the IANA time zone name in which the days and periods are read, e.g.
	// "Europe/Berlin". Default UTC. Admission stores the canonical spelling, as for
	// Schedules. An empty string is rejected: omit the field for UTC.
	// +optional
	// +kubebuilder:default=UTC
	// +kubebuilder:validation:XValidation:rule="self != ''",message="timeZone is empty: omit the field for UTC, or write an IANA time zone name such as \"Europe/Berlin\""
	// +kubebuilder:validation:MaxLength=64
	TimeZone string `json:"timeZone,omitempty"`

	// days are whole days in timeZone, each from 00:00 to the next day's 00:00 (a midnight
	// skipped by a daylight-saving change means the instant the clocks jumped). A date is
	// "yyyy-MM-dd" for one day, or "MM-dd" for that day every year (a "02-29" is a day in
	// leap years only). At most 1000.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1000
	Days []CalendarDay `json:"days,omitempty"`

	// periods are stretches of time, each [start, end): wall times in timeZone, written
	// "yyyy-MM-ddTHH:mm". At most 1000.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1000
	Periods []CalendarPeriod `json:"periods,omitempty"`
}

// CalendarDay is one day of a calendar.
type CalendarDay struct {
	// date is "yyyy-MM-dd" for one day, or "MM-dd" for that day every year.
	// +required
	// +kubebuilder:validation:MaxLength=10
	// +kubebuilder:validation:Pattern=`^([0-9]{4}-)?[0-9]{2}-[0-9]{2}$`
	Date string `json:"date"`

	// name says what the day is ("Christmas Day"); previews, events and status show it.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Name string `json:"name,omitempty"`
}

// CalendarPeriod is one period of a calendar: [start, end).
type CalendarPeriod struct {
	// start is the first instant of the period, a wall time in timeZone,
	// "yyyy-MM-ddTHH:mm".
	// +required
	// +kubebuilder:validation:MaxLength=64
	Start string `json:"start"`

	// end is the first instant after the period, a wall time in timeZone,
	// "yyyy-MM-ddTHH:mm"; after start.
	// +required
	// +kubebuilder:validation:MaxLength=64
	End string `json:"end"`

	// name says what the period is ("Year-end freeze").
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Name string `json:"name,omitempty"`
}

// Calendar is a set of days and periods in a time zone (holidays, freezes, trading days) that
// the Schedules and ScheduledJobs of its namespace skip, or keep to, through spec.calendars.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=cal,categories=almanac
// +kubebuilder:printcolumn:name="TimeZone",type=string,JSONPath=`.spec.timeZone`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Calendar struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec lists the calendar's days and periods.
	// +required
	Spec CalendarSpec `json:"spec"`
}

// CalendarList is a list of Calendars.
//
// +kubebuilder:object:root=true
type CalendarList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Calendar `json:"items"`
}

// ClusterCalendar is a Calendar that the Schedules and ScheduledJobs of every namespace may
// reference (a country's public holidays, a company-wide freeze).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=ccal,categories=almanac
// +kubebuilder:printcolumn:name="TimeZone",type=string,JSONPath=`.spec.timeZone`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterCalendar struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec lists the calendar's days and periods.
	// +required
	Spec CalendarSpec `json:"spec"`
}

// ClusterCalendarList is a list of ClusterCalendars.
//
// +kubebuilder:object:root=true
type ClusterCalendarList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterCalendar `json:"items"`
}

// Kinds of calendar that a CalendarReference names.
const (
	KindCalendar        = "Calendar"
	KindClusterCalendar = "ClusterCalendar"
)

// Calendars is spec.calendars of a Schedule or ScheduledJob: the calendars whose instants it
// skips, and those it keeps to.
type Calendars struct {
	// skip: no window is open, and no run starts, on any instant of these calendars.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	Skip []CalendarReference `json:"skip,omitempty"`

	// only: when given, windows are open, and runs start, only on instants of at least one
	// of these calendars (and not of a skip calendar).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	Only []CalendarReference `json:"only,omitempty"`
}

// CalendarReference names a Calendar in the object's namespace, or a ClusterCalendar.
type CalendarReference struct {
	// kind is Calendar (in the object's namespace; the default) or ClusterCalendar.
	// +optional
	// +kubebuilder:default=Calendar
	// +kubebuilder:validation:Enum=Calendar;ClusterCalendar
	Kind string `json:"kind,omitempty"`

	// name of the calendar.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// String names the calendar as messages do: "Calendar holidays", "ClusterCalendar de-public".
func (r CalendarReference) String() string { return r.KindOrDefault() + " " + r.Name }

// KindOrDefault returns the reference's kind, Calendar when it is omitted.
func (r CalendarReference) KindOrDefault() string {
	if r.Kind == "" {
		return KindCalendar
	}
	return r.Kind
}

// Empty reports whether c names no calendar.
func (c *Calendars) Empty() bool { return c == nil || len(c.Skip) == 0 && len(c.Only) == 0 }

// References returns every calendar c names, skip ones first, each once.
func (c *Calendars) References() []CalendarReference {
	if c == nil {
		return nil
	}
	seen := map[CalendarReference]bool{}
	var out []CalendarReference
	for _, r := range append(append([]CalendarReference(nil), c.Skip...), c.Only...) {
		r.Kind = r.KindOrDefault()
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}
