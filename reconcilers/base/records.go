package base

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Records remembers, for each Job owner (ScheduledJob, EventJob) that this process reconciles,
// the version of it (UID and resourceVersion) that this process last read around the cache or
// wrote itself, so that ReadRecord can tell a cached copy that holds the whole record of runs
// from one that may not.
//
// The record of runs (a ScheduledJob's last slot, an EventJob's watermark) is written by the
// leader only, and only through WriteStatus. A process that remembers the version of its own
// last write therefore knows that a cached copy of that same version holds every run it
// started: a run is only ever started after a read that gave a remembered version and before
// the write that records it. Anything else (no version remembered yet: the first reconcile
// after the process started or became leader; a cached copy behind or ahead of the remembered
// one; a reconcile that failed between its read and its write) reads around the cache, as every
// reconcile did before. Nothing else is kept: a process that restarts remembers nothing and
// reads around the cache once per object.
type Records struct {
	mu       sync.Mutex
	versions map[types.NamespacedName]version
}

type version struct {
	uid             types.UID
	resourceVersion string
	// waited: a reconcile found the cached copy behind this version and was requeued to
	// let the cache catch up (ErrCacheBehind); the next reads around the cache.
	waited bool
}

// NewRecords returns empty Records.
func NewRecords() *Records {
	return &Records{versions: map[types.NamespacedName]version{}}
}

// take returns what is remembered of key and forgets it: a reconcile that does not get as far
// as its status write leaves nothing remembered, so the next one reads around the cache.
func (r *Records) take(key types.NamespacedName) (version, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.versions[key]
	delete(r.versions, key)
	return v, ok
}

// keep puts back what take returned.
func (r *Records) keep(key types.NamespacedName, v version) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.versions[key] = v
}

// remember records obj's version as the last one this process read around the cache or wrote.
func (r *Records) remember(obj client.Object) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.versions[client.ObjectKeyFromObject(obj)] = version{uid: obj.GetUID(), resourceVersion: obj.GetResourceVersion()}
}

// ErrCacheBehind is what ReadRecord returns when the cached copy of a Job owner is behind the
// version this process last wrote: Retry makes the reconcile run again RecordCatchUp later,
// when the cache has most often caught up, rather than read around it at once.
var ErrCacheBehind = errors.New("the cached copy is behind the version last written")

// ReadRecord reads the Job owner key into obj for a reconcile that may start a run. With
// Records, it reads from the cache when the cached copy is the version that this process last
// read around the cache or wrote (see Records). When the cached copy is behind that version
// (a reconcile that follows this process's write closely: the one the Job it just created
// brings), it returns ErrCacheBehind once, so that the reconcile runs again RecordCatchUp
// later (Retry) instead of costing the API server a read; and nothing waits in the meantime.
// Otherwise, and without Records, it reads around the cache with APIReader. Either way it
// leaves nothing remembered of key until the reconcile's WriteStatus succeeds, but for the
// one requeue.
//
// A boundary's burst of runs is thus served from the cache: each reconcile costs the API
// server the Job create and the status write, not a read of the owner too.
func (b *Base) ReadRecord(ctx context.Context, key types.NamespacedName, obj client.Object) error {
	if b.Records != nil {
		if v, ok := b.Records.take(key); ok {
			err := b.Client.Get(ctx, key, obj)
			switch {
			case err != nil || obj.GetUID() != v.uid:
			case obj.GetResourceVersion() == v.resourceVersion:
				return nil
			case !v.waited:
				v.waited = true
				b.Records.keep(key, v)
				return ErrCacheBehind
			}
		}
	}
	return b.APIReader.Get(ctx, key, obj)
}

// RecordCatchUp is how long after ErrCacheBehind the reconcile runs again: the cache is a few
// milliseconds behind a write, and waiting for it costs the API server nothing.
const RecordCatchUp = 20 * time.Millisecond

// recordWritten is WriteStatus's note to Records: obj is the version this reconcile read (when
// nothing was written) or wrote.
func (b *Base) recordWritten(obj client.Object, err error) {
	if b.Records == nil || err != nil {
		return
	}
	b.Records.remember(obj)
}
