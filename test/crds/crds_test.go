package crds_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/almanac-dev/almanac/test/testenv"
)

func TestCRDsAreEstablished(t *testing.T) {
	want := []string{
		"eventjobs.batch.almanac.dev",
		"scheduledjobs.batch.almanac.dev",
		"scheduledpodautoscalers.autoscaling.almanac.dev",
		"schedules.autoscaling.almanac.dev",
	}
	var got []string
	for _, name := range want {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Name: name}, crd); err != nil {
			t.Errorf("CRD %s: %v", name, err)
			continue
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				got = append(got, name)
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("established CRDs (-want +got):\n%s", diff)
	}
}

// TestDiscovery checks what `kubectl get almanac`, `kubectl get spa` and friends rely on:
// the category and the short names, as served by the API server's discovery.
func TestDiscovery(t *testing.T) {
	dc := discovery.NewDiscoveryClientForConfigOrDie(env.Config)
	type resource struct {
		Name       string
		Kind       string
		ShortNames []string
		Categories []string
		Namespaced bool
	}
	want := map[string][]resource{
		"autoscaling.almanac.dev/v1alpha1": {
			{Name: "scheduledpodautoscalers", Kind: "ScheduledPodAutoscaler", ShortNames: []string{"spa"}, Categories: []string{"almanac"}, Namespaced: true},
			{Name: "schedules", Kind: "Schedule", Categories: []string{"almanac"}, Namespaced: true},
		},
		"batch.almanac.dev/v1alpha1": {
			{Name: "eventjobs", Kind: "EventJob", ShortNames: []string{"ej"}, Categories: []string{"almanac"}, Namespaced: true},
			{Name: "scheduledjobs", Kind: "ScheduledJob", ShortNames: []string{"sj"}, Categories: []string{"almanac"}, Namespaced: true},
		},
	}
	for gv, wantResources := range want {
		list, err := dc.ServerResourcesForGroupVersion(gv)
		if err != nil {
			t.Fatalf("discovery of %s: %v", gv, err)
		}
		var got []resource
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") {
				continue // subresources
			}
			got = append(got, resource{Name: r.Name, Kind: r.Kind, ShortNames: r.ShortNames, Categories: r.Categories, Namespaced: r.Namespaced})
		}
		slices.SortFunc(got, func(a, b resource) int { return strings.Compare(a.Name, b.Name) })
		if diff := cmp.Diff(wantResources, got); diff != "" {
			t.Errorf("%s resources (-want +got):\n%s", gv, diff)
		}
		for _, r := range list.APIResources {
			if strings.HasSuffix(r.Name, "/status") {
				continue
			}
			if !slices.Contains(resourceNames(list), r.Name+"/status") {
				t.Errorf("%s %s has no status subresource", gv, r.Name)
			}
		}
	}
}

func resourceNames(list *metav1.APIResourceList) []string {
	var names []string
	for _, r := range list.APIResources {
		names = append(names, r.Name)
	}
	return names
}

// TestExamplesAreAccepted creates every object of every manifest in examples/ and checks
// that the API server stores it.
func TestExamplesAreAccepted(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "examples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	ns := newNamespace(t)
	kinds := map[string]int{}
	for _, file := range files {
		for _, obj := range readObjects(t, file) {
			obj.SetNamespace(ns)
			if err := env.Client.Create(context.Background(), obj); err != nil {
				t.Errorf("%s: %s %s: %v", filepath.Base(file), obj.GetKind(), obj.GetName(), err)
				continue
			}
			kinds[obj.GetKind()]++
		}
	}
	for _, kind := range []string{"ScheduledPodAutoscaler", "Schedule", "ScheduledJob", "EventJob"} {
		if kinds[kind] == 0 {
			t.Errorf("examples/ has no %s", kind)
		}
	}
}

