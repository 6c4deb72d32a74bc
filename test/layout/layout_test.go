// Package layout checks, in CI, the parts of docs/design.md that are rules about the code
// itself rather than about its behaviour: what reconcilers/ and commands/ hold, which packages
// answer "when", and that the tree names no path of one machine. (Which package may import which is
// checked by depguard in make lint; see .golangci.yml.)
package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// root is the root of the checkout this test was built from.
func root(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// parseDir parses the non-test Go files of one folder.
func parseDir(t *testing.T, dir string) map[string]*ast.File {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	fset := token.NewFileSet()
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = f
	}
	return files
}

// TestReconcilersHoldOnlyReconcilers: reconcilers/ holds the reconcilers (a package each,
// with a Reconciler that has Reconcile and SetupWithManager), what they are built on
// (reconcilers/base) and the Job owners' Job logic (reconcilers/jobs), nothing else: the
// commands live under commands/, and what reconcilers, webhooks and commands share lives
// in api/.
func TestReconcilersHoldOnlyReconcilers(t *testing.T) {
	dir := filepath.Join(root(t), "reconcilers")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var reconcilers []string
	for _, e := range entries {
		if !e.IsDir() {
			t.Errorf("reconcilers/%s: only packages belong in reconcilers/", e.Name())
			continue
		}
		name := e.Name()
		if name == "base" || name == "jobs" {
			continue
		}
		methods := map[string]bool{}
		for _, f := range parseDir(t, filepath.Join(dir, name)) {
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 {
					continue
				}
				if star, ok := fn.Recv.List[0].Type.(*ast.StarExpr); ok {
					if id, ok := star.X.(*ast.Ident); ok && id.Name == "Reconciler" {
						methods[fn.Name.Name] = true
					}
				}
			}
		}
		if !methods["Reconcile"] || !methods["SetupWithManager"] {
			t.Errorf("reconcilers/%s has no Reconciler with Reconcile and SetupWithManager: reconcilers/ holds reconcilers, reconcilers/base and reconcilers/jobs only", name)
			continue
		}
		reconcilers = append(reconcilers, name)
	}
	if want := []string{"eventjob", "schedule", "scheduledjob", "scheduledpodautoscaler"}; !slices.Equal(reconcilers, want) {
		t.Errorf("reconcilers %v, want %v (docs/design.md lists them)", reconcilers, want)
	}
}

// TestNoReconcilerMentionsLanes: the order of an instant's writes (base.Lanes) sits behind one
// seam, base.Base (Complete, WriteStatus, WriteRecord and its client), which derives it from
// what each Reconcile returns; no reconciler's code names Lanes (issue 23: before, each
// Reconcile carried Urgent, Expect, Forget, Defer and Landing calls).
func TestNoReconcilerMentionsLanes(t *testing.T) {
	dir := filepath.Join(root(t), "reconcilers")
	for _, name := range []string{"eventjob", "jobs", "schedule", "scheduledjob", "scheduledpodautoscaler"} {
		for file, f := range parseDir(t, filepath.Join(dir, name)) {
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Lanes" || sel.Sel.Name == "NewLanes" || sel.Sel.Name == "WithLanes") {
					t.Errorf("reconcilers/%s/%s names %s: the order of writes is base.Base's, derived from what Reconcile returns", name, file, sel.Sel.Name)
				}
				return true
			})
		}
	}
}

// commands are almanac's command-line commands besides the manager: each is a package of its
// own under commands/ (docs/design.md, "Where things live").
var commands = []string{"calendar", "check", "migrate", "override", "preview", "release", "run", "validate"}

