package webhooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/almanac-dev/almanac/api/admission"
	"github.com/almanac-dev/almanac/commands/manifest"
	"github.com/almanac-dev/almanac/test/testenv"
)

// verdict is what both sides say about one object.
type verdict struct {
	Object   string
	Allowed  bool
	Errors   []admission.ResultError
	Warnings []string
}

var unknownFieldPattern = regexp.MustCompile(`unknown field "([^"]+)"`)

// TestParity applies each corpus file, in order, to a fresh namespace of the live API server
// (with the webhooks, whose clock is now) and runs the almanac binary's `validate -o json
// --now=now` on the same documents: every almanac object gets the same verdict, the same
// causes (field path, type and message) and the same warnings, and the exit status is 1 when
// an object was rejected, 0 otherwise. The corpus must hold, for each kind, an object that is
// rejected and one that is admitted with warnings.
//
// Two differences are by design, and the test allows exactly these:
//   - For an unknown field the API server answers 400 with a plain "strict decoding error" and
//     no causes, while validate reports a cause per field, with a suggestion; for those the
//     field paths are compared.
//   - validate finds a Schedule's autoscaler and an EventJob's trigger anywhere in the input
//     (they will exist once everything is applied), while the live webhook, meeting the
//     objects in order, warns that a target listed later does not exist yet. Those warnings
//     are dropped from the live side; every other warning must match.
//
// Here the live requests come from a cluster admin, whom the webhooks' permission check
// admits; offline there is no user to ask about, and validate says so once per run.
func TestParity(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "parity", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	files = append(files, filepath.Join(testenv.RepoRoot(), "examples"))
	almanac := buildAlmanac(t)
	rejected, warned := map[string]int{}, map[string]int{}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			ns := newNamespace(t)
			docs, err := manifest.Read([]string{file}, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The input of validate: the same documents in the test's namespace.
			var input bytes.Buffer
			for _, d := range docs {
				d.Object.SetNamespace(ns)
				data, err := d.Object.MarshalJSON()
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&input, "---\n%s\n", data)
			}
			inputFile := filepath.Join(t.TempDir(), "input.yaml")
			if err := os.WriteFile(inputFile, input.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			report, exitCode := runValidate(t, almanac, inputFile)
			if !slices.Equal(report.Notes, []string{admission.PermissionsNotChecked}) {
				t.Errorf("notes %q, want once that permissions are not checked offline", report.Notes)
			}
			var offline []verdict
			for _, r := range report.Results {
				if r.File != inputFile || r.Namespace != ns || r.APIVersion == "" {
					t.Errorf("result %+v: want file %s, namespace %s and an apiVersion", r, inputFile, ns)
				}
				offline = append(offline, verdict{Object: r.Kind + "/" + r.Name, Allowed: r.Allowed, Errors: r.Errors, Warnings: r.Warnings})
			}

			var live []verdict
			for i, d := range docs {
				obj := d.Object.DeepCopy()
				c, warnings := newClient(t)
				err := c.Create(context.Background(), obj, client.FieldValidation("Strict"))
				if !strings.HasSuffix(obj.GroupVersionKind().Group, "almanac.dev") {
					if err != nil {
						t.Fatalf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
					}
					continue
				}
				v := verdict{Object: obj.GetKind() + "/" + obj.GetName(), Allowed: err == nil, Errors: liveErrors(t, err), Warnings: []string{}}
				for _, w := range warnings.take() {
					if !targetLater(w, docs[i+1:]) {
						v.Warnings = append(v.Warnings, w)
					}
				}
				checkExpected(t, obj, expectAnnotation, v)
				live = append(live, v)
				if !v.Allowed {
					rejected[obj.GetKind()]++
				} else if len(v.Warnings) > 0 {
					warned[obj.GetKind()]++
				}
				if err == nil {
					waitCached(t, obj)
				}
			}

			if len(offline) != len(live) {
				t.Fatalf("validate judged %d objects, the API server %d", len(offline), len(live))
			}
			for i := range live {
				want, got := live[i], offline[i]
				if isStrictDecodingError(want.Errors) {
					want.Errors, got.Errors = fieldsOnly(want.Errors), fieldsOnly(got.Errors)
				}
				want.Errors, got.Errors = sortErrors(want.Errors), sortErrors(got.Errors)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s (-API server +validate):\n%s", want.Object, diff)
				}
			}
			var liveRejected int
			for _, v := range live {
				if !v.Allowed {
					liveRejected++
				}
			}
			wantExit := 0
			if liveRejected > 0 {
				wantExit = 1
			}
			if exitCode != wantExit {
				t.Errorf("almanac validate exited %d, want %d (%d of %d objects rejected by the API server)", exitCode, wantExit, liveRejected, len(live))
			}
			if report.Summary.Objects != len(live) || report.Summary.Rejected != liveRejected {
				t.Errorf("summary %+v, want %d objects and %d rejected", report.Summary, len(live), liveRejected)
			}
			t.Logf("%d objects, %d rejected, %d skipped", len(live), liveRejected, report.Summary.Skipped)
		})
	}
	t.Run("the process exits 2 for usage errors and malformed input", func(t *testing.T) {
		malformed := filepath.Join(t.TempDir(), "malformed.yaml")
		if err := os.WriteFile(malformed, []byte("kind: [unclosed\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"validate"}, {"validate", "-f", malformed}, {"validate", "-f", malformed, "--no-such-flag"}, {"validate", "-f", malformed, "-o", "yaml"}} {
			out, err := exec.Command(almanac, args...).CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 {
				t.Errorf("almanac %s: %v, want exit status 2\n%s", strings.Join(args, " "), err, out)
			}
		}
	})
	for _, kind := range []string{"Schedule", "ScheduledPodAutoscaler", "ScheduledJob", "EventJob"} {
		if rejected[kind] == 0 || warned[kind] == 0 {
			t.Errorf("the corpus has %d rejected %ss and %d admitted with warnings: want at least one of each", rejected[kind], kind, warned[kind])
		}
	}
}

