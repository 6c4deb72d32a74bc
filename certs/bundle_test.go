package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newCA(t *testing.T, name string, notBefore time.Time, life time.Duration) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(notBefore.Unix()),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             notBefore,
		NotAfter:              notBefore.Add(life),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func names(cs []*x509.Certificate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Subject.CommonName)
	}
	return out
}

func TestDesiredBundle(t *testing.T) {
	const year = 365 * 24 * time.Hour
	grace := 7*24*time.Hour + time.Hour
	ca1 := newCA(t, "ca1", t0.Add(-300*24*time.Hour), year)
	ca2 := newCA(t, "ca2", t0, year)                      // replaced ca1 at t0
	ca3 := newCA(t, "ca3", t0.Add(time.Hour), year)       // replaced ca2 an hour later
	expired := newCA(t, "expired", t0.Add(-2*year), year) // expired long ago
	leaf := newCA(t, "not-a-ca", t0.Add(-time.Hour), year)
	leaf.IsCA = false

	tests := []struct {
		name     string
		current  *x509.Certificate
		existing []*x509.Certificate
		now      time.Time
		want     []string
		wantNext time.Time
	}{
		{name: "first bundle", current: ca1, now: t0, want: []string{"ca1"}},
		{name: "unchanged", current: ca1, existing: []*x509.Certificate{ca1, ca1}, now: t0, want: []string{"ca1"}},
		{
			name: "rotation keeps the replaced CA for a leaf lifetime", current: ca2, existing: []*x509.Certificate{ca1},
			now: t0.Add(time.Minute), want: []string{"ca2", "ca1"}, wantNext: t0.Add(grace),
		},
		{name: "the replaced CA falls out after the grace", current: ca2, existing: []*x509.Certificate{ca2, ca1}, now: t0.Add(grace), want: []string{"ca2"}},
		{
			name: "two quick rotations keep both predecessors, newest first", current: ca3, existing: []*x509.Certificate{ca1, ca2},
			now: t0.Add(2 * time.Hour), want: []string{"ca3", "ca2", "ca1"}, wantNext: t0.Add(grace),
		},
		{
			name: "a predecessor goes when its own successor is old enough", current: ca3, existing: []*x509.Certificate{ca2, ca1},
			now: t0.Add(grace + time.Minute), want: []string{"ca3", "ca2"}, wantNext: t0.Add(time.Hour + grace),
		},
		{name: "expired and non-CA certificates are dropped", current: ca2, existing: []*x509.Certificate{expired, leaf}, now: t0, want: []string{"ca2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, next := desiredBundle(tc.current, tc.existing, tc.now, grace)
			if diff := cmp.Diff(tc.want, names(got)); diff != "" {
				t.Errorf("bundle (-want +got):\n%s", diff)
			}
			if !next.Equal(tc.wantNext) {
				t.Errorf("next change = %v, want %v", next, tc.wantNext)
			}
			// The PEM round trip keeps the order.
			if diff := cmp.Diff(tc.want, names(parseBundle(encodeBundle(got)))); diff != "" {
				t.Errorf("PEM round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseBundleSkipsGarbage(t *testing.T) {
	ca := newCA(t, "ca", t0, time.Hour)
	data := append([]byte("garbage\n-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), encodeBundle([]*x509.Certificate{ca})...)
	if got := names(parseBundle(data)); !cmp.Equal(got, []string{"ca"}) {
		t.Fatalf("parseBundle = %v, want [ca]", got)
	}
}
