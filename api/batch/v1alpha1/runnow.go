package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Run now: a ScheduledJob runs one Job outside its schedule when its AnnotationRunNow takes a
// value (a token) it has not handled yet. The token is the request's identity: one Job per
// distinct token, exactly once (the Job's name comes from the token, and status.runNow
// records the token once handled), under spec.concurrencyPolicy (Forbid with a Job running
// refuses it, recorded as refused; Replace deletes the running Jobs first). Setting it is a
// request to create a Job: the webhooks' permission check asks whether its writer may create
// Jobs in the namespace, as for every other write that starts a Job (ScheduledJob.StartsJobs,
// startsjobs.go: the one rule of which writes those are). `almanac run` sets a fresh token and
// waits for the record.
const (
	// AnnotationRunNow on a ScheduledJob asks for one run now; its value is the token.
	AnnotationRunNow = "batch.almanac.dev/run-now"
	// AnnotationRunNowToken on a Job (and its Pod template) is the run-now token it was
	// started for. Its AnnotationScheduledTime is the instant the request was handled.
	AnnotationRunNowToken = "batch.almanac.dev/run-now-token" //nolint:gosec // an annotation's name, not a credential
)

// MaxRunNowTokenLength is the longest run-now token: status records it, and a Job annotation
// and an event message carry it.
const MaxRunNowTokenLength = 63

// runNowPrefix starts the suffix of a run-now Job's name: a slot's suffix has only digits, so
// the two never meet.
const runNowPrefix = "now"

// CheckRunNowToken returns an error, with the limit and the fix, when token cannot be a
// run-now token: 1 to 63 characters of letters, digits, '.', '_', '-' and ':'.
func CheckRunNowToken(token string) error {
	switch {
	case token == "":
		return fmt.Errorf("is empty: give a token (1 to %d letters, digits, '.', '_', '-' or ':'), such as the time of the request; `almanac run` sets one", MaxRunNowTokenLength)
	case len(token) > MaxRunNowTokenLength:
		return fmt.Errorf("has %d characters, more than the %d a run-now token may have: use a shorter token, such as the time of the request", len(token), MaxRunNowTokenLength)
	}
	if i := strings.IndexFunc(token, func(r rune) bool {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-:", r)
		return !ok
	}); i >= 0 {
		r, _ := utf8.DecodeRuneInString(token[i:])
		return fmt.Errorf("has %q at position %d: a run-now token has only letters, digits, '.', '_', '-' and ':'", r, i)
	}
	return nil
}

// RunNowPath is the field path of the run-now annotation, as admission names it.
var RunNowPath = field.NewPath("metadata", "annotations").Key(AnnotationRunNow)

// RunNowToken returns the run-now token asked for on obj; empty for none.
func RunNowToken(obj metav1.Object) string { return obj.GetAnnotations()[AnnotationRunNow] }

// RunNowJobName returns the name of the Job of a run-now token: "<owner>-now<the first 7 hex
// digits of the SHA-256 of the token>", 10 characters after the dash like a slot's, so that
// it fits the same name budget (MaxOwnerNameLength).
func RunNowJobName(owner, token string) string {
	sum := sha256.Sum256([]byte(token))
	return owner + "-" + runNowPrefix + hex.EncodeToString(sum[:])[:suffixLength-len(runNowPrefix)]
}

// IsRunNowJob reports whether a Job of owner's was started by a run-now request: by its
// annotation, or, if someone removed that, by its name.
func IsRunNowJob(owner string, annotations map[string]string, name string) bool {
	if _, ok := annotations[AnnotationRunNowToken]; ok {
		return true
	}
	rest, ok := strings.CutPrefix(name, owner+"-"+runNowPrefix)
	if !ok || len(rest) != suffixLength-len(runNowPrefix) {
		return false
	}
	_, err := hex.DecodeString(rest + "0") // an odd number of hex digits
	return err == nil
}
