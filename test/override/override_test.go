package override_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/commands/override"
)

// TestOverrideLifecycle: an override made by the command raises the autoscaler's bounds
// (above an ordinary Schedule open at the same time, about which admission warns), --list
// shows it with the time left, and once its window has ended the Schedule reconciler deletes
// it, records an event, and the bounds go back to the baseline; the ordinary Schedule that
// ended at the same instant stays, Completed.
func TestOverrideLifecycle(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	clk.set(time.Date(2030, time.June, 1, 11, 59, 45, 0, time.UTC))
	create(t, newAutoscaler(ns, "web", 2, 10, autoscalingv1alpha1.OverlapPolicyMax))
	create(t, oneShot(ns, "planned", "web", "2030-06-01T11:59", "2030-06-01T12:00", 3, 10))
	eventually(t, 10*time.Second, hasBounds(ns, "web", 3, 10))

	// 14:00 in Berlin (summer time) is 12:00 UTC: 15 seconds ahead.
	out, err := runCommand(ns, "", override.Options{Min: ptr.To[int32](5), Max: ptr.To[int32](20), Until: "2030-06-01T14:00", TimeZone: "Europe/Berlin"}, "spa/web")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("almanac override spa/web --min 5 --max 20 --until 2030-06-01T14:00 --time-zone Europe/Berlin:\n%s", out)
	name := "web-override-203006011159"
	for _, want := range []string{
		fmt.Sprintf("Created Schedule %s/%s, an override of ScheduledPodAutoscaler web:", ns, name),
		"  from   2030-06-01 13:59 Europe/Berlin (2030-06-01 11:59 UTC) (now, rounded down to the minute)",
		"  until  2030-06-01 14:00 Europe/Berlin (2030-06-01 12:00 UTC) (the window lasts 1m0s)",
		"  bounds minReplicas 5, maxReplicas 20",
		`Warning: spec: the windows overlap those of Schedule "planned" from`,
		fmt.Sprintf("almanac override --remove %s -n %s", name, ns),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	s := &autoscalingv1alpha1.Schedule{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
		t.Fatal(err)
	}
	if s.Labels[autoscalingv1alpha1.OverrideLabel] != "true" || s.Spec.Type != autoscalingv1alpha1.ScheduleTypeOneShot ||
		s.Spec.StartTime != "2030-06-01T13:59" || s.Spec.EndTime != "2030-06-01T14:00" || s.Spec.TimeZone != "Europe/Berlin" {
		t.Errorf("the stored Schedule: labels %v, spec %+v", s.Labels, s.Spec)
	}
	eventually(t, 10*time.Second, hasBounds(ns, "web", 5, 20))

	out, err = runCommand(ns, "", override.Options{List: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("almanac override --list:\n%s", out)
	for _, want := range []string{"NAME", "REMAINING", name + "  web         5    20   2030-06-01 13:59  2030-06-01 14:00  Europe/Berlin  2030-06-01 12:00", " left\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("--list lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "planned") {
		t.Errorf("--list shows a Schedule that is not an override:\n%s", out)
	}
	out, err = runCommand(ns, "", override.Options{List: true, AllNamespaces: true})
	if err != nil || !strings.Contains(out, ns+"  "+name) {
		t.Errorf("--list -A: %v\n%s", err, out)
	}

	// The window ends at 12:00 UTC: the reconciler deletes the override then.
	eventually(t, 40*time.Second, func() error {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &autoscalingv1alpha1.Schedule{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("the override is still there at %s (err: %w)", clk.Now().Format(time.RFC3339), err)
	})
	if now := clk.Now(); now.Before(time.Date(2030, time.June, 1, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("the override was deleted at %s, before its end", now)
	}
	eventually(t, 10*time.Second, hasBounds(ns, "web", 2, 10))
	eventually(t, 10*time.Second, func() error {
		events := &eventsv1.EventList{}
		if err := env.Client.List(ctx, events, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Reason == "OverrideEnded" && e.Regarding.Name == name && e.Regarding.UID == s.UID &&
				strings.Contains(e.Note, "its window ended at 2030-06-01 14:00 Europe/Berlin (2030-06-01 12:00 UTC)") {
				return nil
			}
		}
		return fmt.Errorf("no OverrideEnded event for %s among %d events", name, len(events.Items))
	})
	// The ordinary Schedule that ended at the same instant is not deleted: it completes.
	eventually(t, 10*time.Second, func() error {
		planned := &autoscalingv1alpha1.Schedule{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "planned"}, planned); err != nil {
			return err
		}
		if planned.Status.Phase != autoscalingv1alpha1.SchedulePhaseCompleted {
			return fmt.Errorf("Schedule planned has phase %q, want Completed", planned.Status.Phase)
		}
		return nil
	})
	out, err = runCommand(ns, "", override.Options{List: true})
	if err != nil || out != fmt.Sprintf("No overrides in namespace %q.\n", ns) {
		t.Errorf("--list after the end: %v\n%s", err, out)
	}
}

// TestRemoveAndDryRun: --dry-run stores nothing, --remove deletes an override before its end
// (and refuses to delete a Schedule that is not one), and an autoscaler that does not exist
// is refused before anything is created.
func TestRemoveAndDryRun(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	clk.set(time.Date(2030, time.June, 2, 9, 0, 10, 0, time.UTC))
	create(t, newAutoscaler(ns, "web", 2, 10, autoscalingv1alpha1.OverlapPolicyMax))
	create(t, oneShot(ns, "planned", "web", "2030-06-02T10:00", "2030-06-02T11:00", 3, 10))

	out, err := runCommand(ns, "", override.Options{Min: ptr.To[int32](4), For: time.Hour, TimeZone: "UTC", DryRun: true}, "web")
	if err != nil || !strings.Contains(out, fmt.Sprintf("Would create (server dry run: admitted, nothing stored) Schedule %s/web-override-203006020900", ns)) {
		t.Fatalf("--dry-run: %v\n%s", err, out)
	}
	overrides := func() int {
		list := &autoscalingv1alpha1.ScheduleList{}
		if err := env.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{autoscalingv1alpha1.OverrideLabel: "true"}); err != nil {
			t.Fatal(err)
		}
		return len(list.Items)
	}
	if n := overrides(); n != 0 {
		t.Fatalf("--dry-run stored %d overrides", n)
	}

	if _, err := runCommand(ns, "", override.Options{Min: ptr.To[int32](4), For: time.Hour, TimeZone: "UTC"}, "scheduledpodautoscaler/web"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, hasBounds(ns, "web", 4, 10))
	// A second one in the same minute gets a generated name.
	out, err = runCommand(ns, "", override.Options{Min: ptr.To[int32](6), For: time.Hour, TimeZone: "UTC"}, "scheduledpodautoscalers/web")
	if err != nil || !strings.Contains(out, fmt.Sprintf("Created Schedule %s/web-override-", ns)) {
		t.Fatalf("second override: %v\n%s", err, out)
	}
	if n := overrides(); n != 2 {
		t.Fatalf("%d overrides, want 2", n)
	}
	eventually(t, 10*time.Second, hasBounds(ns, "web", 6, 10))

	_, err = runCommand(ns, "", override.Options{Remove: "planned"})
	wantRefused(t, err, fmt.Sprintf("Schedule %s/planned is not an override (it has no label autoscaling.almanac.dev/override=true)", ns))
	out, err = runCommand(ns, "", override.Options{Remove: "schedule/web-override-203006020900"})
	if err != nil || !strings.Contains(out, fmt.Sprintf("Deleted Schedule %s/web-override-203006020900", ns)) {
		t.Fatalf("--remove: %v\n%s", err, out)
	}
	if n := overrides(); n != 1 {
		t.Fatalf("%d overrides after --remove, want 1", n)
	}
	_, err = runCommand(ns, "", override.Options{Remove: "web-override-203006020900"})
	wantRefused(t, err, fmt.Sprintf(`Schedule "web-override-203006020900" not found in namespace %q`, ns))

	_, err = runCommand(ns, "", override.Options{Min: ptr.To[int32](4), For: time.Hour, TimeZone: "UTC"}, "spa/missing")
	wantRefused(t, err, fmt.Sprintf(`ScheduledPodAutoscaler "missing" not found in namespace %q: an override changes an existing autoscaler`, ns))
}

// TestRefusedByAdmission: under overlapPolicy Forbid, an override that overlaps another
// Schedule is refused by the validating webhook, and the command prints why.
func TestRefusedByAdmission(t *testing.T) {
	ns := newNamespace(t)
	clk.set(time.Date(2030, time.June, 3, 9, 0, 10, 0, time.UTC))
	create(t, newAutoscaler(ns, "web", 2, 10, autoscalingv1alpha1.OverlapPolicyForbid))
	create(t, oneShot(ns, "planned", "web", "2030-06-03T09:30", "2030-06-03T11:00", 3, 10))
	_, err := runCommand(ns, "", override.Options{Min: ptr.To[int32](4), For: time.Hour, TimeZone: "UTC"}, "spa/web")
	wantRefused(t, err, fmt.Sprintf("Schedule \"web-override-203006030900\" was refused by admission webhook \"vschedule.autoscaling.almanac.dev\" in namespace %q:\n"+
		"  spec: Forbidden: the windows overlap those of Schedule \"planned\", and ScheduledPodAutoscaler \"web\" has overlapPolicy Forbid: both are active from 2030-06-03 09:30 to 10:01 UTC", ns))
	if strings.Count(err.Error(), "the windows overlap") != 1 {
		t.Errorf("the cause is printed more than once:\n%v", err)
	}
}

// TestRefusedWithoutCreate: a user who may read Schedules and autoscalers but not create
// Schedules (impersonated through the kubeconfig's context) is told which verb on which
// resource in which namespace is missing; reading still works (--list).
func TestRefusedWithoutCreate(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	clk.set(time.Date(2030, time.June, 4, 9, 0, 10, 0, time.UTC))
	create(t, newAutoscaler(ns, "web", 2, 10, autoscalingv1alpha1.OverlapPolicyMax))
	create(t,
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "almanac-reader"},
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{autoscalingv1alpha1.GroupVersion.Group},
				Resources: []string{"schedules", "scheduledpodautoscalers"},
				Verbs:     []string{"get", "list", "watch"},
			}},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mallory-reads"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "almanac-reader"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "mallory"}},
		})
	kubeconfig := impersonating(t, "mallory")

	_, err := runCommand(ns, kubeconfig, override.Options{Min: ptr.To[int32](4), For: time.Hour, TimeZone: "UTC"}, "spa/web")
	wantRefused(t, err, fmt.Sprintf(`you may not create Schedules (schedules.autoscaling.almanac.dev) in namespace %q, and an override is a Schedule. `, ns))
	wantRefused(t, err, `User "mallory" cannot create resource "schedules" in API group "autoscaling.almanac.dev"`)
	wantRefused(t, err, "Ask for a Role there that grants create on schedules.autoscaling.almanac.dev")
	t.Logf("as mallory: %v", err)
	list := &autoscalingv1alpha1.ScheduleList{}
	if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil || len(list.Items) != 0 {
		t.Errorf("Schedules in %s: %d (%v), want none", ns, len(list.Items), err)
	}
	out, err := runCommand(ns, kubeconfig, override.Options{List: true})
	if err != nil || !strings.Contains(out, "No overrides in namespace") {
		t.Errorf("--list as mallory: %v\n%s", err, out)
	}
	_, err = runCommand(ns, kubeconfig, override.Options{List: true, AllNamespaces: true})
	wantRefused(t, err, "you may not list Schedules (schedules.autoscaling.almanac.dev) in any namespace")
}

