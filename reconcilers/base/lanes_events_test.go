package base

import (
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/api/scheme"
)

// busyLanes returns Lanes with an urgent write under way, which hold every event back, and
// the function that ends it.
func busyLanes(t *testing.T) (*Lanes, func()) {
	t.Helper()
	slot := time.Date(2030, 1, 7, 0, 0, 0, 0, time.UTC)
	l := NewLanes(clocktesting.NewFakeClock(slot), time.Hour)
	key := types.NamespacedName{Namespace: "ns", Name: "nightly"}
	l.Expect("scheduledjob", key, slot)
	return l, l.Urgent("scheduledjob", key)
}

// bigOwner is a ScheduledJob whose Job template holds size bytes of environment, and a Job
// made from it: what a held event of a Job owner used to keep a copy of.
func bigOwner(size int) (*batchv1alpha1.ScheduledJob, *batchv1.Job) {
	tmpl := batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "main", Image: "busybox", Env: []corev1.EnvVar{{Name: "BIG", Value: strings.Repeat("x", size)}}}},
	}}}}
	sj := &batchv1alpha1.ScheduledJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "nightly", UID: "sj-uid", ResourceVersion: "41"},
		Spec:       batchv1alpha1.ScheduledJobSpec{Schedule: "0 0 * * *", JobPolicy: batchv1alpha1.JobPolicy{JobTemplate: tmpl}},
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "nightly-29436480", UID: "job-uid", ResourceVersion: "42"}, Spec: tmpl.Spec}
	return sj, job
}

// TestHeldEventIsReferences: a held event is what the recorder needs of it (its recorder,
// references, type, reason, action and the note as it read) and nothing that can reach the
// objects; the recorder gets the references it would have made of the objects.
func TestHeldEventIsReferences(t *testing.T) {
	allowed := map[reflect.Type]bool{
		reflect.TypeFor[string]():                  true,
		reflect.TypeFor[*corev1.ObjectReference](): true,
		reflect.TypeFor[events.EventRecorder]():    true,
	}
	ht := reflect.TypeFor[heldEvent]()
	for i := range ht.NumField() {
		if f := ht.Field(i); !allowed[f.Type] {
			t.Errorf("heldEvent.%s is a %s: a held event keeps strings and references, never objects", f.Name, f.Type)
		}
	}
	// An ObjectReference holds strings only.
	rt := reflect.TypeFor[corev1.ObjectReference]()
	for i := range rt.NumField() {
		if k := rt.Field(i).Type.Kind(); k != reflect.String {
			t.Errorf("corev1.ObjectReference.%s is a %s", rt.Field(i).Name, k)
		}
	}

	l, done := busyLanes(t)
	rec := &recordedEvents{}
	sj, job := bigOwner(16)
	l.Events(rec, scheme.Scheme).Eventf(sj, job, corev1.EventTypeNormal, "JobCreated", "Create", "Created Job %s", job.Name)
	sj.Name, job.Name = "renamed", "renamed" // the held event keeps what it said
	if got := rec.got(); len(got) != 0 {
		t.Fatalf("recorded %q while a Job is under way, want the event held", got)
	}
	done()
	if diff := cmp.Diff([]string{"JobCreated nightly: Created Job nightly-29436480"}, rec.got()); diff != "" {
		t.Fatalf("recorded (-want +got):\n%s", diff)
	}
	wantRegarding := &corev1.ObjectReference{Kind: "ScheduledJob", APIVersion: "batch.almanac.dev/v1alpha1", Namespace: "ns", Name: "nightly", UID: "sj-uid", ResourceVersion: "41"}
	wantRelated := &corev1.ObjectReference{Kind: "Job", APIVersion: "batch/v1", Namespace: "ns", Name: "nightly-29436480", UID: "job-uid", ResourceVersion: "42"}
	if diff := cmp.Diff(wantRegarding, rec.regarding[0]); diff != "" {
		t.Errorf("regarding (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantRelated, rec.related[0]); diff != "" {
		t.Errorf("related (-want +got):\n%s", diff)
	}

	// An event without a related object gets none.
	l, done = busyLanes(t)
	rec = &recordedEvents{}
	l.Events(rec, scheme.Scheme).Eventf(sj, nil, corev1.EventTypeWarning, "RunsMissed", "Create", "missed")
	done()
	if len(rec.related) != 1 || rec.related[0] != nil {
		t.Errorf("related %v, want a nil runtime.Object", rec.related)
	}
}

// TestHeldEventsRetainNoObject: held events about a Job owner and its Job retain their
// references, not the objects. With copies of the objects (what was held before), 500 events
// about ScheduledJobs whose templates hold 64 KiB each retained 35 MB until they were
// recorded; up to MaxHeldEvents are held.
func TestHeldEventsRetainNoObject(t *testing.T) {
	const n, size = 500, 64 << 10
	l, done := busyLanes(t)
	rec := &recordedEvents{}
	recorder := l.Events(rec, scheme.Scheme)
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	for range n {
		sj, job := bigOwner(size)
		recorder.Eventf(sj, job, corev1.EventTypeNormal, "JobCreated", "Create", "Created Job %s", job.Name)
	}
	retained := int64(heap()) - int64(before)
	l.mu.Lock()
	held := len(l.held)
	l.mu.Unlock()
	if held != n {
		t.Fatalf("%d events held, want %d", held, n)
	}
	if limit := int64(n * size / 16); retained > limit {
		t.Errorf("%d held events retain %d bytes, more than %d: they keep the objects (templates of %d bytes)", n, retained, limit, size)
	}
	t.Logf("%d held events retain %d bytes", n, retained)
	done()
	if got := len(rec.got()); got != n {
		t.Errorf("recorded %d events, want %d", got, n)
	}
}
