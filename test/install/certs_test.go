package install

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// caOf returns the CA certificate in the CA Secret of test id.
func caOf(t *testing.T, id string) *x509.Certificate {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: id + "-ca"}, s); err != nil {
		t.Fatal(err)
	}
	certs := parsePEM(t, s.Data["ca.crt"])
	if len(certs) != 1 {
		t.Fatalf("CA Secret holds %d certificates in ca.crt, want 1", len(certs))
	}
	return certs[0]
}

func parsePEM(t *testing.T, data []byte) []*x509.Certificate {
	t.Helper()
	var out []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return out
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
}

// bundles returns the caBundle of every webhook of test id's two configurations.
func bundles(t *testing.T, id string) [][]byte {
	t.Helper()
	ctx := context.Background()
	m := &admissionregistrationv1.MutatingWebhookConfiguration{}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: id}, m); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: id}, v); err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, w := range m.Webhooks {
		out = append(out, w.ClientConfig.CABundle)
	}
	for _, w := range v.Webhooks {
		out = append(out, w.ClientConfig.CABundle)
	}
	return out
}

// servedLeaf connects to the replica as the API server would (trusting only bundle, for the
// host name localhost) and returns the leaf certificate it serves.
func servedLeaf(r *replica, bundle []byte) (*x509.Certificate, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(bundle) {
		return nil, errors.New("empty bundle")
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", net.JoinHostPort("localhost", strconv.Itoa(r.port)), &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// admit sends one admission request through the API server: a server-side dry-run create
// of a ConfigMap that test id's webhooks intercept.
func admit(ctx context.Context, id string, n int64) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: fmt.Sprintf("%s-%d", id, n), Namespace: ns, Labels: map[string]string{"almanac-test": id},
	}}
	return env.Client.Create(ctx, cm, client.DryRunAll)
}

// TestSelfManagedCertificates: with the webhook configurations missing, a replica is not
// ready; once they exist, the leader writes the CA bundle, both replicas serve leaf
// certificates of the one CA from the CA Secret, and the API server calls each of them over
// TLS. A bundle removed by someone else is written again.
func TestSelfManagedCertificates(t *testing.T) {
	const id = "serve"
	paths := []string{"/mutate", "/validate"}
	a := startReplica(t, "a", replicaConfig{id: id, webhooks: paths})
	b := startReplica(t, "b", replicaConfig{id: id, webhooks: paths})

	// Not ready while the configurations the API server reads do not exist.
	eventually(t, 20*time.Second, "replica a reports the missing configuration", func() error {
		err := a.provider.ReadyzCheck(nil)
		if err == nil || !strings.Contains(err.Error(), "does not exist") {
			return fmt.Errorf("ReadyzCheck = %w, want an error naming the missing configuration", err)
		}
		return nil
	})
	if err := admit(context.Background(), id, 0); err != nil {
		t.Fatalf("without webhook configurations, admission must not involve the replicas: %v", err)
	}

	// The mutating webhook calls replica a, the validating one replica b: every request
	// below reaches both.
	webhookConfigurations(t, id, a.url("/mutate"), b.url("/validate"), configMapRule, configMapSelector(id))
	for _, r := range []*replica{a, b} {
		eventually(t, 30*time.Second, "replica "+r.name+" ready", func() error { return r.provider.ReadyzCheck(nil) })
	}

	ca := caOf(t, id)
	for i, bundle := range bundles(t, id) {
		got := parsePEM(t, bundle)
		if len(got) != 1 || !got[0].Equal(ca) {
			t.Fatalf("webhook %d: caBundle holds %d certificates, want exactly the CA of the Secret", i, len(got))
		}
	}
	for _, r := range []*replica{a, b} {
		leaf, err := servedLeaf(r, bundles(t, id)[0])
		if err != nil {
			t.Fatalf("replica %s does not serve a certificate the bundle trusts: %v", r.name, err)
		}
		if err := leaf.CheckSignatureFrom(ca); err != nil {
			t.Fatalf("replica %s serves a leaf not signed by the CA of the Secret: %v", r.name, err)
		}
	}

	for n := range int64(5) {
		if err := admit(context.Background(), id, n); err != nil {
			t.Fatalf("admission request %d failed: %v", n, err)
		}
	}
	if a.calls.Load() < 5 || b.calls.Load() < 5 {
		t.Fatalf("the API server called replica a %d times and replica b %d times, want at least 5 each", a.calls.Load(), b.calls.Load())
	}

	// Someone (a GitOps tool, a helm upgrade of an old chart) clears the bundle: the leader
	// writes it again.
	m := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: id}, m); err != nil {
		t.Fatal(err)
	}
	m.Webhooks[0].ClientConfig.CABundle = nil
	if err := env.Client.Update(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "bundle written again", func() error {
		for _, b := range bundles(t, id) {
			if len(b) == 0 {
				return errors.New("a webhook has no caBundle")
			}
		}
		return nil
	})
}