// runCommand runs `almanac override` with opts in ns, through env's kubeconfig (or
// kubeconfig) and on the manager's clock, and returns what it printed.
func runCommand(ns, kubeconfig string, opts override.Options, args ...string) (string, error) {
	if kubeconfig == "" {
		kubeconfig = env.KubeconfigPath
	}
	opts.Kubeconfig, opts.Namespace, opts.Clock = kubeconfig, ns, clk
	var out bytes.Buffer
	err := override.Run(context.Background(), opts, args, &out)
	return out.String(), err
}

// impersonating writes a kubeconfig that impersonates user (testenv's).
func impersonating(t *testing.T, user string) string {
	t.Helper()
	path, err := env.ImpersonatingKubeconfig(t.TempDir(), user)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func wantRefused(t *testing.T, err error, want string) {
	t.Helper()
	var e *override.Error
	if !errors.As(err, &e) || e.ExitCode() != override.ExitRefused || !strings.Contains(e.Msg, want) {
		t.Fatalf("got %v, want exit status %d and an error with %q", err, override.ExitRefused, want)
	}
}

func newNamespace(t *testing.T) string { return env.NewNamespace(t, "override") }

func create(t *testing.T, objs ...client.Object) { t.Helper(); env.Create(t, objs...) }

// eventually calls f until it returns nil, and fails the test with f's last error after
// timeout.
func eventually(t *testing.T, timeout time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %v", timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func newAutoscaler(ns, name string, minReplicas, maxReplicas int32, policy autoscalingv1alpha1.OverlapPolicy) *autoscalingv1alpha1.ScheduledPodAutoscaler {
	return &autoscalingv1alpha1.ScheduledPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: autoscalingv1alpha1.ScheduledPodAutoscalerSpec{
			OverlapPolicy: policy,
			HorizontalPodAutoscalerSpec: &autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
				MinReplicas:    ptr.To(minReplicas),
				MaxReplicas:    maxReplicas,
			},
		},
	}
}

