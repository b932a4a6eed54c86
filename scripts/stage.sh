#!/usr/bin/env bash
# stage.sh: the bookkeeping of test.sh's stages; sourced by test.sh, tested by
# tests/harness/stage.test.mjs. Every stage ends in stage_report, which prints
# "NAME: N passed, N failed, N skipped" and each skip with its reason, fails
# the stage on a skip not listed in tests/skips.allow and on fewer tests than
# its floor in tests/floors.txt (1 when not listed), and keeps the ids of its
# tests for the count of distinct tests per layer in stage_summary.
#   stage_init OUT_DIR                       before the first stage
#   node_stage NAME DIR|FILE...              node --test with tests/lib/summary-reporter.mjs
#   unit_stage DIR                           ctest in DIR, reported as unit-DIR
#   stage_report NAME PASSED FAILED [SKIPS [IDS]]  any other stage (SKIPS: lines
#                                            FILE<tab>NAME<tab>REASON; IDS: one test id a line)
#   stage_shell_skips FILE LOG > SKIPS       the "skip  WHAT (WHY)" lines of a shell stage
#   stage_fail NAME MESSAGE                  a stage that could not run
#   stage_summary                            the last lines; fails when anything failed
# STAGE_FLOORS and STAGE_ALLOW name other floor and allow-list files.
set -u

STAGE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STAGE_FLOORS=${STAGE_FLOORS:-$STAGE_ROOT/tests/floors.txt}
STAGE_ALLOW=${STAGE_ALLOW:-$STAGE_ROOT/tests/skips.allow}

stage_init() { # OUT_DIR
    OUT=$1
    STAGE_DIR=$OUT/stages
    rm -rf "$STAGE_DIR"
    mkdir -p "$STAGE_DIR"
    : > "$STAGE_DIR/layers"
    passed=0
    failed=0
    skipped=0
}

# The layer a stage belongs to: its tests are counted once in the distinct line.
stage_layer() { # NAME
    case $1 in
    http | http-*) echo http ;;
    unit-*) echo unit ;;
    architecture) echo arch ;;
    *) echo "$1" ;;
    esac
}

# The floor of a stage: "NAME MIN" in $STAGE_FLOORS, else 1.
stage_floor() { # NAME
    local floor
    floor=$(awk -v n="$1" '$1 == n { print $2; exit }' "$STAGE_FLOORS" 2>/dev/null)
    echo "${floor:-1}"
}

# Whether a skip is allowed: a line "STAGE-GLOBS FILE-GLOB PATTERN" of
# $STAGE_ALLOW (STAGE-GLOBS separated by commas) whose PATTERN matches the
# test's name or the skip's reason (bash globs throughout).
stage_skip_allowed() { # STAGE FILE NAME REASON
    local globs file_glob pattern glob
    local -a stage_globs
    while read -r globs file_glob pattern; do
        case $globs in '' | '#'*) continue ;; esac
        # shellcheck disable=SC2053 # glob matching is the point
        [[ $2 == $file_glob ]] || continue
        # shellcheck disable=SC2053
        [[ $3 == $pattern || $4 == $pattern ]] || continue
        IFS=, read -ra stage_globs <<< "$globs"
        for glob in "${stage_globs[@]}"; do
            # shellcheck disable=SC2053
            [[ $1 == $glob ]] && return 0
        done
    done < "$STAGE_ALLOW"
    return 1
}

