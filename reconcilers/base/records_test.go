package base

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/api/scheme"
)

// snapshotCache is a cache that has seen what it was last synced to, and nothing since.
type snapshotCache struct {
	client.Client // only Get is used
	mu            sync.Mutex
	objs          map[types.NamespacedName]*batchv1alpha1.ScheduledJob
}

func (c *snapshotCache) Get(_ context.Context, key types.NamespacedName, obj client.Object, _ ...client.GetOption) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	o, ok := c.objs[key]
	if !ok {
		return apierrors.NewNotFound(batchv1alpha1.GroupVersion.WithResource("scheduledjobs").GroupResource(), key.Name)
	}
	o.DeepCopyInto(obj.(*batchv1alpha1.ScheduledJob))
	return nil
}

// sync makes the cache catch up with the API server.
func (c *snapshotCache) sync(t *testing.T, api client.Client, key types.NamespacedName) {
	t.Helper()
	o := &batchv1alpha1.ScheduledJob{}
	if err := api.Get(context.Background(), key, o); err != nil {
		t.Error(err)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.objs[key] = o
}

// countingReader counts the reads around the cache.
type countingReader struct {
	client.Reader
	gets int
}

func (r *countingReader) Get(ctx context.Context, key types.NamespacedName, obj client.Object, opts ...client.GetOption) error {
	r.gets++
	return r.Reader.Get(ctx, key, obj, opts...)
}

// TestReadRecord shows when a Job owner's record is read from the cache: only when the cached
// copy is the version this process last read around the cache or wrote; every other read,
// including the one after a failed write, goes around the cache and sees the stored record.
func TestReadRecord(t *testing.T) {
	ctx := context.Background()
	key := types.NamespacedName{Namespace: "ns", Name: "nightly"}
	api := fake.NewClientBuilder().WithScheme(scheme.New()).
		WithStatusSubresource(&batchv1alpha1.ScheduledJob{}).
		WithObjects(&batchv1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, UID: "uid-1"}}).
		Build()
	cache := &snapshotCache{objs: map[types.NamespacedName]*batchv1alpha1.ScheduledJob{}}
	cache.sync(t, api, key)
	live := &countingReader{Reader: api}
	// ReadRecord reads from the cache with b.Client.Get; WriteStatus writes to the API server.
	b := Base{Client: cachedReads{Client: api, cache: cache}, APIReader: live, Records: NewRecords()}
	read := func(wantGets int, what string) *batchv1alpha1.ScheduledJob {
		t.Helper()
		sj := &batchv1alpha1.ScheduledJob{}
		if err := b.ReadRecord(ctx, key, sj); err != nil {
			t.Fatal(err)
		}
		if live.gets != wantGets {
			t.Fatalf("%s: %d reads around the cache, want %d", what, live.gets, wantGets)
		}
		return sj
	}
	tryWrite := func(sj *batchv1alpha1.ScheduledJob, slot time.Time) error {
		changed := sj.DeepCopy()
		changed.Status.LastScheduleTime = &metav1.Time{Time: slot}
		_, err := b.WriteStatus(ctx, "ScheduledJob", sj, changed)
		return err
	}
	write := func(sj *batchv1alpha1.ScheduledJob, slot time.Time) {
		t.Helper()
		if err := tryWrite(sj, slot); err != nil {
			t.Fatal(err)
		}
	}

	slot1 := time.Date(2027, 1, 1, 9, 0, 0, 0, time.UTC)
	sj := read(1, "nothing remembered: the first read")
	write(sj, slot1)

	// The cache has not seen the write: once the reconcile has been requeued for it to catch
	// up (ErrCacheBehind), the read goes around it and sees slot1.
	if err := b.ReadRecord(ctx, key, &batchv1alpha1.ScheduledJob{}); !errors.Is(err, ErrCacheBehind) {
		t.Fatalf("cache behind the write: ReadRecord = %v, want ErrCacheBehind", err)
	}
	sj = read(2, "cache still behind the write")
	if got := sj.Status.LastScheduleTime; got == nil || !got.Time.Equal(slot1) {
		t.Fatalf("the read around the cache gave lastScheduleTime %v, want %v", got, slot1)
	}
	write(sj, slot1) // unchanged: nothing written, the version read is remembered

	cache.sync(t, api, key)
	sj = read(2, "cache at the version written")
	write(sj, slot1.Add(2*time.Minute))

	// The cache is behind the write: ReadRecord asks once for the reconcile to run again
	// (ErrCacheBehind, which Retry makes RecordCatchUp later) rather than read around it, and
	// the cache has caught up by then: no read around it.
	if err := b.ReadRecord(ctx, key, &batchv1alpha1.ScheduledJob{}); !errors.Is(err, ErrCacheBehind) {
		t.Fatalf("cache behind the write: ReadRecord = %v, want ErrCacheBehind", err)
	}
	if res, err := Retry(ctx, ErrCacheBehind, ctrl.Result{}); err != nil || res.RequeueAfter != RecordCatchUp {
		t.Fatalf("Retry(ErrCacheBehind) = %+v, %v; want a requeue after RecordCatchUp", res, err)
	}
	cache.sync(t, api, key)
	sj = read(2, "cache caught up after the requeue")
	if got := sj.Status.LastScheduleTime; got == nil || !got.Time.Equal(slot1.Add(2*time.Minute)) {
		t.Fatalf("the cached read gave lastScheduleTime %v, want %v", got, slot1.Add(2*time.Minute))
	}
	write(sj, slot1)
	cache.sync(t, api, key)
	sj = read(2, "cache at the version written")
	if got := sj.Status.LastScheduleTime; got == nil || !got.Time.Equal(slot1) {
		t.Fatalf("the cached read gave lastScheduleTime %v, want %v", got, slot1)
	}

	// A cache still behind after the requeue is read around.
	write(sj, slot1.Add(4*time.Minute))
	if err := b.ReadRecord(ctx, key, &batchv1alpha1.ScheduledJob{}); !errors.Is(err, ErrCacheBehind) {
		t.Fatalf("cache behind the write: ReadRecord = %v, want ErrCacheBehind", err)
	}
	sj = read(3, "cache still behind after the requeue")
	if got := sj.Status.LastScheduleTime; got == nil || !got.Time.Equal(slot1.Add(4*time.Minute)) {
		t.Fatalf("the read around the cache gave lastScheduleTime %v, want %v", got, slot1.Add(4*time.Minute))
	}
	write(sj, slot1)
	cache.sync(t, api, key)
	read(3, "cache at the version written")

	// A reconcile that ends before its write (here: the one above) leaves nothing remembered.
	sj = read(4, "the previous reconcile did not write")
	write(sj, slot1)

	// Someone else's write (here: a spec change) moves the stored version past the remembered
	// one: the cache is synced to it, and still the read goes around the cache.
	cache.sync(t, api, key)
	sj = read(4, "cache at the version written")
	other := sj.DeepCopy()
	other.Spec.Suspend = true
	if err := api.Update(ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := tryWrite(sj, slot1.Add(time.Minute)); !apierrors.IsConflict(err) {
		t.Fatalf("the write from a version that is gone returned %v, want a conflict", err)
	}
	cache.sync(t, api, key)
	sj = read(5, "the write failed")
	write(sj, slot1)

	// Deleted and created again under the same name: another UID, so around the cache.
	cache.sync(t, api, key)
	if err := api.Delete(ctx, sj); err != nil {
		t.Fatal(err)
	}
	again := &batchv1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, UID: "uid-2"}}
	if err := api.Create(ctx, again); err != nil {
		t.Fatal(err)
	}
	cache.sync(t, api, key)
	read(6, "another object of the same name")

	// Without Records every read goes around the cache.
	b.Records = nil
	read(7, "no Records")
	read(8, "no Records")
}

