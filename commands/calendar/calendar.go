// Package calendar is `almanac calendar`: commands for the almanac.dev Calendar and
// ClusterCalendar kinds. `almanac calendar import` turns an iCalendar file (a public-holiday
// feed, an export of a team calendar) into a Calendar manifest. It reads the file with
// github.com/emersion/go-ical, expands recurrences with the recurrence sets that library builds
// (github.com/teambition/rrule-go), checks the result with the time engine (api/timing) and
// talks to no cluster.
package calendar

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/almanac-dev/almanac/commands/kube"
)

// NewCommand returns `almanac calendar`, the parent of `almanac calendar import`.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "calendar",
		Short: "Work with Calendars and ClusterCalendars (import an iCalendar file)",
		Long: `Commands for almanac's Calendar and ClusterCalendar kinds (almanac.dev/v1alpha1): sets of days and
periods that Schedules and ScheduledJobs skip, or keep to, through spec.calendars.

See docs/calendars.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_ = cmd.Help()
			return kube.Usage("give a subcommand: almanac calendar import FILE.ics --name NAME")
		},
	}
	cmd.AddCommand(newImportCommand())
	return cmd
}

// importFlags are the flags of `almanac calendar import`.
type importFlags struct {
	Options
	output string
}

func newImportCommand() *cobra.Command {
	f := importFlags{}
	cmd := &cobra.Command{
		Use:   "import FILE.ics|- --name NAME [--namespace NS | --cluster] [--time-zone ZONE] [--from DATE] [--horizon 3y] [-o FILE]",
		Short: "Write a Calendar manifest from an iCalendar (.ics) file",
		Long: `Import reads an iCalendar file (RFC 5545: a public-holiday feed, an export of a team or
company calendar; - reads standard input) and writes a Calendar manifest (almanac.dev/v1alpha1)
with its events as days and periods, for kubectl apply. With --namespace the Calendar names its
namespace; with --cluster it is a ClusterCalendar, which every namespace may reference.

The calendar's time zone is --time-zone; by default the file's X-WR-TIMEZONE (what Google
Calendar and most holiday feeds write) when it names a valid zone, else UTC. It is written in
its canonical spelling ("europe/berlin" becomes "Europe/Berlin").

Each VEVENT becomes, named by its SUMMARY:

  all-day (DTSTART;VALUE=DATE)
      one day per date, "yyyy-MM-dd" (DTEND is exclusive, as in iCalendar); an all-day
      event of more than 7 days becomes one period from the first day's 00:00 to the 00:00
      after its last day, instead of a day per date
  timed (DTSTART with a time)
      a period [DTSTART, DTEND) (or DTSTART + DURATION), converted to wall times in the
      calendar's time zone, whatever the event's TZID; a start is rounded down and an end up
      to the minute. A timed event without an end is skipped: a period must last.
  yearly (RRULE:FREQ=YEARLY on an all-day event of at most 7 days, with no COUNT, UNTIL,
  INTERVAL, EXDATE or BYxxx part other than the start's own month and day)
      days "MM-dd", which a calendar repeats every year (Christmas: "12-25"), in the years
      before the event's start too
  any other recurrence (weekly, monthly, Easter-dependent, with COUNT or UNTIL or EXDATE)
      expanded: the occurrences that start from --from (default: today in the calendar's
      zone) for --horizon (default 3y) become days or periods as above; EXDATEs are left out,
      RDATEs added, and an occurrence moved by a VEVENT with RECURRENCE-ID is replaced by
      it. Standard error says which events were expanded, into how many occurrences, over
      what range.

Cancelled events (STATUS:CANCELLED) and events without DTSTART are skipped, with a note on
standard error. Days with the same date, and periods with the same start and end, are merged,
their names joined with " / ". Days are sorted by date (the yearly ones first) and periods by
start, so that the same file always gives the same manifest. A Calendar holds at most 1000 days
and 1000 periods: a file that makes more is refused, naming the events that make the most (give
a shorter --horizon, or split the file into several calendars). The manifest is compiled by the
same time engine as the controller's before it is written.

Exit status: 0 written, 1 the file cannot become a Calendar (no events, too many days or
periods, an event that cannot be read; standard error says which, with its line), 2 usage
errors and unreadable or malformed files.`,
		Example: `  almanac calendar import examples/calendars/de-berlin-holidays-2027.ics --name de-berlin-holidays --cluster
  almanac calendar import team.ics --name team-offsites -n payments --time-zone Europe/Paris --horizon 1y -o offsites.yaml
  curl -s https://example.com/holidays.ics | almanac calendar import - --name holidays --cluster | kubectl apply -f -`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runImport(cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), f, args, time.Now())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.Name, "name", "", "metadata.name of the Calendar (required).")
	fs.StringVarP(&f.Namespace, "namespace", "n", "", "metadata.namespace of the Calendar (default: none, so kubectl apply uses its namespace). Exclusive with --cluster.")
	fs.BoolVar(&f.Cluster, "cluster", false, "Write a ClusterCalendar, which the objects of every namespace may reference.")
	fs.StringVar(&f.TimeZone, "time-zone", "", `Time zone of the calendar, an IANA name such as "Europe/Berlin" (default: the file's X-WR-TIMEZONE if valid, else UTC).`)
	fs.StringVar(&f.From, "from", "", "First date from which recurring events are expanded, yyyy-MM-dd (default: today in the calendar's time zone).")
	fs.StringVar(&f.Horizon, "horizon", DefaultHorizon, `How far past --from recurring events are expanded: years, months, weeks or days, e.g. "5y", "18mo", "6w", "90d".`)
	fs.StringVarP(&f.output, "output", "o", "", "Write the manifest to this file instead of standard output.")
	return cmd
}

func runImport(stdin io.Reader, stdout, stderr io.Writer, f importFlags, args []string, now time.Time) error {
	if len(args) != 1 {
		return kube.Usage("give one iCalendar file, or - for standard input: almanac calendar import FILE.ics --name NAME")
	}
	path := args[0]
	var r io.Reader
	f.Source = "standard input"
	if path == "-" {
		r = stdin
	} else {
		file, err := os.Open(path) //nolint:gosec // the user names the file to read
		if err != nil {
			return kube.Usage("failed to read the iCalendar file: %v", err)
		}
		defer func() { _ = file.Close() }()
		r = file
		f.Source = filepath.Base(path)
	}
	res, err := Import(r, f.Options, now)
	for _, n := range res.Notes {
		_, _ = fmt.Fprintln(stderr, "Note:", n)
	}
	if err != nil {
		return err
	}
	if f.output == "" || f.output == "-" {
		_, err = stdout.Write(res.Manifest)
		return err
	}
	if err := os.WriteFile(f.output, res.Manifest, 0o644); err != nil { //nolint:gosec // a manifest is not secret
		return kube.Usage("failed to write the manifest: %v", err)
	}
	_, _ = fmt.Fprintf(stderr, "Wrote %s %s (%d days, %d periods) to %s\n", res.Kind, res.Name, len(res.Spec.Days), len(res.Spec.Periods), f.output)
	return nil
}
