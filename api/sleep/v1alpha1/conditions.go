package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/api/conditions"
)

// Condition types and reasons of Sleep and ClusterSleep.
const (
	// ConditionReady is True when the workloads are in the state the sleep's phase calls for
	// (or on their way: a wake under way), False when the sleep cannot do what it asks.
	ConditionReady = "Ready"
	// ReasonAsleep: the selected workloads sleep.
	ReasonAsleep = "Asleep"
	// ReasonAwake: the selected workloads are awake.
	ReasonAwake = "Awake"
	// ReasonWaking: a wake is under way; the message says which tier.
	ReasonWaking = "Waking"
	// ReasonSuspended: spec.suspend; everything the sleep held is awake.
	ReasonSuspended = "Suspended"
	// ReasonTierTimedOut: a tier was not Ready within spec.wake.tierTimeout and the next one
	// woke anyway; the message names the workloads that were not Ready.
	ReasonTierTimedOut = "TierTimedOut"
	// ReasonInvalidSpec: the windows or selectors cannot be evaluated (a spec stored without
	// admission); the message names the field.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonRequestRefused: the API server refused a write (RBAC, a policy, a quota).
	ReasonRequestRefused = conditions.ReasonRequestRefused
	// ReasonKindNotServed: a kind of spec.kinds is not served by the cluster or has no scale
	// subresource; the message names it.
	ReasonKindNotServed = "KindNotServed"
	// ReasonRecordUnreadable: a workload's record annotation was edited into something that
	// is not a record; the workload is left alone (the message names it and says what to do).
	ReasonRecordUnreadable = "RecordUnreadable"

	// ConditionContested is True while another field manager keeps putting a workload back
	// that this sleep holds asleep: after api/putback's bounded number of put-backs almanac
	// stops, and the message names the manager, the workload and the field, and the fix
	// (docs/gitops.md). It clears when the spec changes or the sleep ends; absent otherwise.
	ConditionContested = "Contested"
	// ReasonFieldManagerConflict: another field manager keeps writing a field almanac owns
	// during sleep.
	ReasonFieldManagerConflict = "FieldManagerConflict"
)

// terminal are the states that stall a sleep (kstatus's Stalled, Argo CD's Degraded).
var terminal = []conditions.Terminal{
	{Type: ConditionReady, Status: metav1.ConditionFalse, Reasons: []string{ReasonInvalidSpec, ReasonRequestRefused, ReasonKindNotServed, ReasonRecordUnreadable}},
	{Type: ConditionContested, Status: metav1.ConditionTrue, Reasons: []string{ReasonFieldManagerConflict}},
	{Type: calendarv1alpha1.ConditionCalendars, Status: metav1.ConditionFalse, Reasons: []string{calendarv1alpha1.ReasonCalendarNotUsable}},
}

// Stalled returns the sleep's Stalled condition from the rest of its status; nil when nothing
// stalls it.
func (st *SleepStatus) Stalled() *metav1.Condition {
	return conditions.Stalled(st.Conditions, terminal...)
}
