package sleep_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
	releasecmd "github.com/almanac-dev/almanac/commands/release"
)

// TestReleaseWakesWhatSleeps is what uninstalling almanac does to what it put to sleep (the
// chart's pre-delete hook runs almanac release once the manager is stopped): every workload
// wakes at once to exactly what its record says, owned by no almanac field manager, and the
// Sleep loses its finalizer, so that it and its namespace can go. almanac's own ScheduledJobs
// and EventJobs are left suspended with their record, and the command says so: its webhooks,
// which admit every change of them, are gone with the manager, and without almanac they start
// no Job anyway (docs/sleep.md).
func TestReleaseWakesWhatSleeps(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, nil)
	z := newZoo(t, ns)
	before := z.state(t)
	nights := newSleep(ns, "nights", sleepv1alpha1.SleepSpec{Asleep: []sleepv1alpha1.Window{window(monday, monday.Add(time.Hour))}})
	create(t, nights)
	s := startSleeper(t, newOffsetClock(monday.Add(time.Minute)), sleeperOpts{}, ns)
	eventually(t, 10*time.Second, func() error {
		if len(z.records(t)) != 12 {
			return fmt.Errorf("%d workloads asleep", len(z.records(t)))
		}
		return nil
	})
	s.stop() // as the hook stops the manager

	var out bytes.Buffer
	if err := releasecmd.Run(bg, releasecmd.Options{Kubeconfig: env.KubeconfigPath, Namespaces: []string{ns}, Timeout: time.Minute}, &out); err != nil {
		t.Fatalf("almanac release: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "Woke 10 workloads") || !strings.Contains(out.String(), "Left 2 ScheduledJobs and EventJobs") {
		t.Errorf("almanac release said:\n%s", out.String())
	}
	after := z.state(t)
	want := map[string]string{}
	for k, v := range before {
		want[k] = v
	}
	want["ScheduledJob/nightly"], want["EventJob/follow"] = "true", "true"
	if d := diffStates(want, after); d != "[]" {
		t.Errorf("after almanac release: %s", d)
	}
	if got := z.records(t); len(got) != 2 || got["ScheduledJob/nightly"] == "" || got["EventJob/follow"] == "" {
		t.Errorf("records left: %v, want only the ScheduledJob's and the EventJob's", got)
	}
	for _, key := range []string{"Deployment/web", "StatefulSet/db", "CronJob/report", "ScaledObject/queue"} {
		kind, name, _ := cut(key)
		if e := almanacEntries(get(t, kinds[kind], ns, name)); len(e) > 0 {
			t.Errorf("%s: almanac still owns fields: %v", key, e)
		}
	}
	got := &sleepv1alpha1.Sleep{}
	if err := env.Client.Get(bg, types.NamespacedName{Namespace: ns, Name: "nights"}, got); err != nil || len(got.Finalizers) != 0 {
		t.Errorf("the Sleep after almanac release: %v, finalizers %v", err, got.Finalizers)
	}
	// Again: nothing more to do.
	out.Reset()
	if err := releasecmd.Run(bg, releasecmd.Options{Kubeconfig: env.KubeconfigPath, Namespaces: []string{ns}, Timeout: time.Minute}, &out); err != nil || !strings.Contains(out.String(), "Woke 0 workloads") {
		t.Errorf("almanac release again: %v\n%s", err, out.String())
	}
}
