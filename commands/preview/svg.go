package preview

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
)

// Layout of the SVG, in pixels.
const (
	svgWidth    = 1200.0
	plotLeft    = 200.0 // room for the lane labels
	plotRight   = svgWidth - 30
	chartHeight = 220.0
	laneHeight  = 20.0
	panelGap    = 36.0
	charWidth   = 6.5 // approximate width of a character of the 11 px labels
)

var palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#e15759", "#76b7b2", "#edc948", "#9c755f", "#ff9da7", "#bab0ac"}

const (
	minColor = "#0b5394"
	maxColor = "#b71c1c"
)

// WriteSVG draws, per autoscaler, a step chart of minReplicas and maxReplicas over the range
// with each Schedule's windows shaded in its colour and labelled, a lane per Schedule below
// it, and a lane per ScheduledJob with a tick at each run. Times run left to right in UTC.
func WriteSVG(w io.Writer, r Report) error {
	var body bytes.Buffer
	y := 20.0
	s := &svg{b: &body, rng: r.Range}
	s.text(plotLeft, y+4, "start", 14, "bold", fmt.Sprintf("almanac preview, %s to %s (UTC)", r.Range.From.Format("2006-01-02 15:04"), r.Range.To.Format("2006-01-02 15:04")))
	y += 20
	for _, a := range r.Autoscalers {
		y = s.autoscaler(a, y+panelGap)
	}
	if len(r.Jobs) > 0 {
		y = s.jobs(r.Jobs, y+panelGap)
	}
	height := math.Ceil(y + 20)
	var out bytes.Buffer
	fmt.Fprintf(&out, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif">`+"\n", svgWidth, height, svgWidth, height)
	fmt.Fprintf(&out, `<rect width="100%%" height="100%%" fill="#ffffff"/>`+"\n")
	if anySkipped(r) {
		out.WriteString(skippedPattern)
	}
	out.Write(body.Bytes())
	out.WriteString("</svg>\n")
	_, err := w.Write(out.Bytes())
	return err
}

// skippedPattern is the grey hatching of what calendars close (spec.calendars).
const skippedPattern = `<defs><pattern id="skipped" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">` +
	`<rect width="6" height="6" fill="#e0e0e0"/><line x1="0" y1="0" x2="0" y2="6" stroke="#9e9e9e" stroke-width="2"/></pattern></defs>` + "\n"

// anySkipped reports whether calendars close anything in the report.
func anySkipped(r Report) bool {
	for _, a := range r.Autoscalers {
		if len(a.Skipped) > 0 {
			return true
		}
	}
	for _, j := range r.Jobs {
		if len(j.Skipped) > 0 {
			return true
		}
	}
	return false
}

// skippedTitle is the hover text of something calendars close: when, and why.
func skippedTitle(name string, start, end time.Time, reason string) string {
	when := start.UTC().Format("Mon 01-02 15:04")
	if end.After(start) {
		when += " – " + end.UTC().Format("Mon 01-02 15:04")
	}
	return escape(fmt.Sprintf("%s: skipped %s UTC: %s", name, when, reason))
}

type svg struct {
	b   *bytes.Buffer
	rng Range
}

// x maps an instant to its horizontal position, clipped to the plot.
func (s *svg) x(t time.Time) float64 {
	span := s.rng.To.Sub(s.rng.From).Seconds()
	f := t.Sub(s.rng.From).Seconds() / span
	return plotLeft + math.Max(0, math.Min(1, f))*(plotRight-plotLeft)
}

func (s *svg) printf(format string, args ...any) { fmt.Fprintf(s.b, format, args...) }

func (s *svg) text(x, y float64, anchor string, size int, weight, content string) {
	s.printf(`<text x="%.1f" y="%.1f" text-anchor="%s" font-size="%d"`, x, y, anchor, size)
	if weight != "" {
		s.printf(` font-weight="%s"`, weight)
	}
	s.printf(">%s</text>\n", escape(content))
}

func escape(v string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(v))
	return b.String()
}

