package bench_test

import (
	"testing"
	"time"
)

// TestBenchHarnessSmoke runs every figure of `make bench` at a tiny size, so that the
// harness (the manager binary as the chart starts it, kube-controller-manager, the watches,
// the raw clients, the profiles, the table) keeps working; it takes a few tens of seconds.
// It checks that each figure measured what it should, never how fast: tests do not assert
// on speed.
func TestBenchHarnessSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the manager binary several times")
	}
	start := time.Now()
	lap := func(what string) {
		t.Logf("%s: %s", what, time.Since(start).Round(time.Millisecond))
		start = time.Now()
	}
	// The cold start first, while no other manager runs.
	sc := scale(t, 3, time.Second, time.Second)
	lap("scale")
	if sc.Converge <= 0 || sc.Floor <= 0 || sc.Peak <= 0 || sc.Writes != 3*(2+schedulesPerAutoscaler) {
		t.Errorf("scale: %+v", sc)
	}
	if sc.QuietWrites != 0 {
		t.Errorf("scale: %d writes while quiet, want 0", sc.QuietWrites)
	}

	m := startManager(t, "smoke")
	lap("manager")
	for c, w := range m.settings.Workers {
		if w <= 0 {
			t.Errorf("the manager reports %d workers for %s", w, c)
		}
	}
	bd := boundaryBurst(t, m, 2, 1, false)
	lap("boundary burst")
	if bd.Almanac.N != 2 || bd.Raw.N != 2 {
		t.Errorf("boundary burst: %d and %d samples, want 2 and 2", bd.Almanac.N, bd.Raw.N)
	}
	bd = boundaryBurst(t, m, 2, 1, true)
	lap("boundary burst, attached")
	if bd.Almanac.N != 2 || bd.Raw.N != 2 {
		t.Errorf("boundary burst, attached: %d and %d samples, want 2 and 2", bd.Almanac.N, bd.Raw.N)
	}
	sl := slotBurst(t, m, 2, 1, false)
	lap("slot burst")
	if sl.Almanac.N != 2 {
		t.Errorf("slot burst: %d samples, want 2", sl.Almanac.N)
	}
	if kcm := startKCM(t, "smoke"); kcm != nil {
		kcm.stop()
	}
	lap("kube-controller-manager")
	tr := triggerBurst(t, m, 2, 1)
	lap("trigger burst")
	if tr.Almanac.N != 2 || tr.Raw.N != 2 {
		t.Errorf("trigger burst: %d and %d samples, want 2 and 2", tr.Almanac.N, tr.Raw.N)
	}
	ad := admission(t, m, 5)
	lap("admission")
	if ad.With.N != 5 || ad.Without.N != 5 {
		t.Errorf("admission: %d and %d samples, want 5 and 5", ad.With.N, ad.Without.N)
	}
	m.stop() // the tenants figure starts managers of its own
	tn := tenants(t, 3, 0)
	lap("tenants")
	for key, d := range tn.Admission {
		if d.N != 3 {
			t.Errorf("tenants: %d creates for %s, want 3", d.N, key)
		}
	}
	if len(tn.Admission) != 6 || len(tn.CPU) != 4 {
		t.Errorf("tenants: %d admission and %d CPU figures, want 6 and 4", len(tn.Admission), len(tn.CPU))
	}

	wc := writeCost(t, 3, 1)
	lap("write cost")
	// The CPU of 3 writes can read as 0 (the kernel counts CPU time in ticks of 10 ms).
	if wc.N != 3 || len(wc.Ratios) != 1 {
		t.Errorf("write cost: %+v", wc)
	}

	// The table holds rows per figure; the smoke's rows are not printed.
	for _, r := range []interface{ report() }{sc, bd, sl, tr, ad, tn, wc} {
		r.report()
	}
	if got := len(table.rows); got != 13 {
		t.Errorf("%d rows in the table, want 13", got)
	}
	table.rows, table.notes = nil, nil
}