// TestSchemaDefaults checks the defaults that the API server writes from the schema, so a
// stored object is never ambiguous even before almanac's webhooks see it.
func TestSchemaDefaults(t *testing.T) {
	ns := newNamespace(t)
	tests := []struct {
		name     string
		manifest string
		want     map[string]any // field path (dot-separated) → stored value
	}{{
		name: "Schedule",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: defaults}
spec:
  scaleTargetRef: {name: web}
  minReplicas: 2
  type: Daily
  startTime: "09:00"
  endTime: "17:00"`,
		want: map[string]any{
			"spec.timeZone":                  "UTC",
			"spec.scaleTargetRef.apiVersion": "autoscaling.almanac.dev/v1alpha1",
			"spec.scaleTargetRef.kind":       "ScheduledPodAutoscaler",
		},
	}, {
		name: "ScheduledPodAutoscaler",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: defaults}
spec:
  horizontalPodAutoscalerSpec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
    maxReplicas: 5`,
		want: map[string]any{"spec.overlapPolicy": "Max"},
	}, {
		name: "ScheduledJob",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: defaults}
spec:
  schedule: "@hourly"
  jobTemplate: {spec: {template: {spec: {containers: [{name: c, image: busybox}], restartPolicy: Never}}}}`,
		want: map[string]any{
			"spec.timeZone":                   "UTC",
			"spec.concurrencyPolicy":          "Allow",
			"spec.successfulJobsHistoryLimit": int64(3),
			"spec.failedJobsHistoryLimit":     int64(1),
			"spec.startingDeadlineSeconds":    int64(600),
		},
	}, {
		name: "EventJob",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: defaults}
spec:
  trigger: {kind: Job, name: upstream}
  jobTemplate: {spec: {template: {spec: {containers: [{name: c, image: busybox}], restartPolicy: Never}}}}`,
		want: map[string]any{
			"spec.trigger.type":               "Complete",
			"spec.concurrencyPolicy":          "Allow",
			"spec.successfulJobsHistoryLimit": int64(3),
			"spec.failedJobsHistoryLimit":     int64(1),
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := parse(t, tt.manifest)
			obj.SetNamespace(ns)
			if err := env.Client.Create(context.Background(), obj); err != nil {
				t.Fatalf("create: %v", err)
			}
			got := map[string]any{}
			for path := range tt.want {
				v, _, _ := unstructured.NestedFieldNoCopy(obj.Object, strings.Split(path, ".")...)
				got[path] = v
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("stored defaults (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInvalidObjectsAreRejected sends objects that the schema or its CEL rules must refuse and
// asserts each cause the API server returns: field path, type and message, exactly.
func TestInvalidObjectsAreRejected(t *testing.T) {
	ns := newNamespace(t)
	const jobTemplate = `
  jobTemplate: {spec: {template: {spec: {containers: [{name: c, image: busybox}], restartPolicy: Never}}}}`
	tests := []struct {
		name     string
		manifest string
		want     []metav1.StatusCause
	}{{
		name: "autoscaler with minReplicas above maxReplicas",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: min-above-max}
spec:
  horizontalPodAutoscalerSpec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
    minReplicas: 5
    maxReplicas: 2`,
		want: []metav1.StatusCause{rule("spec.horizontalPodAutoscalerSpec.minReplicas", "minReplicas must not be greater than maxReplicas")},
	}, {
		name: "autoscaler with both horizontalPodAutoscalerSpec and targetRef",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: both-modes}
spec:
  horizontalPodAutoscalerSpec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
    maxReplicas: 5
  targetRef: {apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, name: web}
  minReplicas: 1
  maxReplicas: 5`,
		want: []metav1.StatusCause{rule("spec", exactlyOneMode)},
	}, {
		name: "autoscaler with neither horizontalPodAutoscalerSpec nor targetRef",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: no-mode}
spec:
  overlapPolicy: Max`,
		want: []metav1.StatusCause{rule("spec", exactlyOneMode)},
	}, {
		name: "autoscaler with a baseline outside targetRef",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: stray-baseline}
spec:
  horizontalPodAutoscalerSpec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
    maxReplicas: 5
  minReplicas: 2`,
		want: []metav1.StatusCause{rule("spec.minReplicas", "minReplicas and maxReplicas are the baseline of targetRef; with horizontalPodAutoscalerSpec, set them inside it")},
	}, {
		name: "targetRef without minReplicas",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: no-min}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}`,
		want: []metav1.StatusCause{rule("spec.minReplicas", "minReplicas is required with targetRef: it is the baseline that the target has whenever no Schedule is active")},
	}, {
		name: "targetRef to a HorizontalPodAutoscaler without maxReplicas",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: hpa-no-max}
spec:
  targetRef: {apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, name: web}
  minReplicas: 1`,
		want: []metav1.StatusCause{rule("spec.maxReplicas", maxRequired)},
	}, {
		name: "targetRef to a ScaledObject without maxReplicas",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: keda-no-max}
spec:
  targetRef: {apiVersion: keda.sh/v1alpha1, kind: ScaledObject, name: worker}
  minReplicas: 0`,
		want: []metav1.StatusCause{rule("spec.maxReplicas", maxRequired)},
	}, {
		name: "targetRef with minReplicas above maxReplicas",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: attached-min-above-max}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 6
  maxReplicas: 3`,
		want: []metav1.StatusCause{rule("spec.minReplicas", "minReplicas must not be greater than maxReplicas")},
	}, {
		name: "targetRef with a negative minReplicas and an empty name",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: attached-negative}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: ""}
  minReplicas: -1`,
		want: []metav1.StatusCause{
			{Type: metav1.CauseTypeFieldValueInvalid, Field: "spec.minReplicas", Message: "Invalid value: -1: spec.minReplicas in body should be greater than or equal to 0"},
			{Type: metav1.CauseTypeFieldValueInvalid, Field: "spec.targetRef.name", Message: `Invalid value: "": spec.targetRef.name in body should be at least 1 chars long`},
		},
	}, {
		name: "autoscaler with an unknown overlapPolicy",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: bad-policy}
spec:
  overlapPolicy: Min
  horizontalPodAutoscalerSpec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
    maxReplicas: 2`,
		want: []metav1.StatusCause{unsupported("spec.overlapPolicy", `"Min"`, `"Max"`, `"Forbid"`), rulesNotChecked},
	}, {
		name: "Schedule with minReplicas above maxReplicas",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: min-above-max}