// autoscaler draws one autoscaler's panel with its top at y and returns its bottom.
func (s *svg) autoscaler(a Autoscaler, y float64) float64 {
	title := fmt.Sprintf("ScheduledPodAutoscaler %s/%s — baseline %d–%d", a.Namespace, a.Name, a.Baseline.Min, a.Baseline.Max)
	if a.Target != nil {
		// The target and what it is given, on a line of its own under the title.
		title = fmt.Sprintf("ScheduledPodAutoscaler %s/%s", a.Namespace, a.Name)
	}
	if a.Suspended {
		title += " (suspended: Schedules are ignored)"
	}
	s.text(plotLeft, y, "start", 13, "bold", title)
	if a.Target != nil {
		y += 16
		s.text(plotLeft, y, "start", 11, "", strings.TrimPrefix(a.attachedText(), ", "))
	}
	top := y + 14
	bottom := top + chartHeight

	// A scale subresource is given only the minimum, as its replicas: the maximum is not
	// drawn, nothing enforces it.
	scale := a.scaleTarget()
	minName, maxName := "minReplicas", "maxReplicas"
	switch {
	case scale:
		minName = "replicas"
	case a.Target != nil && a.Target.TargetKind() == autoscalingv1alpha1.TargetScaledObject:
		minName, maxName = "minReplicaCount", "maxReplicaCount"
	}
	yMax := int32(1)
	for _, seg := range a.Segments {
		if scale {
			yMax = max(yMax, seg.Bounds.Min)
		} else {
			yMax = max(yMax, seg.Bounds.Max)
		}
	}
	step, limit := niceScale(yMax)
	yOf := func(v int32) float64 { return bottom - float64(v)/float64(limit)*chartHeight }

	s.printf(`<g class="autoscaler" id="%s">`+"\n", escape(a.Namespace+"/"+a.Name))
	s.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#fafafa" stroke="#cccccc"/>`+"\n", plotLeft, top, plotRight-plotLeft, chartHeight)

	// Windows, shaded and labelled.
	for i, sc := range a.Schedules {
		color := palette[i%len(palette)]
		for _, iv := range sc.Intervals {
			x0, x1 := s.x(iv.Start), s.x(iv.End)
			s.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.16"><title>%s</title></rect>`+"\n",
				x0, top, x1-x0, chartHeight, color, escape(fmt.Sprintf("%s: %s – %s UTC", sc.Name, iv.Start.UTC().Format("Mon 01-02 15:04"), iv.End.UTC().Format("Mon 01-02 15:04"))))
			if label := sc.Name; x1-x0 >= float64(len(label))*charWidth+6 {
				s.printf(`<text x="%.1f" y="%.1f" font-size="11" fill="%s">%s</text>`+"\n", x0+3, top+12+float64(i%4)*13, color, escape(label))
			}
		}
	}

	// Grid, axes and ticks.
	for v := int32(0); v <= limit; v += step {
		s.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e0e0e0"/>`+"\n", plotLeft, yOf(v), plotRight, yOf(v))
		s.text(plotLeft-6, yOf(v)+4, "end", 11, "", fmt.Sprint(v))
	}
	s.printf(`<text x="%.1f" y="%.1f" text-anchor="middle" font-size="11" transform="rotate(-90 %.1f %.1f)">replicas</text>`+"\n",
		plotLeft-34, top+chartHeight/2, plotLeft-34, top+chartHeight/2)
	s.timeAxis(top, bottom)
	s.clockChanges(zonesOf(a), top, bottom)

	// The bounds, as steps.
	if !scale {
		s.steps(a, yOf, func(seg int) int32 { return a.Segments[seg].Bounds.Max }, maxColor, "")
	}
	s.steps(a, yOf, func(seg int) int32 { return a.Segments[seg].Bounds.Min }, minColor, "")
	for _, seg := range a.Segments {
		x0, x1 := s.x(seg.Start), s.x(seg.End)
		if x1-x0 < 22 {
			continue
		}
		// An attached target's labels say, on hovering, what it is given.
		tip := ""
		if a.Target != nil {
			tip = "<title>" + escape(fmt.Sprintf("%s – %s UTC: %s gets %s", seg.Start.UTC().Format("Mon 01-02 15:04"), seg.End.UTC().Format("Mon 01-02 15:04"),
				a.Target.Name, a.getsText(seg.Bounds))) + "</title>"
		}
		if !scale {
			s.printf(`<text x="%.1f" y="%.1f" font-size="10" fill="%s">%s%d</text>`+"\n", x0+2, yOf(seg.Bounds.Max)-3, maxColor, tip, seg.Bounds.Max)
		}
		if scale || seg.Bounds.Min != seg.Bounds.Max {
			s.printf(`<text x="%.1f" y="%.1f" font-size="10" fill="%s">%s%d</text>`+"\n", x0+2, yOf(seg.Bounds.Min)+11, minColor, tip, seg.Bounds.Min)
		}
	}

	// Legend.
	ly := bottom + 34
	if !scale {
		s.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>`+"\n", plotLeft, ly-4, plotLeft+24, ly-4, maxColor)
		s.text(plotLeft+30, ly, "start", 11, "", maxName)
	}
	s.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>`+"\n", plotLeft+120, ly-4, plotLeft+144, ly-4, minColor)
	s.text(plotLeft+150, ly, "start", 11, "", minName)
	legend := "shaded: Schedule windows (lanes below); purple: clocks change"
	if len(a.Skipped) > 0 {
		legend += "; hatched grey: closed by calendars"
	}
	s.text(plotLeft+250, ly, "start", 11, "", legend)

	// One lane per Schedule.
	y = ly + 10
	for i, sc := range a.Schedules {
		color := palette[i%len(palette)]
		label := fmt.Sprintf("%s (%s/%s)", sc.Name, bound(sc.Min), bound(sc.Max))
		if scale {
			label = fmt.Sprintf("%s (%s)", sc.Name, bound(sc.Min))
		}
		if sc.Suspended {
			label = sc.Name + " (suspended)"
		}
		s.text(plotLeft-6, y+laneHeight/2+4, "end", 11, "", label)
		s.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#eeeeee"/>`+"\n", plotLeft, y+2, plotRight-plotLeft, laneHeight-4)
		for _, iv := range sc.Intervals {
			x0, x1 := s.x(iv.Start), s.x(iv.End)
			s.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.85"/>`+"\n", x0, y+3, math.Max(x1-x0, 1), laneHeight-6, color)
		}
		for _, sk := range a.Skipped {
			if sk.Schedule != sc.Name {
				continue
			}
			x0, x1 := s.x(sk.Start), s.x(sk.End)
			s.printf(`<rect class="skipped" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="url(#skipped)"><title>%s</title></rect>`+"\n",
				x0, y+3, math.Max(x1-x0, 1), laneHeight-6, skippedTitle(sc.Name, sk.Start, sk.End, sk.Reason))
		}
		y += laneHeight
	}
	s.printf("</g>\n")
	return y
}

