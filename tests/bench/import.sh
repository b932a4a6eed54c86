#!/usr/bin/env bash
# import.sh: time `knowhub import` of a generated directory of N Markdown files
# (default 10,000: rules and experiences, English and Chinese, one folder
# level), then `knowhub export` it back and compare byte for byte. Prints
# figures; never fails on time (it fails only if the round trip differs).
#   tests/bench/import.sh [N]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
N=${1:-10000}
BIN=${KNOWHUB_BIN:-$ROOT/build/knowhub}
[ -x "$BIN" ] || { cmake -S "$ROOT" -B "$ROOT/build" >/dev/null && cmake --build "$ROOT/build" -j"$(nproc)" >/dev/null; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

python3 - "$WORK/src" "$N" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
random.seed(7)
en = "revenue cost margin quarter region customer churn cohort pandas groupby merge pivot chart trend forecast inventory turnover".split()
zh = ["库存", "周转", "销售", "利润", "季度", "区域", "客户", "留存", "分析", "预测"]
os.makedirs(f"{root}/rules"); os.makedirs(f"{root}/experiences")
for i in range(n):
    rule = i % 20 == 0
    words = random.sample(en, 4)
    title = " ".join(words).capitalize() if i % 3 else "".join(random.sample(zh, 3)) + "方法"
    body = " ".join(random.choice(en) for _ in range(60 if not rule else 20)) + "\n"
    if rule:
        path = f"{root}/rules/rule-{i:05d}.md"
        fm = f'---\ntitle: "{title}"\ndescription: rule {i}\nalwaysApply: {"false" if i % 40 else "true"}\ntags: [{words[0]}]\ncreated: 2026-12-01\nupdated: 2026-12-01\nsource: manual\n---\n\n'
    else:
        folder = f"{root}/experiences/area-{i % 50:02d}"
        os.makedirs(folder, exist_ok=True)
        path = f"{folder}/exp-{i:05d}.md"
        fm = f'---\ntitle: "{title}"\ntags: [{words[0]}, {words[1]}]\ncreated: 2026-12-01\nupdated: 2026-12-01\nsource: manual\n---\n\n'
    with open(path, "w", encoding="utf-8") as f:
        f.write(fm + body)
PY

export KNOWHUB_DATA=$WORK/data
"$BIN" init >/dev/null 2>&1
t0=$(date +%s.%N)
"$BIN" import "$WORK/src" > "$WORK/import.log" 2> "$WORK/import.err"
t1=$(date +%s.%N)
"$BIN" export "$WORK/out" > /dev/null 2> "$WORK/export.err"
t2=$(date +%s.%N)
summary=$(tail -1 "$WORK/import.err")
if diff -r "$WORK/src" "$WORK/out" > /dev/null; then same="identical"; else same="DIFFERENT"; fi
awk -v n="$N" -v a="$t0" -v b="$t1" -v c="$t2" -v s="$summary" -v same="$same" 'BEGIN {
    printf "import of %d files: %.2f s (%.0f files/s)  [%s]\n", n, b - a, n / (b - a), s
    printf "export of %d files: %.2f s; round trip: %s\n", n, c - b, same
}'
"$BIN" check | tail -1
[ "$same" = identical ]
