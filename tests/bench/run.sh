#!/usr/bin/env bash
# run.sh: KnowHub's throughput benchmark. Starts its own nginx + knowhub on a free
# loopback port in a temporary directory, seeds entries, and measures with wrk,
# through nginx: a static file, GET /api/health, GET /api/knowledge/{id}, both
# searches uncached (each request a new 2-4 word query over the long-text
# entries of tests/bench/longtext) and POST /api/knowledge (8 connections).
# Every measurement is repeated in interleaved rounds; it prints the median
# req/s, the median p99 latency, the errors of all rounds (non-2xx, socket
# errors and error envelopes), the answers served from the cache and the ratios
# against the targets. It prints figures and never fails on time.
#
#   tests/bench/run.sh [--quick] [--rounds N] [--duration SECONDS] [--conns "8 64 256"]
#
# Environment: KNOWHUB_THREADS and KNOWHUB_NGINX_WORKERS are passed to the stack;
# KNOWHUB_BIN measures that binary instead of building build/knowhub;
# KNOWHUB_BENCH_KEEP=1 keeps the temporary directory (logs, database).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BENCH_DIR=$ROOT/tests/bench
given_bin=${KNOWHUB_BIN:-} # stack.sh defaults it to build/knowhub
# shellcheck source=scripts/deps.sh
source "$ROOT/scripts/deps.sh"
# shellcheck source=scripts/stack.sh
source "$ROOT/scripts/stack.sh"

rounds=3
duration=5
conns="8 64 256"
create_conns=8
seed_seconds=1

usage() {
    sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    exit 2
}

while [ $# -gt 0 ]; do
    case "$1" in
    --quick) duration=1; conns="64" ;;
    --rounds) rounds=${2:?}; shift ;;
    --duration) duration=${2:?}; shift ;;
    --conns) conns=${2:?}; shift ;;
    -h | --help) usage ;;
    *) echo "run.sh: unknown option $1" >&2; usage ;;
    esac
    shift
done

deps_ensure wrk jq

# Build when the binary is missing or older than a source file (unless
# KNOWHUB_BIN names the binary to measure).
if [ -z "$given_bin" ] && { [ ! -x "$ROOT/build/knowhub" ] ||
    [ -n "$(find "$ROOT/fcgi" "$ROOT/CMakeLists.txt" -newer "$ROOT/build/knowhub" -print -quit)" ]; }; then
    echo "Building knowhub..." >&2
    if ! { [ -f "$ROOT/build/CMakeCache.txt" ] || cmake -S "$ROOT" -B "$ROOT/build" >/dev/null; } ||
        ! cmake --build "$ROOT/build" -j2 >/dev/null; then
        echo "run.sh: the build failed" >&2
        exit 1
    fi
fi

