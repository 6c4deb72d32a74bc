package base

import (
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
	conflict := fmt.Errorf("failed to patch the status of Schedule ns/a: %w",
		apierrors.NewConflict(schema.GroupResource{Group: "autoscaling.almanac.dev", Resource: "schedules"}, "a", errors.New("the object has been modified")))
	other := errors.New("connection refused")
	for _, tc := range []struct {
		name    string
		err     error
		want    ctrl.Result
		wantErr error
	}{
		{"a conflict is retried soon, quietly", conflict, ctrl.Result{RequeueAfter: ConflictRetry}, nil},
		{"other errors go to the controller's backoff", other, ctrl.Result{}, other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Retry(tc.err)
			if diff := cmp.Diff(tc.want, got); diff != "" || !errors.Is(err, tc.wantErr) {
				t.Errorf("Retry = %+v, %v; want %+v, %v (-want +got):\n%s", got, err, tc.want, tc.wantErr, diff)
			}
		})
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
