// Package scheme is the runtime.Scheme that almanac's manager, webhooks, CLI and tests share:
// the built-in Kubernetes groups that almanac reads or writes, CustomResourceDefinitions, and
// almanac's three API groups (almanac.dev in two packages: the calendars and the sleeps).
//
// It lives in api/ so that every package can import it without pulling in a client: it is
// built from the k8s.io/api types alone (client-go's kubernetes/scheme registers every
// built-in group, and api/ never imports client-go). A group that almanac starts to read or
// write is added to builtin below.
package scheme

import (
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
)

// builtin are the built-in groups that almanac, its commands and its tests read or write:
// Pods, Namespaces, Secrets and Events (core); Jobs and CronJobs; HorizontalPodAutoscalers;
// the webhook configurations and their AdmissionReviews; Leases; events.k8s.io Events; the
// chart's Deployment, PodDisruptionBudget and RBAC; and token and access reviews.
var builtin = []func(*runtime.Scheme) error{
	corev1.AddToScheme,
	appsv1.AddToScheme,
	batchv1.AddToScheme,
	autoscalingv1.AddToScheme,
	autoscalingv2.AddToScheme,
	admissionv1.AddToScheme,
	admissionregistrationv1.AddToScheme,
	authenticationv1.AddToScheme,
	authorizationv1.AddToScheme,
	coordinationv1.AddToScheme,
	eventsv1.AddToScheme,
	policyv1.AddToScheme,
	rbacv1.AddToScheme,
	apiextensionsv1.AddToScheme,
}

// Scheme knows the built-in types and almanac's.
var Scheme = New()

// New returns a fresh scheme with the built-in types and almanac's.
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range builtin {
		utilruntime.Must(add(s))
	}
	utilruntime.Must(autoscalingv1alpha1.AddToScheme(s))
	utilruntime.Must(batchv1alpha1.AddToScheme(s))
	utilruntime.Must(calendarv1alpha1.AddToScheme(s))
	utilruntime.Must(sleepv1alpha1.AddToScheme(s))
	return s
}
