package timing

import (
	"testing"
	"time"
)

func TestLearnedLead(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name          string
		samples       []time.Duration
		fallback, max time.Duration
		want          time.Duration
		learned       bool
	}{
		{"no samples: the fixed lead", nil, 2 * time.Minute, time.Hour, 2 * time.Minute, false},
		{"no samples: the fixed lead, capped", nil, 2 * time.Hour, time.Hour, time.Hour, false},
		{"one sample: it and the least margin", []time.Duration{20 * s}, 0, time.Hour, 30 * s, true},
		{"a quarter margin above 40 s", []time.Duration{80 * s}, 0, time.Hour, 100 * s, true},
		// Ten samples: the 90th percentile is the 9th smallest; one outlier does not count.
		{"an outlier among ten", []time.Duration{10 * s, 11 * s, 12 * s, 10 * s, 11 * s, 12 * s, 10 * s, 11 * s, 12 * s, 600 * s}, 0, time.Hour, 22 * s, true},
		// Only the last ten count: the old slow ones age out (a workload that became faster).
		{"old slow samples age out", []time.Duration{300 * s, 300 * s, 10 * s, 10 * s, 10 * s, 10 * s, 10 * s, 10 * s, 10 * s, 10 * s, 10 * s, 10 * s}, 0, time.Hour, 20 * s, true},
		// A workload that became slower: two slow samples of the last ten are above the 90th
		// percentile's rank, so the lead follows them.
		{"a slower workload raises it", []time.Duration{10 * s, 10 * s, 10 * s, 10 * s, 10 * s, 10 * s, 10 * s, 10 * s, 60 * s, 60 * s}, 0, time.Hour, 75 * s, true},
		{"capped", []time.Duration{2 * time.Hour}, 0, time.Hour, time.Hour, true},
		{"negative samples count as zero", []time.Duration{-5 * s}, 0, time.Hour, MinLeadMargin, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, learned := LearnedLead(tc.samples, tc.fallback, tc.max)
			if got != tc.want || learned != tc.learned {
				t.Errorf("LearnedLead(%v, %v, %v) = %v, %v; want %v, %v", tc.samples, tc.fallback, tc.max, got, learned, tc.want, tc.learned)
			}
		})
	}
}
