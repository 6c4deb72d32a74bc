package index

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
)

// tombstone stands for what an informer hands a transform that is not an object (client-go's
// DeletedFinalStateUnknown).
type tombstone struct{ Key string }

func TestTransforms(t *testing.T) {
	managed := []metav1.ManagedFieldsEntry{
		{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate},
		{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply, FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:minReplicas":{}}}`)},
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"},
	}
	meta := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Name: "nightly-1", Namespace: "ns", UID: "u", Labels: map[string]string{"app": "x"},
			Annotations: map[string]string{
				corev1.LastAppliedConfigAnnotation: `{"a huge":"copy of the object"}`,
				"batch.almanac.dev/scheduled-time": "2030-01-07T09:00:00Z",
			},
			OwnerReferences: []metav1.OwnerReference{{Kind: "CronJob", Name: "nightly", Controller: ptr.To(true)}},
			Finalizers:      []string{"batch.almanac.dev/outcome"},
			ManagedFields:   managed,
		}
	}
	// What every trimmed object keeps of its metadata; an HPA keeps almanac's managedFields.
	kept := func() metav1.ObjectMeta {
		m := meta()
		m.Annotations = map[string]string{"batch.almanac.dev/scheduled-time": "2030-01-07T09:00:00Z"}
		m.ManagedFields = nil
		return m
	}
	keptHPA := func() metav1.ObjectMeta {
		m := kept()
		m.ManagedFields = managed[1:2]
		return m
	}
	status := batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}, Succeeded: 1}
	hpaSpec := autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: ptr.To[int32](2), MaxReplicas: 10}
	for _, tc := range []struct {
		name      string
		transform func(any) (any, error)
		in, want  any
	}{{
		name:      "a Job keeps its metadata and status, not its Pod template",
		transform: TrimJob,
		in: &batchv1.Job{ObjectMeta: meta(), Status: status, Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}}}},
		want: &batchv1.Job{ObjectMeta: kept(), Status: status},
	}, {
		name:      "an HPA keeps its spec, owners and almanac's managedFields, not its status",
		transform: TrimHPA,
		in: &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: meta(), Spec: hpaSpec,
			Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 4, DesiredReplicas: 5}},
		want: &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: keptHPA(), Spec: hpaSpec},
	}, {
		name:      "an almanac object keeps everything but managedFields and the last-applied copy",
		transform: TrimObject,
		in: &autoscalingv1alpha1.Schedule{ObjectMeta: meta(), Spec: autoscalingv1alpha1.ScheduleSpec{Type: "Daily", StartTime: "09:00"},
			Status: autoscalingv1alpha1.ScheduleStatus{Phase: "Active"}},
		want: &autoscalingv1alpha1.Schedule{ObjectMeta: kept(), Spec: autoscalingv1alpha1.ScheduleSpec{Type: "Daily", StartTime: "09:00"},
			Status: autoscalingv1alpha1.ScheduleStatus{Phase: "Active"}},
	}, {
		name:      "metadata only",
		transform: TrimObject,
		in:        &metav1.PartialObjectMetadata{ObjectMeta: meta()},
		want:      &metav1.PartialObjectMetadata{ObjectMeta: kept()},
	}, {
		name:      "an HPA transform given another object trims it as any other",
		transform: TrimHPA,
		in:        &metav1.PartialObjectMetadata{ObjectMeta: meta()},
		want:      &metav1.PartialObjectMetadata{ObjectMeta: kept()},
	}, {
		name:      "a deleted object of unknown state passes",
		transform: TrimJob,
		in:        tombstone{Key: "ns/nightly-1"},
		want:      tombstone{Key: "ns/nightly-1"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.transform(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("transform (-want +got):\n%s", diff)
			}
			again, err := tc.transform(got)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, again); diff != "" {
				t.Errorf("transforming twice changed it (-want +got):\n%s", diff)
			}
		})
	}
}
