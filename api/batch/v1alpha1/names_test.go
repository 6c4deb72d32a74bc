package v1alpha1

import (
	"regexp"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/almanac-dev/almanac/config/crd"
)

var dns1123 = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func TestNames(t *testing.T) {
	slot := time.Date(2036, 3, 21, 13, 53, 0, 0, time.UTC)
	if got, want := ScheduledJobName("at-sample", slot), "at-sample-34828673"; got != want {
		t.Errorf("ScheduledJobName = %s, want %s", got, want)
	}
	if got := SlotMinute(time.Date(1969, 12, 31, 23, 59, 30, 0, time.UTC)); got != -1 {
		t.Errorf("SlotMinute before 1970 = %d, want -1", got)
	}
	if m, ok := ParseSlotMinute("at-sample", "at-sample-34828673"); !ok || m != 34828673 {
		t.Errorf("ParseSlotMinute = %d, %v", m, ok)
	}
	if _, ok := ParseSlotMinute("at", "at-sample-34828673"); ok {
		t.Error("ParseSlotMinute accepted another owner's Job")
	}

	a := EventJobName("eventjob-sample", types.UID("0b5c5b8e-3f3c-4d43-8a52-0f4b2b1f3b6a"))
	b := EventJobName("eventjob-sample", types.UID("0b5c5b8e-3f3c-4d43-8a52-0f4b2b1f3b6b"))
	if a == b || a != EventJobName("eventjob-sample", types.UID("0b5c5b8e-3f3c-4d43-8a52-0f4b2b1f3b6a")) {
		t.Errorf("EventJobName is not a function of the UID: %s, %s", a, b)
	}
	if !strings.HasPrefix(a, "eventjob-sample-") || len(a) != len("eventjob-sample-")+10 {
		t.Errorf("EventJobName = %s", a)
	}

	// The longest owner name within the budget gives Job names that are valid label values
	// (the Pods' job-name label) in the year 9999 too.
	owner := strings.Repeat("a", MaxOwnerNameLength)
	for _, name := range []string{
		ScheduledJobName(owner, time.Date(9999, 12, 31, 23, 59, 0, 0, time.UTC)),
		EventJobName(owner, "uid"),
	} {
		if errs := validation.IsValidLabelValue(name); len(errs) > 0 || !dns1123.MatchString(name) {
			t.Errorf("%s: %v", name, errs)
		}
		if err := CheckJobName(name, "ScheduledJob", owner); err != nil {
			t.Error(err)
		}
	}
	if MaxOwnerNameLength != 52 {
		t.Errorf("MaxOwnerNameLength = %d; the webhook and docs say 52", MaxOwnerNameLength)
	}
	if err := CheckJobName(EventJobName(owner+"b", "uid"), "EventJob", owner+"b"); err == nil {
		t.Error("a name one character over the budget passed")
	}
}

// TestMaxActiveIsTheSchemaBound: the reconcilers bound status.active by MaxActive, which must
// be the CRDs' maxItems for the list (a longer list is refused by the API server).
func TestMaxActiveIsTheSchemaBound(t *testing.T) {
	for _, file := range []string{"bases/batch.almanac.dev_scheduledjobs.yaml", "bases/batch.almanac.dev_eventjobs.yaml"} {
		data, err := crd.Bases.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var def apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &def); err != nil {
			t.Fatal(err)
		}
		active := def.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties["active"]
		if active.MaxItems == nil || *active.MaxItems != MaxActive {
			t.Errorf("%s: status.active maxItems %v, want MaxActive (%d)", file, active.MaxItems, MaxActive)
		}
	}
}

func TestFinalizerRemoval(t *testing.T) {
	if _, ok := FinalizerRemoval([]string{"example.com/other"}); ok {
		t.Error("a patch for a Job without almanac's finalizer")
	}
	patch, ok := FinalizerRemoval([]string{"example.com/other", FinalizerOutcome})
	want := `[{"op":"test","path":"/metadata/finalizers/1","value":"batch.almanac.dev/outcome"},{"op":"remove","path":"/metadata/finalizers/1"}]`
	if !ok || string(patch) != want {
		t.Errorf("FinalizerRemoval = %s, %v; want %s", patch, ok, want)
	}
}
