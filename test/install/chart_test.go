package install

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/api/index"
	"github.com/almanac-dev/almanac/api/scheme"
	"github.com/almanac-dev/almanac/certs"
	"github.com/almanac-dev/almanac/commands/check"
	"github.com/almanac-dev/almanac/test/testenv"
)

// The chart is installed as release "almanac" in almanac-system, so its names are the
// manager's defaults.
const (
	release   = "almanac"
	releaseNS = "almanac-system"
)

// helmBin is the pinned Helm that the Makefile installs and exports as HELM.
func helmBin(t *testing.T) string {
	t.Helper()
	h := os.Getenv("HELM")
	if h == "" {
		t.Fatal("HELM is not set: run these tests through `make chart-test` or `make unit`, which install the pinned Helm and export HELM, or set HELM to a Helm 4 binary")
	}
	if _, err := os.Stat(h); err != nil {
		t.Fatalf("HELM=%s: %v: run `make helm` to install the pinned Helm", h, err)
	}
	return h
}

// runHelm runs helm with its caches in a temporary folder and the given kubeconfig (may be
// empty for offline commands).
func runHelm(t *testing.T, kubeconfig string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(helmBin(t), args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home, "KUBECONFIG="+kubeconfig)
	cmd.Dir = testenv.RepoRoot()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), nil
}

// chartAPIServer is a second API server, without almanac's CRDs (the chart installs them)
// but with cert-manager's (so that the cert-manager mode's objects can be validated).
var chartAPIServer struct {
	once       sync.Once
	env        *envtest.Environment
	cfg        *rest.Config
	kubeconfig string
	client     client.Client
	err        error
}

func chartEnv(t *testing.T) (*rest.Config, client.Client, string) {
	t.Helper()
	s := &chartAPIServer
	s.once.Do(func() {
		crds, err := certManagerCRDs()
		if err != nil {
			s.err = err
			return
		}
		s.env = &envtest.Environment{CRDDirectoryPaths: []string{crds}, ErrorIfCRDPathMissing: true}
		if s.cfg, s.err = s.env.Start(); s.err != nil {
			return
		}
		dir, err := os.MkdirTemp("", "almanac-chart-")
		if err != nil {
			s.err = err
			return
		}
		s.kubeconfig = filepath.Join(dir, "kubeconfig")
		if s.err = os.WriteFile(s.kubeconfig, s.env.KubeConfig, 0o600); s.err != nil {
			return
		}
		s.client, s.err = client.New(s.cfg, client.Options{Scheme: scheme.Scheme})
	})
	if s.err != nil {
		t.Fatalf("failed to start the chart's API server: %v", s.err)
	}
	return s.cfg, s.client, s.kubeconfig
}

func stopChartEnv() {
	if chartAPIServer.env != nil {
		_ = chartAPIServer.env.Stop()
		_ = os.RemoveAll(filepath.Dir(chartAPIServer.kubeconfig))
	}
}

// certManagerCRDs is cert-manager's CRD folder in the module cache, at the version almanac
// builds with.
func certManagerCRDs() (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/cert-manager/cert-manager")
	cmd.Dir = testenv.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -m github.com/cert-manager/cert-manager: %w", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "deploy", "crds"), nil
}

// strictScheme knows every kind the chart renders except the ServiceMonitor.
var strictScheme = func() *runtime.Scheme {
	s := scheme.New()
	if err := cmapi.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := flowcontrolv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// serviceMonitor mirrors the fields of monitoring.coreos.com/v1 ServiceMonitor that the chart
// uses (almanac does not depend on prometheus-operator's Go module); decoded strictly, it
// catches misspelled or misplaced fields.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port            string `json:"port"`
			Scheme          string `json:"scheme"`
			Path            string `json:"path"`
			Interval        string `json:"interval"`
			ScrapeTimeout   string `json:"scrapeTimeout"`
			BearerTokenFile string `json:"bearerTokenFile"`
			HonorLabels     bool   `json:"honorLabels"`
			TLSConfig       struct {
				InsecureSkipVerify bool   `json:"insecureSkipVerify"`
				ServerName         string `json:"serverName"`
			} `json:"tlsConfig"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// prometheusRule is the prometheus-operator PrometheusRule the chart renders (no Go types of
// prometheus-operator here: its shape, strictly).
type prometheusRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert       string            `json:"alert"`
				Expr        string            `json:"expr"`
				For         string            `json:"for"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

// rendered is one object of a rendered chart: typed, and as unstructured for the API server.
type rendered struct {
	obj runtime.Object
	u   *unstructured.Unstructured
}

// decodeStrict decodes every document of a rendered chart into its Go type, refusing unknown
// and duplicate fields.
func decodeStrict(t *testing.T, manifest string) []rendered {
	t.Helper()
	codec := json.NewSerializerWithOptions(json.DefaultMetaFactory, strictScheme, strictScheme, json.SerializerOptions{Yaml: true, Strict: true})
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifest)))
	var out []rendered
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatalf("rendered YAML does not parse: %v\n%s", err, doc)
		}
		if len(u.Object) == 0 {
			continue
		}
		if u.GetKind() == "ServiceMonitor" {
			sm := &serviceMonitor{}
			if err := yaml.UnmarshalStrict(doc, sm); err != nil {
				t.Fatalf("ServiceMonitor: %v\n%s", err, doc)
			}
			out = append(out, rendered{obj: nil, u: u})
			continue
		}
		if u.GetKind() == "PrometheusRule" {
			// Its rules are checked by promtool in test/monitoring.
			pr := &prometheusRule{}
			if err := yaml.UnmarshalStrict(doc, pr); err != nil || pr.APIVersion != "monitoring.coreos.com/v1" || len(pr.Spec.Groups) == 0 {
				t.Fatalf("PrometheusRule: %v\n%s", err, doc)
			}
			out = append(out, rendered{obj: nil, u: u})
			continue
		}
		obj, _, err := codec.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s %s does not decode strictly: %v\n%s", u.GetKind(), u.GetName(), err, doc)
		}
		out = append(out, rendered{obj: obj, u: u})
	}
}

