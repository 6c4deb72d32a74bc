// Package metrics holds almanac's Prometheus metrics. They are registered with
// controller-runtime's metrics.Registry, so the manager's metrics server (HTTPS, behind
// Kubernetes authentication and authorization) serves them next to controller-runtime's own.
//
// Each reconciler adds its metrics here, in a file of its own, so that names, units and
// label sets are reviewed in one place. Label sets stay small: per-object labels
// (namespace, name) are used only for gauges whose series are deleted with the object.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Namespace prefixes every almanac metric name.
const Namespace = "almanac"

// register adds collectors to controller-runtime's registry. It panics on a duplicate
// name, which is a programming error caught by any test that imports the package.
func register(cs ...prometheus.Collector) {
	metrics.Registry.MustRegister(cs...)
}
