package webhooks

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	apiadmission "github.com/almanac-dev/almanac/api/admission"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
)

// TestCalendarWebhooks: a ClusterCalendar is defaulted and validated like the other kinds,
// and, having no namespace, is served whatever namespaces the webhooks are limited to; a
// namespaced Calendar in a namespace that is not served is refused like the others.
func TestCalendarWebhooks(t *testing.T) {
	served := newServedNamespaces([]string{"team-a"})
	rules := apiadmission.RulesFor(calendarv1alpha1.GroupVersion.WithKind("ClusterCalendar"))
	v := &validator{rules: rules, clock: clocktesting.NewFakePassiveClock(now), objects: lookupOf(), served: served}
	m := &mutator{rules: rules, served: served}
	const valid = `{"apiVersion":"almanac.dev/v1alpha1","kind":"ClusterCalendar","metadata":{"name":"a"},
		"spec":{"timeZone":"europe/berlin","days":[{"date":"12-25"}]}}`
	const invalid = `{"apiVersion":"almanac.dev/v1alpha1","kind":"ClusterCalendar","metadata":{"name":"a"},
		"spec":{"timeZone":"UTC","days":[{"date":"12-25"},{"date":"2027-02-29"}]}}`
	clusterRequest := func(obj string) admissionv1.AdmissionRequest {
		r := request(admissionv1.Create, obj, "")
		r.Namespace = ""
		return r.AdmissionRequest
	}

	req := request(admissionv1.Create, valid, "")
	req.AdmissionRequest = clusterRequest(valid)
	resp := m.Handle(context.Background(), req)
	if !resp.Allowed || len(resp.Patches) != 1 || resp.Patches[0].Path != "/spec/timeZone" || resp.Patches[0].Value != "Europe/Berlin" {
		t.Errorf("mutating: got %+v %+v", resp.AdmissionResponse, resp.Patches)
	}
	if resp := v.Handle(context.Background(), req); !resp.Allowed {
		t.Errorf("validating: got %+v", resp.AdmissionResponse)
	}

	req.AdmissionRequest = clusterRequest(invalid)
	resp = v.Handle(context.Background(), req)
	want := &metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid,
		Message: `ClusterCalendar.almanac.dev "a" is invalid: spec.days[1].date: Invalid value: "2027-02-29": "2027-02-29" is not a valid date: February 2027 has 28 days`,
		Details: &metav1.StatusDetails{Name: "a", Group: "almanac.dev", Kind: "ClusterCalendar", Causes: []metav1.StatusCause{{
			Type: metav1.CauseTypeFieldValueInvalid, Field: "spec.days[1].date",
			Message: `Invalid value: "2027-02-29": "2027-02-29" is not a valid date: February 2027 has 28 days`,
		}}},
	}
	if resp.Allowed {
		t.Fatal("invalid: allowed")
	}
	if diff := cmp.Diff(want, resp.Result); diff != "" {
		t.Errorf("invalid: status (-want +got):\n%s", diff)
	}

	// A Calendar in a namespace that is not served.
	calendarRules := apiadmission.RulesFor(calendarv1alpha1.GroupVersion.WithKind("Calendar"))
	cv := &validator{rules: calendarRules, clock: clocktesting.NewFakePassiveClock(now), objects: lookupOf(), served: served}
	req = request(admissionv1.Create, `{"apiVersion":"almanac.dev/v1alpha1","kind":"Calendar","metadata":{"name":"a","namespace":"team-c"},"spec":{"timeZone":"UTC"}}`, "")
	req.Namespace = "team-c"
	if resp := cv.Handle(context.Background(), req); resp.Allowed || resp.Result.Code != http.StatusForbidden {
		t.Errorf("Calendar in team-c: got %+v", resp.AdmissionResponse)
	}
}
