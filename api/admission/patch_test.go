package admission

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"gomodules.xyz/jsonpatch/v2"
)

func TestJSONPatchEscapesAndPrunes(t *testing.T) {
	target := map[string]any{"metadata": map[string]any{"annotations": map[string]any{"a/b": "1", "c~d": "2"}}, "spec": map[string]any{"x": nil}}
	changes := map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"a/b": nil, "c~d": "3", "gone": nil}},
		"spec":     map[string]any{"x": map[string]any{"y": int64(1), "z": nil}, "new": map[string]any{"k": "v", "n": nil}},
	}
	want := []jsonpatch.JsonPatchOperation{
		{Operation: "remove", Path: "/metadata/annotations/a~1b"},
		{Operation: "replace", Path: "/metadata/annotations/c~0d", Value: "3"},
		{Operation: "add", Path: "/spec/new", Value: map[string]any{"k": "v"}},
		{Operation: "replace", Path: "/spec/x", Value: map[string]any{"y": int64(1)}},
	}
	if diff := cmp.Diff(want, jsonPatch(target, changes)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