spec:
  scaleTargetRef: {name: web}
  minReplicas: 10
  maxReplicas: 3
  type: Daily
  startTime: "09:00"
  endTime: "17:00"`,
		want: []metav1.StatusCause{rule("spec.minReplicas", "minReplicas must not be greater than maxReplicas")},
	}, {
		name: "Schedule with neither minReplicas nor maxReplicas",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: no-bounds}
spec:
  scaleTargetRef: {name: web}
  type: Daily
  startTime: "09:00"
  endTime: "17:00"`,
		want: []metav1.StatusCause{rule("spec", "at least one of minReplicas and maxReplicas is required")},
	}, {
		name: "Schedule with an unknown type",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: bad-type}
spec:
  scaleTargetRef: {name: web}
  minReplicas: 2
  type: Monthly
  startTime: "09:00"
  endTime: "17:00"`,
		want: []metav1.StatusCause{unsupported("spec.type", `"Monthly"`, `"Daily"`, `"Weekly"`, `"OneShot"`, `"Cron"`), rulesNotChecked},
	}, {
		name: "Daily Schedule with a 25th hour",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: bad-hour}
spec:
  scaleTargetRef: {name: web}
  minReplicas: 2
  type: Daily
  startTime: "25:00"
  endTime: "17:00"`,
		want: []metav1.StatusCause{rule("spec.startTime", `type Daily takes startTime as HH:mm on a 24-hour clock, e.g. "09:30"`)},
	}, {
		name: "Daily Schedule whose start equals its end",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: empty-window}
spec:
  scaleTargetRef: {name: web}
  minReplicas: 2
  type: Daily
  startTime: "09:00"
  endTime: "09:00"`,
		want: []metav1.StatusCause{rule("spec.endTime", "the window is empty: the end must differ from the start")},
	}, {
		name: "OneShot Schedule that ends before it starts",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: backwards}
spec:
  scaleTargetRef: {name: web}
  minReplicas: 2
  type: OneShot
  startTime: "2030-09-01T18:00"
  endTime: "2030-09-01T10:00"`,
		want: []metav1.StatusCause{rule("spec.endTime", "type OneShot needs endTime after startTime")},
	}, {
		name: "Weekly Schedule without days, and a bad day name",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: no-days}
spec:
  scaleTargetRef: {name: web}
  minReplicas: 2
  type: Weekly
  startDayOfWeek: Caturday
  startTime: "09:00"
  endTime: "17:00"`,
		want: []metav1.StatusCause{
			unsupported("spec.startDayOfWeek", `"Caturday"`, `"Monday"`, `"Tuesday"`, `"Wednesday"`, `"Thursday"`, `"Friday"`, `"Saturday"`, `"Sunday"`),
			rulesNotChecked,
		},
	}, {
		name: "Weekly Schedule with daysOfWeek, and a day that is not one",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: weekly-days}
spec:
  scaleTargetRef: {name: web}
  minReplicas: 2
  type: Weekly
  startDayOfWeek: Monday
  startTime: "09:00"
  endDayOfWeek: Wednesday
  endTime: "17:00"
  daysOfWeek: [Monday]`,
		want: []metav1.StatusCause{rule("spec.daysOfWeek", "daysOfWeek is only used by type Daily: a Weekly window is one stretch from startDayOfWeek to endDayOfWeek; "+
			"for the same hours on several days use type Daily with daysOfWeek")},
	}, {
		name: "businessDays on a Daily Schedule",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: daily-business-days}
