#!/usr/bin/env bash
# Runs every fuzz target in the module for a short time each (the argument, e.g. 5s).
# `go test -fuzz` accepts one target in one package per run, so this lists them first.
set -euo pipefail
fuzztime=${1:-5s}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
found=0
for pkg in $(go list ./...); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
		found=$((found + 1))
		echo ">> fuzz $pkg $target ($fuzztime)"
		go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "$pkg"
	done
done
echo ">> ran $found fuzz targets"
