package v1alpha1

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/almanac-dev/almanac/api/timing"
)

// Timing is the calendar for the time engine, named as messages name it (see
// CalendarReference.String).
func (s *CalendarSpec) Timing(name string) timing.CalendarSpec {
	out := timing.CalendarSpec{Name: name, TimeZone: s.TimeZone}
	for _, d := range s.Days {
		out.Days = append(out.Days, timing.CalendarDay{Date: d.Date, Name: d.Name})
	}
	for _, p := range s.Periods {
		out.Periods = append(out.Periods, timing.CalendarPeriod{Start: p.Start, End: p.End, Name: p.Name})
	}
	return out
}

// Compile compiles the spec of the calendar that ref names with the time engine. The error
// names each wrong field by its path (spec.days[2].date: …).
func Compile(ref CalendarReference, spec *CalendarSpec) (c *timing.Calendar, err error) {
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, fmt.Errorf("the time engine failed on this calendar (please report it): %v", r)
		}
	}()
	c, errs := spec.Timing(ref.String()).Compile()
	if len(errs) > 0 {
		return nil, timing.Join("spec.", errs)
	}
	return c, nil
}

// Book is the calendars that objects may name: Calendars (of any namespace) and
// ClusterCalendars. The reconcilers fill it from their cache, admission from the calendars a
// request names, and `almanac preview` and `almanac validate` from their input files. A nil
// Book has no calendars.
//
// A Book compiles each calendar once, the first time an object's Mask names it: admission
// compares a Schedule with up to 99 siblings and a reconcile evaluates as many, which may all
// name the same calendars of up to 2000 entries. It is safe for concurrent use.
//
// +kubebuilder:object:generate=false
type Book struct {
	namespaced map[string]map[string]*CalendarSpec // namespace → name → spec
	cluster    map[string]*CalendarSpec

	mu       sync.Mutex
	compiled map[string]compiled // by ReferenceKey
}

// compiled is a calendar of the Book, compiled, or why it does not compile.
type compiled struct {
	cal *timing.Calendar
	err error
}

// NewBook returns a Book of the given calendars; it keeps pointers to their specs.
func NewBook(calendars []Calendar, cluster []ClusterCalendar) *Book {
	b := &Book{namespaced: map[string]map[string]*CalendarSpec{}, cluster: map[string]*CalendarSpec{}, compiled: map[string]compiled{}}
	for i := range calendars {
		b.AddCalendar(&calendars[i])
	}
	for i := range cluster {
		b.AddClusterCalendar(&cluster[i])
	}
	return b
}

// AddCalendar adds (or replaces) a Calendar.
func (b *Book) AddCalendar(c *Calendar) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.compiled, ReferenceKey(c.Namespace, CalendarReference{Kind: KindCalendar, Name: c.Name}))
	ns := b.namespaced[c.Namespace]
	if ns == nil {
		ns = map[string]*CalendarSpec{}
		b.namespaced[c.Namespace] = ns
	}
	ns[c.Name] = &c.Spec
}

// AddClusterCalendar adds (or replaces) a ClusterCalendar.
func (b *Book) AddClusterCalendar(c *ClusterCalendar) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.compiled, ReferenceKey("", CalendarReference{Kind: KindClusterCalendar, Name: c.Name}))
	b.cluster[c.Name] = &c.Spec
}

// Spec returns the spec of the calendar that ref names for an object in namespace, if the
// Book has it.
func (b *Book) Spec(namespace string, ref CalendarReference) (*CalendarSpec, bool) {
	if b == nil {
		return nil, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var s *CalendarSpec
	if ref.KindOrDefault() == KindClusterCalendar {
		s = b.cluster[ref.Name]
	} else {
		s = b.namespaced[namespace][ref.Name]
	}
	return s, s != nil
}

// Mask compiles the calendars that c names, for an object in namespace, into what they close
// (timing.Mask), and says what is wrong with them: a calendar that does not exist, or that
// does not compile, holds the object (timing.MissingCalendar), and problems has a message for
// it, which names the field (spec.calendars.skip[0]) and the fix.
func (b *Book) Mask(namespace string, c *Calendars) (mask timing.Mask, problems []string) {
	if c.Empty() {
		return timing.Mask{}, nil
	}
	resolve := func(list string, refs []CalendarReference) []*timing.Calendar {
		var out []*timing.Calendar
		for i, ref := range refs {
			path := fmt.Sprintf("spec.calendars.%s[%d]", list, i)
			cal, found, err := b.compile(namespace, ref)
			if !found {
				problems = append(problems, path+": "+MissingText(namespace, ref))
				out = append(out, timing.MissingCalendar(ref.String()))
				continue
			}
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %s is invalid (%v): fix it; until then it holds this object as a missing calendar does", path, ref, err))
				out = append(out, timing.MissingCalendar(ref.String()))
				continue
			}
			out = append(out, cal)
		}
		return out
	}
	mask.Skip = resolve("skip", c.Skip)
	mask.Only = resolve("only", c.Only)
	return mask, problems
}

// compile returns the calendar that ref names for an object in namespace, compiled once per
// Book; found is false when the Book does not have it.
func (b *Book) compile(namespace string, ref CalendarReference) (cal *timing.Calendar, found bool, err error) {
	spec, found := b.Spec(namespace, ref)
	if !found {
		return nil, false, nil
	}
	if ref.KindOrDefault() == KindClusterCalendar {
		namespace = ""
	}
	key := ReferenceKey(namespace, ref)
	b.mu.Lock()
	c, ok := b.compiled[key]
	b.mu.Unlock()
	if !ok {
		c.cal, c.err = Compile(CalendarReference{Kind: ref.KindOrDefault(), Name: ref.Name}, spec)
		b.mu.Lock()
		b.compiled[key] = c
		b.mu.Unlock()
	}
	return c.cal, true, c.err
}

