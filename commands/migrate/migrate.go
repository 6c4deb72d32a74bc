// Package migrate is `almanac migrate`: it converts the manifests of the five systems that
// almanac replaces into almanac manifests with the same behaviour, offline.
//
//   - scheduled-pod-autoscaler (autoscaling.d-kuro.github.io/v1): ScheduledPodAutoscaler and
//     Schedule become almanac's; its Weekly windows, which it read as the daily window on each
//     day from the start day to the end day, become Daily windows with daysOfWeek;
//   - k8s-at (batch.my.domain/v1): AT becomes a ScheduledJob with at, to the second, in the
//     zone of the timestamp's offset;
//   - the CronTab controller (alpha.ianlewis.org/v1): CronTab becomes a ScheduledJob in UTC
//     whose Job template wraps the CronTab's Pod spec;
//   - the kubebuilder CronJob tutorial (batch.tutorial.kubebuilder.io/v1): CronJob becomes a
//     ScheduledJob with all its fields;
//   - kitagry/eventjob (batch.kitagry.github.io/v1): EventJob becomes almanac's EventJob with
//     the same trigger.
//
// Objects of other kinds pass through unchanged. Each conversion whose meaning needs a word
// is reported as a note; an object that cannot be converted with the same behaviour is left
// out and reported as an error, with what and why. docs/migrate.md describes every mapping and
// what differs on purpose.
//
// The rules of time (zones, clocks, days, cron) are the time engine's (api/timing): a
// converted window or schedule is compiled by it, so what migrate writes is what the
// webhooks admit.
package migrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "sigs.k8s.io/json"

	"github.com/almanac-dev/almanac/commands/manifest"
)

// Source is a kind of a replaced system that migrate converts.
type Source struct {
	// System is the replaced project's name, as its users know it.
	System string
	// GroupKind is the kind's group and kind (every version of the group: each project
	// published one).
	GroupKind schema.GroupKind
	// Into is the almanac kind it becomes.
	Into string

	convert func(c *conversion, obj map[string]any) (map[string]any, error)
}

// sources are the kinds migrate converts.
var sources = []Source{
	{System: "scheduled-pod-autoscaler", GroupKind: schema.GroupKind{Group: "autoscaling.d-kuro.github.io", Kind: "ScheduledPodAutoscaler"}, Into: "ScheduledPodAutoscaler", convert: convertDKuroAutoscaler},
	{System: "scheduled-pod-autoscaler", GroupKind: schema.GroupKind{Group: "autoscaling.d-kuro.github.io", Kind: "Schedule"}, Into: "Schedule", convert: convertDKuroSchedule},
	{System: "k8s-at", GroupKind: schema.GroupKind{Group: "batch.my.domain", Kind: "AT"}, Into: "ScheduledJob", convert: convertAT},
	{System: "the CronTab controller", GroupKind: schema.GroupKind{Group: "alpha.ianlewis.org", Kind: "CronTab"}, Into: "ScheduledJob", convert: convertCronTab},
	{System: "the kubebuilder CronJob tutorial", GroupKind: schema.GroupKind{Group: "batch.tutorial.kubebuilder.io", Kind: "CronJob"}, Into: "ScheduledJob", convert: convertTutorialCronJob},
	{System: "kitagry/eventjob", GroupKind: schema.GroupKind{Group: "batch.kitagry.github.io", Kind: "EventJob"}, Into: "EventJob", convert: convertKitagryEventJob},
}

// Lookup returns the replaced system's kind that gvk is, if it is one. `almanac validate`
// uses it to say which command converts such an object.
func Lookup(gvk schema.GroupVersionKind) (Source, bool) {
	i := slices.IndexFunc(sources, func(s Source) bool { return s.GroupKind == gvk.GroupKind() })
	if i < 0 {
		return Source{}, false
	}
	return sources[i], true
}

// Result is the outcome of Convert.
type Result struct {
	// Objects are the output, in input order: converted, or passed through unchanged.
	// Objects that could not be converted are not in it.
	Objects []*unstructured.Unstructured
	// Notes are the conversions whose meaning needs a word, one line each, in input order.
	Notes []string
	// Errors are the objects that could not be converted with the same behaviour: what and
	// why, one line each.
	Errors []string
}

