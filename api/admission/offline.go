package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
)

// DefaultNamespace is the namespace of an input object that names none, as for kubectl
// without a context namespace.
const DefaultNamespace = "default"

// Document is one object of the input of offline admission, with where it came from
// (commands/manifest reads them: manifest.Document is this type).
type Document struct {
	// File is the path the object was read from, or "-" for standard input.
	File string
	// Index is the position of the YAML document in File, from 0. Objects of one List share
	// the List's index.
	Index int
	// Object is the object as written: nothing defaulted.
	Object *unstructured.Unstructured
	// Raw is the object's JSON, for strict decoding.
	Raw []byte
}

// Result is the verdict on one almanac object of the input.
type Result struct {
	File       string        `json:"file"`
	Index      int           `json:"index"`
	APIVersion string        `json:"apiVersion"`
	Kind       string        `json:"kind"`
	Namespace  string        `json:"namespace"`
	Name       string        `json:"name"`
	Allowed    bool          `json:"allowed"`
	Errors     []ResultError `json:"errors"`
	Warnings   []string      `json:"warnings"`

	// Defaulted is the object as it would be stored (nil when it was rejected before the
	// mutating webhook, e.g. for an unknown field).
	Defaulted map[string]any `json:"-"`
	// Input is the position of the object's document in the input (documents of one List
	// share File and Index).
	Input int `json:"-"`
}