// oneShot is an ordinary Schedule (no override label) of target over [start, end), UTC.
func oneShot(ns, name, target, start, end string, minReplicas, maxReplicas int32) *autoscalingv1alpha1.Schedule {
	return &autoscalingv1alpha1.Schedule{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: autoscalingv1alpha1.ScheduleSpec{
			ScaleTargetRef: autoscalingv1alpha1.ScaleTargetReference{Name: target},
			MinReplicas:    ptr.To(minReplicas),
			MaxReplicas:    ptr.To(maxReplicas),
			Type:           autoscalingv1alpha1.ScheduleTypeOneShot,
			StartTime:      start,
			EndTime:        end,
			TimeZone:       "UTC",
		},
	}
}

// hasBounds is a condition for eventually: the HorizontalPodAutoscaler of autoscaler name has
// these bounds.
func hasBounds(ns, name string, minReplicas, maxReplicas int32) func() error {
	return func() error {
		hpa := &autoscalingv2.HorizontalPodAutoscaler{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, hpa); err != nil {
			return err
		}
		if got := ptr.Deref(hpa.Spec.MinReplicas, 0); got != minReplicas || hpa.Spec.MaxReplicas != maxReplicas {
			return fmt.Errorf("HorizontalPodAutoscaler %s/%s has %d-%d, want %d-%d", ns, name, got, hpa.Spec.MaxReplicas, minReplicas, maxReplicas)
		}
		return nil
	}
}