spec:
  scaleTargetRef: {name: web}
  minReplicas: 2
  type: Daily
  startTime: "09:00"
  endTime: "17:00"
  businessDays: [Monday]`,
		want: []metav1.StatusCause{rule("spec.businessDays", "businessDays is only used by type Cron, with a business-day form in schedule (LW, 15W, W#2)")},
	}, {
		name: "a business day that is not one",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: cron-business-days}
spec:
  scaleTargetRef: {name: web}
  minReplicas: 2
  type: Cron
  schedule: "0 8 LW * *"
  duration: 1h
  businessDays: [Caturday]`,
		want: []metav1.StatusCause{
			unsupported("spec.businessDays[0]", `"Caturday"`, `"Monday"`, `"Tuesday"`, `"Wednesday"`, `"Thursday"`, `"Friday"`, `"Saturday"`, `"Sunday"`),
			rulesNotChecked,
		},
	}, {
		name: "businessDays on a ScheduledJob that runs once at",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: once-business-days}
spec:
  at: "2030-01-01T09:00"
  businessDays: [Monday]
  jobTemplate: {spec: {template: {spec: {containers: [{name: c, image: busybox}], restartPolicy: Never}}}}`,
		want: []metav1.StatusCause{rule("spec.businessDays", "businessDays are for the business-day forms of a cron schedule (LW, 15W, W#2): set them only with schedule")},
	}, {
		name: "Daily Schedule with a day that is not one, and eight days",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: caturday}
spec:
  scaleTargetRef: {name: web}
  minReplicas: 2
  type: Daily
  startTime: "09:00"
  endTime: "17:00"
  daysOfWeek: [Monday, Tuesday, Wednesday, Thursday, Friday, Saturday, Sunday, Caturday]`,
		want: []metav1.StatusCause{
			{Type: metav1.CauseType("FieldValueTooMany"), Field: "spec.daysOfWeek", Message: "Too many: 8: must have at most 7 items"},
			unsupported("spec.daysOfWeek[7]", `"Caturday"`, `"Monday"`, `"Tuesday"`, `"Wednesday"`, `"Thursday"`, `"Friday"`, `"Saturday"`, `"Sunday"`),
			rulesNotChecked,
		},
	}, {
		name: "Weekly Schedule without an end day",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: no-end-day}
spec:
  scaleTargetRef: {name: web}
  minReplicas: 2
  type: Weekly
  startDayOfWeek: Friday
  startTime: "18:00"
  endTime: "08:00"`,
		want: []metav1.StatusCause{rule("spec", "startDayOfWeek and endDayOfWeek are required for type Weekly")},
	}, {
		name: "Cron Schedule without duration, with a startTime",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: cron-mixed}
spec:
  scaleTargetRef: {name: web}
  minReplicas: 2
  type: Cron
  schedule: "0 9 * * *"
  startTime: "09:00"`,
		want: []metav1.StatusCause{
			rule("spec", "schedule and duration are required for type Cron"),
			rule("spec", "startTime and endTime are not used by type Cron: its windows open at each firing of schedule and last duration"),
		},
	}, {
		name: "Cron Schedule with a duration that is not a Go duration",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: cron-bad-duration}
spec:
  scaleTargetRef: {name: web}
  minReplicas: 2
  type: Cron
  schedule: "0 9 * * *"
  duration: 3 hours`,
		want: []metav1.StatusCause{{Type: metav1.CauseTypeFieldValueInvalid, Field: "spec.duration", Message: `Invalid value: "3 hours": spec.duration in body should match '^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$'`}},
	}, {
		name: "Schedule aimed at another kind",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: wrong-target}
spec:
  scaleTargetRef: {apiVersion: autoscaling.d-kuro.github.io/v1, kind: ScheduledPodAutoscaler, name: web}
  minReplicas: 2
  type: Daily
  startTime: "09:00"
  endTime: "17:00"`,
		want: []metav1.StatusCause{unsupported("spec.scaleTargetRef.apiVersion", `"autoscaling.d-kuro.github.io/v1"`, `"autoscaling.almanac.dev/v1alpha1"`), rulesNotChecked},
	}, {
		name: "ScheduledJob with both at and schedule",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: both}