func find[T runtime.Object](objs []rendered) []T {
	var out []T
	for _, o := range objs {
		if v, ok := o.obj.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

type renderCase struct {
	name     string
	args     []string
	mode     certs.Mode
	replicas int32
	// minAvailable is the PodDisruptionBudget's.
	minAvailable int
	// noCRDs: crds.enabled=false; dropCRDs: crds.keep=false (no resource-policy keep).
	noCRDs, dropCRDs bool
	serviceMonitor   bool
	// monitoring: prometheusRule.enabled and dashboard.enabled.
	monitoring bool
	// noAggregatedRoles: rbac.aggregateToDefaultRoles=false; noPermissionCheck:
	// webhook.permissionCheck=false.
	noAggregatedRoles, noPermissionCheck bool
	// watchNamespaces is the value of watchNamespaces (none: every namespace).
	watchNamespaces []string
	// noAdmissionPolicy: validatingAdmissionPolicy.enabled=false.
	noAdmissionPolicy bool
	// noPriorityAndFairness: priorityAndFairness.enabled=false.
	noPriorityAndFairness bool
}

var renderCases = []renderCase{
	{name: "self-managed", mode: certs.ModeSelfManaged, replicas: 2, minAvailable: 1},
	{name: "cert-manager", args: []string{"--set", "certificates.mode=cert-manager"}, mode: certs.ModeCertManager, replicas: 2, minAvailable: 1},
	{name: "cert-manager with a ClusterIssuer", args: []string{
		"--set", "certificates.mode=cert-manager", "--set", "certificates.certManager.issuerRef.name=corp-ca", "--set", "certificates.certManager.issuerRef.kind=ClusterIssuer",
	}, mode: certs.ModeCertManager, replicas: 2, minAvailable: 1},
	{name: "external", args: []string{
		"--set", "certificates.mode=external", "--set", "certificates.external.secretName=almanac-tls", "--set-file", "certificates.external.caBundle=test/install/testdata/external-ca.crt",
	}, mode: certs.ModeExternal, replicas: 2, minAvailable: 1},
	{name: "HA", args: []string{"-f", "test/install/testdata/values-ha.yaml"}, mode: certs.ModeSelfManaged, replicas: 3, minAvailable: 2, serviceMonitor: true, monitoring: true},
	{name: "CRDs not kept", args: []string{"--set", "crds.keep=false"}, mode: certs.ModeSelfManaged, replicas: 2, minAvailable: 1, dropCRDs: true},
	{name: "CRDs left to the user", args: []string{"--set", "crds.enabled=false"}, mode: certs.ModeSelfManaged, replicas: 2, minAvailable: 1, noCRDs: true},
	{name: "roles for users left to the user", args: []string{"--set", "rbac.aggregateToDefaultRoles=false"}, mode: certs.ModeSelfManaged, replicas: 2, minAvailable: 1, noAggregatedRoles: true},
	{name: "permission check off", args: []string{"--set", "webhook.permissionCheck=false"}, mode: certs.ModeSelfManaged, replicas: 2, minAvailable: 1, noPermissionCheck: true},
	{name: "namespaced", args: []string{"--set", "watchNamespaces={team-a,team-b}"}, mode: certs.ModeSelfManaged, replicas: 2, minAvailable: 1,
		watchNamespaces: []string{"team-a", "team-b"}},
	{name: "namespaced, cert-manager, release namespace watched", args: []string{"--set", "certificates.mode=cert-manager", "--set", "watchNamespaces={render}"},
		mode: certs.ModeCertManager, replicas: 2, minAvailable: 1, watchNamespaces: []string{"render"}},
	{name: "admission policy off", args: []string{"--set", "validatingAdmissionPolicy.enabled=false"}, mode: certs.ModeSelfManaged, replicas: 2, minAvailable: 1, noAdmissionPolicy: true},
	{name: "priority and fairness off", args: []string{"--set", "priorityAndFairness.enabled=false"}, mode: certs.ModeSelfManaged, replicas: 2, minAvailable: 1, noPriorityAndFairness: true},
}

func TestHelmLint(t *testing.T) {
	for _, tc := range renderCases {
		t.Run(tc.name, func(t *testing.T) {
			if out, err := runHelm(t, "", append([]string{"lint", "--strict", "charts/almanac"}, tc.args...)...); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
		})
	}
	// The schema refuses what the templates would silently ignore or render wrong.
	for _, bad := range [][]string{
		{"--set", "certificates.mode=self-signed"},
		{"--set", "certificates.mode=external"},
		{"--set", "replicas=2"},
		{"--set", "webhook.failurePolicy=fail"},
		{"--set", "webhook.permissionCheck=maybe"},
		{"--set", "rbac.aggregateToDefaultRole=false"},
		{"--set", "watchNamespaces=team-a"},
		{"--set", "watchNamespaces={team-a,team-a}"},
		{"--set", "watchNamespaces={Team_A}"},
		{"--set", "watchNamespaces={team-a,}"},
		{"--set", "validatingAdmissionPolicy.enable=false"},
		{"--set", "validatingAdmissionPolicy.protectedNamespaces={kube_system}"},
		{"--set", "prometheusRule.enable=true"},
		{"--set", "prometheusRule.thresholds.webhookErrorRatio=2"},
		{"--set", "prometheusRule.thresholds.transitionLagSeconds=0"},
		{"--set", "prometheusRule.selector=almanac"},
		{"--set", "dashboard.enabled=yes"},
		{"--set", "priorityAndFairness.enable=false"},
		{"--set", "priorityAndFairness.matchingPrecedence=9000"}, // the suggested service-accounts FlowSchema would win
		{"--set", "priorityAndFairness.matchingPrecedence=1"},    // the mandatory exempt FlowSchema's
		{"--set", "priorityAndFairness.nominalConcurrencyShares=0"},
		{"--set", "priorityAndFairness.lendablePercent=101"},
	} {
		if _, err := runHelm(t, "", append([]string{"template", release, "charts/almanac"}, bad...)...); err == nil {
			t.Errorf("helm template %v succeeded, want a schema error", bad)
		}
	}
}

// TestHelmTemplate renders the chart in each certificate mode and with HA values, decodes
// every object strictly into its Go type, checks what the chart promises, and has the API
// server validate every object with a server-side dry-run create.
func TestHelmTemplate(t *testing.T) {
	_, c, _ := chartEnv(t)
	ctx := context.Background()
	for _, n := range []*corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: "render"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "team-b"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "restricted", Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}},
	} {
		if err := c.Create(ctx, n); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	externalCA, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "test", "install", "testdata", "external-ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range renderCases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"template", release, "charts/almanac", "--namespace", "render"}, tc.args...)
			manifest, err := runHelm(t, "", args...)
			if err != nil {
				t.Fatal(err)
			}
			again, err := runHelm(t, "", args...)
			if err != nil {
				t.Fatal(err)
			}
			if manifest != again {
				t.Fatal("two renders of the same values differ (a GitOps tool would see drift)")
			}
			objs := decodeStrict(t, manifest)
			if got := strings.Contains(manifest, "caBundle:"); got != (tc.mode == certs.ModeExternal) {
				t.Errorf("the chart renders a caBundle: %v, want it only in external mode", got)
			}
			checkWebhooks(t, objs, tc.mode, externalCA)
			checkRBAC(t, objs, tc.mode, tc.watchNamespaces)
			checkManagerScope(t, objs, tc.watchNamespaces)
			checkAdmissionPolicy(t, objs, tc)
			checkDeployment(t, objs, tc)
			checkCertificates(t, objs, tc.mode)
			checkCRDs(t, objs, tc)
			checkMetrics(t, objs, tc)
			checkAggregatedRoles(t, objs, tc)
			checkReleaseHook(t, objs, tc.watchNamespaces)
			checkPriorityAndFairness(t, objs, tc)
			dryRun(t, c, objs)
			podSecurity(t, c, objs)
		})
	}
}

func checkWebhooks(t *testing.T, objs []rendered, mode certs.Mode, externalCA []byte) {
	t.Helper()
	groups := map[string]bool{"autoscaling.almanac.dev": true, "batch.almanac.dev": true, "almanac.dev": true}
	type hook struct {
		name      string
		cc        admissionregistrationv1.WebhookClientConfig
		fp        *admissionregistrationv1.FailurePolicyType
		se        *admissionregistrationv1.SideEffectClass
		timeout   *int32
		rules     []admissionregistrationv1.RuleWithOperations
		conds     []admissionregistrationv1.MatchCondition
		annotated string
	}
	var hooks []hook
	for _, m := range find[*admissionregistrationv1.MutatingWebhookConfiguration](objs) {
		for _, w := range m.Webhooks {
			hooks = append(hooks, hook{w.Name, w.ClientConfig, w.FailurePolicy, w.SideEffects, w.TimeoutSeconds, w.Rules, w.MatchConditions, m.Annotations["cert-manager.io/inject-ca-from"]})
		}
	}
	for _, v := range find[*admissionregistrationv1.ValidatingWebhookConfiguration](objs) {
		for _, w := range v.Webhooks {
			hooks = append(hooks, hook{w.Name, w.ClientConfig, w.FailurePolicy, w.SideEffects, w.TimeoutSeconds, w.Rules, w.MatchConditions, v.Annotations["cert-manager.io/inject-ca-from"]})
		}
	}
	if len(hooks) == 0 {
		t.Fatal("no webhooks rendered")
	}
	for _, h := range hooks {
		if h.fp == nil || *h.fp != admissionregistrationv1.Fail || h.se == nil || *h.se != admissionregistrationv1.SideEffectClassNone || h.timeout == nil || *h.timeout != 5 {
			t.Errorf("webhook %s: failurePolicy %v, sideEffects %v, timeoutSeconds %v; want Fail, None, 5", h.name, h.fp, h.se, h.timeout)
		}
		if h.cc.Service == nil || h.cc.Service.Name != "almanac-webhook" || h.cc.Service.Namespace != "render" || h.cc.URL != nil {
			t.Errorf("webhook %s: clientConfig %+v, want the Service almanac-webhook in render", h.name, h.cc)
		}
		for _, r := range h.rules {
			for _, g := range r.APIGroups {
				if !groups[g] {
					t.Errorf("webhook %s intercepts group %q", h.name, g)
				}
			}
		}
		if !slices.ContainsFunc(h.conds, func(c admissionregistrationv1.MatchCondition) bool {
			return strings.Contains(c.Expression, "!has(object.metadata.deletionTimestamp)")
		}) {
			t.Errorf("webhook %s does not skip objects being deleted", h.name)
		}
		switch mode {
		case certs.ModeExternal:
			if !bytes.Equal(h.cc.CABundle, externalCA) {
				t.Errorf("webhook %s: caBundle is not the given CA", h.name)
			}
		case certs.ModeCertManager:
			if h.annotated != "render/almanac-webhook" {
				t.Errorf("webhook %s: inject-ca-from %q, want render/almanac-webhook", h.name, h.annotated)
			}
		default:
			if h.annotated != "" {
				t.Errorf("webhook %s is annotated for cert-manager in %s mode", h.name, mode)
			}
		}
	}
}

