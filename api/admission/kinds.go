package admission

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"gomodules.xyz/jsonpatch/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
)

// Object is an API object with metadata: what controller-runtime calls client.Object, written
// with apimachinery's interfaces so that api/ needs no controller-runtime. A client.Object is
// an Object, and the other way round.
type Object interface {
	metav1.Object
	runtime.Object
}

// Rules binds the defaulting and validation functions of one kind to its JSON form, which is
// what both the webhooks and the CLI handle.
type Rules interface {
	GroupVersionKind() schema.GroupVersionKind
	// Resource is the kind's plural resource name.
	Resource() string
	// ClusterScoped reports whether the kind's objects have no namespace (ClusterCalendar).
	ClusterScoped() bool
	// Default decodes raw, defaults it and returns raw with the changes applied, and the
	// warnings. skip is true for an object being deleted, which is left alone.
	Default(raw []byte) (obj map[string]any, warnings []string, skip bool, err error)
	// Patch is Default as JSON patch operations on raw: none when defaulting changes nothing.
	Patch(raw []byte) (ops []jsonpatch.JsonPatchOperation, warnings []string, skip bool, err error)
	// Validate decodes raw (and oldRaw, on update; nil on create) and validates it.
	Validate(ctx context.Context, raw, oldRaw []byte, env Env) (field.ErrorList, []string, error)
	// Decode decodes raw into the kind's Go type.
	Decode(raw []byte) (Object, error)
}

type kindRules[T Object] struct {
	gvk      schema.GroupVersionKind
	resource string
	defaults func(T) []string
	validate func(ctx context.Context, obj, old T, env Env) (field.ErrorList, []string, error)
	// keepEmpty are the fields (JSON paths) whose explicitly empty value defaulting keeps, for
	// the schema to reject: the typed form cannot tell "" from an omitted field, which the
	// schema's default has filled in before the webhook is called.
	keepEmpty [][]string
	// cluster is true for a cluster-scoped kind.
	cluster bool
}

func (k *kindRules[T]) GroupVersionKind() schema.GroupVersionKind { return k.gvk }
func (k *kindRules[T]) Resource() string                          { return k.resource }
func (k *kindRules[T]) ClusterScoped() bool                       { return k.cluster }

func (k *kindRules[T]) decode(raw []byte) (T, error) {
	var zero T
	obj := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
	if err := json.Unmarshal(raw, obj); err != nil {
		return zero, fmt.Errorf("failed to decode a %s: %w", k.gvk.Kind, err)
	}
	return obj, nil
}

func (k *kindRules[T]) Decode(raw []byte) (Object, error) { return k.decode(raw) }

func (k *kindRules[T]) Default(raw []byte) (map[string]any, []string, bool, error) {
	obj, changes, warnings, skip, err := k.changes(raw)
	if err != nil || skip {
		return nil, nil, skip, err
	}
	if obj == nil {
		if err := utiljson.Unmarshal(raw, &obj); err != nil {
			return nil, nil, false, fmt.Errorf("failed to decode the object: %w", err)
		}
	}
	if changes != nil {
		obj = mergeApply(obj, changes).(map[string]any)
	}
	return obj, warnings, false, nil
}

func (k *kindRules[T]) Patch(raw []byte) ([]jsonpatch.JsonPatchOperation, []string, bool, error) {
	obj, changes, warnings, skip, err := k.changes(raw)
	if err != nil || skip || changes == nil {
		return nil, warnings, skip, err
	}
	return jsonPatch(obj, changes), warnings, false, nil
}

// changes decodes raw, defaults it, and returns raw decoded and the merge patch of what
// defaulting changed (defaultingChanges), nil when it changed nothing. When the typed form
// marshals the same before and after defaulting, raw is not decoded again and obj is nil too.
func (k *kindRules[T]) changes(raw []byte) (obj, changes map[string]any, warnings []string, skip bool, err error) {
	typed, err := k.decode(raw)
	if err != nil {
		return nil, nil, nil, false, err
	}
	if typed.GetDeletionTimestamp() != nil {
		return nil, nil, nil, true, nil
	}
	before, err := json.Marshal(typed)
	if err != nil {
		return nil, nil, nil, false, err
	}
	warnings = k.defaults(typed)
	after, err := json.Marshal(typed)
	if err != nil {
		return nil, nil, nil, false, err
	}
	if bytes.Equal(before, after) {
		return nil, nil, warnings, false, nil
	}
	obj, changes, err = defaultingChanges(raw, before, after, k.keepEmpty)
	return obj, changes, warnings, false, err
}

