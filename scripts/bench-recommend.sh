#!/usr/bin/env bash
# bench-recommend: whole-process cost of `devctl recommend --model-params 150M -o json`
# (which probes this machine) beside `devctl probe -o json`.
# Target (issue 4): recommend's median under 2x probe's.
#
#   N=50 scripts/bench-recommend.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/bench.sh
BIN=${BIN:-bin/devctl}
[[ -x $BIN ]] || bench_die "$BIN not found; run 'make build' (or 'make bench-recommend')"
compare "${N:-30}" 2 30 -- "$BIN" recommend --model-params 150M -o json -- "$BIN" probe -o json