// checkRBAC: no wildcards; Secrets only in the release namespace, by name (create, which
// Kubernetes cannot limit to a name, excepted), and only in self-managed mode; the webhook
// configurations only by name, written only in self-managed mode; CRDs only read, by name.
func checkRBAC(t *testing.T, objs []rendered, mode certs.Mode, watched []string) {
	t.Helper()
	wild := func(where string, rules []rbacv1.PolicyRule) {
		for _, r := range rules {
			for _, l := range [][]string{r.APIGroups, r.Resources, r.Verbs, r.ResourceNames, r.NonResourceURLs} {
				if slices.ContainsFunc(l, func(s string) bool { return strings.Contains(s, "*") }) {
					t.Errorf("%s has a wildcard: %+v", where, r)
				}
			}
		}
	}
	writes := func(r rbacv1.PolicyRule) bool {
		return slices.ContainsFunc(r.Verbs, func(v string) bool { return v != "get" && v != "list" && v != "watch" })
	}
	webhookWriters := 0
	scoped := func(where string, r rbacv1.PolicyRule) {
		if slices.Contains(r.Resources, "mutatingwebhookconfigurations") || slices.Contains(r.Resources, "validatingwebhookconfigurations") {
			if !slices.Equal(r.ResourceNames, []string{"almanac-webhook"}) {
				t.Errorf("%s grants webhook configurations beyond almanac-webhook: %+v", where, r)
			}
			if writes(r) {
				webhookWriters++
			}
		}
		if slices.Contains(r.Resources, "customresourcedefinitions") {
			if writes(r) || len(r.ResourceNames) == 0 {
				t.Errorf("%s grants more than reading almanac's CRDs by name: %+v", where, r)
			}
		}
	}
	for _, cr := range find[*rbacv1.ClusterRole](objs) {
		wild("ClusterRole "+cr.Name, cr.Rules)
		for _, r := range cr.Rules {
			if slices.Contains(r.Resources, "secrets") {
				t.Errorf("ClusterRole %s grants Secrets cluster-wide: %+v", cr.Name, r)
			}
			scoped("ClusterRole "+cr.Name, r)
		}
	}
	secretRules := 0
	for _, role := range find[*rbacv1.Role](objs) {
		wild("Role "+role.Name, role.Rules)
		if role.Namespace != "render" && (role.Name != "almanac-manager" && role.Name != "almanac-release-jobs" || !slices.Contains(watched, role.Namespace)) {
			t.Errorf("Role %s is in namespace %q, neither the release namespace nor the manager's or the uninstall hook's Role in a watched one", role.Name, role.Namespace)
		}
		for _, r := range role.Rules {
			scoped("Role "+role.Name, r)
			if !slices.Contains(r.Resources, "secrets") {
				continue
			}
			secretRules++
			if !slices.Equal(r.Verbs, []string{"create"}) && !slices.Equal(r.ResourceNames, []string{"almanac-webhook-ca"}) {
				t.Errorf("Role %s grants Secrets other than the CA Secret: %+v", role.Name, r)
			}
		}
	}
	if mode == certs.ModeSelfManaged {
		if webhookWriters == 0 || secretRules == 0 {
			t.Errorf("self-managed mode: %d rules write the webhook configurations and %d grant the CA Secret; the leader cannot inject the bundle", webhookWriters, secretRules)
		}
	} else if webhookWriters+secretRules != 0 {
		t.Errorf("%s mode: %d rules write the webhook configurations and %d grant Secrets; want none", mode, webhookWriters, secretRules)
	}
	// Every binding refers to a role of the chart and to one of its ServiceAccounts.
	roles := map[string]bool{}
	for _, cr := range find[*rbacv1.ClusterRole](objs) {
		roles["ClusterRole/"+cr.Name] = true
	}
	for _, r := range find[*rbacv1.Role](objs) {
		roles["Role/"+r.Namespace+"/"+r.Name] = true
	}
	bound := func(name, namespace string, ref rbacv1.RoleRef, subjects []rbacv1.Subject) {
		key := ref.Kind + "/" + ref.Name
		if ref.Kind == "Role" {
			key = ref.Kind + "/" + namespace + "/" + ref.Name
		}
		if !roles[key] {
			t.Errorf("binding %s/%s refers to %s %s, which the chart does not render", namespace, name, ref.Kind, ref.Name)
		}
		for _, s := range subjects {
			if s.Kind != rbacv1.ServiceAccountKind || s.Namespace != "render" {
				t.Errorf("binding %s binds %+v, not a ServiceAccount of the release", name, s)
			}
		}
	}
	for _, b := range find[*rbacv1.ClusterRoleBinding](objs) {
		bound(b.Name, "", b.RoleRef, b.Subjects)
	}
	for _, b := range find[*rbacv1.RoleBinding](objs) {
		bound(b.Name, b.Namespace, b.RoleRef, b.Subjects)
	}
}

// checkManagerScope: where the manager may act on Jobs, CronJobs, HPAs, events and almanac's
// kinds. With watchNamespaces empty, a ClusterRole grants them; with a list, a Role in each
// watched namespace grants them (the same rules, from config/rbac), no ClusterRole grants
// any of them, and the manager is told to watch exactly those namespaces. SubjectAccessReviews
// stay cluster-wide.
func checkManagerScope(t *testing.T, objs []rendered, watched []string) {
	t.Helper()
	grants := func(rules []rbacv1.PolicyRule, resource, verb string) bool {
		return slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb)
		})
	}
	managerBound := map[string]bool{}
	for _, b := range find[*rbacv1.ClusterRoleBinding](objs) {
		if slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool { return s.Name == "almanac" && s.Namespace == "render" }) {
			managerBound[b.RoleRef.Name] = true
		}
	}
	var managerCluster *rbacv1.ClusterRole
	for _, cr := range find[*rbacv1.ClusterRole](objs) {
		if cr.Name == "almanac-manager" {
			managerCluster = cr
		}
		if len(watched) == 0 {
			continue
		}
		// No ClusterRole grants anything on the kinds that live in the watched namespaces:
		// none grants Jobs, CronJobs, HPAs or events at all, and none bound to the manager
		// grants almanac's kinds (the aggregated roles grant them to users, through their
		// namespaces' bindings).
		for _, r := range cr.Rules {
			for _, res := range r.Resources {
				base, _, _ := strings.Cut(res, "/")
				builtin := slices.Contains([]string{"jobs", "cronjobs", "horizontalpodautoscalers", "events"}, base)
				almanac := slices.Contains([]string{"scheduledjobs", "eventjobs", "scheduledpodautoscalers", "schedules"}, base)
				if builtin || (almanac && managerBound[cr.Name]) {
					t.Errorf("namespaced mode: ClusterRole %s grants %v on %s in every namespace", cr.Name, r.Verbs, res)
				}
			}
		}
	}
	if managerCluster == nil || !grants(managerCluster.Rules, "subjectaccessreviews", "create") {
		t.Errorf("no ClusterRole almanac-manager granting create on subjectaccessreviews: %+v", managerCluster)
	}
	managerRoles := map[string]*rbacv1.Role{}
	for _, r := range find[*rbacv1.Role](objs) {
		if r.Name == "almanac-manager" {
			managerRoles[r.Namespace] = r
		}
	}
	bound := map[string]bool{}
	for _, b := range find[*rbacv1.RoleBinding](objs) {
		if b.RoleRef.Kind == "Role" && b.RoleRef.Name == "almanac-manager" && len(b.Subjects) == 1 && b.Subjects[0].Name == "almanac" && b.Subjects[0].Namespace == "render" {
			bound[b.Namespace] = true
		}
	}
	want := map[string][]string{
		"jobs": {"create", "delete", "get", "list", "patch", "watch"}, "cronjobs": {"get", "list", "watch"},
		"horizontalpodautoscalers": {"create", "get", "list", "patch", "watch"}, "events": {"create", "patch"},
		"scheduledjobs": {"get", "list", "watch"}, "scheduledjobs/status": {"patch"}, "scheduledjobs/finalizers": {"update"},
		"schedules/status": {"patch"},
	}
	check := func(where string, rules []rbacv1.PolicyRule) {
		for res, verbs := range want {
			for _, v := range verbs {
				if !grants(rules, res, v) {
					t.Errorf("%s does not grant %s on %s", where, v, res)
				}
			}
		}
		if grants(rules, "subjectaccessreviews", "create") && !strings.HasPrefix(where, "ClusterRole") {
			t.Errorf("%s grants subjectaccessreviews, which are cluster-scoped", where)
		}
	}
	if len(watched) == 0 {
		if managerCluster != nil {
			check("ClusterRole almanac-manager", managerCluster.Rules)
		}
		if len(managerRoles) != 0 {
			t.Errorf("every namespace watched, yet the manager has Roles in %v", slices.Collect(maps.Keys(managerRoles)))
		}
	} else {
		for _, ns := range watched {
			r := managerRoles[ns]
			if r == nil || !bound[ns] {
				t.Errorf("no Role almanac-manager bound to the manager's ServiceAccount in the watched namespace %s", ns)
				continue
			}
			check("Role "+ns+"/almanac-manager", r.Rules)
		}
		if len(managerRoles) != len(watched) {
			t.Errorf("the manager has Roles in %v, want exactly %v", slices.Collect(maps.Keys(managerRoles)), watched)
		}
	}
	deps := find[*appsv1.Deployment](objs)
	if len(deps) == 1 {
		args := deps[0].Spec.Template.Spec.Containers[0].Args
		flag := slices.IndexFunc(args, func(a string) bool { return strings.HasPrefix(a, "--watch-namespaces") })
		switch {
		case len(watched) == 0 && flag >= 0:
			t.Errorf("every namespace watched, yet the manager is given %s", args[flag])
		case len(watched) > 0 && (flag < 0 || args[flag] != "--watch-namespaces="+strings.Join(watched, ",")):
			t.Errorf("manager args %v do not watch exactly %v", args, watched)
		}
	}
}

