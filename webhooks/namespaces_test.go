package webhooks

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	apiadmission "github.com/almanac-dev/almanac/api/admission"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

// TestUnservedNamespacesAreRefused: with WithNamespaces, both webhooks refuse an object in
// another namespace, on create and on update alike, with a message that names the namespaces
// served and the chart value; objects in a served namespace are handled as always, and
// deletions (and objects being deleted) are never refused.
func TestUnservedNamespacesAreRefused(t *testing.T) {
	rules := apiadmission.RulesFor(batchv1alpha1.GroupVersion.WithKind("ScheduledJob"))
	served := newServedNamespaces([]string{"team-a", "team-b"})
	rev := &reviewer{allowed: map[string]bool{"create jobs": true}}
	v := &validator{rules: rules, clock: clocktesting.NewFakePassiveClock(now), objects: lookupOf(),
		permissions: &permissionCheck{timeout: PermissionCheckTimeout, review: rev.review}, served: served}
	m := &mutator{rules: rules, served: served}
	obj := func(ns, extra string) string {
		return `{"apiVersion":"batch.almanac.dev/v1alpha1","kind":"ScheduledJob","metadata":{"name":"nightly","namespace":"` + ns + `"` + extra + `},
			"spec":{"schedule":"0 3 * * *","timeZone":"UTC","jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}}}`
	}
	req := func(op admissionv1.Operation, ns, object, old string) admission.Request {
		r := request(op, object, old)
		r.Namespace = ns
		r.Name = "nightly"
		r.Kind = metav1.GroupVersionKind{Group: "batch.almanac.dev", Version: "v1alpha1", Kind: "ScheduledJob"}
		r.Resource = metav1.GroupVersionResource{Group: "batch.almanac.dev", Version: "v1alpha1", Resource: "scheduledjobs"}
		r.UserInfo = authenticationv1.UserInfo{Username: "amy"}
		return r
	}
	want := &metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
		Message: `ScheduledJob "nightly" is in namespace "team-c", which this almanac does not serve (it serves "team-a", "team-b"; chart value watchNamespaces): ` +
			`no almanac controller would act on it there; create it in one of those namespaces, or add "team-c" to watchNamespaces (the manager's --watch-namespaces)`,
		Details: &metav1.StatusDetails{Name: "nightly", Group: "batch.almanac.dev", Kind: "scheduledjobs"},
	}
	for _, op := range []admissionv1.Operation{admissionv1.Create, admissionv1.Update} {
		old := ""
		if op == admissionv1.Update {
			old = obj("team-c", "")
		}
		r := req(op, "team-c", obj("team-c", ""), old)
		for name, resp := range map[string]admission.Response{"mutating": m.Handle(context.Background(), r), "validating": v.Handle(context.Background(), r)} {
			if resp.Allowed || len(resp.Patches) > 0 {
				t.Errorf("%s %s in team-c: allowed", name, op)
				continue
			}
			if diff := cmp.Diff(want, resp.Result); diff != "" {
				t.Errorf("%s %s in team-c: status (-want +got):\n%s", name, op, diff)
			}
		}
	}
	if len(rev.asked) != 0 {
		t.Errorf("%d permission reviews for objects in an unserved namespace, want none", len(rev.asked))
	}
	// Unnamed (generateName) objects are named by their kind.
	r := req(admissionv1.Create, "team-c", obj("team-c", ""), "")
	r.Name = ""
	if resp := v.Handle(context.Background(), r); resp.Allowed || !strings.HasPrefix(resp.Result.Message, `A ScheduledJob is in namespace "team-c"`) {
		t.Errorf("an unnamed object: %+v", resp.Result)
	}

	// Served namespaces: handled as always (defaulted, validated, the permission checked).
	for _, ns := range []string{"team-a", "team-b"} {
		r := req(admissionv1.Create, ns, obj(ns, ""), "")
		if resp := m.Handle(context.Background(), r); !resp.Allowed || len(resp.Patches) == 0 {
			t.Errorf("mutating create in %s: %+v (want allowed and defaulted)", ns, resp.AdmissionResponse)
		}
		if resp := v.Handle(context.Background(), r); !resp.Allowed {
			t.Errorf("validating create in %s: %+v", ns, resp.Result)
		}
	}
	if len(rev.asked) != 2 {
		t.Errorf("%d permission reviews in the served namespaces, want 2", len(rev.asked))
	}

	// Never refused: deletions, and an update of an object being deleted (its finalizers must
	// be removable wherever it is).
	deleting := obj("team-c", `,"deletionTimestamp":"2027-01-01T00:00:00Z","finalizers":["x"]`)
	for _, r := range []admission.Request{req(admissionv1.Delete, "team-c", "", obj("team-c", "")), req(admissionv1.Update, "team-c", deleting, deleting)} {
		if resp := m.Handle(context.Background(), r); !resp.Allowed {
			t.Errorf("mutating %s of an object in team-c being deleted: %+v", r.Operation, resp.Result)
		}
		if resp := v.Handle(context.Background(), r); !resp.Allowed {
			t.Errorf("validating %s of an object in team-c being deleted: %+v", r.Operation, resp.Result)
		}
	}

	// Without WithNamespaces every namespace is served.
	if newServedNamespaces(nil) != nil || newServedNamespaces([]string{}) != nil {
		t.Error("no namespaces given: some namespaces are refused")
	}
	all := &validator{rules: rules, clock: clocktesting.NewFakePassiveClock(now), objects: lookupOf()}
	if resp := all.Handle(context.Background(), req(admissionv1.Create, "team-c", obj("team-c", ""), "")); !resp.Allowed {
		t.Errorf("every namespace served: refused in team-c: %+v", resp.Result)
	}
}
