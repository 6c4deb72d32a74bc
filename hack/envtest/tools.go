//go:build tools

// Package envtest pins the versions of the Kubernetes binaries that almanac's tests run
// against. hack/envtest.sh builds kube-apiserver and etcd (and kube-controller-manager) for
// the integration tests; hack/cluster.sh builds the rest of a real single-node cluster
// (kubelet, kube-scheduler, kube-proxy, and kubectl at the same version) from this same module.
package envtest

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
