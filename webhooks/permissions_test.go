package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	apiadmission "github.com/almanac-dev/almanac/api/admission"
	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/api/index"
	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
	"github.com/almanac-dev/almanac/test/testenv"
)

// TestDelegatedActions is the rule for when the permission check runs: on create, and on
// update only when the content almanac acts on changed.
func TestDelegatedActions(t *testing.T) {
	withContainer := func(sj *batchv1alpha1.ScheduledJob, c corev1.Container) *batchv1alpha1.ScheduledJob {
		sj.Spec.JobTemplate.Spec.Template.Spec.Containers = []corev1.Container{c}
		return sj
	}
	sj := func() *batchv1alpha1.ScheduledJob {
		return withContainer(scheduledJob("a", batchv1alpha1.ScheduledJobSpec{Schedule: "@hourly"}), corev1.Container{Name: "c", Image: "busybox"})
	}
	sjWith := func(mutate func(*batchv1alpha1.ScheduledJob)) *batchv1alpha1.ScheduledJob {
		o := sj()
		mutate(o)
		return o
	}
	ej := func(mutate func(*batchv1alpha1.EventJob)) *batchv1alpha1.EventJob {
		o := eventJob("a", batchv1alpha1.TriggerKindCronJob, "hello")
		if mutate != nil {
			mutate(o)
		}
		return o
	}
	autoscaler := func(mutate func(*autoscalingv1alpha1.ScheduledPodAutoscaler)) *autoscalingv1alpha1.ScheduledPodAutoscaler {
		o := spa("web", "Max")
		o.Spec.HorizontalPodAutoscalerSpec = &autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To(int32(1)), MaxReplicas: 5,
		}
		if mutate != nil {
			mutate(o)
		}
		return o
	}
	attached := func(apiVersion, kind, name string, mutate func(*autoscalingv1alpha1.ScheduledPodAutoscaler)) *autoscalingv1alpha1.ScheduledPodAutoscaler {
		o := spa("web", "Max")
		o.Spec.TargetRef = &autoscalingv1alpha1.TargetReference{APIVersion: apiVersion, Kind: kind, Name: name}
		o.Spec.MinReplicas, o.Spec.MaxReplicas = ptr.To(int32(1)), ptr.To(int32(5))
		if mutate != nil {
			mutate(o)
		}
		return o
	}
	deleted := sjWith(func(o *batchv1alpha1.ScheduledJob) { o.DeletionTimestamp = &metav1.Time{Time: now} })
	jobs := []Delegated{createJobs}
	hpas := []Delegated{createHPAs, patchHPAs}
	patchHPA := []Delegated{{Verb: "patch", Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler"}}
	patchScaledObject := []Delegated{{Verb: "patch", Group: "keda.sh", Version: "v1alpha1", Resource: "scaledobjects", Kind: "ScaledObject"}}
	patchDeploymentScale := []Delegated{{Verb: "patch", Group: "apps", Version: "v1", Subresource: "scale", Kind: "Deployment"}}
	tests := []struct {
		name      string
		obj, old  client.Object
		wantField string
		want      []Delegated
	}{
		{name: "ScheduledJob created", obj: sj(), wantField: "spec.jobTemplate", want: jobs},
		{name: "ScheduledJob: labels changed", obj: sjWith(func(o *batchv1alpha1.ScheduledJob) { o.Labels = map[string]string{"team": "a"} }), old: sj()},
		{name: "ScheduledJob: suspended, history limits and concurrencyPolicy Forbid", obj: sjWith(func(o *batchv1alpha1.ScheduledJob) {
			o.Spec.Suspend, o.Spec.SuccessfulJobsHistoryLimit, o.Spec.FailedJobsHistoryLimit = true, ptr.To(int32(9)), ptr.To(int32(0))
			o.Spec.ConcurrencyPolicy = batchv1alpha1.ConcurrencyPolicyForbid
		}), old: sj()},
		// What makes a Job start now, or sooner, or at all (issue 38: only the template and a
		// run-now token were checked).
		{name: "ScheduledJob: the schedule changed", obj: sjWith(func(o *batchv1alpha1.ScheduledJob) { o.Spec.Schedule = "* * * * *" }), old: sj(),
			wantField: "spec.schedule", want: jobs},
		{name: "ScheduledJob: the schedule changed while suspending it", obj: sjWith(func(o *batchv1alpha1.ScheduledJob) {
			o.Spec.Schedule, o.Spec.Suspend = "* * * * *", true
		}), old: sj(), wantField: "spec.schedule", want: jobs},
		{name: "ScheduledJob: at changed", obj: sjWith(func(o *batchv1alpha1.ScheduledJob) { o.Spec.Schedule, o.Spec.At = "", "2027-01-15T12:01" }),
			old: sjWith(func(o *batchv1alpha1.ScheduledJob) { o.Spec.Schedule, o.Spec.At = "", "2027-06-01T00:00" }), wantField: "spec.at", want: jobs},
		{name: "ScheduledJob: timeZone changed", obj: sjWith(func(o *batchv1alpha1.ScheduledJob) { o.Spec.TimeZone = "Asia/Tokyo" }), old: sj(),
			wantField: "spec.timeZone", want: jobs},
		{name: "ScheduledJob: startingDeadlineSeconds changed", obj: sjWith(func(o *batchv1alpha1.ScheduledJob) { o.Spec.StartingDeadlineSeconds = ptr.To(int64(86400)) }),
			old: sj(), wantField: "spec.startingDeadlineSeconds", want: jobs},
		{name: "ScheduledJob: spread changed", obj: sjWith(func(o *batchv1alpha1.ScheduledJob) { o.Spec.Spread = "5m" }), old: sj(),
			wantField: "spec.spread", want: jobs},
		{name: "ScheduledJob: calendars changed", obj: sj(), old: sjWith(func(o *batchv1alpha1.ScheduledJob) {
			o.Spec.Calendars = &calendarv1alpha1.Calendars{Skip: []calendarv1alpha1.CalendarReference{{Name: "holidays"}}}
		}), wantField: "spec.calendars", want: jobs},
		{name: "ScheduledJob: resumed", obj: sj(), old: sjWith(func(o *batchv1alpha1.ScheduledJob) { o.Spec.Suspend = true }),
			wantField: "spec.suspend", want: jobs},
		{name: "ScheduledJob: concurrencyPolicy Replace", obj: sjWith(func(o *batchv1alpha1.ScheduledJob) {
			o.Spec.ConcurrencyPolicy = batchv1alpha1.ConcurrencyPolicyReplace
		}), old: sjWith(func(o *batchv1alpha1.ScheduledJob) { o.Spec.ConcurrencyPolicy = batchv1alpha1.ConcurrencyPolicyForbid }),
			wantField: "spec.concurrencyPolicy", want: jobs},
		{name: "ScheduledJob: the image changed", obj: sjWith(func(o *batchv1alpha1.ScheduledJob) {
			o.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image = "evil"
		}), old: sj(), wantField: "spec.jobTemplate", want: jobs},
		{name: "ScheduledJob: the Pods' ServiceAccount changed", obj: sjWith(func(o *batchv1alpha1.ScheduledJob) {
			o.Spec.JobTemplate.Spec.Template.Spec.ServiceAccountName = "admin"
		}), old: sj(), wantField: "spec.jobTemplate", want: jobs},
		{name: "ScheduledJob: the Job template's labels changed", obj: sjWith(func(o *batchv1alpha1.ScheduledJob) {
			o.Spec.JobTemplate.Labels = map[string]string{"x": "y"}
		}), old: sj(), wantField: "spec.jobTemplate", want: jobs},
		{name: "ScheduledJob: the same quantity written differently", obj: withContainer(sj(), corev1.Container{Name: "c", Image: "busybox",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}),
			old: withContainer(sj(), corev1.Container{Name: "c", Image: "busybox",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000m")}}})},
		{name: "ScheduledJob: an empty list instead of none", obj: withContainer(sj(), corev1.Container{Name: "c", Image: "busybox", Args: []string{}}), old: sj()},
		{name: "ScheduledJob being deleted", obj: deleted, old: sj()},
		{name: "ScheduledJob: a run-now token set", obj: sjWith(func(o *batchv1alpha1.ScheduledJob) {
			o.Annotations = map[string]string{batchv1alpha1.AnnotationRunNow: "t1"}
		}), old: sj(), wantField: "metadata.annotations[batch.almanac.dev/run-now]", want: jobs},
		{name: "ScheduledJob: a run-now token changed", obj: sjWith(func(o *batchv1alpha1.ScheduledJob) {
			o.Annotations = map[string]string{batchv1alpha1.AnnotationRunNow: "t2"}
		}), old: sjWith(func(o *batchv1alpha1.ScheduledJob) {
			o.Annotations = map[string]string{batchv1alpha1.AnnotationRunNow: "t1"}
		}), wantField: "metadata.annotations[batch.almanac.dev/run-now]", want: jobs},
		{name: "ScheduledJob: the run-now token kept, labels changed", obj: sjWith(func(o *batchv1alpha1.ScheduledJob) {
			o.Annotations = map[string]string{batchv1alpha1.AnnotationRunNow: "t1"}
			o.Labels = map[string]string{"team": "a"}
		}), old: sjWith(func(o *batchv1alpha1.ScheduledJob) {
			o.Annotations = map[string]string{batchv1alpha1.AnnotationRunNow: "t1"}
		})},
		{name: "ScheduledJob: the run-now token removed", obj: sj(), old: sjWith(func(o *batchv1alpha1.ScheduledJob) {
			o.Annotations = map[string]string{batchv1alpha1.AnnotationRunNow: "t1"}
		})},
		{name: "EventJob created", obj: ej(nil), wantField: "spec.jobTemplate", want: jobs},
		{name: "EventJob: the trigger changed", obj: ej(func(o *batchv1alpha1.EventJob) { o.Spec.Trigger.Name = "other" }), old: ej(nil),
			wantField: "spec.trigger", want: jobs},
		{name: "EventJob: labels, suspended and history limits", obj: ej(func(o *batchv1alpha1.EventJob) {
			o.Labels, o.Spec.Suspend, o.Spec.SuccessfulJobsHistoryLimit = map[string]string{"team": "a"}, true, ptr.To(int32(0))
		}), old: ej(nil)},
		{name: "EventJob: resumed", obj: ej(nil), old: ej(func(o *batchv1alpha1.EventJob) { o.Spec.Suspend = true }),
			wantField: "spec.suspend", want: jobs},
		{name: "EventJob: a trigger added to triggers", obj: ej(fanIn("a", "b", "c")), old: ej(fanIn("a", "b")),
			wantField: "spec.triggers", want: jobs},
		{name: "EventJob: a trigger's type changed in triggers", obj: ej(func(o *batchv1alpha1.EventJob) {
			fanIn("a", "b")(o)
			o.Spec.Triggers[1].Type = batchv1alpha1.TriggerTypeAny
		}), old: ej(fanIn("a", "b")), wantField: "spec.triggers", want: jobs},
		{name: "EventJob: fanIn changed (AnyOf starts a set sooner)", obj: ej(func(o *batchv1alpha1.EventJob) {
			fanIn("a", "b")(o)
			o.Spec.FanIn.Require = batchv1alpha1.FanInAnyOf
		}), old: ej(fanIn("a", "b")), wantField: "spec.fanIn", want: jobs},
		{name: "EventJob: trigger became triggers", obj: ej(fanIn("hello")), old: ej(nil), wantField: "spec.trigger", want: jobs},
		{name: "EventJob with triggers: suspended", obj: ej(func(o *batchv1alpha1.EventJob) {
			fanIn("a", "b")(o)
			o.Spec.Suspend = true
		}), old: ej(fanIn("a", "b"))},
		{name: "EventJob: the template changed", obj: ej(func(o *batchv1alpha1.EventJob) {
			o.Spec.JobTemplate.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "busybox"}}
		}), old: ej(nil), wantField: "spec.jobTemplate", want: jobs},
		{name: "ScheduledPodAutoscaler created", obj: autoscaler(nil), wantField: "spec.horizontalPodAutoscalerSpec", want: hpas},
		{name: "ScheduledPodAutoscaler: suspend and overlapPolicy changed", obj: autoscaler(func(o *autoscalingv1alpha1.ScheduledPodAutoscaler) {
			o.Spec.Suspend, o.Spec.OverlapPolicy = true, "Forbid"
		}), old: autoscaler(nil)},
		{name: "ScheduledPodAutoscaler: maxReplicas changed", obj: autoscaler(func(o *autoscalingv1alpha1.ScheduledPodAutoscaler) {
			o.Spec.HorizontalPodAutoscalerSpec.MaxReplicas = 500
		}), old: autoscaler(nil), wantField: "spec.horizontalPodAutoscalerSpec", want: hpas},
		{name: "ScheduledPodAutoscaler: the target changed", obj: autoscaler(func(o *autoscalingv1alpha1.ScheduledPodAutoscaler) {
			o.Spec.HorizontalPodAutoscalerSpec.ScaleTargetRef.Name = "other"
		}), old: autoscaler(nil), wantField: "spec.horizontalPodAutoscalerSpec", want: hpas},
		{name: "attached to a HorizontalPodAutoscaler", obj: attached("autoscaling/v2", "HorizontalPodAutoscaler", "web", nil), wantField: "spec.targetRef", want: patchHPA},
		{name: "attached to a ScaledObject", obj: attached("keda.sh/v1alpha1", "ScaledObject", "web", nil), wantField: "spec.targetRef", want: patchScaledObject},
		{name: "attached to a Deployment: its scale subresource, whose resource the check finds", obj: attached("apps/v1", "Deployment", "web", nil),
			wantField: "spec.targetRef", want: patchDeploymentScale},
		{name: "attached: a kind named like an autoscaler in another group is a workload", obj: attached("example.com/v1", "HorizontalPodAutoscaler", "web", nil),
			wantField: "spec.targetRef", want: []Delegated{{Verb: "patch", Group: "example.com", Version: "v1", Subresource: "scale", Kind: "HorizontalPodAutoscaler"}}},
		{name: "attached: the bounds, suspend and overlapPolicy changed", obj: attached("apps/v1", "Deployment", "web", func(o *autoscalingv1alpha1.ScheduledPodAutoscaler) {
			o.Spec.MinReplicas, o.Spec.MaxReplicas, o.Spec.Suspend, o.Spec.OverlapPolicy = ptr.To(int32(0)), ptr.To(int32(500)), true, "Forbid"
		}), old: attached("apps/v1", "Deployment", "web", nil)},
		{name: "attached: the target's name changed", obj: attached("apps/v1", "Deployment", "db", nil), old: attached("apps/v1", "Deployment", "web", nil),
			wantField: "spec.targetRef", want: patchDeploymentScale},
		{name: "attached: the target's kind changed", obj: attached("autoscaling/v2", "HorizontalPodAutoscaler", "web", nil), old: attached("apps/v1", "Deployment", "web", nil),
			wantField: "spec.targetRef", want: patchHPA},
		{name: "attached: only the target's version changed", obj: attached("apps/v1beta2", "Deployment", "web", nil), old: attached("apps/v1", "Deployment", "web", nil),
			wantField: "spec.targetRef", want: []Delegated{{Verb: "patch", Group: "apps", Version: "v1beta2", Subresource: "scale", Kind: "Deployment"}}},
		{name: "attached, being deleted", obj: attached("apps/v1", "Deployment", "web", func(o *autoscalingv1alpha1.ScheduledPodAutoscaler) {
			o.DeletionTimestamp = &metav1.Time{Time: now}
		})},
		{name: "Schedule created", obj: schedule("s", daily("09:00", "17:00", "UTC"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, got := DelegatedActions(tt.obj, tt.old)
			gotField := ""
			if path != nil {
				gotField = path.String()
			}
			if gotField != tt.wantField {
				t.Errorf("field %q, want %q", gotField, tt.wantField)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSubjectAccessReview: the review asks about the request's user exactly as the API server
// authenticated it.
func TestSubjectAccessReview(t *testing.T) {
	user := authenticationv1.UserInfo{
		Username: "system:serviceaccount:team-a:deployer", UID: "0b1c",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:team-a", "system:authenticated"},
		Extra:  map[string]authenticationv1.ExtraValue{"authentication.kubernetes.io/pod-name": {"deployer-7d9"}, "scopes": {"a", "b"}},
	}
	want := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: "system:serviceaccount:team-a:deployer", UID: "0b1c",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:team-a", "system:authenticated"},
		Extra:  map[string]authorizationv1.ExtraValue{"authentication.kubernetes.io/pod-name": {"deployer-7d9"}, "scopes": {"a", "b"}},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: "team-a", Verb: "create", Group: "batch", Version: "v1", Resource: "jobs",
		},
	}}
	if diff := cmp.Diff(want, SubjectAccessReview(user, "team-a", createJobs)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// A subresource is asked about as such.
	scale := Delegated{Verb: "patch", Group: "apps", Version: "v1", Resource: "deployments", Subresource: "scale", Kind: "Deployment"}
	if got := SubjectAccessReview(user, "team-a", scale).Spec.ResourceAttributes; *got != (authorizationv1.ResourceAttributes{
		Namespace: "team-a", Verb: "patch", Group: "apps", Version: "v1", Resource: "deployments", Subresource: "scale",
	}) {
		t.Errorf("resource attributes %+v", got)
	}
	// No extra stays no extra.
	if got := SubjectAccessReview(authenticationv1.UserInfo{Username: "alice"}, "ns", patchHPAs); got.Spec.Extra != nil || got.Spec.Groups != nil {
		t.Errorf("extra %v, groups %v; want none", got.Spec.Extra, got.Spec.Groups)
	}
}

const (
	validScheduledJob = `{"apiVersion":"batch.almanac.dev/v1alpha1","kind":"ScheduledJob","metadata":{"name":"a","namespace":"ns"},
		"spec":{"schedule":"@hourly","timeZone":"UTC","jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox"}],"restartPolicy":"Never"}}}}}}`
	validAutoscaler = `{"apiVersion":"autoscaling.almanac.dev/v1alpha1","kind":"ScheduledPodAutoscaler","metadata":{"name":"a","namespace":"ns"},
		"spec":{"overlapPolicy":"Max","horizontalPodAutoscalerSpec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":1,"maxReplicas":5}}}`
	// attachedAutoscaler is attached to Deployment "web", with minReplicas 1.
	attachedAutoscaler = `{"apiVersion":"autoscaling.almanac.dev/v1alpha1","kind":"ScheduledPodAutoscaler","metadata":{"name":"a","namespace":"ns"},
		"spec":{"overlapPolicy":"Max","targetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":1}}`
)

// attachedTo is attachedAutoscaler attached to another object.
func attachedTo(apiVersion, kind, name string) string {
	return strings.Replace(attachedAutoscaler, `"targetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"}`,
		`"targetRef":{"apiVersion":"`+apiVersion+`","kind":"`+kind+`","name":"`+name+`"},"maxReplicas":10`, 1)
}

// testMapper knows the kinds of a cluster with KEDA, and no Argo Rollouts.
func testMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	for _, gvk := range []schema.GroupVersionKind{
		{Group: "apps", Version: "v1", Kind: "Deployment"}, {Group: "apps", Version: "v1", Kind: "StatefulSet"},
		{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}, {Group: "keda.sh", Version: "v1alpha1", Kind: "ScaledObject"},
		{Version: "v1", Kind: "ReplicationController"},
	} {
		m.Add(gvk, meta.RESTScopeNamespace)
	}
	return m
}

// reviewer answers SubjectAccessReviews from a table of "verb resource" → allowed, and records
// what it was asked.
type reviewer struct {
	mu      sync.Mutex
	allowed map[string]bool
	err     error
	block   bool // wait until the context ends
	asked   []authorizationv1.SubjectAccessReviewSpec
}

func (r *reviewer) review(ctx context.Context, sar *authorizationv1.SubjectAccessReview) error {
	r.mu.Lock()
	r.asked = append(r.asked, sar.Spec)
	r.mu.Unlock()
	if r.block {
		<-ctx.Done()
		return ctx.Err()
	}
	if r.err != nil {
		return r.err
	}
	sar.Status.Allowed = r.allowed[askedText(sar.Spec)]
	return nil
}

// askedText is "verb resource", or "verb resource/subresource".
func askedText(s authorizationv1.SubjectAccessReviewSpec) string {
	a := s.ResourceAttributes
	if a.Subresource != "" {
		return a.Verb + " " + a.Resource + "/" + a.Subresource
	}
	return a.Verb + " " + a.Resource
}

// TestPermissionCheck runs the validating webhook with the permission check: who is admitted,
// the refusal's exact status, when no review is made, and that a failed review refuses.
func TestPermissionCheck(t *testing.T) {
	alice := authenticationv1.UserInfo{Username: "alice", Groups: []string{"devs", "system:authenticated"}}
	ci := authenticationv1.UserInfo{Username: "system:serviceaccount:ci:deployer", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ci"}}
	withUser := func(req admission.Request, u authenticationv1.UserInfo) admission.Request {
		req.UserInfo = u
		return req
	}
	changedImage := strings.Replace(validScheduledJob, `"image":"busybox"`, `"image":"evil"`, 1)
	suspended := strings.Replace(validScheduledJob, `"schedule":"@hourly"`, `"schedule":"@hourly","suspend":true`, 1)
	everyMinute := strings.Replace(validScheduledJob, `"schedule":"@hourly"`, `"schedule":"* * * * *"`, 1)
	sjRules := apiadmission.RulesFor(batchv1alpha1.GroupVersion.WithKind("ScheduledJob"))
	spaRules := apiadmission.RulesFor(autoscalingv1alpha1.GroupVersion.WithKind("ScheduledPodAutoscaler"))

	tests := []struct {
		name     string
		rules    apiadmission.Rules
		req      admission.Request
		reviewer *reviewer
		timeout  time.Duration
		off      bool
		// want is nil when admitted.
		want *metav1.Status
		// wantMessage is a substring of the refusal's message, when want is not given.
		wantMessage string
		wantAsked   []string // "verb resource" of each review
	}{{
		name: "allowed", rules: sjRules, req: withUser(request(admissionv1.Create, validScheduledJob, ""), alice),
		reviewer: &reviewer{allowed: map[string]bool{"create jobs": true}}, wantAsked: []string{"create jobs"},
	}, {
		name: "a user who may not create Jobs", rules: sjRules, req: withUser(request(admissionv1.Create, validScheduledJob, ""), alice),
		reviewer: &reviewer{}, wantAsked: []string{"create jobs"},
		want: &metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
			Message: `scheduledjobs.batch.almanac.dev "a" is forbidden: spec.jobTemplate: ` + aliceDenied,
			Details: &metav1.StatusDetails{Name: "a", Group: "batch.almanac.dev", Kind: "scheduledjobs", Causes: []metav1.StatusCause{{
				Type: "FieldValueForbidden", Field: "spec.jobTemplate", Message: aliceDenied,
			}}},
		},
	}, {
		name: "a ServiceAccount who may not create Jobs", rules: sjRules, req: withUser(request(admissionv1.Create, validScheduledJob, ""), ci),
		reviewer:    &reviewer{},
		wantMessage: `ServiceAccount ci/deployer may not create Jobs (batch/v1 jobs) in namespace "ns"`, wantAsked: []string{"create jobs"},
	}, {
		name: "an update of the template", rules: sjRules, req: withUser(request(admissionv1.Update, changedImage, validScheduledJob), alice),
		reviewer: &reviewer{}, wantMessage: `user "alice" may not create Jobs`, wantAsked: []string{"create jobs"},
	}, {
		name: "an update that only suspends it", rules: sjRules, req: withUser(request(admissionv1.Update, suspended, validScheduledJob), alice),
		reviewer: &reviewer{},
	}, {
		name: "an update of the schedule", rules: sjRules, req: withUser(request(admissionv1.Update, everyMinute, validScheduledJob), alice),
		reviewer: &reviewer{}, wantAsked: []string{"create jobs"},
		wantMessage: `spec.schedule: user "alice" may not create Jobs (batch/v1 jobs) in namespace "ns", and almanac creates this ScheduledJob's Jobs on behalf of whoever writes spec.schedule`,
	}, {
		name: "a resume", rules: sjRules, req: withUser(request(admissionv1.Update, validScheduledJob, suspended), alice),
		reviewer: &reviewer{}, wantAsked: []string{"create jobs"}, wantMessage: `spec.suspend: user "alice" may not create Jobs`,
	}, {
		name: "an invalid object is refused for that, without a review", rules: sjRules,
		req:      withUser(request(admissionv1.Create, strings.Replace(validScheduledJob, `"UTC"`, `"Mars/Olympus"`, 1), ""), alice),
		reviewer: &reviewer{}, wantMessage: `ScheduledJob.batch.almanac.dev "a" is invalid: spec.timeZone`,
	}, {
		name: "an autoscaler from a user who may create but not patch", rules: spaRules, req: withUser(request(admissionv1.Create, validAutoscaler, ""), alice),
		reviewer: &reviewer{allowed: map[string]bool{"create horizontalpodautoscalers": true}},
		wantMessage: `spec.horizontalPodAutoscalerSpec: user "alice" may not patch HorizontalPodAutoscalers (autoscaling/v2 horizontalpodautoscalers) in namespace "ns", ` +
			`and almanac creates and patches this ScheduledPodAutoscaler's HorizontalPodAutoscaler on behalf of whoever writes spec.horizontalPodAutoscalerSpec`,
		wantAsked: []string{"create horizontalpodautoscalers", "patch horizontalpodautoscalers"},
	}, {
		name: "an autoscaler from a user who may do neither", rules: spaRules, req: withUser(request(admissionv1.Create, validAutoscaler, ""), alice),
		reviewer:    &reviewer{},
		wantMessage: `may not create or patch HorizontalPodAutoscalers (autoscaling/v2 horizontalpodautoscalers) in namespace "ns"`,
		wantAsked:   []string{"create horizontalpodautoscalers", "patch horizontalpodautoscalers"},
	}, {
		name: "an autoscaler from a user who may do both", rules: spaRules, req: withUser(request(admissionv1.Create, validAutoscaler, ""), alice),
		reviewer:  &reviewer{allowed: map[string]bool{"create horizontalpodautoscalers": true, "patch horizontalpodautoscalers": true}},
		wantAsked: []string{"create horizontalpodautoscalers", "patch horizontalpodautoscalers"},
	}, {
		name: "attached to a Deployment, from a user who may patch its scale subresource", rules: spaRules,
		req:       withUser(request(admissionv1.Create, attachedAutoscaler, ""), alice),
		reviewer:  &reviewer{allowed: map[string]bool{"patch deployments/scale": true}},
		wantAsked: []string{"patch deployments/scale"},
	}, {
		name: "attached to a Deployment, from a user who may patch Deployments but not their scale subresource", rules: spaRules,
		req:       withUser(request(admissionv1.Create, attachedAutoscaler, ""), alice),
		reviewer:  &reviewer{allowed: map[string]bool{"patch deployments": true, "create horizontalpodautoscalers": true, "patch horizontalpodautoscalers": true}},
		wantAsked: []string{"patch deployments/scale"},
		want: &metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
			Message: `scheduledpodautoscalers.autoscaling.almanac.dev "a" is forbidden: spec.targetRef: ` + aliceDeniedScale,
			Details: &metav1.StatusDetails{Name: "a", Group: "autoscaling.almanac.dev", Kind: "scheduledpodautoscalers", Causes: []metav1.StatusCause{{
				Type: "FieldValueForbidden", Field: "spec.targetRef", Message: aliceDeniedScale,
			}}},
		},
	}, {
		name: "attached to a core-group workload", rules: spaRules,
		req:         withUser(request(admissionv1.Create, attachedTo("v1", "ReplicationController", "legacy"), ""), alice),
		reviewer:    &reviewer{},
		wantAsked:   []string{"patch replicationcontrollers/scale"},
		wantMessage: `may not patch the scale subresource of ReplicationControllers (v1 replicationcontrollers/scale) in namespace "ns"`,
	}, {
		name: "attached to a kind the cluster does not serve: refused without a review", rules: spaRules,
		req:      withUser(request(admissionv1.Create, attachedTo("argoproj.io/v1alpha1", "Rollout", "web"), ""), alice),
		reviewer: &reviewer{allowed: map[string]bool{"patch rollouts/scale": true}},
		want: &metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid,
			Message: `ScheduledPodAutoscaler.autoscaling.almanac.dev "a" is invalid: spec.targetRef.kind: Invalid value: "Rollout": ` + rolloutUnknown,
			Details: &metav1.StatusDetails{Name: "a", Group: "autoscaling.almanac.dev", Kind: "ScheduledPodAutoscaler", Causes: []metav1.StatusCause{{
				Type: "FieldValueInvalid", Field: "spec.targetRef.kind", Message: `Invalid value: "Rollout": ` + rolloutUnknown,
			}}},
		},
	}, {
		name: "attached to a HorizontalPodAutoscaler, from a user who may patch it", rules: spaRules,
		req:       withUser(request(admissionv1.Create, attachedTo("autoscaling/v2", "HorizontalPodAutoscaler", "web"), ""), alice),
		reviewer:  &reviewer{allowed: map[string]bool{"patch horizontalpodautoscalers": true}},
		wantAsked: []string{"patch horizontalpodautoscalers"},
	}, {
		name: "attached to a HorizontalPodAutoscaler, from a user who may create HorizontalPodAutoscalers but not patch them", rules: spaRules,
		req:       withUser(request(admissionv1.Create, attachedTo("autoscaling/v2", "HorizontalPodAutoscaler", "web"), ""), alice),
		reviewer:  &reviewer{allowed: map[string]bool{"create horizontalpodautoscalers": true, "patch deployments/scale": true}},
		wantAsked: []string{"patch horizontalpodautoscalers"},
		wantMessage: `spec.targetRef: user "alice" may not patch HorizontalPodAutoscalers (autoscaling/v2 horizontalpodautoscalers) in namespace "ns", ` +
			`and almanac patches this ScheduledPodAutoscaler's target on behalf of whoever writes spec.targetRef`,
	}, {
		name: "attached to a ScaledObject, from a user who may not patch it", rules: spaRules,
		req:         withUser(request(admissionv1.Create, attachedTo("keda.sh/v1alpha1", "ScaledObject", "worker"), ""), ci),
		reviewer:    &reviewer{allowed: map[string]bool{"patch horizontalpodautoscalers": true}},
		wantAsked:   []string{"patch scaledobjects"},
		wantMessage: `ServiceAccount ci/deployer may not patch ScaledObjects (keda.sh/v1alpha1 scaledobjects) in namespace "ns"`,
	}, {
		name: "attached: an update of the bounds only", rules: spaRules,
		req: withUser(request(admissionv1.Update, strings.Replace(attachedAutoscaler, `"minReplicas":1`, `"minReplicas":0,"suspend":true`, 1),
			attachedAutoscaler), alice),
		reviewer: &reviewer{},
	}, {
		name: "attached: an update that moves it to another target", rules: spaRules,
		req:       withUser(request(admissionv1.Update, strings.Replace(attachedAutoscaler, `"name":"web"`, `"name":"db"`, 1), attachedAutoscaler), alice),
		reviewer:  &reviewer{},
		wantAsked: []string{"patch deployments/scale"}, wantMessage: `user "alice" may not patch the scale subresource of Deployments`,
	}, {
		name: "a review that fails", rules: sjRules, req: withUser(request(admissionv1.Create, validScheduledJob, ""), alice),
		reviewer: &reviewer{err: errors.New("connection refused")}, wantAsked: []string{"create jobs"},
		want: &metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Reason: metav1.StatusReasonInternalError,
			Message: `Internal error occurred: almanac could not check whether user "alice" may create Jobs in namespace "ns" (SubjectAccessReview: connection refused), ` +
				`so it refuses the ScheduledJob: nothing was changed; try again, and if this persists, check the manager's logs and its permission to create subjectaccessreviews`,
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Message: `almanac could not check whether user "alice" may create Jobs in namespace "ns" (SubjectAccessReview: connection refused), ` +
				`so it refuses the ScheduledJob: nothing was changed; try again, and if this persists, check the manager's logs and its permission to create subjectaccessreviews`}}},
		},
	}, {
		name: "a review that does not answer in time", rules: sjRules, req: withUser(request(admissionv1.Create, validScheduledJob, ""), alice),
		reviewer: &reviewer{block: true}, timeout: 10 * time.Millisecond, wantAsked: []string{"create jobs"},
		wantMessage: `almanac could not check whether user "alice" may create Jobs in namespace "ns" (SubjectAccessReview: no answer within 10ms: context deadline exceeded)`,
	}, {
		name: "the check turned off", rules: sjRules, req: withUser(request(admissionv1.Create, validScheduledJob, ""), alice),
		reviewer: &reviewer{}, off: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := &validator{rules: tt.rules, clock: clocktesting.NewFakePassiveClock(now), objects: lookupOf()}
			if !tt.off {
				v.permissions = &permissionCheck{review: tt.reviewer.review, timeout: PermissionCheckTimeout, mapper: testMapper()}
				if tt.timeout != 0 {
					v.permissions.timeout = tt.timeout
				}
			}
			resp := v.Handle(context.Background(), tt.req)
			switch {
			case tt.want != nil:
				if resp.Allowed {
					t.Fatal("admitted")
				}
				if diff := cmp.Diff(tt.want, resp.Result); diff != "" {
					t.Errorf("status (-want +got):\n%s", diff)
				}
			case tt.wantMessage != "":
				if resp.Allowed {
					t.Fatal("admitted")
				}
				if !strings.Contains(resp.Result.Message, tt.wantMessage) {
					t.Errorf("message %q lacks %q", resp.Result.Message, tt.wantMessage)
				}
			default:
				if !resp.Allowed {
					t.Fatalf("refused: %v", resp.Result)
				}
			}
			var asked []string
			for _, s := range tt.reviewer.asked {
				asked = append(asked, askedText(s))
				if s.User != tt.req.UserInfo.Username || !cmp.Equal(s.Groups, tt.req.UserInfo.Groups) || s.ResourceAttributes.Namespace != "ns" {
					t.Errorf("asked about %q %v in %q, want the request's user in its namespace", s.User, s.Groups, s.ResourceAttributes.Namespace)
				}
			}
			if diff := cmp.Diff(tt.wantAsked, asked); diff != "" {
				t.Errorf("reviews (-want +got):\n%s", diff)
			}
		})
	}
}

