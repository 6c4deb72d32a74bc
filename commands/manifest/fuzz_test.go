package manifest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzRead checks that no input makes the manifest reader panic, and that reading is
// idempotent: the objects read, written back as a YAML stream of their JSON, read as the same
// objects (a List's items become plain documents).
func FuzzRead(f *testing.F) {
	for _, s := range []string{
		"kind: A\nmetadata: {name: a1}\n---\n# only a comment\n---\nkind: A\nmetadata: {name: a2}\n",
		`{"kind": "List", "items": [{"kind": "B", "metadata": {"name": "b1"}}, {"kind": "B", "metadata": {"name": "b2"}}]}`,
		"apiVersion: v1\nkind: List\nitems: []\n",
		"kind: A\nkind: B\n", "a: [1, 2\n", "---\n---\n", "- 1\n- 2\n", "kind: 7\n", "null\n", "{}\n", "\t", "items: 5\nkind: List\n",
	} {
		f.Add([]byte(s))
	}
	// The project's own manifests.
	for _, pattern := range []string{"../../examples/*.yaml", "../../test/webhooks/testdata/parity/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		docs, err := Read([]string{"-"}, false, bytes.NewReader(input))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "-: document ") {
				t.Fatalf("error does not name the input and document: %v", err)
			}
			return
		}
		var again bytes.Buffer
		for _, d := range docs {
			if d.File != "-" || d.Object == nil {
				t.Fatalf("bad document %+v", d)
			}
			again.WriteString("---\n")
			again.Write(d.Raw)
			again.WriteString("\n")
		}
		docs2, err := Read([]string{"-"}, false, &again)
		if err != nil {
			t.Fatalf("the objects read do not read again: %v\n%s", err, again.String())
		}
		if len(docs2) != len(docs) {
			t.Fatalf("read %d objects, then %d", len(docs), len(docs2))
		}
		for i := range docs {
			if diff := cmp.Diff(docs[i].Object.Object, docs2[i].Object.Object); diff != "" {
				t.Fatalf("object %d changed when read again (-first +second):\n%s", i, diff)
			}
		}
	})
}
