package webhooks_test

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/almanac-dev/almanac/test/testenv"
	"github.com/almanac-dev/almanac/webhooks"
	"github.com/almanac-dev/almanac/webhooks/manifest"
)

// verdict is what both sides say about one object.
type verdict struct {
	Object   string
	Allowed  bool
	Errors   []webhooks.ResultError
	Warnings []string
}

var unknownFieldPattern = regexp.MustCompile(`unknown field "([^"]+)"`)

// TestParity applies each corpus file, in order, to a fresh namespace of the live API server
// (with the webhooks, whose clock is now) and runs `almanac validate`'s logic on the same
// documents with --now=now: every almanac object gets the same verdict, the same causes
// (field path, type and message) and the same warnings.
//
// Two differences are by design, and the test allows exactly these:
//   - For an unknown field the API server answers 400 with a plain "strict decoding error" and
//     no causes, while validate reports a cause per field, with a suggestion; for those the
//     field paths are compared.
//   - validate finds a Schedule's autoscaler and an EventJob's trigger anywhere in the input
//     (they will exist once everything is applied), while the live webhook, meeting the
//     objects in order, warns that a target listed later does not exist yet. Those warnings
//     are dropped from the live side; every other warning must match.
func TestParity(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "parity", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	files = append(files, filepath.Join(testenv.RepoRoot(), "examples"))
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			ns := newNamespace(t)
			docs, err := manifest.Read([]string{file}, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range docs {
				d.Object.SetNamespace(ns)
			}
			report, err := webhooks.Validate(context.Background(), docs, now)
			if err != nil {
				t.Fatal(err)
			}
			var offline []verdict
			for _, r := range report.Results {
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
				live = append(live, v)
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
			var rejected int
			for _, v := range live {
				if !v.Allowed {
					rejected++
				}
			}
			t.Logf("%d objects, %d rejected, %d skipped", len(live), rejected, report.Summary.Skipped)
		})
	}
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
func liveErrors(t *testing.T, err error) []webhooks.ResultError {
	t.Helper()
	out := []webhooks.ResultError{}
	if err == nil {
		return out
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		t.Fatalf("not an API status: %v", err)
	}
	if apierrors.IsBadRequest(err) && strings.Contains(err.Error(), "strict decoding error") {
		for _, m := range unknownFieldPattern.FindAllStringSubmatch(err.Error(), -1) {
			out = append(out, webhooks.ResultError{Field: m[1], Type: string(field.ErrorTypeForbidden), Message: strictDecoding})
		}
		return out
	}
	if !apierrors.IsInvalid(err) {
		t.Fatalf("want a 422 Invalid or a strict decoding error, got %v", err)
	}
	for _, c := range status.Status().Details.Causes {
		out = append(out, webhooks.ResultError{Field: c.Field, Type: string(c.Type), Message: c.Message})
	}
	return out
}

func isStrictDecodingError(errs []webhooks.ResultError) bool {
	return len(errs) > 0 && errs[0].Message == strictDecoding
}

func fieldsOnly(errs []webhooks.ResultError) []webhooks.ResultError {
	out := []webhooks.ResultError{}
	for _, e := range errs {
		out = append(out, webhooks.ResultError{Field: e.Field, Type: e.Type})
	}
	return out
}

// sortErrors orders causes: the API server reports schema errors in no fixed order.
func sortErrors(errs []webhooks.ResultError) []webhooks.ResultError {
	errs = slices.Clone(errs)
	slices.SortFunc(errs, func(a, b webhooks.ResultError) int {
		return strings.Compare(a.Field+"\x00"+a.Message, b.Field+"\x00"+b.Message)
	})
	return errs
}