const aliceDeniedScale = `user "alice" may not patch the scale subresource of Deployments (apps/v1 deployments/scale) in namespace "ns", ` +
	`and almanac patches this ScheduledPodAutoscaler's target on behalf of whoever writes spec.targetRef, ` +
	`so it accepts it only from users who may do that themselves: grant "patch" on deployments/scale in API group "apps" in namespace "ns", ` +
	`e.g. bind the edit ClusterRole: kubectl create rolebinding alice-edit --clusterrole=edit --user=alice --namespace=ns`

const rolloutUnknown = `kind Rollout has no resource on this cluster (the API server serves no Rollout in argoproj.io/v1alpha1), ` +
	`so almanac cannot tell what it would patch, nor check that you may: install the kind's CustomResourceDefinition first, ` +
	`or correct spec.targetRef.apiVersion and kind (kubectl api-resources lists what the cluster serves)`

const aliceDenied = `user "alice" may not create Jobs (batch/v1 jobs) in namespace "ns", and almanac creates this ScheduledJob's Jobs on behalf of whoever writes spec.jobTemplate, ` +
	`so it accepts it only from users who may do that themselves: grant "create" on jobs.batch in namespace "ns", ` +
	`e.g. bind the edit ClusterRole: kubectl create rolebinding alice-edit --clusterrole=edit --user=alice --namespace=ns`

