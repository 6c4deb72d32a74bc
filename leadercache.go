package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// leaderKinds are the kinds that only the reconcilers read, and so only the leader caches:
// a cluster may hold Jobs by the thousand, HPAs of every team, and the Deployments,
// StatefulSets and ReplicaSets that sleeps put to sleep. The webhooks, which every replica
// serves, read almanac's kinds and the CronJobs' metadata from the cache, and a trigger Job's
// metadata with a GET.
var leaderKinds = []client.Object{&batchv1.Job{}, &autoscalingv2.HorizontalPodAutoscaler{},
	&appsv1.Deployment{}, &appsv1.StatefulSet{}, &appsv1.ReplicaSet{}}

// leaderCache is the manager's cache (manager.Options.NewCache): what it reads, watches and
// indexes of leaderKinds goes to a second cache, which the manager starts only once this
// replica leads (LeaderRunnable); everything else goes to the cache that every replica starts
// with the manager.
//
// controller-runtime starts an informer on first use, and the manager's cache on every
// replica: an informer that the reconcilers' setup asks for (the HPA informer of Lanes) or
// that a field index needs (the Jobs by controller, api/index) would list and watch every
// Job and HPA of the cluster on every replica. Routing those kinds to a cache that is a
// leader-election runnable keeps the wiring as it is (main.go registers every index of
// api/index once, on the manager's FieldIndexer; the reconcilers watch and read through the
// manager's cache and client) and leaves the replicas that only serve webhooks without them.
//
// It delegates every method of cache.Cache explicitly, and embeds neither cache: a method that
// controller-runtime adds to the interface later must not reach every replica's cache unrouted
// (the build fails here instead: the assertion below), and TestLeaderCacheDeclaresEveryMethod
// checks that each method is the type's own.
type leaderCache struct {
	every   cache.Cache // every replica's
	leader  cache.Cache
	kinds   map[schema.GroupVersionKind]bool
	scheme  *runtime.Scheme
	started atomic.Bool
}

var _ cache.Cache = (*leaderCache)(nil)

// errNotLeader is what a read of a leader kind returns on a replica whose leader cache has
// not started: an empty cache must not read as "not found".
var errNotLeader = errors.New("only the leader caches this kind, and this replica does not lead (read it through the API reader)")

// newLeaderCache builds both caches with the same options (namespaces, transforms).
func newLeaderCache(cfg *rest.Config, opts cache.Options) (*leaderCache, error) {
	every, err := cache.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	leader, err := cache.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	c := &leaderCache{every: every, leader: leader, kinds: map[schema.GroupVersionKind]bool{}, scheme: opts.Scheme}
	for _, obj := range leaderKinds {
		gvk, err := apiutil.GVKForObject(obj, opts.Scheme)
		if err != nil {
			return nil, err
		}
		c.kinds[gvk] = true
	}
	return c, nil
}

// LeaderRunnable starts the leader cache; the manager runs it once this replica leads (at
// once without leader election).
func (c *leaderCache) LeaderRunnable() manager.Runnable { return leaderCacheRunnable{c} }

type leaderCacheRunnable struct{ c *leaderCache }

func (r leaderCacheRunnable) NeedLeaderElection() bool { return true }

func (r leaderCacheRunnable) Start(ctx context.Context) error {
	r.c.started.Store(true)
	return r.c.leader.Start(ctx)
}

// forObject is the cache that holds obj's kind (a list's items' kind), and whether it is the
// leader's.
func (c *leaderCache) forObject(obj runtime.Object) (cache.Cache, bool, error) {
	gvk, err := apiutil.GVKForObject(obj, c.scheme)
	if err != nil {
		return nil, false, err
	}
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	if c.kinds[gvk] {
		return c.leader, true, nil
	}
	return c.every, false, nil
}

// reader is forObject for reads, which fail on a leader kind until the leader cache started.
func (c *leaderCache) reader(obj runtime.Object) (client.Reader, error) {
	r, leader, err := c.forObject(obj)
	if err != nil {
		return nil, err
	}
	if leader && !c.started.Load() {
		return nil, fmt.Errorf("failed to read %T from the cache: %w", obj, errNotLeader)
	}
	return r, nil
}

func (c *leaderCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r, err := c.reader(obj)
	if err != nil {
		return err
	}
	return r.Get(ctx, key, obj, opts...)
}

func (c *leaderCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	r, err := c.reader(list)
	if err != nil {
		return err
	}
	return r.List(ctx, list, opts...)
}

func (c *leaderCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	to, _, err := c.forObject(obj)
	if err != nil {
		return nil, err
	}
	return to.GetInformer(ctx, obj, opts...)
}

func (c *leaderCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	if c.kinds[gvk] {
		return c.leader.GetInformerForKind(ctx, gvk, opts...)
	}
	return c.every.GetInformerForKind(ctx, gvk, opts...)
}

func (c *leaderCache) RemoveInformer(ctx context.Context, obj client.Object) error {
	to, _, err := c.forObject(obj)
	if err != nil {
		return err
	}
	return to.RemoveInformer(ctx, obj)
}

func (c *leaderCache) IndexField(ctx context.Context, obj client.Object, field string, extractValue client.IndexerFunc) error {
	to, _, err := c.forObject(obj)
	if err != nil {
		return err
	}
	return to.IndexField(ctx, obj, field, extractValue)
}

// Start is every replica's cache's: the manager starts it before it serves webhooks; the
// leader cache starts with LeaderRunnable.
func (c *leaderCache) Start(ctx context.Context) error { return c.every.Start(ctx) }

// WaitForCacheSync is every replica's cache's: the manager waits for it before it serves
// webhooks; the leader cache's informers are waited for by the controllers that watch them.
func (c *leaderCache) WaitForCacheSync(ctx context.Context) bool {
	return c.every.WaitForCacheSync(ctx)
}
