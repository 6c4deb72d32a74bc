package webhooks

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// WatchNamespacesValue is the chart value that sets the manager's --watch-namespaces; the
// refusal names it, since that is where an operator changes what almanac serves.
const WatchNamespacesValue = "watchNamespaces"

// WithNamespaces limits the webhooks to objects in the given namespaces (the manager's
// --watch-namespaces): an object elsewhere is refused, on create and on update alike, because
// no reconciler would ever act on it. None (the default) serves every namespace.
//
// The webhook configurations still match every namespace, on purpose: a namespaceSelector
// (kubernetes.io/metadata.name In [...]) would keep the API server from calling the webhooks
// for objects elsewhere, and so store them unchecked, where they would wait, unreconciled and
// unvalidated, until someone added their namespace. Refusing them here says at once why they
// will never run.
func WithNamespaces(namespaces []string) Option {
	return func(o *setupOptions) { o.namespaces = namespaces }
}

// servedNamespaces is the set of namespaces the webhooks admit objects in; nil admits every
// namespace.
type servedNamespaces struct {
	set  map[string]bool
	list string // "a", "b"
}

func newServedNamespaces(namespaces []string) *servedNamespaces {
	if len(namespaces) == 0 {
		return nil
	}
	s := &servedNamespaces{set: map[string]bool{}}
	quoted := make([]string, len(namespaces))
	for i, ns := range namespaces {
		s.set[ns] = true
		quoted[i] = strconv.Quote(ns)
	}
	s.list = strings.Join(quoted, ", ")
	return s
}

// refuse returns the refusal of a create or update of an object in a namespace that is not
// served, or nil. An object being deleted is never refused (its finalizers must be
// removable wherever it is), as the rest of admission leaves it alone. A cluster-scoped object
// (a ClusterCalendar, whose request has no namespace) serves every namespace.
func (s *servedNamespaces) refuse(req admission.Request) *admission.Response {
	if s == nil || s.set[req.Namespace] || req.Namespace == "" || (req.Operation != admissionv1.Create && req.Operation != admissionv1.Update) {
		return nil
	}
	if beingDeleted(req.Object.Raw) {
		return nil
	}
	what := "A " + req.Kind.Kind
	if req.Name != "" {
		what = fmt.Sprintf("%s %q", req.Kind.Kind, req.Name)
	}
	msg := fmt.Sprintf("%s is in namespace %q, which this almanac does not serve (it serves %s; chart value %s): "+
		"no almanac controller would act on it there; create it in one of those namespaces, or add %q to %s (the manager's --watch-namespaces)",
		what, req.Namespace, s.list, WatchNamespacesValue, req.Namespace, WatchNamespacesValue)
	return &admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden, Message: msg,
		Details: &metav1.StatusDetails{Name: req.Name, Group: req.Resource.Group, Kind: req.Resource.Resource},
	}}}
}

// beingDeleted reports whether a raw object has a deletionTimestamp.
func beingDeleted(raw []byte) bool {
	var obj struct {
		Metadata struct {
			DeletionTimestamp *metav1.Time `json:"deletionTimestamp"`
		} `json:"metadata"`
	}
	return json.Unmarshal(raw, &obj) == nil && obj.Metadata.DeletionTimestamp != nil
}
