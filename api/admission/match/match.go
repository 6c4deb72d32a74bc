// Package match holds the conditions under which the API server sends a request to almanac's
// webhooks at all (admissionregistration v1 matchConditions): the chart's webhook
// configurations (hack/chartgen) and the tests' (test/testenv) carry them. It imports nothing
// but the API types, so that every module that installs webhook configurations can use it.
package match

import (
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// Conditions must all hold for a request to go to almanac's webhooks. What they leave out is
// what admission has nothing to say about, so that it never waits for a replica that answers:
// while none does (every replica down, or the manager scaled to 0 by `almanac release` before
// an uninstall), a finalizer can still be removed.
var Conditions = []admissionregistrationv1.MatchCondition{
	{
		// An object being deleted (on DELETE the object is null and the condition holds):
		// removing a finalizer from an object whose schedule went stale must not be refused.
		Name:       "skip-objects-being-deleted",
		Expression: "object == null || !has(object.metadata.deletionTimestamp)",
	},
	{
		// An update that removes finalizers and changes nothing else: every other field, in the
		// spec and in the metadata (labels, annotations such as the run-now token, owner
		// references), compared with the stored object; the fields the API server writes itself
		// (managedFields, resourceVersion, generation) and the status (not written through the
		// object) aside. No rule of admission looks at finalizers, so such an update is admitted
		// anyway when a replica answers; `almanac release` removes the release finalizer of every
		// attached ScheduledPodAutoscaler this way after it has stopped the manager. An update
		// that also changes anything else, or adds a finalizer, goes to the webhooks as before.
		Name:       "skip-finalizer-removals",
		Expression: skipFinalizerRemovals,
	},
}

// skipFinalizerRemovals holds (the request goes to the webhooks) unless the request is an
// update that only removes finalizers.
var skipFinalizerRemovals = strings.Join([]string{
	"!(request.operation == 'UPDATE' && object != null && oldObject != null",
	"has(oldObject.metadata.finalizers)",
	"size(has(object.metadata.finalizers) ? object.metadata.finalizers : []) < size(oldObject.metadata.finalizers)",
	"(has(object.metadata.finalizers) ? object.metadata.finalizers : []).all(f, f in oldObject.metadata.finalizers)",
	"object.all(k, k == 'status' || k in oldObject)",
	"oldObject.all(k, k == 'metadata' || k == 'status' || (k in object && object[k] == oldObject[k]))",
	"object.metadata.all(k, k in " + serverWritten + " || k in oldObject.metadata)",
	"oldObject.metadata.all(k, k in " + serverWritten + " || (k in object.metadata && object.metadata[k] == oldObject.metadata[k])))",
}, " && ")

// serverWritten are the metadata fields that an update of finalizers alone may change: the
// finalizers, and what the API server writes itself.
const serverWritten = "['finalizers', 'managedFields', 'resourceVersion', 'generation']"
