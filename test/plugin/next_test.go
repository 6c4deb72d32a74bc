package plugin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/commands/kube"
	"github.com/almanac-dev/almanac/commands/next"
)

// now is the instant the tests of next ask about: Monday 2030-12-23, 10:30 in Berlin.
var now = time.Date(2030, time.December, 23, 9, 30, 0, 0, time.UTC)

// TestNext: what `almanac next -n NS` says of autoscalers and Job owners in each state, in the
// table and in JSON.
func TestNext(t *testing.T) {
	ns := env.NewNamespace(t, "next")
	createObjects(t, ns)
	// envtest runs no Job controller and this test no reconciler: the running Job of busy is
	// what its status says.
	busy := &batchv1alpha1.ScheduledJob{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "busy"}, busy); err != nil {
		t.Fatal(err)
	}
	busy.Status.Active = []corev1.ObjectReference{{APIVersion: "batch/v1", Kind: "Job", Namespace: ns, Name: "busy-28930000"}}
	if err := env.Client.Status().Update(context.Background(), busy); err != nil {
		t.Fatal(err)
	}

	out, err := runNext(t, next.Options{Flags: kube.Flags{Namespace: ns}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("almanac next -n %s:\n%s", ns, out)
	rows := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		rows[strings.Fields(line)[0]] = line
	}
	if !strings.HasPrefix(out, "NAME ") || !strings.Contains(strings.SplitN(out, "\n", 2)[0], "NEXT") || !strings.Contains(out, "REASON") {
		t.Errorf("the header is not NAME NEXT ... REASON:\n%s", out)
	}
	for name, want := range map[string][]string{
		"spa/web":    {"2030-12-23 12:00", "Europe/Berlin", "in 90m", "2-10 → 5-20", "Schedule peak opens (window 2030-12-23 12:00 to 14:00 Europe/Berlin"},
		"spa/paused": {"suspended (spec.suspend): held at its baseline 1-3"},
		"spa/held":   {"Schedule held-night is held by Calendar nope, which does not exist"},
		"spa/xmas": {"2030-12-25 09:00", "2-10 → 4-10", "Schedule xmas-morning opens",
			"Schedule xmas-morning: skipped 2030-12-24 09:00 to 10:00 Europe/Berlin (2030-12-24 08:00 to 09:00 UTC) by Christmas Eve (Calendar holidays)"},
		"sj/report": {"2030-12-25 09:00", "Europe/Berlin", "in 46h", "run",
			"skipped 2030-12-24 09:00 Europe/Berlin (2030-12-24 08:00 UTC) by Christmas Eve (Calendar holidays)"},
		"sj/paused-job": {"suspended (spec.suspend)"},
		"sj/held-job":   {"held by Calendar nope, which does not exist"},
		"sj/busy":       {"2030-12-23 10:00", "UTC", "in 30m", "concurrencyPolicy Forbid: a Job runs (busy-28930000); the slot is skipped if it still runs then"},
		"ej/after-report": {"waits until a Job of ScheduledJob report completes",
			"ScheduledJob report runs next at 2030-12-25 09:00 Europe/Berlin (2030-12-25 08:00 UTC) (in 46h)"},
	} {
		row, ok := rows[name]
		if !ok {
			t.Errorf("no row for %s", name)
			continue
		}
		for _, w := range want {
			if !strings.Contains(row, w) {
				t.Errorf("the row of %s lacks %q:\n%s", name, w, row)
			}
		}
	}
	if strings.Contains(rows["spa/held"], "skipped") {
		t.Errorf("spa/held lists the windows that the missing calendar holds, besides saying it is held:\n%s", rows["spa/held"])
	}
	for _, name := range []string{"spa/paused", "spa/held", "sj/paused-job", "sj/held-job", "ej/after-report"} {
		if f := strings.Fields(rows[name]); len(f) < 2 || f[1] != "-" {
			t.Errorf("%s has a next time, want none:\n%s", name, rows[name])
		}
	}

	out, err = runNext(t, next.Options{Flags: kube.Flags{Namespace: ns}, Output: "json"})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Now   string `json:"now"`
		Items []struct {
			Kind, Name, Next, NextLocal, TimeZone, In string
			From, To                                  *struct{ MinReplicas, MaxReplicas int32 }
			Opens                                     []string
			Reasons                                   []string
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out)
	}
	if doc.Now != "2030-12-23T09:30:00Z" || len(doc.Items) != 9 {
		t.Fatalf("-o json: now %s, %d items, want 2030-12-23T09:30:00Z and 9:\n%s", doc.Now, len(doc.Items), out)
	}
	web := doc.Items[0]
	if web.Kind != "ScheduledPodAutoscaler" || web.Name != "held" {
		t.Errorf("the first item is %s %s, want the autoscalers first, by name", web.Kind, web.Name)
	}
	for _, it := range doc.Items {
		if it.Name != "web" {
			continue
		}
		if it.Next != "2030-12-23T11:00:00Z" || it.NextLocal != "2030-12-23T12:00:00+01:00" || it.TimeZone != "Europe/Berlin" || it.In != "90m" ||
			it.From == nil || it.To == nil || *it.From != (struct{ MinReplicas, MaxReplicas int32 }{2, 10}) || *it.To != (struct{ MinReplicas, MaxReplicas int32 }{5, 20}) ||
			len(it.Opens) != 1 || it.Opens[0] != "peak" {
			t.Errorf("-o json of web: %+v", it)
		}
	}

	out, err = runNext(t, next.Options{Flags: kube.Flags{Namespace: ns}, Output: "yaml"})
	if err != nil || !strings.Contains(out, "now: \"2030-12-23T09:30:00Z\"") || !strings.Contains(out, "nextLocal: \"2030-12-23T12:00:00+01:00\"") {
		t.Errorf("-o yaml: %v\n%s", err, out)
	}
	out, err = runNext(t, next.Options{AllNamespaces: true, Output: "wide"})
	if err != nil || !strings.HasPrefix(out, "NAMESPACE ") || !strings.Contains(out, ns+"  spa/web") || !strings.Contains(out, "2030-12-23T11:00:00Z") {
		t.Errorf("-A -o wide: %v\n%s", err, out)
	}
	_, err = runNext(t, next.Options{Flags: kube.Flags{Namespace: ns}, Output: "table"})
	wantExit(t, err, kube.ExitUsage, `-o "table" is not an output format`)
	out, err = runNext(t, next.Options{Flags: kube.Flags{Namespace: env.NewNamespace(t, "empty")}})
	if err != nil || !strings.HasPrefix(out, "No ScheduledPodAutoscalers, ScheduledJobs or EventJobs in namespace") {
		t.Errorf("an empty namespace: %v\n%s", err, out)
	}
}

