package bench_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	autoscalingv2ac "k8s.io/client-go/applyconfigurations/autoscaling/v2"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/api/scheme"
)

// size reads a positive number from the environment, or def.
func size(tb testing.TB, name string, def int) int {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		tb.Fatalf("%s=%q is not a positive number", name, v)
	}
	return n
}

// newClient returns a client with almanac's scheme for cfg.
func newClient(tb testing.TB, cfg *rest.Config) client.Client {
	tb.Helper()
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// parallel runs f(0..n-1) on `workers` goroutines and returns the first error.
func parallel(workers, n int, f func(i int) error) error {
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	next := make(chan int)
	for range max(1, workers) {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					once.Do(func() { first = err })
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

// hpaSpec is the baseline of the benchmarks' autoscalers: the shape of a typical HPA, on
// CPU and memory.
func hpaSpec(name string, minReplicas, maxReplicas int32) autoscalingv2.HorizontalPodAutoscalerSpec {
	return autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
		MinReplicas:    ptr.To(minReplicas),
		MaxReplicas:    maxReplicas,
		Metrics: []autoscalingv2.MetricSpec{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{
				Name:   corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](70)},
			},
		}, {
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{
				Name:   corev1.ResourceMemory,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("512Mi"))},
			},
		}},
	}
}

func newAutoscaler(ns, name string) *autoscalingv1alpha1.ScheduledPodAutoscaler {
	return &autoscalingv1alpha1.ScheduledPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: autoscalingv1alpha1.ScheduledPodAutoscalerSpec{
			OverlapPolicy:               autoscalingv1alpha1.OverlapPolicyMax,
			HorizontalPodAutoscalerSpec: new(hpaSpec(name, 2, 10)),
		},
	}
}

// attachedAutoscaler is newAutoscaler attached to the HPA of the same name, which exists.
func attachedAutoscaler(ns, name string) *autoscalingv1alpha1.ScheduledPodAutoscaler {
	return &autoscalingv1alpha1.ScheduledPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: autoscalingv1alpha1.ScheduledPodAutoscalerSpec{
			OverlapPolicy: autoscalingv1alpha1.OverlapPolicyMax,
			TargetRef:     &autoscalingv1alpha1.TargetReference{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Name: name},
			MinReplicas:   ptr.To[int32](2),
			MaxReplicas:   ptr.To[int32](10),
		},
	}
}

// applyHPA is the raw client's write: a server-side apply of the fields almanac applies to
// its HPAs (scaleTargetRef, bounds, metrics), under a field manager of its own.
func applyHPA(ctx context.Context, c client.Client, ns, name string, minReplicas, maxReplicas int32) error {
	spec := hpaSpec(name, minReplicas, maxReplicas)
	ac := autoscalingv2ac.HorizontalPodAutoscalerSpec().
		WithScaleTargetRef(autoscalingv2ac.CrossVersionObjectReference().WithAPIVersion("apps/v1").WithKind("Deployment").WithName(name)).
		WithMinReplicas(minReplicas).WithMaxReplicas(maxReplicas)
	for _, m := range spec.Metrics {
		target := autoscalingv2ac.MetricTarget().WithType(m.Resource.Target.Type)
		if m.Resource.Target.AverageUtilization != nil {
			target.WithAverageUtilization(*m.Resource.Target.AverageUtilization)
		}
		if m.Resource.Target.AverageValue != nil {
			target.WithAverageValue(*m.Resource.Target.AverageValue)
		}
		ac.WithMetrics(autoscalingv2ac.MetricSpec().WithType(m.Type).
			WithResource(autoscalingv2ac.ResourceMetricSource().WithName(m.Resource.Name).WithTarget(target)))
	}
	return c.Apply(ctx, autoscalingv2ac.HorizontalPodAutoscaler(name, ns).WithSpec(ac), client.FieldOwner("bench"), client.ForceOwnership)
}

func jobTemplate() batchv1.JobTemplateSpec {
	return batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
		BackoffLimit: ptr.To[int32](0),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"true"}}},
		}},
	}}
}

// newJob returns a Job controlled by the CronJob owner.
func newJob(ns, name string, owner *batchv1.CronJob) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "batch/v1", Kind: "CronJob", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}}},
		Spec: jobTemplate().Spec,
	}
}

// complete writes the status of a running Job the way the Job controller does when its Pod
// succeeded: SuccessCriteriaMet, then Complete, with the counts and times that the API
// server's validation requires. j is the Job as created (its resourceVersion current).
func complete(ctx context.Context, c client.Client, j *batchv1.Job) error {
	now := metav1.Now()
	j.Status.StartTime = &now
	j.Status.Ready = ptr.To[int32](0)
	j.Status.Succeeded = 1
	j.Status.CompletionTime = &now
	j.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
	}
	return c.Status().Update(ctx, j)
}

// cleanup deletes every object of the benchmarks' kinds in ns when tb ends (before the
// manager stops, which was started earlier), so that the next figure's manager does not see
// them.
func cleanup(tb testing.TB, ns string) {
	tb.Cleanup(func() {
		if err := deleteAll(context.Background(), ns); err != nil {
			tb.Logf("cleaning up %s: %v", ns, err)
		}
	})
}

func deleteAll(ctx context.Context, ns string) error {
	c := env.Client
	in := client.InNamespace(ns)
	var errs []error
	// The owners first, so that no new Job or status write follows.
	for _, obj := range []client.Object{
		&batchv1alpha1.ScheduledJob{}, &batchv1alpha1.EventJob{}, &batchv1.CronJob{},
		&autoscalingv1alpha1.ScheduledPodAutoscaler{}, &autoscalingv1alpha1.Schedule{},
	} {
		errs = append(errs, deleteAllOf(ctx, c, obj, in))
	}
	errs = append(errs,
		deleteAllOf(ctx, c, &batchv1.Job{}, in, client.PropagationPolicy(metav1.DeletePropagationBackground)),
		deleteAllOf(ctx, c, &autoscalingv2.HorizontalPodAutoscaler{}, in),
		deleteAllOf(ctx, c, &eventsv1.Event{}, in))
	return errors.Join(errs...)
}

// deleteAllOf is DeleteAllOf, repeated while the API server answers that it ran out of time:
// deleting tens of thousands of objects (the scale figure at 10,000) takes longer than one
// request may, and what a request deleted stays deleted.
func deleteAllOf(ctx context.Context, c client.Client, obj client.Object, opts ...client.DeleteAllOfOption) error {
	var err error
	for range 30 {
		err = c.DeleteAllOf(ctx, obj, opts...)
		if err == nil || (!apierrors.IsTimeout(err) && !apierrors.IsServerTimeout(err)) {
			return err
		}
	}
	return err
}

// until is the time left before t, for messages.
func until(t time.Time) string {
	return fmt.Sprintf("%s before %s", ms(time.Until(t)), t.UTC().Format("15:04:05.000"))
}

func objectMeta(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name}
}