// steps draws one bound as a step line over the segments.
func (s *svg) steps(a Autoscaler, yOf func(int32) float64, value func(int) int32, color, dash string) {
	if len(a.Segments) == 0 {
		return
	}
	var d strings.Builder
	fmt.Fprintf(&d, "M%.1f %.1f", s.x(a.Segments[0].Start), yOf(value(0)))
	for i, seg := range a.Segments {
		if i > 0 {
			fmt.Fprintf(&d, " V%.1f", yOf(value(i)))
		}
		fmt.Fprintf(&d, " H%.1f", s.x(seg.End))
	}
	s.printf(`<path d="%s" fill="none" stroke="%s" stroke-width="2"`, d.String(), color)
	if dash != "" {
		s.printf(` stroke-dasharray="%s"`, dash)
	}
	s.printf("/>\n")
}

// tickSteps are the spacings of time ticks, from the finest.
var tickSteps = []time.Duration{time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 48 * time.Hour, 7 * 24 * time.Hour, 28 * 24 * time.Hour}

// timeAxis draws vertical grid lines and labels at round UTC times.
func (s *svg) timeAxis(top, bottom float64) {
	span := s.rng.To.Sub(s.rng.From)
	step := tickSteps[len(tickSteps)-1]
	for _, st := range tickSteps {
		if span/st <= 14 {
			step = st
			break
		}
	}
	layout := "Mon 01-02"
	if step < 24*time.Hour {
		layout = "Mon 15:04"
	}
	t := s.rng.From.UTC().Truncate(step)
	if t.Before(s.rng.From) {
		t = t.Add(step)
	}
	for ; t.Before(s.rng.To); t = t.Add(step) {
		x := s.x(t)
		s.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#d0d0d0" stroke-dasharray="2 3"/>`+"\n", x, top, x, bottom)
		s.text(x, bottom+14, "middle", 11, "", t.Format(layout))
	}
	s.text(plotRight, bottom+14, "end", 11, "", "UTC")
}

