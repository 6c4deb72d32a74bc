// Package webhooks is almanac's admission server: a mutating and a validating webhook for
// each of ScheduledPodAutoscaler, Schedule, ScheduledJob, EventJob, Calendar and
// ClusterCalendar.
//
// The rules themselves live in api/admission, which `almanac validate` and `almanac preview`
// (commands/) run offline too; this package maps them to the admission protocol (JSON
// patches, AdmissionResponses, apierrors.NewInvalid), reads the other objects a rule looks at
// from the manager's cache (CacheLookup), checks the requester's permissions with a
// SubjectAccessReview (permissions.go), refuses namespaces the manager does not serve
// (namespaces.go), and logs each request (log.go).
package webhooks
