#!/usr/bin/env bash
# The README's 60-second tour, run for real in a throwaway git repository: prints each command as
# `$ dbglog ...` followed by what it printed. Paste its output into README.md's tour when the output
# of a command changes, so the README never shows output dbglog does not print.
#   bash docs/tour.sh [DIR]          (default: a new folder under /tmp named proj)
set -euo pipefail
DIR=${1:-$(mktemp -d)/proj}
mkdir -p "$DIR" && cd "$DIR" && git init -q
cat > repro.py <<'PY'
import os, sys
print("step 1 ok")
if os.environ.get("FUSED_ATTN") == "1" and os.environ.get("CUDA_GRAPHS") == "1":
    sys.exit("RuntimeError: CUDA error: an illegal memory access was encountered")
print("step 2 ok")
PY
export COLUMNS=100
while IFS= read -r c; do
    echo "\$ $c"
    eval "$c" 2>&1 || true
done <<'TOUR'
dbglog init
dbglog new "Decode crashes with an illegal address" --symptom "step 2, TP=2" --tag vllm
dbglog run --env FUSED_ATTN=1 --env CUDA_GRAPHS=1 --attempt "baseline" -- python repro.py
dbglog attempt add "Raise the NCCL timeout" --did "NCCL_TIMEOUT=3600 python repro.py" --result "Still crashes at step 2"
dbglog tried "increase the nccl timeout"
dbglog bisect toggles --env FUSED_ATTN=1 --env CUDA_GRAPHS=1 --env NCCL_ALGO=Tree -- python repro.py 2>/dev/null
dbglog report --html report.html
TOUR
