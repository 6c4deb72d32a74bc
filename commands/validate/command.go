// Package validate is `almanac validate`: the cobra command that runs offline admission
// (api/admission) on manifests (commands/manifest), and its reports as text, JSON or JUnit.
package validate

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/almanac-dev/almanac/api/admission"
	"github.com/almanac-dev/almanac/commands/manifest"
	"github.com/almanac-dev/almanac/commands/migrate"
)

// Exit statuses of `almanac validate`.
const (
	ExitAdmitted = 0 // every object admitted
	ExitRejected = 1 // an object was rejected (or warned, with --warnings-as-errors)
	ExitUsage    = 2 // bad flags, unreadable input, malformed YAML
)

type validateOptions struct {
	files            []string
	recursive        bool
	now              string
	output           string
	warningsAsErrors bool
	showDefaulted    bool
	asUpdate         bool
}

// NewCommand returns `almanac validate`: the admission webhooks' defaulting and
// validation, and the CRDs' schemas and CEL rules, run offline on manifests.
func NewCommand() *cobra.Command {
	opts := validateOptions{}
	cmd := &cobra.Command{
		Use:   "validate -f FILE|DIR|- [-f ...]",
		Short: "Check manifests offline, exactly as the API server and almanac's admission webhooks would",
		Long: `Validate runs, without a cluster, what creating the given objects would run: strict decoding
against almanac's CustomResourceDefinitions (embedded in this binary), schema defaulting,
almanac's mutating webhook, the OpenAPI schema and CEL rules, and almanac's validating webhook.
Overlaps between Schedules and cycles between EventJobs are checked across the whole input, in
the order kubectl apply would create the objects. Calendars and ClusterCalendars are validated
too, and the calendars that Schedules and ScheduledJobs name are looked up in the input (one
that it does not hold is reported as missing). Objects of other kinds are skipped (and count
as existing triggers); for those of a system that almanac replaces (scheduled-pod-autoscaler,
k8s-at, the CronTab controller, the kubebuilder CronJob tutorial, kitagry/eventjob) the report
says that almanac migrate converts them. Objects without a namespace are in "default".

By default every object is a CREATE. With --as-update, every object is an UPDATE of itself as
already stored: the input applied again, unchanged, to a cluster that holds it (what a GitOps
pipeline does on every sync). The API server then ratchets: problems of fields that did not
change, such as a OneShot window or an at that has passed since the object was created, are
warnings, so that such a manifest can be re-applied until it is removed.

Exit status: 0 when every object is admitted, 1 when an object is rejected (or has warnings,
with --warnings-as-errors), 2 for usage errors, unreadable files and malformed YAML.`,
		Example: `  almanac validate -f deploy/ -R
  kustomize build overlays/prod | almanac validate -f - -o junit > almanac-report.xml
  almanac validate -f schedule.yaml --show-defaulted
  almanac validate -f deploy/ -R --as-update    # the manifests are in the cluster already`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runValidate(cmd, opts)
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&opts.files, "filename", "f", nil, "File, directory or - (standard input) to read manifests from; repeatable.")
	f.BoolVarP(&opts.recursive, "recursive", "R", false, "Read directories given with -f recursively.")
	f.StringVar(&opts.now, "now", "", "The current time, RFC 3339 (default: the clock); staleness and DST warnings depend on it.")
	f.StringVarP(&opts.output, "output", "o", "text", "Report format: text, json or junit.")
	f.BoolVar(&opts.warningsAsErrors, "warnings-as-errors", false, "Exit 1 when any object has a warning.")
	f.BoolVar(&opts.showDefaulted, "show-defaulted", false, "Print the objects as they would be stored (YAML) to standard output; the report goes to standard error.")
	f.BoolVar(&opts.asUpdate, "as-update", false, "Validate each object as an UPDATE of itself as already stored (an unchanged re-apply), not as a CREATE: problems of unchanged fields are warnings.")
	return cmd
}

func runValidate(cmd *cobra.Command, opts validateOptions) error {
	usage := func(format string, args ...any) error {
		return &manifest.ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
	}
	if len(opts.files) == 0 {
		return usage("no input: give manifests with -f FILE, -f DIR or -f - (standard input)")
	}
	switch opts.output {
	case "text", "json", "junit":
	default:
		return usage("-o %q is not a report format: use text, json or junit", opts.output)
	}
	now := time.Now()
	if opts.now != "" {
		t, err := time.Parse(time.RFC3339, opts.now)
		if err != nil {
			return usage("--now %q is not an RFC 3339 time, e.g. 2027-03-14T09:30:00Z: %w", opts.now, err)
		}
		now = t
	}
	docs, err := manifest.Read(opts.files, opts.recursive, cmd.InOrStdin())
	if err != nil {
		return &manifest.ExitError{Code: ExitUsage, Err: err}
	}
	validate := admission.Validate
	if opts.asUpdate {
		validate = admission.ValidateUpdate
	}
	report, err := validate(cmd.Context(), docs, now, admission.ReplacedBy(migrate.Hint))
	if err != nil {
		return &manifest.ExitError{Code: ExitUsage, Err: err}
	}

	out := cmd.OutOrStdout()
	if opts.showDefaulted {
		if err := writeDefaulted(out, report); err != nil {
			return &manifest.ExitError{Code: ExitUsage, Err: err}
		}
		out = cmd.ErrOrStderr()
	}
	switch opts.output {
	case "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		err = enc.Encode(report)
	case "junit":
		err = writeJUnit(out, report, opts.warningsAsErrors)
		// The XML has no place for a note on the whole run; standard error shows in CI logs.
		for _, note := range report.Notes {
			_, _ = fmt.Fprintln(cmd.ErrOrStderr(), "note: "+note)
		}
	default:
		err = writeText(out, report)
	}
	if err != nil {
		return &manifest.ExitError{Code: ExitUsage, Err: err}
	}
	if report.Summary.Rejected > 0 || (opts.warningsAsErrors && report.Summary.Warnings > 0) {
		return &manifest.ExitError{Code: ExitRejected}
	}
	return nil
}

