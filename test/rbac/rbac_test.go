package rbac_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/api/scheme"
	"github.com/almanac-dev/almanac/commands/check"
)

// The objects of each kind, as a namespace user writes them.

func scheduledJob(name string) *batchv1alpha1.ScheduledJob {
	return &batchv1alpha1.ScheduledJob{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1alpha1.ScheduledJobSpec{Schedule: "30 2 * * *", TimeZone: "Europe/Berlin", JobPolicy: batchv1alpha1.JobPolicy{
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "report", Image: "busybox", Command: []string{"true"}}},
			}}}},
		}},
	}
}

func eventJob(name string) *batchv1alpha1.EventJob {
	return &batchv1alpha1.EventJob{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1alpha1.EventJobSpec{
			Trigger: batchv1alpha1.Trigger{Kind: batchv1alpha1.TriggerKindCronJob, Name: "hello"},
			JobPolicy: batchv1alpha1.JobPolicy{JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyOnFailure,
				Containers:    []corev1.Container{{Name: "after", Image: "busybox", Command: []string{"true"}}},
			}}}}},
		},
	}
}

func autoscaler(name string) *autoscalingv1alpha1.ScheduledPodAutoscaler {
	return &autoscalingv1alpha1.ScheduledPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: autoscalingv1alpha1.ScheduledPodAutoscalerSpec{HorizontalPodAutoscalerSpec: &autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: name},
			MaxReplicas:    10,
		}},
	}
}

func schedule(name, autoscaler string) *autoscalingv1alpha1.Schedule {
	return &autoscalingv1alpha1.Schedule{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: autoscalingv1alpha1.ScheduleSpec{
			ScaleTargetRef: autoscalingv1alpha1.ScaleTargetReference{Name: autoscaler},
			Type:           autoscalingv1alpha1.ScheduleTypeDaily, StartTime: "09:00", EndTime: "17:00", TimeZone: "Europe/Berlin",
			MinReplicas: ptr.To(int32(3)),
		},
	}
}

// everyKind returns one object of each of almanac's kinds.
func everyKind(suffix string) []client.Object {
	return []client.Object{autoscaler("web" + suffix), schedule("web-daily"+suffix, "web"+suffix), scheduledJob("nightly" + suffix), eventJob("after-hello" + suffix)}
}

// subject is a user, group or ServiceAccount to bind.
type subject = rbacv1.Subject

func userSubject(name string) subject {
	return subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}
}

func groupSubject(name string) subject {
	return subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: name}
}

// namespace creates a namespace for one test.
func namespace(t testing.TB, name string) string {
	t.Helper()
	if err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

// bind binds the ClusterRole (or, with a "Role/" prefix, the Role) to s in ns.
func bind(t testing.TB, ns, role string, s subject) {
	t.Helper()
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}
	if name, ok := strings.CutPrefix(role, "Role/"); ok {
		ref.Kind, ref.Name = "Role", name
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{GenerateName: strings.ToLower(ref.Name + "-"), Namespace: ns},
		RoleRef:    ref,
		Subjects:   []rbacv1.Subject{s},
	}
	if err := env.Client.Create(context.Background(), rb); err != nil {
		t.Fatal(err)
	}
}

// allowJobs creates the Role "jobs" in ns: create on batch Jobs, nothing else.
func allowJobs(t *testing.T, ns string) {
	t.Helper()
	if err := env.Client.Create(context.Background(), &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "jobs", Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"create"}}},
	}); err != nil {
		t.Fatal(err)
	}
}

// userClient is a client that authenticates as name in groups (a client certificate).
func userClient(t testing.TB, name string, groups ...string) client.Client {
	t.Helper()
	cfg, err := env.AddUser(name, groups...)
	if err != nil {
		t.Fatal(err)
	}
	return newClient(t, cfg)
}

func newClient(t testing.TB, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme, Mapper: env.Client.RESTMapper()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// waitAllowed waits until the API server's RBAC authorizer, which reads bindings from its
// informers, lets user do verb on resource in ns.
func waitAllowed(t testing.TB, user authenticationv1.UserInfo, ns, verb, group, resource string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user.Username, Groups: user.Groups,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: group, Resource: resource},
		}}
		if err := env.Client.Create(context.Background(), sar); err != nil {
			t.Fatal(err)
		}
		if sar.Status.Allowed {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s in %v may still not %s %s.%s in %s", user.Username, user.Groups, verb, resource, group, ns)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func create(c client.Client, ns string, obj client.Object, opts ...client.CreateOption) error {
	obj.SetNamespace(ns)
	return c.Create(context.Background(), obj, opts...)
}

