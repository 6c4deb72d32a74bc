package migrate_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/almanac-dev/almanac/api/timing"
)

// sample reads one of the replaced systems' samples in examples/migrate/ and migrates it.
func sample(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "migrate", file))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestSamples migrates each replaced system's sample (examples/migrate/, as its documentation
// gives it), checks that almanac validate admits the result, and that almanac preview shows
// the windows or runs that the original system produced.
func TestSamples(t *testing.T) {
	t.Run("scheduled-pod-autoscaler: 11:50-13:00 Tokyo time on Monday, Tuesday and Wednesday", func(t *testing.T) {
		docs := migrated(t, sample(t, "scheduled-pod-autoscaler.yaml"))
		from := d(2036, 8, 31, 15, 0) // Monday 2036-09-01 00:00 in Tokyo
		admitted(t, docs, from)
		report := previewed(t, docs, from, from.Add(7*24*time.Hour))
		base := timing.Bounds{Min: 3, Max: 10}
		push := timing.Bounds{Min: 10, Max: 20}
		var want []timing.Segment
		start := from
		for day := range 3 { // 11:50-13:00 JST is 02:50-04:00 UTC
			open := d(2036, 9, 1+day, 2, 50)
			want = append(want,
				timing.Segment{Start: start, End: open, Bounds: base},
				timing.Segment{Start: open, End: open.Add(70 * time.Minute), Bounds: push, Active: []string{"nginx-push-notification"}})
			start = open.Add(70 * time.Minute)
		}
		want = append(want, timing.Segment{Start: start, End: from.Add(7 * 24 * time.Hour), Bounds: base})
		if len(report.Autoscalers) != 1 {
			t.Fatalf("%d autoscalers previewed, want 1", len(report.Autoscalers))
		}
		if diff := cmp.Diff(want, report.Autoscalers[0].Segments); diff != "" {
			t.Errorf("bounds over the week (-scheduled-pod-autoscaler +almanac):\n%s", diff)
		}
	})

	t.Run("k8s-at: once, at 13:53:55 UTC on 2020-03-21", func(t *testing.T) {
		docs := migrated(t, sample(t, "k8s-at.yaml"))
		admitted(t, docs, d(2020, 3, 21, 13, 0))
		got := runs(t, docs, "at-sample", d(2020, 3, 20, 0, 0), d(2020, 3, 23, 0, 0))
		if !slices.Equal(got, []string{"2020-03-21T13:53:55Z"}) {
			t.Errorf("runs %v, want 2020-03-21T13:53:55Z", got)
		}
	})

	t.Run("the CronTab controller: @daily at 00:00 UTC", func(t *testing.T) {
		docs := migrated(t, sample(t, "crontab.yaml"))
		from := d(2027, 3, 27, 12, 0) // across Europe's and (a fortnight earlier) America's DST changes: UTC has none
		admitted(t, docs, from)
		got := runs(t, docs, "backup", from, from.Add(3*24*time.Hour))
		want := []string{"2027-03-28T00:00:00Z", "2027-03-29T00:00:00Z", "2027-03-30T00:00:00Z"}
		if !slices.Equal(got, want) {
			t.Errorf("runs %v, want %v", got, want)
		}
	})

	t.Run("the kubebuilder CronJob tutorial: every minute, UTC", func(t *testing.T) {
		docs := migrated(t, sample(t, "kubebuilder-cronjob.yaml"))
		from := d(2027, 3, 14, 6, 58)
		admitted(t, docs, from)
		got := runs(t, docs, "hello", from, from.Add(4*time.Minute))
		want := []string{"2027-03-14T06:58:00Z", "2027-03-14T06:59:00Z", "2027-03-14T07:00:00Z", "2027-03-14T07:01:00Z"}
		if !slices.Equal(got, want) {
			t.Errorf("runs %v, want %v", got, want)
		}
	})

	t.Run("kitagry/eventjob: after each completed Job of the CronJob hello", func(t *testing.T) {
		docs := migrated(t, sample(t, "kitagry-eventjob.yaml"))
		admitted(t, docs, d(2027, 3, 14, 0, 0))
		// An EventJob runs on events, not on a clock: preview has no runs for it. What it
		// follows is its trigger, and the CronJob passes through unchanged.
		kinds := []string{}
		for _, doc := range docs {
			kinds = append(kinds, doc.Object.GetAPIVersion()+" "+doc.Object.GetKind()+" "+doc.Object.GetName())
		}
		if diff := cmp.Diff([]string{"batch/v1 CronJob hello", "batch.almanac.dev/v1alpha1 EventJob eventjob-sample"}, kinds); diff != "" {
			t.Fatalf("objects (-want +got):\n%s", diff)
		}
		trigger, _, _ := unstructured.NestedStringMap(docs[1].Object.Object, "spec", "trigger")
		if diff := cmp.Diff(map[string]string{"apiVersion": "batch/v1", "kind": "CronJob", "name": "hello", "type": "Complete"}, trigger); diff != "" {
			t.Errorf("trigger (-kitagry +almanac):\n%s", diff)
		}
		schedule, _, _ := unstructured.NestedString(docs[0].Object.Object, "spec", "schedule")
		if schedule != "*/1 * * * *" {
			t.Errorf("the CronJob's schedule changed to %q", schedule)
		}
	})
}