// Convert converts the objects of the replaced systems among docs and passes the others
// through. It never fails as a whole: each object that cannot be converted is an error line.
func Convert(docs []manifest.Document) Result {
	res := Result{Objects: []*unstructured.Unstructured{}}
	for _, d := range docs {
		src, ok := Lookup(d.Object.GroupVersionKind())
		if !ok {
			res.Objects = append(res.Objects, d.Object)
			continue
		}
		c := &conversion{subject: subject(d.Object)}
		out, err := src.convert(c, d.Object.DeepCopy().UnstructuredContent())
		if err != nil {
			res.Errors = append(res.Errors, fmt.Sprintf("%s: cannot be converted: %v", c.subject, err))
			continue
		}
		res.Notes = append(res.Notes, c.notes...)
		res.Objects = append(res.Objects, &unstructured.Unstructured{Object: out})
	}
	return res
}

// subject names an object in notes and errors: "Schedule nginx-push-notification", with
// its namespace when it has one.
func subject(obj *unstructured.Unstructured) string {
	name := obj.GetName()
	if name == "" {
		name = obj.GetGenerateName() + "*"
	}
	if ns := obj.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return obj.GetKind() + " " + name
}

// conversion collects the notes of one object.
type conversion struct {
	subject string
	notes   []string
}

func (c *conversion) note(format string, args ...any) {
	c.notes = append(c.notes, c.subject+": "+fmt.Sprintf(format, args...))
}

// decodeSpec decodes obj's spec into spec as the API server does (field names are case
// sensitive), refusing fields that the replaced system's API did not have: migrate would drop
// them silently otherwise.
func decodeSpec(obj map[string]any, spec any) error {
	raw, err := json.Marshal(obj["spec"])
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(raw, spec)
	if err == nil && len(strict) > 0 {
		err = errors.Join(strict...)
	}
	if err != nil {
		return fmt.Errorf("spec cannot be read as its system's API: %w; convert it by hand", err)
	}
	return nil
}

// serverFields are metadata fields that the API server writes; they describe the old object,
// not the new one.
var serverFields = []string{"uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
	"deletionGracePeriodSeconds", "managedFields", "selfLink"}

// lastApplied is kubectl's record of the old object's manifest.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// metadata returns the metadata for the converted object: name, namespace, labels and
// annotations as written, without what the API server wrote for the old object. Owner
// references and finalizers are dropped with a note: they name the old objects' UIDs and
// controllers, so the garbage collector would delete the new object with the old one, and no
// controller would remove the finalizers.
func metadata(c *conversion, obj map[string]any) map[string]any {
	meta, _ := obj["metadata"].(map[string]any)
	out := map[string]any{}
	for k, v := range meta {
		if !slices.Contains(serverFields, k) {
			out[k] = v
		}
	}
	if annotations, ok := out["annotations"].(map[string]any); ok {
		delete(annotations, lastApplied)
		if len(annotations) == 0 {
			delete(out, "annotations")
		}
	}
	if refs, ok := out["ownerReferences"].([]any); ok && len(refs) > 0 {
		var names []string
		for _, r := range refs {
			if ref, ok := r.(map[string]any); ok {
				names = append(names, fmt.Sprintf("%v %v", ref["kind"], ref["name"]))
			}
		}
		c.note("ownerReferences (%s) dropped: they name the old objects, whose deletion would delete this one", strings.Join(names, ", "))
	}
	delete(out, "ownerReferences")
	if finalizers, ok := out["finalizers"].([]any); ok && len(finalizers) > 0 {
		c.note("finalizers %v dropped: no controller would remove them", finalizers)
	}
	delete(out, "finalizers")
	return out
}

// object returns an almanac object.
func object(apiVersion, kind string, meta, spec map[string]any) map[string]any {
	return map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta, "spec": spec}
}

// Hint says, for an object of a system that almanac replaces, what it is and which command
// converts it into almanac's kind: `almanac validate` reports it instead of only skipping the
// object (admission.ReplacedBy). file is where the object was read ("-" for standard input).
// ok is false for every other kind.
func Hint(gvk schema.GroupVersionKind, file string) (string, bool) {
	src, ok := Lookup(gvk)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%s (%s) of %s, which almanac replaces: `almanac migrate -f %s` converts it into an almanac %s with the same behaviour",
		withArticle(gvk.Kind), gvk.GroupVersion(), src.System, file, src.Into), true
}

func withArticle(noun string) string {
	if strings.ContainsRune("AEIOU", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}
