package webhooks

import (
	"context"
	"errors"
	"net/http"
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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	apiadmission "github.com/almanac-dev/almanac/api/admission"
	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
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
	deleted := sjWith(func(o *batchv1alpha1.ScheduledJob) { o.DeletionTimestamp = &metav1.Time{Time: now} })
	jobs := []Delegated{createJobs}
	hpas := []Delegated{createHPAs, patchHPAs}
	tests := []struct {
		name      string
		obj, old  client.Object
		wantField string
		want      []Delegated
	}{
		{name: "ScheduledJob created", obj: sj(), wantField: "spec.jobTemplate", want: jobs},
		{name: "ScheduledJob: labels changed", obj: sjWith(func(o *batchv1alpha1.ScheduledJob) { o.Labels = map[string]string{"team": "a"} }), old: sj()},
		{name: "ScheduledJob: schedule, suspend and history changed", obj: sjWith(func(o *batchv1alpha1.ScheduledJob) {
			o.Spec.Schedule, o.Spec.Suspend, o.Spec.SuccessfulJobsHistoryLimit = "@daily", true, ptr.To(int32(9))
		}), old: sj()},
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
		{name: "EventJob created", obj: ej(nil), wantField: "spec.jobTemplate", want: jobs},
		{name: "EventJob: the trigger changed", obj: ej(func(o *batchv1alpha1.EventJob) { o.Spec.Trigger.Name = "other" }), old: ej(nil)},
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
)

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
	a := sar.Spec.ResourceAttributes
	sar.Status.Allowed = r.allowed[a.Verb+" "+a.Resource]
	return nil
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
	suspended := strings.Replace(validScheduledJob, `"schedule":"@hourly"`, `"schedule":"@daily","suspend":true`, 1)
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
		name: "an update that leaves the template alone", rules: sjRules, req: withUser(request(admissionv1.Update, suspended, validScheduledJob), alice),
		reviewer: &reviewer{},
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
				v.permissions = &permissionCheck{review: tt.reviewer.review, timeout: PermissionCheckTimeout}
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
				asked = append(asked, s.ResourceAttributes.Verb+" "+s.ResourceAttributes.Resource)
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