// checkAdmissionPolicy: the ValidatingAdmissionPolicy that refuses Jobs created by the
// manager's ServiceAccount in the release namespace and in Kubernetes' own, with its binding,
// unless turned off.
func checkAdmissionPolicy(t *testing.T, objs []rendered, tc renderCase) {
	t.Helper()
	policies := find[*admissionregistrationv1.ValidatingAdmissionPolicy](objs)
	bindings := find[*admissionregistrationv1.ValidatingAdmissionPolicyBinding](objs)
	if tc.noAdmissionPolicy {
		if len(policies)+len(bindings) != 0 {
			t.Errorf("validatingAdmissionPolicy.enabled=false renders %d policies and %d bindings", len(policies), len(bindings))
		}
		return
	}
	if len(policies) != 1 || len(bindings) != 1 {
		t.Fatalf("%d ValidatingAdmissionPolicies and %d bindings, want 1 and 1", len(policies), len(bindings))
	}
	p, b := policies[0], bindings[0]
	if b.Spec.PolicyName != p.Name || !slices.Equal(b.Spec.ValidationActions, []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}) {
		t.Errorf("binding %s: policy %q, actions %v; want %q and Deny", b.Name, b.Spec.PolicyName, b.Spec.ValidationActions, p.Name)
	}
	if p.Spec.FailurePolicy == nil || *p.Spec.FailurePolicy != admissionregistrationv1.Fail {
		t.Errorf("policy %s: failurePolicy %v, want Fail", p.Name, p.Spec.FailurePolicy)
	}
	mc := p.Spec.MatchConstraints
	if mc == nil || len(mc.ResourceRules) != 1 || !slices.Equal(mc.ResourceRules[0].APIGroups, []string{"batch"}) ||
		!slices.Equal(mc.ResourceRules[0].Resources, []string{"jobs"}) ||
		!slices.Equal(mc.ResourceRules[0].Operations, []admissionregistrationv1.OperationType{admissionregistrationv1.Create}) {
		t.Fatalf("policy %s does not match exactly the creation of batch jobs: %+v", p.Name, mc)
	}
	if mc.NamespaceSelector == nil || len(mc.NamespaceSelector.MatchExpressions) != 1 {
		t.Fatalf("policy %s: namespaceSelector %+v", p.Name, mc.NamespaceSelector)
	}
	e := mc.NamespaceSelector.MatchExpressions[0]
	if e.Key != "kubernetes.io/metadata.name" || e.Operator != metav1.LabelSelectorOpIn || !slices.Equal(e.Values, []string{"render", "kube-system", "kube-public", "kube-node-lease"}) {
		t.Errorf("policy %s selects namespaces %+v, want the release namespace and Kubernetes' own", p.Name, e)
	}
	if len(p.Spec.Validations) != 1 || p.Spec.Validations[0].Expression != `request.userInfo.username != "system:serviceaccount:render:almanac"` {
		t.Errorf("policy %s: validations %+v, want one on the manager's ServiceAccount", p.Name, p.Spec.Validations)
	}
}

// checkAggregatedRoles: almanac-admin, almanac-edit and almanac-view, each with the label
// that aggregates it into the built-in role of the same name, covering every CRD the chart
// knows (all verbs for admin and edit, read for view; status only readable, through view);
// none with rbac.aggregateToDefaultRoles=false.
func checkAggregatedRoles(t *testing.T, objs []rendered, tc renderCase) {
	t.Helper()
	roles := map[string]*rbacv1.ClusterRole{}
	for _, cr := range find[*rbacv1.ClusterRole](objs) {
		for k, v := range cr.Labels {
			if strings.HasPrefix(k, "rbac.authorization.k8s.io/aggregate-to-") && v == "true" {
				roles[cr.Name] = cr
			}
		}
	}
	if tc.noAggregatedRoles {
		if len(roles) != 0 {
			t.Errorf("rbac.aggregateToDefaultRoles=false renders %d aggregated roles", len(roles))
		}
		return
	}
	grants := func(cr *rbacv1.ClusterRole, group, resource, verb string) bool {
		return slices.ContainsFunc(cr.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb)
		})
	}
	for _, builtin := range []string{"admin", "edit", "view"} {
		cr := roles["almanac-"+builtin]
		if cr == nil {
			t.Errorf("no ClusterRole almanac-%s", builtin)
			continue
		}
		if len(cr.Labels) == 0 || cr.Labels["rbac.authorization.k8s.io/aggregate-to-"+builtin] != "true" {
			t.Errorf("ClusterRole %s does not aggregate into %s: labels %v", cr.Name, builtin, cr.Labels)
		}
		for _, crd := range check.CRDNames() {
			resource, group, _ := strings.Cut(crd, ".")
			// ClusterCalendars and ClusterSleeps are cluster-scoped: namespace users read them
			// (view, which edit and admin aggregate) and never write them. Calendars have no
			// status.
			clusterScoped := crd == "clustercalendars.almanac.dev" || crd == "clustersleeps.almanac.dev"
			hasStatus := group != calendarv1alpha1.GroupVersion.Group || strings.Contains(resource, "sleeps")
			for _, verb := range []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"} {
				read := verb == "get" || verb == "list" || verb == "watch"
				want := builtin != "view" || read
				if clusterScoped {
					want = builtin == "view" && read
				}
				if got := grants(cr, group, resource, verb); got != want {
					t.Errorf("ClusterRole %s grants %s on %s: %v, want %v", cr.Name, verb, crd, got, want)
				}
			}
			if got := grants(cr, group, resource+"/status", "get"); got != (builtin == "view" && hasStatus) {
				t.Errorf("ClusterRole %s grants get on %s/status: %v, want it only in view", cr.Name, crd, got)
			}
			for _, verb := range []string{"update", "patch"} {
				if grants(cr, group, resource+"/status", verb) {
					t.Errorf("ClusterRole %s grants %s on %s/status: only the manager writes status", cr.Name, verb, crd)
				}
			}
		}
	}
	if len(roles) != 3 {
		t.Errorf("%d aggregated roles, want 3", len(roles))
	}
}

// checkCRDs: almanac's CRDs (check.CRDNames), kept on uninstall unless crds.keep=false, none with
// crds.enabled=false.
func checkCRDs(t *testing.T, objs []rendered, tc renderCase) {
	t.Helper()
	var crds []*unstructured.Unstructured
	for _, o := range objs {
		if o.u.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, o.u)
		}
	}
	want := len(check.CRDNames())
	if tc.noCRDs {
		want = 0
	}
	if len(crds) != want {
		t.Fatalf("%d CRDs rendered, want %d", len(crds), want)
	}
	for _, crd := range crds {
		if kept := crd.GetAnnotations()["helm.sh/resource-policy"] == "keep"; kept == tc.dropCRDs {
			t.Errorf("CRD %s: helm.sh/resource-policy keep is %v, want %v", crd.GetName(), kept, !tc.dropCRDs)
		}
	}
}

