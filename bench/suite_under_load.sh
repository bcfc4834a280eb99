#!/usr/bin/env bash
# The test suite under load: RUNS (default 3) runs of the README's test command beside HOGS (default 8)
# busy processes on 2 cores (pinned to cores 0-1 where the machine has more), each run's pass/fail, time
# and load average. The suite must pass every time: a test that waits for a wall-clock window the load
# stretches, instead of for an event, shows up here.
#
#   bench/suite_under_load.sh                   # 3 runs, 8 hogs
#   RUNS=1 HOGS=12 bench/suite_under_load.sh -k signals   # extra arguments go to pytest
#
# Not part of the suite. On a shared machine run it niced (`nice -n 10 bench/suite_under_load.sh`): the
# hogs and the suite inherit the same niceness, so the load they put on each other is unchanged.
set -u
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
HOGS=${HOGS:-8}
PY=${PYTHON:-python}

pin=()
if command -v taskset > /dev/null && [ "$(nproc)" -gt 2 ]; then
    pin=(taskset -c 0,1)
fi

hogs=()
stop_hogs() { [ ${#hogs[@]} -gt 0 ] && kill "${hogs[@]}" 2> /dev/null; wait 2> /dev/null; }
trap stop_hogs EXIT
trap 'exit 130' INT TERM
for _ in $(seq "$HOGS"); do
    "${pin[@]}" sh -c 'while :; do :; done' &
    hogs+=($!)
done
sleep 5  # (let the load average show the hogs before the first run)

echo "suite under load: $RUNS run(s), $HOGS busy processes on 2 cores, $(nproc) core(s) on this machine"
printf '%-4s %-6s %9s %8s  %s\n' run result seconds load1 summary
failed=0
for run in $(seq "$RUNS"); do
    log=$(mktemp)
    start=$(date +%s.%N)
    "${pin[@]}" "$PY" -m pytest -q -rfE -p no:cacheprovider "$@" > "$log" 2>&1
    rc=$?
    end=$(date +%s.%N)
    load=$(cut -d' ' -f1 /proc/loadavg)
    summary=$(grep -E '[0-9]+ (passed|failed|errors?)' "$log" | tail -1 | tr -d '=')
    [ -n "$summary" ] || summary=$(tail -1 "$log")  # (no pytest summary: say what stopped it)
    result=pass
    if [ "$rc" -ne 0 ]; then
        result=FAIL
        failed=$((failed + 1))
    fi
    printf '%-4s %-6s %9.1f %8s  %s\n' "$run" "$result" "$(echo "$end - $start" | bc)" "$load" "$summary"
    if [ "$rc" -ne 0 ]; then
        grep -E '^(FAILED|ERROR) ' "$log" | sed 's/^/     /'
    fi
    rm -f "$log"
done
echo "passed $((RUNS - failed)) of $RUNS run(s)"
[ "$failed" -eq 0 ]
