// Package certs provides the serving certificate of almanac's admission webhooks, in one of
// three modes:
//
//   - self-managed (the default): the manager keeps a CA in a Secret of its own namespace
//     (cert-manager's DynamicAuthority creates and rotates it), signs leaf certificates in
//     memory (cert-manager's DynamicSource), and the leader writes the CA bundle into
//     almanac's MutatingWebhookConfiguration and ValidatingWebhookConfiguration. A replaced
//     CA stays in the bundle for a leaf lifetime, and a replica switches to a leaf signed by
//     a new CA only once every webhook's caBundle holds that CA, so rotations have no gap.
//   - cert-manager: cert-manager issues the certificate into a Secret mounted at the
//     webhook certificate folder and injects its CA (cert-manager.io/inject-ca-from); the
//     manager reloads the files when they change.
//   - external: like cert-manager, with a Secret and a caBundle the user provides.
//
// In every mode a replica reports ready only when the API server would trust the
// certificate it serves for every webhook of almanac's configurations.
package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	cmtls "github.com/cert-manager/cert-manager/pkg/server/tls"
	"github.com/cert-manager/cert-manager/pkg/server/tls/authority"
	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Mode selects where the webhook serving certificate comes from.
type Mode string

const (
	// ModeSelfManaged: the manager keeps its own CA and injects its bundle.
	ModeSelfManaged Mode = "self-managed"
	// ModeCertManager: cert-manager issues the certificate and injects the CA.
	ModeCertManager Mode = "cert-manager"
	// ModeExternal: the user provides the certificate Secret and the CA bundle.
	ModeExternal Mode = "external"
)

// Modes lists the valid modes.
var Modes = []Mode{ModeSelfManaged, ModeCertManager, ModeExternal}

// Defaults of the flags; the Helm chart derives the same names from its release name
// ("almanac" gives exactly these).
const (
	DefaultCASecretName         = "almanac-webhook-ca"
	DefaultServiceName          = "almanac-webhook"
	DefaultWebhookConfigName    = "almanac-webhook"
	DefaultCADuration           = 365 * 24 * time.Hour
	DefaultLeafDuration         = 7 * 24 * time.Hour
	serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
	// skewMargin is added to the leaf lifetime when deciding how long a replaced CA stays in
	// the bundle.
	skewMargin = time.Hour
)

// Options configure the webhook serving certificate. AddFlags binds them to the manager's
// flags.
type Options struct {
	// Mode is where the certificate comes from.
	Mode Mode
	// Namespace is the namespace the manager runs in, which holds the CA Secret and the
	// webhook Service (default: $POD_NAMESPACE, then the service account's namespace).
	Namespace string
	// CASecretName is the Secret that holds the self-managed CA.
	CASecretName string
	// ServiceName is the Service in front of the webhook server; the leaf certificate is
	// valid for its in-cluster DNS names.
	ServiceName string
	// DNSNames are further names the leaf certificate is valid for (`make demo` adds
	// localhost, since its API server calls the webhook by URL).
	DNSNames []string
	// MutatingWebhookConfiguration and ValidatingWebhookConfiguration name almanac's own
	// webhook configurations (empty: there is none of that kind).
	MutatingWebhookConfiguration   string
	ValidatingWebhookConfiguration string
	// CADuration and LeafDuration are the lifetimes of the self-managed CA and of the leaf
	// certificates; each is renewed after two thirds of it.
	CADuration, LeafDuration time.Duration
	// CertDir holds tls.crt and tls.key in the cert-manager and external modes.
	CertDir string
}

