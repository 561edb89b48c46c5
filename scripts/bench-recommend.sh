#!/usr/bin/env bash
# Whole-process timing of `devctl recommend` against `devctl probe`.
#
# Runs each command N times (default 25, at least 20), alternating them so
# that load on the machine hits both alike, and reports the median wall
# time of each, their ratio (target: recommend < 2x probe) and the peak RSS
# measured by GNU time (/usr/bin/time -v; `apt-get install time`).
#
#   scripts/bench-recommend.sh [bin/devctl] [runs]
set -euo pipefail

bin=${1:-bin/devctl}
runs=${2:-25}
if (( runs < 20 )); then runs=20; fi
if [[ ! -x $bin ]]; then
  echo "bench-recommend: $bin is not an executable (build it: go build -o bin/devctl ./cmd/devctl)" >&2
  exit 2
fi
if [[ ! -x /usr/bin/time ]]; then
  echo "bench-recommend: /usr/bin/time is missing (apt-get install time)" >&2
  exit 2
fi

probe=("$bin" probe -o json)
recommend=("$bin" recommend --model-params 150M -o json)

# median of the numbers on stdin
median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.6f\n", (a[NR/2]+a[NR/2+1])/2}'; }

# wall CMD...: seconds for one run
wall() {
  local s e
  s=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || true
  e=$(date +%s.%N)
  awk -v s="$s" -v e="$e" 'BEGIN {printf "%.6f\n", e - s}'
}

# rss CMD...: peak resident set size in KiB (GNU time -v)
rss() {
  /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}'
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ((i = 0; i < runs; i++)); do
  wall "${probe[@]}" >>"$tmp/probe.t"
  wall "${recommend[@]}" >>"$tmp/rec.t"
  rss "${probe[@]}" >>"$tmp/probe.m"
  rss "${recommend[@]}" >>"$tmp/rec.m"
done

pt=$(median <"$tmp/probe.t"); rt=$(median <"$tmp/rec.t")
pm=$(sort -n "$tmp/probe.m" | tail -n1); rm_=$(sort -n "$tmp/rec.m" | tail -n1)
ratio=$(awk -v a="$rt" -v b="$pt" 'BEGIN {printf "%.2f", a / b}')

printf 'runs per command:        %d (alternating)\n' "$runs"
printf 'recommend median wall:   %6.1f ms   peak RSS %5.1f MB   (%s)\n' "$(awk -v x="$rt" 'BEGIN{print x*1000}')" "$(awk -v x="$rm_" 'BEGIN{print x/1024}')" "${recommend[*]}"
printf 'probe median wall:       %6.1f ms   peak RSS %5.1f MB   (%s)\n' "$(awk -v x="$pt" 'BEGIN{print x*1000}')" "$(awk -v x="$pm" 'BEGIN{print x/1024}')" "${probe[*]}"
printf 'ratio recommend/probe:   %s (target < 2)\n' "$ratio"
awk -v r="$ratio" 'BEGIN {exit !(r < 2)}' || { echo "bench-recommend: ratio $ratio is not below 2" >&2; exit 3; }
