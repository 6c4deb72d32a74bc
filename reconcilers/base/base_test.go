package base

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestRequeueAt(t *testing.T) {
	now := time.Date(2027, 3, 1, 9, 59, 59, 0, time.UTC)
	tests := []struct {
		name string
		next time.Time
		want ctrl.Result
	}{
		{"no boundary ahead: never", time.Time{}, ctrl.Result{}},
		{"a boundary ahead: exactly then", now.Add(1500 * time.Millisecond), ctrl.Result{RequeueAfter: 1500 * time.Millisecond}},
		// The reconcile computed the boundary before it wrote, and its writes took longer
		// than the time that was left: controller-runtime would drop a RequeueAfter ≤ 0.
		{"the boundary passed while writing: at once", now.Add(-200 * time.Millisecond), ctrl.Result{RequeueAfter: time.Nanosecond}},
		{"the boundary is now: at once", now, ctrl.Result{RequeueAfter: time.Nanosecond}},
	}
	for _, tt := range tests {
		if got := RequeueAt(tt.next, now); got != tt.want {
			t.Errorf("%s: RequeueAt = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestRetry(t *testing.T) {
	gr := schema.GroupResource{Group: "autoscaling", Resource: "horizontalpodautoscalers"}
	conflict := fmt.Errorf("failed to patch the status of Schedule ns/a: %w",
		apierrors.NewConflict(schema.GroupResource{Group: "autoscaling.almanac.dev", Resource: "schedules"}, "a", errors.New("the object has been modified")))
	other := errors.New("connection refused")
	refused := fmt.Errorf("failed to apply HorizontalPodAutoscaler ns/a: %w", apierrors.NewForbidden(gr, "a", errors.New("exceeded quota")))
	unavailable := fmt.Errorf("failed to apply HorizontalPodAutoscaler ns/a: %w", apierrors.NewServiceUnavailable("etcd"))
	soon := ctrl.Result{RequeueAfter: 20 * time.Second}
	late := ctrl.Result{RequeueAfter: time.Hour}
	for _, tc := range []struct {
		name    string
		err     error
		wake    ctrl.Result
		want    ctrl.Result
		wantErr error
	}{
		{"no error: the wake-up", nil, soon, soon, nil},
		{"a conflict is retried soon, quietly", conflict, late, ctrl.Result{RequeueAfter: ConflictRetry}, nil},
		{"a cache behind is retried soon, quietly", ErrCacheBehind, late, ctrl.Result{RequeueAfter: RecordCatchUp}, nil},
		{"a refusal waits RefusalRetry", refused, late, ctrl.Result{RequeueAfter: RefusalRetry}, nil},
		{"a refusal waits RefusalRetry when nothing is due", refused, ctrl.Result{}, ctrl.Result{RequeueAfter: RefusalRetry}, nil},
		{"a refusal waits until the next instant when that is sooner", refused, soon, soon, nil},
		{"a transient error goes to the controller's backoff", unavailable, late, ctrl.Result{}, unavailable},
		{"other errors go to the controller's backoff", other, late, ctrl.Result{}, other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Retry(context.Background(), tc.err, tc.wake)
			if diff := cmp.Diff(tc.want, got); diff != "" || !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Errorf("Retry = %+v, %v; want %+v, %v (-want +got):\n%s", got, err, tc.want, tc.wantErr, diff)
			}
		})
	}
}

// TestRefused: the API server's refusals (RBAC, an admission webhook's or policy's denial, a
// quota, an invalid object) wait; what may pass when asked again (5xx, 429, timeouts,
// conflicts, connection errors, a rotated token) is retried soon.
func TestRefused(t *testing.T) {
	gr := schema.GroupResource{Group: "batch", Resource: "jobs"}
	gk := schema.GroupKind{Group: "batch", Kind: "Job"}
	wrap := func(err error) error { return fmt.Errorf("failed to create Job ns/a: %w", err) }
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"RBAC", apierrors.NewForbidden(gr, "a", errors.New(`User "system:serviceaccount:almanac:almanac" cannot create resource "jobs"`)), true},
		{"quota", apierrors.NewForbidden(gr, "a", errors.New("exceeded quota: jobs, requested: count/jobs.batch=1, used: count/jobs.batch=5, limited: count/jobs.batch=5")), true},
		{"a webhook's denial", apierrors.NewForbidden(gr, "a", errors.New(`admission webhook "validate.kyverno.svc" denied the request`)), true},
		{"a ValidatingAdmissionPolicy", apierrors.NewInvalid(gk, "a", nil), true},
		{"a bad request", apierrors.NewBadRequest("no"), true},
		{"too large", apierrors.NewRequestEntityTooLargeError("limit"), true},
		{"not found", apierrors.NewNotFound(gr, "a"), false},
		{"already exists", apierrors.NewAlreadyExists(gr, "a"), false},
		{"conflict", apierrors.NewConflict(gr, "a", errors.New("modified")), false},
		{"429", apierrors.NewTooManyRequests("slow down", 1), false},
		{"500, a webhook that cannot be called", apierrors.NewInternalError(errors.New(`failed calling webhook "x": no endpoints available`)), false},
		{"503", apierrors.NewServiceUnavailable("etcd"), false},
		{"timeout", apierrors.NewTimeoutError("timed out", 1), false},
		{"server timeout", apierrors.NewServerTimeout(gr, "create", 1), false},
		{"unauthorized: a rotated token", apierrors.NewUnauthorized("token expired"), false},
		{"a connection error", errors.New("dial tcp 10.0.0.1:443: connect: connection refused"), false},
		{"the context", context.Canceled, false},
		{"nil", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, err := range []error{tc.err, wrap(tc.err)} {
				if tc.err == nil && err != nil {
					continue
				}
				if got := Refused(err); got != tc.want {
					t.Errorf("Refused(%v) = %v, want %v", err, got, tc.want)
				}
			}
		})
	}
}

