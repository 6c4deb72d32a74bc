// Package check implements `almanac check`: whether an installation can serve, seen from the
// current kubeconfig. Its central question is the one that breaks installs: does the API
// server reach almanac's webhooks with a certificate it trusts? It answers it the way every
// `kubectl apply` will, with a server-side dry-run create that passes through the webhooks.
// It lives with the other commands (commands/), and imports certs for what it checks of the
// certificates; the Helm chart runs it after an install.
package check

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/api/scheme"
	"github.com/almanac-dev/almanac/certs"
)

// Exit codes of `almanac check`.
const (
	ExitReady    = 0
	ExitNotReady = 1
	ExitUsage    = 2
)

// injectAnnotation is cert-manager's cainjector annotation; its presence means cert-manager
// mode, and its value names the Certificate.
const injectAnnotation = "cert-manager.io/inject-ca-from"

// Options are the flags of `almanac check`.
type Options struct {
	Kubeconfig string
	Context    string
	// Namespace is where the dry-run object is "created" (default: the kubeconfig
	// context's namespace).
	Namespace                      string
	MutatingWebhookConfiguration   string
	ValidatingWebhookConfiguration string
	// Wait retries until every check passes or Timeout has passed.
	Wait     bool
	Timeout  time.Duration
	Interval time.Duration
}