// checkPriorityAndFairness: a FlowSchema that matches the Deployment's ServiceAccount, and
// only it, before the suggested FlowSchemas that would otherwise take its requests, into a
// Limited priority level of its own (never exempt); nothing when turned off.
func checkPriorityAndFairness(t *testing.T, objs []rendered, tc renderCase) {
	t.Helper()
	schemas, levels := find[*flowcontrolv1.FlowSchema](objs), find[*flowcontrolv1.PriorityLevelConfiguration](objs)
	if tc.noPriorityAndFairness {
		if len(schemas)+len(levels) != 0 {
			t.Errorf("priorityAndFairness.enabled=false renders %d FlowSchemas and %d PriorityLevelConfigurations", len(schemas), len(levels))
		}
		return
	}
	if len(schemas) != 1 || len(levels) != 1 {
		t.Fatalf("the chart renders %d FlowSchemas and %d PriorityLevelConfigurations, want one of each", len(schemas), len(levels))
	}
	fs, pl := schemas[0], levels[0]
	if fs.Spec.PriorityLevelConfiguration.Name != pl.Name {
		t.Errorf("FlowSchema %s uses priority level %q, want the chart's %q", fs.Name, fs.Spec.PriorityLevelConfiguration.Name, pl.Name)
	}
	if pl.Spec.Type != flowcontrolv1.PriorityLevelEnablementLimited || pl.Spec.Limited == nil {
		t.Errorf("priority level %s is %s, want Limited (the manager must not be exempt from the API server's limits)", pl.Name, pl.Spec.Type)
	}
	if p := fs.Spec.MatchingPrecedence; p <= 900 || p >= 9000 {
		t.Errorf("FlowSchema %s has matchingPrecedence %d, want it after the control plane's suggested FlowSchemas (≤ 900) and before service-accounts (9000)", fs.Name, p)
	}
	deployments := find[*appsv1.Deployment](objs)
	if len(deployments) != 1 {
		t.Fatalf("the chart renders %d Deployments, want 1", len(deployments))
	}
	sa := deployments[0].Spec.Template.Spec.ServiceAccountName
	var subjects []string
	for _, r := range fs.Spec.Rules {
		for _, s := range r.Subjects {
			if s.Kind != flowcontrolv1.SubjectKindServiceAccount || s.ServiceAccount == nil {
				t.Errorf("FlowSchema %s matches %s subjects, want only the manager's ServiceAccount", fs.Name, s.Kind)
				continue
			}
			subjects = append(subjects, s.ServiceAccount.Namespace+"/"+s.ServiceAccount.Name)
		}
	}
	if want := []string{"render/" + sa}; !slices.Equal(subjects, want) {
		t.Errorf("FlowSchema %s matches %v, want the Deployment's ServiceAccount %v", fs.Name, subjects, want)
	}
}

// checkMetrics: the metrics endpoint is served over HTTPS on the https-metrics port with a
// Service in front; the ServiceMonitor only when asked for, scraping that Service.
func checkMetrics(t *testing.T, objs []rendered, tc renderCase) {
	t.Helper()
	var metricsSvc *corev1.Service
	for _, s := range find[*corev1.Service](objs) {
		if s.Name == "almanac-metrics" {
			metricsSvc = s
		}
	}
	if metricsSvc == nil || len(metricsSvc.Spec.Ports) != 1 || metricsSvc.Spec.Ports[0].Name != "https-metrics" || metricsSvc.Spec.Ports[0].Port != 8443 {
		t.Errorf("no metrics Service almanac-metrics with port https-metrics 8443: %+v", metricsSvc)
	}
	var monitors []*unstructured.Unstructured
	for _, o := range objs {
		if o.u.GetKind() == "ServiceMonitor" {
			monitors = append(monitors, o.u)
		}
	}
	if got := len(monitors) == 1; got != tc.serviceMonitor || len(monitors) > 1 {
		t.Fatalf("%d ServiceMonitors, want one: %v", len(monitors), tc.serviceMonitor)
	}
	if tc.serviceMonitor {
		sel, _, _ := unstructured.NestedStringMap(monitors[0].Object, "spec", "selector", "matchLabels")
		if metricsSvc != nil {
			for k, v := range sel {
				if metricsSvc.Labels[k] != v {
					t.Errorf("the ServiceMonitor's selector %v does not select the metrics Service (labels %v)", sel, metricsSvc.Labels)
				}
			}
		}
		port, _, _ := unstructured.NestedSlice(monitors[0].Object, "spec", "endpoints")
		if len(port) != 1 || port[0].(map[string]any)["scheme"] != "https" || port[0].(map[string]any)["bearerTokenFile"] == nil {
			t.Errorf("the ServiceMonitor does not scrape over HTTPS with a token: %v", port)
		}
		// The per-object series keep the object's namespace label (the alerts name it).
		if len(port) == 1 && port[0].(map[string]any)["honorLabels"] != true {
			t.Errorf("the ServiceMonitor does not honor the series' labels: %v", port)
		}
	}
	// The alerts and the dashboard (test/monitoring checks their content): rendered only when
	// enabled, the rules with the labels the Prometheus's ruleSelector matches.
	var rules, dashboards []*unstructured.Unstructured
	for _, o := range objs {
		switch {
		case o.u.GetKind() == "PrometheusRule":
			rules = append(rules, o.u)
		case o.u.GetKind() == "ConfigMap" && o.u.GetLabels()["grafana_dashboard"] == "1":
			dashboards = append(dashboards, o.u)
		}
	}
	if len(rules) != btoi(tc.monitoring) || len(dashboards) != btoi(tc.monitoring) {
		t.Errorf("%d PrometheusRules and %d dashboard ConfigMaps, want %d of each", len(rules), len(dashboards), btoi(tc.monitoring))
	}
	if tc.monitoring && len(rules) == 1 && rules[0].GetLabels()["release"] != "prometheus" {
		t.Errorf("the PrometheusRule's labels %v lack prometheusRule.additionalLabels (release: prometheus)", rules[0].GetLabels())
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func checkDeployment(t *testing.T, objs []rendered, tc renderCase) {
	t.Helper()
	deps := find[*appsv1.Deployment](objs)
	if len(deps) != 1 {
		t.Fatalf("%d Deployments, want 1", len(deps))
	}
	d := deps[0]
	if d.Spec.Replicas == nil || *d.Spec.Replicas != tc.replicas {
		t.Errorf("replicas %v, want %d", d.Spec.Replicas, tc.replicas)
	}
	pod := d.Spec.Template.Spec
	if len(pod.TopologySpreadConstraints) == 0 {
		t.Error("no topologySpreadConstraints")
	}
	c := pod.Containers[0]
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe == nil {
		t.Error("the manager lacks its probes")
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Error("the manager lacks resource requests and a memory limit")
	}
	for _, want := range []string{"--leader-elect=true", "--cert-mode=" + string(tc.mode), "--mutating-webhook-configuration=almanac-webhook", "--validating-webhook-configuration=almanac-webhook",
		fmt.Sprintf("--permission-check=%v", !tc.noPermissionCheck)} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("manager args %v lack %s", c.Args, want)
		}
	}
	// pprof answers without authentication: the chart never turns it on (the manager also
	// refuses any address but a loopback one).
	if slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--pprof-bind-address") }) {
		t.Errorf("manager args %v serve pprof", c.Args)
	}
	if !slices.Contains(c.Args, "--metrics-bind-address=:8443") {
		t.Errorf("manager args %v do not serve the metrics on :8443 (behind authentication and authorization)", c.Args)
	}
	if c.StartupProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Error("the manager lacks its startup probe or its liveness probe on /healthz")
	}
	if d.Spec.Strategy.RollingUpdate == nil || d.Spec.Strategy.RollingUpdate.MaxUnavailable == nil || d.Spec.Strategy.RollingUpdate.MaxUnavailable.IntValue() != 0 {
		t.Error("a rollout may take a serving replica away before its successor is ready (maxUnavailable is not 0)")
	}
	pdbs := find[*policyv1.PodDisruptionBudget](objs)
	if len(pdbs) != 1 {
		t.Fatalf("%d PodDisruptionBudgets, want 1", len(pdbs))
	}
	pdb := pdbs[0]
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != tc.minAvailable {
		t.Errorf("PodDisruptionBudget minAvailable %v, want %d", pdb.Spec.MinAvailable, tc.minAvailable)
	}
	if sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err != nil || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("the PodDisruptionBudget's selector %v does not select the manager's Pods (%v)", pdb.Spec.Selector, d.Spec.Template.Labels)
	}
	mounted := slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Secret != nil })
	if mounted != (tc.mode != certs.ModeSelfManaged) {
		t.Errorf("a certificate Secret is mounted: %v, want it only outside self-managed mode", mounted)
	}
}

