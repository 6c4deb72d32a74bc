package preview

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/almanac-dev/almanac/api/admission"
	"github.com/almanac-dev/almanac/commands/manifest"
	"github.com/almanac-dev/almanac/commands/validate"
)

// Exit statuses of `almanac preview`, as for `almanac validate`.
const (
	ExitPreviewed = validate.ExitAdmitted // every almanac object admitted and previewed
	ExitRefused   = validate.ExitRejected // an object refused by admission (the others previewed)
	ExitUsage     = validate.ExitUsage    // bad flags, unreadable input, malformed YAML
)

// admit runs on the input what `almanac validate` runs (admission.Validate: strict decoding
// against the CRDs, schema defaulting, the mutating webhook, the OpenAPI schema and CEL, the
// validating webhook, in kubectl apply order, at now), so that preview draws only what
// admission admits, and as it would be stored: it returns the input with each almanac object
// replaced by its defaulted form and the refused ones left out, and the results of the
// refused ones. Objects of other kinds pass through.
func admit(ctx context.Context, docs []manifest.Document, now time.Time) ([]manifest.Document, []admission.Result, error) {
	report, err := admission.Validate(ctx, docs, now)
	if err != nil {
		return nil, nil, err
	}
	out := make([]manifest.Document, len(docs))
	copy(out, docs)
	keep := make([]bool, len(docs))
	for i := range keep {
		keep[i] = true
	}
	var refused []admission.Result
	for _, r := range report.Results {
		if !r.Allowed || r.Defaulted == nil {
			refused = append(refused, r)
			keep[r.Input] = false
			continue
		}
		raw, err := json.Marshal(r.Defaulted)
		if err != nil {
			return nil, nil, err
		}
		d := &out[r.Input]
		d.Object, d.Raw = &unstructured.Unstructured{Object: r.Defaulted}, raw
	}
	admitted := out[:0]
	for i, d := range out {
		if keep[i] {
			admitted = append(admitted, d)
		}
	}
	return admitted, refused, nil
}

// writeRefused prints the refused objects as `almanac validate` reports them.
func writeRefused(w io.Writer, refused []admission.Result) {
	for i := range refused {
		fmt.Fprint(w, validate.ResultText(&refused[i]))
	}
	if n := len(refused); n > 0 {
		fmt.Fprintf(w, "%d %s refused by admission and not previewed (`almanac validate` says the same)\n", n, map[bool]string{true: "object", false: "objects"}[n == 1])
	}
}
