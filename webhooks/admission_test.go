package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	apiadmission "github.com/almanac-dev/almanac/api/admission"
	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

func request(op admissionv1.Operation, obj, old string) admission.Request {
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: op, Name: "a", Namespace: "ns",
		Object: runtime.RawExtension{Raw: []byte(obj)},
	}}
	if old != "" {
		req.OldObject = runtime.RawExtension{Raw: []byte(old)}
	}
	return req
}

func sortedPatch(ops []jsonpatch.JsonPatchOperation) []jsonpatch.JsonPatchOperation {
	ops = slices.Clone(ops)
	slices.SortFunc(ops, func(a, b jsonpatch.JsonPatchOperation) int { return strings.Compare(a.Path, b.Path) })
	return ops
}

// TestMutatorPatchesOnlyWhatDefaultingChanged checks the JSON patches of the mutating webhook:
// only the defaulted fields, nothing that a typed round trip adds (creationTimestamp: null,
// status: {}) and no removal of fields the Go types do not know; and an empty patch for an
// object that is already defaulted.
func TestMutatorPatchesOnlyWhatDefaultingChanged(t *testing.T) {
	schedule := apiadmission.RulesFor(autoscalingv1alpha1.GroupVersion.WithKind("Schedule"))
	scheduledJob := apiadmission.RulesFor(batchv1alpha1.GroupVersion.WithKind("ScheduledJob"))
	spa := apiadmission.RulesFor(autoscalingv1alpha1.GroupVersion.WithKind("ScheduledPodAutoscaler"))
	tests := []struct {
		name  string
		rules apiadmission.Rules
		obj   string
		want  []jsonpatch.JsonPatchOperation
	}{{
		name:  "Schedule",
		rules: schedule,
		obj: `{"apiVersion":"autoscaling.almanac.dev/v1alpha1","kind":"Schedule","metadata":{"name":"a","namespace":"ns"},
			"spec":{"scaleTargetRef":{"name":"web"},"type":"Weekly","startDayOfWeek":"fri","endDayOfWeek":"Monday","startTime":"18:00","endTime":"8:00",
			"minReplicas":2,"timeZone":"asia/tokyo","futureField":{"x":1}}}`,
		want: []jsonpatch.JsonPatchOperation{
			{Operation: "add", Path: "/spec/scaleTargetRef/apiVersion", Value: "autoscaling.almanac.dev/v1alpha1"},
			{Operation: "add", Path: "/spec/scaleTargetRef/kind", Value: "ScheduledPodAutoscaler"},
			{Operation: "replace", Path: "/spec/endTime", Value: "08:00"},
			{Operation: "replace", Path: "/spec/startDayOfWeek", Value: "Friday"},
			{Operation: "replace", Path: "/spec/timeZone", Value: "Asia/Tokyo"},
		},
	}, {
		name:  "Schedule with days and an empty zone",
		rules: schedule,
		obj: `{"apiVersion":"autoscaling.almanac.dev/v1alpha1","kind":"Schedule","metadata":{"name":"a","namespace":"ns"},
			"spec":{"scaleTargetRef":{"apiVersion":"autoscaling.almanac.dev/v1alpha1","kind":"ScheduledPodAutoscaler","name":"web"},"type":"Daily","startTime":"9:00","endTime":"17:00",
			"daysOfWeek":["fri","mon","FRI"],"minReplicas":2,"timeZone":""}}`,
		want: []jsonpatch.JsonPatchOperation{
			// The list whole; timeZone "" stays, for the schema to reject.
			{Operation: "replace", Path: "/spec/daysOfWeek", Value: []any{"Monday", "Friday"}},
			{Operation: "replace", Path: "/spec/startTime", Value: "09:00"},
		},
	}, {
		name:  "Schedule already defaulted",
		rules: schedule,
		obj: `{"apiVersion":"autoscaling.almanac.dev/v1alpha1","kind":"Schedule","metadata":{"name":"a","namespace":"ns","creationTimestamp":"2027-01-01T00:00:00Z"},
			"spec":{"scaleTargetRef":{"apiVersion":"autoscaling.almanac.dev/v1alpha1","kind":"ScheduledPodAutoscaler","name":"web"},"type":"Daily","startTime":"09:00","endTime":"17:00",
			"minReplicas":2,"timeZone":"UTC"},"status":{"phase":"Active"}}`,
	}, {
		name:  "legacy AT manifest",
		rules: scheduledJob,
		obj: `{"apiVersion":"batch.almanac.dev/v1alpha1","kind":"ScheduledJob","metadata":{"name":"a","namespace":"ns"},
			"spec":{"schedule":"2020-03-21T13:53:55Z","timeZone":"UTC","concurrencyPolicy":"Allow","successfulJobsHistoryLimit":3,"failedJobsHistoryLimit":1,"startingDeadlineSeconds":600,
			"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox"}],"restartPolicy":"Never"}}}}}}`,
		want: []jsonpatch.JsonPatchOperation{
			{Operation: "add", Path: "/spec/at", Value: "2020-03-21T13:53:55"},
			{Operation: "remove", Path: "/spec/schedule"},
		},
	}, {
		name:  "ScheduledPodAutoscaler",
		rules: spa,
		obj: `{"apiVersion":"autoscaling.almanac.dev/v1alpha1","kind":"ScheduledPodAutoscaler","metadata":{"name":"a","namespace":"ns"},
			"spec":{"overlapPolicy":"Max","horizontalPodAutoscalerSpec":{"scaleTargetRef":{"kind":"Deployment","name":"web"},"maxReplicas":5}}}`,
		want: []jsonpatch.JsonPatchOperation{
			{Operation: "add", Path: "/spec/horizontalPodAutoscalerSpec/metrics", Value: []any{map[string]any{
				"type": "Resource", "resource": map[string]any{"name": "cpu", "target": map[string]any{"type": "Utilization", "averageUtilization": float64(80)}},
			}}},
			{Operation: "add", Path: "/spec/horizontalPodAutoscalerSpec/minReplicas", Value: float64(1)},
			{Operation: "add", Path: "/spec/horizontalPodAutoscalerSpec/scaleTargetRef/apiVersion", Value: "apps/v1"},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := (&mutator{rules: tt.rules}).Handle(context.Background(), request(admissionv1.Create, tt.obj, ""))
			if !resp.Allowed {
				t.Fatalf("denied: %v", resp.Result)
			}
			// Round-trip the values through JSON, as the API server receives them.
			data, err := json.Marshal(resp.Patches)
			if err != nil {
				t.Fatal(err)
			}
			var got []jsonpatch.JsonPatchOperation
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(sortedPatch(tt.want), sortedPatch(got), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMutatorSkipsObjectsBeingDeleted(t *testing.T) {
	obj := `{"apiVersion":"autoscaling.almanac.dev/v1alpha1","kind":"Schedule","metadata":{"name":"a","deletionTimestamp":"2027-01-01T00:00:00Z","finalizers":["x"]},
		"spec":{"scaleTargetRef":{"name":"web"},"type":"Daily","startTime":"9:00","endTime":"17:00"}}`
	resp := (&mutator{rules: apiadmission.RulesFor(autoscalingv1alpha1.GroupVersion.WithKind("Schedule"))}).Handle(context.Background(), request(admissionv1.Update, obj, obj))
	if !resp.Allowed || len(resp.Patches) > 0 {
		t.Errorf("want allowed without patches, got %+v", resp)
	}
}

func TestValidatorResponses(t *testing.T) {
	v := &validator{
		rules:   apiadmission.RulesFor(autoscalingv1alpha1.GroupVersion.WithKind("Schedule")),
		clock:   clocktesting.NewFakePassiveClock(now),
		objects: lookupOf(spa("web", "Max")),
	}
	valid := `{"apiVersion":"autoscaling.almanac.dev/v1alpha1","kind":"Schedule","metadata":{"name":"a","namespace":"ns"},
		"spec":{"scaleTargetRef":{"name":"web"},"type":"Daily","startTime":"09:00","endTime":"17:00","timeZone":"EST","minReplicas":2}}`
	invalid := strings.Replace(valid, `"EST"`, `"Mars/Olympus"`, 1)

	resp := v.Handle(context.Background(), request(admissionv1.Create, valid, ""))
	if !resp.Allowed || len(resp.Warnings) != 1 || !strings.HasPrefix(resp.Warnings[0], "spec.timeZone: EST is a fixed UTC-05:00 offset") {
		t.Errorf("valid: got %+v", resp.AdmissionResponse)
	}

	resp = v.Handle(context.Background(), request(admissionv1.Create, invalid, ""))
	want := &metav1.Status{
		TypeMeta: metav1.TypeMeta{}, Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid,
		Message: `Schedule.autoscaling.almanac.dev "a" is invalid: spec.timeZone: Invalid value: "Mars/Olympus": "Mars/Olympus" is not a known IANA time zone: ` +
			`expected a name such as "Europe/Berlin", "America/New_York" or "UTC", or a whole-hour offset such as "+09:00"`,
		Details: &metav1.StatusDetails{Name: "a", Group: "autoscaling.almanac.dev", Kind: "Schedule", Causes: []metav1.StatusCause{{
			Type: metav1.CauseTypeFieldValueInvalid, Field: "spec.timeZone",
			Message: `Invalid value: "Mars/Olympus": "Mars/Olympus" is not a known IANA time zone: expected a name such as "Europe/Berlin", "America/New_York" or "UTC", or a whole-hour offset such as "+09:00"`,
		}}},
	}
	if resp.Allowed {
		t.Fatal("invalid: allowed")
	}
	if diff := cmp.Diff(want, resp.Result); diff != "" {
		t.Errorf("invalid: status (-want +got):\n%s", diff)
	}

	resp = v.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Delete}})
	if !resp.Allowed {
		t.Errorf("delete: got %+v", resp.AdmissionResponse)
	}
}

// TestMutatorPatchIsTheCLIsDefaulting: the mutating webhook's JSON patch, applied to the
// object as received, gives the object that `almanac validate` defaults it to (Default), for
// every example and parity manifest, as the API server would receive it.
func TestMutatorPatchIsTheCLIsDefaulting(t *testing.T) {
	var docs []string
	for _, pattern := range []string{"../examples/*.yaml", "../test/webhooks/testdata/parity/*.yaml"} {
		files, err := filepath.Glob(pattern)
		if err != nil || len(files) == 0 {
			t.Fatalf("no manifests at %s: %v", pattern, err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, strings.Split(string(data), "\n---\n")...)
		}
	}
	checked := 0
	for _, doc := range docs {
		raw, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		var meta metav1.TypeMeta
		if err := json.Unmarshal(raw, &meta); err != nil {
			t.Fatal(err)
		}
		r := apiadmission.RulesFor(meta.GroupVersionKind())
		if r == nil {
			continue
		}
		want, _, _, err := r.Default(raw)
		if err != nil {
			t.Fatal(err)
		}
		ops, _, _, err := r.Patch(raw)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := utiljson.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		// Round-trip the operations through JSON, as the API server receives them.
		data, err := json.Marshal(ops)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &ops); err != nil {
			t.Fatal(err)
		}
		for _, op := range ops {
			if err := applyOperation(got, op); err != nil {
				t.Fatalf("%s: %v", doc, err)
			}
		}
		if diff := cmp.Diff(normalizeJSON(t, want), normalizeJSON(t, got)); diff != "" {
			t.Errorf("the patched object is not the defaulted one (-Default +patched):\n%s\n%s", diff, doc)
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("only %d manifests of almanac's kinds", checked)
	}
}

// applyOperation applies an add, replace or remove operation whose path names object fields
// (what jsonPatch writes) to obj.
func applyOperation(obj map[string]any, op jsonpatch.JsonPatchOperation) error {
	parts := strings.Split(op.Path, "/")[1:]
	for i := range parts {
		parts[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(parts[i])
	}
	parent := obj
	for _, p := range parts[:len(parts)-1] {
		next, ok := parent[p].(map[string]any)
		if !ok {
			return fmt.Errorf("%s: no object at %q", op.Path, p)
		}
		parent = next
	}
	last := parts[len(parts)-1]
	_, exists := parent[last]
	switch {
	case op.Operation == "add":
		parent[last] = op.Value
	case op.Operation == "replace" && exists:
		parent[last] = op.Value
	case op.Operation == "remove" && exists:
		delete(parent, last)
	default:
		return fmt.Errorf("%s %s: the field does not exist", op.Operation, op.Path)
	}
	return nil
}

func normalizeJSON(t *testing.T, obj map[string]any) any {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
