#!/usr/bin/env bash
# bench-run: what `devctl run` costs.
#  1. Start-up: `devctl run -- true` beside `devctl probe -o json` (run probes
#     the machine, builds the environment, supervises, records the attempt).
#     Target (issue 14): median wall time at most 2x probe's.
#  2. Passthrough: GiB of bytes from a child (dd bs=1M) through devctl into
#     a pipe, beside the same pipeline without devctl. Target: at least
#     1 GB/s. A producer of 4 KiB writes (head -c) is timed too.
#
#   N=50 scripts/bench-run.sh            # more start-up runs (default 30)
#   SIZE_MB=4096 scripts/bench-run.sh    # a longer stream (default 2048)
#   BIN=/tmp/devctl scripts/bench-run.sh # another binary
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/bench.sh
BIN=${BIN:-bin/devctl}
[[ -x $BIN ]] || bench_die "$BIN not found; run 'make build' (or 'make bench-run', which builds first)"
# Attempts are recorded: keep them out of the user's history.
XDG_STATE_HOME=$(mktemp -d)
export XDG_STATE_HOME
trap 'rm -rf "$XDG_STATE_HOME"' EXIT

echo "== start-up: devctl run -- true vs devctl probe -o json"
status=0
# (compare splits its arguments at "--", so the command is given without
# it: `devctl run true` is the same code path as `devctl run -- true`.)
compare "${N:-30}" 2 40 -- "$BIN" run true -- "$BIN" probe -o json || status=$?

echo
size_mb=${SIZE_MB:-2048}
[[ $size_mb =~ ^[0-9]+$ && $size_mb -ge 256 ]] || bench_die "SIZE_MB=$size_mb: want 256 or more"
bytes=$((size_mb * 1024 * 1024))
echo "== passthrough: $size_mb MiB from the child through a pipe into cat (median of 5, interleaved)"
pipe_us() { # pipe_us CMD...: wall time of CMD | cat >/dev/null
	local t0 t1
	t0=${EPOCHREALTIME/[.,]/}
	"$@" | cat >/dev/null
	t1=${EPOCHREALTIME/[.,]/}
	echo $((t1 - t0))
}
# gbps NAME US...: the median of the times as GB/s.
gbps() {
	local name=$1
	shift
	printf '%s\n' "$@" | bench_median | awk -v b="$bytes" -v n="$name" '{printf "%-44s %6.2f GB/s  (%.0f ms)\n", n, b / ($1 / 1e6) / 1e9, $1 / 1000}'
}
# The child writes 1 MiB at a time (dd), as a fast producer does; a
# producer of 4 KiB writes (head -c) is shown too, for what small writes cost.
dd_child=(dd if=/dev/zero bs=1M count="$size_mb" status=none)
a=() b=() c=() d=()
for ((i = 0; i < 5; i++)); do
	a+=("$(pipe_us "$BIN" run -- "${dd_child[@]}")")
	b+=("$(pipe_us "${dd_child[@]}")")
	c+=("$(pipe_us "$BIN" run -- head -c "$bytes" /dev/zero)")
	d+=("$(pipe_us head -c "$bytes" /dev/zero)")
done
gbps "devctl run -- dd bs=1M | cat" "${a[@]}"
gbps "dd bs=1M | cat (no devctl)" "${b[@]}"
gbps "devctl run -- head -c (4 KiB writes) | cat" "${c[@]}"
gbps "head -c (4 KiB writes) | cat (no devctl)" "${d[@]}"
printf '%s\n' "${a[@]}" | bench_median | awk -v b="$bytes" '{r = b / ($1 / 1e6) / 1e9; printf "target: devctl run -- dd >= 1 GB/s: %s\n", (r >= 1 ? "ok" : "UNDER TARGET"); exit (r >= 1 ? 0 : 3)}' || status=$?
echo "(machine: $(nproc) CPUs; $(uptime | sed 's/.*load/load/'); a shared machine makes absolute figures noisy, ratios less so)"
exit $status
