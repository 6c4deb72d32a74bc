// Package argocd_test runs the Argo CD resource customizations in resource_customizations/
// (health checks and actions for every almanac kind, in Argo CD's own layout) with
// gopher-lua, the interpreter Argo CD embeds, the way Argo CD runs them: each health.lua on
// the inputs of its health_test.yaml, each actions/discovery.lua and actions/<name>/action.lua
// on those of its actions/action_test.yaml. It also keeps argocd-cm.yaml, the same scripts as
// argocd-cm overrides, in step with the files (make argocd rewrites it).
package argocd_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
	"sigs.k8s.io/yaml"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite argocd-cm.yaml from resource_customizations")

const (
	root       = "resource_customizations"
	crdDir     = "../../config/crd/bases"
	configMap  = "argocd-cm.yaml"
	tokenValue = "TOKEN" // the run-now token in an expected output: any valid fresh token
)

// A mode is how Argo CD sets up the interpreter. Its built-in scripts (argoproj/argo-cd's
// resource_customizations) get every standard library; an argocd-cm override gets only
// package, base, table and a safe os library (time and date, reached through require("os")),
// so the scripts here use nothing else and run in both.
type mode struct {
	name  string
	setUp func(l *lua.LState, now func() time.Time)
}

var modes = []mode{
	{name: "argocd-cm", setUp: func(l *lua.LState, now func() time.Time) {
		openLibs(l, lib{lua.LoadLibName, lua.OpenPackage}, lib{lua.BaseLibName, lua.OpenBase}, lib{lua.TabLibName, lua.OpenTable})
		l.PreloadModule(lua.OsLibName, safeOs(now))
	}},
	{name: "built-in", setUp: func(l *lua.LState, now func() time.Time) {
		l.OpenLibs()
		// The full os library, on the test's clock.
		osLib := l.GetGlobal(lua.OsLibName).(*lua.LTable)
		l.Push(l.NewFunction(safeOs(now)))
		l.Call(0, 1)
		clock := l.Get(-1).(*lua.LTable)
		l.Pop(1)
		for _, f := range []string{"time", "date"} {
			osLib.RawSetString(f, clock.RawGetString(f))
		}
	}},
}

// bare has only the base and table libraries: no require, no os.
var bare = mode{name: "bare", setUp: func(l *lua.LState, _ func() time.Time) {
	openLibs(l, lib{lua.BaseLibName, lua.OpenBase}, lib{lua.TabLibName, lua.OpenTable})
}}

type lib struct {
	name string
	open lua.LGFunction
}

func openLibs(l *lua.LState, libs ...lib) {
	for _, lib := range libs {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			panic(err)
		}
	}
}

// safeOs is Argo CD's safe os module: time and date, on the clock now.
func safeOs(now func() time.Time) lua.LGFunction {
	return func(l *lua.LState) int {
		l.Push(l.SetFuncs(l.NewTable(), map[string]lua.LGFunction{
			"time": func(l *lua.LState) int {
				l.Push(lua.LNumber(now().Unix()))
				return 1
			},
			"date": func(l *lua.LState) int {
				t, f := now().Local(), l.OptString(1, "%c")
				if rest, ok := strings.CutPrefix(f, "!"); ok {
					t, f = t.UTC(), rest
				}
				l.Push(lua.LString(strftime(t, f)))
				return 1
			},
		}))
		return 1
	}
}

// strftime knows the flags a token needs; Argo CD's knows more.
func strftime(t time.Time, f string) string {
	layouts := map[byte]string{'Y': "2006", 'm': "01", 'd': "02", 'H': "15", 'M': "04", 'S': "05", 'c': "02 Jan 06 15:04 MST"}
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i == len(f)-1 {
			b.WriteByte(f[i])
			continue
		}
		i++
		if layout, ok := layouts[f[i]]; ok {
			b.WriteString(t.Format(layout))
		} else {
			b.WriteByte('%')
			b.WriteByte(f[i])
		}
	}
	return b.String()
}

// run runs script with the global obj set to obj, as Argo CD does, and returns what it
// returns, converted back to Go.
func run(t *testing.T, m mode, now func() time.Time, script string, obj map[string]any) any {
	t.Helper()
	ret, err := runAction(m, now, script, obj, nil)
	if err != nil {
		t.Fatalf("%s: %v", m.name, err)
	}
	return ret
}

