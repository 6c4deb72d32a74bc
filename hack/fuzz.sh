#!/usr/bin/env bash
# Runs every fuzz target in the module for a short time each (the argument, e.g. 5s).
# `go test -fuzz` accepts one target in one package per run, so this lists them first.
set -euo pipefail
fuzztime=${1:-5s}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
found=0

# fuzz_one fuzzes one target. Go 1.26's fuzzing coordinator can fail a target with a bare
# "context deadline exceeded" when -fuzztime ends while a worker is mid-input, having found
# nothing (golang/go#75804, fixed in Go 1.27). Such a run, with no new failing input written to
# testdata/fuzz/<target>/, is run once more; any other failure, or that one twice, fails.
fuzz_one() {
	local pkg=$1 dir=$2 target=$3 attempt out before after
	for attempt in 1 2; do
		before=$(ls "$dir/testdata/fuzz/$target" 2>/dev/null | wc -l || true)
		out=$(mktemp)
		if go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "$pkg" 2>&1 | tee "$out"; then
			rm -f "$out"
			return 0
		fi
		after=$(ls "$dir/testdata/fuzz/$target" 2>/dev/null | wc -l || true)
		if [ "$attempt" = 1 ] && [ "$before" = "$after" ] && grep -q '^    context deadline exceeded$' "$out"; then
			echo ">> $target stopped with \"context deadline exceeded\" and wrote no failing input (golang/go#75804): once more"
			rm -f "$out"
			continue
		fi
		rm -f "$out"
		return 1
	done
}
for pkg in $(go list ./...); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
		found=$((found + 1))
		echo ">> fuzz $pkg $target ($fuzztime)"
		fuzz_one "$pkg" "$dir" "$target"
	done
done
echo ">> ran $found fuzz targets"
