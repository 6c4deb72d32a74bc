package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// namedInformer watches one object by name, so that RBAC can restrict the manager to exactly
// that object with resourceNames (list and watch are authorized per name when they carry a
// metadata.name field selector).
type namedInformer struct {
	informer  cache.SharedIndexInformer
	namespace string
	name      string
}

func newNamedInformer(c rest.Interface, resource, namespace, name string, example runtime.Object) *namedInformer {
	lw := cache.NewListWatchFromClient(c, resource, namespace, fields.OneTermEqualSelector("metadata.name", name))
	return &namedInformer{
		informer:  cache.NewSharedIndexInformer(lw, example, 0, cache.Indexers{}),
		namespace: namespace,
		name:      name,
	}
}

// get returns the object from the informer's cache, or nil when it does not exist.
func (n *namedInformer) get() (runtime.Object, error) {
	key := n.name
	if n.namespace != "" {
		key = n.namespace + "/" + n.name
	}
	obj, ok, err := n.informer.GetStore().GetByKey(key)
	if err != nil || !ok {
		return nil, err
	}
	return obj.(runtime.Object), nil
}

// endpoint is one webhook of almanac's configurations as the API server sees it: the host
// name it connects to and the CAs it trusts.
type endpoint struct {
	configuration string
	webhook       string
	host          string
	caBundle      []byte
}

// trustWatcher follows almanac's MutatingWebhookConfiguration and
// ValidatingWebhookConfiguration and answers whether the API server trusts a certificate.
// Every replica runs one.
type trustWatcher struct {
	mutating, validating *namedInformer
	clock                clock.PassiveClock
}

func newTrustWatcher(client kubernetes.Interface, opts Options, clk clock.PassiveClock) *trustWatcher {
	t := &trustWatcher{clock: clk}
	rc := client.AdmissionregistrationV1().RESTClient()
	if opts.MutatingWebhookConfiguration != "" {
		t.mutating = newNamedInformer(rc, "mutatingwebhookconfigurations", "", opts.MutatingWebhookConfiguration, &admissionregistrationv1.MutatingWebhookConfiguration{})
	}
	if opts.ValidatingWebhookConfiguration != "" {
		t.validating = newNamedInformer(rc, "validatingwebhookconfigurations", "", opts.ValidatingWebhookConfiguration, &admissionregistrationv1.ValidatingWebhookConfiguration{})
	}
	return t
}

func (t *trustWatcher) informers() []*namedInformer {
	var out []*namedInformer
	for _, n := range []*namedInformer{t.mutating, t.validating} {
		if n != nil {
			out = append(out, n)
		}
	}
	return out
}

// Start runs the informers until ctx ends.
func (t *trustWatcher) Start(ctx context.Context) error {
	for _, n := range t.informers() {
		go n.informer.RunWithContext(ctx)
	}
	<-ctx.Done()
	return nil
}

// NeedLeaderElection is false: every replica needs to know whether it is trusted.
func (t *trustWatcher) NeedLeaderElection() bool { return false }

func (t *trustWatcher) synced() bool {
	for _, n := range t.informers() {
		if !n.informer.HasSynced() {
			return false
		}
	}
	return true
}

// endpoints lists every webhook of almanac's configurations. It fails when a configured
// configuration does not exist (yet).
func (t *trustWatcher) endpoints() ([]endpoint, error) {
	if !t.synced() {
		return nil, errors.New("the webhook configurations have not been read yet")
	}
	var out []endpoint
	if t.mutating != nil {
		obj, err := t.mutating.get()
		if err != nil {
			return nil, err
		}
		if obj == nil {
			return nil, fmt.Errorf("MutatingWebhookConfiguration %s does not exist", t.mutating.name)
		}
		c := obj.(*admissionregistrationv1.MutatingWebhookConfiguration)
		for _, w := range c.Webhooks {
			out = append(out, newEndpoint("MutatingWebhookConfiguration "+c.Name, w.Name, w.ClientConfig))
		}
	}
	if t.validating != nil {
		obj, err := t.validating.get()
		if err != nil {
			return nil, err
		}
		if obj == nil {
			return nil, fmt.Errorf("ValidatingWebhookConfiguration %s does not exist", t.validating.name)
		}
		c := obj.(*admissionregistrationv1.ValidatingWebhookConfiguration)
		for _, w := range c.Webhooks {
			out = append(out, newEndpoint("ValidatingWebhookConfiguration "+c.Name, w.Name, w.ClientConfig))
		}
	}
	return out, nil
}

func newEndpoint(configuration, webhook string, cc admissionregistrationv1.WebhookClientConfig) endpoint {
	e := endpoint{configuration: configuration, webhook: webhook, caBundle: cc.CABundle}
	switch {
	case cc.Service != nil:
		// The API server checks the certificate against <service>.<namespace>.svc.
		e.host = cc.Service.Name + "." + cc.Service.Namespace + ".svc"
	case cc.URL != nil:
		if u, err := url.Parse(*cc.URL); err == nil {
			e.host = u.Hostname()
		}
	}
	return e
}

// verifyServing reports why the API server would refuse the serving certificate cert for
// any of almanac's webhooks (nil when it would accept it for all): the chain must lead to a
// CA of the webhook's caBundle and the leaf must be valid for the host the API server
// connects to.
func (t *trustWatcher) verifyServing(cert *tls.Certificate) error {
	return t.verify(cert, true)
}

// verifySignedBy reports whether every webhook's caBundle trusts the CA that signed leaf,
// ignoring host names: the gate that keeps a replica on its old leaf until the leader has
// published a new CA.
func (t *trustWatcher) verifySignedBy(leaf *x509.Certificate) error {
	return t.verify(&tls.Certificate{Certificate: [][]byte{leaf.Raw}, Leaf: leaf}, false)
}

func (t *trustWatcher) verify(cert *tls.Certificate, checkHost bool) error {
	if cert == nil || len(cert.Certificate) == 0 {
		return errors.New("there is no serving certificate yet")
	}
	leaf := cert.Leaf
	if leaf == nil {
		var err error
		if leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return fmt.Errorf("the serving certificate does not parse: %w", err)
		}
	}
	intermediates := x509.NewCertPool()
	for _, der := range cert.Certificate[1:] {
		if c, err := x509.ParseCertificate(der); err == nil {
			intermediates.AddCert(c)
		}
	}
	endpoints, err := t.endpoints()
	if err != nil {
		return err
	}
	for _, e := range endpoints {
		if len(e.caBundle) == 0 {
			return fmt.Errorf("webhook %s of %s has no caBundle yet", e.webhook, e.configuration)
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(e.caBundle) {
			return fmt.Errorf("the caBundle of webhook %s of %s holds no certificate", e.webhook, e.configuration)
		}
		opts := x509.VerifyOptions{
			Roots:         roots,
			Intermediates: intermediates,
			KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			CurrentTime:   t.clock.Now(),
		}
		if checkHost {
			opts.DNSName = e.host
		}
		if _, err := leaf.Verify(opts); err != nil {
			return fmt.Errorf("the API server would not trust the serving certificate for webhook %s of %s (host %q): %w", e.webhook, e.configuration, e.host, err)
		}
	}
	return nil
}

// waitSynced blocks until the informers have listed once, or ctx ends.
func (t *trustWatcher) waitSynced(ctx context.Context) bool {
	var syncs []cache.InformerSynced
	for _, n := range t.informers() {
		syncs = append(syncs, n.informer.HasSynced)
	}
	return cache.WaitForCacheSync(ctx.Done(), syncs...)
}