// runAction runs script as Argo CD's ExecuteResourceAction does: the globals obj and
// actionParams (a table of strings, empty without parameters), and the error of a script
// that fails as Argo CD reports it, without Lua's stack trace (error("...", 0) is the
// message alone).
func runAction(m mode, now func() time.Time, script string, obj map[string]any, params map[string]string) (any, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	m.setUp(l, now)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	actionParams := l.CreateTable(0, len(params))
	for k, v := range params {
		actionParams.RawSetString(k, lua.LString(v))
	}
	l.SetGlobal("actionParams", actionParams)
	l.SetGlobal("obj", toLua(l, obj))
	if err := l.DoString(script); err != nil {
		var apiErr *lua.ApiError
		if errors.As(err, &apiErr) && apiErr.Type == lua.ApiErrorRun {
			return nil, errors.New(apiErr.Object.String())
		}
		return nil, err
	}
	ret := l.Get(-1)
	if ret.Type() != lua.LTTable {
		return nil, fmt.Errorf("the script returned a %s, not a table", ret.Type())
	}
	return fromLua(ret), nil
}

// toLua converts a decoded JSON or YAML value to Lua.
func toLua(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(v)
	case string:
		return lua.LString(v)
	case float64:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case []any:
		tbl := l.CreateTable(len(v), 0)
		for _, item := range v {
			tbl.Append(toLua(l, item))
		}
		return tbl
	case map[string]any:
		tbl := l.CreateTable(0, len(v))
		for k, item := range v {
			tbl.RawSetString(k, toLua(l, item))
		}
		return tbl
	}
	panic(fmt.Sprintf("toLua: %T", v))
}

// fromLua converts a Lua value back: a table with the keys 1..n is a list, any other a map
// (an empty one a map: Lua cannot tell, and expected values go through the same conversion).
func fromLua(v lua.LValue) any {
	switch v := v.(type) {
	case *lua.LNilType:
		return nil
	case lua.LBool:
		return bool(v)
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return float64(v)
	case *lua.LTable:
		n, keys := v.MaxN(), 0
		v.ForEach(func(lua.LValue, lua.LValue) { keys++ })
		if n > 0 && n == keys {
			list := make([]any, 0, n)
			for i := 1; i <= n; i++ {
				list = append(list, fromLua(v.RawGetInt(i)))
			}
			return list
		}
		m := map[string]any{}
		v.ForEach(func(k, item lua.LValue) { m[k.String()] = fromLua(item) })
		return m
	}
	return v.String()
}

