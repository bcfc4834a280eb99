#!/usr/bin/env bash
# Headless Chromium screenshots of `dbglog report --html` pages: a toggle bisection, a history
# bisection and a flaky history bisection (with its posterior), built in throwaway workspaces.
# Not part of the suite or CI: it installs Debian's chromium with apt when it is missing (as root).
#   bash bench/report_screenshots.sh [OUTDIR]       (default /tmp/dbglog-report-shots)
# Prints each page's size, whether it references anything outside itself, the number of inline
# <svg> charts, and how many pixels of the charts' verdict colours the screenshot holds
# (bench/png_colours.py: 0 would mean nothing was drawn); look at the PNGs too.
set -euo pipefail
OUT=${1:-/tmp/dbglog-report-shots}
BENCH=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
if ! command -v chromium > /dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium > /dev/null 2>&1 \
            || { apt-get update -q > /dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive \
                 apt-get install -y -q --no-install-recommends chromium > /dev/null; }
    else
        echo "chromium is not installed (apt-get install chromium, as root)" >&2; exit 2
    fi
fi
command -v dbglog > /dev/null || { echo "dbglog is not on PATH (pip install -e .)" >&2; exit 2; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# 1. toggles: which of four env toggles breaks the repro
mkdir "$WORK/toggles" && cd "$WORK/toggles" && git init -q && dbglog init > /dev/null
cat > repro.py <<'PY'
import os, sys
if os.environ.get("FUSED_ATTN") == "1" and os.environ.get("CUDA_GRAPHS") == "1":
    sys.exit("RuntimeError: CUDA error: an illegal memory access was encountered")
PY
dbglog new "Decode crashes with an illegal address" --symptom "step 2 of decode" --no-env > /dev/null
dbglog attempt add "Disable CUDA graphs" --did "--enforce-eager" --result "No crash in 200 steps" -o worked > /dev/null
dbglog diff add "CUDA graphs" off on > /dev/null
dbglog bisect toggles --env FUSED_ATTN=1 --env CUDA_GRAPHS=1 --env NCCL_ALGO=Tree --env NCCL_PROTO=LL \
    -- python3 repro.py > /dev/null 2>&1 || true
dbglog report --html "$OUT/toggles.html" > /dev/null

# 2. history: a 40-commit history, the culprit at commit 27; 3. the same, failing half the time there on
mkdir "$WORK/history" && cd "$WORK/history" && git init -q && git config user.email b@e && git config user.name bench
for i in $(seq 1 40); do echo "v=$i" > f.txt; git add f.txt; git commit -qm "change $i"; done
cat > "$WORK/repro.sh" <<'SH'
#!/bin/sh
v=$(sed 's/v=//' f.txt)
[ "$v" -lt 27 ] && exit 0
[ -n "$FLAKY" ] && [ $(( $(od -An -N1 -tu1 /dev/urandom) % 2 )) = 0 ] && exit 0
echo "RuntimeError: CUDA error: an illegal memory access was encountered"; exit 1
SH
chmod +x "$WORK/repro.sh"
dbglog init > /dev/null && dbglog new "Regression between v1 and HEAD" --no-env > /dev/null
dbglog bisect git --good HEAD~39 --bad HEAD -- "$WORK/repro.sh" > /dev/null 2>&1 || true
dbglog report --html "$OUT/history.html" > /dev/null
dbglog new "Intermittent regression" --no-env > /dev/null
FLAKY=1 dbglog bisect git --good HEAD~39 --bad HEAD --flaky --any-failure -- "$WORK/repro.sh" > /dev/null 2>&1 || true
dbglog report --html "$OUT/flaky.html" > /dev/null

for page in toggles history flaky; do
    html="$OUT/$page.html"
    chromium --headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run \
        --hide-scrollbars --window-size=1100,2200 --screenshot="$OUT/$page.png" "file://$html" > /dev/null 2>&1
    ext=$(grep -Eoc '(src|href)="(https?:)?//' "$html" || true)
    svgs=$(grep -o '<svg ' "$html" | wc -l)
    drawn=$(python3 "$BENCH/png_colours.py" "$OUT/$page.png")
    echo "$page: $(wc -c < "$html") bytes, external references: $ext, inline charts: $svgs," \
         "chart pixels in the screenshot: $drawn, screenshot: $OUT/$page.png"
done
