package base

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
)

// RefusalRetry is how long a reconcile whose request the API server refused (Refused) waits
// before it tries again, unless the object's next instant (a boundary, a slot) comes sooner:
// a refusal is answered the same way until someone changes something (RBAC, an admission
// webhook or policy, a quota, the object), so retrying it every MaxRetryDelay would only load
// the API server (1,000 refused objects were 500 writes a second). A change of the object, or
// of what it names, brings a reconcile at once through the watches, as ever.
const RefusalRetry = time.Minute

// Refused reports whether err is the API server's refusal of a request: an answer that does
// not change by asking again. That is Forbidden (RBAC, an admission webhook's or a policy
// engine's denial, an exceeded ResourceQuota, a namespace being deleted), Invalid (a
// ValidatingAdmissionPolicy, a schema or CEL rule of the object), BadRequest,
// RequestEntityTooLarge, MethodNotAllowed, NotAcceptable and UnsupportedMediaType.
//
// Everything else is transient and retried soon with backoff: 5xx (an admission webhook that
// cannot be called answers 500), 429 (priority and fairness, a rate limit), timeouts,
// conflicts, connection errors, and Unauthorized (the kubelet rotates the ServiceAccount
// token, which the client reloads). NotFound and AlreadyExists are the reconcilers' to
// handle where they mean something.
func Refused(err error) bool {
	return err != nil && (apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsRequestEntityTooLargeError(err) || apierrors.IsMethodNotSupported(err) ||
		apierrors.IsNotAcceptable(err) || apierrors.IsUnsupportedMediaType(err))
}

// maxRefusalMessage keeps a refusal's condition message well below the API's limit of
// 32768 bytes: the API server's answer can quote a whole object.
const maxRefusalMessage = 4096

// RefusalMessage is what a condition (or an event) says of a refused request: the API
// server's answer, what to change, and when almanac tries again.
func RefusalMessage(err error) string {
	msg := fmt.Sprintf("The API server refused almanac's request: %v. %s. almanac tries again in about %s (at the next boundary or slot if that is sooner, "+
		"and at once when this object or an object it names changes)", err, refusalFix(err), RefusalRetry)
	if len(msg) > maxRefusalMessage {
		const cut = " … (truncated)"
		msg = msg[:maxRefusalMessage-len(cut)] + cut
	}
	return msg
}

// refusalFix says what to change for a refusal, from what refused it.
func refusalFix(err error) string {
	text := err.Error()
	switch {
	case strings.Contains(text, "exceeded quota"):
		return "A ResourceQuota of the namespace is used up: raise it, or free some of it (finished Jobs count until they are deleted)"
	case strings.Contains(text, "ValidatingAdmissionPolicy"):
		return "The ValidatingAdmissionPolicy named above denied it: change the policy or its binding so that it admits almanac's request, or change the object"
	case strings.Contains(text, "admission webhook"):
		return "The admission webhook named above (a policy engine: Kyverno, Gatekeeper, …) denied it: change its policy so that it admits almanac's request, or change the object"
	case strings.Contains(text, "is being terminated"):
		return "The namespace is being deleted"
	case apierrors.IsForbidden(err):
		return "RBAC does not allow it: grant almanac's manager (its ServiceAccount) the verb on the resource named above; the chart's ClusterRole has every rule almanac needs (docs/security.md)"
	case apierrors.IsInvalid(err):
		return "The object almanac wrote is invalid: correct the field named above in the spec that almanac copies it from"
	default:
		return "Change what refuses it"
	}
}

// Retry returns what a reconcile that failed with err returns, given wake, what it returns
// when it does not fail (the next instant that matters to its object: RequeueAt of its next
// boundary or slot; zero for none):
//
//   - nil: wake;
//   - a conflict: again after ConflictRetry, and a cache behind the last write
//     (ErrCacheBehind) after RecordCatchUp, quietly (nothing went wrong: the copy read was
//     behind);
//   - a refusal (Refused): again after RefusalRetry, or at wake if that is sooner, logged
//     here (it is not returned); the reconciler reports it too, with the Ready condition of
//     its object (conditions.ReasonRequestRefused) where the status can still be written,
//     and WriteStatus with an event where the status write is what was refused;
//   - anything else goes to the controller, which logs it and retries with backoff, within
//     MaxRetryDelay.
func Retry(ctx context.Context, err error, wake ctrl.Result) (ctrl.Result, error) {
	switch {
	case err == nil:
		return wake, nil
	case apierrors.IsConflict(err):
		return ctrl.Result{RequeueAfter: ConflictRetry}, nil
	case errors.Is(err, ErrCacheBehind):
		return ctrl.Result{RequeueAfter: RecordCatchUp}, nil
	case Refused(err):
		res := ctrl.Result{RequeueAfter: RefusalRetry}
		if wake.RequeueAfter > 0 && wake.RequeueAfter <= RefusalRetry {
			res = wake
		} else if t := turnOf(ctx); t != nil {
			t.retry = true // the wake-up is a retry, not an instant (ordered.go)
		}
		ctrl.LoggerFrom(ctx).Info("The API server refused a request; trying again later", "error", err.Error(), "after", res.RequeueAfter)
		return res, nil
	}
	return ctrl.Result{}, err
}