func kindOf(obj client.Object) string {
	gvks, _, _ := scheme.Scheme.ObjectKinds(obj)
	return gvks[0].Kind
}

// refusedByPermissionCheck fails the test unless err is the validating webhook's permission
// refusal (403, through the webhook) with the given message.
func refusedByPermissionCheck(t *testing.T, err error, webhook, want string) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Fatalf("got %v, want 403 Forbidden from the permission check", err)
	}
	prefix := fmt.Sprintf("admission webhook %q denied the request: ", webhook)
	if !strings.HasPrefix(err.Error(), prefix) {
		t.Errorf("the refusal does not come from the webhook %s: %v", webhook, err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("the refusal\n  %v\nlacks\n  %s", err, want)
	}
}

// TestEditAndAdminUsersUseEveryKind: a user bound only to the built-in edit (or admin)
// ClusterRole in a namespace creates, updates and deletes each of almanac's kinds there: the
// chart's roles aggregate into them, and those roles also grant the Jobs and
// HorizontalPodAutoscalers that the permission check asks about. Status stays the
// manager's.
func TestEditAndAdminUsersUseEveryKind(t *testing.T) {
	ctx := context.Background()
	for _, role := range []string{"edit", "admin"} {
		t.Run(role, func(t *testing.T) {
			ns := namespace(t, "team-"+role)
			name := role + "-user"
			bind(t, ns, role, userSubject(name))
			waitAllowed(t, authenticationv1.UserInfo{Username: name}, ns, "create", "batch.almanac.dev", "scheduledjobs")
			c := userClient(t, name)
			for _, obj := range everyKind("") {
				if err := create(c, ns, obj); err != nil {
					t.Fatalf("%s in %s: create %s: %v", name, ns, kindOf(obj), err)
				}
			}
			sj := &batchv1alpha1.ScheduledJob{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nightly"}, sj); err != nil {
				t.Fatal(err)
			}
			sj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image = "busybox:1.37"
			if err := c.Update(ctx, sj); err != nil {
				t.Errorf("%s: update the Job template: %v", name, err)
			}
			sj.Status.Phase = batchv1alpha1.ScheduledJobPhaseRunning
			if err := c.Status().Update(ctx, sj); !apierrors.IsForbidden(err) {
				t.Errorf("%s: update status = %v, want Forbidden (status is the manager's)", name, err)
			}
			if err := c.Delete(ctx, &batchv1alpha1.EventJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "after-hello"}}); err != nil {
				t.Errorf("%s: delete an EventJob: %v", name, err)
			}
			// Only in that namespace.
			if err := create(c, "default", scheduledJob("elsewhere")); !apierrors.IsForbidden(err) || strings.Contains(err.Error(), "denied the request") {
				t.Errorf("%s: create in another namespace = %v, want Forbidden by RBAC", name, err)
			}
		})
	}
}

