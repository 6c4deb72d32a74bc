package admission

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"gomodules.xyz/jsonpatch/v2"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// defaultingChanges returns raw (an object's JSON as received) decoded, and the JSON merge
// patch (RFC 7386) of the changes that defaulting made to its typed form; nil when there are
// none. before and after are the typed object marshalled before and after defaulting. Only
// the fields that defaulting changed are in the patch: what a typed round trip adds or drops
// by itself (creationTimestamp: null, empty structs, fields the Go types do not know) appears
// in both before and after and so never reaches it. Nor does a change of a field at one of the
// keepEmpty paths that raw has with the value "": the typed form cannot tell "" from an
// omitted field, and such a field is left for the schema or the validating webhook to reject.
// Numbers are decoded as the API server decodes them (integers as int64).
func defaultingChanges(raw, before, after []byte, keepEmpty [][]string) (obj, changes map[string]any, err error) {
	var b, a map[string]any
	for _, d := range []struct {
		data []byte
		into *map[string]any
	}{{raw, &obj}, {before, &b}, {after, &a}} {
		if err := utiljson.Unmarshal(d.data, d.into); err != nil {
			return nil, nil, fmt.Errorf("failed to decode the object: %w", err)
		}
	}
	changes, changed := mergeDiff(b, a)
	if !changed {
		return obj, nil, nil
	}
	for _, path := range keepEmpty {
		if v, ok := nested(obj, path); ok && v == "" {
			dropChange(changes, path)
		}
	}
	if len(changes) == 0 {
		changes = nil
	}
	return obj, changes, nil
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

// jsonPatch returns the JSON patch (RFC 6902) operations that apply the merge patch changes
// to target, the object as received: what the mutating webhook answers. A field that target
// lacks is added whole, one it has is replaced (or, for an object in both, patched field by
// field), and one the merge patch sets to null is removed if target has it. In path order.
func jsonPatch(target, changes map[string]any) []jsonpatch.JsonPatchOperation {
	var ops []jsonpatch.JsonPatchOperation
	var walk func(target, changes map[string]any, prefix string)
	walk = func(target, changes map[string]any, prefix string) {
		keys := make([]string, 0, len(changes))
		for k := range changes {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			change := changes[k]
			path := prefix + "/" + pointerEscaper.Replace(k)
			cur, exists := target[k]
			curMap, curIsMap := cur.(map[string]any)
			changeMap, changeIsMap := change.(map[string]any)
			switch {
			case change == nil:
				if exists {
					ops = append(ops, jsonpatch.JsonPatchOperation{Operation: "remove", Path: path})
				}
			case curIsMap && changeIsMap:
				walk(curMap, changeMap, path)
			case exists:
				ops = append(ops, jsonpatch.JsonPatchOperation{Operation: "replace", Path: path, Value: mergeApply(nil, change)})
			default:
				ops = append(ops, jsonpatch.JsonPatchOperation{Operation: "add", Path: path, Value: mergeApply(nil, change)})
			}
		}
	}
	walk(target, changes, "")
	return ops
}

// pointerEscaper escapes a key for a JSON pointer (RFC 6901).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// dropChange removes the change at path from the merge patch changes, and the objects that
// this leaves empty.
func dropChange(changes map[string]any, path []string) {
	if len(path) == 1 {
		delete(changes, path[0])
		return
	}
	sub, ok := changes[path[0]].(map[string]any)
	if !ok {
		return
	}
	dropChange(sub, path[1:])
	if len(sub) == 0 {
		delete(changes, path[0])
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
