#!/usr/bin/env bash
# bench-doctor: whole-process cost of `devctl doctor -o json` (every check on
# this machine) beside `lscpu -J`. Target (issue 5): median at most 5x lscpu's.
# Doctor exits 3 when a check fails; that is a finding, not a failed benchmark.
#
#   N=50 scripts/bench-doctor.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/bench.sh
BIN=${BIN:-bin/devctl}
[[ -x $BIN ]] || bench_die "$BIN not found; run 'make build' (or 'make bench-doctor')"
command -v lscpu >/dev/null || bench_die "lscpu not found: apt-get install util-linux"
export XDG_STATE_HOME=${XDG_STATE_HOME:-$(mktemp -d)} NO_COLOR=1
# A missed target (exit 3) must not stop the second measurement: remember
# it and exit with it at the end.
status=0
compare "${N:-30}" 5 30 -- "$BIN" doctor -o json -- lscpu -J || status=$?
# doctor --log on a real multi-rank NCCL log from the corpus: the explanation
# alone (no probe, no checks), the way it runs by default. Same target.
compare "${N:-30}" 5 30 -- "$BIN" doctor --log testdata/logs/nccl_error/270-llamafactory-6269.log -o json -- lscpu -J || status=$?
exit $status