// AddFlags binds the options to flags, with their defaults.
func (o *Options) AddFlags(f *pflag.FlagSet) {
	f.StringVar((*string)(&o.Mode), "cert-mode", string(ModeSelfManaged), "Where the webhook serving certificate comes from: self-managed (a CA kept in a Secret, leaf certificates in memory), cert-manager or external (tls.crt and tls.key mounted in --webhook-cert-dir).")
	f.StringVar(&o.Namespace, "cert-namespace", "", "Namespace of the CA Secret and the webhook Service (default: $POD_NAMESPACE, then the service account's namespace).")
	f.StringVar(&o.CASecretName, "cert-ca-secret", DefaultCASecretName, "Secret that holds the self-managed CA.")
	f.StringVar(&o.ServiceName, "webhook-service", DefaultServiceName, "Service in front of the webhook server; the self-managed certificate is valid for its DNS names.")
	f.StringSliceVar(&o.DNSNames, "webhook-dns-names", nil, "Further DNS names for the self-managed certificate.")
	f.StringVar(&o.MutatingWebhookConfiguration, "mutating-webhook-configuration", DefaultWebhookConfigName, "almanac's MutatingWebhookConfiguration, whose caBundle the leader writes in self-managed mode (empty: none).")
	f.StringVar(&o.ValidatingWebhookConfiguration, "validating-webhook-configuration", DefaultWebhookConfigName, "almanac's ValidatingWebhookConfiguration, whose caBundle the leader writes in self-managed mode (empty: none).")
	f.DurationVar(&o.CADuration, "cert-ca-duration", DefaultCADuration, "Lifetime of the self-managed CA; it is replaced after two thirds of it.")
	f.DurationVar(&o.LeafDuration, "cert-leaf-duration", DefaultLeafDuration, "Lifetime of self-managed serving certificates; each is replaced after two thirds of it.")
}

// Provider serves the webhook certificate and reports whether the API server trusts it.
type Provider struct {
	opts  Options
	clock clock.Clock
	log   logr.Logger

	mu     sync.Mutex
	source interface {
		GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error)
	}
	trust *trustWatcher
}

// New checks the options and returns a Provider; SetupWithManager starts it.
func New(opts Options) (*Provider, error) {
	if opts.Namespace == "" {
		opts.Namespace = os.Getenv("POD_NAMESPACE")
	}
	if opts.Namespace == "" {
		if b, err := os.ReadFile(serviceAccountNamespaceFile); err == nil {
			opts.Namespace = strings.TrimSpace(string(b))
		}
	}
	switch opts.Mode {
	case ModeSelfManaged:
		var missing []string
		for flag, v := range map[string]string{"--cert-namespace": opts.Namespace, "--cert-ca-secret": opts.CASecretName, "--webhook-service": opts.ServiceName} {
			if v == "" {
				missing = append(missing, flag)
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("--cert-mode=self-managed needs %s", strings.Join(missing, " and "))
		}
		if opts.CADuration <= 0 || opts.LeafDuration <= 0 || opts.LeafDuration >= opts.CADuration {
			return nil, fmt.Errorf("--cert-leaf-duration (%s) must be positive and shorter than --cert-ca-duration (%s)", opts.LeafDuration, opts.CADuration)
		}
	case ModeCertManager, ModeExternal:
	default:
		return nil, fmt.Errorf("--cert-mode must be one of %v, not %q", Modes, opts.Mode)
	}
	return &Provider{opts: opts, clock: clock.RealClock{}, log: ctrl.Log.WithName("certs")}, nil
}

// ConfigureTLS is a webhook server TLS option: the server takes its certificate from the
// provider (and controller-runtime then starts no file watcher of its own).
func (p *Provider) ConfigureTLS(c *tls.Config) {
	c.GetCertificate = p.GetCertificate
}

// GetCertificate returns the certificate to serve; it fails until there is one.
func (p *Provider) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	p.mu.Lock()
	src := p.source
	p.mu.Unlock()
	if src == nil {
		return nil, errors.New("the webhook serving certificate is not set up")
	}
	return src.GetCertificate(hello)
}