data=$(mktemp -d "${TMPDIR:-/tmp}/knowhub-bench.XXXXXX")
chmod 755 "$data"
started=0
cleanup() {
    [ "$started" = 1 ] && stack_stop "$data"
    if [ "${KNOWHUB_BENCH_KEEP:-0}" = 1 ]; then
        echo "Kept $data" >&2
    else
        rm -rf "$data"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

host=127.0.0.1
port=
for _ in $(seq 1 50); do
    candidate=$(( 20000 + RANDOM % 40000 ))
    if ! stack_port_taken "$host" "$candidate"; then
        port=$candidate
        break
    fi
done
[ -n "$port" ] || { echo "run.sh: no free port found" >&2; exit 1; }

# The benchmark writes with one token as fast as it can, into one space:
# the per-token write rate and the space's entries are off unless set.
export KNOWHUB_WRITE_RATE=${KNOWHUB_WRITE_RATE:-0} KNOWHUB_SPACE_ENTRIES=${KNOWHUB_SPACE_ENTRIES:-0}
started=1
stack_start "$data" "$host" "$port"
base=http://$host:$port
export KNOWHUB_BENCH_TOKEN
KNOWHUB_BENCH_TOKEN=$(cat "$data/admin.token")

# One wrk run; prints "REQ_PER_S P99_MS ERRORS HITS" (errors: non-2xx, socket
# errors and error envelopes; hits: answers with X-Cache: hit; counted by
# bench.lua). MODE is bench.lua's KNOWHUB_BENCH_MODE; a search draws its
# queries from class $search_stream of $search_streams (see bench.lua).
measure() { # CONNS URL [MODE] [SECONDS]
    local c=$1 url=$2 mode=${3:-} seconds=${4:-$duration} out threads=2
    [ "$c" -lt "$threads" ] && threads=$c
    out=$(KNOWHUB_BENCH_MODE=$mode KNOWHUB_BENCH_THREADS=$threads \
        KNOWHUB_BENCH_STREAM=${search_stream:-0} KNOWHUB_BENCH_STREAMS=${search_streams:-1} \
        wrk -t"$threads" -c"$c" -d"${seconds}s" --timeout 5s --latency \
        -s "$BENCH_DIR/bench.lua" "$url" 2>&1) || {
        echo "run.sh: wrk failed: $out" >&2
        echo "0 0 1 0"
        return
    }
    awk '
        function ms(v) {
            if (v ~ /us$/) return v / 1000
            if (v ~ /ms$/) return v + 0
            if (v ~ /s$/) return v * 1000
            return v + 0
        }
        /Requests\/sec:/ { rps = $2 }
        $1 == "99%" { p99 = ms($2) }
        /Socket errors:/ { gsub(",", ""); sock = $4 + $6 + $8 + $10 }
        /^bench-errors:/ {
            split($2, a, "="); split($3, b, "="); split($4, h, "=")
            env = a[2] + b[2]; hits = h[2]
        }
        END { printf "%.0f %.2f %d %d\n", rps, p99, sock + env, hits }
    ' <<<"$out"
}

median() { # NUMBERS...
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# Seed: a second of creates (also warms the stack), then pick an entry to read.
seed=$(measure "$create_conns" "$base/api/knowledge" create "$seed_seconds")
read -r _ _ seed_errors _ <<<"$seed"
page=$(curl -fsS -H "Authorization: Bearer $KNOWHUB_BENCH_TOKEN" "$base/api/knowledge?limit=1")
entry=$(sed -n 's/.*"id":"\(knowledge-[^"]*\)".*/\1/p' <<<"$page")
if [ -z "$entry" ] || [ "$seed_errors" != 0 ] ||
    ! curl -fsS -H "Authorization: Bearer $KNOWHUB_BENCH_TOKEN" "$base/api/knowledge/$entry" |
    grep -q '"status":"success"'; then
    echo "run.sh: seeding failed (errors $seed_errors, entry '$entry'); logs in $data/logs" >&2
    KNOWHUB_BENCH_KEEP=1
    exit 1
fi

# The searches' entries: every entry of the long-text benchmark (tests/bench/longtext,
# 312 entries of 1,000-2,000 characters, English and Chinese), created one by one,
# and their words for bench.lua's queries, one line per entry: its English words
# of 4-14 letters but stop words and the words that share a stem with those of
# bench.lua's created entry (so the thousands of entries created between rounds
# never match a query), and its Chinese runs of 2-4 characters between
# punctuation and function words.
export KNOWHUB_BENCH_WORDS=$data/search-words.txt
longtext=("$BENCH_DIR"/longtext/*.json)
jq -c '.entries[] | {title, scenario, content, tags, category: "experiences", agent_id: "bench-search"}' \
    "${longtext[@]}" >"$data/search-entries.jsonl"
created=0
held=()
while IFS= read -r body; do
    answer=$(curl -fsS -H "Authorization: Bearer $KNOWHUB_BENCH_TOKEN" -H "Content-Type: application/json" \
        --data-binary "$body" "$base/api/knowledge") || break
    [ "$(jq -r .status <<<"$answer")" = success ] || break
    # A write the screen holds (quarantined) is approved, so every entry is served.
    proposal=$(jq -r '.data.proposal_id // empty' <<<"$answer")
    if [ -n "$proposal" ]; then
        held+=("$(jq -r '"\(.data.status) (\(.data.reasons // [] | join(", ")))"' <<<"$answer")")
        curl -fsS -H "Authorization: Bearer $KNOWHUB_BENCH_TOKEN" -H "Content-Type: application/json" \
            --data-binary '{"decision":"approve"}' "$base/api/review/$proposal/decide" |
            grep -q '"state":"approved"' || break
    fi
    created=$(( created + 1 ))
done <"$data/search-entries.jsonl"
[ ${#held[@]} -eq 0 ] || echo "Held for review, then approved: ${#held[@]} (${held[*]})" >&2
jq -r '
    def stop: ["have", "does", "will", "would", "shall", "should", "might", "must", "could",
        "your", "them", "their", "what", "which", "whom", "this", "that", "these", "those",
        "very", "from", "into", "with", "about", "after", "before", "between", "down",
        "during", "each", "more", "most", "other", "some", "such", "than", "then", "when",
        "where", "both", "every", "here", "there", "just", "only", "also", "over", "same",
        "show", "find", "help", "want", "need", "please", "like", "using", "used", "been",
        "being", "were", "whose", "whats", "didn", "doesn", "wasn", "weren", "aren", "hasn",
        "haven", "hadn", "wouldn", "couldn", "shouldn"];
    .entries[]
    | ([.title, .scenario, .content] + .tags | join(" ")) as $text
    | [$text | ascii_downcase | scan("[a-z]+") | select(length >= 4 and length <= 14)
       | select(. as $w | stop | index([$w]) | not)
       | select(test("^(bench|creat|entr|short|paragraph|siz|typic|experi|tool|agent)") | not)]
      + [$text
         | gsub("(帮我|请问|一下|什么|怎么|如何|我们|你们|他们|这个|那个|[的了和是在请我你他她它吗呢吧啊与及或把被给也都就又还之其])"; " ")
         | scan("\\p{Han}+") | select(length >= 2 and length <= 4)]
    | unique | join(" ")' "${longtext[@]}" >"$KNOWHUB_BENCH_WORDS"
wanted=$(wc -l <"$data/search-entries.jsonl")
if [ "$created" != "$wanted" ] || [ "$created" = 0 ]; then
    echo "run.sh: seeding the search entries failed ($created of $wanted); logs in $data/logs" >&2
    KNOWHUB_BENCH_KEEP=1
    exit 1
fi
page=$(curl -fsS -H "Authorization: Bearer $KNOWHUB_BENCH_TOKEN" "$base/api/knowledge?limit=1")
echo "Seeded $(sed -n 's/.*"total":\([0-9]*\).*/\1/p' <<<"$page") entries ($created for the searches," \
    "$(wc -w <"$KNOWHUB_BENCH_WORDS") words); reading $entry" >&2

# The measurements: NAME|CONNS|URL|MODE, run once per round, rounds interleaved.
plan=()
for c in $conns; do
    plan+=("static|$c|$base/index.html|")
    plan+=("health|$c|$base/api/health|")
    plan+=("knowledge|$c|$base/api/knowledge/$entry|")
    plan+=("search|$c|$base/api/knowledge/search|search-entry")
    plan+=("files|$c|$base/api/knowledge/search|search-file")
done
plan+=("create|$create_conns|$base/api/knowledge|create")

# Each search measurement of the run draws its queries from its own class
# (bench.lua), so no query is asked twice in the whole run: none is answered
# from the cache, even by a thread that answered it before the next commit.
search_stream=0
search_streams=$(( rounds * 2 * $(wc -w <<<"$conns") ))

declare -A rps p99 errors hits
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq 1 "$rounds"); do
    for item in "${plan[@]}"; do
        IFS='|' read -r name c url mode <<<"$item"
        read -r r p e h <<<"$(measure "$c" "$url" "$mode")"
        [[ $mode == search-* ]] && search_stream=$(( search_stream + 1 ))
        rps[$name:$c]="${rps[$name:$c]:-} $r"
        p99[$name:$c]="${p99[$name:$c]:-} $p"
        errors[$name:$c]=$(( ${errors[$name:$c]:-0} + e ))
        hits[$name:$c]=$(( ${hits[$name:$c]:-0} + h ))
        printf 'round %d/%d  %-9s c=%-4s %8s req/s  p99 %7s ms  errors %s  cache hits %s\n' \
            "$round" "$rounds" "$name" "$c" "$r" "$p" "$e" "$h" >&2
    done
done

label() {
    case "$1" in
    static) echo "static /index.html" ;;
    health) echo "GET /api/health" ;;
    knowledge) echo "GET /api/knowledge/{id}" ;;
    search) echo "GET search (entry view)" ;;
    files) echo "POST search (file view)" ;;
    create) echo "POST /api/knowledge" ;;
    esac
}

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A med
echo
echo "KnowHub bench: $(nproc) cores, $rounds interleaved rounds x ${duration}s per figure," \
    "knowhub threads ${KNOWHUB_THREADS:-$(( 2 * $(nproc) )) (default)}, nginx workers ${KNOWHUB_NGINX_WORKERS:-2}," \
    "rev $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)${given_bin:+, binary $given_bin}"
