package jobs

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ControllerKey identifies a controller of Jobs: "<group>/<Kind>/<name>", e.g.
// "batch/CronJob/hello" or "batch.almanac.dev/ScheduledJob/nightly" (the namespace is the
// Job's own).
func ControllerKey(group, kind, name string) string { return group + "/" + kind + "/" + name }

// ControllerKeyOf returns the ControllerKey of a Job's controller ownerReference, or "" when
// the Job has none.
func ControllerKeyOf(job metav1.Object) string {
	ref := metav1.GetControllerOfNoCopy(job)
	if ref == nil {
		return ""
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return ""
	}
	return ControllerKey(gv.Group, ref.Kind, ref.Name)
}

// IndexJobsByController registers a cache index, under the given name, that finds Jobs by the
// ControllerKey of their controller. Each reconciler registers its own name so that neither
// depends on the other being set up.
func IndexJobsByController(ctx context.Context, indexer client.FieldIndexer, name string) error {
	return indexer.IndexField(ctx, &batchv1.Job{}, name, func(obj client.Object) []string {
		if key := ControllerKeyOf(obj); key != "" {
			return []string{key}
		}
		return nil
	})
}
