package bench_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// noopWebhooksLabel on a namespace puts the no-op webhooks in the path of its Schedules;
// patchingWebhooksLabel puts the no-op pair in whose mutating webhook answers with a fixed
// patch.
const (
	noopWebhooksLabel     = "bench.almanac.dev/noop-webhooks"
	patchingWebhooksLabel = "bench.almanac.dev/patching-noop-webhooks"
)

// startNoopWebhooks serves two pairs of a mutating and a validating webhook that decode the
// AdmissionReview and its object and admit it, over TLS and HTTP/1.1 as the manager serves
// them, and registers them for Schedules: the pair in namespaces labelled noopWebhooksLabel
// changes nothing, what any pair of webhooks costs a create on this API server; the pair in
// namespaces labelled patchingWebhooksLabel answers every create with patch (a JSON patch),
// what any pair costs whose mutating webhook changes the object: the API server then applies
// the patch and runs its mutating admission plugins again. These are the floors under what
// almanac's webhooks add.
// It returns the number of reviews answered.
func startNoopWebhooks(tb testing.TB, patch []byte) *atomic.Int64 {
	tb.Helper()
	var answered atomic.Int64
	admit := func(patch []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var review admissionv1.AdmissionReview
			if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
				http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
				return
			}
			var obj map[string]any
			if err := json.Unmarshal(review.Request.Object.Raw, &obj); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
			if patch != nil {
				review.Response.Patch, review.Response.PatchType = patch, ptr.To(admissionv1.PatchTypeJSONPatch)
			}
			review.Request = nil
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(&review)
			answered.Add(1)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/mutate", admit(nil))
	mux.Handle("/mutate-patch", admit(patch))
	mux.Handle("/validate", admit(nil))
	srv := httptest.NewUnstartedServer(mux)
	srv.EnableHTTP2 = false
	srv.StartTLS()
	tb.Cleanup(srv.Close)
	caBundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	selector := func(label string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: label, Operator: metav1.LabelSelectorOpExists}}}
	}
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule: admissionregistrationv1.Rule{
			APIGroups: []string{"autoscaling.almanac.dev"}, APIVersions: []string{"v1alpha1"}, Resources: []string{"schedules"},
		},
	}}
	clientConfig := func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{URL: ptr.To(srv.URL + path), CABundle: caBundle}
	}
	none := admissionregistrationv1.SideEffectClassNone
	fail := admissionregistrationv1.Fail
	ctx := context.Background()
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-noop"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "mutate.noop.bench.almanac.dev", ClientConfig: clientConfig("/mutate"), Rules: rules,
			NamespaceSelector: selector(noopWebhooksLabel), SideEffects: &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"},
		}, {
			Name: "mutate.patching.bench.almanac.dev", ClientConfig: clientConfig("/mutate-patch"), Rules: rules,
			NamespaceSelector: selector(patchingWebhooksLabel), SideEffects: &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"},
		}},
	}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-noop"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "validate.noop.bench.almanac.dev", ClientConfig: clientConfig("/validate"), Rules: rules,
			NamespaceSelector: selector(noopWebhooksLabel), SideEffects: &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"},
		}, {
			Name: "validate.patching.bench.almanac.dev", ClientConfig: clientConfig("/validate"), Rules: rules,
			NamespaceSelector: selector(patchingWebhooksLabel), SideEffects: &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"},
		}},
	}
	if err := env.Client.Create(ctx, mutating); err != nil {
		tb.Fatal(err)
	}
	if err := env.Client.Create(ctx, validating); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = env.Client.Delete(ctx, mutating)
		_ = env.Client.Delete(ctx, validating)
	})
	return &answered
}
