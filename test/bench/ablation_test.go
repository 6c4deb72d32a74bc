package bench_test

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// An ablation is one configuration of the manager: the parts of the ordering of an instant's
// writes (reconcilers/base.Lanes) that its hidden --lanes-off switches off ("lanes": all of
// it), or none.
type ablation struct {
	Name string // as the table names it
	Off  string // --lanes-off; "" for all on
}

var allOn = ablation{Name: "all on"}

// ablations are, per figure, the configurations that change what the figure runs: a part
// that no reconciler of the figure calls (the Job owners never defer a report; the
// autoscalers write no record and their events are not held) would measure the same code as
// all on, and is left out. The wait for the manager's watch to show the HPA writes
// ("landing") moved no goal figure beyond the spread and was removed (issue 23).
var ablations = map[string][]ablation{
	"boundary": {allOn, {"deferred reports off", "defer"}, {"no Lanes", "lanes"}},
	"trigger":  {allOn, {"records between off", "recording"}, {"held events off", "events"}, {"no Lanes", "lanes"}},
	"slot":     {allOn, {"records between off", "recording"}, {"held events off", "events"}, {"no Lanes", "lanes"}},
	// A cold start has no instant: Lanes orders nothing there. It runs all on only, for the
	// median of three of its goal figure.
	"scale": {allOn},
}

// ablationFigures are the figures the ablation runs, in that order: those that have an
// instant, and the scale figure all on (the admission and tenants figures go through the
// webhooks, not the reconcilers, and have goals of their own).
var ablationFigures = []string{"boundary", "trigger", "slot", "scale"}

// measure is one figure's goal figures from one run, by name.
type measure map[string]float64

// goalFigure is a figure the ablation compares; Goal ("≤ 1.5×") is its goal, if it has one.
type goalFigure struct {
	Name, Unit string
	Goal       string
}

// met reports whether v meets g's goal, "≤ X" with X a number or ⅓.
func (g goalFigure) met(v float64) bool {
	limit := strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(g.Goal, "≤ "), "×"), " ms"))
	if limit == "⅓" {
		return v <= 1.0/3
	}
	var x float64
	if _, err := fmt.Sscan(limit, &x); err != nil || math.IsNaN(v) {
		return false
	}
	return v <= x
}

var goalFigures = map[string][]goalFigure{
	"boundary": {
		{Name: "p99 ÷ raw p99", Unit: "×", Goal: "≤ 1.5×"},
		{Name: "requests per transition", Unit: "", Goal: "≤ 3"},
		{Name: "API server CPU ÷ raw", Unit: "×", Goal: "≤ 3×"},
	},
	"trigger": {
		{Name: "p99", Unit: " ms", Goal: "≤ 100 ms"},
		{Name: "API server CPU ÷ raw", Unit: "×"},
	},
	"slot": {
		{Name: "p50 ÷ CronJob's", Unit: "×", Goal: "≤ ⅓"},
		{Name: "p99 ÷ CronJob's", Unit: "×", Goal: "≤ ⅓"},
	},
	"scale": {
		{Name: "converged ÷ floor", Unit: "×", Goal: "≤ 1.5×"},
	},
}

// BenchmarkAblation measures what each part of the ordering of an instant's writes is worth:
// the figures in ALMANAC_BENCH_ABLATION (boundary,trigger,slot) at their default sizes, with
// each configuration of ablations, ALMANAC_BENCH_ABLATION_RUNS times (3), the configurations
// of a run one after the other so that a drift of the machine falls on all of them; each run
// of a configuration starts a manager of its own (--lanes-off). The table gets, per figure
// and configuration, the median and the spread (lowest to highest) of each goal figure, and
// says whether the part moves it: whether no run with the part off falls within the spread of
// the runs with all on. A part stays only if it moves a goal figure (issue 23).
func BenchmarkAblation(b *testing.B) {
	runs := size(b, "ALMANAC_BENCH_ABLATION_RUNS", 3)
	figures := ablationFigures
	if v := os.Getenv("ALMANAC_BENCH_ABLATION"); v != "" {
		figures = strings.Split(v, ",")
	}
	for range b.N {
		got := map[string]map[string][]measure{} // figure → configuration → runs
		for run := range runs {
			for _, fig := range figures {
				confs, ok := ablations[fig]
				if !ok {
					b.Fatalf("ALMANAC_BENCH_ABLATION: no figure %q (%v)", fig, ablationFigures)
				}
				for _, a := range confs {
					b.Run(fmt.Sprintf("%s/%s/%d", fig, strings.ReplaceAll(a.Name, " ", "-"), run+1), func(b *testing.B) {
						if got[fig] == nil {
							got[fig] = map[string][]measure{}
						}
						got[fig][a.Name] = append(got[fig][a.Name], runAblation(b, fig, a))
					})
				}
			}
		}
		for _, fig := range figures {
			reportAblation(fig, got[fig])
		}
	}
}

