package kube

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestParseRef(t *testing.T) {
	kinds := []Resource{ScheduledPodAutoscalers, Schedules, ScheduledJobs, EventJobs}
	for arg, want := range map[string]string{
		"sj/report":                              "scheduledjob.batch.almanac.dev/report",
		"scheduledjob/report":                    "scheduledjob.batch.almanac.dev/report",
		"ScheduledJobs/report":                   "scheduledjob.batch.almanac.dev/report",
		"scheduledjobs.batch.almanac.dev/report": "scheduledjob.batch.almanac.dev/report",
		"spa/web":                                "scheduledpodautoscaler.autoscaling.almanac.dev/web",
		"schedule/peak":                          "schedule.autoscaling.almanac.dev/peak",
		"schedules.autoscaling.almanac.dev/peak": "schedule.autoscaling.almanac.dev/peak",
		"ej/after":                               "eventjob.batch.almanac.dev/after",
	} {
		ref, err := ParseRef(arg, kinds...)
		if err != nil || ref.String() != want {
			t.Errorf("ParseRef(%q) = %v, %v; want %s", arg, ref, err, want)
		}
	}
	for arg, want := range map[string]string{
		"report":                 "give KIND/NAME, one of spa/NAME, schedule/NAME, sj/NAME, ej/NAME",
		"deployment/web":         `"deployment" is none of the kinds this command takes`,
		"sj/Report":              `"Report" is not the name of a ScheduledJob`,
		"sj/":                    `"" is not the name of a ScheduledJob`,
		"scheduledjob.batch/x":   "is none of the kinds",
		"spa/web/extra":          "is not the name of a ScheduledPodAutoscaler",
		"sched/peak":             "is none of the kinds",
		"eventjob.almanac.dev/x": "is none of the kinds",
	} {
		if _, err := ParseRef(arg, kinds...); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRef(%q): %v, want an error with %q", arg, err, want)
		}
	}
}

func TestIsPlugin(t *testing.T) {
	for argv0, want := range map[string]bool{
		"kubectl-almanac": true, "/usr/local/bin/kubectl-almanac": true, "kubectl-almanac.exe": true,
		"almanac": false, "/usr/bin/almanac": false, "kubectl-almanac-dev": false, "kubectl": false,
	} {
		if got := IsPlugin(argv0); got != want {
			t.Errorf("IsPlugin(%q) = %t, want %t", argv0, got, want)
		}
	}
}

// TestAsPlugin: the usage, help and examples of every command say `kubectl almanac`, and so do
// the messages (Command).
func TestAsPlugin(t *testing.T) {
	defer func(c string) { Command = c }(Command)
	root := &cobra.Command{Use: "almanac"}
	sub := &cobra.Command{Use: "next", Example: "  almanac next -n shop\n  # almanac is quiet\n  kustomize build . | almanac preview -f -", Run: func(*cobra.Command, []string) {}}
	root.AddCommand(sub)
	AsPlugin(root)
	if got := sub.CommandPath(); got != "kubectl almanac next" {
		t.Errorf("CommandPath = %q", got)
	}
	if want := "  kubectl almanac next -n shop\n  # almanac is quiet\n  kustomize build . | kubectl almanac preview -f -"; sub.Example != want {
		t.Errorf("Example = %q, want %q", sub.Example, want)
	}
	if !strings.Contains(sub.UsageString(), "kubectl almanac next") {
		t.Errorf("usage:\n%s", sub.UsageString())
	}
	if Command != "kubectl almanac" {
		t.Errorf("Command = %q", Command)
	}
}