echo "load average before: $load_before, after: $load_after (other work on the machine)"
printf '%-26s %6s %12s %12s %8s %11s\n' "endpoint" "conns" "req/s (med)" "p99 ms (med)" "errors" \
    "cache hits"
for item in "${plan[@]}"; do
    IFS='|' read -r name c _ _ <<<"$item"
    # shellcheck disable=SC2086
    med[$name:$c]=$(median ${rps[$name:$c]})
    # shellcheck disable=SC2086
    printf '%-26s %6s %12s %12s %8s %11s\n' "$(label "$name")" "$c" "${med[$name:$c]}" \
        "$(median ${p99[$name:$c]})" "${errors[$name:$c]}" "${hits[$name:$c]}"
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

# The median of the per-round ratios: each pair was measured seconds apart,
# so it is less exposed to other load on the machine than the ratio of medians.
paired_ratio() { # NUMERATORS DENOMINATORS (space-separated, in round order)
    local -a a b r=()
    read -r -a a <<<"$1"
    read -r -a b <<<"$2"
    for i in "${!a[@]}"; do r+=("$(ratio "${a[$i]}" "${b[$i]}")"); done
    median "${r[@]}"
}

echo
printf '%-26s %6s %17s %14s %24s\n' "ratios of the medians" "conns" "knowledge/health" \
    "health/static" "(median of round ratios)"
