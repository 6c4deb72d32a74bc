// Package conditions sets status conditions the same way in every reconciler. It is a pure
// function over the API types (apimachinery only), so it lives in api/ beside them, where
// every reconciler can import it without importing another reconciler.
package conditions

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Set sets c in conds with the object's generation. Its lastTransitionTime comes from now
// (the reconciler's injected clock, never time.Now), truncated to the second that the API
// stores, and changes only when the condition's status does.
func Set(conds *[]metav1.Condition, c metav1.Condition, generation int64, now time.Time) {
	c.ObservedGeneration = generation
	c.LastTransitionTime = metav1.NewTime(now.UTC().Truncate(time.Second))
	meta.SetStatusCondition(conds, c)
}

// TypeStalled is the condition that kstatus (sigs.k8s.io/cli-utils/pkg/kstatus/status, which
// Flux, kpt and Config Sync use) reads as Failed when True: the object cannot do what its spec
// asks until someone changes something (its spec, an object it names, the cluster). Its reason
// and message are those of the condition that stalls the object. It follows kstatus's
// abnormal-true convention: absent while nothing stalls the object.
//
// almanac sets no Reconciling condition (kstatus's InProgress): a reconcile does all of its
// work before it writes status, so there is no work outstanding once status.observedGeneration
// is the object's generation; before that, kstatus reports InProgress from observedGeneration
// alone (the schema defaults it to 0, so a new object without status is InProgress too).
// docs/gitops.md has what each kind reports in each state.
const TypeStalled = "Stalled"

// ReasonRequestRefused is the reason of the Ready condition, on every almanac kind that has
// one, while the API server refuses a request that the reconciler made (RBAC, an admission
// webhook or policy, a quota, an invalid object): the message has the API server's answer and
// what to change. Such a request is tried again about a minute later, or at the object's next
// instant if that is sooner, or at once when the object or an object it names changes. It is
// terminal (Stalled): someone must change something before the request passes.
const ReasonRequestRefused = "RequestRefused"

// Terminal is a state of a condition that stalls an object: a user must act.
type Terminal struct {
	// Type is the condition's type.
	Type string
	// Status is the condition's status in that state.
	Status metav1.ConditionStatus
	// Reasons are the condition's reasons in that state that stall the object.
	Reasons []string
}

// Stalled returns the Stalled condition that conds call for, given the terminal states of the
// kind: True with the reason and message of the first condition found in one of them (in the
// order of terminal), or nil when none is.
func Stalled(conds []metav1.Condition, terminal ...Terminal) *metav1.Condition {
	for _, t := range terminal {
		c := meta.FindStatusCondition(conds, t.Type)
		if c != nil && c.Status == t.Status && slices.Contains(t.Reasons, c.Reason) {
			return StalledBy(c.Reason, c.Message)
		}
	}
	return nil
}

// StalledBy returns a Stalled condition, True, with reason and message.
func StalledBy(reason, message string) *metav1.Condition {
	return &metav1.Condition{Type: TypeStalled, Status: metav1.ConditionTrue, Reason: reason, Message: message}
}

// SetStalled sets stalled (a condition from Stalled or StalledBy) in conds, or removes
// Stalled when stalled is nil; like Set, with the object's generation and now.
func SetStalled(conds *[]metav1.Condition, stalled *metav1.Condition, generation int64, now time.Time) {
	if stalled == nil {
		meta.RemoveStatusCondition(conds, TypeStalled)
		return
	}
	Set(conds, *stalled, generation, now)
}
