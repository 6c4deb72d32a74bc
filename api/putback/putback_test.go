package putback

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCount(t *testing.T) {
	now := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	var times []time.Time
	for i := range Max {
		var ok bool
		times, ok = Count(times, now.Add(time.Duration(i)*time.Second))
		if !ok {
			t.Fatalf("put-back %d refused", i+1)
		}
	}
	if _, ok := Count(times, now.Add(time.Minute)); ok {
		t.Errorf("put-back %d within %s allowed", Max+1, Window)
	}
	// Once the first ones are older than Window, put-backs are allowed again.
	recent, ok := Count(times, now.Add(Window+time.Minute))
	if !ok || len(recent) != 1 {
		t.Errorf("after the window: %v, %v", recent, ok)
	}
}

func TestOtherManagers(t *testing.T) {
	entry := func(manager, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, FieldsV1: metav1.NewFieldsV1(fields)}
	}
	entries := []metav1.ManagedFieldsEntry{
		entry("almanac", `{"f:spec":{"f:replicas":{}}}`),
		entry("argocd-controller", `{"f:spec":{"f:replicas":{},"f:template":{}}}`),
		entry("kubectl", `{"f:metadata":{"f:labels":{}}}`),
		entry("helm", `{"f:spec":{"f:replicas":{}}}`),
	}
	got := OtherManagers(entries, "almanac", []string{"spec", "replicas"})
	if len(got) != 2 || got[0] != "argocd-controller" || got[1] != "helm" {
		t.Errorf("OtherManagers = %v", got)
	}
}

func TestChangedSinceOwn(t *testing.T) {
	ours := time.Date(2027, 3, 1, 20, 0, 0, 0, time.UTC)
	entry := func(manager string, at time.Time, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Time: &metav1.Time{Time: at}, FieldsV1: metav1.NewFieldsV1(fields)}
	}
	replicas := `{"f:spec":{"f:replicas":{}}}`
	entries := []metav1.ManagedFieldsEntry{
		entry("almanac", ours, `{"f:metadata":{"f:annotations":{}}}`),
		entry("kubectl", ours.Add(-time.Hour), replicas),               // owned it before almanac's write
		entry("helm", ours, replicas),                                  // in almanac's second: counts
		entry("argocd-controller", ours.Add(90*time.Second), replicas), // after
	}
	if got := ChangedSinceOwn(entries, "almanac", []string{"spec", "replicas"}); len(got) != 2 || got[0] != "argocd-controller" || got[1] != "helm" {
		t.Errorf("ChangedSinceOwn = %v", got)
	}
}
