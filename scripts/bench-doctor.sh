#!/usr/bin/env bash
# bench-doctor: whole-process cost of `devctl doctor -o json` (every check on
# this machine) beside `lscpu -J`. Target (issue 5): median at most 5x lscpu's.
# Doctor exits 3 when a check fails; that is a finding, not a failed benchmark.
# Then `doctor --log` on a 100 MB log: at most 2 s and bounded memory
# (issue 26), N100 runs (default 5).
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

# doctor --log on a 100 MB log (issue 26: at most 2 s, bounded memory). The
# log is the whole corpus (testdata/logs, 1,217 real logs: every kind of
# error, tracebacks, NCCL chatter, nvidia-smi tables) repeated to 100 MB,
# then one real out-of-memory log: thousands of hits for every rule, the
# worst case for the matcher's bookkeeping. Only the last 32 MiB are read;
# the lines before them are counted.
big=$(mktemp -d)
trap 'rm -rf "$big"' EXIT
find testdata/logs -name '*.log' | sort | xargs cat >"$big/corpus.txt"
: >"$big/big.log"
while [[ $(stat -c %s "$big/big.log") -lt $((100 << 20)) ]]; do cat "$big/corpus.txt" >>"$big/big.log"; done
cat testdata/logs/out_of_memory/001-zero-dce-test.log >>"$big/big.log"
"$BIN" doctor --log "$big/big.log" -o json | grep -q '"category": "out_of_memory"' ||
	bench_die "doctor --log on the 100 MB log did not find the final out-of-memory error"
runs=()
for ((i = 0; i < ${N100:-5}; i++)); do runs+=("$(bench_run_us "$BIN" doctor --log "$big/big.log" -o json)"); done
m=$(printf '%s\n' "${runs[@]}" | bench_median)
kb=$(bench_peak_kb "$BIN" doctor --log "$big/big.log" -o json)
awk -v m="$m" -v kb="$kb" -v n="${#runs[@]}" -v size="$(stat -c %s "$big/big.log")" 'BEGIN {
	printf "100 MB log:    %.1f MB, %d runs\n", size / 1048576, n
	printf "median wall:   %7.2f ms  (target <= 2000 ms) %s\n", m / 1000, (m <= 2000000 ? "ok" : "OVER TARGET")
	if (kb == "n/a") { print "peak RSS:      skipped: GNU time missing (apt-get install time)"; exit (m <= 2000000 ? 0 : 3) }
	printf "peak RSS:      %7.1f MB  (target <= 150 MB: the 32 MiB tail and its bookkeeping) %s\n", kb / 1024, (kb / 1024 <= 150 ? "ok" : "OVER TARGET")
	exit (m <= 2000000 && kb / 1024 <= 150) ? 0 : 3
}' || status=$?
exit $status
