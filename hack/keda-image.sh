#!/usr/bin/env bash
# Builds KEDA's operator image for the end-to-end suite, from KEDA's own Go module at the
# version the tests pin (KEDAVersion in test/testenv/testenv.go, whose CRDs the envtests
# install), with ko through hack/image: no Docker, no registry. The image is KEDA's operator
# (github.com/kedacore/keda/v2/cmd/operator) on almanac's static nonroot base; the suite runs it
# with KEDA's own manifests (config/ in the same module). The archive is cached outside the
# clone, keyed by the version and platform, so a second run (or a second clone) builds nothing.
#
#   hack/keda-image.sh           build if missing, then print the archive's path
#   hack/keda-image.sh --print   print the archive's path without building
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=$(sed -n 's/^const KEDAVersion = "\(v[^"]*\)"$/\1/p' "$here/../test/testenv/testenv.go")
if [[ -z $version ]]; then
	echo "hack/keda-image.sh: no KEDAVersion in test/testenv/testenv.go" >&2
	exit 1
fi
cache=${ALMANAC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/almanac}
platform=$(go env GOOS)/$(go env GOARCH)
archive="$cache/images/keda-operator-$version-${platform//\//-}.tar"

case "${1:-}" in
--print) echo "$archive"; exit 0 ;;
"") ;;
*) echo "usage: $0 [--print]" >&2; exit 2 ;;
esac
if [[ -s $archive ]]; then
	echo "$archive"
	exit 0
fi

# The module's folder in the module cache (read-only: ko builds there and writes nothing).
dir=$(cd "${TMPDIR:-/tmp}" && GOFLAGS=-mod=mod go mod download -json "github.com/kedacore/keda/v2@$version" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [[ -z $dir || ! -d $dir ]]; then
	echo "hack/keda-image.sh: could not download github.com/kedacore/keda/v2@$version from the Go module proxy" >&2
	exit 1
fi
mkdir -p "$(dirname "$archive")"
tmp="$archive.tmp.$$"
trap 'rm -f "$tmp"' EXIT
echo ">> building KEDA's operator $version from $dir" >&2
(cd "$here/image" && go run . --root "$dir" --import-path github.com/kedacore/keda/v2/cmd/operator \
	--repository ghcr.io/kedacore/keda --version "${version#v}" --revision "$version" \
	--source https://github.com/kedacore/keda --title keda-operator \
	--description "KEDA's operator, built from its Go module for almanac's end-to-end suite" \
	--platforms "$platform" --oci-archive "$tmp" >&2)
mv "$tmp" "$archive"
echo "$archive"