// location names a document as FILE#INDEX, INDEX counting the file's documents from 0 as in
// the JSON report (a "FILE:N" would read as a line number).
func location(r *admission.Result) string { return fmt.Sprintf("%s#%d", r.File, r.Index) }

// ResultText is the text report's lines for one object: its location, kind, name and
// verdict, then each error and warning. `almanac preview` prints the objects it refuses with
// it.
func ResultText(r *admission.Result) string {
	var b strings.Builder
	verdict := "admitted"
	if !r.Allowed {
		verdict = "rejected"
	}
	fmt.Fprintf(&b, "%s: %s %s/%s: %s\n", location(r), r.Kind, r.Namespace, r.Name, verdict)
	for _, e := range r.Errors {
		if e.Field == "" || e.Field == "<nil>" {
			fmt.Fprintf(&b, "  error: %s\n", e.Message)
		} else {
			fmt.Fprintf(&b, "  error: %s: %s\n", e.Field, e.Message)
		}
	}
	for _, warning := range r.Warnings {
		fmt.Fprintf(&b, "  warning: %s\n", warning)
	}
	return b.String()
}

func writeText(w io.Writer, report *admission.Report) error {
	var b strings.Builder
	for i := range report.Results {
		b.WriteString(ResultText(&report.Results[i]))
	}
	for _, r := range report.Replaced {
		fmt.Fprintf(&b, "%s#%d: %s %s/%s: skipped: %s\n", r.File, r.Index, r.Kind, r.Namespace, r.Name, r.Hint)
	}
	for _, note := range report.Notes {
		fmt.Fprintf(&b, "note: %s\n", note)
	}
	s := report.Summary
	fmt.Fprintf(&b, "%d objects: %d admitted, %d rejected, %d warnings; %d skipped (not almanac kinds)\n",
		s.Objects, s.Objects-s.Rejected, s.Rejected, s.Warnings, s.Skipped)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeDefaulted(w io.Writer, report *admission.Report) error {
	for i := range report.Results {
		r := &report.Results[i]
		if r.Defaulted == nil {
			continue
		}
		data, err := yaml.Marshal(r.Defaulted)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "---\n# %s\n%s", location(r), data); err != nil {
			return err
		}
	}
	return nil
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes one test suite per file and one test case per object: a failure for a
// rejected object (or one with warnings, with warningsAsErrors), skipped for objects that are
// not almanac's, warnings as system-out.
func writeJUnit(w io.Writer, report *admission.Report, warningsAsErrors bool) error {
	suites := junitSuites{Name: "almanac validate"}
	suiteOf := map[string]int{}
	add := func(file string, c junitCase) {
		i, ok := suiteOf[file]
		if !ok {
			i = len(suites.Suites)
			suiteOf[file] = i
			suites.Suites = append(suites.Suites, junitSuite{Name: file})
		}
		s := &suites.Suites[i]
		s.Tests++
		suites.Tests++
		if c.Failure != nil {
			s.Failures++
			suites.Failures++
		}
		if c.Skipped != nil {
			s.Skipped++
			suites.Skipped++
		}
		s.Cases = append(s.Cases, c)
	}
	for i := range report.Results {
		r := &report.Results[i]
		c := junitCase{Classname: r.File, Name: fmt.Sprintf("%s %s/%s (document %d)", r.Kind, r.Namespace, r.Name, r.Index)}
		var lines []string
		for _, e := range r.Errors {
			lines = append(lines, strings.TrimPrefix(e.Field+": ", "<nil>: ")+e.Message)
		}
		if len(r.Warnings) > 0 {
			c.SystemOut = "warning: " + strings.Join(r.Warnings, "\nwarning: ")
		}
		switch {
		case !r.Allowed:
			c.Failure = &junitMessage{Message: "rejected", Type: r.Errors[0].Type, Text: strings.Join(lines, "\n")}
		case warningsAsErrors && len(r.Warnings) > 0:
			c.Failure = &junitMessage{Message: "warnings", Type: "Warning", Text: strings.Join(r.Warnings, "\n")}
		}
		add(r.File, c)
	}
	for _, d := range report.Skipped {
		gvk := d.Object.GroupVersionKind()
		message := fmt.Sprintf("%s %s is not an almanac kind", gvk.GroupVersion(), gvk.Kind)
		if hint, ok := migrate.Hint(gvk, d.File); ok {
			message = hint
		}
		add(d.File, junitCase{
			Classname: d.File,
			Name:      fmt.Sprintf("%s %s (document %d)", gvk.Kind, d.Object.GetName(), d.Index),
			Skipped:   &junitMessage{Message: message},
		})
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(suites); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
