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