func TestBindingHint(t *testing.T) {
	tests := []struct{ user, name, flag string }{
		{"alice", "alice-edit", "--user=alice"},
		{"Alice@Example.com", "alice-example.com-edit", "--user=Alice@Example.com"},
		{"system:serviceaccount:ci:deployer", "deployer-edit", "--serviceaccount=ci:deployer"},
		{"oidc:Jane Doe", "oidc-jane-doe-edit", `--user="oidc:Jane Doe"`},
		{"::", "almanac-edit", "--user=::"},
		{strings.Repeat("x", 80), strings.Repeat("x", 48) + "-edit", "--user=" + strings.Repeat("x", 80)},
	}
	for _, tt := range tests {
		if got := bindingName(tt.user); got != tt.name {
			t.Errorf("bindingName(%q) = %q, want %q", tt.user, got, tt.name)
		}
		if got := subjectFlag(tt.user); got != tt.flag {
			t.Errorf("subjectFlag(%q) = %q, want %q", tt.user, got, tt.flag)
		}
	}
}

// TestSetupOptions: the check is on unless turned off.
func TestSetupOptions(t *testing.T) {
	if newPermissionCheck(newSetupOptions(nil), nil) == nil {
		t.Error("the permission check is off by default")
	}
	if newPermissionCheck(newSetupOptions([]Option{WithPermissionCheck(false)}), nil) != nil {
		t.Error("WithPermissionCheck(false) leaves the check on")
	}
}

