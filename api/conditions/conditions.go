// Package conditions sets status conditions the same way in every reconciler. It is a pure
// function over the API types (apimachinery only), so it lives in api/ beside them, where
// every reconciler can import it without importing another reconciler.
package conditions

import (
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
