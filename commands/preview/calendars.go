package preview

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "sigs.k8s.io/json"

	"github.com/almanac-dev/almanac/api/admission"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
	"github.com/almanac-dev/almanac/commands/manifest"
)

var (
	calendarGVK        = calendarv1alpha1.GroupVersion.WithKind(calendarv1alpha1.KindCalendar)
	clusterCalendarGVK = calendarv1alpha1.GroupVersion.WithKind(calendarv1alpha1.KindClusterCalendar)
)

// Calendars are the Calendars and ClusterCalendars of the input, which the Schedules and
// ScheduledJobs of the input name in spec.calendars. The zero Calendars holds none.
type Calendars struct {
	// Book holds the calendars that compile, as the controller would find them.
	Book *calendarv1alpha1.Book
	// refused are the keys (calendarv1alpha1.ReferenceKey) of the calendars that do not
	// compile: reported as refused, and missing for the objects that name them.
	refused map[string]bool
	// source is where the calendars come from, for the notes: "" for the input files, "the
	// cluster" for --cluster.
	source string
}

// takeCalendars takes the Calendars and ClusterCalendars out of docs and reads them as
// admission would store them (`almanac preview` has them admitted first; Build, which admits
// nothing, relies on this): decoded strictly, timeZone defaulted to UTC, within the schema's
// limits and compiled by the time engine. A calendar that fails is refused with the file and the field, as admission refuses
// objects, and is missing for the objects that name it. The other documents are returned in
// order.
func takeCalendars(docs []manifest.Document) (rest []manifest.Document, cals Calendars, refused []admission.Result) {
	cals = Calendars{Book: calendarv1alpha1.NewBook(nil, nil), refused: map[string]bool{}}
	for i, d := range docs {
		gvk := d.Object.GroupVersionKind()
		if gvk != calendarGVK && gvk != clusterCalendarGVK {
			rest = append(rest, d)
			continue
		}
		ref := calendarv1alpha1.CalendarReference{Kind: gvk.Kind, Name: d.Object.GetName()}
		namespace := ""
		if gvk == calendarGVK {
			namespace = namespaceOf(d.Object.GetNamespace())
		}
		res := admission.Result{File: d.File, Index: d.Index, APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind,
			Namespace: namespace, Name: ref.Name, Errors: []admission.ResultError{}, Warnings: []string{}, Input: i}
		spec, add, err := readCalendar(d, gvk, namespace)
		if err == nil {
			_, err = calendarv1alpha1.Compile(ref, spec)
		}
		key := calendarv1alpha1.ReferenceKey(namespace, ref)
		if err != nil {
			res.Errors = append(res.Errors, admission.ResultError{Type: "FieldValueInvalid", Message: err.Error()})
			refused = append(refused, res)
			cals.refused[key] = true
			continue
		}
		// A later document replaces an earlier one of the same name, as kubectl apply does.
		add(cals.Book)
		delete(cals.refused, key)
	}
	return rest, cals, refused
}

// markRefused records the calendars among results (admission's refusals): they are missing for
// the objects that name them, and the notes say they were refused.
func (ic Calendars) markRefused(results []admission.Result) {
	for _, r := range results {
		if r.APIVersion != calendarv1alpha1.GroupVersion.String() || (r.Kind != calendarv1alpha1.KindCalendar && r.Kind != calendarv1alpha1.KindClusterCalendar) {
			continue
		}
		namespace := ""
		if r.Kind == calendarv1alpha1.KindCalendar {
			namespace = namespaceOf(r.Namespace)
		}
		ic.refused[calendarv1alpha1.ReferenceKey(namespace, calendarv1alpha1.CalendarReference{Kind: r.Kind, Name: r.Name})] = true
	}
}

