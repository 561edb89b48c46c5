#!/usr/bin/env bash
# bench-probe: whole-process cost of `devctl probe -o json` beside `lscpu -J`.
#
# Times N runs of each (interleaved, after one warm-up run each) with
# `date +%s%N`, prints each median and the median ratio, then the peak RSS
# of each from `/usr/bin/time -v`, and the CPU time (user+sys) per run,
# which stays meaningful on a busy machine where wall time does not. Targets (issue 2): devctl's median is at
# most 2x lscpu's and its peak RSS at most 30 MB. A benchmark, not a test:
# it reports misses and exits 0; it exits 1 only when it cannot run.
#
#   N=50 scripts/bench-probe.sh            # more runs
#   BIN=/tmp/devctl scripts/bench-probe.sh # another binary
#   ARGS="probe -o json --only cpu" scripts/bench-probe.sh
set -euo pipefail

N=${N:-30}
BIN=${BIN:-bin/devctl}
ARGS=${ARGS:-probe -o json}
TARGET_RATIO=${TARGET_RATIO:-2}
TARGET_RSS_MB=${TARGET_RSS_MB:-30}

die() { echo "bench-probe: $*" >&2; exit 1; }

[[ -x $BIN ]] || die "$BIN not found; run 'make build' (or 'make bench-probe', which builds first)"
command -v lscpu >/dev/null || die "lscpu not found (util-linux); install it: apt-get install util-linux"
[[ $N =~ ^[0-9]+$ && $N -ge 1 ]] || die "N=$N: want a positive whole number of runs (20 or more for a stable median)"

# run_ns CMD... prints the wall time of one run in nanoseconds. It reads
# bash's EPOCHREALTIME (no process of its own), so the timer adds nothing
# to either command: forking `date` around each run would add the same
# millisecond to both and flatter the ratio.
run_ns() {
	local t0 t1
	t0=${EPOCHREALTIME/[.,]/}
	"$@" >/dev/null 2>&1 || true
	t1=${EPOCHREALTIME/[.,]/}
	echo $(((t1 - t0) * 1000))
}

# median reads numbers on stdin and prints the median.
median() {
	sort -n | awk '{a[NR]=$1} END {if (NR==0) exit 1; if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'
}

# shellcheck disable=SC2086 # ARGS is a word list on purpose
"$BIN" $ARGS >/dev/null || die "'$BIN $ARGS' failed; fix it before timing it"
lscpu -J >/dev/null

dev_times=() lscpu_times=()
for ((i = 0; i < N; i++)); do
	# shellcheck disable=SC2086
	dev_times+=("$(run_ns "$BIN" $ARGS)")
	lscpu_times+=("$(run_ns lscpu -J)")
done

dev_med=$(printf '%s\n' "${dev_times[@]}" | median)
lscpu_med=$(printf '%s\n' "${lscpu_times[@]}" | median)

echo "runs:            $N each (interleaved, after one warm-up)"
awk -v d="$dev_med" -v l="$lscpu_med" -v t="$TARGET_RATIO" -v cmd="$BIN $ARGS" 'BEGIN {
	printf "devctl median:   %.2f ms  (%s)\n", d / 1e6, cmd
	printf "lscpu median:    %.2f ms  (lscpu -J)\n", l / 1e6
	r = d / l
	printf "median ratio:    %.2fx  (target <= %sx) %s\n", r, t, (r <= t ? "ok" : "OVER TARGET")
}'

# Peak RSS: the largest "Maximum resident set size" over a few runs.
if [[ -x /usr/bin/time ]]; then
	# /usr/bin/time writes its report to stderr; keep the program's own stderr out of it.
	peak_kb() {
		local best=0 kb out
		out=$(mktemp)
		for ((j = 0; j < 5; j++)); do
			/usr/bin/time -v -o "$out" "$@" >/dev/null 2>&1 || true
			kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$out")
			[[ -n $kb && $kb -gt $best ]] && best=$kb
		done
		rm -f "$out"
		echo "$best"
	}
	# CPU time (user+sys) per run, summed over N runs in one child shell:
	# unlike wall time it hardly moves when other work shares the machine.
	cpu_ms() {
		local out
		out=$(mktemp)
		/usr/bin/time -f '%U %S' -o "$out" bash -c 'for ((i = 0; i < '"$N"'; i++)); do "$@" >/dev/null 2>&1; done' _ "$@" || true
		awk -v n="$N" '{printf "%.2f", ($1 + $2) * 1000 / n}' "$out"
		rm -f "$out"
	}
	# shellcheck disable=SC2086
	dev_cpu=$(cpu_ms "$BIN" $ARGS)
	lscpu_cpu=$(cpu_ms lscpu -J)
	awk -v d="$dev_cpu" -v l="$lscpu_cpu" 'BEGIN {
		printf "CPU time/run:    devctl %.2f ms, lscpu %.2f ms (user+sys), ratio %.2fx\n", d, l, (l > 0 ? d / l : 0)
	}'
	# shellcheck disable=SC2086
	dev_kb=$(peak_kb "$BIN" $ARGS)
	lscpu_kb=$(peak_kb lscpu -J)
	awk -v d="$dev_kb" -v l="$lscpu_kb" -v t="$TARGET_RSS_MB" 'BEGIN {
		printf "devctl peak RSS: %.1f MB  (target <= %s MB) %s\n", d / 1024, t, (d / 1024 <= t ? "ok" : "OVER TARGET")
		printf "lscpu peak RSS:  %.1f MB\n", l / 1024
	}'
else
	echo "peak RSS:        skipped: /usr/bin/time (GNU time) is not installed; install it with: apt-get install time"
fi