// runAblation runs figure fig once at its default size under a manager configured as a.
func runAblation(tb testing.TB, fig string, a ablation) measure {
	tb.Helper()
	if fig == "scale" { // it starts its manager cold, itself
		res := scale(tb, 1000, 10*time.Second, 10*time.Second)
		return measure{"converged ÷ floor": ratio(res.Converge, res.Floor)}
	}
	var extra []string
	if a.Off != "" {
		extra = append(extra, "--lanes-off="+a.Off)
	}
	m := startManager(tb, "ablation-"+fig, extra...)
	defer m.stop()
	switch fig {
	case "boundary":
		res := boundaryBurst(tb, m, 100, 5, false)
		return measure{
			"p99 ÷ raw p99":           ratio(res.Almanac.P99, res.Raw.P99),
			"requests per transition": res.perTransition(),
			"API server CPU ÷ raw":    ratio(res.CPUAlmanac["kube-apiserver"], res.CPURaw["kube-apiserver"]),
		}
	case "trigger":
		res := triggerBurst(tb, m, 20, 20)
		return measure{
			"p99":                  float64(res.Almanac.P99) / float64(time.Millisecond),
			"API server CPU ÷ raw": ratio(res.CPUAlmanac["kube-apiserver"], res.CPURaw["kube-apiserver"]),
		}
	case "slot":
		res := slotBurst(tb, m, 20, 2, true)
		return measure{
			"p50 ÷ CronJob's": ratio(res.Almanac.P50, res.CronJob.P50),
			"p99 ÷ CronJob's": ratio(res.Almanac.P99, res.CronJob.P99),
		}
	}
	tb.Fatalf("no figure %q", fig)
	return nil
}

// spread is the median and the range of a goal figure over the runs of a configuration.
type spread struct{ Median, Low, High float64 }

func spreadOf(runs []measure, name string) spread {
	var vs []float64
	for _, m := range runs {
		if v, ok := m[name]; ok && !math.IsNaN(v) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return spread{math.NaN(), math.NaN(), math.NaN()}
	}
	slices.Sort(vs)
	med := vs[len(vs)/2]
	if len(vs)%2 == 0 {
		med = (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
	}
	return spread{Median: med, Low: vs[0], High: vs[len(vs)-1]}
}

// moves reports whether off lies wholly outside on's range: every run of one above every run
// of the other. With one run each it compares the two values.
func (off spread) moves(on spread) bool {
	return off.Low > on.High || off.High < on.Low
}

func (s spread) format(unit string) string {
	f := func(v float64) string {
		switch {
		case math.IsNaN(v):
			return "n/a"
		case unit == "×":
			return times(v)
		case unit == " ms":
			return fmt.Sprintf("%.0f ms", v)
		default:
			return fmt.Sprintf("%.2f", v)
		}
	}
	return fmt.Sprintf("%s (%s to %s)", f(s.Median), f(s.Low), f(s.High))
}

// reportAblation adds a row per configuration of fig other than all on: its goal figures
// beside all on's, and whether switching the part off moved any of them beyond the spread.
func reportAblation(fig string, got map[string][]measure) {
	on := got[allOn.Name]
	runs := len(on)
	describe := func(ms []measure) string {
		var parts []string
		for _, g := range goalFigures[fig] {
			parts = append(parts, g.Name+" "+spreadOf(ms, g.Name).format(g.Unit))
		}
		return strings.Join(parts, "; ")
	}
	if runs > 0 {
		var goals []string
		met := true
		for _, g := range goalFigures[fig] {
			if g.Goal == "" {
				continue
			}
			goals = append(goals, g.Name+" "+g.Goal)
			met = met && g.met(spreadOf(on, g.Name).Median)
		}
		table.add(row{
			Figure:  fmt.Sprintf("ablation, %s, all on (median of %d, lowest to highest)", fig, runs),
			Almanac: describe(on),
			Goal:    strings.Join(goals, "; "),
			Met:     yes(met),
		})
	}
	for _, a := range ablations[fig] {
		if a == allOn || len(got[a.Name]) == 0 {
			continue
		}
		var moved []string
		for _, g := range goalFigures[fig] {
			off, base := spreadOf(got[a.Name], g.Name), spreadOf(on, g.Name)
			if off.moves(base) {
				dir := "worse"
				if off.Median < base.Median {
					dir = "better"
				}
				moved = append(moved, fmt.Sprintf("%s %s", g.Name, dir))
			}
		}
		verdict := "no: within the spread"
		if len(moved) > 0 {
			verdict = "yes: " + strings.Join(moved, ", ")
		}
		table.add(row{
			Figure:  fmt.Sprintf("ablation, %s, %s (median of %d, lowest to highest)", fig, a.Name, runs),
			Almanac: describe(got[a.Name]),
			Other:   "all on: " + describe(on),
			Ratio:   "",
			Goal:    "the part moves a goal figure beyond the spread",
			Met:     verdict,
		})
	}
}
