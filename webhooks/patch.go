package webhooks

import (
	"fmt"
	"reflect"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// applyDefaulting returns raw (an object's JSON as received) with the changes that defaulting
// made to its typed form. before and after are the typed object marshalled before and after
// defaulting. Only the fields that defaulting changed are written into raw: what a typed round
// trip adds or drops by itself (creationTimestamp: null, empty structs, fields the Go types do
// not know) appears in both before and after and so never reaches the patch. The result is a
// JSON object with integers as int64, as the API server decodes them; the mutating webhook turns the difference to raw into a JSON patch.
func applyDefaulting(raw, before, after []byte) (map[string]any, error) {
	var obj, b, a map[string]any
	for _, d := range []struct {
		data []byte
		into *map[string]any
	}{{raw, &obj}, {before, &b}, {after, &a}} {
		if err := utiljson.Unmarshal(d.data, d.into); err != nil {
			return nil, fmt.Errorf("failed to decode the object: %w", err)
		}
	}
	if changes, changed := mergeDiff(b, a); changed {
		obj = mergeApply(obj, changes).(map[string]any)
	}
	return obj, nil
}

// mergeDiff returns the JSON merge patch (RFC 7386) that turns before into after.
func mergeDiff(before, after map[string]any) (map[string]any, bool) {
	patch := map[string]any{}
	for k, av := range after {
		bv, ok := before[k]
		if !ok {
			patch[k] = av
			continue
		}
		bm, bIsMap := bv.(map[string]any)
		am, aIsMap := av.(map[string]any)
		if bIsMap && aIsMap {
			if sub, changed := mergeDiff(bm, am); changed {
				patch[k] = sub
			}
			continue
		}
		if !reflect.DeepEqual(bv, av) {
			patch[k] = av
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			patch[k] = nil
		}
	}
	return patch, len(patch) > 0
}

// mergeApply applies a JSON merge patch (RFC 7386) to target.
func mergeApply(target any, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	tm, ok := target.(map[string]any)
	if !ok {
		tm = map[string]any{}
	}
	for k, pv := range pm {
		if pv == nil {
			delete(tm, k)
			continue
		}
		tm[k] = mergeApply(tm[k], pv)
	}
	return tm
}

// keepEmptyValues writes back into out, the defaulted object, the fields at paths that raw
// (the object as received) has with the value "".
func keepEmptyValues(raw []byte, out map[string]any, paths [][]string) {
	if len(paths) == 0 {
		return
	}
	var in map[string]any
	if err := utiljson.Unmarshal(raw, &in); err != nil {
		return
	}
	for _, path := range paths {
		if v, ok := nested(in, path); !ok || v != "" {
			continue
		}
		m := out
		for _, p := range path[:len(path)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		m[path[len(path)-1]] = ""
	}
}

func nested(obj map[string]any, path []string) (any, bool) {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}