// normalize passes v through Lua and back, as an action's output does.
func normalize(v map[string]any) any {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	return fromLua(toLua(l, v))
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func readObject(t *testing.T, path string) map[string]any {
	t.Helper()
	var obj map[string]any
	readYAML(t, path, &obj)
	return obj
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// kinds returns the <group>/<Kind> folders of resource_customizations.
func kinds(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(root, "*", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no kinds in %s: %v", root, err)
	}
	sort.Strings(dirs)
	return dirs
}

type healthTests struct {
	Tests []struct {
		HealthStatus struct {
			Status  string `json:"status"`
			Message string `json:"message"`
		} `json:"healthStatus"`
		InputPath string `json:"inputPath"`
	} `json:"tests"`
}

type actionTests struct {
	DiscoveryTests []struct {
		InputPath string         `json:"inputPath"`
		Result    []actionResult `json:"result"`
	} `json:"discoveryTests"`
	ActionTests []actionTest `json:"actionTests"`
}

// actionTest is one test of actionTests, in Argo CD's format (util/lua/custom_actions_test.go):
// the action run on the object at inputPath with the actionParams parameters, and either the
// expected output at expectedOutputPath (the patched object, or for an action that returns
// a list of operations, the list of {k8sOperation, unstructuredObj}) or the message of the
// error it raises. now is almanac's addition: the clock of os.time and os.date (RFC 3339;
// the real clock when empty).
type actionTest struct {
	Action               string            `json:"action"`
	InputPath            string            `json:"inputPath"`
	ExpectedOutputPath   string            `json:"expectedOutputPath"`
	ExpectedErrorMessage string            `json:"expectedErrorMessage"`
	Parameters           map[string]string `json:"parameters"`
	Now                  string            `json:"now"`
}

type actionResult struct {
	Name     string        `json:"name"`
	Disabled bool          `json:"disabled"`
	Params   []actionParam `json:"params,omitempty"`
}

// actionParam is a parameter that discovery declares (Argo CD's ResourceActionParam).
type actionParam struct {
	Name string `json:"name"`
}

var healthCodes = []string{"Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown"}

func TestHealth(t *testing.T) {
	for _, dir := range kinds(t) {
		script := readFile(t, filepath.Join(dir, "health.lua"))
		var tests healthTests
		readYAML(t, filepath.Join(dir, "health_test.yaml"), &tests)
		for _, tc := range tests.Tests {
			obj := readObject(t, filepath.Join(dir, tc.InputPath))
			for _, m := range modes {
				t.Run(filepath.Join(dir, tc.InputPath)+"/"+m.name, func(t *testing.T) {
					got, _ := run(t, m, time.Now, script, obj).(map[string]any)
					status, _ := got["status"].(string)
					message, _ := got["message"].(string)
					if !slices.Contains(healthCodes, status) {
						t.Fatalf("status %q is none of Argo CD's %v", status, healthCodes)
					}
					if status != tc.HealthStatus.Status || message != tc.HealthStatus.Message {
						t.Errorf("got %s %q, want %s %q", status, message, tc.HealthStatus.Status, tc.HealthStatus.Message)
					}
				})
			}
		}
	}
}

func TestActions(t *testing.T) {
	for _, dir := range kinds(t) {
		actions := filepath.Join(dir, "actions")
		if _, err := os.Stat(actions); os.IsNotExist(err) {
			continue
		}
		discovery := readFile(t, filepath.Join(actions, "discovery.lua"))
		var tests actionTests
		readYAML(t, filepath.Join(actions, "action_test.yaml"), &tests)
		for _, tc := range tests.DiscoveryTests {
			obj := readObject(t, filepath.Join(actions, tc.InputPath))
			for _, m := range modes {
				t.Run(filepath.Join(actions, "discovery", tc.InputPath)+"/"+m.name, func(t *testing.T) {
					got := discoveryResult(t, run(t, m, time.Now, discovery, obj))
					want := slices.Clone(tc.Result)
					sortResults(want)
					if !reflect.DeepEqual(got, want) {
						t.Errorf("got %+v, want %+v", got, want)
					}
				})
			}
		}
		for _, tc := range tests.ActionTests {
			script := readFile(t, filepath.Join(actions, tc.Action, "action.lua"))
			in := readObject(t, filepath.Join(actions, tc.InputPath))
			clock := testClock(t, tc.Now)
			var want []operation
			if tc.ExpectedErrorMessage == "" {
				want = readOperations(t, filepath.Join(actions, tc.ExpectedOutputPath))
			}
			for _, m := range modes {
				t.Run(filepath.Join(actions, tc.Action, tc.InputPath)+"/"+m.name, func(t *testing.T) {
					out, err := runAction(m, clock, script, in, tc.Parameters)
					if tc.ExpectedErrorMessage != "" {
						if err == nil || err.Error() != tc.ExpectedErrorMessage {
							t.Fatalf("parameters %v: got error %v, want %q", tc.Parameters, err, tc.ExpectedErrorMessage)
						}
						return
					}
					if err != nil {
						t.Fatalf("parameters %v: %v", tc.Parameters, err)
					}
					got := operations(t, out)
					if len(got) != len(want) {
						t.Fatalf("%d operations, want %d: %v", len(got), len(want), out)
					}
					for i, op := range got {
						if op.Operation == patchOperation && !sameObject(op.Object, in) {
							t.Errorf("operation %d patches %s, not the object the action ran on", i, objectKey(op.Object))
						}
						j := slices.IndexFunc(want, func(w operation) bool { return sameObject(w.Object, op.Object) })
						if j < 0 {
							t.Errorf("operation %d: %s %s is none of the expected output's", i, op.Operation, objectKey(op.Object))
							continue
						}
						if op.Operation != want[j].Operation {
							t.Errorf("operation %d on %s is %q, want %q", i, objectKey(op.Object), op.Operation, want[j].Operation)
						}
						if token, ok := annotation(want[j].Object, batchv1alpha1.AnnotationRunNow); ok && token == tokenValue {
							checkFreshToken(t, in, op.Object)
							setAnnotation(op.Object, batchv1alpha1.AnnotationRunNow, tokenValue)
						}
						if !reflect.DeepEqual(op.Object, want[j].Object) {
							gotYAML, _ := yaml.Marshal(op.Object)
							wantYAML, _ := yaml.Marshal(want[j].Object)
							t.Errorf("got\n%s\nwant\n%s", gotYAML, wantYAML)
						}
					}
				})
			}
		}
	}
}

// The operations an action may return (Argo CD's util/lua K8SOperation).
const (
	createOperation = "create"
	patchOperation  = "patch"
)

// An operation is what Argo CD does with one object an action returns.
type operation struct {
	Operation string
	Object    any
}

// operations reads what an action returned as Argo CD's ExecuteResourceAction does: a list
// of {operation = "create" or "patch", resource = object}, or one object, which is patched.
func operations(t *testing.T, out any) []operation {
	t.Helper()
	list, ok := out.([]any)
	if !ok {
		return []operation{{Operation: patchOperation, Object: out}}
	}
	ops := make([]operation, 0, len(list))
	for i, item := range list {
		m, _ := item.(map[string]any)
		op, _ := m["operation"].(string)
		resource, isMap := m["resource"].(map[string]any)
		if op != createOperation && op != patchOperation {
			t.Fatalf("item %d of the returned list: unsupported operation %v (Argo CD takes %q and %q)", i, m["operation"], createOperation, patchOperation)
		}
		if !isMap {
			t.Fatalf("item %d of the returned list has no resource object: %v", i, item)
		}
		ops = append(ops, operation{Operation: op, Object: resource})
	}
	return ops
}

// readOperations reads an expected output as Argo CD's getExpectedObjectList does: YAML that
// starts with "-" is a list of {k8sOperation, unstructuredObj}; anything else is one object,
// the patched source.
func readOperations(t *testing.T, path string) []operation {
	t.Helper()
	data := []byte(readFile(t, path))
	if !bytes.HasPrefix(data, []byte("-")) {
		return []operation{{Operation: patchOperation, Object: normalize(readObject(t, path))}}
	}
	var items []struct {
		K8SOperation    string         `json:"k8sOperation"`
		UnstructuredObj map[string]any `json:"unstructuredObj"`
	}
	readYAML(t, path, &items)
	ops := make([]operation, 0, len(items))
	for _, item := range items {
		ops = append(ops, operation{Operation: item.K8SOperation, Object: normalize(item.UnstructuredObj)})
	}
	return ops
}

// sameObject reports whether a and b are the same object: apiVersion, kind, namespace and
// name (or generateName) equal.
func sameObject(a, b any) bool { return objectKey(a) == objectKey(b) }

func objectKey(obj any) string {
	m, _ := obj.(map[string]any)
	meta, _ := m["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	if name == "" {
		name, _ = meta["generateName"].(string)
		name += "*"
	}
	return fmt.Sprintf("%v %v %v/%s", m["apiVersion"], m["kind"], meta["namespace"], name)
}

// testClock is the clock of an action test: now (RFC 3339), or the real clock.
func testClock(t *testing.T, now string) func() time.Time {
	t.Helper()
	if now == "" {
		return time.Now
	}
	at, err := time.Parse(time.RFC3339, now)
	if err != nil {
		t.Fatalf("now %q: %v", now, err)
	}
	return func() time.Time { return at }
}

// discoveryResult reads what discovery.lua returns as Argo CD does: action name to
// {disabled = bool}; an empty table is an enabled action.
func discoveryResult(t *testing.T, v any) []actionResult {
	t.Helper()
	var out []actionResult
	switch v := v.(type) {
	case map[string]any:
		for name, a := range v {
			r := actionResult{Name: name}
			if a, ok := a.(map[string]any); ok {
				r.Disabled, _ = a["disabled"].(bool)
				params, _ := a["params"].([]any)
				for _, p := range params {
					p, _ := p.(map[string]any)
					name, _ := p["name"].(string)
					r.Params = append(r.Params, actionParam{Name: name})
				}
			}
			out = append(out, r)
		}
	case []any:
		if len(v) > 0 {
			t.Fatalf("discovery returned a list: %v", v)
		}
	}
	sortResults(out)
	return out
}

func sortResults(r []actionResult) {
	sort.Slice(r, func(i, j int) bool { return r[i].Name < r[j].Name })
}

func annotation(obj any, key string) (string, bool) {
	m, _ := obj.(map[string]any)
	meta, _ := m["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	v, ok := annotations[key].(string)
	return v, ok
}

func setAnnotation(obj any, key, value string) {
	m, _ := obj.(map[string]any)
	meta, _ := m["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	annotations[key] = value
}

// checkFreshToken checks the run-now token that out has: valid for almanac, and neither the
// token in the annotation of in nor the one its status records as handled.
func checkFreshToken(t *testing.T, in map[string]any, out any) {
	t.Helper()
	token, ok := annotation(out, batchv1alpha1.AnnotationRunNow)
	if !ok {
		t.Fatalf("no %s annotation", batchv1alpha1.AnnotationRunNow)
	}
	if err := batchv1alpha1.CheckRunNowToken(token); err != nil {
		t.Errorf("token %q %v", token, err)
	}
	if previous, _ := annotation(in, batchv1alpha1.AnnotationRunNow); token == previous {
		t.Errorf("token %q is the one already asked for", token)
	}
	status, _ := in["status"].(map[string]any)
	runNow, _ := status["runNow"].(map[string]any)
	if handled, _ := runNow["token"].(string); token == handled {
		t.Errorf("token %q is the one status records as handled", token)
	}
}

// TestRunNowToken pins the token that run-now writes, on a fixed clock.
func TestRunNowToken(t *testing.T) {
	dir := filepath.Join(root, "batch.almanac.dev", "ScheduledJob", "actions")
	script := readFile(t, filepath.Join(dir, "run-now", "action.lua"))
	clock := func() time.Time { return time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC) }
	object := func(rv, previous, handled string) map[string]any {
		obj := readObject(t, filepath.Join(dir, "testdata", "scheduledjob.yaml"))
		meta := obj["metadata"].(map[string]any)
		meta["resourceVersion"] = rv
		if previous != "" {
			meta["annotations"] = map[string]any{batchv1alpha1.AnnotationRunNow: previous}
		}
		if handled != "" {
			obj["status"].(map[string]any)["runNow"] = map[string]any{"token": handled}
		}
		return obj
	}
	for _, tc := range []struct {
		name string
		mode mode
		obj  map[string]any
		want string
	}{
		{"time and resourceVersion", modes[0], object("4711", "", ""), "argocd-20261127T040000Z-4711"},
		{"same as the annotation", modes[0], object("4711", "argocd-20261127T040000Z-4711", ""), "argocd-20261127T040000Z-4711-1"},
		{"same as both", modes[0], object("4711", "argocd-20261127T040000Z-4711", "argocd-20261127T040000Z-4711-1"), "argocd-20261127T040000Z-4711-2"},
		{"resourceVersion not a number", modes[0], object("a b", "", ""), "argocd-20261127T040000Z"},
		{"resourceVersion too long", modes[0], object("12345678901234567890", "", ""), "argocd-20261127T040000Z"},
		{"no os library", bare, object("4711", "", ""), "argocd-4711"},
		{"neither", bare, object("x", "argocd", ""), "argocd-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := annotation(run(t, tc.mode, clock, script, tc.obj), batchv1alpha1.AnnotationRunNow)
			if got != tc.want {
				t.Errorf("token %q, want %q", got, tc.want)
			}
			if err := batchv1alpha1.CheckRunNowToken(got); err != nil {
				t.Errorf("token %q %v", got, err)
			}
		})
	}
}

// TestEveryKind fails for an almanac kind (a CRD in config/crd/bases) without a health check
// and its tests, and for an action without a test.
func TestEveryKind(t *testing.T) {
	crds, err := filepath.Glob(filepath.Join(crdDir, "*.yaml"))
	if err != nil || len(crds) == 0 {
		t.Fatalf("no CRDs in %s: %v", crdDir, err)
	}
	want := map[string]bool{}
	for _, path := range crds {
		var crd struct {
			Spec struct {
				Group string `json:"group"`
				Names struct {
					Kind string `json:"kind"`
				} `json:"names"`
			} `json:"spec"`
		}
		readYAML(t, path, &crd)
		dir := filepath.Join(root, crd.Spec.Group, crd.Spec.Names.Kind)
		want[dir] = true
		for _, f := range []string{"health.lua", "health_test.yaml"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("kind %s/%s has no %s: %v", crd.Spec.Group, crd.Spec.Names.Kind, f, err)
			}
		}
		var tests healthTests
		if readYAMLIfExists(t, filepath.Join(dir, "health_test.yaml"), &tests) && len(tests.Tests) == 0 {
			t.Errorf("%s has no tests", filepath.Join(dir, "health_test.yaml"))
		}
	}
	for _, dir := range kinds(t) {
		if !want[dir] {
			t.Errorf("%s is no almanac kind (none of the CRDs in %s)", dir, crdDir)
		}
		names, _ := filepath.Glob(filepath.Join(dir, "actions", "*", "action.lua"))
		if len(names) == 0 {
			continue
		}
		var tests actionTests
		readYAML(t, filepath.Join(dir, "actions", "action_test.yaml"), &tests)
		for _, path := range names {
			name := filepath.Base(filepath.Dir(path))
			if !slices.ContainsFunc(tests.ActionTests, func(tc actionTest) bool { return tc.Action == name }) {
				t.Errorf("action %s of %s has no test in action_test.yaml", name, dir)
			}
			for _, d := range tests.DiscoveryTests {
				if !slices.ContainsFunc(d.Result, func(r actionResult) bool { return r.Name == name }) {
					t.Errorf("discovery test %s of %s does not list action %s", d.InputPath, dir, name)
				}
			}
		}
	}
}

func readYAMLIfExists(t *testing.T, path string, into any) bool {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		return false
	}
	readYAML(t, path, into)
	return true
}

