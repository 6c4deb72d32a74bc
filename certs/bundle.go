package certs

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"slices"
	"time"
)

// maxBundleCAs bounds the CA bundle: the current CA and at most three predecessors. Only a
// burst of forced rotations within one leaf lifetime ever needs more than two.
const maxBundleCAs = 4

// desiredBundle returns the CAs that almanac's webhook configurations should trust: the
// current CA first, then older CAs, newest first, for as long as a leaf certificate they
// signed may still be served. A leaf signed by an old CA was signed before its successor was
// created and lives at most leafGrace, so an old CA is kept until its successor's NotBefore
// plus leafGrace, and dropped earlier only when it has expired. The result depends only on
// the certificates and now, so every leader writes the same bundle and nothing flaps.
//
// The second result is when the bundle changes next by itself (an old CA falling out), or the
// zero time when it never does.
func desiredBundle(current *x509.Certificate, existing []*x509.Certificate, now time.Time, leafGrace time.Duration) ([]*x509.Certificate, time.Time) {
	out := []*x509.Certificate{current}
	var older []*x509.Certificate
	for _, c := range existing {
		if c == nil || !c.IsCA || c.Equal(current) || !now.Before(c.NotAfter) {
			continue
		}
		if slices.ContainsFunc(older, c.Equal) {
			continue
		}
		older = append(older, c)
	}
	// Newest first; ties broken by the raw bytes so that the order is deterministic.
	slices.SortFunc(older, func(a, b *x509.Certificate) int {
		if c := b.NotBefore.Compare(a.NotBefore); c != 0 {
			return c
		}
		return bytes.Compare(a.Raw, b.Raw)
	})
	var next time.Time
	successor := current
	for _, c := range older {
		if len(out) == maxBundleCAs {
			break
		}
		until := successor.NotBefore.Add(leafGrace)
		if !now.Before(until) {
			break
		}
		out = append(out, c)
		next = earliest(next, until, c.NotAfter)
		successor = c
	}
	return out, next
}

func earliest(ts ...time.Time) time.Time {
	var out time.Time
	for _, t := range ts {
		if !t.IsZero() && (out.IsZero() || t.Before(out)) {
			out = t
		}
	}
	return out
}

// encodeBundle writes certificates as concatenated PEM blocks.
func encodeBundle(cs []*x509.Certificate) []byte {
	var buf bytes.Buffer
	for _, c := range cs {
		_ = pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return buf.Bytes()
}

// parseBundle reads the certificates of a PEM bundle, skipping blocks that are not
// certificates or do not parse: a damaged bundle written by someone else must not stop
// almanac from writing a good one.
func parseBundle(data []byte) []*x509.Certificate {
	var out []*x509.Certificate
	for len(data) > 0 {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			continue
		}
		out = append(out, c)
	}
	return out
}
