// Package scheme is the runtime.Scheme that almanac's manager, webhooks, CLI and tests share:
// the built-in Kubernetes types, CustomResourceDefinitions, and almanac's two API groups.
package scheme

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

// Scheme knows the built-in types and almanac's.
var Scheme = New()

// New returns a fresh scheme with the built-in types and almanac's.
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(autoscalingv1alpha1.AddToScheme(s))
	utilruntime.Must(batchv1alpha1.AddToScheme(s))
	return s
}
