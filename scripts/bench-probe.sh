#!/usr/bin/env bash
# bench-probe: whole-process cost of `devctl probe -o json` beside `lscpu -J`.
# Targets (issue 2): median wall time at most 2x lscpu's, peak RSS at most 30 MB.
#
#   N=50 scripts/bench-probe.sh             # more runs (default 30)
#   BIN=/tmp/devctl scripts/bench-probe.sh  # another binary
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/bench.sh
BIN=${BIN:-bin/devctl}
[[ -x $BIN ]] || bench_die "$BIN not found; run 'make build' (or 'make bench-probe', which builds first)"
command -v lscpu >/dev/null || bench_die "lscpu not found: apt-get install util-linux"
compare "${N:-30}" 2 30 -- "$BIN" probe -o json -- lscpu -J
