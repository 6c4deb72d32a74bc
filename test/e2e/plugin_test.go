//go:build e2e

package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// testKubectlPlugin: the almanac binary, on PATH as kubectl-almanac (as krew installs it), runs
// as `kubectl almanac ...`: its help says so, `next` lists a ScheduledJob and an autoscaler
// with their next times, `suspend` and `resume` set spec.suspend of the live ScheduledJob, and
// a user who may only view is refused the suspend and told which RBAC to ask for.
func testKubectlPlugin(t *testing.T) {
	ns := namespace(t, "e2e-plugin")
	bin := t.TempDir()
	if err := os.Symlink(almanacBin, filepath.Join(bin, "kubectl-almanac")); err != nil {
		t.Fatal(err)
	}
	plugin := func(args ...string) result {
		t.Helper()
		cmd := command("kubectl", append([]string{"almanac"}, args...)...)
		// The last PATH in the environment wins: kubectl finds the plugin there first.
		cmd.Env = append(cmd.Env, "PATH="+bin+":"+cluster.bin+":"+os.Getenv("PATH"))
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		r := result{stdout: out.String(), stderr: errOut.String()}
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			r.code = exit.ExitCode()
		case err != nil:
			t.Fatalf("kubectl almanac %s: %v", strings.Join(args, " "), err)
		}
		return r
	}
	if r := plugin("--help"); r.code != 0 || !strings.Contains(r.stdout, "kubectl almanac [command]") {
		t.Fatalf("kubectl almanac --help: want the usage of kubectl almanac, got %s", r)
	}
	mustApply(t, ns, `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: web}
spec:
  horizontalPodAutoscalerSpec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
    minReplicas: 1
    maxReplicas: 2
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: mornings}
spec:
  scaleTargetRef: {name: web}
  type: Daily
  startTime: "09:00"
  endTime: "10:00"
  timeZone: Europe/Berlin
  minReplicas: 2
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: report}
spec:
  schedule: "0 3 * * *"
  timeZone: Asia/Tokyo`+jobTemplate("echo report"))

	rows := func() map[string][]string {
		t.Helper()
		r := plugin("next", "-n", ns)
		if r.code != 0 {
			t.Fatalf("kubectl almanac next -n %s: %s", ns, r)
		}
		out := map[string][]string{}
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n")[1:] {
			f := strings.Fields(line)
			out[f[0]] = f
		}
		t.Logf("kubectl almanac next -n %s:\n%s", ns, r.stdout)
		return out
	}
	next := rows()
	for _, name := range []string{"spa/web", "sj/report"} {
		// NAME, NEXT (a date and a time in the object's zone), TIME ZONE, IN, ...
		if f := next[name]; len(f) < 6 || f[1] == "-" || f[4] != "in" {
			t.Errorf("kubectl almanac next: %s has no next time: %v", name, f)
		}
	}
	if f := next["sj/report"]; len(f) < 4 || f[3] != "Asia/Tokyo" {
		t.Errorf("kubectl almanac next: sj/report's next time is not in Asia/Tokyo: %v", f)
	}

	viewer := viewerKubeconfig(t, ns)
	if r := plugin("suspend", "sj/report", "-n", ns, "--kubeconfig", viewer); r.code != 1 || !strings.Contains(r.stderr, "you may not patch scheduledjobs (scheduledjobs.batch.almanac.dev)") {
		t.Errorf("kubectl almanac suspend as a user who may only view: want exit 1 and \"you may not patch scheduledjobs\", got %s", r)
	}
	if got := almanacField(t, ns, "scheduledjob", "report", ".spec.suspend"); got == "true" {
		t.Error("a viewer suspended ScheduledJob report")
	}
	if r := plugin("suspend", "sj/report", "-n", ns); r.code != 0 || !strings.Contains(r.stdout, "scheduledjob.batch.almanac.dev/report suspended") {
		t.Fatalf("kubectl almanac suspend sj/report: %s", r)
	}
	if got := almanacField(t, ns, "scheduledjob", "report", ".spec.suspend"); got != "true" {
		t.Errorf("after kubectl almanac suspend: spec.suspend %q, want true", got)
	}
	if f := rows()["sj/report"]; len(f) < 2 || f[1] != "-" || !strings.Contains(strings.Join(f, " "), "suspended") {
		t.Errorf("kubectl almanac next after suspend: sj/report %v, want no next time and \"suspended\"", f)
	}
	if r := plugin("resume", "scheduledjob/report", "-n", ns); r.code != 0 || !strings.Contains(r.stdout, "scheduledjob.batch.almanac.dev/report resumed") {
		t.Fatalf("kubectl almanac resume scheduledjob/report: %s", r)
	}
	if got := almanacField(t, ns, "scheduledjob", "report", ".spec.suspend"); got != "false" {
		t.Errorf("after kubectl almanac resume: spec.suspend %q, want false", got)
	}
	if got := almanacField(t, ns, "scheduledjob", "report", `.metadata.managedFields[?(@.manager=="kubectl-almanac")].operation`); got != "Update" {
		t.Errorf("managedFields of kubectl-almanac: operation %q, want Update (its merge patches)", got)
	}
	if r := plugin("preview", "--cluster", "-n", ns, "--for", "2d", "-o", "json"); r.code != 0 || !strings.Contains(r.stdout, `"name": "web"`) || !strings.Contains(r.stdout, `"name": "report"`) {
		t.Errorf("kubectl almanac preview --cluster -n %s: %s", ns, r)
	}
}
