#!/usr/bin/env bash
# compare.sh: two builds of KnowHub measured in the same run, interleaved, so a
# restructuring can show it kept the speed. Each pair runs tests/bench/run.sh
# (one round: wrk through nginx) and bench_search (in-process searches) once
# for each build, the order swapped every pair (old new, new old, ...) so a
# drift of the machine's load falls on both. Prints, per figure, the median of
# each build and the median of the per-pair ratios new/old: 1.00 is the same
# speed, above 1 the new build is faster (req/s) or slower (latency). It
# prints figures and never fails on time.
#
#   tests/bench/compare.sh OLD_BUILD_DIR NEW_BUILD_DIR [--pairs N] [--entries N] [--duration S] [--conns "8 64"]
#
# A build directory holds knowhub and bench_search (cmake --build DIR). The
# defaults: 5 pairs, bench_search at 10000 entries, run.sh at 3 s per figure
# with 8 and 64 connections.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
usage() {
    sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    exit 2
}
[ $# -ge 2 ] || usage
old=$(cd "$1" && pwd)
new=$(cd "$2" && pwd)
shift 2
pairs=5
entries=10000
duration=3
conns="8 64"
while [ $# -gt 0 ]; do
    case "$1" in
    --pairs) pairs=${2:?}; shift ;;
    --entries) entries=${2:?}; shift ;;
    --duration) duration=${2:?}; shift ;;
    --conns) conns=${2:?}; shift ;;
    *) usage ;;
    esac
    shift
done
for b in "$old" "$new"; do
    for f in knowhub bench_search; do
        [ -x "$b/$f" ] || { echo "compare.sh: $b/$f is missing (cmake --build $b)" >&2; exit 1; }
    done
done

out=$(mktemp -d "${TMPDIR:-/tmp}/knowhub-compare.XXXXXX")
trap 'rm -rf "$out"' EXIT

# One measurement of a build: lines "FIGURE VALUE" in $out/NAME.PAIR.
measure() { # NAME BUILD_DIR PAIR
    local name=$1.$3 dir=$2
    KNOWHUB_BIN=$dir/knowhub "$ROOT/tests/bench/run.sh" --rounds 1 --duration "$duration" \
        --conns "$conns" 2>/dev/null |
        awk '
            /^(static \/index.html|GET \/api\/health|GET \/api\/knowledge\/\{id\}|POST \/api\/knowledge|GET search|POST search) / {
                # label..., conns, req/s, p99 ms, errors, cache hits
                n = split($0, f, / +/)
                label = f[1]; for (i = 2; i <= n - 5; i++) label = label "_" f[i]
                printf "%s@%s_req/s %s\n%s@%s_p99_ms %s\n", label, f[n-4], f[n-3], label, f[n-4], f[n-2]
            }' >>"$out/$name"
    "$dir/bench_search" --rounds 3 "$entries" 2>/dev/null |
        awk '
            /wall: median/ {
                match($0, /cpu: median +[0-9.]+/); v = substr($0, RSTART, RLENGTH); sub(/.* /, "", v)
                printf "%s_cpu_median_us %s\n", $1, v
            }
            /built in/ { match($0, /\( *[0-9]+ entries/); v = substr($0, RSTART + 1, RLENGTH - 9)
                gsub(/ /, "", v); printf "bench_search_build_entries/s %s\n", v }' >>"$out/$name"
}

for i in $(seq 1 "$pairs"); do
    if [ $((i % 2)) = 1 ]; then
        measure old "$old" "$i"; measure new "$new" "$i"
    else
        measure new "$new" "$i"; measure old "$old" "$i"
    fi
    echo "pair $i/$pairs done" >&2
done

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "n/a" }'; }

echo "KnowHub compare: $pairs interleaved pairs, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "old: $old"
echo "new: $new"
printf '%-46s %12s %12s %18s\n' "figure" "old (med)" "new (med)" "new/old (paired)"
value() { awk -v f="$1" '$1 == f { print $2 }' "$2"; }
for fig in $(cat "$out"/old.* | awk '!seen[$1]++ { print $1 }'); do
    o=$(cat "$out"/old.* | awk -v f="$fig" '$1 == f { print $2 }')
    n=$(cat "$out"/new.* | awk -v f="$fig" '$1 == f { print $2 }')
    # A pair counts only when both builds gave the figure in it.
    r=$(for i in $(seq 1 "$pairs"); do
        a=$(value "$fig" "$out/old.$i"); b=$(value "$fig" "$out/new.$i")
        [ -n "$a" ] && [ -n "$b" ] && awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0) printf "%.3f\n", b / a }'
    done | median)
    printf '%-46s %12s %12s %18s\n' "$fig" "$(echo "$o" | median)" "$(echo "$n" | median)" "$r"
done
