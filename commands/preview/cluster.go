package preview

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/commands/kube"
	"github.com/almanac-dev/almanac/commands/manifest"
)

// clusterSource is the File of the documents read from the cluster.
const clusterSource = "(cluster)"

// runCluster is `almanac preview --cluster`: the ScheduledPodAutoscalers, Schedules,
// ScheduledJobs and fan-in EventJobs of a namespace (or of the cluster) and the calendars they name, read from the
// cluster and previewed by the code that previews -f: they are documents as -f reads them,
// already admitted (the cluster stored them), so only admission is left out.
func runCluster(ctx context.Context, stdout, stderr io.Writer, opts options, rng Range) error {
	if opts.all && opts.kube.Namespace != "" {
		return kube.Usage("-A (--all-namespaces) and -n %s both given: preview one namespace or all of them", opts.kube.Namespace)
	}
	c, ns, err := kube.Connect(opts.kube, nil)
	if err != nil {
		return err
	}
	if opts.all {
		ns = ""
	}
	docs, err := clusterDocuments(ctx, c, ns)
	if err != nil {
		return err
	}
	docs, cals, refused := takeCalendars(docs)
	cals.source = "the cluster"
	writeRefused(stderr, refused)
	report, warnings, err := build(docs, cals, rng)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		_, _ = fmt.Fprintln(stderr, "Warning:", w)
	}
	return write(stdout, opts.output, report)
}

// clusterDocuments lists the ScheduledPodAutoscalers, Schedules, ScheduledJobs and EventJobs
// with several triggers of ns (every
// namespace when ns is "") and reads the Calendars and ClusterCalendars that they name, and
// returns them as documents, calendars first (as kubectl apply orders them).
func clusterDocuments(ctx context.Context, c client.Reader, ns string) ([]manifest.Document, error) {
	spas := &autoscalingv1alpha1.ScheduledPodAutoscalerList{}
	schedules := &autoscalingv1alpha1.ScheduleList{}
	jobs := &batchv1alpha1.ScheduledJobList{}
	eventJobs := &batchv1alpha1.EventJobList{}
	for _, l := range []struct {
		r    kube.Resource
		list client.ObjectList
	}{{kube.ScheduledPodAutoscalers, spas}, {kube.Schedules, schedules}, {kube.ScheduledJobs, jobs}, {kube.EventJobs, eventJobs}} {
		if err := kube.List(ctx, c, l.r, ns, l.list); err != nil {
			return nil, err
		}
	}
	type named struct {
		namespace string
		refs      *calendarv1alpha1.Calendars
	}
	var users []named
	var objs []client.Object
	for i := range schedules.Items {
		s := &schedules.Items[i]
		users = append(users, named{s.Namespace, s.Spec.Calendars})
	}
	for i := range jobs.Items {
		j := &jobs.Items[i]
		users = append(users, named{j.Namespace, j.Spec.Calendars})
	}
	get := kube.CalendarGetter{Reader: c}
	seen := map[string]bool{}
	for _, u := range users {
		for _, ref := range u.refs.References() {
			key := calendarv1alpha1.ReferenceKey(u.namespace, ref)
			if seen[key] {
				continue
			}
			seen[key] = true
			var (
				obj client.Object
				err error
				r   = kube.Calendars
			)
			if ref.KindOrDefault() == calendarv1alpha1.KindClusterCalendar {
				r = kube.ClusterCalendars
				var cal *calendarv1alpha1.ClusterCalendar
				if cal, err = get.ClusterCalendar(ctx, ref.Name); cal != nil {
					obj = cal
				}
			} else {
				var cal *calendarv1alpha1.Calendar
				if cal, err = get.Calendar(ctx, u.namespace, ref.Name); cal != nil {
					obj = cal
				}
			}
			if err != nil {
				return nil, kube.ReadRefused(err, "get", r, fmt.Sprintf("%s (named by an object in namespace %q)", ref, u.namespace))
			}
			if obj != nil {
				objs = append(objs, obj)
			}
		}
	}
	for i := range spas.Items {
		objs = append(objs, &spas.Items[i])
	}
	for i := range schedules.Items {
		objs = append(objs, &schedules.Items[i])
	}
	for i := range jobs.Items {
		objs = append(objs, &jobs.Items[i])
	}
	for i := range eventJobs.Items {
		if eventJobs.Items[i].IsFanIn() {
			objs = append(objs, &eventJobs.Items[i])
		}
	}
	docs := make([]manifest.Document, 0, len(objs))
	for i, obj := range objs {
		d, err := document(obj, i)
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	return docs, nil
}

// gvkOf is the kind of one of the objects that clusterDocuments reads (a typed list's items
// carry none).
func gvkOf(obj client.Object) schema.GroupVersionKind {
	switch obj.(type) {
	case *autoscalingv1alpha1.ScheduledPodAutoscaler:
		return spaGK.WithVersion(autoscalingv1alpha1.GroupVersion.Version)
	case *autoscalingv1alpha1.Schedule:
		return scheduleGK.WithVersion(autoscalingv1alpha1.GroupVersion.Version)
	case *batchv1alpha1.ScheduledJob:
		return jobGK.WithVersion(batchv1alpha1.GroupVersion.Version)
	case *batchv1alpha1.EventJob:
		return eventJobGK.WithVersion(batchv1alpha1.GroupVersion.Version)
	case *calendarv1alpha1.Calendar:
		return calendarGVK
	}
	return clusterCalendarGVK
}

// document is obj as a document of the input, as -f would have read it: with its kind, without
// managedFields.
func document(obj client.Object, index int) (manifest.Document, error) {
	obj.GetObjectKind().SetGroupVersionKind(gvkOf(obj))
	obj.SetManagedFields(nil)
	raw, err := json.Marshal(obj)
	if err != nil {
		return manifest.Document{}, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return manifest.Document{}, err
	}
	return manifest.Document{File: clusterSource, Index: index, Object: u, Raw: raw}, nil
}

// write writes the report in the output format.
func write(stdout io.Writer, output string, report Report) error {
	switch output {
	case "json":
		return WriteJSON(stdout, report)
	case "svg":
		return WriteSVG(stdout, report)
	}
	return WriteText(stdout, report)
}
