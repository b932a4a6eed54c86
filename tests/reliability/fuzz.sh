#!/usr/bin/env bash
# fuzz.sh: run every libFuzzer target of build-fuzz/ for FUZZ_SECONDS (default
# 60) from its seed corpus in tests/fuzz/corpus/<name>, and report executions,
# time and crashes per target (tests/out/reliability-fuzz.json). New inputs go
# to a scratch corpus, the seeds stay as they are; a crash leaves its input as
# tests/out/reliability-fuzz_<name>-crash-* and the run fails.
#   tests/reliability/fuzz.sh            build-fuzz must exist, see docs/reliability.md
#   FUZZ_SECONDS=10 tests/reliability/fuzz.sh
set -u
cd "$(dirname "$0")/../.."
SECONDS_PER=${FUZZ_SECONDS:-60}
OUT=tests/out
mkdir -p "$OUT"
shopt -s nullglob
targets=(build-fuzz/fuzz_*)
if [ ${#targets[@]} = 0 ]; then
    echo "no build-fuzz/fuzz_* targets: CC=clang cmake -S . -B build-fuzz -DFUZZ=ON -DWERROR=ON -DBUILD_TESTING=OFF && cmake --build build-fuzz -j2" >&2
    exit 2
fi
json="["
sep=""
failed=0
for target in "${targets[@]}"; do
    name=$(basename "$target")
    work=$(mktemp -d)
    log="$OUT/reliability-$name.log"
    rm -f "$OUT/reliability-$name-"*
    start=$(date +%s.%N)
    "$target" -max_total_time="$SECONDS_PER" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$OUT/reliability-$name-" "$work" "tests/fuzz/corpus/${name#fuzz_}" \
        >"$log" 2>&1
    rc=$?
    end=$(date +%s.%N)
    rm -rf "$work"
    runs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\)/\1/p' "$log" | tail -1)
    [ -n "$runs" ] || runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    found=("$OUT/reliability-$name-"*)
    artifacts=${#found[@]}
    secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
    crashes=$artifacts
    [ "$rc" != 0 ] && [ "$crashes" = 0 ] && crashes=1
    [ "$crashes" = 0 ] || failed=$((failed + 1))
    printf '%-18s %10s runs in %6.1f s  cov %-6s crashes %s\n' "$name" "${runs:-0}" "$secs" "${cov:-?}" "$crashes"
    json="$json$sep{\"target\":\"$name\",\"runs\":${runs:-0},\"seconds\":$secs,\"coverage\":${cov:-0},\"crashes\":$crashes,\"exit\":$rc}"
    sep=","
done
echo "$json]" >"$OUT/reliability-fuzz.json"
echo "$(( ${#targets[@]} - failed )) passed, $failed failed"
[ "$failed" = 0 ]