// TestAlmanacEditWithoutJobsIsRefused: a user bound only to almanac-edit may, by RBAC, create
// ScheduledJobs; the permission check refuses them because the user may not create Jobs, with
// a message that names the permission and how to grant it, and nothing is stored. Likewise an
// EventJob, and a ScheduledPodAutoscaler from a user who may not create HorizontalPodAutoscalers.
// Edits that do not change what almanac creates stay open to that user; changing the Job
// template does not.
func TestAlmanacEditWithoutJobsIsRefused(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "team-almanac")
	bind(t, ns, "almanac-edit", userSubject("amy"))
	waitAllowed(t, authenticationv1.UserInfo{Username: "amy"}, ns, "create", "batch.almanac.dev", "scheduledjobs")
	amy := userClient(t, "amy")

	err := create(amy, ns, scheduledJob("nightly"))
	refusedByPermissionCheck(t, err, "vscheduledjob.batch.almanac.dev",
		`scheduledjobs.batch.almanac.dev "nightly" is forbidden: spec.jobTemplate: user "amy" may not create Jobs (batch/v1 jobs) in namespace "team-almanac", `+
			`and almanac creates this ScheduledJob's Jobs on behalf of whoever writes spec.jobTemplate, so it accepts it only from users who may do that themselves: `+
			`grant "create" on jobs.batch in namespace "team-almanac", e.g. bind the edit ClusterRole: `+
			`kubectl create rolebinding amy-edit --clusterrole=edit --user=amy --namespace=team-almanac`)
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nightly"}, &batchv1alpha1.ScheduledJob{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused ScheduledJob was stored: %v", err)
	}
	// A server-side dry run gets the same answer.
	err = create(amy, ns, scheduledJob("nightly"), client.DryRunAll)
	refusedByPermissionCheck(t, err, "vscheduledjob.batch.almanac.dev", `user "amy" may not create Jobs`)

	err = create(amy, ns, eventJob("after-hello"))
	refusedByPermissionCheck(t, err, "veventjob.batch.almanac.dev",
		`eventjobs.batch.almanac.dev "after-hello" is forbidden: spec.jobTemplate: user "amy" may not create Jobs (batch/v1 jobs) in namespace "team-almanac", `+
			`and almanac creates this EventJob's Jobs on behalf of whoever writes spec.jobTemplate`)

	err = create(amy, ns, autoscaler("web"))
	refusedByPermissionCheck(t, err, "vscheduledpodautoscaler.autoscaling.almanac.dev",
		`scheduledpodautoscalers.autoscaling.almanac.dev "web" is forbidden: spec.horizontalPodAutoscalerSpec: user "amy" may not create or patch HorizontalPodAutoscalers `+
			`(autoscaling/v2 horizontalpodautoscalers) in namespace "team-almanac", and almanac creates and patches this ScheduledPodAutoscaler's HorizontalPodAutoscaler `+
			`on behalf of whoever writes spec.horizontalPodAutoscalerSpec, so it accepts it only from users who may do that themselves: `+
			`grant "create" and "patch" on horizontalpodautoscalers.autoscaling in namespace "team-almanac"`)

	// A Schedule only moves the bounds of an autoscaler whose spec passed the check.
	if err := create(amy, ns, schedule("web-daily", "web")); err != nil {
		t.Errorf("amy: create a Schedule: %v", err)
	}

	// An object someone allowed wrote: amy may suspend it and label it, not change its Job,
	// nor when it runs, nor resume it (batchv1alpha1.ScheduledJob.StartsJobs).
	if err := create(env.Client, ns, scheduledJob("by-admin")); err != nil {
		t.Fatal(err)
	}
	sj := &batchv1alpha1.ScheduledJob{}
	if err := amy.Get(ctx, client.ObjectKey{Namespace: ns, Name: "by-admin"}, sj); err != nil {
		t.Fatal(err)
	}
	sj.Labels = map[string]string{"owner": "amy"}
	sj.Spec.Suspend = true
	if err := amy.Update(ctx, sj); err != nil {
		t.Errorf("amy: update labels and suspend: %v", err)
	}
	refused := func(field string, change func(*batchv1alpha1.ScheduledJob)) {
		t.Helper()
		changed := sj.DeepCopy()
		change(changed)
		refusedByPermissionCheck(t, amy.Update(ctx, changed), "vscheduledjob.batch.almanac.dev",
			`scheduledjobs.batch.almanac.dev "by-admin" is forbidden: `+field+`: user "amy" may not create Jobs`)
	}
	refused("spec.jobTemplate", func(o *batchv1alpha1.ScheduledJob) {
		o.Spec.JobTemplate.Spec.Template.Spec.ServiceAccountName = "deployer"
	})
	refused("spec.schedule", func(o *batchv1alpha1.ScheduledJob) { o.Spec.Schedule = "* * * * *" })
	refused("spec.suspend", func(o *batchv1alpha1.ScheduledJob) { o.Spec.Suspend = false })

	// With create on Jobs (and still nothing on HorizontalPodAutoscalers): Jobs yes, HPAs no.
	allowJobs(t, ns)
	bind(t, ns, "Role/jobs", userSubject("amy"))
	waitAllowed(t, authenticationv1.UserInfo{Username: "amy"}, ns, "create", "batch", "jobs")
	for _, obj := range []client.Object{scheduledJob("nightly"), eventJob("after-hello")} {
		if err := create(amy, ns, obj); err != nil {
			t.Errorf("amy, now allowed to create Jobs: create %s: %v", kindOf(obj), err)
		}
	}
	err = create(amy, ns, autoscaler("web"))
	refusedByPermissionCheck(t, err, "vscheduledpodautoscaler.autoscaling.almanac.dev", `user "amy" may not create or patch HorizontalPodAutoscalers`)
}