spec:
  at: "2030-01-01T00:00"
  schedule: "@daily"` + jobTemplate,
		want: []metav1.StatusCause{rule("spec", "exactly one of at and schedule is required: at runs the Job once, schedule runs it on a cron schedule")},
	}, {
		name: "ScheduledJob with neither at nor schedule",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: neither}
spec:
  timeZone: UTC` + jobTemplate,
		want: []metav1.StatusCause{rule("spec", "exactly one of at and schedule is required: at runs the Job once, schedule runs it on a cron schedule")},
	}, {
		name: "ScheduledJob with a bad policy and a negative history limit",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: bad-fields}
spec:
  schedule: "@daily"
  concurrencyPolicy: Sometimes
  successfulJobsHistoryLimit: -1` + jobTemplate,
		want: []metav1.StatusCause{
			unsupported("spec.concurrencyPolicy", `"Sometimes"`, `"Allow"`, `"Forbid"`, `"Replace"`),
			{Type: metav1.CauseTypeFieldValueInvalid, Field: "spec.successfulJobsHistoryLimit", Message: "Invalid value: -1: spec.successfulJobsHistoryLimit in body should be greater than or equal to 0"},
			rulesNotChecked,
		},
	}, {
		// "Forever", written the way a careless tenant would: beyond the maximum, where
		// seconds as a time.Duration would wrap around (the engine saturates for objects
		// stored before the maximum existed).
		name: "ScheduledJob with a startingDeadlineSeconds beyond the maximum",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: deadline-forever}
spec:
  schedule: "* * * * *"
  startingDeadlineSeconds: 9999999999` + jobTemplate,
		want: []metav1.StatusCause{
			{Type: metav1.CauseTypeFieldValueInvalid, Field: "spec.startingDeadlineSeconds", Message: "Invalid value: 9999999999: spec.startingDeadlineSeconds in body should be less than or equal to 315360000"},
		},
	}, {
		name: "ScheduledJob with history limits beyond the maximum",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: history-huge}
spec:
  schedule: "@daily"
  successfulJobsHistoryLimit: 2147483647
  failedJobsHistoryLimit: 1001` + jobTemplate,
		want: []metav1.StatusCause{
			{Type: metav1.CauseTypeFieldValueInvalid, Field: "spec.successfulJobsHistoryLimit", Message: "Invalid value: 2147483647: spec.successfulJobsHistoryLimit in body should be less than or equal to 1000"},
			{Type: metav1.CauseTypeFieldValueInvalid, Field: "spec.failedJobsHistoryLimit", Message: "Invalid value: 1001: spec.failedJobsHistoryLimit in body should be less than or equal to 1000"},
		},
	}, {
		name: "ScheduledJob with a malformed at",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: bad-at}
spec:
  at: "next tuesday"` + jobTemplate,
		want: []metav1.StatusCause{rule("spec.at", `at is a wall time in timeZone written yyyy-MM-ddTHH:mm, or yyyy-MM-ddTHH:mm:ss to the second, e.g. "2027-09-01T10:00" or "2027-09-01T10:00:30"`)},
	}, {
		name: "ScheduledJob with an at to a fraction of a second",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: fraction-at}
spec:
  at: "2030-01-01T00:00:30.5"` + jobTemplate,
		want: []metav1.StatusCause{rule("spec.at", `at is a wall time in timeZone written yyyy-MM-ddTHH:mm, or yyyy-MM-ddTHH:mm:ss to the second, e.g. "2027-09-01T10:00" or "2027-09-01T10:00:30"`)},
	}, {
		name: "ScheduledJob without a jobTemplate",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: no-template}
spec:
  schedule: "@daily"`,
		want: []metav1.StatusCause{{Type: metav1.CauseTypeFieldValueRequired, Field: "spec.jobTemplate", Message: "Required value"}, rulesNotChecked},
	}, {
		name: "EventJob with an unknown trigger kind and type",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: bad-trigger}
spec:
  trigger: {kind: Deployment, name: web, type: Succeeded}` + jobTemplate,
		want: []metav1.StatusCause{
			unsupported("spec.trigger.kind", `"Deployment"`, `"Job"`, `"CronJob"`, `"ScheduledJob"`, `"EventJob"`),
			unsupported("spec.trigger.type", `"Succeeded"`, `"Complete"`, `"Failed"`, `"Any"`),
			rulesNotChecked,
		},
	}, {
		name: "EventJob whose trigger apiVersion does not match its kind",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: wrong-api}
spec:
  trigger: {apiVersion: batch.kitagry.github.io/v1, kind: CronJob, name: hello}` + jobTemplate,
		want: []metav1.StatusCause{rule("spec.trigger.apiVersion", "apiVersion must be batch/v1 for kind Job and CronJob, and batch.almanac.dev/v1alpha1 for kind ScheduledJob and EventJob")},
	}, {
		name: "EventJob with both trigger and triggers",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: both}