// TestAttachedAgainstAPIServer runs what the webhooks ask the API server about an attached
// autoscaler against a real kube-apiserver (envtest): the SubjectAccessReview of a scale
// subresource under real RBAC, the manager's RESTMapper for a kind the cluster serves and one
// it does not, and the lookups of CacheLookup (a target's metadata, the
// HorizontalPodAutoscalers of a namespace, the autoscalers attached to a target by the cache
// index).
func TestAttachedAgainstAPIServer(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set: export KUBEBUILDER_ASSETS=$(hack/envtest.sh) to run this test against kube-apiserver")
	}
	env, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c := env.Client
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}))
	// alice may patch Deployments' scale subresource; bob may patch Deployments, which is
	// not their scale subresource.
	for user, resource := range map[string]string{"alice": "deployments/scale", "bob": "deployments"} {
		must(c.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: "ns"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{resource}, Verbs: []string{"patch"}}}}))
		must(c.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: "ns"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}}}))
	}

	t.Run("permission check", func(t *testing.T) {
		spaRules := apiadmission.RulesFor(autoscalingv1alpha1.GroupVersion.WithKind("ScheduledPodAutoscaler"))
		v := &validator{rules: spaRules, clock: clocktesting.NewFakePassiveClock(now), objects: lookupOf(),
			permissions: newPermissionCheck(newSetupOptions(nil), c)}
		handle := func(user, obj string) admission.Response {
			req := request(admissionv1.Create, obj, "")
			req.UserInfo = authenticationv1.UserInfo{Username: user, Groups: []string{"system:authenticated"}}
			return v.Handle(ctx, req)
		}
		if resp := handle("alice", attachedAutoscaler); !resp.Allowed {
			t.Errorf("alice refused: %v", resp.Result)
		}
		if resp := handle("bob", attachedAutoscaler); resp.Allowed || !strings.Contains(resp.Result.Message,
			`user "bob" may not patch the scale subresource of Deployments (apps/v1 deployments/scale) in namespace "ns"`) {
			t.Errorf("bob: allowed %v, %v", resp.Allowed, resp.Result)
		}
		if resp := handle("alice", attachedTo("apps/v1", "StatefulSet", "db")); resp.Allowed || !strings.Contains(resp.Result.Message,
			`user "alice" may not patch the scale subresource of StatefulSets (apps/v1 statefulsets/scale)`) {
			t.Errorf("alice's StatefulSet: allowed %v, %v", resp.Allowed, resp.Result)
		}
		if resp := handle("alice", attachedTo("argoproj.io/v1alpha1", "Rollout", "web")); resp.Allowed || resp.Result.Reason != metav1.StatusReasonInvalid ||
			!strings.Contains(resp.Result.Message, rolloutUnknown) {
			t.Errorf("an unserved kind: allowed %v, %v", resp.Allowed, resp.Result)
		}
	})

	t.Run("lookups", func(t *testing.T) {
		informers, err := cache.New(env.Config, cache.Options{Scheme: c.Scheme()})
		must(err)
		for _, ix := range index.All() {
			values := ix.Values
			must(informers.IndexField(ctx, ix.Object, ix.Field, func(o client.Object) []string { return values(o) }))
		}
		go func() { _ = informers.Start(ctx) }()
		if !informers.WaitForCacheSync(ctx) {
			t.Fatal("the cache did not sync")
		}
		cached, err := client.New(env.Config, client.Options{Scheme: c.Scheme(), Cache: &client.CacheOptions{Reader: informers}})
		must(err)
		l := &CacheLookup{Reader: cached, APIReader: c}

		must(c.Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "web-cpu", Namespace: "ns"},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, MaxReplicas: 5,
			}}))
		hpaV2 := schema.GroupVersionKind{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}
		for _, tt := range []struct {
			gvk  schema.GroupVersionKind
			name string
			want bool
		}{
			{hpaV2, "web-cpu", true},
			{hpaV2, "missing", false},
			{schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "HorizontalPodAutoscaler"}, "web-cpu", true},
			// KEDA is not installed here: its ScaledObjects do not exist.
			{schema.GroupVersionKind{Group: "keda.sh", Version: "v1alpha1", Kind: "ScaledObject"}, "worker", false},
			// A workload is not looked up: the manager may not read it.
			{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, "missing", true},
		} {
			if got, err := l.Exists(ctx, tt.gvk, "ns", tt.name); err != nil || got != tt.want {
				t.Errorf("Exists(%s, %s) = %v, %v; want %v", tt.gvk, tt.name, got, err, tt.want)
			}
		}
		// A reader that may not read HorizontalPodAutoscalers takes the target to exist.
		carolCfg, err := env.AddUser("carol")
		must(err)
		carol, err := client.New(carolCfg, client.Options{Scheme: c.Scheme()})
		must(err)
		if got, err := (&CacheLookup{Reader: cached, APIReader: carol}).Exists(ctx, hpaV2, "ns", "missing"); err != nil || !got {
			t.Errorf("Exists without permission = %v, %v; want true", got, err)
		}

		hpas, err := l.HorizontalPodAutoscalers(ctx, "ns")
		must(err)
		if len(hpas) != 1 || hpas[0].Name != "web-cpu" || hpas[0].Spec.ScaleTargetRef.Name != "web" {
			t.Errorf("HorizontalPodAutoscalers = %v", hpas)
		}

		mine := &autoscalingv1alpha1.ScheduledPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: "ns"}, Spec: autoscalingv1alpha1.ScheduledPodAutoscalerSpec{
			TargetRef:   &autoscalingv1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas: ptr.To(int32(0)), OverlapPolicy: "Max",
		}}
		must(c.Create(ctx, mine))
		var attached []autoscalingv1alpha1.ScheduledPodAutoscaler
		for range 100 {
			if attached, err = l.AttachedAutoscalers(ctx, "ns", "apps", "Deployment", "web"); err != nil || len(attached) > 0 {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		must(err)
		if len(attached) != 1 || attached[0].Name != "mine" {
			t.Errorf("AttachedAutoscalers = %v", attached)
		}
		if other, err := l.AttachedAutoscalers(ctx, "ns", "apps", "StatefulSet", "web"); err != nil || len(other) > 0 {
			t.Errorf("AttachedAutoscalers of another kind = %v, %v", other, err)
		}
	})
}

