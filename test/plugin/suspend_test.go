package plugin_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/commands/kube"
	"github.com/almanac-dev/almanac/commands/next"
	"github.com/almanac-dev/almanac/commands/suspend"
)

// TestSuspendResume: suspend and resume set spec.suspend of each kind with a patch under the
// field manager kubectl-almanac and print what changed; an object that is so already is left
// alone; a user who may read but not patch is refused, told which RBAC to ask for, and nothing
// changes.
func TestSuspendResume(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t, "suspend")
	createObjects(t, ns)

	out, err := runSuspend(t, "", true, ns, "sj/report", "scheduledpodautoscaler/web", "schedule/peak", "eventjobs.batch.almanac.dev/after-report")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("almanac suspend:\n%s", out)
	for _, want := range []string{
		"scheduledjob.batch.almanac.dev/report suspended (spec.suspend: false → true): no Job starts",
		"scheduledpodautoscaler.autoscaling.almanac.dev/web suspended (spec.suspend: false → true): it is held at its baseline bounds",
		"schedule.autoscaling.almanac.dev/peak suspended (spec.suspend: false → true)",
		"eventjob.batch.almanac.dev/after-report suspended (spec.suspend: false → true)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	sj := &batchv1alpha1.ScheduledJob{}
	get := func(obj client.Object, name string) {
		t.Helper()
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
			t.Fatal(err)
		}
	}
	get(sj, "report")
	if !sj.Spec.Suspend {
		t.Error("ScheduledJob report: spec.suspend is false after suspend")
	}
	if !slices.ContainsFunc(sj.ManagedFields, func(e metav1.ManagedFieldsEntry) bool {
		return e.Manager == suspend.FieldManager && e.FieldsV1 != nil && strings.Contains(e.FieldsV1.GetRawString(), `"f:suspend"`)
	}) {
		t.Errorf("no managedFields entry of %s owns spec.suspend: %+v", suspend.FieldManager, sj.ManagedFields)
	}
	spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
	if get(spa, "web"); !spa.Spec.Suspend {
		t.Error("ScheduledPodAutoscaler web: spec.suspend is false after suspend")
	}
	s := &autoscalingv1alpha1.Schedule{}
	if get(s, "peak"); !s.Spec.Suspend {
		t.Error("Schedule peak: spec.suspend is false after suspend")
	}
	ej := &batchv1alpha1.EventJob{}
	if get(ej, "after-report"); !ej.Spec.Suspend {
		t.Error("EventJob after-report: spec.suspend is false after suspend")
	}

	out, err = runSuspend(t, "", true, ns, "scheduledjob/report")
	if err != nil || out != "scheduledjob.batch.almanac.dev/report unchanged (spec.suspend is true already)\n" {
		t.Errorf("suspend again: %v\n%s", err, out)
	}
	rv := sj.ResourceVersion
	if get(sj, "report"); sj.ResourceVersion != rv {
		t.Errorf("suspending a suspended ScheduledJob wrote it (resourceVersion %s → %s)", rv, sj.ResourceVersion)
	}

	out, err = runSuspend(t, "", false, ns, "sj/report")
	if err != nil || !strings.Contains(out, "scheduledjob.batch.almanac.dev/report resumed (spec.suspend: true → false)") {
		t.Errorf("resume: %v\n%s", err, out)
	}
	if get(sj, "report"); sj.Spec.Suspend {
		t.Error("ScheduledJob report: spec.suspend is true after resume")
	}
	// The ScheduledJob controller reads the instant of a resume from the write that set
	// suspend false: kubectl-almanac's merge patch writes false, and owns it.
	if _, ok := batchv1alpha1.ResumedAt(sj); !ok {
		t.Errorf("after resume nobody owns spec.suspend: the controller could not tell when it was resumed: %+v", sj.ManagedFields)
	}

	// A user who may read almanac's kinds but not patch them.
	env.Create(t,
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "almanac-reader"},
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{batchv1alpha1.GroupVersion.Group, autoscalingv1alpha1.GroupVersion.Group},
				Resources: []string{"scheduledjobs", "eventjobs", "scheduledpodautoscalers", "schedules"},
				Verbs:     []string{"get", "list", "watch"},
			}, {
				APIGroups: []string{"almanac.dev"},
				Resources: []string{"calendars"},
				Verbs:     []string{"get", "list", "watch"},
			}},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mallory-reads"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "almanac-reader"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "mallory"}},
		})
	kubeconfig, err := env.ImpersonatingKubeconfig(t.TempDir(), "mallory")
	if err != nil {
		t.Fatal(err)
	}
	_, err = runSuspend(t, kubeconfig, true, ns, "sj/report")
	wantExit(t, err, kube.ExitRefused, fmt.Sprintf("you may not patch scheduledjobs (scheduledjobs.batch.almanac.dev) in namespace %q, and suspend sets spec.suspend with a patch.", ns))
	wantExit(t, err, kube.ExitRefused, `User "mallory" cannot patch resource "scheduledjobs" in API group "batch.almanac.dev"`)
	wantExit(t, err, kube.ExitRefused, "Ask for a Role there that grants patch on scheduledjobs.batch.almanac.dev")
	t.Logf("as mallory: %v", err)
	if get(sj, "report"); sj.Spec.Suspend {
		t.Error("ScheduledJob report was suspended by a user who may not patch it")
	}
	// What mallory may do: read.
	if out, err := runNext(t, next.Options{Flags: kube.Flags{Kubeconfig: kubeconfig, Namespace: ns}}); err != nil || !strings.Contains(out, "sj/report") {
		t.Errorf("next as mallory: %v\n%s", err, out)
	}

	_, err = runSuspend(t, "", true, ns, "sj/missing")
	wantExit(t, err, kube.ExitRefused, fmt.Sprintf(`ScheduledJob "missing" not found in namespace %q`, ns))
	_, err = runSuspend(t, "", true, ns, "deployment/web")
	wantExit(t, err, kube.ExitUsage, `"deployment" is none of the kinds this command takes; give one of spa/NAME, schedule/NAME, sj/NAME, ej/NAME`)
	_, err = runSuspend(t, "", true, ns, "report")
	wantExit(t, err, kube.ExitUsage, "give KIND/NAME")
	_, err = runSuspend(t, "", false, ns)
	wantExit(t, err, kube.ExitUsage, "give the objects to resume")
}

// runSuspend runs `almanac suspend` (suspend true) or `almanac resume` with args in ns through
// env's kubeconfig (or kubeconfig).
func runSuspend(t *testing.T, kubeconfig string, suspended bool, ns string, args ...string) (string, error) {
	t.Helper()
	if kubeconfig == "" {
		kubeconfig = env.KubeconfigPath
	}
	var out bytes.Buffer
	err := suspend.Run(context.Background(), suspend.Options{Flags: kube.Flags{Kubeconfig: kubeconfig, Namespace: ns}}, suspended, args, &out)
	return out.String(), err
}
