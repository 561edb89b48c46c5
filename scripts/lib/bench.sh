# Shared by scripts/bench-*.sh: whole-process timing of a devctl command
# against a reference command. Source it, then call `compare`.
#
# Each command runs N times, interleaved with the reference so that load on
# the machine hits both alike, after one warm-up each. Wall time is read
# from bash's EPOCHREALTIME, which forks nothing: timing with `date` would
# add the same fork to both sides and flatter the ratio. Peak RSS is the
# largest "Maximum resident set size" GNU time reports over 5 runs.
# A benchmark, not a test: a missed target is reported, and the exit status
# is 3 so callers can notice; 1 means it could not run at all.

bench_die() { echo "${0##*/}: $*" >&2; exit 1; }

# bench_run_us CMD...: wall time of one run in microseconds.
bench_run_us() {
	local t0 t1
	t0=${EPOCHREALTIME/[.,]/}
	"$@" >/dev/null 2>&1 || true
	t1=${EPOCHREALTIME/[.,]/}
	echo $((t1 - t0))
}

# bench_median: median of the numbers on stdin.
bench_median() {
	sort -n | awk '{a[NR]=$1} END {if (NR==0) exit 1; if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'
}

# bench_peak_kb CMD...: peak RSS in KiB over 5 runs, or "n/a" without GNU time.
bench_peak_kb() {
	[[ -x /usr/bin/time ]] || { echo n/a; return; }
	local best=0 kb out j
	out=$(mktemp)
	for ((j = 0; j < 5; j++)); do
		/usr/bin/time -v -o "$out" "$@" >/dev/null 2>&1 || true
		kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$out")
		[[ -n $kb && $kb -gt $best ]] && best=$kb
	done
	rm -f "$out"
	echo "$best"
}

# compare N TARGET_RATIO TARGET_RSS_MB -- CMD... -- REF...
# prints the medians, the ratio CMD/REF against its target and the peak RSS.
compare() {
	local n=$1 target=$2 rss_target=$3
	shift 3
	[[ $1 == -- ]] || bench_die "compare: usage"
	shift
	local cmd=() ref=()
	while [[ $# -gt 0 && $1 != -- ]]; do cmd+=("$1"); shift; done
	shift
	ref=("$@")
	[[ $n =~ ^[0-9]+$ && $n -ge 20 ]] || bench_die "N=$n: want 20 or more runs for a stable median"
	"${cmd[@]}" >/dev/null 2>&1 || [[ $? -eq 3 ]] || bench_die "'${cmd[*]}' failed; fix it before timing it"
	"${ref[@]}" >/dev/null 2>&1 || bench_die "'${ref[*]}' failed"
	local a=() b=() i
	for ((i = 0; i < n; i++)); do
		a+=("$(bench_run_us "${cmd[@]}")")
		b+=("$(bench_run_us "${ref[@]}")")
	done
	local ma mb ka kb
	ma=$(printf '%s\n' "${a[@]}" | bench_median)
	mb=$(printf '%s\n' "${b[@]}" | bench_median)
	ka=$(bench_peak_kb "${cmd[@]}")
	kb=$(bench_peak_kb "${ref[@]}")
	awk -v ma="$ma" -v mb="$mb" -v ka="$ka" -v kb="$kb" -v t="$target" -v rt="$rss_target" \
		-v n="$n" -v ca="${cmd[*]}" -v cb="${ref[*]}" 'BEGIN {
		r = ma / mb
		printf "runs:          %d each, interleaved, after one warm-up\n", n
		printf "median wall:   %7.2f ms  %s\n", ma / 1000, ca
		printf "median wall:   %7.2f ms  %s\n", mb / 1000, cb
		printf "median ratio:  %7.2fx    (target <= %sx) %s\n", r, t, (r <= t ? "ok" : "OVER TARGET")
		if (ka == "n/a") { print "peak RSS:      skipped: GNU time missing (apt-get install time)"; exit (r <= t ? 0 : 3) }
		printf "peak RSS:      %7.1f MB  %s  (target <= %s MB) %s\n", ka / 1024, ca, rt, (ka / 1024 <= rt ? "ok" : "OVER TARGET")
		printf "peak RSS:      %7.1f MB  %s\n", kb / 1024, cb
		exit (r <= t && ka / 1024 <= rt) ? 0 : 3
	}'
}