// TestViewUsersReadStatus: a user bound to view reads almanac's objects and their status, and
// may change nothing.
func TestViewUsersReadStatus(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "team-view")
	if err := create(env.Client, ns, scheduledJob("nightly")); err != nil {
		t.Fatal(err)
	}
	sj := &batchv1alpha1.ScheduledJob{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nightly"}, sj); err != nil {
		t.Fatal(err)
	}
	last := metav1.NewTime(time.Date(2027, time.January, 15, 1, 30, 0, 0, time.UTC))
	sj.Status = batchv1alpha1.ScheduledJobStatus{Phase: batchv1alpha1.ScheduledJobPhasePending, LastScheduleTime: &last, MissedRuns: 2}
	if err := env.Client.Status().Update(ctx, sj); err != nil {
		t.Fatal(err)
	}
	bind(t, ns, "view", userSubject("vic"))
	waitAllowed(t, authenticationv1.UserInfo{Username: "vic"}, ns, "get", "batch.almanac.dev", "scheduledjobs/status")
	vic := userClient(t, "vic")

	got := &batchv1alpha1.ScheduledJob{}
	if err := vic.SubResource("status").Get(ctx, sj, got); err != nil {
		t.Fatalf("vic: get scheduledjobs/status: %v", err)
	}
	if got.Status.Phase != batchv1alpha1.ScheduledJobPhasePending || got.Status.MissedRuns != 2 || !got.Status.LastScheduleTime.Equal(&last) {
		t.Errorf("vic reads status %+v, want what was written", got.Status)
	}
	lists := []client.ObjectList{&batchv1alpha1.ScheduledJobList{}, &batchv1alpha1.EventJobList{}, &autoscalingv1alpha1.ScheduledPodAutoscalerList{}, &autoscalingv1alpha1.ScheduleList{}}
	for _, l := range lists {
		if err := vic.List(ctx, l, client.InNamespace(ns)); err != nil {
			t.Errorf("vic: list %T: %v", l, err)
		}
	}
	for _, obj := range everyKind("-by-vic") {
		if err := create(vic, ns, obj); !apierrors.IsForbidden(err) || strings.Contains(err.Error(), "denied the request") {
			t.Errorf("vic: create %s = %v, want Forbidden by RBAC", kindOf(obj), err)
		}
	}
	got.Spec.Suspend = true
	if err := vic.Update(ctx, got); !apierrors.IsForbidden(err) {
		t.Errorf("vic: update = %v, want Forbidden", err)
	}
}

// TestServiceAccountsGroupsAndImpersonation: the permission check asks about the request's
// user exactly as the API server authenticated it: a ServiceAccount (with a real token) bound
// to edit is admitted and one bound only to almanac-edit is refused with a hint for
// ServiceAccounts; a user allowed only through a group binding is admitted; a cluster admin
// impersonating a user without Jobs is refused, as that user.
func TestServiceAccountsGroupsAndImpersonation(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "team-sa")
	for _, name := range []string{"deployer", "reader"} {
		if err := env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	bind(t, ns, "edit", subject{Kind: rbacv1.ServiceAccountKind, Name: "deployer", Namespace: ns})
	bind(t, ns, "almanac-edit", subject{Kind: rbacv1.ServiceAccountKind, Name: "reader", Namespace: ns})
	bind(t, ns, "edit", groupSubject("platform-team"))
	bind(t, ns, "almanac-edit", userSubject("mallory"))
	saGroups := []string{"system:serviceaccounts", "system:serviceaccounts:" + ns}
	waitAllowed(t, authenticationv1.UserInfo{Username: "system:serviceaccount:" + ns + ":deployer", Groups: saGroups}, ns, "create", "batch", "jobs")
	waitAllowed(t, authenticationv1.UserInfo{Username: "system:serviceaccount:" + ns + ":reader", Groups: saGroups}, ns, "create", "batch.almanac.dev", "scheduledjobs")
	waitAllowed(t, authenticationv1.UserInfo{Username: "gus", Groups: []string{"platform-team"}}, ns, "create", "batch", "jobs")
	waitAllowed(t, authenticationv1.UserInfo{Username: "mallory"}, ns, "create", "batch.almanac.dev", "scheduledjobs")

	deployer := newClient(t, serviceAccountConfig(t, ns, "deployer"))
	for _, obj := range everyKind("-sa") {
		if err := create(deployer, ns, obj); err != nil {
			t.Errorf("ServiceAccount deployer (edit): create %s: %v", kindOf(obj), err)
		}
	}
	reader := newClient(t, serviceAccountConfig(t, ns, "reader"))
	refusedByPermissionCheck(t, create(reader, ns, scheduledJob("by-reader")), "vscheduledjob.batch.almanac.dev",
		`spec.jobTemplate: ServiceAccount team-sa/reader may not create Jobs (batch/v1 jobs) in namespace "team-sa"`)
	refusedByPermissionCheck(t, create(reader, ns, scheduledJob("by-reader")), "vscheduledjob.batch.almanac.dev",
		`kubectl create rolebinding reader-edit --clusterrole=edit --serviceaccount=team-sa:reader --namespace=team-sa`)

	gus := userClient(t, "gus", "platform-team")
	for _, obj := range everyKind("-gus") {
		if err := create(gus, ns, obj); err != nil {
			t.Errorf("gus (edit through the group platform-team): create %s: %v", kindOf(obj), err)
		}
	}

	asMallory := rest.CopyConfig(env.Config)
	asMallory.Impersonate = rest.ImpersonationConfig{UserName: "mallory"}
	refusedByPermissionCheck(t, create(newClient(t, asMallory), ns, scheduledJob("by-mallory")), "vscheduledjob.batch.almanac.dev",
		`user "mallory" may not create Jobs`)
}

