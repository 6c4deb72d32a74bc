#!/usr/bin/env bash
# Builds the kube-apiserver and etcd binaries that almanac's integration tests (and
# `make demo`) run against, from the Go module proxy, through the pinned tools module in
# hack/envtest. Binaries are cached outside the clone, in a folder keyed by their versions,
# so a second run (or a second clone) builds nothing.
#
#   hack/envtest.sh             build if missing, then print the folder (for KUBEBUILDER_ASSETS)
#   hack/envtest.sh --print     print the folder without building
#   hack/envtest.sh --with-kcm  also build kube-controller-manager
#   hack/envtest.sh --cluster   also build what a real node needs (hack/cluster.sh): kube-
#                               controller-manager, kube-scheduler, kubelet, kube-proxy, and
#                               kubectl at the same version
#
# The binaries carry their real version (-X k8s.io/component-base/version...), so they report
# v1.36.3 rather than v0.0.0-master.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mod="$here/envtest"

version_of() { awk -v m="$1" '$1 == m && $2 ~ /^v/ { print $2; exit }' "$mod/go.mod"; }
kube=$(version_of k8s.io/kubernetes)
etcd=$(version_of go.etcd.io/etcd/server/v3)
cache=${ALMANAC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/almanac}
dir="$cache/envtest/kube-$kube-etcd-$etcd-$(go env GOOS)-$(go env GOARCH)"

want=(kube-apiserver etcd)
case "${1:-}" in
--print) echo "$dir"; exit 0 ;;
--with-kcm) want+=(kube-controller-manager) ;;
--cluster) want+=(kube-controller-manager kube-scheduler kubelet kube-proxy kubectl) ;;
"") ;;
*) echo "usage: $0 [--print|--with-kcm|--cluster]" >&2; exit 2 ;;
esac

pkg_of() {
	case "$1" in
	etcd) echo ./etcd ;;
	*) echo "k8s.io/kubernetes/cmd/$1" ;;
	esac
}

ldflags_of() {
	if [[ $1 == etcd ]]; then
		echo "-s -w"
		return
	fi
	local v=${kube#v} base=k8s.io/component-base/version
	local major=${v%%.*} rest=${v#*.}
	echo "-s -w -X $base.gitVersion=$kube -X $base.gitMajor=$major -X $base.gitMinor=${rest%%.*} -X $base.gitTreeState=clean -X $base.buildDate=1970-01-01T00:00:00Z"
}

mkdir -p "$dir"
for bin in "${want[@]}"; do
	if [[ -x "$dir/$bin" ]]; then
		continue
	fi
	echo ">> building $bin ($( [[ $bin == etcd ]] && echo "$etcd" || echo "$kube" )) into $dir; a cold build takes several minutes" >&2
	start=$SECONDS
	# Build into a temporary name and rename, so an interrupted build never leaves a
	# half-written binary that a later run would mistake for a cached one.
	(cd "$mod" && GOFLAGS=-mod=readonly GONOSUMDB=k8s.io/kubernetes CGO_ENABLED=0 \
		go build -trimpath -ldflags="$(ldflags_of "$bin")" -o "$dir/.$bin.tmp" "$(pkg_of "$bin")")
	mv "$dir/.$bin.tmp" "$dir/$bin"
	echo ">> built $bin in $((SECONDS - start))s" >&2
done
echo "$dir"