// cachedReads is a client whose reads come from a snapshotCache and whose writes go to the
// API server.
type cachedReads struct {
	client.Client
	cache *snapshotCache
}

func (c cachedReads) Get(ctx context.Context, key types.NamespacedName, obj client.Object, opts ...client.GetOption) error {
	return c.cache.Get(ctx, key, obj, opts...)
}

// TestWriteRecordWaitsForOtherJobs: the status write that records a run goes out after the
// Jobs of other objects that are under way (Lanes.WaitUnderWay), with the events held until it
// is written (Lanes.Recording), where WriteStatus outside of an ordered reconcile and a record
// with nothing to change go out at once.
func TestWriteRecordWaitsForOtherJobs(t *testing.T) {
	ctx := context.Background()
	key := types.NamespacedName{Namespace: "ns", Name: "nightly"}
	var mu sync.Mutex
	var patches []string
	slot := time.Date(2030, 1, 7, 0, 0, 0, 0, time.UTC)
	lanes := NewLanes(clocktesting.NewFakeClock(slot), time.Hour)
	lanes.SetWorkers("scheduledjob", 32)
	busy := func() string {
		lanes.mu.Lock()
		defer lanes.mu.Unlock()
		if lanes.busyLocked(lanes.clock.Now()) {
			return " (events held)"
		}
		return ""
	}
	api := fake.NewClientBuilder().WithScheme(scheme.New()).
		WithStatusSubresource(&batchv1alpha1.ScheduledJob{}).
		WithObjects(&batchv1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, UID: "uid-1"}}).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			mu.Lock()
			patches = append(patches, obj.(*batchv1alpha1.ScheduledJob).Status.LastScheduleTime.UTC().Format(time.RFC3339)+busy())
			mu.Unlock()
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}}).
		Build()
	b := Base{Client: api, APIReader: api, Lanes: lanes}
	written := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(patches)
	}
	// A record is written by a reconcile that takes part in the order (Lanes.Reconciler);
	// WriteStatus below is called outside of one, and orders nothing.
	record := func(ctx context.Context, kind string, obj, changed client.Object) (bool, error) {
		return b.WriteRecord(context.WithValue(ctx, turnKey{}, &turn{lanes: lanes, controller: "scheduledjob", key: key}), kind, obj, changed)
	}
	write := func(f func(context.Context, string, client.Object, client.Object) (bool, error), at time.Time) <-chan error {
		sj := &batchv1alpha1.ScheduledJob{}
		if err := api.Get(ctx, key, sj); err != nil {
			t.Fatal(err)
		}
		changed := sj.DeepCopy()
		changed.Status.LastScheduleTime = &metav1.Time{Time: at}
		done := make(chan error, 1)
		go func() {
			_, err := f(ctx, "ScheduledJob", sj, changed)
			done <- err
		}()
		return done
	}
	wait := func(done <-chan error) {
		t.Helper()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the status write did not return")
		}
	}

	// Another ScheduledJob's Job of the same slot is under way.
	lanes.Expect("scheduledjob", types.NamespacedName{Namespace: "ns", Name: "other"}, slot)
	otherDone := lanes.Urgent("scheduledjob", types.NamespacedName{Namespace: "ns", Name: "other"})
	wait(write(b.WriteStatus, slot))
	recorded := write(record, slot.Add(time.Minute))
	// The fence: the record write is waiting for the Job under way (a waiter of Lanes); until
	// that Job is done, it writes nothing.
	deadline := time.Now().Add(5 * time.Second)
	for waiting := 0; waiting == 0; {
		lanes.mu.Lock()
		waiting = len(lanes.waiters["scheduledjob"])
		lanes.mu.Unlock()
		if waiting == 0 && time.Now().After(deadline) {
			t.Fatal("the record write is not waiting for the Job under way after 5 s")
		}
		time.Sleep(time.Millisecond)
	}
	if got := written(); len(got) != 1 {
		t.Fatalf("status writes while another Job is under way: %v, want only WriteStatus's", got)
	}
	unchanged := &batchv1alpha1.ScheduledJob{}
	if err := api.Get(ctx, key, unchanged); err != nil {
		t.Fatal(err)
	}
	if wrote, err := record(ctx, "ScheduledJob", unchanged, unchanged.DeepCopy()); err != nil || wrote {
		t.Fatalf("WriteRecord of an unchanged record: wrote %v, %v", wrote, err)
	}
	otherDone()
	wait(recorded)
	// WriteStatus went out while the other Job was under way; the record after it, holding
	// the events back while it was written.
	if diff := cmp.Diff([]string{"2030-01-07T00:00:00Z (events held)", "2030-01-07T00:01:00Z (events held)"}, written()); diff != "" {
		t.Errorf("status writes (-want +got):\n%s", diff)
	}
}
