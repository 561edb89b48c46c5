#!/usr/bin/env bash
# bench-recommend: whole-process cost of `devctl recommend` (which probes
# this machine) beside `devctl probe -o json`, four times:
#   1. --model-params 150M;
#   2. --model ORG/NAME with a warm Hugging Face cache (HF_HOME laid out in a
#      temporary directory from the real files in internal/hfhub/testdata,
#      HF_HUB_OFFLINE=1 so that nothing can reach the network);
#   3. --model llama-3-8b --max batch;  4. --stack vllm --max concurrency;
#   5. a catalogued --device (the device catalogue parsed once) whose plan
#      does not fit, so the fallback ladder runs.
# Target: recommend's median under 2x probe's (1., 2., 5.); --max (3. and 4.) under 3x.
#
#   N=50 scripts/bench-recommend.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/bench.sh
BIN=${BIN:-bin/devctl}
[[ -x $BIN ]] || bench_die "$BIN not found; run 'make build' (or 'make bench-recommend')"

echo "== recommend --model-params 150M"
# A missed target (exit 3) must not stop the second measurement.
status=0
compare "${N:-30}" 2 30 -- "$BIN" recommend --model-params 150M -o json -- "$BIN" probe -o json || status=$?

hf=$(mktemp -d)
trap 'rm -rf "$hf"' EXIT
commit=cfe714af820a913b68c32cbe56b955be18b49352
snap=$hf/hub/models--YouriLalain--3PRYMMAL-PHI3-3B-SLERP/snapshots/$commit
mkdir -p "$snap" "$hf/hub/models--YouriLalain--3PRYMMAL-PHI3-3B-SLERP/refs"
cp internal/hfhub/testdata/YouriLalain--3PRYMMAL-PHI3-3B-SLERP/*.json "$snap/"
echo "$commit" >"$hf/hub/models--YouriLalain--3PRYMMAL-PHI3-3B-SLERP/refs/main"
echo
echo "== recommend --model YouriLalain/3PRYMMAL-PHI3-3B-SLERP (warm Hugging Face cache)"
HF_HOME=$hf HF_HUB_OFFLINE=1 compare "${N:-30}" 2 30 -- "$BIN" recommend --model YouriLalain/3PRYMMAL-PHI3-3B-SLERP -o json -- "$BIN" probe -o json || status=$?

# --max searches over the same model (an exponential then a binary search,
# about 2·log2(answer) estimates). Target: under 3x probe's median.
echo
echo "== recommend --model llama-3-8b --max batch (probed device)"
compare "${N:-30}" 3 30 -- "$BIN" recommend --model llama-3-8b --max batch -o json -- "$BIN" probe -o json || status=$?
echo
echo "== recommend --model qwen2.5-0.5b --stack vllm --max concurrency (probed device)"
compare "${N:-30}" 3 30 -- "$BIN" recommend --model qwen2.5-0.5b --stack vllm --max concurrency -o json -- "$BIN" probe -o json || status=$?
echo
echo "== recommend --model llama-2-7b --mode training --device a100-80gb (catalogue device, ladder)"
compare "${N:-30}" 2 30 -- "$BIN" recommend --model llama-2-7b --mode training --device a100-80gb -o json -- "$BIN" probe -o json || status=$?
exit $status
