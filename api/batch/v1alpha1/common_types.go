package v1alpha1

import (
	batchv1 "k8s.io/api/batch/v1"
)

// ConcurrencyPolicy says what happens when a new run is due while an earlier Job of the same
// object still runs.
// +kubebuilder:validation:Enum=Allow;Forbid;Replace
type ConcurrencyPolicy string

const (
	// ConcurrencyPolicyAllow starts the new Job beside the running ones.
	ConcurrencyPolicyAllow ConcurrencyPolicy = "Allow"
	// ConcurrencyPolicyForbid skips the new run (counted and reported as skipped).
	ConcurrencyPolicyForbid ConcurrencyPolicy = "Forbid"
	// ConcurrencyPolicyReplace deletes the running Jobs and starts the new one.
	ConcurrencyPolicyReplace ConcurrencyPolicy = "Replace"
)

// Defaults of the Job policies, written by admission.
const (
	DefaultConcurrencyPolicy          = ConcurrencyPolicyAllow
	DefaultSuccessfulJobsHistoryLimit = int32(3)
	DefaultFailedJobsHistoryLimit     = int32(1)
	DefaultStartingDeadlineSeconds    = int64(600)
)

// Maxima of the fields that the time engine and the reconcilers compute with, as the schema
// states them (the kubebuilder markers repeat the numbers; TestSchemaMaxima checks them). Each
// is far beyond what a user means, and far below where arithmetic would overflow; the
// engine saturates anyway (timing.Deadline), so objects stored before a maximum existed
// are read as the maximum would have them.
const (
	// MaxStartingDeadlineSeconds is 3650 days (about ten years): a run that late has been
	// waited for "however late".
	MaxStartingDeadlineSeconds = int64(315360000)
	// MaxJobsHistoryLimit bounds successfulJobsHistoryLimit and failedJobsHistoryLimit.
	MaxJobsHistoryLimit = int32(1000)
)

// MaxActive is how many running Jobs status.active lists (its MaxItems): the API server refuses
// a status with more, so the reconcilers list the newest MaxActive and count the others in
// status.activeOverflow.
const MaxActive = 1024

// JobPolicy holds the fields that ScheduledJob and EventJob share: how their Jobs are made,
// how runs may overlap, and how many finished Jobs are kept.
type JobPolicy struct {
	// concurrencyPolicy says what happens when a run is due while an earlier Job of this
	// object still runs: Allow (default) starts it anyway, Forbid skips it (counted in
	// status and reported as an event), Replace deletes the running Jobs first.
	// +optional
	// +kubebuilder:default=Allow
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`

	// suspend, when true, starts no new Job; running Jobs are left alone. Runs that fall
	// due while suspended are not started later. Default false.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// successfulJobsHistoryLimit is how many succeeded Jobs are kept; older ones are
	// deleted. Default 3; 0 keeps none; at most 1000. Deleting a Job never makes its run
	// happen again.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	SuccessfulJobsHistoryLimit *int32 `json:"successfulJobsHistoryLimit,omitempty"`

	// failedJobsHistoryLimit is how many failed Jobs are kept; older ones are deleted.
	// Default 1; 0 keeps none; at most 1000.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	FailedJobsHistoryLimit *int32 `json:"failedJobsHistoryLimit,omitempty"`

	// jobTemplate is the Job to create for each run. Its labels and annotations are
	// copied to the Job, and almanac adds its own that name the owner and the run.
	// +required
	JobTemplate batchv1.JobTemplateSpec `json:"jobTemplate"`
}
