package v1alpha1

import (
	"strings"
	"testing"
)

func TestRunNowJobName(t *testing.T) {
	owner := strings.Repeat("a", MaxOwnerNameLength)
	name := RunNowJobName(owner, "2027-01-04T09:15:42Z")
	if len(name) != MaxJobNameLength {
		t.Errorf("%q has %d characters, want %d: a run-now name fits the owner's budget exactly like a slot's", name, len(name), MaxJobNameLength)
	}
	if a, b, again := RunNowJobName("r", "a"), RunNowJobName("r", "b"), RunNowJobName("r", "a"); a == b || a != again {
		t.Error("a token's name is not its own, or not stable")
	}
	if _, ok := ParseSlotMinute("r", RunNowJobName("r", "a")); ok {
		t.Error("a run-now name reads as a slot's")
	}
	for _, tt := range []struct {
		name        string
		annotations map[string]string
		want        bool
	}{
		{RunNowJobName("r", "a"), nil, true},
		{"r-29928962", nil, false},
		{"r-nowzzzzzzz", nil, false},
		{"r-now123", nil, false},
		{"rr-now1234567", nil, false},
		{"r-29928962", map[string]string{AnnotationRunNowToken: "a"}, true},
	} {
		if got := IsRunNowJob("r", tt.annotations, tt.name); got != tt.want {
			t.Errorf("IsRunNowJob(r, %v, %q) = %v, want %v", tt.annotations, tt.name, got, tt.want)
		}
	}
}

func TestCheckRunNowToken(t *testing.T) {
	for _, ok := range []string{"1", "2027-01-04T09:15:42Z", "run.1_a-b", strings.Repeat("x", 63)} {
		if err := CheckRunNowToken(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for token, says := range map[string]string{
		"":                      "is empty",
		strings.Repeat("x", 64): "more than the 63",
		"a b":                   "' ' at position 1",
		"ä":                     "position 0",
		"a/b":                   "'/'",
	} {
		err := CheckRunNowToken(token)
		if err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%q: %v, want it to say %q", token, err, says)
		}
	}
}