// SetupWithManager adds the provider's parts to mgr: on every replica the webhook
// configuration watcher and the certificate source (the self-managed authority and leaf
// signer, or the file watcher); on the leader the CA bundle writer (self-managed mode).
func (p *Provider) SetupWithManager(mgr manager.Manager) error {
	client, err := kubernetes.NewForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("failed to create a client for the webhook certificates: %w", err)
	}
	p.trust = newTrustWatcher(client, p.opts, p.clock)
	served.Store(p) // almanac_webhook_serving_certificate_expiry_timestamp_seconds (metrics.go)
	if err := mgr.Add(p.trust); err != nil {
		return err
	}
	switch p.opts.Mode {
	case ModeSelfManaged:
		auth := &gatedAuthority{
			DynamicAuthority: &authority.DynamicAuthority{
				SecretNamespace: p.opts.Namespace,
				SecretName:      p.opts.CASecretName,
				SecretLabels:    map[string]string{"app.kubernetes.io/name": "almanac", "app.kubernetes.io/component": "webhook-ca"},
				RESTConfig:      mgr.GetConfig(),
				CommonName:      "almanac-webhook-ca",
				CADuration:      p.opts.CADuration,
				LeafDuration:    p.opts.LeafDuration,
			},
			trust: p.trust,
			log:   p.log,
		}
		src := &cmtls.DynamicSource{DNSNames: p.dnsNames(), Authority: auth, RetryInterval: time.Second}
		// cert-manager's packages log a line per retry; they speak one level quieter here,
		// and almanac logs the events that matter itself.
		quiet := p.log.V(1)
		if err := mgr.Add(everyReplica(func(ctx context.Context) error {
			return src.Start(logr.NewContext(ctx, quiet))
		})); err != nil {
			return err
		}
		p.setSource(src)
		return mgr.Add(&injector{
			client: client,
			secret: newNamedInformer(client.CoreV1().RESTClient(), "secrets", p.opts.Namespace, p.opts.CASecretName, &corev1.Secret{}),
			trust:  p.trust,
			clock:  p.clock,
			grace:  p.opts.LeafDuration + skewMargin,
			log:    p.log,
		})
	default:
		fs := newFileSource(p.opts.CertDir, p.log)
		p.setSource(fs)
		return mgr.Add(fs)
	}
}

func (p *Provider) setSource(s interface {
	GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error)
}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.source = s
}

// dnsNames are the names the self-managed leaf is valid for: every way a client in the
// cluster can name the Service, and the extra names.
func (p *Provider) dnsNames() []string {
	svc, ns := p.opts.ServiceName, p.opts.Namespace
	return append([]string{svc + "." + ns + ".svc", svc + "." + ns + ".svc.cluster.local", svc + "." + ns, svc}, p.opts.DNSNames...)
}

// ReadyzCheck is a readiness check: it passes when the replica serves a certificate that
// the API server trusts for every webhook of almanac's configurations, so a Service only
// sends admission requests to replicas that can answer them.
func (p *Provider) ReadyzCheck(_ *http.Request) error {
	if p.trust == nil {
		return errors.New("the webhook certificates are not set up")
	}
	cert, err := p.GetCertificate(nil)
	if err != nil || cert == nil {
		// Say why: usually the certificate waits for the webhook configurations.
		if _, terr := p.trust.endpoints(); terr != nil {
			err = terr
		}
		return fmt.Errorf("no webhook serving certificate yet: %w", err)
	}
	return p.trust.verifyServing(cert)
}

// gatedAuthority is cert-manager's DynamicAuthority whose signatures are only handed out
// once every webhook's caBundle trusts the CA that made them. cert-manager's DynamicSource
// keeps serving its previous leaf while Sign fails, so after a CA rotation each replica
// moves to the new CA only when the API server already trusts it: no request sees a
// certificate it cannot verify.
type gatedAuthority struct {
	*authority.DynamicAuthority
	trust *trustWatcher
	log   logr.Logger
}

// Sign signs template and returns the certificate if the API server trusts its CA.
func (a *gatedAuthority) Sign(template *x509.Certificate) (*x509.Certificate, error) {
	c, err := a.DynamicAuthority.Sign(template)
	if err != nil {
		return nil, err
	}
	if err := a.trust.verifySignedBy(c); err != nil {
		a.log.V(1).Info("Waiting for the CA to be in the webhook configurations before serving a certificate it signed", "reason", err.Error())
		return nil, fmt.Errorf("%w: %w", authority.ErrCertificateNotAvailable, err)
	}
	a.log.Info("Signed a new webhook serving certificate", "serial", c.SerialNumber.Text(16), "notAfter", c.NotAfter.UTC(), "caKeyID", fmt.Sprintf("%x", c.AuthorityKeyId))
	return c, nil
}

// everyReplica is a runnable that runs on every replica, leader or not.
type everyReplica func(context.Context) error

func (r everyReplica) Start(ctx context.Context) error { return r(ctx) }
func (r everyReplica) NeedLeaderElection() bool        { return false }
