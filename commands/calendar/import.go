package calendar

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-ical"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
	"github.com/almanac-dev/almanac/commands/kube"
)

// DefaultHorizon is how far past --from recurring events are expanded by default.
const DefaultHorizon = "3y"

const (
	// maxDaysAsDays is the longest all-day event, in days, that becomes one day per date;
	// a longer one becomes one period, which keeps long holidays from filling the 1000 days.
	maxDaysAsDays = 7
	// maxSteps is the most occurrences that the recurrence sets of one file may yield, before
	// or in the range, before the file is refused: a rule that recurs every hour since 1970
	// would otherwise keep the command busy for minutes.
	maxSteps = 1_000_000
	// maxFileSize is the largest file read: a holiday feed is a few kilobytes, a large team
	// calendar a few megabytes.
	maxFileSize = 64 << 20
	// maxNameLength is the longest name a day or period may have (the CRD's MaxLength).
	maxNameLength = 128
	// maxHorizonYears is the longest --horizon.
	maxHorizonYears = 100
)

const (
	dateLayout     = "2006-01-02"
	dateTimeLayout = "2006-01-02T15:04"
)

// Options say what to import and how.
type Options struct {
	// Name is metadata.name; required.
	Name string
	// Namespace is metadata.namespace of a Calendar; empty: none. Exclusive with Cluster.
	Namespace string
	// Cluster writes a ClusterCalendar.
	Cluster bool
	// TimeZone is the calendar's zone; empty: the file's X-WR-TIMEZONE when valid, else UTC.
	TimeZone string
	// From is the first date (yyyy-MM-dd) from which recurrences are expanded; empty: the
	// date of now in the calendar's zone.
	From string
	// Horizon is how far past From recurrences are expanded ("3y", "18mo", "6w", "90d");
	// empty: DefaultHorizon.
	Horizon string
	// Source names the file in messages and in the manifest's header: its base name, or
	// "standard input". Empty: "the iCalendar file".
	Source string
}

// Result is an imported calendar.
type Result struct {
	// Kind is Calendar or ClusterCalendar.
	Kind, Name, Namespace string
	Spec                  calendarv1alpha1.CalendarSpec
	// Manifest is the YAML to apply.
	Manifest []byte
	// Notes say what the import did that the user should know: expanded recurrences, skipped
	// events, the zone chosen. Each is a sentence without "Note:".
	Notes []string
}

// manifestDoc is the manifest as written: the kinds' ObjectMeta would add
// creationTimestamp: null.
type manifestDoc struct {
	APIVersion string                        `json:"apiVersion"`
	Kind       string                        `json:"kind"`
	Metadata   manifestMeta                  `json:"metadata"`
	Spec       calendarv1alpha1.CalendarSpec `json:"spec"`
}

type manifestMeta struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// Import reads an iCalendar file from r and returns the calendar it makes. now decides the
// default --from. Failures are *kube.Error: ExitUsage for options and unreadable files,
// ExitRefused for files that cannot become a calendar. The Result is never nil: when Import
// fails, its Notes still say what it did before (which events it expanded, into how many
// occurrences), and the rest is empty.
func Import(r io.Reader, opts Options, now time.Time) (res *Result, err error) {
	im := &importer{opts: opts, days: map[string]*dayEntry{}, periods: map[[2]string]*periodEntry{}}
	defer func() {
		// The iCalendar library and its recurrence library are not ours: a panic in them on a
		// malformed file is a refusal of that file, not a crash.
		if r := recover(); r != nil {
			res, err = &Result{Notes: im.notes}, kube.Usage("%s cannot be read: the iCalendar library failed on it (%v); check that it is a valid RFC 5545 file", im.opts.Source, r)
		}
	}()
	res, err = im.run(r, now)
	if err != nil {
		return &Result{Notes: im.notes}, err
	}
	return res, nil
}

func (im *importer) run(r io.Reader, now time.Time) (*Result, error) {
	opts := im.opts
	if opts.Source == "" {
		opts.Source = "the iCalendar file"
		im.opts.Source = opts.Source
	}
	kind, err := checkOptions(opts)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return nil, kube.Usage("failed to read %s: %v", opts.Source, err)
	}
	if len(data) > maxFileSize {
		return nil, kube.Usage("%s is larger than %d MiB: split it, or export a shorter range of the calendar", opts.Source, maxFileSize>>20)
	}
	cals, err := decode(data)
	if err != nil {
		return nil, kube.Usage("%s is not an iCalendar file that can be read: %v (expected BEGIN:VCALENDAR … END:VCALENDAR, RFC 5545)", opts.Source, err)
	}

	if err := im.chooseZone(cals); err != nil {
		return nil, err
	}
	if err := im.chooseRange(now); err != nil {
		return nil, err
	}

	events := eventsOf(cals, data)
	if len(events) == 0 {
		return nil, kube.Refused("%s has no events (VEVENT): nothing to import; give a calendar export or a holiday feed, whose days and periods are VEVENTs", opts.Source)
	}
	im.collectOverrides(events)
	var problems []string
	for _, e := range events {
		if err := im.add(e); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		return nil, kube.Refused("%s cannot be imported:\n  %s", opts.Source, strings.Join(problems, "\n  "))
	}
	spec := im.spec()
	if len(spec.Days) == 0 && len(spec.Periods) == 0 {
		return nil, kube.Refused("%s makes no day and no period: %s", opts.Source, im.whyEmpty())
	}
	if err := im.checkLimits(spec); err != nil {
		return nil, err
	}

	// A bug guard: what we write must be what the controller reads.
	days := make([]timing.CalendarDay, len(spec.Days))
	for i, d := range spec.Days {
		days[i] = timing.CalendarDay{Date: d.Date, Name: d.Name}
	}
	periods := make([]timing.CalendarPeriod, len(spec.Periods))
	for i, p := range spec.Periods {
		periods[i] = timing.CalendarPeriod{Start: p.Start, End: p.End, Name: p.Name}
	}
	if _, errs := (timing.CalendarSpec{Name: kind + " " + opts.Name, TimeZone: spec.TimeZone, Days: days, Periods: periods}).Compile(); len(errs) > 0 {
		return nil, kube.Refused("the %s made from %s does not compile (this is a bug of almanac calendar import: please report it with the file): %v",
			kind, opts.Source, timing.Join("spec.", errs))
	}

	doc := manifestDoc{
		APIVersion: calendarv1alpha1.GroupVersion.String(),
		Kind:       kind,
		Metadata:   manifestMeta{Name: opts.Name, Namespace: opts.Namespace},
		Spec:       spec,
	}
	body, err := yaml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("failed to write the manifest: %w", err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Imported from %s by almanac calendar import.\n", opts.Source)
	if im.expanded > 0 {
		fmt.Fprintf(&b, "# Recurring events expanded from %s to %s (--from, --horizon %s): import again before then.\n",
			im.from.Format(dateLayout), im.lastDate(), im.horizon)
	}
	b.Write(body)
	return &Result{Kind: kind, Name: opts.Name, Namespace: opts.Namespace, Spec: spec, Manifest: b.Bytes(), Notes: im.notes}, nil
}

