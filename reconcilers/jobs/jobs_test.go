package jobs

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

func job(name string, cond batchv1.JobConditionType, finished string) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if cond != "" {
		t, _ := time.Parse(time.RFC3339, finished)
		j.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue},
			{Type: cond, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t)},
		}
	}
	return j
}

func names(jobs []*batchv1.Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Name)
	}
	return out
}

func TestToPrune(t *testing.T) {
	all := []*batchv1.Job{
		job("ok-3", batchv1.JobComplete, "2027-01-01T00:03:00Z"),
		job("ok-1", batchv1.JobComplete, "2027-01-01T00:01:00Z"),
		job("running", "", ""),
		job("bad-1", batchv1.JobFailed, "2027-01-01T00:01:30Z"),
		job("ok-2", batchv1.JobComplete, "2027-01-01T00:02:00Z"),
		job("bad-2", batchv1.JobFailed, "2027-01-01T00:02:30Z"),
		job("ok-4", batchv1.JobComplete, "2027-01-01T00:04:00Z"),
	}
	tests := []struct {
		succeeded, failed int
		want              []string
	}{
		{succeeded: 3, failed: 1, want: []string{"ok-1", "bad-1"}},
		{succeeded: 0, failed: 0, want: []string{"ok-1", "ok-2", "ok-3", "ok-4", "bad-1", "bad-2"}},
		{succeeded: 10, failed: 10, want: nil},
		{succeeded: 1, failed: 2, want: []string{"ok-1", "ok-2", "ok-3"}},
	}
	for _, tt := range tests {
		in := append([]*batchv1.Job(nil), all...)
		if diff := cmp.Diff(tt.want, names(ToPrune(in, tt.succeeded, tt.failed))); diff != "" {
			t.Errorf("ToPrune(%d, %d) (-want +got):\n%s", tt.succeeded, tt.failed, diff)
		}
	}
}

func TestHistoryLimitDefaults(t *testing.T) {
	s, f := HistoryLimits(&batchv1alpha1.JobPolicy{})
	if s != 3 || f != 1 {
		t.Errorf("defaults %d, %d; want 3, 1", s, f)
	}
	zero := int32(0)
	s, f = HistoryLimits(&batchv1alpha1.JobPolicy{SuccessfulJobsHistoryLimit: &zero, FailedJobsHistoryLimit: &zero})
	if s != 0 || f != 0 {
		t.Errorf("explicit zero %d, %d", s, f)
	}
}

func TestOutcomeIgnoresEarlyConditions(t *testing.T) {
	j := &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue},
		{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue},
		{Type: batchv1.JobComplete, Status: corev1.ConditionFalse},
	}}}
	if o := OutcomeOf(j); o.Finished() {
		t.Errorf("outcome %+v of a Job whose Pods still run", o)
	}
}

func TestDecide(t *testing.T) {
	tests := []struct {
		policy batchv1alpha1.ConcurrencyPolicy
		active int
		want   Decision
	}{
		{"", 0, Start}, {"", 2, Start},
		{batchv1alpha1.ConcurrencyPolicyAllow, 1, Start},
		{batchv1alpha1.ConcurrencyPolicyForbid, 0, Start},
		{batchv1alpha1.ConcurrencyPolicyForbid, 1, Skip},
		{batchv1alpha1.ConcurrencyPolicyReplace, 0, Start},
		{batchv1alpha1.ConcurrencyPolicyReplace, 1, ReplaceAndStart},
	}
	for _, tt := range tests {
		if got := Decide(tt.policy, tt.active); got != tt.want {
			t.Errorf("Decide(%q, %d) = %v, want %v", tt.policy, tt.active, got, tt.want)
		}
	}
}