// The corpus can say what it expects of an object, in an annotation: "admitted" or "rejected",
// on create (expectAnnotation) and on an unchanged re-apply (expectReapplyAnnotation).
const (
	expectAnnotation        = "test.almanac.dev/expect"
	expectReapplyAnnotation = "test.almanac.dev/expect-reapply"
)

// checkExpected fails the test when the live API server's verdict on obj is not what the
// corpus expects of it under the annotation.
func checkExpected(t *testing.T, obj *unstructured.Unstructured, annotation string, v verdict) {
	t.Helper()
	want, ok := obj.GetAnnotations()[annotation]
	if !ok {
		return
	}
	if got := map[bool]string{true: "admitted", false: "rejected"}[v.Allowed]; got != want {
		t.Errorf("%s: %s, but the corpus expects it %s (%s): %+v", v.Object, got, want, annotation, v.Errors)
	}
}

// TestParityOfReapply checks `almanac validate --as-update` against the live API server
// re-applying objects it already stores. Each corpus file is created, in order, in a fresh
// namespace while the webhooks' clock is at reapplyCreated (before every time in the corpus
// went stale); then, with the clock at now, each object that was admitted is sent again
// unchanged (an update of the manifest at the stored resourceVersion) and the same
// documents go through `validate --as-update -o json --now=now`: every object gets the same
// verdict, causes and warnings. Issue 11, finding 2: validate always checked a CREATE, so a
// pipeline running it rejected, forever, a manifest whose window or at had passed, which the
// API server re-admits with a warning.
func TestParityOfReapply(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "parity", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	files = append(files, filepath.Join(testenv.RepoRoot(), "examples"))
	almanac := buildAlmanac(t)
	ratcheted := 0
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			ctx := context.Background()
			ns := newNamespace(t)
			docs, err := manifest.Read([]string{file}, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			// Created back then; what was admitted is stored.
			clk.SetTime(reapplyCreated)
			var stored []manifest.Document
			for _, d := range docs {
				d.Object.SetNamespace(ns)
				obj := d.Object.DeepCopy()
				c, _ := newClient(t)
				err := c.Create(ctx, obj, client.FieldValidation("Strict"))
				if !strings.HasSuffix(obj.GroupVersionKind().Group, "almanac.dev") {
					if err != nil {
						t.Fatalf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
					}
					stored = append(stored, d)
					continue
				}
				if err == nil {
					waitCached(t, obj)
					stored = append(stored, d)
				}
			}
			clk.SetTime(now)

			// Re-applied now, unchanged.
			var live []verdict
			for _, d := range stored {
				if !strings.HasSuffix(d.Object.GroupVersionKind().Group, "almanac.dev") {
					continue
				}
				c, warnings := newClient(t)
				current := d.Object.DeepCopy()
				if err := c.Get(ctx, client.ObjectKeyFromObject(current), current); err != nil {
					t.Fatal(err)
				}
				obj := d.Object.DeepCopy()
				obj.SetResourceVersion(current.GetResourceVersion())
				err := c.Update(ctx, obj, client.FieldValidation("Strict"))
				v := verdict{Object: obj.GetKind() + "/" + obj.GetName(), Allowed: err == nil, Errors: liveErrors(t, err), Warnings: []string{}}
				v.Warnings = append(v.Warnings, warnings.take()...)
				checkExpected(t, d.Object, expectReapplyAnnotation, v)
				for _, w := range v.Warnings {
					if strings.Contains(w, "will not run again") || strings.Contains(w, "will never be active again") {
						ratcheted++
					}
				}
				live = append(live, v)
			}

			var input bytes.Buffer
			for _, d := range stored {
				data, err := d.Object.MarshalJSON()
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&input, "---\n%s\n", data)
			}
			inputFile := filepath.Join(t.TempDir(), "input.yaml")
			if err := os.WriteFile(inputFile, input.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			report, exitCode := runValidate(t, almanac, inputFile, "--as-update")
			var offline []verdict
			for _, r := range report.Results {
				offline = append(offline, verdict{Object: r.Kind + "/" + r.Name, Allowed: r.Allowed, Errors: r.Errors, Warnings: r.Warnings})
			}
			if len(offline) != len(live) {
				t.Fatalf("validate --as-update judged %d objects, the API server %d", len(offline), len(live))
			}
			rejected := 0
			for i := range live {
				want, got := live[i], offline[i]
				want.Errors, got.Errors = sortErrors(want.Errors), sortErrors(got.Errors)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s (-API server +validate --as-update):\n%s", want.Object, diff)
				}
				if !want.Allowed {
					rejected++
				}
			}
			if wantExit := map[bool]int{true: 1, false: 0}[rejected > 0]; exitCode != wantExit {
				t.Errorf("almanac validate --as-update exited %d, want %d", exitCode, wantExit)
			}
			t.Logf("%d objects stored and re-applied, %d rejected", len(live), rejected)
		})
	}
	if ratcheted == 0 {
		t.Error("no object was re-admitted with a ratcheting warning: the corpus must have objects whose time passed since they were created")
	}
}

