#!/usr/bin/env bash
# test.sh: install what is missing, build, and run every test layer: unit
# tests (ctest), the floors of fcgi/ (tests/arch), HTTP black-box tests
# through real nginx + knowhub (on SQLite, then again on PostgreSQL), the MCP
# SDK tests, every shell example of the docs (tests/docs), the reliability
# tests, the browser tests, the Debian package
# (tests/package/package.sh), the unit and HTTP
# tests again on an ASan + UBSan build, the threaded ones on a ThreadSanitizer
# build, and a bounded run of every libFuzzer target. Each stage prints its runs and skips (scripts/stage.sh: a skip not in
# tests/skips.allow, or fewer tests than tests/floors.txt, fails it). Ends with
# "N passed, N failed, N skipped" (runs) and the distinct tests per layer;
# exits non-zero on any failure.
#   SANITIZE_STAGE=0 ./test.sh   skip the ASan + UBSan stage
#   TSAN_STAGE=0 ./test.sh       skip the ThreadSanitizer stage
#   FUZZ_SECONDS=60 ./test.sh    longer fuzzing (0 skips it)
set -u
cd "$(dirname "$0")"
ROOT=$(pwd)
. scripts/deps.sh
. scripts/stage.sh

deps_ensure || exit 1
command -v node >/dev/null || deps_ensure nodejs || exit 1
# shellcheck disable=SC2086
command -v promtool >/dev/null || deps_ensure $DEPS_TEST ||
    echo "promtool is missing: the metrics test skips its promtool check"
# The second HTTP pass needs a PostgreSQL server (scripts/pgcluster.sh): not optional.
pg_deps=ok
deps_ensure postgresql || pg_deps=missing

OUT=$ROOT/tests/out
mkdir -p "$OUT"
stage_init "$OUT"

# Configure and build one tree; on failure show the errors.
build_tree() { # DIR CMAKE_ARGS...
    local dir=$1
    shift
    echo "== build ($dir)"
    if ! cmake -S . -B "$dir" -DWERROR=ON "$@" > "$OUT/$dir-cmake.log" 2>&1 ||
        ! cmake --build "$dir" -j"$(nproc)" > "$OUT/$dir-build.log" 2>&1; then
        grep -hE 'error|Error' "$OUT/$dir-cmake.log" "$OUT/$dir-build.log" | head -20
        echo "$dir: the build failed"
        return 1
    fi
}

build_tree build -DCMAKE_BUILD_TYPE=RelWithDebInfo || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }

echo "== harness (tests/harness: this script's stage counts, floors and allowed skips)"
node_stage harness tests/harness/

unit_stage build

