package argocd_test

import (
	"path/filepath"
	"testing"
	"time"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/api/conditions"
	"github.com/almanac-dev/almanac/api/scheme"
)

// kstatusOf is what kstatus must report for each Argo CD health: the two agree on every
// object. Suspension is a state that almanac has reached (Healthy's Suspended), so Current.
var kstatusOf = map[string]status.Status{
	"Healthy":     status.CurrentStatus,
	"Suspended":   status.CurrentStatus,
	"Progressing": status.InProgressStatus,
	"Degraded":    status.FailedStatus,
}

// TestKstatusAgrees runs kstatus (sigs.k8s.io/cli-utils/pkg/kstatus/status.Compute, which
// Flux, kpt and Config Sync use) on every object of the health checks' tests, as almanac's
// reconciler would have written it and as the API server would return it, and checks that it
// says what the Argo CD health check says (kstatusOf). Each object is first given the Stalled
// condition that the api/ rule (each status's Stalled) derives from the rest of its status:
// the fixtures were written before that condition existed, and the reconcilers now add it
// with every status they write. Then the CRD's defaults are applied as the API server applies
// them when it reads an object (an object that no controller has written a status for yet
// reads status.observedGeneration 0). The health check must give the same answer on that
// object as on the fixture.
func TestKstatusAgrees(t *testing.T) {
	schemas := crdSchemas(t)
	for _, dir := range kinds(t) {
		script := readFile(t, filepath.Join(dir, "health.lua"))
		var tests healthTests
		readYAML(t, filepath.Join(dir, "health_test.yaml"), &tests)
		for _, tc := range tests.Tests {
			t.Run(filepath.Join(dir, tc.InputPath), func(t *testing.T) {
				obj := withStalled(t, readObject(t, filepath.Join(dir, tc.InputPath)))
				u := &unstructured.Unstructured{Object: obj}
				s, ok := schemas[u.GroupVersionKind()]
				if !ok {
					t.Fatalf("no CRD in %s serves %s", crdDir, u.GroupVersionKind())
				}
				structuraldefaulting.Default(obj, s)

				got, _ := run(t, modes[0], time.Now, script, obj).(map[string]any)
				if got["status"] != tc.HealthStatus.Status {
					t.Fatalf("Argo CD health of the object as read from the API server: got %v, want %s as on the fixture", got["status"], tc.HealthStatus.Status)
				}
				res, err := status.Compute(u)
				if err != nil {
					t.Fatal(err)
				}
				if want := kstatusOf[tc.HealthStatus.Status]; res.Status != want {
					t.Errorf("kstatus: got %s (%q), want %s (Argo CD health %s %q)", res.Status, res.Message, want, tc.HealthStatus.Status, tc.HealthStatus.Message)
				}
			})
		}
	}
}

// withStalled returns obj with the Stalled condition that the api/ rule derives from its
// status (at the generation that status observed), through almanac's types.
func withStalled(t *testing.T, obj map[string]any) map[string]any {
	t.Helper()
	u := &unstructured.Unstructured{Object: obj}
	typed, err := scheme.Scheme.New(u.GroupVersionKind())
	if err != nil {
		t.Fatal(err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, typed); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	switch o := typed.(type) {
	case *batchv1alpha1.ScheduledJob:
		conditions.SetStalled(&o.Status.Conditions, o.Status.Stalled(), o.Status.ObservedGeneration, now)
	case *batchv1alpha1.EventJob:
		conditions.SetStalled(&o.Status.Conditions, o.Status.Stalled(), o.Status.ObservedGeneration, now)
	case *autoscalingv1alpha1.ScheduledPodAutoscaler:
		conditions.SetStalled(&o.Status.Conditions, o.Status.Stalled(), o.Status.ObservedGeneration, now)
	case *autoscalingv1alpha1.Schedule:
		conditions.SetStalled(&o.Status.Conditions, o.Status.Stalled(), o.Status.ObservedGeneration, now)
	}
	out, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// crdSchemas reads the structural schema of every version of every CRD in config/crd/bases,
// with its defaults, as the API server prepares it.
func crdSchemas(t *testing.T) map[schema.GroupVersionKind]*structuralschema.Structural {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(crdDir, "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no CRDs in %s: %v", crdDir, err)
	}
	out := map[schema.GroupVersionKind]*structuralschema.Structural{}
	for _, path := range paths {
		var crd apiextensionsv1.CustomResourceDefinition
		readYAML(t, path, &crd)
		for _, v := range crd.Spec.Versions {
			internal := &apiextensionsinternal.CustomResourceValidation{}
			if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v.Schema, internal, nil); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			s, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if err := structuraldefaulting.PruneDefaults(s); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			out[schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}] = s
		}
	}
	return out
}