// TestStartingAJobNeedsCreateJobs runs the validating webhook's permission check against a
// real kube-apiserver (envtest) under real RBAC, for updates of a ScheduledJob by sam, who may
// edit ScheduledJobs but not create Jobs, and by jo, who may create Jobs too. Any write that
// can start a Job that the stored object would not have started, or start one sooner, needs
// create jobs (batchv1alpha1.ScheduledJob.StartsJobs); issue 38: a new run-now token did, but
// an at moved to a minute from now or a schedule of "* * * * *" did not.
func TestStartingAJobNeedsCreateJobs(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set: export KUBEBUILDER_ASSETS=$(hack/envtest.sh) to run this test against kube-apiserver")
	}
	env, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx := context.Background()
	c := env.Client
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}))
	rules := map[string][]rbacv1.PolicyRule{
		"sam": {{APIGroups: []string{"batch.almanac.dev"}, Resources: []string{"scheduledjobs", "eventjobs"}, Verbs: []string{"*"}}},
		"jo": {{APIGroups: []string{"batch.almanac.dev"}, Resources: []string{"scheduledjobs", "eventjobs"}, Verbs: []string{"*"}},
			{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"create"}}},
	}
	for user, r := range rules {
		must(c.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: "ns"}, Rules: r}))
		must(c.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: "ns"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}}}))
	}
	sjRules := apiadmission.RulesFor(batchv1alpha1.GroupVersion.WithKind("ScheduledJob"))
	ejRules := apiadmission.RulesFor(batchv1alpha1.GroupVersion.WithKind("EventJob"))
	check := newPermissionCheck(newSetupOptions(nil), c)
	handle := func(rules apiadmission.Rules, user, obj, old string) admission.Response {
		v := &validator{rules: rules, clock: clocktesting.NewFakePassiveClock(now), objects: lookupOf(), permissions: check}
		req := request(admissionv1.Update, obj, old)
		req.UserInfo = authenticationv1.UserInfo{Username: user, Groups: []string{"system:authenticated"}}
		return v.Handle(ctx, req)
	}

	// A one-shot due in June, and the same moved to a minute from now (now is 2027-01-15 12:00).
	atJune := strings.Replace(validScheduledJob, `"schedule":"@hourly"`, `"at":"2027-06-01T00:00"`, 1)
	atNow := strings.Replace(validScheduledJob, `"schedule":"@hourly"`, `"at":"2027-01-15T12:01"`, 1)
	everyMinute := strings.Replace(validScheduledJob, `"schedule":"@hourly"`, `"schedule":"* * * * *"`, 1)
	labelled := strings.Replace(validScheduledJob, `"namespace":"ns"`, `"namespace":"ns","labels":{"team":"a"}`, 1)
	suspended := strings.Replace(validScheduledJob, `"schedule":"@hourly"`, `"schedule":"@hourly","suspend":true`, 1)
	trigger := `{"apiVersion":"batch.almanac.dev/v1alpha1","kind":"EventJob","metadata":{"name":"a","namespace":"ns"},` +
		`"spec":{"trigger":{"apiVersion":"batch/v1","kind":"CronJob","name":"%s","type":"Complete"},` +
		`"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox"}],"restartPolicy":"Never"}}}}}}`
	for _, tt := range []struct {
		name, user, obj, old string
		rules                apiadmission.Rules
		// refused is the start of the refusal's cause; empty when admitted.
		refused string
	}{
		{name: "at moved to a minute from now", user: "sam", obj: atNow, old: atJune,
			refused: `spec.at: user "sam" may not create Jobs (batch/v1 jobs) in namespace "ns"`},
		{name: "a schedule of every minute", user: "sam", obj: everyMinute, old: validScheduledJob,
			refused: `spec.schedule: user "sam" may not create Jobs (batch/v1 jobs) in namespace "ns"`},
		{name: "resumed", user: "sam", obj: validScheduledJob, old: suspended, refused: `spec.suspend: user "sam" may not create Jobs`},
		{name: "an EventJob's trigger", user: "sam", obj: fmt.Sprintf(trigger, "other"), old: fmt.Sprintf(trigger, "hello"), rules: ejRules,
			refused: `spec.trigger: user "sam" may not create Jobs`},
		{name: "labels only", user: "sam", obj: labelled, old: validScheduledJob},
		{name: "suspended", user: "sam", obj: suspended, old: validScheduledJob},
		{name: "at moved by one who may create Jobs", user: "jo", obj: atNow, old: atJune},
		{name: "a schedule of every minute by one who may create Jobs", user: "jo", obj: everyMinute, old: validScheduledJob},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rules := tt.rules
			if rules == nil {
				rules = sjRules
			}
			resp := handle(rules, tt.user, tt.obj, tt.old)
			switch {
			case tt.refused == "" && !resp.Allowed:
				t.Errorf("refused: %v", resp.Result)
			case tt.refused != "" && resp.Allowed:
				t.Errorf("admitted; want refused with %q", tt.refused)
			case tt.refused != "" && (resp.Result.Code != http.StatusForbidden || !strings.Contains(resp.Result.Message, "is forbidden: "+tt.refused)):
				t.Errorf("refused with %d %q; want 403 with %q", resp.Result.Code, resp.Result.Message, tt.refused)
			}
		})
	}
}