// TestRefusalMessage: the message names the API server's answer, the fix for what refused it,
// and when almanac tries again.
func TestRefusalMessage(t *testing.T) {
	gr := schema.GroupResource{Group: "batch", Resource: "jobs"}
	for _, tc := range []struct {
		name string
		err  error
		fix  string
	}{
		{"RBAC", apierrors.NewForbidden(gr, "a", errors.New(`User "x" cannot create resource "jobs"`)), "grant almanac's manager"},
		{"quota", apierrors.NewForbidden(gr, "a", errors.New("exceeded quota: q")), "ResourceQuota"},
		{"webhook", apierrors.NewForbidden(gr, "a", errors.New(`admission webhook "k" denied the request: no`)), "admission webhook named above"},
		{"policy", apierrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, "a", nil), "correct the field"},
	} {
		msg := RefusalMessage(fmt.Errorf("failed to create Job ns/a: %w", tc.err))
		for _, want := range []string{tc.err.Error(), tc.fix, "tries again in about 1m0s"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q does not say %q", tc.name, msg, want)
			}
		}
	}
	long := RefusalMessage(errors.New(strings.Repeat("x", 10000)))
	if len(long) > maxRefusalMessage || !strings.HasSuffix(long, "(truncated)") {
		t.Errorf("a long answer gives %d bytes, want at most %d, truncated", len(long), maxRefusalMessage)
	}
}

// TestShortNotes: a note longer than the API server takes is cut to MaxNote bytes at a
// character's boundary, not dropped; a short one passes as written.
// TestFailedReconcilesRetryWithinMaxRetryDelay: however long a reconcile keeps failing, its
// next try is at most MaxRetryDelay away (controller-runtime's default grows to 1,000 s).
func TestFailedReconcilesRetryWithinMaxRetryDelay(t *testing.T) {
	var b Base
	limiter := b.ControllerOptions(1).RateLimiter
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "sj"}}
	if d := limiter.When(req); d != 5*time.Millisecond {
		t.Errorf("first retry after %s, want 5ms", d)
	}
	for range 40 {
		if d := limiter.When(req); d > MaxRetryDelay {
			t.Fatalf("a retry after %s, want at most %s", d, MaxRetryDelay)
		}
	}
	if d := limiter.When(req); d != MaxRetryDelay {
		t.Errorf("after 42 failures a retry after %s, want %s", d, MaxRetryDelay)
	}
	limiter.Forget(req)
	if d := limiter.When(req); d != 5*time.Millisecond {
		t.Errorf("after a success the first retry after %s, want 5ms", d)
	}
	// Options set by the caller (tests) are kept.
	b.Options.RateLimiter = workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](time.Second, time.Minute)
	if d := b.ControllerOptions(1).RateLimiter.When(req); d != time.Second {
		t.Errorf("the caller's rate limiter was replaced: first retry after %s", d)
	}
}

func TestShortNotes(t *testing.T) {
	rec := &noteRecorder{}
	r := ShortNotes(rec)
	r.Eventf(nil, nil, "Warning", "Reason", "Action", "%s", strings.Repeat("é", MaxNote)) // two bytes each
	r.Eventf(nil, nil, "Normal", "Reason", "Action", "short %d", 1)
	if len(rec.notes) != 2 {
		t.Fatalf("%d notes recorded, want 2", len(rec.notes))
	}
	if long := rec.notes[0]; len(long) > MaxNote || !utf8.ValidString(long) || !strings.HasSuffix(long, "é…") {
		t.Errorf("long note: %d bytes, valid UTF-8 %v, ends %q; want at most %d, valid, ending in \"é…\"", len(long), utf8.ValidString(long), long[len(long)-8:], MaxNote)
	}
	if rec.notes[1] != "short 1" {
		t.Errorf("short note %q, want %q", rec.notes[1], "short 1")
	}
}

type noteRecorder struct{ notes []string }

func (r *noteRecorder) Eventf(_, _ runtime.Object, _, _, _, note string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(note, args...))
}