// clockChanges marks the instants in the range at which a zone's offset changes (daylight
// saving time), where a Schedule's windows move against UTC.
func (s *svg) clockChanges(zones []*time.Location, top, bottom float64) {
	row := 0
	for _, loc := range zones {
		for _, c := range timing.ClockChanges(loc, s.rng.From, s.rng.To) {
			x := s.x(c.At)
			s.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#6a1b9a" stroke-dasharray="5 3"/>`+"\n", x, top, x, bottom)
			anchor, dx := "start", 3.0
			if x > plotRight-220 {
				anchor, dx = "end", -3
			}
			s.printf(`<text x="%.1f" y="%.1f" text-anchor="%s" font-size="10" fill="#6a1b9a">%s</text>`+"\n",
				x+dx, top+chartHeight*0.45+float64(row%3)*12, anchor, escape(fmt.Sprintf("clocks change in %s: %s→%s", loc, c.From, c.To)))
			row++
		}
	}
}

// jobs draws a lane per ScheduledJob with a tick at each run.
func (s *svg) jobs(jobs []Job, y float64) float64 {
	heading := "ScheduledJobs — one tick per run"
	for _, j := range jobs {
		if len(j.Skipped) > 0 {
			heading += "; dashed grey: a slot that calendars skip"
			break
		}
	}
	s.text(plotLeft, y, "start", 13, "bold", heading)
	y += 10
	top := y
	for _, j := range jobs {
		label := fmt.Sprintf("%s/%s (%d)", j.Namespace, j.Name, len(j.Runs))
		s.text(plotLeft-6, y+laneHeight/2+4, "end", 11, "", label)
		s.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#fafafa" stroke="#eeeeee"/>`+"\n", plotLeft, y+2, plotRight-plotLeft, laneHeight-4)
		for _, t := range j.Runs {
			x := s.x(t)
			s.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333333" stroke-width="1.5"><title>%s</title></line>`+"\n",
				x, y+3, x, y+laneHeight-3, escape(j.Name+": "+t.UTC().Format(time.RFC3339)))
		}
		for _, sk := range j.Skipped {
			x := s.x(sk.Start)
			s.printf(`<line class="skipped" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#9e9e9e" stroke-width="1.5" stroke-dasharray="2 2"><title>%s</title></line>`+"\n",
				x, y+3, x, y+laneHeight-3, skippedTitle(j.Name, sk.Start, sk.End, sk.Reason))
		}
		y += laneHeight
	}
	s.timeAxis(top, y)
	return y + 18
}

// niceScale returns a tick step and an axis limit above v, with at most about six ticks on
// round numbers.
func niceScale(v int32) (step, limit int32) {
	v += max(1, v/10) // headroom above the highest line
	for base := int32(1); ; base *= 10 {
		for _, m := range []int32{1, 2, 5} {
			if step = base * m; (v+step-1)/step <= 6 {
				return step, ((v + step - 1) / step) * step
			}
		}
	}
}
