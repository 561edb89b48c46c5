#!/usr/bin/env bash
# bench-startup: where devctl's start-up time goes, as whole processes timed
# against `lscpu -J` in one interleaved loop: an empty Go program, a program
# that only links the required libraries (the floor no command can go
# below), `devctl --version` and `devctl probe -o json`. Medians and ratios;
# the machine may be shared, so compare ratios from one run, not absolute
# times. Package initialisation itself: GODEBUG=inittrace=1 bin/devctl --version.
# It also counts the Prometheus modules linked into BIN, which must be 0:
# `devctl serve` writes the metrics format itself, because the Go client's
# package set-up cost every devctl start about 0.7 ms (docs/cluster.md).
#
#   N=100 scripts/bench-startup.sh          # more runs (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/bench.sh
BIN=${BIN:-bin/devctl}
[[ -x $BIN ]] || bench_die "$BIN not found; run 'make build'"
command -v lscpu >/dev/null || bench_die "lscpu not found: apt-get install util-linux"
n=${N:-60}
[[ $n =~ ^[0-9]+$ && $n -ge 20 ]] || bench_die "N=$n: want 20 or more runs for a stable median"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for p in empty libs; do
	go build -trimpath -ldflags '-s -w' -o "$tmp/$p" "scripts/startup/$p.go" 2>/dev/null ||
		bench_die "building scripts/startup/$p.go failed"
done
names=("empty Go program" "required libraries" "devctl --version" "devctl probe -o json" "lscpu -J")
cmds=("$tmp/empty" "$tmp/libs" "$BIN --version" "$BIN probe -o json" "lscpu -J")
declare -a times
for ((i = 0; i < n; i++)); do
	for j in "${!cmds[@]}"; do
		# shellcheck disable=SC2086 # the command strings are split on purpose
		times[j]+="$(bench_run_us ${cmds[j]}) "
	done
done
ref=$(tr ' ' '\n' <<<"${times[4]}" | grep . | bench_median)
printf '%-24s %10s %8s\n' "command ($n runs)" "median" "ratio"
for j in "${!cmds[@]}"; do
	m=$(tr ' ' '\n' <<<"${times[j]}" | grep . | bench_median)
	awk -v name="${names[j]}" -v m="$m" -v r="$ref" 'BEGIN {printf "%-24s %8.2f ms %7.2fx\n", name, m / 1000, m / r}'
done
prom=$(go version -m "$BIN" 2>/dev/null | grep -c prometheus || true)
echo "prometheus modules linked into $BIN: $prom (want 0)"