func checkCertificates(t *testing.T, objs []rendered, mode certs.Mode) {
	t.Helper()
	certsOut := find[*cmapi.Certificate](objs)
	issuers := find[*cmapi.Issuer](objs)
	switch mode {
	case certs.ModeCertManager:
		var webhookCert *cmapi.Certificate
		for _, c := range certsOut {
			if c.Name == "almanac-webhook" {
				webhookCert = c
			}
		}
		if webhookCert == nil {
			t.Fatal("no Certificate almanac-webhook")
		}
		if !slices.Contains(webhookCert.Spec.DNSNames, "almanac-webhook.render.svc") {
			t.Errorf("the Certificate's dnsNames %v lack the Service's", webhookCert.Spec.DNSNames)
		}
		if webhookCert.Spec.IssuerRef.Name == "corp-ca" {
			if len(issuers) != 0 || webhookCert.Spec.IssuerRef.Kind != "ClusterIssuer" {
				t.Errorf("with a given issuer the chart renders %d Issuers and refers to kind %q", len(issuers), webhookCert.Spec.IssuerRef.Kind)
			}
		} else if len(issuers) != 2 || len(certsOut) != 2 {
			t.Errorf("the issuer chain has %d Issuers and %d Certificates, want 2 and 2", len(issuers), len(certsOut))
		}
	default:
		if len(certsOut)+len(issuers) != 0 {
			t.Errorf("cert-manager objects rendered in %s mode", mode)
		}
	}
}

// dryRun has the API server validate every rendered object (schemas, CEL in match
// conditions, RBAC references) without storing it. CRDs are validated first, then created
// for real and deleted afterwards; the ServiceMonitor has no CRD here and is skipped.
func dryRun(t *testing.T, c client.Client, objs []rendered) {
	t.Helper()
	ctx := context.Background()
	for _, o := range objs {
		if o.u.GetKind() == "ServiceMonitor" || o.u.GetKind() == "PrometheusRule" {
			continue
		}
		u := o.u.DeepCopy()
		if err := c.Create(ctx, u, client.DryRunAll); err != nil {
			t.Errorf("the API server refuses %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
}

// podSecurity creates (dry-run) the Pods of the Deployment and of the check Job in a
// namespace that enforces the restricted Pod Security Standard.
func podSecurity(t *testing.T, c client.Client, objs []rendered) {
	t.Helper()
	var templates []corev1.PodTemplateSpec
	for _, d := range find[*appsv1.Deployment](objs) {
		templates = append(templates, d.Spec.Template)
	}
	for _, j := range find[*batchv1.Job](objs) {
		templates = append(templates, j.Spec.Template)
	}
	for i, tmpl := range templates {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("psa-%d", i), Namespace: "restricted"}, Spec: tmpl.Spec}
		if err := c.Create(context.Background(), pod, client.DryRunAll); err != nil {
			t.Errorf("a Pod of the chart violates the restricted Pod Security Standard: %v", err)
		}
	}
}

// completeHookJobs stands in for the Job controller (envtest runs none): it runs each of the
// chart's hook Jobs with run (nil: each succeeds, as `almanac check` would once it passed) and
// marks it succeeded or failed by what run returned, as the Job controller would; Helm waits
// for that.
func completeHookJobs(ctx context.Context, t *testing.T, c client.Client, namespace string, run func(*batchv1.Job) (string, error)) {
	for ctx.Err() == nil {
		jobs := &batchv1.JobList{}
		if err := c.List(ctx, jobs, client.InNamespace(namespace)); err == nil {
			for i := range jobs.Items {
				j := &jobs.Items[i]
				if len(j.Status.Conditions) > 0 {
					continue
				}
				var err error
				if run != nil {
					var out string
					out, err = run(j)
					t.Logf("hook Job %s (error %v):\n%s", j.Name, err, out)
				}
				now := metav1.Now()
				j.Status.StartTime = &now
				if err != nil {
					j.Status.Failed = 1
					j.Status.Conditions = []batchv1.JobCondition{
						{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonBackoffLimitExceeded, LastProbeTime: now, LastTransitionTime: now},
						{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonBackoffLimitExceeded, LastProbeTime: now, LastTransitionTime: now},
					}
				} else {
					j.Status.CompletionTime = &now
					j.Status.Succeeded = 1
					j.Status.Conditions = []batchv1.JobCondition{
						{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastProbeTime: now, LastTransitionTime: now},
						{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastProbeTime: now, LastTransitionTime: now},
					}
				}
				_ = c.Status().Update(ctx, j)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestHelmInstallUpgradeUninstall installs the chart with its default values into the API
// server, checks that every object exists, runs the certificate code with exactly the
// chart's ServiceAccount permissions (it writes the CA and the bundle and becomes ready),
// upgrades the release (the bundle and the CA survive: no fight with Helm), and uninstalls
// it (no webhook configuration is left behind; the CRDs are kept). The uninstall's pre-delete
// hook runs for real (the almanac binary as the hook's ServiceAccount) while almanac's webhooks
// are in the path and nothing answers them, with autoscalers attached in a window and a Job
// whose outcome is not recorded: the uninstall succeeds and leaves each target at its
// baseline, owned by no almanac field manager, and nothing held (issue 38, item 1: the hook
// failed on the release finalizer's removal, and Helm aborted with almanac at 0 replicas).
func TestHelmInstallUpgradeUninstall(t *testing.T) {
	cfg, c, kubeconfig := chartEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bin := buildAlmanac(t)
	go completeHookJobs(ctx, t, c, releaseNS, func(j *batchv1.Job) (string, error) { return runReleaseHook(bin, kubeconfig, j) })

	if out, err := runHelm(t, kubeconfig, "install", release, "charts/almanac", "--namespace", releaseNS, "--create-namespace", "--timeout", "2m"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	manifest, err := runHelm(t, kubeconfig, "get", "manifest", release, "--namespace", releaseNS)
	if err != nil {
		t.Fatal(err)
	}
	objs := decodeStrict(t, manifest)
	if len(objs) < 20 {
		t.Fatalf("the release has %d objects; the manifest looks incomplete", len(objs))
	}
	for _, o := range objs {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(o.u.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(o.u), u); err != nil {
			t.Errorf("%s %s was not created: %v", o.u.GetKind(), client.ObjectKeyFromObject(o.u), err)
		}
	}
	t.Logf("helm install created %d objects", len(objs))

	// The certificate code as the chart's ServiceAccount.
	sa := rest.CopyConfig(cfg)
	sa.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + releaseNS + ":almanac"}
	saClient, err := client.New(sa, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := saClient.List(ctx, &corev1.SecretList{}); !apierrors.IsForbidden(err) {
		t.Fatalf("the chart's ServiceAccount lists Secrets in every namespace (err %v); it must not", err)
	}
	managerJobsPolicy(t, saClient)
	stop := runChartManager(t, sa)
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	eventually(t, 30*time.Second, "the bundle written into the chart's webhook configurations", func() error {
		if err := c.Get(ctx, client.ObjectKey{Name: "almanac-webhook"}, mutating); err != nil {
			return err
		}
		if err := c.Get(ctx, client.ObjectKey{Name: "almanac-webhook"}, validating); err != nil {
			return err
		}
		for _, w := range mutating.Webhooks {
			if len(w.ClientConfig.CABundle) == 0 {
				return fmt.Errorf("webhook %s has no caBundle", w.Name)
			}
		}
		for _, w := range validating.Webhooks {
			if len(w.ClientConfig.CABundle) == 0 {
				return fmt.Errorf("webhook %s has no caBundle", w.Name)
			}
		}
		return nil
	})
	checkAsChartJob(t, kubeconfig)
	caSecret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: releaseNS, Name: "almanac-webhook-ca"}, caSecret); err != nil {
		t.Fatal(err)
	}
	bundle := mutating.Webhooks[0].ClientConfig.CABundle
	if !bytes.Equal(bundle, caSecret.Data["ca.crt"]) {
		t.Fatal("the caBundle is not the CA of the chart's Secret")
	}
	stop()

	// An upgrade that changes the Deployment leaves the bundle and the CA alone.
	if out, err := runHelm(t, kubeconfig, "upgrade", release, "charts/almanac", "--namespace", releaseNS, "--set", "logLevel=debug", "--timeout", "2m"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "almanac-webhook"}, mutating); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "almanac-webhook"}, validating); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mutating.Webhooks[0].ClientConfig.CABundle, bundle) || !bytes.Equal(validating.Webhooks[0].ClientConfig.CABundle, bundle) {
		t.Error("helm upgrade changed the injected caBundle")
	}
	after := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: releaseNS, Name: "almanac-webhook-ca"}, after); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(after.Data["tls.key"], caSecret.Data["tls.key"]) {
		t.Error("helm upgrade changed the CA Secret's data")
	}

	attached := newAttachedInWindow(t, c, "uninstall-attached")
	webhooksDown(t, c, mutating, validating, attached.objects()...)
	attached.hold(t, c)

	if out, err := runHelm(t, kubeconfig, "uninstall", release, "--namespace", releaseNS, "--timeout", "2m"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	attached.check(t, c)
	eventually(t, 30*time.Second, "webhook configurations removed", func() error {
		ms := &admissionregistrationv1.MutatingWebhookConfigurationList{}
		vs := &admissionregistrationv1.ValidatingWebhookConfigurationList{}
		if err := c.List(ctx, ms); err != nil {
			return err
		}
		if err := c.List(ctx, vs); err != nil {
			return err
		}
		if n := len(ms.Items) + len(vs.Items); n != 0 {
			return fmt.Errorf("%d webhook configurations left", n)
		}
		return nil
	})
	if err := c.Get(ctx, client.ObjectKey{Namespace: releaseNS, Name: "almanac-webhook-ca"}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("the CA Secret survived the uninstall: %v", err)
	}
	for _, name := range check.CRDNames() {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		}}); err != nil {
			t.Errorf("CRD %s was not kept (crds.keep is true): %v", name, err)
		}
	}
}