worst=
for c in $conns; do
    kh=$(ratio "${med[knowledge:$c]}" "${med[health:$c]}")
    printf '%-26s %6s %17s %14s %12s / %-11s\n' "" "$c" "$kh" \
        "$(ratio "${med[health:$c]}" "${med[static:$c]}")" \
        "$(paired_ratio "${rps[knowledge:$c]}" "${rps[health:$c]}")" \
        "$(paired_ratio "${rps[health:$c]}" "${rps[static:$c]}")"
    if [ -z "$worst" ] || awk -v a="$kh" -v b="$worst" 'BEGIN { exit !(a < b) }'; then
        worst=$kh
    fi
done

# Uncached searches against health, same run: entry view (GET) and file view (POST).
lower() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a + 0 < b + 0) ? a : b }'; }
echo
printf '%-26s %6s %17s %17s %24s\n' "search (uncached)" "conns" "entry view/health" \
    "file view/health" "(median of round ratios)"
search_worst=
search_hits=0
for c in $conns; do
    se=$(ratio "${med[search:$c]}" "${med[health:$c]}")
    sf=$(ratio "${med[files:$c]}" "${med[health:$c]}")
    printf '%-26s %6s %17s %17s %12s / %-11s\n' "" "$c" "$se" "$sf" \
        "$(paired_ratio "${rps[search:$c]}" "${rps[health:$c]}")" \
        "$(paired_ratio "${rps[files:$c]}" "${rps[health:$c]}")"
    search_worst=$(lower "$(lower "$se" "$search_worst")" "$sf")
    search_hits=$(( search_hits + ${hits[search:$c]} + ${hits[files:$c]} ))
done

met() { if [ "$1" = 1 ]; then echo "met"; else echo "NOT met"; fi; }
echo
echo "targets"
printf '  GET /api/knowledge/{id} >= 0.70 x /api/health (lowest ratio %s): %s\n' "$worst" \
    "$(met "$(awk -v a="$worst" 'BEGIN { print (a >= 0.70) ? 1 : 0 }')")"
ce=${errors[create:$create_conns]}
cr=${med[create:$create_conns]}
printf '  POST /api/knowledge >= 1000/s at %d connections, 0 errors (%s/s, %s errors): %s\n' \
    "$create_conns" "$cr" "$ce" "$(met "$([ "$cr" -ge 1000 ] && [ "$ce" = 0 ] && echo 1)")"
printf '  both searches uncached >= 0.30 x /api/health (lowest ratio %s, %s cache hits): %s\n' \
    "$search_worst" "$search_hits" \
    "$(met "$(awk -v a="$search_worst" -v h="$search_hits" 'BEGIN { print (a >= 0.30 && h == 0) ? 1 : 0 }')")"