// runNext runs `almanac next` with opts through env's kubeconfig at now.
func runNext(t *testing.T, opts next.Options) (string, error) {
	t.Helper()
	if opts.Kubeconfig == "" {
		opts.Kubeconfig = env.KubeconfigPath
	}
	opts.Clock = clocktesting.NewFakePassiveClock(now)
	var out bytes.Buffer
	err := next.Run(context.Background(), opts, &out)
	return out.String(), err
}

func wantExit(t *testing.T, err error, code int, want string) {
	t.Helper()
	var e *kube.Error
	if !errors.As(err, &e) || e.ExitCode() != code || !strings.Contains(e.Msg, want) {
		t.Fatalf("got %v, want exit status %d and an error with %q", err, code, want)
	}
}

// createObjects creates, in ns, the objects that TestNext and TestPreviewCluster read.
func createObjects(t *testing.T, ns string) {
	t.Helper()
	for _, o := range objects(ns) {
		env.Create(t, o)
	}
}

// objects are a calendar, autoscalers with their Schedules, ScheduledJobs and an EventJob in
// ns, in the order kubectl apply would create them.
func objects(ns string) []client.Object {
	holidays := &calendarv1alpha1.Calendars{Skip: []calendarv1alpha1.CalendarReference{{Name: "holidays"}}}
	nope := &calendarv1alpha1.Calendars{Skip: []calendarv1alpha1.CalendarReference{{Name: "nope"}}}
	return []client.Object{
		&calendarv1alpha1.Calendar{
			TypeMeta:   metav1.TypeMeta{APIVersion: calendarv1alpha1.GroupVersion.String(), Kind: "Calendar"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "holidays"},
			Spec:       calendarv1alpha1.CalendarSpec{TimeZone: "Europe/Berlin", Days: []calendarv1alpha1.CalendarDay{{Date: "2030-12-24", Name: "Christmas Eve"}}},
		},
		autoscaler(ns, "web", 2, 10, false),
		daily(ns, "peak", "web", "12:00", "14:00", 5, ptr.To[int32](20), nil),
		autoscaler(ns, "paused", 1, 3, true),
		autoscaler(ns, "held", 2, 10, false),
		daily(ns, "held-night", "held", "22:00", "23:00", 6, nil, nope),
		autoscaler(ns, "xmas", 2, 10, false),
		daily(ns, "xmas-morning", "xmas", "09:00", "10:00", 4, nil, holidays),
		scheduledJob(ns, "report", "0 9 * * *", "Europe/Berlin", func(s *batchv1alpha1.ScheduledJobSpec) { s.Calendars = holidays }),
		scheduledJob(ns, "paused-job", "0 9 * * *", "UTC", func(s *batchv1alpha1.ScheduledJobSpec) { s.Suspend = true }),
		scheduledJob(ns, "held-job", "0 9 * * *", "UTC", func(s *batchv1alpha1.ScheduledJobSpec) { s.Calendars = nope }),
		scheduledJob(ns, "busy", "0 * * * *", "UTC", func(s *batchv1alpha1.ScheduledJobSpec) {
			s.ConcurrencyPolicy = batchv1alpha1.ConcurrencyPolicyForbid
		}),
		&batchv1alpha1.EventJob{
			TypeMeta:   metav1.TypeMeta{APIVersion: batchv1alpha1.GroupVersion.String(), Kind: "EventJob"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "after-report"},
			Spec: batchv1alpha1.EventJobSpec{
				Trigger:   batchv1alpha1.Trigger{Kind: batchv1alpha1.TriggerKindScheduledJob, Name: "report"},
				JobPolicy: batchv1alpha1.JobPolicy{JobTemplate: jobTemplate()},
			},
		},
	}
}

