package v1alpha1

import (
	"strings"
	"testing"
	"time"
)

func TestRecordRoundTrip(t *testing.T) {
	at := time.Date(2027, 3, 1, 20, 0, 0, 0, time.UTC)
	r := &Record{By: Holder("team", "nights"), At: at, Replicas: new(int32(3))}
	got, err := DecodeRecord(map[string]string{RecordAnnotation: r.Encode()})
	if err != nil || got.By != "Sleep/team/nights" || *got.Replicas != 3 || !got.At.Equal(at) || got.Version != RecordVersion {
		t.Fatalf("DecodeRecord = %+v, %v", got, err)
	}
	if none, err := DecodeRecord(map[string]string{}); none != nil || err != nil {
		t.Errorf("no record: %v %v", none, err)
	}
	if _, err := DecodeRecord(map[string]string{RecordAnnotation: "3"}); err == nil || !strings.Contains(err.Error(), "remove the annotation") {
		t.Errorf("an edited record: %v", err)
	}
	for _, by := range []string{Holder("", "all"), Holder("ns", "n")} {
		kind, ns, name, ok := ParseHolder(by)
		if !ok || Holder(ns, name) != by || (kind == KindClusterSleep) != (ns == "") {
			t.Errorf("ParseHolder(%q) = %s %s %s %v", by, kind, ns, name, ok)
		}
	}
	if _, _, _, ok := ParseHolder("Deployment/x"); ok {
		t.Error("ParseHolder accepts a non-holder")
	}
}

func TestStayAwake(t *testing.T) {
	now := time.Date(2027, 3, 1, 20, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		value   string
		awake   bool
		until   time.Time
		problem bool
	}{
		{"true", true, time.Time{}, false},
		{"false", false, time.Time{}, false},
		{"2027-03-01T22:00:00Z", true, now.Add(2 * time.Hour), false},
		{"2027-03-01T19:00:00Z", false, time.Time{}, false},
		{"tomorrow", true, time.Time{}, true},
	} {
		awake, until, problem := StayAwake(map[string]string{StayAwakeAnnotation: tc.value}, now)
		if awake != tc.awake || !until.Equal(tc.until) || (problem != "") != tc.problem {
			t.Errorf("StayAwake(%q) = %v %v %q", tc.value, awake, until, problem)
		}
	}
	if awake, _, _ := StayAwake(nil, now); awake {
		t.Error("no annotation keeps it awake")
	}
}
