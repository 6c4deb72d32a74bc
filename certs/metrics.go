package certs

import (
	"crypto/x509"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// servingNotAfter is almanac_webhook_serving_certificate_expiry_timestamp_seconds: the
// notAfter (unix seconds) of the certificate the webhook server serves now, read at each
// scrape from the provider's source, so it follows every rotation and reload in every mode
// (self-managed leaves, cert-manager's and external Secrets). Each replica exports its own;
// there is no series until a certificate is served.
var servingNotAfter = prometheus.NewDesc(
	"almanac_webhook_serving_certificate_expiry_timestamp_seconds",
	"notAfter of the webhook serving certificate this replica serves now (unix seconds), in every certificate mode.",
	nil, nil,
)

// served is the provider whose certificate the collector reports: the one the manager set up
// last (a process has one).
var served atomic.Pointer[Provider]

type certCollector struct{}

func (certCollector) Describe(ch chan<- *prometheus.Desc) { ch <- servingNotAfter }

func (certCollector) Collect(ch chan<- prometheus.Metric) {
	p := served.Load()
	if p == nil {
		return
	}
	cert, err := p.GetCertificate(nil)
	if err != nil || cert == nil || len(cert.Certificate) == 0 {
		return
	}
	leaf := cert.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return
		}
	}
	ch <- prometheus.MustNewConstMetric(servingNotAfter, prometheus.GaugeValue, float64(leaf.NotAfter.Unix()))
}

func init() {
	metrics.Registry.MustRegister(certCollector{})
}