// TestRotationsLoseNoAdmissionRequest streams admission requests through the API server to
// two replicas (the mutating webhook calls one, the validating webhook the other) while leaf
// certificates rotate every few seconds and the CA is replaced twice (the Secret deleted,
// then overwritten with garbage). Every request must succeed.
func TestRotationsLoseNoAdmissionRequest(t *testing.T) {
	const id = "rotate"
	paths := []string{"/mutate", "/validate"}
	// A 6s leaf is renewed after 4s.
	rc := replicaConfig{id: id, webhooks: paths, leafDuration: 6 * time.Second}
	a := startReplica(t, "a", rc)
	b := startReplica(t, "b", rc)
	webhookConfigurations(t, id, a.url("/mutate"), b.url("/validate"), configMapRule, configMapSelector(id))
	for _, r := range []*replica{a, b} {
		eventually(t, 30*time.Second, "replica "+r.name+" ready", func() error { return r.provider.ReadyzCheck(nil) })
	}
	ca1 := caOf(t, id)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// Record every leaf each replica serves.
	var mu sync.Mutex
	leaves := map[string]map[string]*x509.Certificate{a.name: {}, b.name: {}}
	var watchers sync.WaitGroup
	for _, r := range []*replica{a, b} {
		watchers.Go(func() {
			for ctx.Err() == nil {
				if c, err := r.provider.GetCertificate(nil); err == nil && c.Leaf != nil {
					mu.Lock()
					leaves[r.name][c.Leaf.SerialNumber.String()] = c.Leaf
					mu.Unlock()
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}

	var sent, failed atomic.Int64
	var firstErrs []error
	var workers sync.WaitGroup
	for range 2 {
		workers.Go(func() {
			for ctx.Err() == nil {
				n := sent.Add(1)
				if err := admit(ctx, id, n); err != nil && ctx.Err() == nil {
					failed.Add(1)
					mu.Lock()
					if len(firstErrs) < 5 {
						firstErrs = append(firstErrs, err)
					}
					mu.Unlock()
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}

	secretKey := client.ObjectKey{Namespace: ns, Name: id + "-ca"}
	time.Sleep(4 * time.Second)
	// Forced CA rotation 1: the Secret is deleted; a replica creates a new CA.
	if err := env.Client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: secretKey.Name}}); err != nil {
		t.Fatal(err)
	}
	var ca2 *x509.Certificate
	eventually(t, 20*time.Second, "a second CA", func() error {
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, secretKey, s); err != nil {
			return err
		}
		ca2 = caOf(t, id)
		if ca2.Equal(ca1) {
			return errors.New("still the first CA")
		}
		return nil
	})
	time.Sleep(6 * time.Second)
	// Forced CA rotation 2: the Secret's data is overwritten with garbage.
	s := &corev1.Secret{}
	if err := env.Client.Get(ctx, secretKey, s); err != nil {
		t.Fatal(err)
	}
	s.Data = map[string][]byte{"tls.crt": []byte("garbage"), "tls.key": []byte("garbage"), "ca.crt": []byte("garbage")}
	if err := env.Client.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	var ca3 *x509.Certificate
	eventually(t, 20*time.Second, "a third CA", func() error {
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, secretKey, s); err != nil {
			return err
		}
		cs := parseBundleT(s.Data["ca.crt"])
		if len(cs) != 1 || cs[0].Equal(ca2) {
			return errors.New("not yet a new CA")
		}
		ca3 = cs[0]
		return nil
	})
	// Let leaves rotate a few more times under the third CA.
	time.Sleep(8 * time.Second)
	cancel()
	workers.Wait()
	watchers.Wait()

	t.Logf("admission requests: %d sent, %d failed; leaves served: a %d, b %d", sent.Load(), failed.Load(), len(leaves["a"]), len(leaves["b"]))
	if failed.Load() != 0 {
		t.Fatalf("%d of %d admission requests failed during rotations; first errors: %v", failed.Load(), sent.Load(), firstErrs)
	}
	if sent.Load() < 200 {
		t.Fatalf("only %d admission requests were sent; the stream is too thin to show anything", sent.Load())
	}
	// Each replica served leaves of all three CAs, and several leaves per CA.
	for _, r := range []*replica{a, b} {
		perCA := map[int]int{}
		for _, leaf := range leaves[r.name] {
			for i, ca := range []*x509.Certificate{ca1, ca2, ca3} {
				if leaf.CheckSignatureFrom(ca) == nil {
					perCA[i+1]++
				}
			}
		}
		t.Logf("replica %s: leaves per CA %v", r.name, perCA)
		if perCA[1] == 0 || perCA[2] == 0 || perCA[3] == 0 || len(leaves[r.name]) < 5 {
			t.Fatalf("replica %s served leaves per CA %v (%d in all); want leaves of all three CAs and at least 5", r.name, perCA, len(leaves[r.name]))
		}
	}
	// The bundle keeps the replaced CAs (their leaves may still be served) behind the
	// current one.
	for _, bundle := range bundles(t, id) {
		got := parsePEM(t, bundle)
		if len(got) != 3 || !got[0].Equal(ca3) || !got[1].Equal(ca2) || !got[2].Equal(ca1) {
			t.Fatalf("caBundle holds %d certificates, want the current CA followed by the two replaced ones", len(got))
		}
	}
}

func parseBundleT(data []byte) []*x509.Certificate {
	var out []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return out
		}
		if c, err := x509.ParseCertificate(b.Bytes); err == nil {
			out = append(out, c)
		}
	}
}