func autoscaler(ns, name string, minReplicas, maxReplicas int32, suspended bool) *autoscalingv1alpha1.ScheduledPodAutoscaler {
	return &autoscalingv1alpha1.ScheduledPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: autoscalingv1alpha1.GroupVersion.String(), Kind: "ScheduledPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: autoscalingv1alpha1.ScheduledPodAutoscalerSpec{
			Suspend: suspended,
			HorizontalPodAutoscalerSpec: &autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
				MinReplicas:    ptr.To(minReplicas),
				MaxReplicas:    maxReplicas,
			},
		},
	}
}

// daily is a Schedule of target open every day from start to end in Berlin.
func daily(ns, name, target, start, end string, minReplicas int32, maxReplicas *int32, cals *calendarv1alpha1.Calendars) *autoscalingv1alpha1.Schedule {
	return &autoscalingv1alpha1.Schedule{
		TypeMeta:   metav1.TypeMeta{APIVersion: autoscalingv1alpha1.GroupVersion.String(), Kind: "Schedule"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: autoscalingv1alpha1.ScheduleSpec{
			ScaleTargetRef: autoscalingv1alpha1.ScaleTargetReference{Name: target},
			MinReplicas:    ptr.To(minReplicas),
			MaxReplicas:    maxReplicas,
			Type:           autoscalingv1alpha1.ScheduleTypeDaily,
			StartTime:      start,
			EndTime:        end,
			TimeZone:       "Europe/Berlin",
			Calendars:      cals,
		},
	}
}

func scheduledJob(ns, name, schedule, zone string, edit func(*batchv1alpha1.ScheduledJobSpec)) *batchv1alpha1.ScheduledJob {
	sj := &batchv1alpha1.ScheduledJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: batchv1alpha1.GroupVersion.String(), Kind: "ScheduledJob"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1alpha1.ScheduledJobSpec{
			Schedule:  schedule,
			TimeZone:  zone,
			JobPolicy: batchv1alpha1.JobPolicy{JobTemplate: jobTemplate()},
		},
	}
	edit(&sj.Spec)
	return sj
}

func jobTemplate() batchv1.JobTemplateSpec {
	return batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
	}}}}
}