func TestNewJob(t *testing.T) {
	owner := &batchv1alpha1.EventJob{ObjectMeta: metav1.ObjectMeta{Name: "ej", Namespace: "ns", UID: "ej-uid"}}
	tmpl := &batchv1.JobTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x", batchv1alpha1.LabelEventJob: "spoof"},
			Annotations: map[string]string{"note": "n"}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"pod-note": "p", batchv1alpha1.AnnotationTriggerJob: "spoof"}},
			Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever}}},
	}
	j := NewJob(tmpl, Run{Name: "ej-abc", Namespace: "ns", Owner: owner,
		OwnerGVK:    batchv1alpha1.GroupVersion.WithKind("EventJob"),
		Labels:      map[string]string{batchv1alpha1.LabelEventJob: "ej", batchv1alpha1.LabelTriggerUID: "u"},
		Annotations: map[string]string{batchv1alpha1.AnnotationTriggerJob: "up"}})
	if diff := cmp.Diff(map[string]string{"app": "x", batchv1alpha1.LabelEventJob: "ej", batchv1alpha1.LabelTriggerUID: "u"}, j.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"note": "n", batchv1alpha1.AnnotationTriggerJob: "up"}, j.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	// The Pod template carries almanac's annotations too (the downward API reads them there),
	// over the template's own; the template itself is not changed.
	if diff := cmp.Diff(map[string]string{"pod-note": "p", batchv1alpha1.AnnotationTriggerJob: "up"}, j.Spec.Template.Annotations); diff != "" {
		t.Errorf("Pod template annotations (-want +got):\n%s", diff)
	}
	if tmpl.Spec.Template.Annotations[batchv1alpha1.AnnotationTriggerJob] != "spoof" {
		t.Error("NewJob changed the owner's template")
	}
	if !IsControlledBy(j, owner) || batchv1alpha1.ControllerKeyOf(j) != "batch.almanac.dev/EventJob/ej" {
		t.Errorf("controller %v, key %q", j.OwnerReferences, batchv1alpha1.ControllerKeyOf(j))
	}
	tmpl.Labels["app"] = "changed"
	if j.Labels["app"] != "x" {
		t.Error("the Job shares its labels with the template")
	}
}

// TestActiveStatusIsBounded: status.active never lists more than its MaxItems; the oldest
// running Jobs drop out first and are counted. Issue 11, finding 9: under Allow an
// every-minute ScheduledJob whose Pods cannot start passed 1024 active Jobs in about 17 hours,
// and from then on every status write was refused.
func TestActiveStatusIsBounded(t *testing.T) {
	base := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	var all []*batchv1.Job
	for i := range batchv1alpha1.MaxActive + 5 {
		j := job(fmt.Sprintf("sj-%08d", 29000000+i), "", "")
		j.CreationTimestamp = metav1.NewTime(base.Add(time.Duration(i) * time.Minute))
		all = append(all, j)
	}
	all = append(all, job("sj-finished", batchv1.JobComplete, "2027-01-01T00:00:00Z"))
	slices.Reverse(all) // the order of the input does not matter
	active, overflow := ActiveStatus(all)
	if len(active) != batchv1alpha1.MaxActive || overflow != 5 {
		t.Fatalf("%d listed, overflow %d; want %d and 5", len(active), overflow, batchv1alpha1.MaxActive)
	}
	if active[0].Name != "sj-29000005" || active[len(active)-1].Name != fmt.Sprintf("sj-%08d", 29000000+batchv1alpha1.MaxActive+4) {
		t.Errorf("listed %s … %s; want the newest, sorted by name", active[0].Name, active[len(active)-1].Name)
	}
	if active, overflow := ActiveStatus(all[:10]); len(active) != 9 || overflow != 0 {
		t.Errorf("under the bound: %d listed, overflow %d; want all 9 running and 0", len(active), overflow)
	}
}

// TestReleaserSendsOnePatchPerVersion: a second Release of the same version of a Job (a cache
// that has not caught up with the first) sends nothing; a newer version that still has the
// finalizer is patched again; a refused patch (the finalizers changed since the copy was read)
// is not an error: the watch brings the newer copy.
func TestReleaserSendsOnePatchPerVersion(t *testing.T) {
	var patches int
	refuse := false
	c := interceptor.NewClient(fake.NewClientBuilder().Build(), interceptor.Funcs{
		Patch: func(ctx context.Context, _ client.WithWatch, obj client.Object, patch client.Patch, _ ...client.PatchOption) error {
			patches++
			if refuse {
				return apierrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, obj.GetName(), nil)
			}
			return nil
		},
	})
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "run", UID: "uid-1", ResourceVersion: "10",
		Finalizers: []string{batchv1alpha1.FinalizerOutcome}}}
	var r Releaser
	for range 3 {
		if err := r.Release(context.Background(), c, job.DeepCopy()); err != nil {
			t.Fatal(err)
		}
	}
	if patches != 1 {
		t.Errorf("%d patches for one version, want 1", patches)
	}
	newer := job.DeepCopy()
	newer.ResourceVersion = "11"
	refuse = true
	if err := r.Release(context.Background(), c, newer); err != nil || patches != 2 {
		t.Errorf("a newer version with the finalizer: err %v, %d patches; want no error and a second patch", err, patches)
	}
	released := job.DeepCopy()
	released.Finalizers = nil
	if err := r.Release(context.Background(), c, released); err != nil || patches != 2 {
		t.Errorf("a copy without the finalizer: err %v, %d patches; want nothing sent", err, patches)
	}
}