// managerJobsPolicy: the chart's ValidatingAdmissionPolicy, enforced by the API server
// itself, refuses Jobs that the manager's ServiceAccount (c) creates in kube-system and in the
// release namespace, with a message that says why; elsewhere its Jobs are admitted (a
// server-side dry run: admission runs, nothing is stored).
func managerJobsPolicy(t *testing.T, c client.Client) {
	t.Helper()
	ctx := context.Background()
	job := func(ns string) *batchv1.Job {
		return &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "deputy", Namespace: ns},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, ServiceAccountName: "almanac",
				Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			}}},
		}
	}
	for _, ns := range []string{"kube-system", releaseNS} {
		want := `almanac's manager (system:serviceaccount:` + releaseNS + `:almanac) may not create Jobs in namespace "` + ns + `": a Job there could run Pods as any of its ServiceAccounts`
		// The API server learns of a new policy within a second or so.
		eventually(t, 30*time.Second, "the manager's Job refused in "+ns, func() error {
			err := c.Create(ctx, job(ns), client.DryRunAll)
			if err == nil {
				return errors.New("admitted")
			}
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
				return fmt.Errorf("create = %w, want Invalid with %q", err, want)
			}
			t.Logf("refused in %s: %v", ns, err)
			return nil
		})
	}
	if err := c.Create(ctx, job("default"), client.DryRunAll); err != nil {
		t.Errorf("the manager's Job in namespace default: %v, want it admitted", err)
	}
}

