package v1alpha1

// DefaultScaleTargetAPIVersion is the scaleTargetRef.apiVersion that an omitted one means
// for a workload of the given kind (apps/v1 for Deployment, StatefulSet and ReplicaSet, as
// horizontalPodAutoscalerSpec documents), or "" for a kind without a default. Admission
// writes it, and the reconciler applies it to objects stored without admission.
func DefaultScaleTargetAPIVersion(kind string) string {
	switch kind {
	case "Deployment", "StatefulSet", "ReplicaSet":
		return "apps/v1"
	}
	return ""
}
