package base

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

// liveReader answers Get with a copy of obj and counts the reads.
type liveReader struct {
	client.Reader
	obj   *batchv1alpha1.ScheduledJob
	reads int
}

func (r *liveReader) Get(_ context.Context, _ types.NamespacedName, out client.Object, _ ...client.GetOption) error {
	r.reads++
	r.obj.DeepCopyInto(out.(*batchv1alpha1.ScheduledJob))
	return nil
}

func TestTrackSuspension(t *testing.T) {
	setAt := time.Date(2027, 5, 1, 0, 2, 30, 0, time.UTC)
	now := setAt.Add(3 * time.Hour)
	// What the API server holds: the write that set spec.suspend, then a label edit.
	live := &batchv1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "nightly", ManagedFields: []metav1.ManagedFieldsEntry{
		{Manager: "kubectl-patch", Operation: metav1.ManagedFieldsOperationUpdate, Time: &metav1.Time{Time: setAt}, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:suspend":{}}}`)},
		{Manager: "kubectl-label", Operation: metav1.ManagedFieldsOperationUpdate, Time: &metav1.Time{Time: setAt.Add(time.Hour)}, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{}}}`)},
	}}}
	live.Spec.Suspend = true
	// The cached copy: no managedFields.
	cached := live.DeepCopy()
	cached.ManagedFields = nil
	reader := &liveReader{obj: live}
	b := &Base{APIReader: reader}
	series := func() float64 {
		return testutil.ToFloat64(SuspendedSince.WithLabelValues("ScheduledJob", "team-a", "nightly"))
	}
	count := func() int { return testutil.CollectAndCount(SuspendedSince) }
	ctx := context.Background()
	before := count()

	b.TrackSuspension(ctx, "ScheduledJob", cached, true, now)
	if got := series(); got != float64(setAt.Unix()) {
		t.Errorf("suspended since %v, want the write that set spec.suspend, %v", time.Unix(int64(got), 0).UTC(), setAt)
	}
	b.TrackSuspension(ctx, "ScheduledJob", cached, true, now.Add(time.Minute))
	if reader.reads != 1 {
		t.Errorf("%d reads around the cache for one suspension, want 1", reader.reads)
	}
	b.TrackSuspension(ctx, "ScheduledJob", cached, false, now.Add(2*time.Minute))
	if got := count(); got != before {
		t.Errorf("%d series after the resume, want %d (the series deleted)", got, before)
	}
	// Suspended again, and no field owner recorded: from when it was seen.
	live.ManagedFields = nil
	b.TrackSuspension(ctx, "ScheduledJob", cached, true, now.Add(time.Hour))
	if got := series(); got != float64(now.Add(time.Hour).Unix()) {
		t.Errorf("suspended since %v, want when it was seen, %v", time.Unix(int64(got), 0).UTC(), now.Add(time.Hour))
	}
	ForgetSuspension("ScheduledJob", types.NamespacedName{Namespace: "team-a", Name: "nightly"})
	if got := count(); got != before {
		t.Errorf("%d series after the object is gone, want %d", got, before)
	}
}