// runChartManager runs the certificate code with the chart's names, as cfg's user, with
// leader election on the chart's Lease; it returns after the replica is ready.
func runChartManager(t *testing.T, cfg *rest.Config) func() {
	t.Helper()
	opts := certs.Options{
		Mode:                           certs.ModeSelfManaged,
		Namespace:                      releaseNS,
		CASecretName:                   certs.DefaultCASecretName,
		ServiceName:                    certs.DefaultServiceName,
		MutatingWebhookConfiguration:   certs.DefaultWebhookConfigName,
		ValidatingWebhookConfiguration: certs.DefaultWebhookConfigName,
		CADuration:                     certs.DefaultCADuration,
		LeafDuration:                   certs.DefaultLeafDuration,
	}
	p, err := certs.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(cfg, manager.Options{
		Scheme:                        scheme.Scheme,
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                true,
		LeaderElectionID:              index.LeaderElectionID,
		LeaderElectionNamespace:       releaseNS,
		LeaderElectionReleaseOnCancel: true,
		WebhookServer:                 webhook.NewServer(webhook.Options{Port: freePort(t), TLSOpts: []func(*tls.Config){p.ConfigureTLS}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager as the chart's ServiceAccount: %v", err)
		}
	}()
	// Registered before the wait: a manager left running after a failure keeps connections
	// open, and the API server then outlives envtest's Stop.
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	eventually(t, 30*time.Second, "ready with the chart's permissions", func() error { return p.ReadyzCheck(nil) })
	return stop
}

// webhooksDown shows what an installed chart blocks while no replica answers (here the
// API server cannot even resolve the webhook Service): almanac's own objects are refused
// (failurePolicy Fail), but nothing outside almanac's groups is, and an object being
// deleted can still lose its finalizer, so a namespace deletion never hangs on almanac.
// The two ScheduledJobs, and more, are created while the webhook configurations are briefly
// removed.
func webhooksDown(t *testing.T, c client.Client, mutating *admissionregistrationv1.MutatingWebhookConfiguration, validating *admissionregistrationv1.ValidatingWebhookConfiguration, more ...client.Object) {
	t.Helper()
	ctx := context.Background()
	if err := c.Delete(ctx, mutating.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, validating.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	held, other := check.ProbeObject("default"), check.ProbeObject("default")
	held.GenerateName, held.Name, held.Finalizers = "", "held", []string{"example.com/hold"}
	other.GenerateName, other.Name = "", "other"
	// The API server's view of the webhook configurations lags their deletion briefly.
	eventually(t, 30*time.Second, "objects created while the webhooks are gone", func() error {
		for _, o := range append([]client.Object{held, other}, more...) {
			if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
		}
		return nil
	})
	for _, w := range []client.Object{mutating.DeepCopy(), validating.DeepCopy()} {
		w.SetResourceVersion("")
		w.SetUID("")
		w.SetCreationTimestamp(metav1.Time{})
		w.SetManagedFields(nil)
		if err := c.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
	}

	// The webhooks are in the path: an update of an almanac object is refused.
	eventually(t, 30*time.Second, "an update refused while no replica answers", func() error {
		o := &batchv1alpha1.ScheduledJob{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(other), o); err != nil {
			return err
		}
		o.Labels = map[string]string{"touched": time.Now().Format("150405.000000")}
		err := c.Update(ctx, o)
		if err == nil || !strings.Contains(err.Error(), "failed calling webhook") {
			return fmt.Errorf("update = %w, want a failed webhook call", err)
		}
		return nil
	})
	// Outside almanac's groups nothing is blocked.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "not-almanac", Namespace: "default"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatalf("a ConfigMap was refused while almanac's webhooks are down: %v", err)
	}
	// An object being deleted is skipped by the webhooks: its finalizer can be removed.
	if err := c.Delete(ctx, held.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	o := &batchv1alpha1.ScheduledJob{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(held), o); err != nil {
		t.Fatal(err)
	}
	if o.DeletionTimestamp == nil {
		t.Fatal("the held ScheduledJob is not being deleted")
	}
	o.Finalizers = nil
	if err := c.Update(ctx, o); err != nil {
		t.Fatalf("removing the finalizer of a ScheduledJob being deleted was refused while the webhooks are down: %v", err)
	}
	eventually(t, 10*time.Second, "the held ScheduledJob gone", func() error {
		err := c.Get(ctx, client.ObjectKeyFromObject(held), &batchv1alpha1.ScheduledJob{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("get = %w, want NotFound", err)
		}
		return nil
	})
	if err := c.Delete(ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
}

// checkAsChartJob runs `almanac check` with exactly the permissions of the chart's check Job
// (its ServiceAccount, impersonated). Every check but the admission one passes; that one
// fails only because this API server cannot reach the webhook Service (there is no cluster
// network), never because the Job's account may not do what the check does.
func checkAsChartJob(t *testing.T, kubeconfig string) {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range cfg.AuthInfos {
		a.Impersonate = "system:serviceaccount:" + releaseNS + ":almanac-check"
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = check.Run(context.Background(), check.Options{Kubeconfig: path, Namespace: releaseNS, Timeout: 10 * time.Second, Interval: time.Second,
		MutatingWebhookConfiguration: "almanac-webhook", ValidatingWebhookConfiguration: "almanac-webhook"}, &out)
	t.Logf("almanac check as the chart's check Job (error %v):\n%s", err != nil, out.String())
	for _, want := range []string{"✓ API server", "✓ CRDs", "✓ Webhooks", "✗ Admission", "failed calling webhook"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("almanac check as the chart's check Job: the output lacks %q", want)
		}
	}
	if strings.Contains(out.String(), "forbidden") {
		t.Error("the chart's check Job lacks a permission that almanac check needs")
	}
}

// checkReleaseHook: `almanac release` runs before an uninstall deletes anything (pre-delete),
// as a ServiceAccount whose objects are hooks too (they exist only while it runs), stops the
// release's manager, releases the Jobs and attached ScheduledPodAutoscalers of the watched
// namespaces (every namespace when none is set), and may do no more than list and patch Jobs
// and ScheduledPodAutoscalers there, read and patch the targets an autoscaler attaches to
// (HPAs, ScaledObjects, Deployments, StatefulSets, ReplicaSets and their scale subresources)
// there, and read and scale the manager's Deployment and list Pods in the release namespace.
func checkReleaseHook(t *testing.T, objs []rendered, watched []string) {
	t.Helper()
	var job *batchv1.Job
	for _, o := range objs {
		if !strings.HasPrefix(o.u.GetName(), "almanac-release") {
			continue
		}
		if a := o.u.GetAnnotations(); a["helm.sh/hook"] != "pre-delete" {
			t.Errorf("%s %s is not a pre-delete hook: %v", o.u.GetKind(), o.u.GetName(), a)
		}
		if o.u.GetKind() == "Job" {
			job = &batchv1.Job{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.u.Object, job); err != nil {
				t.Fatal(err)
			}
		}
	}
	if job == nil {
		t.Fatal("no almanac-release Job: nothing removes almanac's finalizer on uninstall")
	}
	args := job.Spec.Template.Spec.Containers[0].Args
	want := []string{"release", "--stop-manager=render/almanac", "--timeout=5m"}
	for _, ns := range watched {
		want = append(want, "--namespace="+ns)
	}
	if !slices.Equal(args, want) {
		t.Errorf("the release hook runs %v, want %v", args, want)
	}
	if sa := job.Spec.Template.Spec.ServiceAccountName; sa != "almanac-release" {
		t.Errorf("the release hook runs as %q, want almanac-release", sa)
	}
	// The targets an attached autoscaler may hold, by group: read and patched (the baseline
	// written, almanac's managedFields entries removed), nothing else.
	targets := map[string][]string{
		"autoscaling": {"horizontalpodautoscalers"},
		"keda.sh":     {"scaledobjects"},
		"apps":        {"deployments", "deployments/scale", "statefulsets", "statefulsets/scale", "replicasets", "replicasets/scale"},
	}
	isTarget := func(r rbacv1.PolicyRule) bool {
		if len(r.APIGroups) != 1 || len(r.ResourceNames) != 0 {
			return false
		}
		kinds := targets[r.APIGroups[0]]
		return len(r.Resources) > 0 && !slices.ContainsFunc(r.Resources, func(res string) bool { return !slices.Contains(kinds, res) })
	}
	// granted["where"]["group/resource"] are the verbs the hook has there, outside the release
	// namespace's own Role.
	granted := map[string]map[string][]string{}
	allowed := func(where string, r rbacv1.PolicyRule) {
		switch {
		case slices.Equal(r.Resources, []string{"jobs"}) && slices.Equal(r.Verbs, []string{"list", "patch"}):
		case slices.Equal(r.APIGroups, []string{"autoscaling.almanac.dev"}) && slices.Equal(r.Resources, []string{"scheduledpodautoscalers"}) && slices.Equal(r.Verbs, []string{"list", "patch"}):
		case isTarget(r) && slices.Equal(r.Verbs, []string{"get", "patch"}) && where != "Role render/almanac-release":
		case slices.Equal(r.Resources, []string{"deployments"}) && slices.Equal(r.ResourceNames, []string{"almanac"}) && where == "Role render/almanac-release":
		case slices.Equal(r.Resources, []string{"pods"}) && slices.Equal(r.Verbs, []string{"list"}) && where == "Role render/almanac-release":
		// What a sleep may hold, listed to find the records, and patched to wake it; the sleeps,
		// listed and patched to remove their finalizer (ClusterSleeps cluster-wide in any mode).
		case slices.Equal(r.APIGroups, []string{"apps"}) && slices.Equal(r.Resources, []string{"deployments", "statefulsets", "replicasets"}) && slices.Equal(r.Verbs, []string{"list"}):
		case slices.Equal(r.APIGroups, []string{"batch"}) && slices.Equal(r.Resources, []string{"cronjobs"}) && slices.Equal(r.Verbs, []string{"list", "patch"}):
		case slices.Equal(r.APIGroups, []string{"batch.almanac.dev"}) && slices.Equal(r.Resources, []string{"scheduledjobs", "eventjobs"}) && slices.Equal(r.Verbs, []string{"list"}):
		case slices.Equal(r.APIGroups, []string{"keda.sh"}) && slices.Equal(r.Resources, []string{"scaledobjects"}) && slices.Equal(r.Verbs, []string{"list"}):
		case slices.Equal(r.APIGroups, []string{"almanac.dev"}) && slices.Equal(r.Resources, []string{"sleeps"}) && slices.Equal(r.Verbs, []string{"list", "patch"}):
		case slices.Equal(r.APIGroups, []string{"almanac.dev"}) && slices.Equal(r.Resources, []string{"clustersleeps"}) && slices.Equal(r.Verbs, []string{"list", "patch"}) &&
			where == "ClusterRole almanac-release-sleeps":
		default:
			t.Errorf("%s grants more than the release hook needs: %+v", where, r)
		}
		if where == "Role render/almanac-release" {
			return
		}
		if granted[where] == nil {
			granted[where] = map[string][]string{}
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				granted[where][g+"/"+res] = append(granted[where][g+"/"+res], r.Verbs...)
			}
		}
	}
	for _, cr := range find[*rbacv1.ClusterRole](objs) {
		if strings.HasPrefix(cr.Name, "almanac-release") {
			if len(watched) > 0 && cr.Name != "almanac-release-sleeps" {
				t.Errorf("ClusterRole %s: the release hook acts cluster-wide although watchNamespaces is set", cr.Name)
			}
			for _, r := range cr.Rules {
				allowed("ClusterRole "+cr.Name, r)
			}
		}
	}
	for _, role := range find[*rbacv1.Role](objs) {
		if strings.HasPrefix(role.Name, "almanac-release") {
			for _, r := range role.Rules {
				allowed("Role "+role.Namespace+"/"+role.Name, r)
			}
		}
	}
	// And it may do all of that where the manager works.
	wheres := []string{"ClusterRole almanac-release"}
	if len(watched) > 0 {
		wheres = nil
		for _, ns := range watched {
			wheres = append(wheres, "Role "+ns+"/almanac-release-jobs")
		}
	}
	need := map[string][]string{"batch/jobs": {"list", "patch"}, "autoscaling.almanac.dev/scheduledpodautoscalers": {"list", "patch"},
		"apps/deployments": {"list"}, "apps/statefulsets": {"list"}, "apps/replicasets": {"list"}, "batch/cronjobs": {"list", "patch"},
		"batch.almanac.dev/scheduledjobs": {"list"}, "batch.almanac.dev/eventjobs": {"list"}, "keda.sh/scaledobjects": {"list"}, "almanac.dev/sleeps": {"list", "patch"}}
	for g, kinds := range targets {
		for _, res := range kinds {
			need[g+"/"+res] = []string{"get", "patch"}
		}
	}
	for _, where := range wheres {
		for res, verbs := range need {
			for _, v := range verbs {
				if !slices.Contains(granted[where][res], v) {
					t.Errorf("%s does not let the release hook %s %s: it cannot release what almanac holds there", where, v, res)
				}
			}
		}
	}
}