// serviceAccountConfig authenticates with a token that the API server issued for the
// ServiceAccount (TokenRequest), as a Pod's would.
func serviceAccountConfig(t *testing.T, ns, name string) *rest.Config {
	t.Helper()
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if err := env.Client.SubResource("token").Create(context.Background(), sa, tr); err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(env.Config)
	cfg.BearerToken = tr.Status.Token
	return cfg
}

// TestAggregatedRolesReachTheBuiltInRoles: the chart's three roles are folded into admin, edit
// and view as their labels say, and status is readable, never writable, through them.
func TestAggregatedRolesReachTheBuiltInRoles(t *testing.T) {
	ctx := context.Background()
	has := func(role, group, resource, verb string) bool {
		cr := &rbacv1.ClusterRole{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: role}, cr); err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(cr.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb)
		})
	}
	for _, tc := range []struct {
		role, resource, verb string
		want                 bool
	}{
		{"admin", "scheduledjobs", "create", true},
		{"edit", "scheduledjobs", "create", true},
		{"edit", "scheduledjobs", "deletecollection", true},
		{"edit", "scheduledjobs/status", "get", true}, // through view
		{"edit", "scheduledjobs/status", "update", false},
		{"edit", "scheduledjobs/status", "patch", false},
		{"view", "scheduledjobs", "create", false},
		{"view", "scheduledjobs/status", "get", true},
	} {
		if got := has(tc.role, "batch.almanac.dev", tc.resource, tc.verb); got != tc.want {
			t.Errorf("ClusterRole %s grants %s on %s: %v, want %v", tc.role, tc.verb, tc.resource, got, tc.want)
		}
	}
}

// TestChartCheckPassesWithThePermissionCheck: the chart's post-install hook runs `almanac
// check` as its own ServiceAccount, which may create ScheduledJobs but not Jobs. Its probe, a
// server-side dry-run create, is refused by the permission check, which still proves the
// webhooks answered: the check passes and says why, so the default install keeps working
// without giving a hook account the right to run Pods.
func TestChartCheckPassesWithThePermissionCheck(t *testing.T) {
	ctx := context.Background()
	namespace(t, releaseNS)
	objs, err := renderChart("--show-only", "templates/check.yaml", "--show-only", "templates/generated/check-rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs = slices.DeleteFunc(objs, func(o *unstructured.Unstructured) bool { return o.GetKind() == "Job" })
	if err := apply(ctx, objs); err != nil {
		t.Fatal(err)
	}
	user := authenticationv1.UserInfo{Username: "system:serviceaccount:" + releaseNS + ":almanac-check", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + releaseNS}}
	waitAllowed(t, user, releaseNS, "create", "batch.almanac.dev", "scheduledjobs")
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user.Username, Groups: user.Groups,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: releaseNS, Verb: "create", Group: "batch", Resource: "jobs"}}}
	if err := env.Client.Create(ctx, sar); err != nil || sar.Status.Allowed {
		t.Fatalf("the chart's check account may create Jobs (%v, %v); it must not", sar.Status.Allowed, err)
	}

	cfg := serviceAccountConfig(t, releaseNS, "almanac-check")
	kubeconfig := clientcmdapi.NewConfig()
	kubeconfig.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: env.Config.CAData}
	kubeconfig.AuthInfos["check"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kubeconfig.Contexts["check"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "check", Namespace: releaseNS}
	kubeconfig.CurrentContext = "check"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kubeconfig, path); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	// The chart's account reads the webhook configurations by the chart's name, which the
	// configurations of this API server (config/webhook) do not have: that check is left out.
	err = check.Run(ctx, check.Options{Kubeconfig: path, Timeout: 10 * time.Second, Interval: 500 * time.Millisecond}, &out)
	t.Logf("almanac check as the chart's check account:\n%s", out.String())
	if err != nil {
		t.Fatalf("almanac check as the chart's check account: %v", err)
	}
	for _, want := range []string{
		"✓ Admission    the webhooks answered a dry-run create of a ScheduledJob in almanac-system; the permission check refused it because this account may not create Jobs there",
		"almanac is ready.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output lacks %q", want)
		}
	}
}