// Error is returned when the installation is not ready or the command could not run; its
// ExitCode is the process's exit status.
type Error struct {
	Code int
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// ExitCode is ExitNotReady or ExitUsage.
func (e *Error) ExitCode() int { return e.Code }

// NewCommand returns the `almanac check` command.
func NewCommand() *cobra.Command {
	opts := Options{}
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check that almanac is installed and its webhooks answer with a trusted certificate",
		Long: `Check an almanac installation through the current kubeconfig:

  1. the API server answers;
  2. almanac's CustomResourceDefinitions are established;
  3. almanac's MutatingWebhookConfiguration and ValidatingWebhookConfiguration exist and
     carry a CA bundle;
  4. in cert-manager mode, the webhook's Certificate is Ready;
  5. a server-side dry-run create of a ScheduledJob passes through the webhooks, which proves
     that the API server reaches them over TLS and trusts their certificate.

Exit status: 0 ready, 1 not ready, 2 usage or kubeconfig error. With --wait the checks
are repeated until they all pass or --timeout has passed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return Run(cmd.Context(), opts, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Kubeconfig, "kubeconfig", "", "Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then the in-cluster service account).")
	f.StringVar(&opts.Context, "context", "", "The kubeconfig context to use.")
	f.StringVarP(&opts.Namespace, "namespace", "n", "", "Namespace for the dry-run create (default: the context's namespace).")
	f.StringVar(&opts.MutatingWebhookConfiguration, "mutating-webhook-configuration", certs.DefaultWebhookConfigName, "almanac's MutatingWebhookConfiguration (empty: not checked).")
	f.StringVar(&opts.ValidatingWebhookConfiguration, "validating-webhook-configuration", certs.DefaultWebhookConfigName, "almanac's ValidatingWebhookConfiguration (empty: not checked).")
	f.BoolVar(&opts.Wait, "wait", false, "Repeat the checks until they all pass or --timeout has passed.")
	f.DurationVar(&opts.Timeout, "timeout", 2*time.Minute, "How long --wait waits.")
	f.DurationVar(&opts.Interval, "interval", 2*time.Second, "Pause between two attempts with --wait.")
	return cmd
}

// Result is the outcome of one check.
type Result struct {
	Name   string
	OK     bool
	Detail string
	// Hint says what to look at when the check failed.
	Hint string
	// Skipped checks neither pass nor fail (the Certificate outside cert-manager mode).
	Skipped bool
}

// Run runs the checks, writes the report to out and returns nil when almanac is ready, or an
// *Error.
func Run(ctx context.Context, opts Options, out io.Writer) error {
	cfg, ns, contextName, err := load(opts)
	if err != nil {
		return &Error{Code: ExitUsage, Msg: err.Error()}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return &Error{Code: ExitUsage, Msg: fmt.Sprintf("failed to create a client: %v", err)}
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return &Error{Code: ExitUsage, Msg: fmt.Sprintf("failed to create a discovery client: %v", err)}
	}
	ch := &checker{client: c, discovery: dc, host: cfg.Host, namespace: ns, opts: opts}
	_, _ = fmt.Fprintf(out, "almanac check: context %q, API server %s, namespace %q\n", contextName, cfg.Host, ns)

	deadline := time.Now().Add(opts.Timeout)
	for attempt := 1; ; attempt++ {
		results := ch.run(ctx)
		failed := failures(results)
		if failed == 0 || !opts.Wait || !time.Now().Add(opts.Interval).Before(deadline) || ctx.Err() != nil {
			report(out, results)
			if failed == 0 {
				_, _ = fmt.Fprintln(out, "almanac is ready.")
				return nil
			}
			_, _ = fmt.Fprintf(out, "almanac is not ready: %d of %d checks failed.\n", failed, len(results)-skipped(results))
			return &Error{Code: ExitNotReady}
		}
		first := firstFailure(results)
		_, _ = fmt.Fprintf(out, "  … attempt %d: %s: %s (retrying for another %s)\n", attempt, first.Name, first.Detail, time.Until(deadline).Round(time.Second))
		select {
		case <-ctx.Done():
		case <-time.After(opts.Interval):
		}
	}
}

func load(opts Options) (*rest.Config, string, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = opts.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: opts.Context}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", "", fmt.Errorf("failed to load the kubeconfig: %w", err)
	}
	cfg.Timeout = 15 * time.Second
	ns := opts.Namespace
	if ns == "" {
		if ns, _, err = cc.Namespace(); err != nil || ns == "" {
			ns = metav1.NamespaceDefault
		}
	}
	contextName := opts.Context
	if contextName == "" {
		if raw, err := cc.RawConfig(); err == nil {
			contextName = raw.CurrentContext
		}
	}
	if contextName == "" {
		contextName = "in-cluster"
	}
	return cfg, ns, contextName, nil
}

type checker struct {
	client    client.Client
	discovery discovery.DiscoveryInterface
	host      string
	namespace string
	opts      Options
}

func (c *checker) run(ctx context.Context) []Result {
	api := c.apiServer()
	if !api.OK {
		// Nothing else can be answered; say so once instead of five times.
		return []Result{api}
	}
	webhooks, certificate := c.webhookConfigurations(ctx)
	return []Result{api, c.crds(ctx), webhooks, certificate, c.admission(ctx)}
}

func (c *checker) apiServer() Result {
	r := Result{Name: "API server"}
	v, err := c.discovery.ServerVersion()
	if err != nil {
		r.Detail = fmt.Sprintf("%s does not answer: %v", c.host, err)
		r.Hint = "check the kubeconfig (--kubeconfig, --context) and that the cluster is up"
		return r
	}
	r.OK, r.Detail = true, fmt.Sprintf("%s answers (Kubernetes %s)", c.host, v.GitVersion)
	return r
}

// CRDNames are the names of almanac's CustomResourceDefinitions, derived from the API types
// registered in the scheme.
func CRDNames() []string {
	var out []string
	for _, gv := range []schema.GroupVersion{autoscalingv1alpha1.GroupVersion, batchv1alpha1.GroupVersion, calendarv1alpha1.GroupVersion} {
		for kind, t := range scheme.Scheme.KnownTypes(gv) {
			if strings.HasSuffix(kind, "List") || !strings.HasPrefix(t.PkgPath(), "github.com/almanac-dev/almanac/api/") {
				continue
			}
			plural, _ := meta.UnsafeGuessKindToResource(gv.WithKind(kind))
			out = append(out, plural.Resource+"."+gv.Group)
		}
	}
	slices.Sort(out)
	return out
}

func (c *checker) crds(ctx context.Context) Result {
	r := Result{Name: "CRDs"}
	names := CRDNames()
	var problems []string
	for _, name := range names {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			if apierrors.IsNotFound(err) {
				problems = append(problems, name+" is not installed")
			} else {
				problems = append(problems, fmt.Sprintf("%s: %v", name, err))
			}
			continue
		}
		for _, cond := range []apiextensionsv1.CustomResourceDefinitionConditionType{apiextensionsv1.Established, apiextensionsv1.NamesAccepted} {
			if !crdCondition(crd, cond) {
				problems = append(problems, fmt.Sprintf("%s is not %s", name, cond))
			}
		}
	}
	if len(problems) > 0 {
		r.Detail = strings.Join(problems, "; ")
		r.Hint = "install the chart (it installs the CRDs), or kubectl apply -f config/crd/bases"
		return r
	}
	r.OK, r.Detail = true, fmt.Sprintf("%d established: %s", len(names), strings.Join(names, ", "))
	return r
}

func crdCondition(crd *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == t {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

// webhookConfigurations checks that almanac's webhook configurations exist and carry a CA
// bundle, and, when cert-manager injects it, that the Certificate is Ready.
func (c *checker) webhookConfigurations(ctx context.Context) (Result, Result) {
	r := Result{Name: "Webhooks"}
	cert := Result{Name: "Certificate", Skipped: true, Detail: "not in cert-manager mode"}
	var found, problems []string
	var injectFrom string
	type config struct {
		kind string
		name string
		obj  client.Object
		// bundles returns the webhooks' names and caBundles.
		bundles func() map[string][]byte
	}
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	configs := []config{
		{"MutatingWebhookConfiguration", c.opts.MutatingWebhookConfiguration, mutating, func() map[string][]byte {
			m := map[string][]byte{}
			for _, w := range mutating.Webhooks {
				m[w.Name] = w.ClientConfig.CABundle
			}
			return m
		}},
		{"ValidatingWebhookConfiguration", c.opts.ValidatingWebhookConfiguration, validating, func() map[string][]byte {
			m := map[string][]byte{}
			for _, w := range validating.Webhooks {
				m[w.Name] = w.ClientConfig.CABundle
			}
			return m
		}},
	}
	for _, cfg := range configs {
		if cfg.name == "" {
			continue
		}
		if err := c.client.Get(ctx, client.ObjectKey{Name: cfg.name}, cfg.obj); err != nil {
			if apierrors.IsNotFound(err) {
				problems = append(problems, fmt.Sprintf("%s %s does not exist", cfg.kind, cfg.name))
			} else {
				problems = append(problems, fmt.Sprintf("%s %s: %v", cfg.kind, cfg.name, err))
			}
			continue
		}
		bundles := cfg.bundles()
		if len(bundles) == 0 {
			problems = append(problems, fmt.Sprintf("%s %s has no webhooks", cfg.kind, cfg.name))
			continue
		}
		var empty []string
		for name, b := range bundles {
			if len(b) == 0 {
				empty = append(empty, name)
			}
		}
		slices.Sort(empty)
		if v := cfg.obj.GetAnnotations()[injectAnnotation]; v != "" {
			injectFrom = v
		}
		if len(empty) > 0 {
			problems = append(problems, fmt.Sprintf("%s %s: no caBundle yet for %s", cfg.kind, cfg.name, strings.Join(empty, ", ")))
			continue
		}
		found = append(found, fmt.Sprintf("%s %s (%d webhooks)", cfg.kind, cfg.name, len(bundles)))
	}
	if injectFrom != "" {
		cert = c.certificate(ctx, injectFrom)
	}
	if len(problems) > 0 {
		r.Detail = strings.Join(problems, "; ")
		switch {
		case injectFrom != "":
			r.Hint = "cert-manager's cainjector writes the caBundle once the Certificate is Ready; check kubectl get certificate -n " + strings.SplitN(injectFrom, "/", 2)[0]
		default:
			r.Hint = "in self-managed mode the manager's leader writes the caBundle; check that the manager runs and its logs"
		}
		return r, cert
	}
	r.OK, r.Detail = true, strings.Join(found, ", ")+", CA bundle set"
	return r, cert
}

func (c *checker) certificate(ctx context.Context, ref string) Result {
	r := Result{Name: "Certificate"}
	ns, name, ok := strings.Cut(ref, "/")
	if !ok {
		r.Detail = fmt.Sprintf("the %s annotation %q is not namespace/name", injectAnnotation, ref)
		return r
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"})
	if err := c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		r.Detail = fmt.Sprintf("Certificate %s: %v", ref, err)
		r.Hint = "is cert-manager installed? (kubectl get crd certificates.cert-manager.io)"
		return r
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, raw := range conds {
		cond, _ := raw.(map[string]any)
		if cond["type"] != "Ready" {
			continue
		}
		if cond["status"] == "True" {
			r.OK, r.Detail = true, fmt.Sprintf("Certificate %s is Ready", ref)
			return r
		}
		r.Detail = fmt.Sprintf("Certificate %s is not Ready: %v: %v", ref, cond["reason"], cond["message"])
		r.Hint = "kubectl describe certificate -n " + ns + " " + name
		return r
	}
	r.Detail = fmt.Sprintf("Certificate %s has no Ready condition yet", ref)
	r.Hint = "is cert-manager running? kubectl describe certificate -n " + ns + " " + name
	return r
}

// ProbeObject is the object whose server-side dry-run create goes through almanac's
// webhooks: a suspended ScheduledJob that could never run anything.
func ProbeObject(namespace string) *batchv1alpha1.ScheduledJob {
	return &batchv1alpha1.ScheduledJob{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "almanac-check-", Namespace: namespace},
		Spec: batchv1alpha1.ScheduledJobSpec{
			Schedule: "0 0 1 1 *",
			TimeZone: "UTC",
			JobPolicy: batchv1alpha1.JobPolicy{
				Suspend: true,
				JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
					BackoffLimit: ptr.To[int32](0),
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyNever,
						Containers:    []corev1.Container{{Name: "check", Image: "busybox", Command: []string{"true"}}},
					}},
				}},
			},
		},
	}
}

func (c *checker) admission(ctx context.Context) Result {
	r := Result{Name: "Admission"}
	obj := ProbeObject(c.namespace)
	err := c.client.Create(ctx, obj, client.DryRunAll)
	kind := reflect.TypeFor[batchv1alpha1.ScheduledJob]().Name()
	switch {
	case err == nil:
		r.OK, r.Detail = true, fmt.Sprintf("a server-side dry-run create of a %s in %s passed almanac's webhooks", kind, c.namespace)
	case strings.Contains(err.Error(), "failed calling webhook"):
		r.Detail = "the API server could not call almanac's webhook: " + err.Error()
		msg := err.Error()
		switch {
		case strings.Contains(msg, "x509") || strings.Contains(msg, "certificate"):
			r.Hint = "the API server does not trust the webhook's certificate: the caBundle is missing or stale, or the certificate is not valid for the Service's DNS name"
		case strings.Contains(msg, "connection refused") || strings.Contains(msg, "no endpoints") || strings.Contains(msg, "service unavailable") || strings.Contains(msg, "no such host"):
			r.Hint = "no manager replica answers: is the manager running and ready? (kubectl get pods -l app.kubernetes.io/name=almanac -A)"
		case strings.Contains(msg, "deadline exceeded") || strings.Contains(msg, "timeout"):
			r.Hint = "the webhook did not answer in time: check the manager's logs and network policies between the API server and the Pods"
		}
	case strings.Contains(err.Error(), "denied the request") && apierrors.IsForbidden(err) && strings.Contains(err.Error(), "which this almanac does not serve"):
		// The manager watches other namespaces (--watch-namespaces, the chart's
		// watchNamespaces) and the webhooks refuse objects here, as they should.
		r.OK, r.Detail = true, fmt.Sprintf("the webhooks answered a dry-run create of a %s in %s; they refused it because this almanac does not serve that namespace "+
			"(expected when watchNamespaces leaves it out)", kind, c.namespace)
	case strings.Contains(err.Error(), "denied the request") && apierrors.IsForbidden(err):
		// The validating webhook answered with its permission check: this account may create
		// ScheduledJobs but not Jobs, like the chart's check account on purpose.
		r.OK, r.Detail = true, fmt.Sprintf("the webhooks answered a dry-run create of a %s in %s; the permission check refused it because this account may not create Jobs there "+
			"(expected for the chart's check account; whoever creates ScheduledJobs needs that permission)", kind, c.namespace)
	case strings.Contains(err.Error(), "denied the request"):
		// The webhook answered; it only disliked the probe object.
		r.OK, r.Detail = true, fmt.Sprintf("the webhooks answered a dry-run create of a %s (they rejected the probe object: %v)", kind, err)
	case apierrors.IsForbidden(err):
		r.Detail = fmt.Sprintf("not allowed to dry-run create a %s in %s: %v", kind, c.namespace, err)
		r.Hint = "run the check with an account that may create ScheduledJobs in that namespace, or pass --namespace"
	default:
		var status apierrors.APIStatus
		if errors.As(err, &status) && status.Status().Code == 422 {
			// Schema validation runs after the mutating webhooks: they answered.
			r.OK, r.Detail = true, fmt.Sprintf("the webhooks answered a dry-run create of a %s (the API server rejected the probe object: %v)", kind, err)
			return r
		}
		r.Detail = fmt.Sprintf("the dry-run create of a %s failed: %v", kind, err)
	}
	return r
}

func failures(rs []Result) int {
	n := 0
	for _, r := range rs {
		if !r.OK && !r.Skipped {
			n++
		}
	}
	return n
}

func skipped(rs []Result) int {
	n := 0
	for _, r := range rs {
		if r.Skipped {
			n++
		}
	}
	return n
}

func firstFailure(rs []Result) Result {
	for _, r := range rs {
		if !r.OK && !r.Skipped {
			return r
		}
	}
	return Result{}
}

func report(out io.Writer, rs []Result) {
	for _, r := range rs {
		mark := "✓"
		switch {
		case r.Skipped:
			mark = "-"
		case !r.OK:
			mark = "✗"
		}
		_, _ = fmt.Fprintf(out, "  %s %-12s %s\n", mark, r.Name, r.Detail)
		if !r.OK && !r.Skipped && r.Hint != "" {
			_, _ = fmt.Fprintf(out, "    %-12s hint: %s\n", "", r.Hint)
		}
	}
}