// ResultError is one cause of a rejection, as the API server reports it in a StatusCause:
// the field path, the field.ErrorType and the message.
type ResultError struct {
	Field   string `json:"field"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Summary counts the results.
type Summary struct {
	Objects  int `json:"objects"`
	Rejected int `json:"rejected"`
	Warnings int `json:"warnings"`
	Skipped  int `json:"skipped"`
}

// Report is the outcome of Validate.
type Report struct {
	Results []Result `json:"results"`
	Summary Summary  `json:"summary"`
	// Notes are said once for the whole input: what the offline run could not check.
	Notes []string `json:"notes"`
	// Skipped are the input objects that are not almanac's, which the API server would hand
	// to other handlers.
	Skipped []Document `json:"-"`
	// Replaced are the skipped objects of systems that almanac replaces, each with the command
	// that converts it: those the ReplacedBy option names (none without it).
	Replaced []Replaced `json:"replaced"`
}

// Replaced is a skipped object of a system that almanac replaces.
type Replaced struct {
	File       string `json:"file"`
	Index      int    `json:"index"`
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	// Hint says what the object is and which command converts it.
	Hint string `json:"hint"`
}

// PermissionsNotChecked is what `almanac validate` reports, once, when its input holds an
// object that the permission check covers: offline there is no user to ask about.
const PermissionsNotChecked = "permissions are not checked offline: in the cluster, almanac's validating webhook also refuses a ScheduledJob or EventJob " +
	"from a user who may not create Jobs in its namespace (" + batchv1alpha1.StartsJobsText + "), a ScheduledPodAutoscaler from one who may not create and patch HorizontalPodAutoscalers there, " +
	"one attached to an object (spec.targetRef) from one who may not patch that object (a workload: its scale subresource), " +
	"and a Sleep from one who may not patch (and scale) the kinds it puts to sleep " +
	"(see what you may do with: kubectl auth can-i create jobs --namespace NAMESPACE)"

// CalendarsFromInput is what `almanac validate` reports, once, when a Schedule or ScheduledJob
// of its input names a calendar that the input does not hold: offline, the calendars are
// those of the input, and one that already exists in the cluster is not seen.
const CalendarsFromInput = "calendars are looked up in the input only: a Calendar or ClusterCalendar named in spec.calendars that is not in the input " +
	"is reported as missing, even if it exists in the cluster (validate it together with its calendars, e.g. -f calendars/ -f schedules/)"

// checksPermissions reports whether the webhook's permission check (webhooks/permissions.go,
// DelegatedActions) covers objects of kind gk.
func checksPermissions(gk schema.GroupKind) bool {
	switch gk {
	case batchv1alpha1.GroupVersion.WithKind("ScheduledJob").GroupKind(), batchv1alpha1.GroupVersion.WithKind("EventJob").GroupKind(),
		autoscalingv1alpha1.GroupVersion.WithKind("ScheduledPodAutoscaler").GroupKind(), sleepv1alpha1.GroupVersion.WithKind(sleepv1alpha1.KindSleep).GroupKind():
		return true
	}
	return false
}

// Hint says, for a skipped object of kind gvk read from file ("-" for standard input), what
// it is and which command converts it into one of almanac's kinds; ok is false for a kind
// that nothing converts. `almanac validate` passes `almanac migrate`'s (ReplacedBy), so that
// this package needs nothing of the commands.
type Hint func(gvk schema.GroupVersionKind, file string) (hint string, ok bool)

// Option changes what Validate and ValidateUpdate report.
type Option func(*options)

type options struct {
	replacedBy Hint
}

// ReplacedBy reports each skipped object for which hint says ok in Report.Replaced, with the
// hint.
func ReplacedBy(hint Hint) Option { return func(o *options) { o.replacedBy = hint } }

// Validate runs, offline, what the API server and almanac's webhooks do when the documents
// are applied in order to an empty cluster (kubectl apply -f): each almanac object is a
// CREATE. For each almanac object,
// strict decoding against the CRD schema, schema defaulting, the mutating webhook's
// defaulting, schema defaulting again, OpenAPI schema and CEL validation, and the validating
// webhook's rules with env.Now.
//
// Other objects are looked up in the input: the autoscaler of a Schedule, the trigger of an
// EventJob and the calendars that Schedules and ScheduledJobs name anywhere in it (they will
// exist once everything is applied; calendars that the input does not hold are reported as
// missing, with the note CalendarsFromInput); the sibling Schedules
// and the chain of EventJob triggers among the objects before this one that were admitted (so
// an overlap or a cycle is reported once, at the object that closes it, as the webhook would).
// Objects that are not almanac's are skipped, but count as existing for triggers (a Job or
// CronJob in the same input).
func Validate(ctx context.Context, docs []Document, now time.Time, opts ...Option) (*Report, error) {
	return validate(ctx, docs, now, false, opts)
}

// ValidateUpdate runs, offline, what the API server and almanac's webhooks do when the
// documents are applied again, unchanged, to a cluster that already stores them (a GitOps
// pipeline re-applying its manifests): each almanac object is an UPDATE of itself as stored
// (after defaulting). Problems of fields that did not change are warnings, as on the API
// server: the webhooks ratchet their time rules (a OneShot window or an at that has passed
// since it was created is admitted with a warning), and the schema's rules ratchet too.
// Every object of the input exists, for the others' lookups (autoscalers, sibling Schedules,
// triggers), whatever the verdict on it.
func ValidateUpdate(ctx context.Context, docs []Document, now time.Time, opts ...Option) (*Report, error) {
	return validate(ctx, docs, now, true, opts)
}

func validate(ctx context.Context, docs []Document, now time.Time, update bool, opts []Option) (*Report, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	schemas, err := loadSchemas()
	if err != nil {
		return nil, fmt.Errorf("failed to load the embedded CustomResourceDefinitions: %w", err)
	}
	report := &Report{Results: []Result{}, Notes: []string{}, Replaced: []Replaced{}}
	lookup := newInputLookup()
	var results []*Result

	// Pass 1: everything up to the schema, for every object, so that later objects can be
	// found as targets.
	type pending struct {
		result *Result
		rules  Rules
		obj    map[string]any
	}
	var queue []pending
	for input, doc := range docs {
		obj := doc.Object.DeepCopy()
		gvk := obj.GroupVersionKind()
		switch {
		case allRules[gvk] != nil && allRules[gvk].ClusterScoped():
			obj.SetNamespace("") // as kubectl apply sends a cluster-scoped object
		case obj.GetNamespace() == "":
			obj.SetNamespace(DefaultNamespace)
		}
		lookup.exists[objectKey(gvk.GroupKind(), obj.GetNamespace(), obj.GetName())] = true
		lookup.labels[objectKey(gvk.GroupKind(), obj.GetNamespace(), obj.GetName())] = obj.GetLabels()
		lookup.addHPA(obj)
		if !isAlmanacGroup(gvk.Group) {
			report.Skipped = append(report.Skipped, doc)
			report.Summary.Skipped++
			if o.replacedBy == nil {
				continue
			}
			if hint, ok := o.replacedBy(gvk, doc.File); ok {
				report.Replaced = append(report.Replaced, Replaced{
					File: doc.File, Index: doc.Index, APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(),
					Namespace: obj.GetNamespace(), Name: obj.GetName(), Hint: hint,
				})
			}
			continue
		}
		res := &Result{
			File: doc.File, Index: doc.Index, APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(),
			Namespace: obj.GetNamespace(), Name: obj.GetName(), Errors: []ResultError{}, Warnings: []string{},
			Input: input,
		}
		results = append(results, res)

		s, r := schemas[gvk], allRules[gvk]
		if s == nil || r == nil {
			res.Errors = append(res.Errors, unknownKindError(gvk))
			continue
		}
		content := obj.UnstructuredContent()
		if errs := s.decodeStrict(content); len(errs) > 0 {
			res.Errors = append(res.Errors, resultErrors(errs)...)
			continue
		}
		s.applyDefaults(content)
		raw, err := json.Marshal(content)
		if err != nil {
			return nil, err
		}
		defaulted, warnings, _, err := r.Default(raw)
		if err != nil {
			res.Errors = append(res.Errors, ResultError{Type: string(field.ErrorTypeInvalid), Message: err.Error()})
			continue
		}
		res.Warnings = append(res.Warnings, warnings...)
		s.applyDefaults(defaulted)
		s.prepareForCreate(defaulted)
		if nestedString(defaulted, "metadata", "name") == "" {
			if gen := nestedString(defaulted, "metadata", "generateName"); gen != "" {
				// The API server generates the name before validation.
				defaulted["metadata"].(map[string]any)["name"] = gen + "xxxxx"
			}
		}
		res.Defaulted = defaulted
		schemaErrs := s.validate(ctx, defaulted)
		if update {
			// The object as stored is defaulted too: the update changes nothing but the
			// resourceVersion that an update names.
			updated, stored := runtime.DeepCopyJSON(defaulted), runtime.DeepCopyJSON(defaulted)
			setResourceVersion(updated, "1")
			setResourceVersion(stored, "1")
			schemaErrs = s.validateUpdate(ctx, updated, stored)
		}
		if len(schemaErrs) > 0 {
			res.Errors = append(res.Errors, resultErrors(schemaErrs)...)
			continue
		}
		typed, err := decodeTyped(r, defaulted)
		if err != nil {
			res.Errors = append(res.Errors, ResultError{Type: string(field.ErrorTypeInvalid), Message: err.Error()})
			continue
		}
		lookup.all[objectKey(gvk.GroupKind(), res.Namespace, res.Name)] = typed
		if update {
			lookup.admit(typed) // already stored
		}
		queue = append(queue, pending{result: res, rules: r, obj: defaulted})
	}

	// Pass 2: almanac's validation, in input order.
	for _, p := range queue {
		raw, err := json.Marshal(p.obj)
		if err != nil {
			return nil, err
		}
		var oldRaw []byte
		if update {
			oldRaw = raw
		}
		errs, warnings, err := p.rules.Validate(ctx, raw, oldRaw, Env{Now: now, Objects: lookup})
		if err != nil {
			return nil, err
		}
		p.result.Errors = append(p.result.Errors, resultErrors(errs)...)
		p.result.Warnings = append(p.result.Warnings, warnings...)
		key := objectKey(p.rules.GroupVersionKind().GroupKind(), p.result.Namespace, p.result.Name)
		switch {
		case update:
			// A rejected update leaves the stored object as it was.
		case len(errs) == 0:
			lookup.admit(lookup.all[key])
		default:
			lookup.rejected[key] = true
		}
	}

	for _, res := range results {
		if gv, err := schema.ParseGroupVersion(res.APIVersion); err == nil && checksPermissions(gv.WithKind(res.Kind).GroupKind()) && !slices.Contains(report.Notes, PermissionsNotChecked) {
			report.Notes = append(report.Notes, PermissionsNotChecked)
		}
		res.Allowed = len(res.Errors) == 0
		res.Warnings = dedupe(res.Warnings)
		report.Summary.Objects++
		report.Summary.Warnings += len(res.Warnings)
		if !res.Allowed {
			report.Summary.Rejected++
		}
		report.Results = append(report.Results, *res)
	}
	if lookup.calendarMissed {
		report.Notes = append(report.Notes, CalendarsFromInput)
	}
	return report, nil
}

func decodeTyped(r Rules, obj map[string]any) (Object, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return r.Decode(raw)
}

func unknownKindError(gvk schema.GroupVersionKind) ResultError {
	var supported []string
	for k := range allRules {
		if k.Group == gvk.Group {
			supported = append(supported, k.GroupVersion().String()+" "+k.Kind)
		}
	}
	slices.Sort(supported)
	return ResultError{
		Field: "kind", Type: string(field.ErrorTypeNotSupported),
		Message: fmt.Sprintf("Unsupported value: %q: the API server has no %s in %s; supported: %s",
			gvk.GroupVersion().String()+" "+gvk.Kind, gvk.Kind, gvk.GroupVersion(), strings.Join(supported, ", ")),
	}
}

func resultErrors(errs field.ErrorList) []ResultError {
	out := make([]ResultError, 0, len(errs))
	for _, e := range errs {
		out = append(out, ResultError{Field: e.Field, Type: string(e.Type), Message: e.ErrorBody()})
	}
	return out
}

func nestedString(obj map[string]any, path ...string) string {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[p]
	}
	s, _ := cur.(string)
	return s
}

// dedupe drops repeated warnings, as the API server does.
func dedupe(warnings []string) []string {
	out := []string{}
	for _, w := range warnings {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

type inputKey struct {
	gk              schema.GroupKind
	namespace, name string
}

func objectKey(gk schema.GroupKind, namespace, name string) inputKey {
	return inputKey{gk: gk, namespace: namespace, name: name}
}

// inputLookup is the Lookup of `almanac validate`: the input set.
type inputLookup struct {
	// exists has every object of the input, almanac's or not.
	exists map[inputKey]bool
	// all has the almanac objects that passed the schema, by key (a later document replaces
	// an earlier one, as kubectl apply would update it).
	all map[inputKey]Object
	// admitted has the almanac objects admitted so far, in order.
	admitted map[inputKey]Object
	// rejected has the almanac objects that the validating rules rejected so far: on the API
	// server they do not exist for the objects after them.
	rejected map[inputKey]bool
	// hpas has the HorizontalPodAutoscalers of the input (of any version), by key.
	hpas map[inputKey]*autoscalingv2.HorizontalPodAutoscaler
	// labels has the labels of every object of the input, by key.
	labels map[inputKey]map[string]string
	// calendarMissed is set when a calendar was looked up that the input does not hold.
	calendarMissed bool
}

func newInputLookup() *inputLookup {
	return &inputLookup{exists: map[inputKey]bool{}, all: map[inputKey]Object{}, admitted: map[inputKey]Object{}, rejected: map[inputKey]bool{},
		hpas: map[inputKey]*autoscalingv2.HorizontalPodAutoscaler{}, labels: map[inputKey]map[string]string{}}
}

var hpaGroupKind = schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}

// addHPA keeps obj's name and spec.scaleTargetRef when it is a HorizontalPodAutoscaler (every
// version has that field, in the same form).
func (l *inputLookup) addHPA(obj *unstructured.Unstructured) {
	if obj.GroupVersionKind().GroupKind() != hpaGroupKind {
		return
	}
	hpa := &autoscalingv2.HorizontalPodAutoscaler{}
	hpa.Name, hpa.Namespace = obj.GetName(), obj.GetNamespace()
	ref, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "scaleTargetRef")
	hpa.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: ref["apiVersion"], Kind: ref["kind"], Name: ref["name"]}
	l.hpas[objectKey(hpaGroupKind, hpa.Namespace, hpa.Name)] = hpa
}

func (l *inputLookup) admit(obj Object) {
	if obj == nil {
		return
	}
	gvk := allRulesKind(obj)
	l.admitted[objectKey(gvk.GroupKind(), obj.GetNamespace(), obj.GetName())] = obj
}

func allRulesKind(obj Object) schema.GroupVersionKind {
	switch obj.(type) {
	case *autoscalingv1alpha1.ScheduledPodAutoscaler:
		return autoscalingv1alpha1.GroupVersion.WithKind("ScheduledPodAutoscaler")
	case *autoscalingv1alpha1.Schedule:
		return autoscalingv1alpha1.GroupVersion.WithKind("Schedule")
	case *batchv1alpha1.ScheduledJob:
		return batchv1alpha1.GroupVersion.WithKind("ScheduledJob")
	case *batchv1alpha1.EventJob:
		return batchv1alpha1.GroupVersion.WithKind("EventJob")
	case *calendarv1alpha1.Calendar:
		return calendarv1alpha1.GroupVersion.WithKind(calendarv1alpha1.KindCalendar)
	case *calendarv1alpha1.ClusterCalendar:
		return calendarv1alpha1.GroupVersion.WithKind(calendarv1alpha1.KindClusterCalendar)
	case *sleepv1alpha1.Sleep:
		return sleepv1alpha1.GroupVersion.WithKind(sleepv1alpha1.KindSleep)
	case *sleepv1alpha1.ClusterSleep:
		return sleepv1alpha1.GroupVersion.WithKind(sleepv1alpha1.KindClusterSleep)
	}
	return schema.GroupVersionKind{}
}

// ScheduledPodAutoscaler finds the autoscaler anywhere in the input, so that a Schedule listed
// before its autoscaler gets no "does not exist" warning, unless it was rejected (then it does
// not exist, as on the API server). But an autoscaler that has not been
// admitted yet is returned with overlapPolicy Max: on the API server the Schedule is created
// first, when no overlapPolicy Forbid applies to it, so its overlaps are warnings there too
// (and the autoscaler warns when it arrives with Forbid).
func (l *inputLookup) ScheduledPodAutoscaler(_ context.Context, namespace, name string) (*autoscalingv1alpha1.ScheduledPodAutoscaler, error) {
	key := objectKey(autoscalingv1alpha1.GroupVersion.WithKind("ScheduledPodAutoscaler").GroupKind(), namespace, name)
	if spa, ok := l.admitted[key].(*autoscalingv1alpha1.ScheduledPodAutoscaler); ok {
		return spa, nil
	}
	if l.rejected[key] {
		return nil, nil
	}
	spa, ok := l.all[key].(*autoscalingv1alpha1.ScheduledPodAutoscaler)
	if !ok {
		return nil, nil
	}
	spa = spa.DeepCopy()
	spa.Spec.OverlapPolicy = autoscalingv1alpha1.OverlapPolicyMax
	return spa, nil
}

func (l *inputLookup) Schedules(_ context.Context, namespace, autoscaler string) ([]autoscalingv1alpha1.Schedule, error) {
	var out []autoscalingv1alpha1.Schedule
	for key, obj := range l.admitted {
		if s, ok := obj.(*autoscalingv1alpha1.Schedule); ok && key.namespace == namespace && s.Spec.ScaleTargetRef.Name == autoscaler {
			out = append(out, *s)
		}
	}
	return out, nil
}

func (l *inputLookup) EventJob(_ context.Context, namespace, name string) (*batchv1alpha1.EventJob, error) {
	ej, _ := l.admitted[objectKey(batchv1alpha1.GroupVersion.WithKind("EventJob").GroupKind(), namespace, name)].(*batchv1alpha1.EventJob)
	return ej, nil
}

func (l *inputLookup) EventJobFollowers(_ context.Context, namespace, name string) ([]*batchv1alpha1.EventJob, error) {
	var out []*batchv1alpha1.EventJob
	for key, obj := range l.admitted {
		if ej, ok := obj.(*batchv1alpha1.EventJob); ok && key.namespace == namespace &&
			slices.Contains(batchv1alpha1.EventJobTrigger(ej), batchv1alpha1.ControllerKey(batchv1alpha1.GroupVersion.Group, string(batchv1alpha1.TriggerKindEventJob), name)) {
			out = append(out, ej)
		}
	}
	return out, nil
}

func (l *inputLookup) Exists(_ context.Context, gvk schema.GroupVersionKind, namespace, name string) (bool, error) {
	key := objectKey(gvk.GroupKind(), namespace, name)
	if isAlmanacGroup(gvk.Group) {
		return l.admitted[key] != nil || (l.all[key] != nil && !l.rejected[key]), nil
	}
	return l.exists[key], nil
}

// Selects looks in the input: the objects of a sleep's namespace that it puts to sleep are
// those the input holds (they exist once everything is applied).
func (l *inputLookup) Selects(_ context.Context, gvk schema.GroupVersionKind, namespace string, selector labels.Selector) (bool, error) {
	for key, l := range l.labels {
		if key.gk == gvk.GroupKind() && (namespace == "" || key.namespace == namespace) && selector.Matches(labels.Set(l)) {
			return true, nil
		}
	}
	return false, nil
}

func (l *inputLookup) AttachedAutoscalers(_ context.Context, namespace, group, kind, name string) ([]autoscalingv1alpha1.ScheduledPodAutoscaler, error) {
	want := autoscalingv1alpha1.TargetIndexValue(group, kind, name)
	var out []autoscalingv1alpha1.ScheduledPodAutoscaler
	for key, obj := range l.admitted {
		if spa, ok := obj.(*autoscalingv1alpha1.ScheduledPodAutoscaler); ok && key.namespace == namespace &&
			slices.Contains(autoscalingv1alpha1.ScheduledPodAutoscalerTarget(spa), want) {
			out = append(out, *spa)
		}
	}
	return out, nil
}

func (l *inputLookup) HorizontalPodAutoscalers(_ context.Context, namespace string) ([]autoscalingv2.HorizontalPodAutoscaler, error) {
	var out []autoscalingv2.HorizontalPodAutoscaler
	for key, hpa := range l.hpas {
		if key.namespace == namespace {
			out = append(out, *hpa)
		}
	}
	return out, nil
}

func setResourceVersion(obj map[string]any, rv string) {
	if m, ok := obj["metadata"].(map[string]any); ok {
		m["resourceVersion"] = rv
	}
}

// Calendar finds the Calendar anywhere in the input, unless it was rejected, as
// ScheduledPodAutoscaler finds an autoscaler: once the input is applied it exists.
func (l *inputLookup) Calendar(_ context.Context, namespace, name string) (*calendarv1alpha1.Calendar, error) {
	c, _ := l.calendar(objectKey(calendarv1alpha1.GroupVersion.WithKind(calendarv1alpha1.KindCalendar).GroupKind(), namespace, name)).(*calendarv1alpha1.Calendar)
	return c, nil
}

// ClusterCalendar finds the ClusterCalendar anywhere in the input, unless it was rejected.
func (l *inputLookup) ClusterCalendar(_ context.Context, name string) (*calendarv1alpha1.ClusterCalendar, error) {
	c, _ := l.calendar(objectKey(calendarv1alpha1.GroupVersion.WithKind(calendarv1alpha1.KindClusterCalendar).GroupKind(), "", name)).(*calendarv1alpha1.ClusterCalendar)
	return c, nil
}

func (l *inputLookup) calendar(key inputKey) Object {
	if obj := l.admitted[key]; obj != nil {
		return obj
	}
	if obj := l.all[key]; obj != nil && !l.rejected[key] {
		return obj
	}
	l.calendarMissed = true
	return nil
}
