#!/usr/bin/env bash
# bench-doctor.sh: median wall time of `devctl doctor -o json` against
# `lscpu -J` (target: at most 5x), and peak RSS of both via /usr/bin/time -v.
#
#   scripts/bench-doctor.sh [runs]      # default 25 runs; builds bin/devctl if missing
#
# Doctor exits 3 when a check fails; that is a finding, not a benchmark
# failure, so its exit status is ignored here.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-25}
if (( runs < 20 )); then echo "want at least 20 runs, got $runs" >&2; exit 2; fi
bin=bin/devctl
if [[ ! -x $bin ]]; then
	mkdir -p bin
	CGO_ENABLED=${CGO_ENABLED:-1} go build -trimpath -o "$bin" ./cmd/devctl
fi
command -v lscpu >/dev/null || { echo "lscpu not found" >&2; exit 1; }
export XDG_STATE_HOME=${XDG_STATE_HOME:-$(mktemp -d)} NO_COLOR=1

# median_ms CMD...: run CMD $runs times (after one warm-up), print the median in ms.
median_ms() {
	"$@" >/dev/null 2>&1 || true
	local times=() i s e
	for ((i = 0; i < runs; i++)); do
		s=$(date +%s%N)
		"$@" >/dev/null 2>&1 || true
		e=$(date +%s%N)
		times+=($(( (e - s) / 1000 )))
	done
	printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.2f\n", m/1000}'
}

# peak_rss_kb CMD...: maximum resident set size from GNU time.
peak_rss_kb() {
	if [[ -x /usr/bin/time ]]; then
		/usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}'
	else
		echo "n/a"
	fi
}

doctor_ms=$(median_ms "$bin" doctor -o json)
lscpu_ms=$(median_ms lscpu -J)
ratio=$(awk -v d="$doctor_ms" -v l="$lscpu_ms" 'BEGIN { printf "%.2f", d / l }')
doctor_rss=$(peak_rss_kb "$bin" doctor -o json | tail -1)
lscpu_rss=$(peak_rss_kb lscpu -J | tail -1)

printf 'runs:                     %d\n' "$runs"
printf 'devctl doctor -o json:    median %s ms, peak RSS %s kB\n' "$doctor_ms" "$doctor_rss"
printf 'lscpu -J:                 median %s ms, peak RSS %s kB\n' "$lscpu_ms" "$lscpu_rss"
printf 'ratio doctor/lscpu:       %sx (target <= 5x)\n' "$ratio"
awk -v r="$ratio" 'BEGIN { exit (r <= 5) ? 0 : 1 }' || { echo "FAIL: over the 5x target" >&2; exit 1; }