// checkOptions checks the options that do not depend on the file, and returns the kind.
func checkOptions(opts Options) (string, error) {
	if opts.Name == "" {
		return "", kube.Usage("--name is required: the name of the Calendar, e.g. --name de-public-holidays")
	}
	if errs := validation.IsDNS1123Subdomain(opts.Name); len(errs) > 0 {
		return "", kube.Usage("--name %q is not a valid name: %s", opts.Name, strings.Join(errs, "; "))
	}
	if opts.Cluster && opts.Namespace != "" {
		return "", kube.Usage("--namespace and --cluster both set: a ClusterCalendar has no namespace; give one of them")
	}
	if opts.Namespace != "" {
		if errs := validation.IsDNS1123Label(opts.Namespace); len(errs) > 0 {
			return "", kube.Usage("--namespace %q is not a valid namespace: %s", opts.Namespace, strings.Join(errs, "; "))
		}
	}
	if opts.Cluster {
		return calendarv1alpha1.KindClusterCalendar, nil
	}
	return calendarv1alpha1.KindCalendar, nil
}

// decode reads every VCALENDAR of data (feeds are one; concatenated exports are several).
// The library's decoder panics on some malformed lines (a parameter without a value at the end
// of a line, "0;0="): such a file is not one it can read, and a panic must not be what the
// user gets.
func decode(data []byte) (cals []*ical.Calendar, err error) {
	defer func() {
		if r := recover(); r != nil {
			cals, err = nil, fmt.Errorf("the iCalendar library cannot read it (%v)", r)
		}
	}()
	dec := ical.NewDecoder(bytes.NewReader(data))
	for {
		cal, err := dec.Decode()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		cals = append(cals, cal)
	}
	if len(cals) == 0 {
		return nil, errors.New("no VCALENDAR")
	}
	return cals, nil
}

// event is a VEVENT and where it is.
type event struct {
	ical.Event
	line         int // of its BEGIN:VEVENT; 0 when unknown
	uid, summary string
}

// String names the event as messages do: `"Neujahr" (UID x@y, line 12)`.
func (e event) String() string {
	var where []string
	if e.uid != "" {
		where = append(where, "UID "+e.uid)
	}
	if e.line > 0 {
		where = append(where, "line "+strconv.Itoa(e.line))
	}
	name := "the event"
	if e.summary != "" {
		name = strconv.Quote(e.summary)
	}
	if len(where) == 0 {
		return name
	}
	return name + " (" + strings.Join(where, ", ") + ")"
}

// eventsOf returns the VEVENTs of cals in file order, with the line of each: the library
// keeps no positions, but a VEVENT of a VCALENDAR starts at a line BEGIN:VEVENT of its own
// (folding never splits a line before its first character), the n-th such line the n-th event.
func eventsOf(cals []*ical.Calendar, data []byte) []event {
	var lines []int
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxFileSize)
	for n := 1; sc.Scan(); n++ {
		if strings.EqualFold(strings.TrimSpace(sc.Text()), "BEGIN:VEVENT") {
			lines = append(lines, n)
		}
	}
	var events []event
	for _, cal := range cals {
		for _, ev := range cal.Events() {
			events = append(events, event{Event: ev, uid: propValue(ev.Props, ical.PropUID), summary: text(ev.Props, ical.PropSummary)})
		}
	}
	if len(lines) == len(events) { // else a BEGIN:VEVENT the library did not read as one: no lines
		for i := range events {
			events[i].line = lines[i]
		}
	}
	return events
}

func propValue(props ical.Props, name string) string {
	if p := props.Get(name); p != nil {
		return strings.TrimSpace(p.Value)
	}
	return ""
}

// text is a TEXT property, unescaped. SUMMARY is one text: an unescaped comma, which some
// feeds write, is a comma.
func text(props ical.Props, name string) string {
	p := props.Get(name)
	if p == nil {
		return ""
	}
	l, err := p.TextList()
	if err != nil {
		return strings.TrimSpace(p.Value)
	}
	return strings.TrimSpace(strings.Join(l, ","))
}
