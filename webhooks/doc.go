// Package webhooks is almanac's admission: a mutating and a validating webhook for each of
// ScheduledPodAutoscaler, Schedule, ScheduledJob and EventJob, and `almanac validate`, which
// runs the same defaulting and validation offline.
//
// The rules are pure functions shared by both: DefaultSchedule(obj) normalizes an object in
// place, ValidateSchedule(ctx, obj, old, env) returns field errors and warnings, and likewise
// for the other kinds. Time semantics come from api/timing; this package only maps its answers
// to field paths, messages and the admission protocol. Env carries the current time and a
// Lookup of the other objects a rule looks at: the manager's cache in the webhook, the input
// set in the CLI.
//
// What the API server does around the webhooks, and what the CLI mirrors in the same order:
// schema defaulting, the mutating webhook, schema defaulting again, OpenAPI schema and CEL
// validation (a failure there ends the request), then the validating webhook.
package webhooks
