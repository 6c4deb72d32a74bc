package scheme

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestKnowsWhatAlmanacReadsAndWrites lists the kinds that the manager, the commands, the chart
// and the tests read or write through a client with this scheme; a client cannot encode or
// decode a kind that the scheme does not know.
func TestKnowsWhatAlmanacReadsAndWrites(t *testing.T) {
	for _, gvk := range []schema.GroupVersionKind{
		{Group: "autoscaling.almanac.dev", Version: "v1alpha1", Kind: "ScheduledPodAutoscaler"},
		{Group: "autoscaling.almanac.dev", Version: "v1alpha1", Kind: "Schedule"},
		{Group: "batch.almanac.dev", Version: "v1alpha1", Kind: "ScheduledJob"},
		{Group: "batch.almanac.dev", Version: "v1alpha1", Kind: "EventJob"},
		{Version: "v1", Kind: "Namespace"},
		{Version: "v1", Kind: "Pod"},
		{Version: "v1", Kind: "Secret"},
		{Version: "v1", Kind: "Service"},
		{Version: "v1", Kind: "ServiceAccount"},
		{Version: "v1", Kind: "Event"},
		{Group: "apps", Version: "v1", Kind: "Deployment"},
		{Group: "batch", Version: "v1", Kind: "Job"},
		{Group: "batch", Version: "v1", Kind: "CronJob"},
		{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"},
		{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingWebhookConfiguration"},
		{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"},
		{Group: "admission.k8s.io", Version: "v1", Kind: "AdmissionReview"},
		{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"},
		{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"},
		{Group: "events.k8s.io", Version: "v1", Kind: "Event"},
		{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"},
		{Group: "authentication.k8s.io", Version: "v1", Kind: "TokenReview"},
		{Group: "authorization.k8s.io", Version: "v1", Kind: "SelfSubjectAccessReview"},
	} {
		if !Scheme.Recognizes(gvk) {
			t.Errorf("the scheme does not know %s", gvk)
		}
	}
}
