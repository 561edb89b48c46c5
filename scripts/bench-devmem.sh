#!/usr/bin/env bash
# bench-devmem: what sampling a job's device memory costs devctl run.
# Target (issue 21): less than 1% of one CPU at the default interval (1s).
#
#  1. Per reading, in-process (go test -bench): one DRM fdinfo reading of a
#     job of 17 real processes on this machine, one nvidia-smi poll of 8
#     lines matched against the job, one NVML reading of a DGX H100 mock
#     (8 GPUs x 4 processes). At one reading a second, ns per reading / 1e7
#     is the percentage of one CPU.
#  2. Whole process: `devctl run -- sleep D` with a fake nvidia-smi stream
#     (8 process lines a poll) on PATH, sampling on (--memory-interval 1s)
#     and off (0): devctl's own CPU time (utime+stime of its process, from
#     /proc/PID/stat, not its children's) over the run.
#
# No GPU is needed or used: the NVML figure is go-nvml's mock (devctl's side
# of the cost, not the driver's), the nvidia-smi figure devctl's side of a
# stream (the real nvidia-smi's own CPU is not measured here).
#
#   D=60 scripts/bench-devmem.sh         # a longer run (default 30 s)
#   BIN=/tmp/devctl scripts/bench-devmem.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/bench.sh
BIN=${BIN:-bin/devctl}
[[ -x $BIN ]] || bench_die "$BIN not found; run 'make build'"
[[ $(uname -s) == Linux ]] || bench_die "reads /proc: Linux only"
D=${D:-30}
[[ $D =~ ^[0-9]+$ && $D -ge 10 ]] || bench_die "D=$D: want 10 seconds or more"
status=0

echo "== per reading (go test -bench, 2000 readings each)"
go test -run '^$' -bench 'FDInfoRead|SampleSMIPoll|ProcessMemoryReading' -benchtime 2000x \
	./internal/devmem ./internal/probe/nvidia 2>/dev/null |
	awk '/^Benchmark/ {pct = $3 / 1e7; printf "%-40s %9.0f ns/reading  %.4f%% of a CPU at 1/s  %s\n", $1, $3, pct, (pct < 1 ? "ok" : "OVER TARGET"); if (pct >= 1) bad = 1} END {exit bad}' || status=3

echo
echo "== whole process: devctl run -- sleep $D, fake nvidia-smi stream, devctl's own CPU"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/state"
fixtures=$PWD/testdata
cat >"$work/bin/nvidia-smi" <<SMI
#!/bin/sh
case "\$*" in
  --query-gpu=*) cat "$fixtures/nvidia/smi/query-535.129.03-quadro-rtx4000-x2.csv" ;;
  "-q -d COMPUTE") cat "$fixtures/nvidia/smi/q-d-compute-535.129.03-a100-pcie.txt" ;;
  --query-compute-apps=*)
    i=0
    while :; do
      i=\$((i + 1)); pid=\$(cat "$work/job.pid" 2>/dev/null || echo 1)
      for n in 1 2 3 4 5 6 7; do echo "2024/05/14 10:21:\$i.000, GPU-\$((n % 2)), \$((n + 1)), 1000"; done
      echo "2024/05/14 10:21:\$i.000, GPU-0, \$pid, 1536"
      sleep 1
    done ;;
  *) exit 2 ;;
esac
SMI
chmod 0755 "$work/bin/nvidia-smi"
tck=$(getconf CLK_TCK)
# cpu_ms INTERVAL: devctl's own utime+stime in ms, read a second before the
# job ends.
cpu_ms() {
	rm -f "$work/job.pid"
	XDG_STATE_HOME=$work/state PATH=$work/bin:$PATH "$BIN" run --memory-interval "$1" --report "$work/r-$1.json" -- \
		sh -c "echo \$\$ > $work/job.pid; exec sleep $D" >/dev/null 2>&1 &
	local pid=$!
	sleep $((D - 1))
	local st
	st=$(cat "/proc/$pid/stat")
	st=${st##*) }
	wait "$pid" || true
	awk -v s="$st" -v t="$tck" 'BEGIN {split(s, f, " "); printf "%.0f\n", (f[12] + f[13]) * 1000 / t}'
}
on=$(cpu_ms 1s)
off=$(cpu_ms 0)
grep -q '"method": "nvidia-smi"' "$work/r-1s.json" || { echo "sampling did not run: $(cat "$work/r-1s.json")"; exit 1; }
awk -v on="$on" -v off="$off" -v d="$D" 'BEGIN {
	printf "devctl CPU, sampling every 1s: %6d ms over %d s (%.3f%% of a CPU)\n", on, d - 1, on / ((d - 1) * 10)
	printf "devctl CPU, sampling off:      %6d ms over %d s (%.3f%% of a CPU)\n", off, d - 1, off / ((d - 1) * 10)
	pct = (on - off) / ((d - 1) * 10)
	printf "sampling costs:                %6d ms, %.3f%% of a CPU (target < 1%%) %s\n", on - off, pct, (pct < 1 ? "ok" : "OVER TARGET")
	exit (pct < 1 ? 0 : 3)
}' || status=3
exit $status