// reapplyCreated is when TestParityOfReapply creates the corpus: before any of its times went
// stale.
var reapplyCreated = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// validateReport is the JSON report of `almanac validate -o json`; decoding it with unknown
// fields disallowed checks its shape.
type validateReport struct {
	Results []struct {
		File       string                  `json:"file"`
		Index      int                     `json:"index"`
		APIVersion string                  `json:"apiVersion"`
		Kind       string                  `json:"kind"`
		Namespace  string                  `json:"namespace"`
		Name       string                  `json:"name"`
		Allowed    bool                    `json:"allowed"`
		Errors     []admission.ResultError `json:"errors"`
		Warnings   []string                `json:"warnings"`
	} `json:"results"`
	Summary struct {
		Objects  int `json:"objects"`
		Rejected int `json:"rejected"`
		Warnings int `json:"warnings"`
		Skipped  int `json:"skipped"`
	} `json:"summary"`
	Notes    []string             `json:"notes"`
	Replaced []admission.Replaced `json:"replaced"`
}

// buildAlmanac builds the almanac binary, once per test binary, into a folder that TestMain
// removes.
func buildAlmanac(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.path = filepath.Join(binDir, "almanac")
		cmd := exec.Command("go", "build", "-o", built.path, ".")
		cmd.Dir = testenv.RepoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

var built struct {
	once sync.Once
	path string
	err  error
}

// runValidate runs `almanac validate -f file -o json --now=now` with extra arguments and
// returns its report and exit status.
func runValidate(t *testing.T, almanac, file string, extra ...string) (*validateReport, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(almanac, append([]string{"validate", "-f", file, "-o", "json", "--now", now.Format(time.RFC3339)}, extra...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := 0
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("almanac validate: %v", err)
		}
		code = exit.ExitCode()
	}
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	report := &validateReport{}
	if err := dec.Decode(report); err != nil {
		t.Fatalf("almanac validate -o json (exit %d): %v\nstderr:\n%s", code, err, stderr.String())
	}
	return report, code
}

var missingTarget = regexp.MustCompile(`^spec\.(?:scaleTargetRef|trigger)\.name: (\w+) "([^"]+)" does not exist`)

// targetLater reports whether warning says that an object does not exist which is among the
// later documents.
func targetLater(warning string, later []manifest.Document) bool {
	m := missingTarget.FindStringSubmatch(warning)
	if m == nil {
		return false
	}
	return slices.ContainsFunc(later, func(d manifest.Document) bool {
		return d.Object.GetKind() == m[1] && d.Object.GetName() == m[2]
	})
}

const strictDecoding = "strict decoding"

// liveErrors turns the API server's answer into causes: the causes of a 422, or one cause per
// unknown field of a strict decoding error.
func liveErrors(t *testing.T, err error) []admission.ResultError {
	t.Helper()
	out := []admission.ResultError{}
	if err == nil {
		return out
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		t.Fatalf("not an API status: %v", err)
	}
	if apierrors.IsBadRequest(err) && strings.Contains(err.Error(), "strict decoding error") {
		for _, m := range unknownFieldPattern.FindAllStringSubmatch(err.Error(), -1) {
			out = append(out, admission.ResultError{Field: m[1], Type: string(field.ErrorTypeForbidden), Message: strictDecoding})
		}
		return out
	}
	if !apierrors.IsInvalid(err) {
		t.Fatalf("want a 422 Invalid or a strict decoding error, got %v", err)
	}
	for _, c := range status.Status().Details.Causes {
		out = append(out, admission.ResultError{Field: c.Field, Type: string(c.Type), Message: c.Message})
	}
	return out
}

func isStrictDecodingError(errs []admission.ResultError) bool {
	return len(errs) > 0 && errs[0].Message == strictDecoding
}

func fieldsOnly(errs []admission.ResultError) []admission.ResultError {
	out := []admission.ResultError{}
	for _, e := range errs {
		out = append(out, admission.ResultError{Field: e.Field, Type: e.Type})
	}
	return out
}

// sortErrors orders causes: the API server reports schema errors in no fixed order.
func sortErrors(errs []admission.ResultError) []admission.ResultError {
	errs = slices.Clone(errs)
	slices.SortFunc(errs, func(a, b admission.ResultError) int {
		return strings.Compare(a.Field+"\x00"+a.Message, b.Field+"\x00"+b.Message)
	})
	return errs
}