// MissingText says what a missing calendar means and how to fix it.
func MissingText(namespace string, ref CalendarReference) string {
	where := fmt.Sprintf("in namespace %q", namespace)
	if ref.KindOrDefault() == KindClusterCalendar {
		where = "in the cluster"
	}
	return fmt.Sprintf("%s does not exist %s: until it does, no window of this object opens and no run starts (a missing calendar holds it); "+
		"create it, or correct the name or kind (Calendar or ClusterCalendar)", ref, where)
}

// Getter reads calendars: the webhooks' and `almanac validate`'s admission.Lookup, and the
// reconcilers' cache. Each returns nil (and no error) for a calendar that does not exist.
//
// +kubebuilder:object:generate=false
type Getter interface {
	Calendar(ctx context.Context, namespace, name string) (*Calendar, error)
	ClusterCalendar(ctx context.Context, name string) (*ClusterCalendar, error)
}

// ReadBook returns a Book of the calendars that refs (the spec.calendars of objects in
// namespace) name, read through g; those that do not exist are not in it (its Mask reports
// them and holds the objects that name them). Each calendar is read once, however many objects
// name it, and at most MaxReferences of each list of each object are read: the schema admits
// no more.
func ReadBook(ctx context.Context, g Getter, namespace string, refs ...*Calendars) (*Book, error) {
	book := NewBook(nil, nil)
	absent := map[CalendarReference]bool{}
	read := func(ref CalendarReference) error {
		ref.Kind = ref.KindOrDefault()
		if _, ok := book.Spec(namespace, ref); ok || absent[ref] {
			return nil
		}
		if ref.Kind == KindClusterCalendar {
			cal, err := g.ClusterCalendar(ctx, ref.Name)
			if err != nil || cal == nil {
				absent[ref] = cal == nil
				return err
			}
			book.AddClusterCalendar(cal)
			return nil
		}
		cal, err := g.Calendar(ctx, namespace, ref.Name)
		if err != nil || cal == nil {
			absent[ref] = cal == nil
			return err
		}
		// The Book keys Calendars by their namespace, which an object read from a file may
		// leave empty.
		if cal.Namespace != namespace {
			cal = &Calendar{ObjectMeta: *cal.ObjectMeta.DeepCopy(), Spec: cal.Spec}
			cal.Namespace = namespace
		}
		book.AddCalendar(cal)
		return nil
	}
	for _, c := range refs {
		if c == nil {
			continue
		}
		for _, list := range [][]CalendarReference{c.Skip, c.Only} {
			for _, ref := range list[:min(len(list), MaxReferences)] {
				if err := read(ref); err != nil {
					return nil, err
				}
			}
		}
	}
	return book, nil
}

// ReferenceKeys returns the calendars that an object's spec.calendars name, as index values
// (see CalendarField).
func ReferenceKeys(namespace string, c *Calendars) []string {
	var out []string
	for _, r := range c.References() {
		out = append(out, ReferenceKey(namespace, r))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ReferenceKey is the index value of a reference from an object in namespace: "Calendar/ns/name"
// or "ClusterCalendar/name".
func ReferenceKey(namespace string, r CalendarReference) string {
	if r.KindOrDefault() == KindClusterCalendar {
		return KindClusterCalendar + "/" + r.Name
	}
	return strings.Join([]string{KindCalendar, namespace, r.Name}, "/")
}

// CalendarField is the name of the cache index of Schedules and ScheduledJobs by the
// calendars they name (ReferenceKey values): the reconcilers find the objects that a
// calendar's change wakes with it.
const CalendarField = "spec.calendars"

// The condition that Schedules and ScheduledJobs that name calendars carry.
const (
	// ConditionCalendars is True when every calendar that spec.calendars names exists and
	// can be evaluated, False (ReasonCalendarNotUsable) while one cannot: that one holds the
	// object (no window opens, no run starts). Absent when spec.calendars names none.
	ConditionCalendars = "Calendars"
	// ReasonCalendarsFound: every calendar named exists and can be evaluated.
	ReasonCalendarsFound = "CalendarsFound"
	// ReasonCalendarNotUsable: a calendar named does not exist or cannot be evaluated; the
	// message names the field and the fix.
	ReasonCalendarNotUsable = "CalendarNotUsable"
)

// Condition returns the Calendars condition for an object whose spec.calendars is c and whose
// calendars have problems (Book.Mask), without its time and generation; ok is false when c
// names no calendar (the condition is then removed).
func Condition(c *Calendars, problems []string) (cond metav1.Condition, ok bool) {
	if c.Empty() {
		return metav1.Condition{}, false
	}
	if len(problems) > 0 {
		return metav1.Condition{Type: ConditionCalendars, Status: metav1.ConditionFalse, Reason: ReasonCalendarNotUsable,
			Message: strings.Join(problems, "; ")}, true
	}
	return metav1.Condition{Type: ConditionCalendars, Status: metav1.ConditionTrue, Reason: ReasonCalendarsFound,
		Message: "every calendar named in spec.calendars exists"}, true
}
