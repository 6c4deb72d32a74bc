package v1alpha1

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDisownPatch(t *testing.T) {
	entries := []metav1.ManagedFieldsEntry{{Manager: "helm"}, {Manager: "almanac"}, {Manager: "kube-controller-manager"}, {Manager: "almanac", Subresource: "scale"}}
	got := string(DisownPatch(entries, "almanac"))
	want := `[{"op":"test","path":"/metadata/managedFields/3/manager","value":"almanac"},{"op":"remove","path":"/metadata/managedFields/3"},` +
		`{"op":"test","path":"/metadata/managedFields/1/manager","value":"almanac"},{"op":"remove","path":"/metadata/managedFields/1"}]`
	if got != want {
		t.Errorf("DisownPatch = %s, want %s (from the last entry down, so that the indexes hold)", got, want)
	}
	// almanac's are the only entries: an empty list would mean "unchanged", so [{}].
	got = string(DisownPatch([]metav1.ManagedFieldsEntry{{Manager: "almanac"}}, "almanac"))
	want = `[{"op":"test","path":"/metadata/managedFields/0/manager","value":"almanac"},{"op":"replace","path":"/metadata/managedFields","value":[{}]}]`
	if got != want {
		t.Errorf("DisownPatch of almanac's only entry = %s, want %s", got, want)
	}
	if p := DisownPatch([]metav1.ManagedFieldsEntry{{Manager: "helm"}}, "almanac"); p != nil {
		t.Errorf("DisownPatch without almanac's entries = %s, want nil", p)
	}
}

func TestLetGoBounds(t *testing.T) {
	for _, tc := range []struct {
		name             string
		minR, maxR, live *int32
		wantMin, wantMax int32
	}{
		{"both set", new(int32(2)), new(int32(6)), new(int32(9)), 2, 6},
		{"no maxReplicas: the target keeps its maximum", new(int32(2)), nil, new(int32(9)), 2, 9},
		{"no maximum anywhere (a scale subresource)", new(int32(0)), nil, nil, 0, 0},
		{"a live maximum below the baseline minimum is raised", new(int32(5)), nil, new(int32(3)), 5, 5},
	} {
		gotMin, gotMax := LetGoBounds(ScheduledPodAutoscalerSpec{MinReplicas: tc.minR, MaxReplicas: tc.maxR}, tc.live)
		if gotMin != tc.wantMin || gotMax != tc.wantMax {
			t.Errorf("%s: LetGoBounds = %d-%d, want %d-%d", tc.name, gotMin, gotMax, tc.wantMin, tc.wantMax)
		}
	}
}

func TestReleaseFinalizerRemoval(t *testing.T) {
	if _, ok := ReleaseFinalizerRemoval([]string{"example.com/other"}); ok {
		t.Error("ReleaseFinalizerRemoval without the finalizer: want false")
	}
	p, ok := ReleaseFinalizerRemoval([]string{"example.com/other", ReleaseFinalizer})
	want := `[{"op":"test","path":"/metadata/finalizers/1","value":"autoscaling.almanac.dev/release-target"},{"op":"remove","path":"/metadata/finalizers/1"}]`
	if !ok || string(p) != want {
		t.Errorf("ReleaseFinalizerRemoval = %s, %v; want %s", p, ok, want)
	}
}