// fanIn makes an EventJob's triggers the ScheduledJobs named, in place of its trigger.
func fanIn(names ...string) func(*batchv1alpha1.EventJob) {
	return func(o *batchv1alpha1.EventJob) {
		o.Spec.Trigger = batchv1alpha1.Trigger{}
		o.Spec.Triggers = nil
		for _, n := range names {
			o.Spec.Triggers = append(o.Spec.Triggers, batchv1alpha1.Trigger{APIVersion: batchv1alpha1.GroupVersion.String(), Kind: batchv1alpha1.TriggerKindScheduledJob, Name: n, Type: batchv1alpha1.TriggerTypeComplete})
		}
		o.Spec.FanIn = &batchv1alpha1.FanIn{Require: batchv1alpha1.FanInAllOf, PairBy: batchv1alpha1.FanInPairBySlot, OnFailure: batchv1alpha1.FanInSkip}
	}
}

// TestSleepDelegatedActions: a Sleep is checked on create and on every change of its spec but
// one that only suspends it; it needs patch on each kind, the scale subresource of a kind that
// sleeps through it, and create on Jobs when it names ScheduledJobs or EventJobs.
func TestSleepDelegatedActions(t *testing.T) {
	s := &sleepv1alpha1.Sleep{Spec: sleepv1alpha1.SleepSpec{
		Asleep: []sleepv1alpha1.Window{{Type: sleepv1alpha1.WindowDaily, StartTime: "20:00", EndTime: "07:00"}},
		Kinds: []sleepv1alpha1.WorkloadKind{{APIVersion: "apps/v1", Kind: "Deployment"}, {APIVersion: "batch.almanac.dev/v1alpha1", Kind: "ScheduledJob"},
			{APIVersion: "argoproj.io/v1alpha1", Kind: "Rollout"}},
	}}
	text := func(ds []Delegated) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.Verb+" "+d.Group+"/"+d.Resource+"/"+d.Subresource+" "+d.Kind)
		}
		return out
	}
	path, actions := DelegatedActions(s, nil)
	want := []string{"patch apps/deployments/ Deployment", "create batch/jobs/ Job", "patch batch.almanac.dev/scheduledjobs/ ScheduledJob",
		"patch argoproj.io// Rollout", "patch argoproj.io//scale Rollout"}
	if path.String() != "spec.kinds" || !slices.Equal(text(actions), want) {
		t.Errorf("create: %s %v, want spec.kinds %v", path, text(actions), want)
	}
	suspended := s.DeepCopy()
	suspended.Spec.Suspend = true
	if _, actions := DelegatedActions(suspended, s); len(actions) != 0 {
		t.Errorf("suspending is checked: %v", text(actions))
	}
	if _, actions := DelegatedActions(s, suspended); len(actions) == 0 {
		t.Error("resuming is not checked")
	}
	later := s.DeepCopy()
	later.Spec.Asleep[0].StartTime = "12:00"
	if _, actions := DelegatedActions(later, s); len(actions) == 0 {
		t.Error("moving the windows is not checked")
	}
	labelled := s.DeepCopy()
	labelled.Labels = map[string]string{"team": "a"}
	if _, actions := DelegatedActions(labelled, s); len(actions) != 0 {
		t.Errorf("a label is checked: %v", text(actions))
	}
}
