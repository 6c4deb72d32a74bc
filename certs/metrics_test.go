package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"math/big"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

type staticSource struct{ cert *tls.Certificate }

func (s staticSource) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return s.cert, nil
}

// TestServingCertificateExpiry: the gauge reports the notAfter of the certificate the source
// serves now, and follows a rotation; there is no series before a certificate is served.
func TestServingCertificateExpiry(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(certCollector{})
	p := &Provider{}
	served.Store(p)
	t.Cleanup(func() { served.Store(nil) })
	if n := testutil.CollectAndCount(certCollector{}); n != 0 {
		t.Errorf("%d series before a certificate is served, want 0", n)
	}
	for _, notAfter := range []time.Time{time.Date(2027, 1, 8, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 15, 0, 0, 0, 0, time.UTC)} {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: notAfter.Add(-7 * 24 * time.Hour), NotAfter: notAfter},
			&x509.Certificate{SerialNumber: big.NewInt(1)}, &key.PublicKey, key)
		if err != nil {
			t.Fatal(err)
		}
		p.setSource(staticSource{cert: &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}})
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		if len(families) != 1 || len(families[0].GetMetric()) != 1 {
			t.Fatalf("gathered %v, want one series", families)
		}
		if got := families[0].GetMetric()[0].GetGauge().GetValue(); got != float64(notAfter.Unix()) {
			t.Errorf("%s = %v, want %v (%s)", families[0].GetName(), got, notAfter.Unix(), notAfter)
		}
	}
}
