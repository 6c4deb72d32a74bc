package sleeping

import (
	"encoding/json"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
)

// What a sleep writes to a workload: the reconciler and `almanac release` send the same
// patches. Each is a JSON merge patch of the workload (or of its scale subresource) under
// almanac's field manager, of the fields a sleep owns and nothing else, with the workload's
// resourceVersion as a precondition where the record is written, so that a workload changed
// since it was read fails the write (a conflict, read again) instead of being recorded
// wrongly.

// SleepPatch is the merge patch that records w (rec) and, except for a kind that sleeps
// through its scale subresource (ScalePatch follows), puts it to sleep, in one write.
func SleepPatch(w *Workload, rec *sleepv1alpha1.Record) []byte {
	return mergePatch(w, rec, true)
}

// RecordPatch is the merge patch that writes rec to w and changes nothing else (a put-back
// that almanac gave up: the contest is recorded, the workload left awake).
func RecordPatch(w *Workload, rec *sleepv1alpha1.Record) []byte {
	return mergePatch(w, rec, false)
}

func mergePatch(w *Workload, rec *sleepv1alpha1.Record, sleep bool) []byte {
	annotations := map[string]any{sleepv1alpha1.RecordAnnotation: rec.Encode()}
	patch := map[string]any{"metadata": metadata(w, annotations)}
	if sleep {
		switch w.Handling {
		case sleepv1alpha1.HandleReplicas:
			patch["spec"] = map[string]any{"replicas": 0}
		case sleepv1alpha1.HandleSuspend:
			patch["spec"] = map[string]any{"suspend": true}
		case sleepv1alpha1.HandlePause:
			annotations[sleepv1alpha1.KEDAPausedReplicasAnnotation] = "0"
		}
	}
	raw, _ := json.Marshal(patch)
	return raw
}

// WakePatch is the merge patch that puts back what rec recorded and removes the record, in
// one write (a kind that sleeps through its scale subresource gets its replicas from
// ScalePatch first; this patch then removes the record). A replicas or suspend that the
// record does not hold is left as it is.
func WakePatch(w *Workload, rec *sleepv1alpha1.Record) []byte {
	annotations := map[string]any{sleepv1alpha1.RecordAnnotation: nil}
	patch := map[string]any{"metadata": metadata(w, annotations)}
	switch w.Handling {
	case sleepv1alpha1.HandleReplicas:
		if rec.Replicas != nil {
			patch["spec"] = map[string]any{"replicas": *rec.Replicas}
		}
	case sleepv1alpha1.HandleSuspend:
		if rec.Suspend != nil {
			patch["spec"] = map[string]any{"suspend": *rec.Suspend}
		}
	case sleepv1alpha1.HandlePause:
		if rec.PausedReplicas != nil {
			annotations[sleepv1alpha1.KEDAPausedReplicasAnnotation] = *rec.PausedReplicas
		} else {
			annotations[sleepv1alpha1.KEDAPausedReplicasAnnotation] = nil
		}
	}
	raw, _ := json.Marshal(patch)
	return raw
}

// metadata is the metadata of a patch: the annotations, and w's resourceVersion as a
// precondition when it has one.
func metadata(w *Workload, annotations map[string]any) map[string]any {
	m := map[string]any{"annotations": annotations}
	if w.ResourceVersion != "" {
		m["resourceVersion"] = w.ResourceVersion
	}
	return m
}

// ScalePatch is the merge patch of a scale subresource that sets its replicas.
func ScalePatch(replicas int32) []byte {
	return []byte(`{"spec":{"replicas":` + strconv.Itoa(int(replicas)) + `}}`)
}

// DisownPatch is the JSON patch that removes, from a workload's managedFields (entries), the
// entries that a sleep's writes made: manager's Update entries of the object itself and of its
// scale subresource, each tested first so that nothing else is removed; nil when there are
// none. Waking removes them so that almanac owns no field of an awake workload: a GitOps tool
// told to ignore almanac's fields (Argo CD's managedFieldsManagers) then sees and syncs the
// workload's replicas again. No value is removed with them. An empty managedFields in a
// request means "unchanged", so when they are the only entries the list becomes [{}], which
// clears it.
func DisownPatch(entries []metav1.ManagedFieldsEntry, manager string) []byte {
	type op struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value,omitempty"`
	}
	var ops []op
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.Manager != manager || e.Operation != metav1.ManagedFieldsOperationUpdate || (e.Subresource != "" && e.Subresource != "scale") {
			continue
		}
		p := fmt.Sprintf("/metadata/managedFields/%d", i)
		ops = append(ops, op{Op: "test", Path: p + "/manager", Value: manager}, op{Op: "test", Path: p + "/operation", Value: string(e.Operation)},
			op{Op: "remove", Path: p})
	}
	if len(ops) == 0 {
		return nil
	}
	if len(ops)/3 == len(entries) {
		ops = []op{{Op: "test", Path: "/metadata/managedFields/0/manager", Value: manager}, {Op: "replace", Path: "/metadata/managedFields", Value: []map[string]any{{}}}}
	}
	raw, _ := json.Marshal(ops)
	return raw
}
