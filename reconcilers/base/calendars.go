package base

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
)

// +kubebuilder:rbac:groups=almanac.dev,resources=calendars;clustercalendars,verbs=get;list;watch

// ReadCalendars returns a Book of the calendars that refs (the spec.calendars of objects in
// namespace) name, read from r (the cache): calendarv1alpha1.ReadBook. Calendars that do not
// exist are not in it: the Book's Mask reports them.
func ReadCalendars(ctx context.Context, r client.Reader, namespace string, refs ...*calendarv1alpha1.Calendars) (*calendarv1alpha1.Book, error) {
	return calendarv1alpha1.ReadBook(ctx, calendarReader{r}, namespace, refs...)
}

// calendarReader is a calendarv1alpha1.Getter over a client.Reader.
type calendarReader struct{ r client.Reader }

func (c calendarReader) Calendar(ctx context.Context, namespace, name string) (*calendarv1alpha1.Calendar, error) {
	cal := &calendarv1alpha1.Calendar{}
	return orNil(cal, c.get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, cal))
}

func (c calendarReader) ClusterCalendar(ctx context.Context, name string) (*calendarv1alpha1.ClusterCalendar, error) {
	cal := &calendarv1alpha1.ClusterCalendar{}
	return orNil(cal, c.get(ctx, types.NamespacedName{Name: name}, cal))
}

// errNotFound is what get returns for an object that does not exist.
var errNotFound = errors.New("not found")

func (c calendarReader) get(ctx context.Context, key types.NamespacedName, obj client.Object) error {
	if err := c.r.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return errNotFound
		}
		return fmt.Errorf("failed to read %T %s: %w", obj, key, err)
	}
	return nil
}

// orNil returns obj when err is nil, nothing when it is errNotFound, and err otherwise.
func orNil[T any](obj *T, err error) (*T, error) {
	switch {
	case err == nil:
		return obj, nil
	case errors.Is(err, errNotFound):
		return nil, nil
	}
	return nil, err
}

// CalendarUsers returns the map function of a watch of Calendars or ClusterCalendars: the
// objects whose spec.calendars name the changed calendar (the index
// calendarv1alpha1.CalendarField of list's kind), as requests for key (the object itself, or
// what it belongs to).
func CalendarUsers[L client.ObjectList](r client.Reader, newList func() L, key func(L) []reconcile.Request) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		ref := calendarv1alpha1.CalendarReference{Kind: calendarv1alpha1.KindCalendar, Name: obj.GetName()}
		if _, cluster := obj.(*calendarv1alpha1.ClusterCalendar); cluster {
			ref.Kind = calendarv1alpha1.KindClusterCalendar
		}
		list := newList()
		if err := r.List(ctx, list, client.MatchingFields{calendarv1alpha1.CalendarField: calendarv1alpha1.ReferenceKey(obj.GetNamespace(), ref)}); err != nil {
			return nil // the cache lists only after it has synced; an error here cannot be retried
		}
		return key(list)
	}
}
