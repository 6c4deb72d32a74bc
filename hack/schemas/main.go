// Command schemas writes kubeconform-ready JSON schemas for every served version of
// almanac's CustomResourceDefinitions, from what controller-gen wrote to config/crd/bases
// (`make manifests`), in the datreeio/CRDs-catalog layout:
//
//	config/schemas/<group>/<kind>_<version>.json   (kind lowercased)
//
// The conversion follows the catalog's openapi2jsonschema.py, with its
// DENY_ROOT_ADDITIONAL_PROPERTIES variant:
//
//   - every object schema with properties (the root included) gets
//     "additionalProperties": false unless it already says what extra keys may hold or keeps
//     unknown fields (x-kubernetes-preserve-unknown-fields); kubeconform finds misspelled
//     fields through this, as the API server's strict field validation does;
//   - an int-or-string (x-kubernetes-int-or-string, or format int-or-string) becomes
//     "oneOf": [{"type": "string"}, {"type": "integer"}];
//   - the x-kubernetes-* extensions, which are not JSON Schema, are dropped (CEL rules
//     included: kubeconform cannot run them; `almanac validate` does);
//   - everything else (types, formats, enums, patterns, bounds, required, defaults,
//     descriptions) is kept as it is.
//
// The output is deterministic: sorted keys, two-space indent, a trailing newline. `make
// schemas` runs it; its test fails when config/schemas is out of date.
//
//	go run ./hack/schemas [-crds config/crd/bases] [-out config/schemas]
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

func main() {
	crds := flag.String("crds", filepath.Join("config", "crd", "bases"), "folder of CustomResourceDefinitions (*.yaml)")
	out := flag.String("out", filepath.Join("config", "schemas"), "folder for the schemas (its *.json files are replaced)")
	flag.Parse()
	files, err := Generate(*crds)
	if err != nil {
		fmt.Fprintln(os.Stderr, "schemas:", err)
		os.Exit(1)
	}
	if err := write(*out, files); err != nil {
		fmt.Fprintln(os.Stderr, "schemas:", err)
		os.Exit(1)
	}
}

// write replaces the *.json files under dir with files (slash-separated names relative to
// dir) and removes the group folders that are left empty.
func write(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // a folder of the checkout
		return err
	}
	for _, pattern := range []string{"*.json", filepath.Join("*", "*.json")} {
		old, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return err
		}
		for _, p := range old {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil { //nolint:gosec // a folder of the checkout
			return err
		}
		if err := os.WriteFile(p, files[name], 0o644); err != nil { //nolint:gosec // a generated file of the checkout
			return err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			_ = os.Remove(filepath.Join(dir, e.Name())) // only succeeds when empty
		}
	}
	return nil
}