func (k *kindRules[T]) Validate(ctx context.Context, raw, oldRaw []byte, env Env) (field.ErrorList, []string, error) {
	obj, err := k.decode(raw)
	if err != nil {
		return nil, nil, err
	}
	var old T
	if oldRaw != nil {
		if old, err = k.decode(oldRaw); err != nil {
			return nil, nil, err
		}
	}
	return k.validate(ctx, obj, old, env)
}

// allRules holds the rules of almanac's kinds, by GroupVersionKind.
var allRules = func() map[schema.GroupVersionKind]Rules {
	list := []Rules{
		&kindRules[*autoscalingv1alpha1.ScheduledPodAutoscaler]{
			gvk:      autoscalingv1alpha1.GroupVersion.WithKind("ScheduledPodAutoscaler"),
			resource: "scheduledpodautoscalers",
			defaults: DefaultScheduledPodAutoscaler,
			validate: ValidateScheduledPodAutoscaler,
		},
		&kindRules[*autoscalingv1alpha1.Schedule]{
			gvk:      autoscalingv1alpha1.GroupVersion.WithKind("Schedule"),
			resource: "schedules",
			defaults: DefaultSchedule,
			validate: ValidateSchedule,
			// timeZone: "" is not UTC: the contract rejects an empty zone.
			keepEmpty: [][]string{{"spec", "timeZone"}},
		},
		&kindRules[*batchv1alpha1.ScheduledJob]{
			gvk:       batchv1alpha1.GroupVersion.WithKind("ScheduledJob"),
			resource:  "scheduledjobs",
			defaults:  DefaultScheduledJob,
			validate:  ValidateScheduledJob,
			keepEmpty: [][]string{{"spec", "timeZone"}},
		},
		&kindRules[*batchv1alpha1.EventJob]{
			gvk:      batchv1alpha1.GroupVersion.WithKind("EventJob"),
			resource: "eventjobs",
			defaults: DefaultEventJob,
			validate: ValidateEventJob,
		},
		&kindRules[*calendarv1alpha1.Calendar]{
			gvk:       calendarv1alpha1.GroupVersion.WithKind(calendarv1alpha1.KindCalendar),
			resource:  "calendars",
			defaults:  DefaultCalendar,
			validate:  ValidateCalendar,
			keepEmpty: [][]string{{"spec", "timeZone"}},
		},
		&kindRules[*calendarv1alpha1.ClusterCalendar]{
			gvk:       calendarv1alpha1.GroupVersion.WithKind(calendarv1alpha1.KindClusterCalendar),
			resource:  "clustercalendars",
			defaults:  DefaultClusterCalendar,
			validate:  ValidateClusterCalendar,
			keepEmpty: [][]string{{"spec", "timeZone"}},
			cluster:   true,
		},
		&kindRules[*sleepv1alpha1.Sleep]{
			gvk:      sleepv1alpha1.GroupVersion.WithKind(sleepv1alpha1.KindSleep),
			resource: "sleeps",
			defaults: DefaultSleep,
			validate: ValidateSleep,
		},
		&kindRules[*sleepv1alpha1.ClusterSleep]{
			gvk:      sleepv1alpha1.GroupVersion.WithKind(sleepv1alpha1.KindClusterSleep),
			resource: "clustersleeps",
			defaults: DefaultClusterSleep,
			validate: ValidateClusterSleep,
			cluster:  true,
		},
	}
	m := make(map[schema.GroupVersionKind]Rules, len(list))
	for _, r := range list {
		m[r.GroupVersionKind()] = r
	}
	return m
}()

// RulesFor returns the rules of one of almanac's kinds; nil for any other kind.
func RulesFor(gvk schema.GroupVersionKind) Rules { return allRules[gvk] }

// Kinds returns almanac's kinds (the four of autoscaling and batch, the two calendars and the
// two sleeps), the ones RulesFor knows, sorted by group and kind.
func Kinds() []schema.GroupVersionKind {
	kinds := slices.Collect(maps.Keys(allRules))
	slices.SortFunc(kinds, func(a, b schema.GroupVersionKind) int {
		return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Version, b.Version), strings.Compare(a.Kind, b.Kind))
	})
	return kinds
}

// isAlmanacGroup reports whether group is one of almanac's API groups.
func isAlmanacGroup(group string) bool {
	return group == autoscalingv1alpha1.GroupVersion.Group || group == batchv1alpha1.GroupVersion.Group ||
		group == calendarv1alpha1.GroupVersion.Group
}
