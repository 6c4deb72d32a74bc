package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

const chartGenerated = "../../charts/almanac/templates/generated"

// TestChartMatchesConfig fails when the chart's generated templates differ from what
// config/ (controller-gen's output) gives today: run `make manifests chart`.
func TestChartMatchesConfig(t *testing.T) {
	want, err := Generate("../../config")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	entries, err := os.ReadDir(chartGenerated)
	if err != nil {
		t.Fatalf("%v: run `make chart`", err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(chartGenerated, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got[e.Name()] = b
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("charts/almanac/templates/generated/%s is missing; run `make chart`", name)
		}
	}
	for name, g := range got {
		w, ok := want[name]
		if !ok {
			t.Errorf("charts/almanac/templates/generated/%s is no longer generated from config/; run `make chart`", name)
			continue
		}
		if diff := cmp.Diff(string(w), string(g)); diff != "" {
			t.Errorf("charts/almanac/templates/generated/%s drifted from config/ (-config +chart); run `make chart`:\n%s", name, diff)
		}
	}
	wantChart, err := ChartYAML("../../charts/almanac", "../../config", "../../examples")
	if err != nil {
		t.Fatal(err)
	}
	gotChart, err := os.ReadFile("../../charts/almanac/Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(wantChart), string(gotChart)); diff != "" {
		t.Errorf("the Artifact Hub annotations of charts/almanac/Chart.yaml drifted from config/, examples/ and values.yaml (-generated +Chart.yaml); run `make chart`:\n%s", diff)
	}
}

// copyConfig copies ../../config/crd into a temporary config folder and adds the given
// rbac/role.yaml and webhook/manifests.yaml.
func copyConfig(t *testing.T, role, webhooks string) string {
	t.Helper()
	dir := t.TempDir()
	crds, err := filepath.Glob("../../config/crd/bases/*.yaml")
	if err != nil || len(crds) == 0 {
		t.Fatalf("no CRDs in config/crd/bases: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "crd", "bases"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range crds {
		b, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "crd", "bases", filepath.Base(c)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for path, content := range map[string]string{"rbac/role.yaml": role, "webhook/manifests.yaml": webhooks} {
		if content == "" {
			continue
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, path), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestGenerateRefuses: the generator is where the chart's promises are enforced.
func TestGenerateRefuses(t *testing.T) {
	role := readTestdata(t, "role.yaml")
	webhooks := readTestdata(t, "webhooks.yaml")
	tests := []struct {
		name, role, webhooks, wantErr string
	}{
		{"a wildcard verb", strings.Replace(role, "  - watch\n", "  - '*'\n", 1), webhooks, "wildcard"},
		{"cluster-wide Secrets", role + "- apiGroups:\n  - \"\"\n  resources:\n  - secrets\n  verbs:\n  - get\n", webhooks, "Secrets in every namespace"},
		{"a webhook on another group", role, strings.Replace(webhooks, "- batch.almanac.dev", "- apps", 1), `intercepts API group "apps"`},
		{"a webhook on every operation", role, strings.Replace(webhooks, "- CREATE", "- '*'", 1), "every operation"},
		{"a webhook with side effects", role, strings.Replace(webhooks, "sideEffects: None", "sideEffects: Some", 1), "sideEffects"},
		{"a resource of unknown scope", role + "- apiGroups:\n  - example.com\n  resources:\n  - widgets\n  verbs:\n  - get\n", webhooks, "does not know whether widgets in [example.com] lives in a namespace"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Generate(copyConfig(t, tc.role, tc.webhooks))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Generate = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
	// The unmodified fixtures pass, and the output has the chart's webhook settings.
	files, err := Generate(copyConfig(t, role, webhooks))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"failurePolicy: {{ .Values.webhook.failurePolicy }}",
		"timeoutSeconds: {{ .Values.webhook.timeoutSeconds }}",
		"sideEffects: None",
		"!has(object.metadata.deletionTimestamp)",
		`{{- include "almanac.webhookCABundle" . | nindent 4 }}`,
	} {
		if !strings.Contains(string(files["webhooks.yaml"]), want) {
			t.Errorf("webhooks.yaml lacks %q", want)
		}
	}
	if strings.Contains(string(files["webhooks.yaml"]), "caBundle:") {
		t.Error("webhooks.yaml renders a caBundle of its own")
	}
}

func clusterScoped(c apiextensionsv1.CustomResourceDefinition) apiextensionsv1.CustomResourceDefinition {
	c.Spec.Scope = apiextensionsv1.ClusterScoped
	return c
}

// TestAggregatedRoles: the roles for namespace users come from the CRDs: every verb on each
// kind (and its scale subresource) for admin and edit, never its status; read access to
// each kind, its status and scale for view.
func TestAggregatedRoles(t *testing.T) {
	crd := func(group, plural string, status, scale bool) apiextensionsv1.CustomResourceDefinition {
		c := apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1alpha1", Served: true, Subresources: &apiextensionsv1.CustomResourceSubresources{}}},
		}}
		if status {
			c.Spec.Versions[0].Subresources.Status = &apiextensionsv1.CustomResourceSubresourceStatus{}
		}
		if scale {
			c.Spec.Versions[0].Subresources.Scale = &apiextensionsv1.CustomResourceSubresourceScale{}
		}
		return c
	}
	got := aggregatedRoles([]apiextensionsv1.CustomResourceDefinition{
		crd("b.example.com", "widgets", true, true),
		crd("a.example.com", "gadgets", true, false),
		crd("a.example.com", "plain", false, false),
		clusterScoped(crd("a.example.com", "clustergadgets", false, false)),
	})
	write := []rbacv1.PolicyRule{
		{APIGroups: []string{"a.example.com"}, Resources: []string{"gadgets", "plain"}, Verbs: allVerbs},
		{APIGroups: []string{"b.example.com"}, Resources: []string{"widgets"}, Verbs: allVerbs},
		{APIGroups: []string{"b.example.com"}, Resources: []string{"widgets/scale"}, Verbs: []string{"get", "patch", "update"}},
	}
	want := []aggregatedRole{
		{suffix: "admin", aggregateTo: "admin", rules: write},
		{suffix: "edit", aggregateTo: "edit", rules: write},
		{suffix: "view", aggregateTo: "view", rules: []rbacv1.PolicyRule{
			// A cluster-scoped kind is read by namespace users, never written.
			{APIGroups: []string{"a.example.com"}, Resources: []string{"clustergadgets", "gadgets", "gadgets/status", "plain"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"b.example.com"}, Resources: []string{"widgets", "widgets/scale", "widgets/status"}, Verbs: []string{"get", "list", "watch"}},
		}},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(aggregatedRole{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// Rendered, each role carries its aggregation label and the whole file the switch.
	out := string(aggregateRolesTemplate(nil))
	for _, want := range []string{
		"{{- if .Values.rbac.aggregateToDefaultRoles }}",
		`name: {{ include "almanac.fullname" . }}-edit`,
		`rbac.authorization.k8s.io/aggregate-to-admin: "true"`,
		`rbac.authorization.k8s.io/aggregate-to-edit: "true"`,
		`rbac.authorization.k8s.io/aggregate-to-view: "true"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("aggregate-roles.yaml lacks %q:\n%s", want, out)
		}
	}
}

// TestManagerRBACForms: the manager's rules, split for watchNamespaces: what names a
// namespaced resource (built-in, or almanac's by its CRD's scope) goes into the Role of each
// watched namespace, what names a cluster-scoped resource or a URL stays in the ClusterRole,
// and a rule that names both is split. Both forms are rendered from the one role.yaml.
func TestManagerRBACForms(t *testing.T) {
	crds := []apiextensionsv1.CustomResourceDefinition{{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "batch.almanac.dev", Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "scheduledjobs"}, Scope: apiextensionsv1.NamespaceScoped,
	}}}
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs", "cronjobs"}, Verbs: []string{"get"}},
		{APIGroups: []string{"batch.almanac.dev"}, Resources: []string{"scheduledjobs/status"}, Verbs: []string{"patch"}},
		{APIGroups: []string{""}, Resources: []string{"events", "namespaces"}, Verbs: []string{"get"}},
		{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}},
	}
	cluster, namespaced, err := splitRules("role.yaml", rules, scopes(crds))
	if err != nil {
		t.Fatal(err)
	}
	wantCluster := []rbacv1.PolicyRule{rules[0], {APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get"}}, rules[4]}
	wantNamespaced := []rbacv1.PolicyRule{rules[1], rules[2], {APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"get"}}}
	if diff := cmp.Diff(wantCluster, cluster); diff != "" {
		t.Errorf("cluster-wide (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantNamespaced, namespaced); diff != "" {
		t.Errorf("per namespace (-want +got):\n%s", diff)
	}

	files, err := Generate(copyConfig(t, readTestdata(t, "role.yaml"), readTestdata(t, "webhooks.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	out := string(files["manager-rbac.yaml"])
	all, scoped, ok := strings.Cut(out, "{{- else }}")
	if !ok || !strings.Contains(all, "{{- if not .Values.watchNamespaces }}") || !strings.Contains(scoped, "{{- range .Values.watchNamespaces }}") {
		t.Fatalf("manager-rbac.yaml does not render both forms:\n%s", out)
	}
	perNamespace := scoped[strings.Index(scoped, "{{- range"):]
	for _, want := range []string{"kind: Role\n", "  namespace: {{ . }}\n", "kind: RoleBinding\n", "  - jobs\n", "  - horizontalpodautoscalers\n", "  - events\n", "  - scheduledjobs/status\n"} {
		if !strings.Contains(perNamespace, want) {
			t.Errorf("the watched namespaces' Role lacks %q:\n%s", want, perNamespace)
		}
	}
	if strings.Contains(scoped[:strings.Index(scoped, "{{- range")], "  - jobs\n") {
		t.Errorf("with watchNamespaces, a ClusterRole still grants Jobs:\n%s", scoped)
	}
	for _, want := range []string{"kind: ClusterRole\n", "  - jobs\n", "  - horizontalpodautoscalers\n"} {
		if !strings.Contains(all, want) {
			t.Errorf("the every-namespace form lacks %q:\n%s", want, all)
		}
	}
}
