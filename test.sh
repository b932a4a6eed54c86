#!/usr/bin/env bash
# test.sh: install what is missing, build, and run every test layer:
# unit tests (ctest), HTTP black-box tests through real nginx + knowhub, and
# a bounded run of every libFuzzer target. Ends with "N passed, N failed" and
# exits non-zero on any failure.
#   SANITIZE=1 ./test.sh     unit and HTTP tests on an ASan + UBSan build (build-sanitize/)
#   FUZZ_SECONDS=60 ./test.sh  longer fuzzing (0 skips it)
set -u
cd "$(dirname "$0")"
ROOT=$(pwd)
. scripts/deps.sh

deps_ensure || exit 1
command -v node >/dev/null || deps_ensure nodejs || exit 1

BUILD=build
CMAKE_ARGS=(-DWERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo)
if [ "${SANITIZE:-0}" = 1 ]; then
    BUILD=build-sanitize
    CMAKE_ARGS+=(-DSANITIZE=ON)
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi

echo "== build ($BUILD)"
cmake -S . -B "$BUILD" "${CMAKE_ARGS[@]}" >/dev/null &&
    cmake --build "$BUILD" -j"$(nproc)" 2>&1 | grep -E 'error|warning|Error' ; 
[ "${PIPESTATUS[0]}" = 0 ] || { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }

passed=0
failed=0
OUT=$ROOT/tests/out
mkdir -p "$OUT"

echo "== unit tests (ctest)"
(cd "$BUILD" && ctest --output-on-failure) > "$OUT/unit.log" 2>&1
unit_rc=$?
tail -3 "$OUT/unit.log"
u_total=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\2/p' "$OUT/unit.log")
u_failed=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\1/p' "$OUT/unit.log")
if [ -z "$u_total" ]; then
    u_total=1; u_failed=1
    cat "$OUT/unit.log"
elif [ "$unit_rc" != 0 ]; then
    grep -E 'Failed|FAIL|\*\*\*' "$OUT/unit.log" | head -20
fi
passed=$((passed + u_total - u_failed))
failed=$((failed + u_failed))

# Run one node --test suite and add its "# pass N" / "# fail N" to the totals.
node_stage() { # NAME DIR
    local name=$1 dir=$2 rc p f
    node --test --test-concurrency=1 "$dir" > "$OUT/$name.log" 2>&1
    rc=$?
    p=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$OUT/$name.log" | tail -1)
    f=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$OUT/$name.log" | tail -1)
    if [ -z "$p" ]; then
        p=0; f=1
        tail -40 "$OUT/$name.log"
    elif [ "$rc" != 0 ]; then
        grep -B2 -A20 '^not ok' "$OUT/$name.log" | head -80
        [ "${f:-0}" = 0 ] && f=1
    fi
    echo "$name: $p passed, $f failed"
    passed=$((passed + p))
    failed=$((failed + f))
}

# Install a suite's npm dependencies (from its package-lock.json) when missing.
npm_ready() { # DIR
    [ -d "$1/node_modules" ] && return 0
    { command -v npm >/dev/null || deps_ensure npm; } &&
        (cd "$1" && npm ci --no-audit --no-fund --loglevel=error) > "$OUT/$(basename "$1")-npm.log" 2>&1
}

export KNOWHUB_BIN=$ROOT/$BUILD/knowhub

echo "== HTTP tests (node --test, real nginx + knowhub)"
node_stage http tests/http/

echo "== MCP tests (the official MCP TypeScript SDK client)"
if npm_ready tests/mcp; then
    node_stage mcp tests/mcp/
else
    echo "mcp: the SDK could not be installed (see $OUT/mcp-npm.log)"
    failed=$((failed + 1))
fi

if [ -d tests/reliability ]; then
    echo "== reliability tests (isolation, load, crash, disk full, hostile input)"
    node_stage reliability tests/reliability/
fi

echo "== browser tests (Debian chromium + playwright-core)"
if deps_ensure chromium fonts-wqy-zenhei && npm_ready tests/e2e; then
    node_stage browser tests/e2e/
    echo "  screenshots: tests/out/screenshots/"
else
    echo "browser: chromium or playwright-core could not be installed (see $OUT/e2e-npm.log)"
    failed=$((failed + 1))
fi

if [ "${FUZZ_SECONDS:-10}" != 0 ]; then
    echo "== fuzz (libFuzzer, ${FUZZ_SECONDS:-10} s per target)"
    if deps_ensure clang libclang-rt-14-dev &&
        CC=clang cmake -S . -B build-fuzz -DFUZZ=ON -DWERROR=ON -DBUILD_TESTING=OFF >/dev/null &&
        cmake --build build-fuzz -j"$(nproc)" >"$OUT/fuzz-build.log" 2>&1; then
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
            if [ "$rc" = 0 ]; then
                echo "  $name: ok ($runs)"
                passed=$((passed + 1))
            else
                echo "  $name: FAILED (see $OUT/$name.log and $OUT/$name-crash-*)"
                grep -E 'ERROR|SUMMARY|runtime error' "$OUT/$name.log" | head -5
                failed=$((failed + 1))
            fi
        done
    else
        echo "  fuzz targets did not build (see $OUT/fuzz-build.log)"
        failed=$((failed + 1))
    fi
fi

echo
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
