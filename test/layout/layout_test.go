// Package layout checks, in CI, the parts of docs/design.md that are rules about the code
// itself rather than about its behaviour: what reconcilers/ and commands/ hold, which packages
// answer "when", and that the tree names no path of one machine. (Which package may import which is
// checked by depguard in make lint; see .golangci.yml.)
package layout

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
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
	if want := []string{"eventjob", "schedule", "scheduledjob", "scheduledpodautoscaler", "sleep"}; !slices.Equal(reconcilers, want) {
		t.Errorf("reconcilers %v, want %v (docs/design.md lists them)", reconcilers, want)
	}
}

// TestNoReconcilerMentionsLanes: the order of an instant's writes (base.Lanes) sits behind one
// seam, base.Base (Complete, WriteStatus, WriteRecord and its client), which derives it from
// what each Reconcile returns; no reconciler's code names Lanes (issue 23: before, each
// Reconcile carried Urgent, Expect, Forget, Defer and Landing calls).
func TestNoReconcilerMentionsLanes(t *testing.T) {
	dir := filepath.Join(root(t), "reconcilers")
	for _, name := range []string{"eventjob", "jobs", "schedule", "scheduledjob", "scheduledpodautoscaler", "sleep"} {
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

// module is almanac's Go module path.
const module = "github.com/almanac-dev/almanac"

// cliCommands returns almanac's command-line commands besides the manager, derived from the
// command tree itself: the packages whose NewCommand main.go adds to the root command
// (root.AddCommand(pkg.NewCommand(…))), by package name, with their import paths. A new
// command is found here once it is wired, so the layout rules cannot forget it (the list was
// written by hand until issue 38, and had lost next and suspend).
func cliCommands(t *testing.T, top string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(top, "main.go"), nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	imports := map[string]string{} // the name a file refers to a package by → its import path
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		imports[name] = path
	}
	out := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 1 {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "AddCommand" {
			return true
		}
		arg, ok := call.Args[0].(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := arg.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "NewCommand" {
			if pkg, ok := sel.X.(*ast.Ident); ok {
				out[pkg.Name] = imports[pkg.Name]
			}
		}
		return true
	})
	return out
}

// checkCommands returns what is wrong with the commands of the tree at top: each command that
// main.go adds is a package commands/<name> of that name that builds its cobra command
// (NewCommand), and each package under commands/ that builds one is added by main.go (the
// others, kube and manifest, are what the commands share).
func checkCommands(t *testing.T, top string) []string {
	t.Helper()
	var problems []string
	wired := cliCommands(t, top)
	for name, path := range wired {
		if want := module + "/commands/" + name; path != want {
			problems = append(problems, fmt.Sprintf("main.go adds %s.NewCommand from %q: `almanac %s` lives in %s, a package of its own under commands/", name, path, name, want))
		}
	}
	entries, err := os.ReadDir(filepath.Join(top, "commands"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		files := parseDir(t, filepath.Join(top, "commands", name))
		builds := false
		for file, f := range files {
			if _, isCommand := wired[name]; isCommand && f.Name.Name != name {
				problems = append(problems, fmt.Sprintf("commands/%s/%s is package %s, want %s", name, file, f.Name.Name, name))
			}
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "NewCommand" {
					builds = true
				}
			}
		}
		_, isCommand := wired[name]
		switch {
		case isCommand && !builds:
			problems = append(problems, fmt.Sprintf("commands/%s has no NewCommand: each command package builds its cobra command", name))
		case !isCommand && builds:
			problems = append(problems, fmt.Sprintf("commands/%s builds a command (NewCommand) that main.go does not add to almanac's root command", name))
		}
		delete(wired, name)
	}
	for name := range wired {
		if strings.HasPrefix(wired[name], module+"/commands/") {
			problems = append(problems, fmt.Sprintf("main.go adds %s.NewCommand, but commands/%s holds no Go package", name, name))
		}
	}
	slices.Sort(problems)
	return problems
}

// TestCommandsLiveUnderCommands: each command of almanac's command line (as main.go wires
// them: cliCommands) is a package commands/<name>, named so, that builds its cobra command
// (NewCommand), and every package under commands/ that builds one is wired; and no cobra
// command is built under webhooks/ or api/, which hold admission and the rules the commands
// call (issue 23: a newcomer looking for `almanac migrate` does not look in webhooks/).
func TestCommandsLiveUnderCommands(t *testing.T) {
	top := root(t)
	wired := cliCommands(t, top)
	for _, name := range []string{"validate", "preview", "next", "suspend"} {
		if _, ok := wired[name]; !ok {
			t.Fatalf("the commands derived from main.go (%v) lack %s: cliCommands reads the tree wrong", slices.Sorted(maps.Keys(wired)), name)
		}
	}
	for _, p := range checkCommands(t, top) {
		t.Error(p)
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

// TestCheckCommandsFindsWhatIsNotWired: checkCommands, on trees made for it, finds a command
// package that main.go does not add, a command added from outside commands/, and a command
// package that builds no command; the tree as it is has none of them.
func TestCheckCommandsFindsWhatIsNotWired(t *testing.T) {
	write := func(t *testing.T, top, file, content string) {
		t.Helper()
		path := filepath.Join(top, file)
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const mainGo = `package main

import (
	"github.com/spf13/cobra"

	"github.com/almanac-dev/almanac/commands/good"
	elsewhere "github.com/almanac-dev/almanac/webhooks/tool"
	"github.com/almanac-dev/almanac/commands/empty"
)

func newRoot() *cobra.Command {
	root := &cobra.Command{}
	root.AddCommand(good.NewCommand())
	root.AddCommand(elsewhere.NewCommand())
	root.AddCommand(empty.NewCommand())
	return root
}
`
	top := t.TempDir()
	write(t, top, "main.go", mainGo)
	write(t, top, "commands/good/good.go", "package good\n\nfunc NewCommand() {}\n")
	write(t, top, "commands/forgotten/forgotten.go", "package forgotten\n\nfunc NewCommand() {}\n")
	write(t, top, "commands/empty/empty.go", "package empty\n")
	write(t, top, "commands/shared/shared.go", "package shared\n\nfunc Helper() {}\n")
	got := checkCommands(t, top)
	want := []string{
		"commands/empty has no NewCommand",
		"commands/forgotten builds a command (NewCommand) that main.go does not add",
		`main.go adds elsewhere.NewCommand from "github.com/almanac-dev/almanac/webhooks/tool"`,
	}
	if len(got) != len(want) {
		t.Fatalf("problems %q, want %d of them: %q", got, len(want), want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d: %q, want it to start %q", i, got[i], want[i])
		}
	}
}
