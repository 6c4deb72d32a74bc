package next

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/yaml"

	"github.com/almanac-dev/almanac/api/timing"
	"github.com/almanac-dev/almanac/commands/kube"
)

// shortNames are the names the NAME column writes kinds with, as kubectl's short names.
var shortNames = map[string]string{
	kube.ScheduledPodAutoscalers.Kind: kube.ScheduledPodAutoscalers.Short,
	kube.ScheduledJobs.Kind:           kube.ScheduledJobs.Short,
	kube.EventJobs.Kind:               kube.EventJobs.Short,
}

// humanIn writes a duration ahead as kubectl writes ages: "45s", "3h", "2d4h".
func humanIn(d time.Duration) string { return duration.HumanDuration(d) }

// local writes t in zone, without the zone: "2027-12-27 09:00".
func local(t time.Time, zone timing.Zone) string {
	loc := zone.Location
	if loc == nil {
		loc = time.UTC
	}
	layout := "2006-01-02 15:04"
	if t.Second() != 0 {
		layout += ":05"
	}
	return t.In(loc).Format(layout)
}

func zoneName(z timing.Zone) string {
	if z.Name == "" {
		return timing.DefaultZone
	}
	return z.Name
}

// WriteTable writes entries as kubectl writes a table: NAMESPACE (with all), NAME, NEXT in the
// object's zone, TIME ZONE, IN (how far ahead), CHANGE and REASON; wide adds NEXT (UTC). With
// no entries it says so for where.
func WriteTable(out io.Writer, entries []Entry, now time.Time, all, wide bool, where string) {
	if len(entries) == 0 {
		_, _ = fmt.Fprintf(out, "No ScheduledPodAutoscalers, ScheduledJobs or EventJobs in %s.\n", where)
		return
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	cols := []string{"NAME", "NEXT", "TIME ZONE", "IN", "CHANGE"}
	if wide {
		cols = append(cols, "NEXT (UTC)")
	}
	cols = append(cols, "REASON")
	if all {
		cols = append([]string{"NAMESPACE"}, cols...)
	}
	_, _ = fmt.Fprintln(tw, strings.Join(cols, "\t"))
	for _, e := range entries {
		next, zone, in, utc := "-", "-", "-", "-"
		if !e.Next.IsZero() {
			next, zone, in, utc = local(e.Next, e.Zone), zoneName(e.Zone), "in "+humanIn(e.Next.Sub(now)), e.Next.UTC().Format(time.RFC3339)
		}
		row := []string{shortNames[e.Kind] + "/" + e.Name, next, zone, in, e.What}
		if wide {
			row = append(row, utc)
		}
		row = append(row, strings.Join(e.Reasons, "; "))
		if all {
			row = append([]string{e.Namespace}, row...)
		}
		_, _ = fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	_ = tw.Flush()
}

// The JSON and YAML form of the entries, as documented for `almanac next -o json`.
type (
	document struct {
		// Now is the instant the answers are for (UTC).
		Now   string     `json:"now"`
		Items []jsonItem `json:"items"`
	}
	jsonItem struct {
		Kind      string `json:"kind"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
		// Next (UTC, RFC 3339), NextLocal (in TimeZone, RFC 3339 with the offset) and In are
		// absent when nothing happens next.
		Next      string `json:"next,omitempty"`
		NextLocal string `json:"nextLocal,omitempty"`
		TimeZone  string `json:"timeZone,omitempty"`
		In        string `json:"in,omitempty"`
		// From and To are an autoscaler's bounds now and after next.
		From    *jsonBounds `json:"from,omitempty"`
		To      *jsonBounds `json:"to,omitempty"`
		Opens   []string    `json:"opens,omitempty"`
		Closes  []string    `json:"closes,omitempty"`
		Reasons []string    `json:"reasons"`
	}
	jsonBounds struct {
		MinReplicas int32 `json:"minReplicas"`
		MaxReplicas int32 `json:"maxReplicas"`
	}
)

func boundsOf(b *timing.Bounds) *jsonBounds {
	if b == nil {
		return nil
	}
	return &jsonBounds{MinReplicas: b.Min, MaxReplicas: b.Max}
}

// WriteData writes entries as JSON or YAML (format "json" or "yaml").
func WriteData(out io.Writer, format string, entries []Entry, now time.Time) error {
	doc := document{Now: now.UTC().Format(time.RFC3339), Items: []jsonItem{}}
	for _, e := range entries {
		it := jsonItem{Kind: e.Kind, Namespace: e.Namespace, Name: e.Name, From: boundsOf(e.From), To: boundsOf(e.To),
			Opens: e.Opens, Closes: e.Closes, Reasons: append([]string{}, e.Reasons...)}
		if !e.Next.IsZero() {
			loc := e.Zone.Location
			if loc == nil {
				loc = time.UTC
			}
			it.Next, it.NextLocal = e.Next.UTC().Format(time.RFC3339), e.Next.In(loc).Format(time.RFC3339)
			it.TimeZone, it.In = zoneName(e.Zone), humanIn(e.Next.Sub(now))
		}
		doc.Items = append(doc.Items, it)
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if format == "yaml" {
		if data, err = yaml.JSONToYAML(data); err != nil {
			return err
		}
		_, err = out.Write(data)
		return err
	}
	_, err = fmt.Fprintf(out, "%s\n", data)
	return err
}
