package bench_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSummarize(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, 0, len(v))
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	hundred := make([]int, 0, 100)
	for i := 100; i >= 1; i-- { // unsorted on purpose
		hundred = append(hundred, i)
	}
	for _, tc := range []struct {
		name string
		in   []time.Duration
		want dist
	}{
		{"none", nil, dist{}},
		{"one", ms(7), dist{N: 1, P50: 7 * time.Millisecond, P99: 7 * time.Millisecond, Max: 7 * time.Millisecond}},
		{"two: the median is the smaller", ms(9, 3), dist{N: 2, P50: 3 * time.Millisecond, P99: 9 * time.Millisecond, Max: 9 * time.Millisecond}},
		{"a hundred: p99 is the 99th", ms(hundred...), dist{N: 100, P50: 50 * time.Millisecond, P99: 99 * time.Millisecond, Max: 100 * time.Millisecond}},
		{"ten: p99 is the maximum", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), dist{N: 10, P50: 5 * time.Millisecond, P99: 10 * time.Millisecond, Max: 10 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]time.Duration(nil), tc.in...)
			if diff := cmp.Diff(tc.want, summarize(tc.in)); diff != "" {
				t.Errorf("summarize (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(in, tc.in); diff != "" {
				t.Errorf("summarize changed its input (-before +after):\n%s", diff)
			}
		})
	}
}

func TestFormats(t *testing.T) {
	got := []string{
		ms(850 * time.Microsecond), ms(12340 * time.Microsecond), ms(2500 * time.Millisecond), ms(42 * time.Second),
		times(0.314), times(12.34), times(ratio(time.Second, 0)),
		dist{}.String(), summarize([]time.Duration{time.Millisecond, 3 * time.Millisecond}).String(),
	}
	want := []string{
		"0.8 ms", "12 ms", "2500 ms", "42.0 s",
		"0.31×", "12.3×", "n/a",
		"no samples", "p50 1.0 ms, p99 3.0 ms, max 3.0 ms (n=2)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("formats (-want +got):\n%s", diff)
	}
}

func TestTables(t *testing.T) {
	r := &results{}
	r.add(row{Figure: "boundary burst", Almanac: "p99 9 ms", Other: "p99 8 ms", Ratio: "1.13×", Goal: "≤ 1.5×", Met: "yes"})
	r.add(row{Figure: "a|b", Almanac: "x", Other: "y", Ratio: "n/a", Goal: "z"})
	r.note("boundary burst", "CPU %d ms", 12)
	var text, md bytes.Buffer
	if err := r.text(&text); err != nil {
		t.Fatal(err)
	}
	if err := r.markdown(&md); err != nil {
		t.Fatal(err)
	}
	wantText := "figure          almanac   limit or peer  ratio  goal    met\n" +
		"boundary burst  p99 9 ms  p99 8 ms       1.13×  ≤ 1.5×  yes\n" +
		"a|b             x         y              n/a    z       \n" +
		"  boundary burst: CPU 12 ms\n"
	wantMarkdown := "| figure | almanac | limit or peer | ratio | goal | met |\n" +
		"| --- | --- | --- | --- | --- | --- |\n" +
		"| boundary burst | p99 9 ms | p99 8 ms | 1.13× | ≤ 1.5× | yes |\n" +
		"| a\\|b | x | y | n/a | z |  |\n" +
		"\n- boundary burst: CPU 12 ms\n"
	if diff := cmp.Diff(wantText, text.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantMarkdown, md.String()); diff != "" {
		t.Errorf("markdown (-want +got):\n%s", diff)
	}
}

// TestAblationVerdicts: a part moves a goal figure only when every run with it off lies
// outside the range of the runs with all on; the all-on row holds the medians against the
// goals.
func TestAblationVerdicts(t *testing.T) {
	saved := table
	t.Cleanup(func() { table = saved })
	table = &results{}
	runs := func(p99 ...float64) []measure {
		var ms []measure
		for _, v := range p99 {
			ms = append(ms, measure{"p99": v, "API server CPU ÷ raw": 2})
		}
		return ms
	}
	reportAblation("trigger", map[string][]measure{
		"all on":              runs(60, 90, 70),
		"records between off": runs(80, 120, 70),   // within the spread
		"held events off":     runs(100, 120, 110), // beyond it
		"no Lanes":            runs(40, 50, 45),    // better, beyond it
	})
	var got []string
	for _, r := range table.rows {
		got = append(got, r.Met)
	}
	want := []string{"yes", "no: within the spread", "yes: p99 worse", "yes: p99 better"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("verdicts (-want +got):\n%s", d)
	}
	if a := table.rows[0].Almanac; a != "p99 70 ms (60 ms to 90 ms); API server CPU ÷ raw 2.00× (2.00× to 2.00×)" {
		t.Errorf("all on: %q", a)
	}
	for _, g := range []struct {
		goal string
		v    float64
		met  bool
	}{{"≤ 1.5×", 1.5, true}, {"≤ 1.5×", 1.51, false}, {"≤ ⅓", 0.3, true}, {"≤ ⅓", 0.34, false}, {"≤ 100 ms", 99, true}, {"≤ 3", 3.02, false}} {
		if got := (goalFigure{Goal: g.goal}).met(g.v); got != g.met {
			t.Errorf("%v %s: %v, want %v", g.v, g.goal, got, g.met)
		}
	}
}