// TestConfigMap keeps argocd-cm.yaml, the scripts as argocd-cm overrides, in step with the
// files, and checks that it reads back to the same scripts.
func TestConfigMap(t *testing.T) {
	want := configMapText(t)
	if *update {
		if err := os.WriteFile(configMap, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(configMap)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is out of date: run make argocd", configMap)
	}

	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(got, &cm); err != nil {
		t.Fatal(err)
	}
	for _, dir := range kinds(t) {
		group, kind := filepath.Base(filepath.Dir(dir)), filepath.Base(dir)
		key := group + "_" + kind
		if got := cm.Data["resource.customizations.health."+key]; got != readFile(t, filepath.Join(dir, "health.lua")) {
			t.Errorf("the health check of %s reads back as\n%s", key, got)
		}
		names, _ := filepath.Glob(filepath.Join(dir, "actions", "*", "action.lua"))
		if len(names) == 0 {
			continue
		}
		var actions struct {
			Discovery   string `json:"discovery.lua"`
			Definitions []struct {
				Name   string `json:"name"`
				Action string `json:"action.lua"`
			} `json:"definitions"`
		}
		if err := yaml.Unmarshal([]byte(cm.Data["resource.customizations.actions."+key]), &actions); err != nil {
			t.Fatalf("the actions of %s: %v", key, err)
		}
		if actions.Discovery != readFile(t, filepath.Join(dir, "actions", "discovery.lua")) {
			t.Errorf("the discovery of %s reads back as\n%s", key, actions.Discovery)
		}
		if len(actions.Definitions) != len(names) {
			t.Errorf("%s has %d action definitions, want %d", key, len(actions.Definitions), len(names))
		}
		for _, d := range actions.Definitions {
			if d.Action != readFile(t, filepath.Join(dir, "actions", d.Name, "action.lua")) {
				t.Errorf("action %s of %s reads back as\n%s", d.Name, key, d.Action)
			}
		}
	}
}

func configMapText(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString(`# The almanac health checks and actions for Argo CD as argocd-cm overrides (docs/gitops.md).
# Generated from hack/argocd/resource_customizations by
# make argocd (go test ./hack/argocd -run TestConfigMap -update); do not edit.
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
  labels:
    app.kubernetes.io/name: argocd-cm
    app.kubernetes.io/part-of: argocd
data:
`)
	for _, dir := range kinds(t) {
		key := filepath.Base(filepath.Dir(dir)) + "_" + filepath.Base(dir)
		fmt.Fprintf(&b, "  resource.customizations.health.%s: |\n", key)
		block(&b, readFile(t, filepath.Join(dir, "health.lua")), 4)
		names, _ := filepath.Glob(filepath.Join(dir, "actions", "*", "action.lua"))
		if len(names) == 0 {
			continue
		}
		sort.Strings(names)
		fmt.Fprintf(&b, "  resource.customizations.actions.%s: |\n    discovery.lua: |\n", key)
		block(&b, readFile(t, filepath.Join(dir, "actions", "discovery.lua")), 6)
		b.WriteString("    definitions:\n")
		for _, path := range names {
			fmt.Fprintf(&b, "    - name: %s\n      action.lua: |\n", filepath.Base(filepath.Dir(path)))
			block(&b, readFile(t, path), 8)
		}
	}
	return b.Bytes()
}

// block writes text as the lines of a YAML literal block indented by indent spaces.
func block(b *bytes.Buffer, text string, indent int) {
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if line != "" {
			b.WriteString(strings.Repeat(" ", indent) + line)
		}
		b.WriteByte('\n')
	}
}
