package base

import (
	"context"
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
// namespace) name, read from r (the cache). Calendars that do not exist are not in it: the
// Book's Mask reports them.
func ReadCalendars(ctx context.Context, r client.Reader, namespace string, refs ...*calendarv1alpha1.Calendars) (*calendarv1alpha1.Book, error) {
	book := calendarv1alpha1.NewBook(nil, nil)
	for _, c := range refs {
		for _, ref := range c.References() {
			if _, ok := book.Spec(namespace, ref); ok {
				continue
			}
			if ref.KindOrDefault() == calendarv1alpha1.KindClusterCalendar {
				cal := &calendarv1alpha1.ClusterCalendar{}
				if ok, err := get(ctx, r, types.NamespacedName{Name: ref.Name}, cal); err != nil || !ok {
					if err != nil {
						return nil, err
					}
					continue
				}
				book.AddClusterCalendar(cal)
				continue
			}
			cal := &calendarv1alpha1.Calendar{}
			if ok, err := get(ctx, r, types.NamespacedName{Namespace: namespace, Name: ref.Name}, cal); err != nil || !ok {
				if err != nil {
					return nil, err
				}
				continue
			}
			book.AddCalendar(cal)
		}
	}
	return book, nil
}

func get(ctx context.Context, r client.Reader, key types.NamespacedName, obj client.Object) (bool, error) {
	if err := r.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("failed to read %T %s: %w", obj, key, err)
	}
	return true, nil
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
