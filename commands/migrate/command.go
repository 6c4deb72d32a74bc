package migrate

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/almanac-dev/almanac/commands/manifest"
)

// Exit statuses of `almanac migrate`.
const (
	ExitConverted = 0 // every object converted with the same behaviour (or passed through)
	ExitNotAll    = 1 // some object could not be converted: left out, and said why
	ExitUsage     = 2 // bad flags, unreadable input, malformed YAML
)

type options struct {
	files     []string
	recursive bool
	output    string
}

// NewCommand returns `almanac migrate`.
func NewCommand() *cobra.Command {
	opts := options{}
	cmd := &cobra.Command{
		Use:   "migrate -f FILE|DIR|- [-f ...] [-o yaml|json]",
		Short: "Convert the manifests of the systems almanac replaces into almanac manifests with the same behaviour",
		Long: `Migrate reads manifests (as kubectl apply -f would) and writes them to standard output with every
object of a system that almanac replaces converted to almanac's kind, with the same behaviour:

  scheduled-pod-autoscaler (autoscaling.d-kuro.github.io/v1)
      ScheduledPodAutoscaler → ScheduledPodAutoscaler; Schedule → Schedule, with Weekly (which it
      read as the daily window on each day from startDayOfWeek to endDayOfWeek) → Daily with
      daysOfWeek
  k8s-at (batch.my.domain/v1)
      AT → ScheduledJob with at at the same instant, to the second, in the zone it was written in
  the CronTab controller (alpha.ianlewis.org/v1)
      CronTab → ScheduledJob with the schedule in UTC and the Pod spec as the Job's template
  the kubebuilder CronJob tutorial (batch.tutorial.kubebuilder.io/v1)
      CronJob → ScheduledJob with every field it has, in UTC
  kitagry/eventjob (batch.kitagry.github.io/v1)
      EventJob → EventJob with the same trigger

Objects of other kinds (and almanac's own) pass through unchanged, so a whole folder can be
migrated in one go. Each conversion whose meaning needs a word is reported on standard error;
docs/migrate.md has every mapping and what differs on purpose. Check the output with
almanac validate and almanac preview.

Exit status: 0 when everything was converted with the same behaviour, 1 when some object
could not be (it is left out of the output; standard error says what and why), 2 for usage
errors, unreadable files and malformed YAML.`,
		Example: `  almanac migrate -f old/ -R > migrated.yaml
  kubectl get schedules.autoscaling.d-kuro.github.io -A -o yaml | almanac migrate -f - | almanac validate -f -
  almanac migrate -f examples/migrate/ -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return run(cmd, opts)
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&opts.files, "filename", "f", nil, "File, directory or - (standard input) to read manifests from; repeatable.")
	f.BoolVarP(&opts.recursive, "recursive", "R", false, "Read directories given with -f recursively.")
	f.StringVarP(&opts.output, "output", "o", "yaml", "Output format: yaml (documents separated by ---) or json (one object, or a v1 List of them).")
	return cmd
}

func run(cmd *cobra.Command, opts options) error {
	usage := func(format string, args ...any) error {
		return &manifest.ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
	}
	if len(opts.files) == 0 {
		return usage("no input: give manifests with -f FILE, -f DIR or -f - (standard input)")
	}
	if opts.output != "yaml" && opts.output != "json" {
		return usage("-o %q is not an output format: use yaml or json", opts.output)
	}
	docs, err := manifest.Read(opts.files, opts.recursive, cmd.InOrStdin())
	if err != nil {
		return &manifest.ExitError{Code: ExitUsage, Err: err}
	}
	res := Convert(docs)
	if err := Write(cmd.OutOrStdout(), res.Objects, opts.output); err != nil {
		return &manifest.ExitError{Code: ExitUsage, Err: err}
	}
	stderr := cmd.ErrOrStderr()
	for _, n := range res.Notes {
		fmt.Fprintln(stderr, n)
	}
	for _, e := range res.Errors {
		fmt.Fprintln(stderr, "error:", e)
	}
	if len(res.Errors) > 0 {
		return &manifest.ExitError{Code: ExitNotAll}
	}
	return nil
}

// Write writes objects as YAML documents separated by "---", or as JSON: the object itself when
// there is one, a v1 List otherwise (as kubectl get -o json does).
func Write(w io.Writer, objects []*unstructured.Unstructured, format string) error {
	if format == "json" {
		var out any = map[string]any{"apiVersion": "v1", "kind": "List", "items": items(objects)}
		if len(objects) == 1 {
			out = objects[0].Object
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(out)
	}
	for i, o := range objects {
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			return err
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
	}
	return nil
}

func items(objects []*unstructured.Unstructured) []any {
	out := make([]any, 0, len(objects))
	for _, o := range objects {
		out = append(out, o.Object)
	}
	return out
}
