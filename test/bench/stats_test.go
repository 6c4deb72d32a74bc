package bench_test

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// dist summarizes latencies: how many, the median, the 99th percentile and the maximum.
type dist struct {
	N             int
	P50, P99, Max time.Duration
}

// summarize returns the nearest-rank percentiles of ds: the p-th percentile is the smallest
// sample that at least p percent of the samples do not exceed (with 100 samples, p99 is the
// 99th smallest). ds is not modified.
func summarize(ds []time.Duration) dist {
	if len(ds) == 0 {
		return dist{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := func(p float64) time.Duration {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return dist{N: len(s), P50: rank(0.50), P99: rank(0.99), Max: s[len(s)-1]}
}

func (d dist) String() string {
	if d.N == 0 {
		return "no samples"
	}
	return fmt.Sprintf("p50 %s, p99 %s, max %s (n=%d)", ms(d.P50), ms(d.P99), ms(d.Max), d.N)
}

// ms prints a latency in milliseconds with a precision that suits its size.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v < 10:
		return fmt.Sprintf("%.1f ms", v)
	case v < 10000:
		return fmt.Sprintf("%.0f ms", v)
	default:
		return fmt.Sprintf("%.1f s", v/1000)
	}
}

// times is a ratio as a user reads it: "0.31×".
func times(r float64) string {
	switch {
	case math.IsNaN(r) || math.IsInf(r, 0):
		return "n/a"
	case r < 10:
		return fmt.Sprintf("%.2f×", r)
	default:
		return fmt.Sprintf("%.1f×", r)
	}
}

// ratio is a / b, NaN when b is zero.
func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// row is one figure of the table that `make bench` prints.
type row struct {
	// Figure names what was measured, with its size.
	Figure string
	// Almanac is almanac's result; Other the limit or the peer measured in the same run.
	Almanac, Other string
	// Ratio compares the two, Goal states the goal, and Met says whether this run
	// reached it ("yes", "no", or "" when the run could not tell).
	Ratio, Goal, Met string
}

// note is a line under the table: where the time went (CPU per process) and where the
// profiles are.
type note struct {
	Figure, Text string
}

// results collects the rows of the benchmarks that ran, in the order they ran.
type results struct {
	mu    sync.Mutex
	rows  []row
	notes []note
}

func (r *results) add(x row) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows = append(r.rows, x)
}

func (r *results) note(figure, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, note{Figure: figure, Text: fmt.Sprintf(format, args...)})
}

func (r *results) empty() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.rows) == 0
}

var tableHeader = []string{"figure", "almanac", "limit or peer", "ratio", "goal", "met"}

func (x row) cells() []string {
	return []string{x.Figure, x.Almanac, x.Other, x.Ratio, x.Goal, x.Met}
}

// text writes the table with aligned columns, then the notes.
func (r *results) text(w io.Writer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(tableHeader, "\t"))
	for _, x := range r.rows {
		fmt.Fprintln(tw, strings.Join(x.cells(), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range r.notes {
		if _, err := fmt.Fprintf(w, "  %s: %s\n", n.Figure, n.Text); err != nil {
			return err
		}
	}
	return nil
}

// markdown writes the table as Markdown (for docs/performance.md), then the notes as a list.
func (r *results) markdown(w io.Writer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + cell(c) + " |")
		}
		b.WriteString("\n")
	}
	line(tableHeader)
	sep := make([]string, len(tableHeader))
	for i := range sep {
		sep[i] = "---"
	}
	line(sep)
	for _, x := range r.rows {
		line(x.cells())
	}
	if len(r.notes) > 0 {
		b.WriteString("\n")
	}
	for _, n := range r.notes {
		fmt.Fprintf(&b, "- %s: %s\n", n.Figure, n.Text)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// yes is "yes" or "no".
func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}
