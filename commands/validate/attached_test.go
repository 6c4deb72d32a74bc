package validate

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateAttachedExample: the example of autoscalers attached to what a team already
// runs (an HPA from a chart, a Deployment without an autoscaler) validates offline, with its
// Schedules, one of them with minReplicas 0 on the Deployment: exit 0, every almanac object
// admitted, no warning.
func TestValidateAttachedExample(t *testing.T) {
	file := filepath.Join("..", "..", "examples", "scheduledpodautoscaler-attached.yaml")
	stdout, stderr, code := runCommand(t, "", "-f", file, nowFlag)
	if code != ExitAdmitted {
		t.Fatalf("exit status %d, want %d\n%s%s", code, ExitAdmitted, stdout, stderr)
	}
	for _, want := range []string{
		"#2: ScheduledPodAutoscaler default/api: admitted\n",
		"#3: Schedule default/api-business-hours: admitted\n",
		"#5: ScheduledPodAutoscaler default/reports: admitted\n",
		"#6: Schedule default/reports-office-hours: admitted\n",
		"4 objects: 4 admitted, 0 rejected, 0 warnings; 3 skipped (not almanac kinds)\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the report has no %q:\n%s", want, stdout)
		}
	}
}

// TestValidateZeroReplicasOnAnHPA: a Schedule with minReplicas 0 is refused offline when its
// autoscaler generates a HorizontalPodAutoscaler (or is attached to one), which cannot scale to
// zero; on an autoscaler attached to a workload it is admitted (see the example above).
func TestValidateZeroReplicasOnAnHPA(t *testing.T) {
	zero := `---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: night, namespace: prod}
spec: {scaleTargetRef: {name: web}, minReplicas: 0, type: Daily, startTime: "22:00", endTime: "06:00", timeZone: Europe/Berlin}
`
	attachedHPA := `apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: web, namespace: prod}
spec: {targetRef: {apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, name: web}, minReplicas: 1, maxReplicas: 10}
`
	attachedDeployment := `apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: web, namespace: prod}
spec: {targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, minReplicas: 1}
`
	for _, tt := range []struct {
		name, input string
		want        int
	}{
		{"a generated HorizontalPodAutoscaler", spaYAML + zero, ExitRejected},
		{"an attached HorizontalPodAutoscaler", attachedHPA + zero, ExitRejected},
		{"an attached Deployment", attachedDeployment + zero, ExitAdmitted},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCommand(t, tt.input, "-f", "-", nowFlag)
			if code != tt.want {
				t.Fatalf("exit status %d, want %d\n%s%s", code, tt.want, stdout, stderr)
			}
			if tt.want == ExitRejected && !strings.Contains(stdout, "Schedule prod/night: rejected\n  error: spec.minReplicas: Invalid value: 0: ") {
				t.Errorf("the report does not refuse the Schedule's minReplicas:\n%s", stdout)
			}
		})
	}
}
