package testenv

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Refusal is a ValidatingAdmissionPolicy that refuses writes in one namespace, as a policy
// engine or a cluster's own policy would: the API server itself answers with reason and
// message.
type Refusal struct {
	// Name names the policy and its binding (cluster-scoped: unique per test).
	Name string
	// Namespace is the only namespace whose writes it refuses.
	Namespace string
	// Rules are the resources and operations it refuses.
	Rules []admissionregistrationv1.NamedRuleWithOperations
	// Reason is the API server's answer: Forbidden, or Invalid (the API server's default).
	Reason metav1.StatusReason
	// Message is the denial's message.
	Message string
	// Effective reports nil once the API server applies the policy (a server-side dry run of
	// a write it refuses fails with Message): the API server learns of a new policy within a
	// second or so.
	Effective func(ctx context.Context) error
}

// Refuse installs r and waits (up to 30 s) until it is effective. It returns a function that
// removes it (also run when the test ends).
func (e *Env) Refuse(t testing.TB, r Refusal) (lift func()) {
	t.Helper()
	ctx := context.Background()
	reason := r.Reason
	if reason == "" {
		reason = metav1.StatusReasonInvalid
	}
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: r.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": r.Namespace}},
				ResourceRules:     r.Rules,
			},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: r.Message, Reason: &reason}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: r.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        r.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	lifted := false
	lift = func() {
		if lifted {
			return
		}
		lifted = true
		if err := e.Client.Delete(ctx, binding); err != nil {
			t.Errorf("delete the binding %s: %v", r.Name, err)
		}
		if err := e.Client.Delete(ctx, policy); err != nil {
			t.Errorf("delete the policy %s: %v", r.Name, err)
		}
	}
	if err := e.Client.Create(ctx, policy); err != nil {
		t.Fatalf("create the policy %s: %v", r.Name, err)
	}
	if err := e.Client.Create(ctx, binding); err != nil {
		t.Fatalf("create the binding %s: %v", r.Name, err)
	}
	t.Cleanup(lift)
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := r.Effective(ctx)
		if err == nil {
			return lift
		}
		if time.Now().After(deadline) {
			t.Fatalf("the policy %s is not in effect after 30 s: %v", r.Name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Refused reports nil when err is the refusal of r (its message), for Effective.
func (r Refusal) Refused(err error) error {
	if err == nil {
		return fmt.Errorf("admitted: the policy %s is not in effect yet", r.Name)
	}
	if !strings.Contains(err.Error(), r.Message) {
		return fmt.Errorf("refused, but not by the policy %s: %w", r.Name, err)
	}
	return nil
}
