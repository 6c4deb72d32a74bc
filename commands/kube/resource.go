package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
)

// Resource is one of almanac's kinds as a command-line argument names it.
type Resource struct {
	Kind     string // ScheduledPodAutoscaler
	Group    string // autoscaling.almanac.dev
	Plural   string // scheduledpodautoscalers
	Short    string // spa (the CRD's shortName; "" for none)
	NewEmpty func() client.Object
}

// GroupResource is "plural.group", as RBAC rules and kubectl name the resource.
func (r Resource) GroupResource() string { return r.Plural + "." + r.Group }

// Names are the spellings of the resource before "/" in an argument, as kubectl accepts them:
// the kind, the plural and the short name, each also with ".group".
func (r Resource) Names() []string {
	names := []string{strings.ToLower(r.Kind), r.Plural}
	if r.Short != "" {
		names = append(names, r.Short)
	}
	for _, n := range slices.Clone(names) {
		names = append(names, n+"."+r.Group)
	}
	return names
}

// The resources that the commands name.
var (
	ScheduledPodAutoscalers = Resource{Kind: "ScheduledPodAutoscaler", Group: autoscalingv1alpha1.GroupVersion.Group, Plural: "scheduledpodautoscalers", Short: "spa",
		NewEmpty: func() client.Object { return &autoscalingv1alpha1.ScheduledPodAutoscaler{} }}
	Schedules = Resource{Kind: "Schedule", Group: autoscalingv1alpha1.GroupVersion.Group, Plural: "schedules",
		NewEmpty: func() client.Object { return &autoscalingv1alpha1.Schedule{} }}
	ScheduledJobs = Resource{Kind: "ScheduledJob", Group: batchv1alpha1.GroupVersion.Group, Plural: "scheduledjobs", Short: "sj",
		NewEmpty: func() client.Object { return &batchv1alpha1.ScheduledJob{} }}
	EventJobs = Resource{Kind: "EventJob", Group: batchv1alpha1.GroupVersion.Group, Plural: "eventjobs", Short: "ej",
		NewEmpty: func() client.Object { return &batchv1alpha1.EventJob{} }}
	Calendars = Resource{Kind: calendarv1alpha1.KindCalendar, Group: calendarv1alpha1.GroupVersion.Group, Plural: "calendars",
		NewEmpty: func() client.Object { return &calendarv1alpha1.Calendar{} }}
	ClusterCalendars = Resource{Kind: calendarv1alpha1.KindClusterCalendar, Group: calendarv1alpha1.GroupVersion.Group, Plural: "clustercalendars",
		NewEmpty: func() client.Object { return &calendarv1alpha1.ClusterCalendar{} }}
)

// Ref is an object named on the command line: KIND/NAME.
type Ref struct {
	Resource Resource
	Name     string
}

// String is "kind/name" in kubectl's form: "scheduledjob.batch.almanac.dev/report".
func (r Ref) String() string {
	return strings.ToLower(r.Resource.Kind) + "." + r.Resource.Group + "/" + r.Name
}

// ParseRef reads an argument KIND/NAME, where KIND is one of the names of one of resources
// (kind, plural or short name, with or without the group, in any case), as kubectl reads
// "sj/report" or "scheduledjob.batch.almanac.dev/report". The error says which spellings are
// accepted.
func ParseRef(arg string, resources ...Resource) (Ref, error) {
	var accepted []string
	for _, r := range resources {
		short := strings.ToLower(r.Kind)
		if r.Short != "" {
			short = r.Short
		}
		accepted = append(accepted, short+"/NAME")
	}
	kind, name, ok := strings.Cut(arg, "/")
	if !ok {
		return Ref{}, fmt.Errorf("%q: give KIND/NAME, one of %s (as kubectl names them: the kind, its plural or short name)", arg, strings.Join(accepted, ", "))
	}
	for _, r := range resources {
		if !slices.Contains(r.Names(), strings.ToLower(kind)) {
			continue
		}
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return Ref{}, fmt.Errorf("%q: %q is not the name of a %s: %s", arg, name, r.Kind, strings.Join(errs, "; "))
		}
		return Ref{Resource: r, Name: name}, nil
	}
	return Ref{}, fmt.Errorf("%q: %q is none of the kinds this command takes; give one of %s", arg, kind, strings.Join(accepted, ", "))
}

// CalendarGetter reads Calendars and ClusterCalendars from a cluster for
// calendarv1alpha1.ReadBook: the calendars that the objects a command reads name, as the
// controller finds them.
type CalendarGetter struct{ Reader client.Reader }

var _ calendarv1alpha1.Getter = CalendarGetter{}

// Calendar returns the Calendar, or nil when it does not exist.
func (g CalendarGetter) Calendar(ctx context.Context, namespace, name string) (*calendarv1alpha1.Calendar, error) {
	c := &calendarv1alpha1.Calendar{}
	if err := g.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, c); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return c, nil
}

// ClusterCalendar returns the ClusterCalendar, or nil when it does not exist.
func (g CalendarGetter) ClusterCalendar(ctx context.Context, name string) (*calendarv1alpha1.ClusterCalendar, error) {
	c := &calendarv1alpha1.ClusterCalendar{}
	if err := g.Reader.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return c, nil
}

// ReadRefused turns an error of reading (get or list) resource in where ("namespace \"shop\"",
// "any namespace", "the cluster") into a Refused error; when forbidden, it names the RBAC to
// ask for.
func ReadRefused(err error, verb string, r Resource, where string) *Error {
	if apierrors.IsForbidden(err) {
		return Refused("you may not %s %s (%s) in %s. The API server answered: %s. Ask for a Role (a ClusterRole for -A or cluster-scoped kinds) that grants %s on %s "+
			"(almanac's chart adds get, list and watch on its kinds to the built-in view role)", verb, r.Plural, r.GroupResource(), where, StatusMessage(err), verb, r.GroupResource())
	}
	return Refused("failed to %s %s in %s: %v", verb, r.Plural, where, err)
}

// StatusMessage is the API server's message of err, or err's text.
func StatusMessage(err error) string {
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		return s.Status().Message
	}
	return err.Error()
}

// List lists r into list, in ns (every namespace when ns is ""); a refusal is a Refused error
// that names the RBAC to ask for.
func List(ctx context.Context, c client.Reader, r Resource, ns string, list client.ObjectList) error {
	var opts []client.ListOption
	where := "any namespace"
	if ns != "" {
		opts = append(opts, client.InNamespace(ns))
		where = fmt.Sprintf("namespace %q", ns)
	}
	if err := c.List(ctx, list, opts...); err != nil {
		return ReadRefused(err, "list", r, where)
	}
	return nil
}
