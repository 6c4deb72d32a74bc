//go:build tools

// Package envtest pins the versions of the API-server binaries that almanac's tests run
// against. hack/envtest.sh builds them from this module.
package envtest

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
