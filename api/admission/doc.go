// Package admission holds almanac's admission rules, which the webhooks (webhooks/) and the
// commands (commands/validate, commands/preview) both run, so that they cannot disagree.
//
// The rules are pure functions: DefaultSchedule(obj) normalizes an object in place,
// ValidateSchedule(ctx, obj, old, env) returns field errors and warnings, and likewise for the
// other kinds. Time semantics come from api/timing; this package only maps its answers to
// field paths and messages. Env carries the current time and a Lookup of the other objects a
// rule looks at: the manager's cache in the webhook (webhooks.CacheLookup), the input set
// offline. RulesFor binds a kind's rules to its JSON form (Default, Patch, Validate), which is
// what the webhooks receive.
//
// Validate and ValidateUpdate run offline what the API server does around the webhooks, in
// the same order: strict decoding against the embedded CRDs (config/crd), schema defaulting,
// the mutating webhook's defaulting, schema defaulting again, OpenAPI schema and CEL
// validation (a failure there ends the request), then the validating webhook's rules.
//
// Like the rest of api/, it imports neither controller-runtime nor client-go: Object is
// controller-runtime's client.Object written with apimachinery's interfaces.
package admission
