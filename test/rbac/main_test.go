// Package rbac_test checks who may make almanac act, against a real kube-apiserver with RBAC
// authorization on: namespace users bound to the built-in admin, edit and view ClusterRoles
// (into which the chart's generated roles aggregate) can use almanac's kinds, and the
// validating webhook's permission check refuses a ScheduledJob, EventJob or
// ScheduledPodAutoscaler from a user who may not create the Jobs or HorizontalPodAutoscalers
// that almanac would create for them. The webhooks run as the manager's ServiceAccount with
// exactly the ClusterRole generated into config/rbac, and the roles for users are the chart's
// own, rendered by Helm.
package rbac_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	"github.com/almanac-dev/almanac/api/scheme"
	"github.com/almanac-dev/almanac/test/testenv"
	"github.com/almanac-dev/almanac/webhooks"
)

// The chart is rendered as release "almanac" in almanac-system, so its roles are
// almanac-admin, almanac-edit and almanac-view, and the manager is almanac-system/almanac.
const (
	releaseNS = "almanac-system"
	managerSA = "system:serviceaccount:" + releaseNS + ":almanac"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	ctrl.SetLogger(logr.Discard())
	var err error
	if env, err = testenv.StartWith(testenv.Options{Webhooks: true}); err != nil {
		return 0, err
	}
	defer func() { _ = env.Stop() }()
	ctx := context.Background()

	// The chart's roles for namespace users, as Helm renders them, folded into the built-in
	// roles as kube-controller-manager would.
	roles, err := renderChart("--show-only", "templates/generated/aggregate-roles.yaml")
	if err != nil {
		return 0, err
	}
	if err := apply(ctx, roles); err != nil {
		return 0, err
	}
	if err := aggregateClusterRoles(ctx, env.Client); err != nil {
		return 0, err
	}

	// The manager's identity: its ServiceAccount with the generated ClusterRole, nothing more.
	if err := bindManagerRole(ctx); err != nil {
		return 0, err
	}
	asManager := rest.CopyConfig(env.Config)
	asManager.Impersonate = rest.ImpersonationConfig{UserName: managerSA, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + releaseNS, "system:authenticated"}}
	mgr, err := ctrl.NewManager(asManager, manager.Options{
		Scheme:                 scheme.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          webhook.NewServer(env.Webhook),
		Cache:                  testenv.CacheOptions(), // what the manager binary's cache keeps
	})
	if err != nil {
		return 0, err
	}
	if err := testenv.RegisterIndexes(mgr); err != nil {
		return 0, err
	}
	if err := webhooks.SetupWithManager(mgr, clocktesting.NewFakePassiveClock(time.Date(2027, time.January, 15, 12, 0, 0, 0, time.UTC))); err != nil {
		return 0, err
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "the manager stopped with an error:", err)
		}
	}()
	if err := env.WaitForWebhookServer(mctx, done); err != nil {
		return 0, err
	}
	if !mgr.GetCache().WaitForCacheSync(mctx) {
		return 0, errors.New("the manager's cache did not sync: does the generated ClusterRole let it list what the webhooks read?")
	}
	return m.Run(), nil
}

// bindManagerRole creates the ClusterRole of config/rbac/role.yaml (what the chart's
// generated/manager-rbac.yaml grants) and binds it to the manager's ServiceAccount.
func bindManagerRole(ctx context.Context) error {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "rbac", "role.yaml"))
	if err != nil {
		return err
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(data, role); err != nil {
		return err
	}
	if err := env.Client.Create(ctx, role); err != nil {
		return err
	}
	return env.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: managerSA}},
	})
}

// renderChart runs `helm template` on the chart (release almanac in almanac-system) with the
// given arguments and returns the objects.
func renderChart(args ...string) ([]*unstructured.Unstructured, error) {
	helm := os.Getenv("HELM")
	if helm == "" {
		return nil, errors.New("HELM is not set: run these tests through `make unit`, which installs the pinned Helm and exports HELM, or set HELM to a Helm 4 binary")
	}
	home, err := os.MkdirTemp("", "almanac-helm-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(home) }()
	cmd := exec.Command(helm, append([]string{"template", "almanac", "charts/almanac", "--namespace", releaseNS}, args...)...)
	cmd.Dir = testenv.RepoRoot()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("helm template %s: %w\n%s", strings.Join(args, " "), err, errOut.String())
	}
	var objs []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(&out))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			return nil, err
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

func apply(ctx context.Context, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil {
			return fmt.Errorf("create %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}

// aggregateClusterRoles does what kube-controller-manager's clusterrole-aggregation
// controller does (k8s.io/kubernetes/pkg/controller/clusterroleaggregation), since envtest
// runs no controller manager: each ClusterRole with an aggregationRule gets the rules of the
// ClusterRoles its selectors match, in name order, without duplicates; repeated until
// nothing changes, because the built-in roles chain (view is aggregated into edit, edit into
// admin).
func aggregateClusterRoles(ctx context.Context, c client.Client) error {
	for range 10 {
		list := &rbacv1.ClusterRoleList{}
		if err := c.List(ctx, list); err != nil {
			return err
		}
		changed := false
		for i := range list.Items {
			role := &list.Items[i]
			if role.AggregationRule == nil {
				continue
			}
			rules := []rbacv1.PolicyRule{}
			for _, s := range role.AggregationRule.ClusterRoleSelectors {
				sel, err := metav1.LabelSelectorAsSelector(&s)
				if err != nil {
					return err
				}
				for _, other := range list.Items { // the API server lists them by name
					if other.Name == role.Name || !sel.Matches(labels.Set(other.Labels)) {
						continue
					}
					for _, r := range other.Rules {
						if !containsRule(rules, r) {
							rules = append(rules, r)
						}
					}
				}
			}
			if equality.Semantic.DeepEqual(rules, role.Rules) {
				continue
			}
			role.Rules = rules
			if err := c.Update(ctx, role); err != nil {
				return err
			}
			changed = true
		}
		if !changed {
			return nil
		}
	}
	return errors.New("the ClusterRoles' aggregation did not settle")
}

func containsRule(rules []rbacv1.PolicyRule, r rbacv1.PolicyRule) bool {
	for _, have := range rules {
		if equality.Semantic.DeepEqual(have, r) {
			return true
		}
	}
	return false
}