// readCalendar decodes a calendar document strictly and returns its spec with the defaults
// that admission writes, and how to add it to a book. The error names the field.
func readCalendar(d manifest.Document, gvk schema.GroupVersionKind, namespace string) (*calendarv1alpha1.CalendarSpec, func(*calendarv1alpha1.Book), error) {
	var (
		spec *calendarv1alpha1.CalendarSpec
		into any
		add  func(*calendarv1alpha1.Book)
	)
	if gvk == calendarGVK {
		c := &calendarv1alpha1.Calendar{}
		spec, into = &c.Spec, c
		add = func(b *calendarv1alpha1.Book) { c.Namespace = namespace; b.AddCalendar(c) }
	} else {
		c := &calendarv1alpha1.ClusterCalendar{}
		spec, into = &c.Spec, c
		add = func(b *calendarv1alpha1.Book) { b.AddClusterCalendar(c) }
	}
	// Strict as the API server: field names match case-sensitively, unknown and duplicate
	// fields are errors.
	strict, err := kjson.UnmarshalStrict(d.Raw, into, kjson.DisallowUnknownFields)
	if err == nil && len(strict) > 0 {
		err = errors.Join(strict...)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("cannot be decoded as a %s: %w", gvk.Kind, err)
	}
	// The schema defaults an omitted timeZone to UTC and refuses one written empty.
	if tz, found, _ := unstructured.NestedFieldNoCopy(d.Object.Object, "spec", "timeZone"); found && tz == "" {
		return nil, nil, fmt.Errorf(`spec.timeZone: Invalid value: "": timeZone is empty: omit the field for UTC, or write an IANA time zone name such as "Europe/Berlin"`)
	}
	if spec.TimeZone == "" {
		spec.TimeZone = timing.DefaultZone
	}
	switch {
	case len(spec.Days) > calendarv1alpha1.MaxDays:
		return nil, nil, fmt.Errorf("spec.days: Too many: %d: must have at most %d items; split the calendar in two and name both", len(spec.Days), calendarv1alpha1.MaxDays)
	case len(spec.Periods) > calendarv1alpha1.MaxPeriods:
		return nil, nil, fmt.Errorf("spec.periods: Too many: %d: must have at most %d items; split the calendar in two and name both", len(spec.Periods), calendarv1alpha1.MaxPeriods)
	}
	return spec, add, nil
}

// notes says, for an object whose spec.calendars is c, which of the calendars it names the
// input does not hold (or holds refused): the controller holds the object until they exist
// (see calendarv1alpha1.Book.Mask), and the preview shows it held. what is "Schedule" or
// "ScheduledJob"; held says what holding it means for it.
func (ic Calendars) notes(what, namespace, name string, c *calendarv1alpha1.Calendars, held string) []string {
	if c.Empty() {
		return nil
	}
	var out []string
	note := func(list string, refs []calendarv1alpha1.CalendarReference) {
		for i, ref := range refs {
			if _, ok := ic.Book.Spec(namespace, ref); ok {
				continue
			}
			where := fmt.Sprintf(" (namespace %q)", namespace)
			if ref.KindOrDefault() == calendarv1alpha1.KindClusterCalendar {
				where = ""
			}
			head := fmt.Sprintf("%s %s/%s: spec.calendars.%s[%d]: %s%s", what, namespace, name, list, i, ref, where)
			if ic.source != "" {
				out = append(out, fmt.Sprintf("%s does not exist in %s: the controller holds this %s (%s) until it does; "+
					"create it, or correct the name or kind (Calendar or ClusterCalendar)", head, ic.source, what, held))
				continue
			}
			if ic.refused[calendarv1alpha1.ReferenceKey(namespace, ref)] {
				out = append(out, fmt.Sprintf("%s is in the input but refused (see above): the controller holds this %s (%s) until it exists and is valid; "+
					"fix the calendar", head, what, held))
				continue
			}
			out = append(out, fmt.Sprintf("%s is not in the input: the controller holds this %s (%s) until it exists; "+
				"add the file with the calendar (-f), or correct the name or kind (Calendar or ClusterCalendar)", head, what, held))
		}
	}
	note("skip", c.Skip)
	note("only", c.Only)
	return out
}
