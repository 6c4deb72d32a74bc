package sleep_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/almanac-dev/almanac/api/scheme"
	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
)

// userClient is a client that authenticates as name (a client certificate), bound to role in
// ns (a ClusterRole, or with rules a Role of its own); it waits until the API server lets
// name create Sleeps and patch Deployments there.
func userClient(t *testing.T, ns, name, clusterRole string, rules ...rbacv1.PolicyRule) client.Client {
	t.Helper()
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole}
	if len(rules) > 0 {
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules}
		create(t, role)
		ref = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}
	}
	create(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, RoleRef: ref,
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}}})
	cfg, err := env.AddUser(name)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme, Mapper: env.Client.RESTMapper()})
	if err != nil {
		t.Fatal(err)
	}
	// The API server's authorizer reads bindings from its informers: wait until it knows.
	for _, ra := range []authorizationv1.ResourceAttributes{{Namespace: ns, Verb: "create", Group: "almanac.dev", Resource: "sleeps"},
		{Namespace: ns, Verb: "patch", Group: "apps", Resource: "deployments"}} {
		eventually(t, 10*time.Second, func() error {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: name, ResourceAttributes: &ra}}
			if err := env.Client.Create(bg, sar); err != nil {
				return err
			}
			if !sar.Status.Allowed {
				return fmt.Errorf("%s may not %s %s yet", name, ra.Verb, ra.Resource)
			}
			return nil
		})
	}
	return c
}

// TestTenantSleeps is what a namespace's user can make a Sleep do: only what that user may do
// to those workloads in that namespace (the permission check: patch, and the scale
// subresource of other kinds, for every kind of spec.kinds; create on Jobs for ScheduledJobs
// and EventJobs, whose wake resumes them), refused with the missing permission and the fix;
// nothing outside the namespace, whatever its selector; never a ClusterSleep; and no list
// longer than admission allows.
func TestTenantSleeps(t *testing.T) {
	t.Parallel()
	ns, other := newNamespace(t, nil), newNamespace(t, nil)
	nights := []sleepv1alpha1.Window{window(monday, monday.Add(time.Hour))}

	// A user with what the built-in edit role and almanac's aggregated almanac-edit give (the
	// test API server runs no controller that aggregates roles, so the rules are written out),
	// but not KEDA's.
	dev := userClient(t, ns, "dev-"+ns, "",
		rbacv1.PolicyRule{APIGroups: []string{"almanac.dev", "batch.almanac.dev"}, Resources: []string{"sleeps", "scheduledjobs", "eventjobs"}, Verbs: []string{"create", "get", "list", "patch", "update"}},
		rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets", "replicasets", "deployments/scale", "statefulsets/scale", "replicasets/scale"},
			Verbs: []string{"create", "get", "list", "patch", "update"}},
		rbacv1.PolicyRule{APIGroups: []string{"batch"}, Resources: []string{"jobs", "cronjobs"}, Verbs: []string{"create", "get", "list", "patch", "update"}})

	// The default kinds include KEDA's ScaledObjects, which dev may not patch: refused, with
	// the permission and the fix.
	err := dev.Create(bg, newSleep(ns, "all-kinds", sleepv1alpha1.SleepSpec{Asleep: nights}))
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "scaledobjects") || !strings.Contains(err.Error(), "spec.kinds") {
		t.Fatalf("a Sleep of every kind from a user who may not patch ScaledObjects: %v", err)
	}
	// The kinds dev may patch: admitted.
	mine := newSleep(ns, "mine", sleepv1alpha1.SleepSpec{Asleep: nights, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}},
		Kinds: []sleepv1alpha1.WorkloadKind{{APIVersion: "apps/v1", Kind: "Deployment"}, {APIVersion: "batch.almanac.dev/v1alpha1", Kind: "ScheduledJob"}},
		Wake:  sleepv1alpha1.Wake{Lead: sleepv1alpha1.Lead{Mode: sleepv1alpha1.LeadOff}}})
	if err := dev.Create(bg, mine); err != nil {
		t.Fatalf("a Sleep of the kinds dev may patch: %v", err)
	}
	// A user who may patch Deployments but not StatefulSets: refused for StatefulSets.
	narrow := userClient(t, ns, "narrow-"+ns, "", rbacv1.PolicyRule{APIGroups: []string{"almanac.dev"}, Resources: []string{"sleeps"}, Verbs: []string{"create"}},
		rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"patch"}})
	err = narrow.Create(bg, newSleep(ns, "narrow", sleepv1alpha1.SleepSpec{Asleep: nights,
		Kinds: []sleepv1alpha1.WorkloadKind{{APIVersion: "apps/v1", Kind: "Deployment"}, {APIVersion: "apps/v1", Kind: "StatefulSet"}}}))
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "statefulsets") || strings.Contains(err.Error(), `"patch" on deployments`) {
		t.Fatalf("a Sleep of StatefulSets from a user who may not patch them: %v", err)
	}
	// Never a ClusterSleep: RBAC refuses it before any webhook (the aggregated roles let
	// namespace users read ClusterSleeps only: test/install checks them).
	err = dev.Create(bg, &sleepv1alpha1.ClusterSleep{ObjectMeta: metav1.ObjectMeta{Name: "everything-" + ns},
		Spec: sleepv1alpha1.ClusterSleepSpec{SleepSpec: sleepv1alpha1.SleepSpec{Asleep: nights}, NamespaceSelector: &metav1.LabelSelector{}}})
	if !apierrors.IsForbidden(err) || strings.Contains(err.Error(), "denied the request") {
		t.Fatalf("a ClusterSleep from a namespace user: %v, want Forbidden by RBAC", err)
	}
	// Lists beyond admission's limits.
	var tiers []sleepv1alpha1.Tier
	for i := range sleepv1alpha1.MaxTiers + 1 {
		tiers = append(tiers, sleepv1alpha1.Tier{Name: fmt.Sprintf("t%d", i), Selector: metav1.LabelSelector{MatchLabels: map[string]string{"t": fmt.Sprint(i)}}})
	}
	err = dev.Create(bg, newSleep(ns, "tiers", sleepv1alpha1.SleepSpec{Asleep: nights, Kinds: mine.Spec.Kinds, Wake: sleepv1alpha1.Wake{Tiers: tiers}}))
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.wake.tiers") {
		t.Fatalf("9 tiers: %v", err)
	}

	// What the Sleep puts to sleep: its namespace's workloads, never another's, whatever
	// the labels.
	a, b := deployment(ns, "a", 2, map[string]string{"team": "a"}), deployment(other, "a", 2, map[string]string{"team": "a"})
	create(t, a, b)
	clk := newOffsetClock(monday.Add(time.Minute))
	s := startSleeper(t, clk, sleeperOpts{}, ns, other)
	eventually(t, 10*time.Second, func() error {
		if r := replicas(t, "apps/v1/Deployment", ns, "a"); r != 0 {
			return fmt.Errorf("a has %d replicas", r)
		}
		return nil
	})
	s.reconciles.Fence(t, "sleep", client.ObjectKeyFromObject(mine), func() { poke(t, mine) })
	if got := get(t, "apps/v1/Deployment", other, "a"); replicas(t, "apps/v1/Deployment", other, "a") != 2 || record(t, got) != nil {
		t.Errorf("the Sleep of %s touched %s/a", ns, other)
	}
}
