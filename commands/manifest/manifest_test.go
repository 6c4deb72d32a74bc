package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a.yaml", "kind: A\nmetadata: {name: a1}\n---\n# only a comment\n---\nkind: A\nmetadata: {name: a2}\n")
	write("b.json", `{"kind": "List", "items": [{"kind": "B", "metadata": {"name": "b1"}}, {"kind": "B", "metadata": {"name": "b2"}}]}`)
	write("notes.txt", "kind: Ignored")
	write("sub/c.yml", "kind: C\nmetadata: {name: c1}\n")

	type entry struct {
		File  string
		Index int
		Name  string
	}
	read := func(t *testing.T, recursive bool, paths ...string) []entry {
		t.Helper()
		docs, err := Read(paths, recursive, strings.NewReader("kind: S\nmetadata: {name: s1}\n"))
		if err != nil {
			t.Fatal(err)
		}
		var got []entry
		for _, d := range docs {
			got = append(got, entry{File: filepath.Base(d.File), Index: d.Index, Name: d.Object.GetName()})
		}
		return got
	}

	t.Run("directory", func(t *testing.T) {
		want := []entry{{"a.yaml", 0, "a1"}, {"a.yaml", 2, "a2"}, {"b.json", 0, "b1"}, {"b.json", 0, "b2"}}
		if diff := cmp.Diff(want, read(t, false, dir)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("recursive directory and stdin", func(t *testing.T) {
		want := []entry{{"a.yaml", 0, "a1"}, {"a.yaml", 2, "a2"}, {"b.json", 0, "b1"}, {"b.json", 0, "b2"}, {"c.yml", 0, "c1"}, {"-", 0, "s1"}}
		if diff := cmp.Diff(want, read(t, true, dir, "-")); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("malformed YAML names the file and document", func(t *testing.T) {
		write("bad/bad.yaml", "kind: A\n---\nkind: [unclosed\n")
		_, err := Read([]string{filepath.Join(dir, "bad")}, false, nil)
		if err == nil || !strings.Contains(err.Error(), "bad.yaml: document 1") {
			t.Errorf("err = %v, want it to name bad.yaml: document 1", err)
		}
	})
	t.Run("duplicate keys are an error", func(t *testing.T) {
		write("dup/dup.yaml", "kind: A\nkind: B\n")
		if _, err := Read([]string{filepath.Join(dir, "dup")}, false, nil); err == nil {
			t.Error("want an error for a duplicate key")
		}
	})
	t.Run("a List item without a kind is an error, as a document without one is", func(t *testing.T) {
		write("nokind/list.json", `{"kind": "List", "items": [{"kind": "B"}, {"metadata": {"name": "b2"}}]}`)
		_, err := Read([]string{filepath.Join(dir, "nokind")}, false, nil)
		if err == nil || !strings.Contains(err.Error(), "list.json: document 0: items[1]: Object 'Kind' is missing") {
			t.Errorf("err = %v, want it to name list.json: document 0: items[1]", err)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		if _, err := Read([]string{filepath.Join(dir, "nope.yaml")}, false, nil); err == nil {
			t.Error("want an error")
		}
	})
}
