package v1alpha1

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestResumedAt(t *testing.T) {
	at := func(s string) *metav1.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return &metav1.Time{Time: tm}
	}
	entry := func(manager, subresource string, when *metav1.Time, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: subresource,
			Time: when, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
	}
	spec := `{"f:spec":{".":{},"f:schedule":{},"f:timeZone":{}}}`
	suspend := `{"f:spec":{"f:suspend":{}}}`
	tests := []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		want    string
	}{
		{"the entry that owns suspend, not a later write of other fields nor the status", []metav1.ManagedFieldsEntry{
			entry("kubectl-client-side-apply", "", at("2027-05-01T00:00:10Z"), spec),
			entry("kubectl-patch", "", at("2027-05-01T00:02:30Z"), suspend),
			entry("kubectl-label", "", at("2027-05-01T00:04:00Z"), `{"f:metadata":{"f:labels":{"f:team":{}}}}`),
			entry("almanac", "status", at("2027-05-01T00:05:00Z"), `{"f:status":{"f:conditions":{}}}`),
		}, "2027-05-01T00:02:30Z"},
		{"suspend removed rather than set to false: unknown (the removal stamps no entry)", []metav1.ManagedFieldsEntry{
			entry("kubectl-client-side-apply", "", at("2027-05-01T00:03:00Z"), spec),
			entry("almanac", "status", at("2027-05-01T00:05:00Z"), `{"f:status":{}}`),
		}, ""},
		{"owned by two managers (the same value applied by both): the newer", []metav1.ManagedFieldsEntry{
			entry("argocd-controller", "", at("2027-05-01T00:03:00Z"), suspend),
			entry("kubectl", "", at("2027-05-01T00:01:00Z"), suspend),
		}, "2027-05-01T00:03:00Z"},
		{"no managedFields", nil, ""},
		{"only the status's", []metav1.ManagedFieldsEntry{entry("almanac", "status", at("2027-05-01T00:05:00Z"), `{"f:status":{}}`)}, ""},
		{"a field set that is not JSON", []metav1.ManagedFieldsEntry{entry("x", "", at("2027-05-01T00:02:00Z"), `not json`)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sj := &ScheduledJob{ObjectMeta: metav1.ObjectMeta{ManagedFields: tt.entries}}
			got, ok := ResumedAt(sj)
			if tt.want == "" {
				if ok {
					t.Errorf("ResumedAt = %s, want none", got)
				}
				return
			}
			if !ok || !got.Equal(at(tt.want).Time) {
				t.Errorf("ResumedAt = %s, %v; want %s", got, ok, tt.want)
			}
		})
	}
}