# Print a stage's line and its notes, apply the allow-list and the floor, add
# it to the totals and keep its test ids for its layer.
stage_report() { # NAME PASSED FAILED [SKIPS [IDS]]
    local name=$1 p=$2 f=$3 skips=${4:-} ids=${5:-} s=0 ran=$(($2 + $3)) floor layer file test why
    local -a notes=()
    if [ -n "$skips" ] && [ -s "$skips" ]; then
        while IFS=$'\t' read -r file test why; do
            if stage_skip_allowed "$name" "$file" "$test" "$why"; then
                s=$((s + 1))
                notes+=("  skipped: $file > $test: $why")
            else
                f=$((f + 1))
                notes+=("  FAILED, a skip not in tests/skips.allow: $file > $test: $why")
            fi
        done < "$skips"
    fi
    floor=$(stage_floor "$name")
    if [ "$ran" = 0 ]; then
        f=$((f + 1))
        notes+=("  FAILED: no tests ran")
    elif [ "$ran" -lt "$floor" ]; then
        f=$((f + 1))
        notes+=("  FAILED: $ran test$([ "$ran" = 1 ] || echo s) ran, fewer than the floor of $floor (tests/floors.txt)")
    fi
    echo "$name: $p passed, $f failed, $s skipped"
    [ ${#notes[@]} -gt 0 ] && printf '%s\n' "${notes[@]}"
    passed=$((passed + p))
    failed=$((failed + f))
    skipped=$((skipped + s))

    layer=$(stage_layer "$name")
    grep -qxF "$layer" "$STAGE_DIR/layers" || echo "$layer" >> "$STAGE_DIR/layers"
    if [ -n "$ids" ]; then
        cat "$ids" >> "$STAGE_DIR/layer-$layer.ids"
    elif [ "$ran" -gt 0 ]; then
        # A shell-counted stage runs each check once: number them.
        seq -f "$name #%g" "$ran" >> "$STAGE_DIR/layer-$layer.ids"
    fi
    return 0
}

# The "skip  WHAT (WHY)" lines of a shell-counted stage's log as skips.
stage_shell_skips() { # FILE LOG > SKIPS
    sed -n 's/^skip  *\(.*\) (\(.*\))$/\1\t\2/p; t; s/^skip  *\(.*\)$/\1\t(no reason given)/p' "$2" |
        sed "s|^|$1\t|"
}

stage_fail() { # NAME MESSAGE
    echo "$1: $2"
    failed=$((failed + 1))
}

# The counts of a summary-reporter JSON on stdout ("PASSED FAILED"); its skips,
# test ids and failures into the files named (tabs and newlines made spaces).
stage_read_json() { # JSON SKIPS IDS FAILURES
    # shellcheck disable=SC2016 # JavaScript, not shell
    node -e '
        const fs = require("fs");
        const [json, skips, ids, failures] = process.argv.slice(1);
        const r = JSON.parse(fs.readFileSync(json, "utf8"));
        const flat = (s) => String(s).replace(/\s+/g, " ");
        const lines = (a) => a.map((l) => l + "\n").join("");
        fs.writeFileSync(skips, lines(r.skips.map((s) => [s.file, s.name, s.reason].map(flat).join("\t"))));
        fs.writeFileSync(ids, lines(r.tests.map(flat)));
        fs.writeFileSync(failures, lines(r.failures.map((x) => flat(x.name ? `${x.file} > ${x.name}: ${x.error}` : `${x.file}: ${x.error}`))));
        console.log(r.passed, r.failed);
    ' "$@"
}

# Run one node --test stage: TAP in OUT/NAME.log as before, the summary
# reporter's JSON in OUT/NAME.json.
node_stage() { # NAME DIR|FILE...
    local name=$1 rc counts p f
    local log=$OUT/$name.log json=$OUT/$name.json base=$STAGE_DIR/$name
    shift
    rm -f "$json"
    node --test --test-concurrency=1 \
        --test-reporter=tap --test-reporter-destination=stdout \
        --test-reporter="$STAGE_ROOT/tests/lib/summary-reporter.mjs" --test-reporter-destination="$json" \
        "$@" > "$log" 2>&1
    rc=$?
    if ! counts=$(stage_read_json "$json" "$base.skips" "$base.ids" "$base.failures" 2> "$base.err"); then
        tail -40 "$log"
        stage_fail "$name" "0 passed, 1 failed (no summary from node --test, exit $rc: $(head -c 300 "$base.err"))"
        return 0
    fi
    read -r p f <<< "$counts"
    if [ "$f" != 0 ]; then
        sed 's/^/  FAILED: /' "$base.failures" | head -20
        grep -B2 -A20 '^not ok' "$log" | head -80
    elif [ "$rc" != 0 ]; then
        tail -40 "$log"
        echo "  FAILED: node --test exited with $rc, with no failed test"
        f=1
    fi
    stage_report "$name" "$p" "$f" "$base.skips" "$base.ids"
}

# Run a tree's unit tests under ctest, reported as unit-DIR.
unit_stage() { # DIR
    local dir=$1 name=unit-$1 log=$OUT/unit-$1.log base=$STAGE_DIR/unit-$1 rc p f
    echo "== unit tests ($dir, ctest)"
    (cd "$dir" && ctest --output-on-failure) > "$log" 2>&1
    rc=$?
    # "12/18 Test #12: test_router ......   Passed    0.05 sec" -> NAME<tab>STATUS
    awk '/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: / {
            st = $0
            sub(/^[^:]*: [^ ]+ \.* */, "", st); sub(/^\*+/, "", st); sub(/ +[0-9.]+ sec.*$/, "", st)
            print $4 "\t" st
        }' "$log" > "$base.results"
    awk -F'\t' '$2 != "Skipped" && $2 !~ /Disabled/ { print $1 }' "$base.results" > "$base.ids"
    awk -F'\t' -v d="$dir" '$2 == "Skipped" || $2 ~ /Disabled/ { print d "\t" $1 "\tctest: " $2 }' \
        "$base.results" > "$base.skips"
    p=$(awk -F'\t' '$2 == "Passed"' "$base.results" | wc -l)
    f=$(awk -F'\t' '$2 != "Passed" && $2 != "Skipped" && $2 !~ /Disabled/' "$base.results" | wc -l)
    if [ "$f" != 0 ]; then
        grep -E 'Failed|FAIL|\*\*\*' "$log" | head -20
    elif [ "$rc" != 0 ]; then
        tail -40 "$log"
        echo "  FAILED: ctest exited with $rc, with no failed test"
        f=1
    fi
    stage_report "$name" "$p" "$f" "$base.skips" "$base.ids"
}

# The two summary lines: runs (the first stays "N passed, N failed ..."), then
# the distinct tests of each layer, in the order the layers ran.
stage_summary() {
    local layer n total=0 line=
    while read -r layer; do
        n=$(sort -u "$STAGE_DIR/layer-$layer.ids" 2>/dev/null | grep -c .)
        line="$line${line:+, }$layer $n"
        total=$((total + n))
    done < "$STAGE_DIR/layers"
    echo
    echo "$passed passed, $failed failed, $skipped skipped"
    echo "distinct tests: $line (total $total)"
    [ "$failed" = 0 ]
}