spec:
  trigger: {kind: CronJob, name: hello}
  triggers: [{kind: CronJob, name: hello}, {kind: ScheduledJob, name: nightly}]` + jobTemplate,
		want: []metav1.StatusCause{rule("spec", "exactly one of trigger and triggers is required: trigger starts a run for each upstream Job, triggers one run for each set of upstream runs (fan-in)")},
	}, {
		name: "EventJob whose triggers name one object twice, and fanIn pairs by window without a window",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: twice}
spec:
  triggers: [{kind: CronJob, name: hello}, {kind: CronJob, name: hello, type: Failed}]
  fanIn: {pairBy: Window, horizonSeconds: 30}` + jobTemplate,
		want: []metav1.StatusCause{
			rule("spec.triggers", "each upstream object may be named once in triggers: remove the repeated kind and name (a trigger's type says which outcome counts)"),
			rule("spec.fanIn.windowSeconds", "windowSeconds is how long a set of pairBy Window waits for its runs: set it with pairBy: Window, and only then"),
			rule("spec.fanIn.horizonSeconds", "horizonSeconds is how long a set of one slot waits for its runs: set it only with pairBy: Slot (pairBy: Window waits windowSeconds)"),
			{Type: metav1.CauseTypeFieldValueInvalid, Field: "spec.fanIn.horizonSeconds", Message: "Invalid value: 30: horizonSeconds is at least 60 (a minute): a set waits that long after its slot for a run of each trigger; write 60 or more, or omit it for a day (86400)"},
		},
	}, {
		name: "EventJob with fanIn but a single trigger",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: fanin-single}
spec:
  trigger: {kind: CronJob, name: hello}
  fanIn: {require: AnyOf}` + jobTemplate,
		want: []metav1.StatusCause{rule("spec.fanIn", "fanIn says how the runs of several triggers make a set: set it only with triggers")},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := parse(t, tt.manifest)
			obj.SetNamespace(ns)
			err := env.Client.Create(context.Background(), obj)
			if err == nil {
				t.Fatalf("the API server accepted %s %s", obj.GetKind(), obj.GetName())
			}
			var status apierrors.APIStatus
			if !errors.As(err, &status) || !apierrors.IsInvalid(err) {
				t.Fatalf("want a 422 Invalid, got %v", err)
			}
			got := status.Status().Details.Causes
			// The API server reports schema errors in no fixed order.
			byField := cmpopts.SortSlices(func(a, b metav1.StatusCause) bool { return a.Field+a.Message < b.Field+b.Message })
			if diff := cmp.Diff(tt.want, got, byField); diff != "" {
				t.Errorf("causes (-want +got):\n%s\nwhole error: %v", diff, err)
			}
		})
	}
}

const (
	exactlyOneMode = "exactly one of horizontalPodAutoscalerSpec (almanac generates the HorizontalPodAutoscaler) and targetRef (almanac attaches to an object that exists) is required"
	maxRequired    = "maxReplicas is required when targetRef is a HorizontalPodAutoscaler or a ScaledObject: it is the baseline maximum that the target has whenever no Schedule is active"
	noSwitching    = "a ScheduledPodAutoscaler cannot switch between horizontalPodAutoscalerSpec and targetRef: create a new ScheduledPodAutoscaler instead " +
		"(deleting this one leaves an attached target at its baseline, and deletes a generated HorizontalPodAutoscaler)"
)

// TestAutoscalerCannotSwitchModes: an update from a generated HorizontalPodAutoscaler to
// targetRef, or back, is refused by the CRD's transition rule; an update within a mode is not.
func TestAutoscalerCannotSwitchModes(t *testing.T) {
	ns := newNamespace(t)
	const (
		generated = `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: NAME}
spec:
  horizontalPodAutoscalerSpec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
    maxReplicas: 5`
		attached = `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: NAME}
