package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

const (
	crdDir     = "../../config/crd/bases"
	schemasDir = "../../config/schemas"
)

// TestSchemasMatchCRDs fails when config/schemas differs from what config/crd/bases
// (controller-gen's output) gives today: run `make manifests schemas`.
func TestSchemasMatchCRDs(t *testing.T) {
	want, err := Generate(crdDir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	err = filepath.WalkDir(schemasDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".json" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(schemasDir, p)
		got[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatalf("%v: run `make schemas`", err)
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("config/schemas/%s is missing; run `make schemas`", name)
		}
	}
	for name, g := range got {
		w, ok := want[name]
		if !ok {
			t.Errorf("config/schemas/%s is no longer generated from config/crd/bases; run `make schemas`", name)
			continue
		}
		if diff := cmp.Diff(string(w), string(g)); diff != "" {
			t.Errorf("config/schemas/%s drifted from config/crd/bases (-crd +schemas); run `make schemas`:\n%s", name, diff)
		}
	}
}

// TestGenerateNames checks the catalog's layout: one file per kind and served version.
func TestGenerateNames(t *testing.T) {
	files, err := Generate(crdDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{
		"almanac.dev/calendar_v1alpha1.json",
		"almanac.dev/clustercalendar_v1alpha1.json",
		"autoscaling.almanac.dev/schedule_v1alpha1.json",
		"autoscaling.almanac.dev/scheduledpodautoscaler_v1alpha1.json",
		"batch.almanac.dev/eventjob_v1alpha1.json",
		"batch.almanac.dev/scheduledjob_v1alpha1.json",
	} {
		b, ok := files[name]
		if !ok {
			t.Errorf("%s is not generated; got %v", name, keys(files))
			continue
		}
		if strings.Contains(string(b), `"x-kubernetes-`) {
			t.Errorf("%s keeps an x-kubernetes-* extension", name)
		}
		if !strings.HasSuffix(string(b), "}\n") {
			t.Errorf("%s does not end with a newline", name)
		}
	}
}

func keys(m map[string][]byte) []string {
	var l []string
	for k := range m {
		l = append(l, k)
	}
	return l
}

func TestFromCRDServedVersionsOnly(t *testing.T) {
	crd := decode(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
spec:
  group: example.almanac.dev
  names: {kind: Widget}
  versions:
  - name: v1
    served: true
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object}}}}
  - name: v0
    served: false
    schema: {openAPIV3Schema: {type: object}}
`)
	files, err := FromCRD(crd)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"example.almanac.dev/widget_v1.json"}, keys(files)); diff != "" {
		t.Fatalf("files (-want +got):\n%s", diff)
	}
	want := `{
  "additionalProperties": false,
  "properties": {
    "spec": {
      "type": "object"
    }
  },
  "type": "object"
}
`
	if diff := cmp.Diff(want, string(files["example.almanac.dev/widget_v1.json"])); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
}

func TestConvert(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{{
		name: "objects with properties refuse unknown fields, at every depth",
		in: `{type: object, properties: {spec: {type: object, properties: {a: {type: string}},
              required: [a]}, list: {type: array, items: {type: object, properties: {b: {type: integer}}}}}}`,
		want: `{additionalProperties: false, type: object, properties: {
              spec: {additionalProperties: false, type: object, properties: {a: {type: string}}, required: [a]},
              list: {type: array, items: {additionalProperties: false, type: object, properties: {b: {type: integer}}}}}}`,
	}, {
		name: "maps, free-form objects and objects that keep unknown fields stay open",
		in: `{type: object, properties: {
              labels: {type: object, additionalProperties: {type: string}},
              meta: {type: object},
              raw: {type: object, properties: {a: {type: string}}, x-kubernetes-preserve-unknown-fields: true}}}`,
		want: `{additionalProperties: false, type: object, properties: {
              labels: {type: object, additionalProperties: {type: string}},
              meta: {type: object},
              raw: {type: object, properties: {a: {type: string}}}}}`,
	}, {
		name: "int-or-string becomes oneOf string/integer; the pattern and description stay",
		in: `{type: object, properties: {q: {anyOf: [{type: integer}, {type: string}], pattern: '^[0-9]+$',
              description: d, x-kubernetes-int-or-string: true}, f: {type: string, format: int-or-string}}}`,
		want: `{additionalProperties: false, type: object, properties: {
              q: {oneOf: [{type: string}, {type: integer}], pattern: '^[0-9]+$', description: d},
              f: {oneOf: [{type: string}, {type: integer}]}}}`,
	}, {
		name: "x-kubernetes-* extensions go; JSON Schema keywords, and fields named like extensions, stay",
		in: `{type: object, x-kubernetes-validations: [{rule: self.a > 0}], properties: {
              x-kubernetes-field: {type: string},
              l: {type: array, maxItems: 3, x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [name],
                  items: {type: object, x-kubernetes-map-type: atomic, properties: {name: {type: string}}}},
              e: {type: string, enum: [A, B], default: A},
              n: {type: integer, format: int32, minimum: 0, maximum: 10, exclusiveMinimum: true},
              t: {type: string, format: date-time, maxLength: 63, minLength: 1, pattern: '^a<b&c$'}}}`,
		want: `{additionalProperties: false, type: object, properties: {
              x-kubernetes-field: {type: string},
              l: {type: array, maxItems: 3, items: {additionalProperties: false, type: object, properties: {name: {type: string}}}},
              e: {type: string, enum: [A, B], default: A},
              n: {type: integer, format: int32, minimum: 0, maximum: 10, exclusiveMinimum: true},
              t: {type: string, format: date-time, maxLength: 63, minLength: 1, pattern: '^a<b&c$'}}}`,
	}, {
		name: "defaults and examples are values, not schemas",
		in:   `{type: object, properties: {o: {type: object, default: {properties: {}, type: object}}}}`,
		want: `{additionalProperties: false, type: object, properties: {o: {type: object, default: {properties: {}, type: object}}}}`,
	}, {
		name: "nullable becomes a null type",
		in:   `{type: string, nullable: true}`,
		want: `{type: [string, "null"]}`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			in := decode(t, tc.in)
			before, _ := json.Marshal(in)
			got := Convert(in)
			if after, _ := json.Marshal(in); string(before) != string(after) {
				t.Errorf("Convert modified its input")
			}
			want := decode(t, tc.want)
			g, _ := Marshal(got)
			w, _ := Marshal(want)
			if diff := cmp.Diff(string(w), string(g)); diff != "" {
				t.Errorf("Convert (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMarshal(t *testing.T) {
	b, err := Marshal(decode(t, `{pattern: '^a<b&c$', b: 1, a: {d: 2, c: 9007199254740993}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "a": {
    "c": 9007199254740993,
    "d": 2
  },
  "b": 1,
  "pattern": "^a<b&c$"
}
`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("Marshal (-want +got):\n%s", diff)
	}
}

// decode reads YAML the way readCRDs does: numbers stay json.Number.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(j)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}