echo "== format (clang-format, .clang-format)"
if deps_ensure clang-format &&
    clang-format --dry-run --Werror fcgi/*/*.[ch] tests/unit/*.[ch] tests/fuzz/*.c tests/bench/*.c tests/conflict/*.c \
        > "$OUT/format.log" 2>&1; then
    stage_report format 1 0
else
    head -20 "$OUT/format.log"
    echo "  run: clang-format -i fcgi/*/*.[ch] tests/unit/*.[ch] ..."
    stage_report format 0 1
fi

# Install a suite's npm dependencies (from its package-lock.json) when missing.
npm_ready() { # DIR
    [ -d "$1/node_modules" ] && return 0
    { command -v npm >/dev/null || deps_ensure npm; } &&
        (cd "$1" && npm ci --no-audit --no-fund --loglevel=error) > "$OUT/$(basename "$1")-npm.log" 2>&1
}

export KNOWHUB_BIN=$ROOT/build/knowhub

echo "== architecture (tests/arch: the floors of fcgi/, from includes and objects)"
KNOWHUB_OBJECTS=$ROOT/build/CMakeFiles/knowhub_core.dir/fcgi node_stage architecture tests/arch/

echo "== HTTP tests (node --test, real nginx + knowhub)"
node_stage http tests/http/

# The same HTTP suite on PostgreSQL: one throwaway cluster (unix socket only,
# scripts/pgcluster.sh), a fresh database per stack (tests/http/lib/stack.mjs
# reads KNOWHUB_TEST_PG). The cluster is stopped and removed however this ends.
echo "== HTTP tests on PostgreSQL (the same suite, each stack on its own database)"
PG_DIR=
pg_cleanup() {
    [ -n "$PG_DIR" ] && scripts/pgcluster.sh stop "$PG_DIR"
    PG_DIR=
}
# A node_stage on a throwaway cluster of its own, stopped however it ends.
pg_node_stage() { # NAME FILE...
    local name=$1
    shift
    PG_DIR=$(mktemp -d /tmp/knowhub-pg.XXXXXX)
    trap pg_cleanup EXIT
    if scripts/pgcluster.sh start "$PG_DIR"; then
        KNOWHUB_TEST_PG=$PG_DIR/sock node_stage "$name" "$@"
    else
        stage_fail "$name" "the throwaway PostgreSQL cluster did not start"
    fi
    pg_cleanup
    trap - EXIT
}
if [ "$pg_deps" != ok ]; then
    stage_fail http-postgresql "PostgreSQL could not be installed (apt-get install postgresql): the PostgreSQL pass did not run"
else
    # fcgi/store/pg_sql.c against a cluster of its own: the schema, every
    # statement's parameters and columns, the triggers, the checks.
    bash tests/pg/sql_check.sh > "$OUT/pg-sql.log" 2>&1
    p=$(grep -c '^ok ' "$OUT/pg-sql.log")
    f=$(grep -c '^FAIL ' "$OUT/pg-sql.log")
    if ! grep -q '^PASS ' "$OUT/pg-sql.log"; then
        grep '^FAIL ' "$OUT/pg-sql.log" | head -20
        [ "$f" = 0 ] && f=1
    fi
    stage_shell_skips tests/pg/sql_check.sh "$OUT/pg-sql.log" > "$STAGE_DIR/pg-sql.skips"
    stage_report pg-sql "$p" "$f" "$STAGE_DIR/pg-sql.skips"
    trap pg_cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    PG_DIR=$(mktemp -d /tmp/knowhub-pg.XXXXXX)
    started=$(date +%s.%N)
    if scripts/pgcluster.sh start "$PG_DIR"; then
        echo "  cluster $PG_DIR/sock up in $(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
        KNOWHUB_TEST_PG=$PG_DIR/sock node_stage http-postgresql tests/http/
    else
        stage_fail http-postgresql "the throwaway PostgreSQL cluster did not start"
    fi
    pg_cleanup
    trap - EXIT INT TERM
fi

echo "== MCP tests (the official MCP TypeScript SDK client)"
if npm_ready tests/mcp; then
    node_stage mcp tests/mcp/
    # The live updates across two nodes, the resources and the budgets on
    # PostgreSQL: a cluster of their own.
    if [ "$pg_deps" = ok ]; then
        pg_node_stage mcp-postgresql tests/mcp/live.test.mjs tests/mcp/resources.test.mjs \
            tests/mcp/budget.test.mjs
    else
        stage_fail mcp-postgresql "PostgreSQL could not be installed: the MCP tests on PostgreSQL did not run"
    fi
else
    stage_fail mcp "the SDK could not be installed (see $OUT/mcp-npm.log)"
fi

echo "== token estimator (tests/tokens: fcgi/domain/tokcount.c against gpt-tokenizer's o200k_base)"
if npm_ready tests/tokens; then
    node_stage tokens tests/tokens/
else
    stage_fail tokens "gpt-tokenizer could not be installed (see $OUT/tokens-npm.log)"
fi

# The poisoning screen's benchmark (tests/fixtures/screen): >= 95% of the
# injections caught, <= 2% of the benign texts flagged, the rates printed.
echo "== screen (tests/screen: fcgi/domain/screen.c on the injection and benign texts)"
node_stage screen tests/screen/
grep -E '^# (injections caught|benign flagged|other benign|  (instruction_override|role_tag|exfiltration|hidden_text|heldout|blind))' \
    "$OUT/screen.log" | sed 's/^# /  /'

# The local contradiction detector's benchmark (tests/conflict/pairs.jsonl):
# every pair gets a verdict; the figures per split are printed, never judged.
echo "== conflict (tests/conflict: fcgi/domain/conflict.c on the labelled pairs)"
node_stage conflict tests/conflict/
grep -E '^# (dev|heldout|overall): |^# heldout contradiction' "$OUT/conflict.log" | sed 's/^# /  /'

echo "== OpenAPI (docs/openapi.yaml: the route table, an OpenAPI 3.1 validator, live answers)"
if npm_ready tests/openapi; then
    node_stage openapi tests/openapi/
else
    stage_fail openapi "the validator could not be installed (see $OUT/openapi-npm.log)"
fi

# Every ```sh example of README.md and docs/*.md, as written, on a fresh stack
# (tests/docs/examples.test.mjs; jq is in DEPS_BUILD: the examples use it).
echo "== docs as tests (every shell example of README.md and docs/, on a fresh stack)"
node_stage docs tests/docs/

if [ -d tests/reliability ]; then
    echo "== reliability tests (isolation, load, crash, disk full, hostile input)"
    node_stage reliability tests/reliability/
    # Their figures (throughput, p99, crash repetitions ...), also in tests/out/reliability-*.json.
    grep -E '^# \\# (load|crash|disk full|isolation|bad input|memory)' "$OUT/reliability.log" | sed 's/^# \\# /  /'
fi

echo "== browser tests (Debian chromium + playwright-core)"
if deps_ensure chromium fonts-wqy-zenhei && npm_ready tests/e2e; then
    node_stage browser tests/e2e/
    echo "  screenshots: tests/out/screenshots/"
else
    stage_fail browser "chromium or playwright-core could not be installed (see $OUT/e2e-npm.log)"
fi

# --- package (issue 16): build the .deb and inspect it: files and modes,
# control fields, maintainer scripts, systemd-analyze verify on the unit,
# nginx -t on the site, the unpacked binary live behind the packaged site,
# the manual page (groff-base and man-db render it).
echo "== package (tests/package/package.sh: the .deb, its unit and nginx site)"
if deps_ensure systemd logrotate groff-base man-db; then
    tests/package/package.sh build > "$OUT/package.log" 2>&1
    rc=$?
    p=$(sed -n 's/^package: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$OUT/package.log")
    f=$(sed -n 's/^package: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$OUT/package.log")
    if [ -z "$p" ]; then
        p=0; f=1
        tail -20 "$OUT/package.log"
    elif [ "$rc" != 0 ]; then
        grep -A8 '^FAIL' "$OUT/package.log" | head -40
        [ "$f" = 0 ] && f=1
    fi
    stage_shell_skips tests/package/package.sh "$OUT/package.log" > "$STAGE_DIR/package.skips"
    stage_report package "$p" "$f" "$STAGE_DIR/package.skips"
else
    stage_fail package "systemd (systemd-analyze), logrotate, groff-base or man-db could not be installed"
fi
# --- end package

if [ "${SANITIZE_STAGE:-1}" != 0 ]; then
    # The same unit and HTTP tests on an ASan + UBSan build: a leak, an
    # overflow or undefined behaviour fails them (the HTTP stacks check
    # knowhub's log for sanitizer reports when they stop).
    if build_tree build-sanitize -DCMAKE_BUILD_TYPE=Debug -DSANITIZE=ON; then
        export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
        export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
        unit_stage build-sanitize
        echo "== HTTP tests on the sanitizer build"
        export KNOWHUB_BIN=$ROOT/build-sanitize/knowhub
        node_stage http-sanitize tests/http/
        # The PostgreSQL side of the store under the sanitizers: the files that
        # drive it hardest (search terms, scans in pages, locks, the copy, the
        # shared embed queue, every write of an entry).
        if [ "$pg_deps" = ok ]; then
            echo "== HTTP tests on PostgreSQL on the sanitizer build (the store's PostgreSQL side)"
            pg_node_stage http-postgresql-sanitize \
                tests/http/search_parity.test.mjs tests/http/scan_pages.test.mjs \
                tests/http/pg_locks.test.mjs tests/http/migrate_to.test.mjs \
                tests/http/twonode_embed.test.mjs tests/http/knowledge.test.mjs \
                tests/http/files.test.mjs tests/http/feedback.test.mjs
        fi
        export KNOWHUB_BIN=$ROOT/build/knowhub
        unset ASAN_OPTIONS UBSAN_OPTIONS
    else
        failed=$((failed + 1)) # build_tree said why
    fi
fi

if [ "${TSAN_STAGE:-1}" != 0 ]; then
    # ThreadSanitizer over the tests that drive knowhub's threads hardest: the
    # concurrent writers, the answer cache, the vector index and the embed
    # queue, and two nodes on PostgreSQL. A race report in a knowhub log fails
    # its test file when the stack stops (BUG_RE of tests/http/lib/stack.mjs).
    if build_tree build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTSAN=ON -DBUILD_TESTING=OFF; then
        export TSAN_OPTIONS=halt_on_error=0:second_deadlock_stack=1
        export KNOWHUB_BIN=$ROOT/build-tsan/knowhub
        echo "== HTTP tests on the ThreadSanitizer build"
        node_stage http-tsan tests/http/concurrency.test.mjs tests/http/cache.test.mjs \
            tests/http/embeddings.test.mjs tests/http/jobs_fair.test.mjs
        if [ "$pg_deps" = ok ]; then
            pg_node_stage http-postgresql-tsan tests/http/twonode.test.mjs \
                tests/http/twonode_embed.test.mjs
        fi
        export KNOWHUB_BIN=$ROOT/build/knowhub
        unset TSAN_OPTIONS
    else
        failed=$((failed + 1)) # build_tree said why
    fi
fi

if [ "${FUZZ_SECONDS:-10}" != 0 ]; then
    echo "== fuzz (libFuzzer, ${FUZZ_SECONDS:-10} s per target)"
    if deps_ensure clang libclang-rt-14-dev &&
        CC=clang cmake -S . -B build-fuzz -DFUZZ=ON -DWERROR=ON -DBUILD_TESTING=OFF >/dev/null &&
        cmake --build build-fuzz -j"$(nproc)" >"$OUT/fuzz-build.log" 2>&1; then
        p=0
        f=0
        : > "$STAGE_DIR/fuzz.ids"
        for target in build-fuzz/fuzz_*; do
            name=$(basename "$target")
            work=$(mktemp -d)
            # New inputs go to a scratch corpus; the seeds in tests/fuzz/corpus stay as they are.
            "$target" -max_total_time="${FUZZ_SECONDS:-10}" -timeout=10 -rss_limit_mb=2048 \
                -artifact_prefix="$OUT/$name-" "$work" "tests/fuzz/corpus/${name#fuzz_}" \
                > "$OUT/$name.log" 2>&1
            rc=$?
            runs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 runs in \2 s/p' "$OUT/$name.log")
            rm -rf "$work"
            echo "$name" >> "$STAGE_DIR/fuzz.ids"
            if [ "$rc" = 0 ]; then
                echo "  $name: ok ($runs)"
                p=$((p + 1))
            else
                echo "  $name: FAILED (see $OUT/$name.log and $OUT/$name-crash-*)"
                grep -E 'ERROR|SUMMARY|runtime error' "$OUT/$name.log" | head -5
                f=$((f + 1))
            fi
        done
        stage_report fuzz "$p" "$f" "" "$STAGE_DIR/fuzz.ids"
    else
        stage_fail fuzz "the fuzz targets did not build (see $OUT/fuzz-build.log)"
    fi
fi

stage_summary