spec:
  targetRef: {apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, name: web}
  minReplicas: 1
  maxReplicas: MAX`
	)
	tests := []struct {
		name, from, to string
		want           []metav1.StatusCause // nil: accepted
	}{
		{name: "to-attached", from: generated, to: attached, want: []metav1.StatusCause{rule("spec", noSwitching)}},
		{name: "to-generated", from: attached, to: generated, want: []metav1.StatusCause{rule("spec", noSwitching)}},
		{name: "within-attached", from: attached, to: strings.Replace(attached, "minReplicas: 1", "minReplicas: 2", 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			manifest := func(m string) string {
				return strings.NewReplacer("NAME", tt.name, "MAX", "10").Replace(m)
			}
			obj := parse(t, manifest(tt.from))
			obj.SetNamespace(ns)
			if err := env.Client.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
			updated := parse(t, manifest(tt.to))
			updated.SetNamespace(ns)
			updated.SetResourceVersion(obj.GetResourceVersion())
			err := env.Client.Update(ctx, updated)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var status apierrors.APIStatus
			if !errors.As(err, &status) || !apierrors.IsInvalid(err) {
				t.Fatalf("want a 422 Invalid, got %v", err)
			}
			if diff := cmp.Diff(tt.want, status.Status().Details.Causes); diff != "" {
				t.Errorf("causes (-want +got):\n%s\nwhole error: %v", diff, err)
			}
		})
	}
}

// TestKubectlExplain runs kubectl explain against the API server: every kind and the fields
// users look up first are documented.
func TestKubectlExplain(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatalf("kubectl is not on PATH: install it to run this test (%v)", err)
	}
	tests := []struct {
		field string
		want  []string
	}{
		{"scheduledpodautoscalers", []string{"KIND:       ScheduledPodAutoscaler", "GROUP:      autoscaling.almanac.dev", "generates and owns an autoscaling/v2 HorizontalPodAutoscaler"}},
		{"spa.spec", []string{"horizontalPodAutoscalerSpec", "overlapPolicy", "suspend", "Forbid rejects, at admission"}},
		{"spa.spec.horizontalPodAutoscalerSpec.minReplicas", []string{"FIELD: minReplicas <integer>"}},
		{"spa.status", []string{"activeSchedules", "nextTransitionTime", "lastAppliedTransition", "observedGeneration", "conditions"}},
		{"schedules.spec", []string{"scaleTargetRef", "startDayOfWeek", "timeZone", "Friday 18:00 to Monday 08:00", "half-open"}},
		{"schedules.spec.timeZone", []string{"IANA time zone name", "Default UTC", `"+09:00" → "Etc/GMT-9"`}},
		{"schedules.spec.daysOfWeek", []string{"FIELD: daysOfWeek <[]string>", "(type Daily) are the days on which the window opens", "belongs to the day it opens", "Omitted or empty: every day"}},
		{"schedules.spec.endDayOfWeek", []string{"in one stretch", "lasts 49 hours 10 minutes", "use type Daily with daysOfWeek"}},
		{"sj.spec.at", []string{`"yyyy-MM-ddTHH:mm:ss" for a time to the second`}},
		{"schedules.status.phase", []string{"Scheduled while windows are to come", "never at each window's boundaries", "activeSchedules"}},
		{"scheduledjobs.spec", []string{"at", "schedule", "startingDeadlineSeconds", "concurrencyPolicy", "jobTemplate", "successfulJobsHistoryLimit"}},
		{"sj.spec.schedule", []string{"runs once", "@every", "moved to at", "L (the month's last day)", "LW (the last business day)", "MON#1 (the first Monday)", "never skipped by a calendar"}},
		{"sj.spec.businessDays", []string{"FIELD: businessDays <[]string>", "business-day forms of schedule (LW, 15W, W#2)", "Omitted: Monday to Friday", "is not a business day either"}},
		{"schedules.spec.schedule", []string{"W#2 (the second business day)", "FRIL or 5L (the last Friday)"}},
		{"schedules.spec.businessDays", []string{"(type Cron) are the days of the week that count as business days", "Omitted: Monday to Friday"}},
		{"sj.status", []string{"lastScheduleTime", "nextScheduleTime", "missedRuns", "lastMissedTime", "active"}},
		{"eventjobs.spec.trigger", []string{"apiVersion", "kind", "name", "type", "Complete (default)"}},
		{"ej.status", []string{"lastTrigger", "triggerCount", "active"}},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			out := runKubectl(t, kubectl, "explain", tt.field)
			flat := strings.Join(strings.Fields(out), " ")
			for _, want := range tt.want {
				if !strings.Contains(out, want) && !strings.Contains(flat, want) {
					t.Errorf("kubectl explain %s does not mention %q:\n%s", tt.field, want, out)
				}
			}
		})
	}
}

// TestPrinterColumns checks the columns of `kubectl get` that users look at first.
func TestPrinterColumns(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatalf("kubectl is not on PATH: install it to run this test (%v)", err)
	}
	ns := newNamespace(t)
	for _, file := range []string{"scheduledpodautoscaler.yaml", "schedule.yaml", "scheduledjob-cron.yaml", "eventjob.yaml"} {
		for _, obj := range readObjects(t, filepath.Join(testenv.RepoRoot(), "examples", file)) {
			obj.SetNamespace(ns)
			if err := env.Client.Create(context.Background(), obj); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		args []string
		want string // the header line, columns separated by single spaces
	}{
		{[]string{"get", "spa"}, "NAME MINPODS MAXPODS ACTIVE NEXT SUSPENDED READY AGE"},
		{[]string{"get", "spa", "-o", "wide"}, "NAME TARGET MINPODS MAXPODS ACTIVE NEXT SUSPENDED READY AGE"},
		{[]string{"get", "schedule"}, "NAME REFERENCE TYPE MINPODS MAXPODS STATUS AGE"},
		{[]string{"get", "schedule", "-o", "wide"}, "NAME REFERENCE TYPE STARTTIME ENDTIME STARTDAYOFWEEK ENDDAYOFWEEK DAYSOFWEEK TIMEZONE MINPODS MAXPODS STATUS AGE"},
		{[]string{"get", "sj"}, "NAME AT SCHEDULE TIMEZONE SUSPEND PHASE LAST NEXT AGE"},
		{[]string{"get", "ej"}, "NAME TRIGGERKIND TRIGGER ON SUSPEND RUNS AGE"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out := runKubectl(t, kubectl, append(tt.args, "-n", ns)...)
			header := strings.Join(strings.Fields(strings.SplitN(out, "\n", 2)[0]), " ")
			if header != tt.want {
				t.Errorf("header:\n got %s\nwant %s\n%s", header, tt.want, out)
			}
		})
	}
	t.Run("get almanac lists every kind", func(t *testing.T) {
		out := runKubectl(t, kubectl, "get", "almanac", "-n", ns)
		for _, want := range []string{
			"scheduledpodautoscaler.autoscaling.almanac.dev/nginx",
			"schedule.autoscaling.almanac.dev/nginx-push-notification",
			"scheduledjob.batch.almanac.dev/nightly-report",
			"eventjob.batch.almanac.dev/eventjob-sample",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("kubectl get almanac does not list %s:\n%s", want, out)
			}
		}
	})
	t.Run("a Daily Schedule's row shows its days", func(t *testing.T) {
		out := runKubectl(t, kubectl, "get", "schedule", "nginx-push-notification", "-o", "wide", "--no-headers", "-n", ns)
		got := strings.Fields(out)
		// The empty day columns of a Daily Schedule print as nothing.
		want := []string{"nginx-push-notification", "nginx", "Daily", "11:50", "13:00", `["Monday","Tuesday","Wednesday"]`, "Asia/Tokyo", "10", "20"}
		if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
			t.Errorf("row = %q, want it to start with %q", got, want)
		}
	})
}

func runKubectl(t *testing.T, kubectl string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(kubectl, append([]string{"--kubeconfig", env.KubeconfigPath}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// rule is the cause that a failed CEL rule (x-kubernetes-validations) produces.
func rule(field, message string) metav1.StatusCause {
	return metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid, Field: field, Message: "Invalid value: " + message}
}

// rulesNotChecked is the cause that the API server adds when schema errors kept it from
// evaluating the CEL rules.
var rulesNotChecked = metav1.StatusCause{
	Type:    metav1.CauseTypeFieldValueInvalid,
	Field:   "<nil>",
	Message: "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
}

func unsupported(field, value string, supported ...string) metav1.StatusCause {
	return metav1.StatusCause{
		Type:    metav1.CauseTypeFieldValueNotSupported,
		Field:   field,
		Message: "Unsupported value: " + value + ": supported values: " + strings.Join(supported, ", "),
	}
}

func parse(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
		t.Fatalf("bad test manifest: %v", err)
	}
	return obj
}

func readObjects(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var objs []*unstructured.Unstructured
	reader := utilyaml.NewYAMLReader(bufio.NewReader(f))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetGenerateName("crds-")
	if err := env.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.GetName()
}
