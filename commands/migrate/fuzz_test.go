package migrate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/almanac-dev/almanac/commands/manifest"
)

// FuzzConvert checks that no manifest makes almanac migrate panic, that every input object is
// either in the output or reported as an error, and that migrating the output again changes
// nothing (converted objects are almanac's, which pass through).
func FuzzConvert(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "examples", "migrate", "*.yaml"))
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(string(data))
		}
	}
	f.Add("apiVersion: autoscaling.d-kuro.github.io/v1\nkind: Schedule\nmetadata: {name: s}\nspec: {scaleTargetRef: {name: a}, minReplicas: 1, type: Weekly, startDayOfWeek: Sunday, endDayOfWeek: Monday, startTime: \"23:59\", endTime: \"0:00\"}\n")
	f.Add("apiVersion: batch.my.domain/v1\nkind: AT\nmetadata: {name: a}\nspec: {schedule: \"2020-03-21T13:53:55.999999999-23:59\", jobTemplate: {}}\n")
	f.Add("apiVersion: alpha.ianlewis.org/v1\nkind: CronTab\nmetadata: {name: c}\nspec: {schedule: \"@every\", jobTemplate: {}}\n")
	f.Fuzz(func(t *testing.T, input string) {
		docs, err := manifest.Read([]string{"-"}, false, strings.NewReader(input))
		if err != nil {
			return
		}
		res := Convert(docs)
		if len(res.Objects)+len(res.Errors) != len(docs) {
			t.Fatalf("%d objects in, %d out and %d errors", len(docs), len(res.Objects), len(res.Errors))
		}
		var out bytes.Buffer
		if err := Write(&out, res.Objects, "yaml"); err != nil {
			t.Fatal(err)
		}
		again, err := manifest.Read([]string{"-"}, false, strings.NewReader(out.String()))
		if err != nil {
			t.Fatalf("the output does not read back: %v\n%s", err, out.String())
		}
		second := Convert(again)
		if len(second.Errors) > 0 || len(second.Notes) > 0 {
			t.Fatalf("migrating the output again: notes %q, errors %q", second.Notes, second.Errors)
		}
		var first, next []map[string]any
		for _, o := range res.Objects {
			first = append(first, o.Object)
		}
		for _, o := range second.Objects {
			next = append(next, o.Object)
		}
		if diff := cmp.Diff(first, next); diff != "" {
			t.Fatalf("migrating the output again changed it (-first +second):\n%s", diff)
		}
	})
}