// TestCommandsLiveUnderCommands: each command is a package commands/<name>, named so, that
// builds its cobra command (NewCommand); and no cobra command is built under webhooks/ or api/,
// which hold admission and the rules the commands call (issue 23: a newcomer looking for
// `almanac migrate` does not look in webhooks/).
func TestCommandsLiveUnderCommands(t *testing.T) {
	top := root(t)
	for _, name := range commands {
		dir := filepath.Join(top, "commands", name)
		files := parseDir(t, dir)
		if len(files) == 0 {
			t.Errorf("commands/%s holds no Go package: `almanac %s` lives there", name, name)
			continue
		}
		builds := false
		for file, f := range files {
			if f.Name.Name != name {
				t.Errorf("commands/%s/%s is package %s, want %s", name, file, f.Name.Name, name)
			}
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "NewCommand" {
					builds = true
				}
			}
		}
		if !builds {
			t.Errorf("commands/%s has no NewCommand: each command package builds its cobra command", name)
		}
	}

	checked := 0
	for _, tree := range []string{"webhooks", "api"} {
		err := filepath.WalkDir(filepath.Join(top, tree), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			checked++
			rel, _ := filepath.Rel(top, path)
			for _, imp := range f.Imports {
				if p, _ := strconv.Unquote(imp.Path.Value); p == "github.com/spf13/cobra" || strings.HasPrefix(p, "github.com/spf13/cobra/") {
					t.Errorf("%s imports %s: command-line commands live under commands/", rel, p)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked == 0 {
		t.Fatal("no file checked")
	}
}

// wallClockCalls are the calls that turn a written time into an instant or move along the
// calendar: api/timing makes them, by the DST rule, and no other package does.
var wallClockCalls = map[string]string{
	"time.Date":                   "builds an instant from a wall-clock date",
	"time.LoadLocation":           "loads a time zone (timing.NormalizeZone does, from the embedded database)",
	"time.LoadLocationFromTZData": "loads a time zone",
	"time.FixedZone":              "makes a zone of its own",
	"time.ParseInLocation":        "reads a wall-clock time in a zone",
	".AddDate":                    "moves along the calendar",
}

// TestOnlyTimingResolvesWallTime is the rule of docs/design.md's "How time flows": no package
// outside api/timing resolves a wall-clock time, loads a zone, moves along the calendar or
// parses cron; the others compare instants, measure between them and format them. Issue 11,
// finding 10: the design said so while the webhooks built dates of their own.
func TestOnlyTimingResolvesWallTime(t *testing.T) {
	top := root(t)
	var checked int
	for _, tree := range []string{"api", "webhooks", "commands", "reconcilers", "certs", "config"} {
		err := filepath.WalkDir(filepath.Join(top, tree), func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(top, path)
			if rel == filepath.Join("api", "timing") || strings.HasPrefix(rel, filepath.Join("api", "timing")+string(filepath.Separator)) {
				return filepath.SkipDir
			}
			for name, f := range parseDir(t, path) {
				checked++
				for _, imp := range f.Imports {
					if p, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(p, "github.com/robfig/cron") {
						t.Errorf("%s/%s imports %s: cron schedules are parsed and walked by api/timing", rel, name, p)
					}
				}
				ast.Inspect(f, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					sel, ok := call.Fun.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					key := "." + sel.Sel.Name
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "time" {
						key = "time." + sel.Sel.Name
					}
					if why, ok := wallClockCalls[key]; ok {
						t.Errorf("%s/%s calls %s, which %s: ask api/timing", rel, name, strings.TrimPrefix(key, "."), why)
					}
					return true
				})
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked == 0 {
		t.Fatal("no file checked")
	}
	if files := parseDir(t, top); files["main.go"] == nil {
		t.Error("main.go not found")
	}
}

// machinePath is an absolute path of some machine's file system.
var machinePath = regexp.MustCompile("(?:^|[\\s(\"'`:=])(/(?:work|home|root|Users)/[^\\s\"'`)]*)")

// imagePaths are absolute paths inside almanac's container image (hack/image builds its base
// and docs/install.md describes it): the same in every image, not paths of one machine.
var imagePaths = []string{"/home/nonroot"}

// inImage reports whether path is one of imagePaths, or in one (as /etc/passwd writes it,
// "/home/nonroot:/sbin/nologin").
func inImage(path string) bool {
	for _, p := range imagePaths {
		if path == p || strings.HasPrefix(path, p+"/") || strings.HasPrefix(path, p+":") {
			return true
		}
	}
	return false
}

// TestNoPathOfOneMachine: files in the tree refer to each other by relative paths; an absolute
// path of one machine breaks on every other. Issue 11, finding 11: the time contract was cited
// by the path of a checkout on one machine.
func TestNoPathOfOneMachine(t *testing.T) {
	top := root(t)
	err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(top, path)
		if d.IsDir() {
			if name := d.Name(); rel != "." && (strings.HasPrefix(name, ".") || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".yaml", ".yml", ".json", ".tpl", ".txt", ".sh", "":
		default:
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil || slices.Contains(data, 0) {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if m := machinePath.FindStringSubmatch(line); m != nil && !strings.HasPrefix(rel, filepath.Join("test", "layout")) && !inImage(m[1]) {
				t.Errorf("%s:%d names %s, a path of one machine: use a path relative to the repository", rel, i+1, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