// Generate reads the CustomResourceDefinitions in crdDir/*.yaml and returns one schema per
// served version, keyed by "<group>/<kind>_<version>.json".
func Generate(crdDir string) (map[string][]byte, error) {
	paths, err := filepath.Glob(filepath.Join(crdDir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no CustomResourceDefinitions in %s/*.yaml", crdDir)
	}
	slices.Sort(paths)
	files := map[string][]byte{}
	for _, p := range paths {
		docs, err := readCRDs(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		for _, crd := range docs {
			got, err := FromCRD(crd)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			for name, b := range got {
				if _, dup := files[name]; dup {
					return nil, fmt.Errorf("%s: %s is generated twice", p, name)
				}
				files[name] = b
			}
		}
	}
	return files, nil
}

// readCRDs returns the CustomResourceDefinitions of a YAML stream, as generic JSON values.
func readCRDs(p string) ([]map[string]any, error) {
	f, err := os.Open(p) //nolint:gosec // a file of the checkout
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	r := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var crds []map[string]any
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return crds, nil
		}
		if err != nil {
			return nil, err
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(j)) == 0 || string(bytes.TrimSpace(j)) == "null" {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(j))
		dec.UseNumber() // keep integers (bounds, defaults) exactly as written
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			return nil, err
		}
		if obj["kind"] == "CustomResourceDefinition" {
			crds = append(crds, obj)
		}
	}
}

// FromCRD converts the openAPIV3Schema of each served version of a CustomResourceDefinition
// (a generic JSON value) into a JSON schema, keyed by "<group>/<kind>_<version>.json".
func FromCRD(crd map[string]any) (map[string][]byte, error) {
	spec, _ := crd["spec"].(map[string]any)
	group, _ := spec["group"].(string)
	names, _ := spec["names"].(map[string]any)
	kind, _ := names["kind"].(string)
	versions, _ := spec["versions"].([]any)
	if group == "" || kind == "" || len(versions) == 0 {
		return nil, errors.New("a CustomResourceDefinition without spec.group, spec.names.kind or spec.versions")
	}
	files := map[string][]byte{}
	for _, v := range versions {
		version, _ := v.(map[string]any)
		name, _ := version["name"].(string)
		if served, _ := version["served"].(bool); !served {
			continue
		}
		s, _ := version["schema"].(map[string]any)
		openAPI, ok := s["openAPIV3Schema"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s %s/%s has no openAPIV3Schema", kind, group, name)
		}
		b, err := Marshal(Convert(openAPI))
		if err != nil {
			return nil, fmt.Errorf("%s %s/%s: %w", kind, group, name, err)
		}
		files[path.Join(group, strings.ToLower(kind)+"_"+name+".json")] = b
	}
	return files, nil
}

// Convert turns an OpenAPI v3 schema of a CustomResourceDefinition into a JSON schema that
// refuses unknown fields (see the package comment). It does not modify s.
func Convert(s map[string]any) map[string]any {
	out := make(map[string]any, len(s)+1)
	for k, v := range s {
		switch k {
		case "properties", "patternProperties", "definitions":
			if m, ok := v.(map[string]any); ok {
				sub := make(map[string]any, len(m))
				for name, p := range m {
					sub[name] = convertAny(p)
				}
				v = sub
			}
		case "items", "additionalProperties", "additionalItems", "not", "allOf", "anyOf", "oneOf":
			v = convertAny(v)
		default:
			if strings.HasPrefix(k, "x-kubernetes-") {
				continue
			}
		}
		out[k] = v
	}
	if nullable, _ := out["nullable"].(bool); nullable {
		if t, ok := out["type"].(string); ok {
			out["type"] = []any{t, "null"}
		}
	}
	delete(out, "nullable")
	if intOrString(s) {
		if isIntegerStringPair(out["anyOf"]) {
			delete(out, "anyOf")
		}
		if out["format"] == "int-or-string" {
			delete(out, "format")
		}
		delete(out, "type")
		out["oneOf"] = []any{
			map[string]any{"type": "string"},
			map[string]any{"type": "integer"},
		}
	}
	_, hasProperties := out["properties"]
	_, hasAdditional := out["additionalProperties"]
	preserve, _ := s["x-kubernetes-preserve-unknown-fields"].(bool)
	if hasProperties && isObject(out["type"]) && !hasAdditional && !preserve {
		out["additionalProperties"] = false
	}
	return out
}

// convertAny converts a schema, or each schema of a list; anything else (a boolean
// additionalProperties) is kept.
func convertAny(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return Convert(v)
	case []any:
		l := make([]any, len(v))
		for i, e := range v {
			l[i] = convertAny(e)
		}
		return l
	}
	return v
}

func intOrString(s map[string]any) bool {
	b, _ := s["x-kubernetes-int-or-string"].(bool)
	return b || s["format"] == "int-or-string"
}

// isIntegerStringPair reports whether v is the anyOf that controller-gen writes next to
// x-kubernetes-int-or-string: [{type: integer}, {type: string}] in either order.
func isIntegerStringPair(v any) bool {
	l, ok := v.([]any)
	if !ok || len(l) != 2 {
		return false
	}
	var types []string
	for _, e := range l {
		m, ok := e.(map[string]any)
		if !ok || len(m) != 1 {
			return false
		}
		t, _ := m["type"].(string)
		types = append(types, t)
	}
	slices.Sort(types)
	return slices.Equal(types, []string{"integer", "string"})
}

func isObject(t any) bool {
	switch t := t.(type) {
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	}
	return false
}

// Marshal writes a schema as JSON with sorted keys, a two-space indent, unescaped <, > and &
// (patterns stay readable) and a trailing newline.
func Marshal(s map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil { // Encode sorts map keys and ends with "\n"
		return nil, err
	}
	return buf.Bytes(), nil
}
