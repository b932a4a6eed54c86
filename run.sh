#!/usr/bin/env bash
# run.sh: install what is missing, build, and run nginx + knowhub in the
# foreground on $KNOWHUB_HOST:$KNOWHUB_PORT (default 127.0.0.1:8080) with the
# database in $KNOWHUB_DATA (default ./var). Ctrl-C or SIGTERM stops both.
# Started again for a data directory that is already served, it says so and
# touches nothing; on a port in use it starts nothing. KNOWHUB_BIN: a knowhub
# binary to run instead of building one.
set -u
cd "$(dirname "$0")"
RUN_BIN=${KNOWHUB_BIN:-}
. scripts/deps.sh
. scripts/stack.sh

HOST=${KNOWHUB_HOST:-127.0.0.1}
PORT=${KNOWHUB_PORT:-8080}
DATA=${KNOWHUB_DATA:-./var}

# Already running for this data directory: say where, change nothing.
if [ -d "$DATA" ] && pids=$(stack_running "$(cd "$DATA" && pwd)"); then
    DATA=$(cd "$DATA" && pwd)
    url=$(cat "$DATA/run/url" 2>/dev/null || echo "http://$HOST:$PORT/")
    at=${url#http://} at=${at%/}
    cat <<MSG
KnowHub is already running for $DATA (knowhub PID ${pids% *}, nginx PID ${pids#* }):
  at:          $url
  login link:  KNOWHUB_DATA=$DATA KNOWHUB_HOST=${at%:*} KNOWHUB_PORT=${at##*:} ${KNOWHUB_BIN#"$PWD"/} login-link
  to stop it:  Ctrl-C in the terminal that started it, or: scripts/stack.sh stop $DATA
Nothing was started or changed.
MSG
    exit 0
fi
if stack_port_taken "$HOST" "$PORT"; then
    echo "$HOST:$PORT is already in use by another program: set KNOWHUB_PORT to another port. Nothing was started or changed." >&2
    exit 1
fi

deps_ensure || exit 1
if [ -n "$RUN_BIN" ]; then
    [ -x "$RUN_BIN" ] || { echo "KNOWHUB_BIN=$RUN_BIN is not an executable file" >&2; exit 1; }
    KNOWHUB_BIN=$(cd "$(dirname "$RUN_BIN")" && pwd)/$(basename "$RUN_BIN")
else
    echo "Building..."
    if ! { cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
           cmake --build build -j"$(nproc)" >/dev/null; }; then
        echo "The build failed; run: cmake --build build" >&2
        exit 1
    fi
    KNOWHUB_BIN=$(pwd)/build/knowhub
fi

# Everything under the data directory (database, WAL, tokens, logs) is the
# owner's alone: nginx's workers run as that owner (scripts/stack.sh).
umask 077
mkdir -p "$DATA"
chmod 700 "$DATA"
DATA=$(cd "$DATA" && pwd)
first_start=0
[ -f "$DATA/knowhub.db" ] || first_start=1

if [ "$first_start" = 1 ]; then
    KNOWHUB_DATA=$DATA "$KNOWHUB_BIN" init || exit 1
    if KNOWHUB_DATA=$DATA "$KNOWHUB_BIN" import docs/examples/knowledge --space default >/dev/null; then
        echo "First start: loaded the example rules and experiences (English and Chinese)."
    fi
fi

# Stops what this run started, never another run's servers.
stop() {
    stack_stop_ours "$DATA"
    exit 0
}
trap stop INT TERM
stack_start "$DATA" "$HOST" "$PORT" || exit 1

BASE="http://$HOST:$PORT"

# --- web panel (issue 7): first start loads the example analysis sessions
# (docs/examples/sessions/*.json) through the API, with the admin token
# passed to curl on stdin, never on its command line.
if [ "$first_start" = 1 ]; then
    loaded=0
    for f in docs/examples/sessions/*.json; do
        [ -f "$f" ] || continue
        if printf 'header = "Authorization: Bearer %s"\n' "$(cat "$DATA/admin.token")" |
            curl -sS -K - -X POST -H 'Content-Type: application/json' --data-binary @"$f" \
                "$BASE/api/sessions" 2>/dev/null | grep -q '"status":"success"'; then
            loaded=$((loaded + 1))
        else
            echo "First start: could not load the example session $f" >&2
        fi
    done
    [ "$loaded" -gt 0 ] && echo "First start: loaded $loaded example analysis sessions (English and Chinese)."
fi
# --- end web panel

# The one-click link holds the admin token: shown on a terminal only, never
# into a log or a journal that captures stdout.
if [ -t 1 ]; then
    open_line="$BASE/#token=$(cat "$DATA/admin.token")"
else
    open_line="the one-click login link: KNOWHUB_DATA=$DATA KNOWHUB_HOST=$HOST KNOWHUB_PORT=$PORT ${KNOWHUB_BIN#"$PWD"/} login-link"
fi
cat <<MSG

KnowHub is running at $BASE/
  open:        $open_line
               (one-click login as admin: the page trades the token for a session cookie)
  admin token: $DATA/admin.token  (keep it secret)
  try:         curl -H "Authorization: Bearer \$(cat $DATA/admin.token)" $BASE/api/knowledge
  more tokens: KNOWHUB_DATA=$DATA ${KNOWHUB_BIN#"$PWD"/} token create --space default --role agent
  logs:        $DATA/logs/
Press Ctrl-C to stop.
MSG

# Run until Ctrl-C, or until one of the two exits on its own.
wait -n "$STACK_KNOWHUB_PID" "$STACK_NGINX_PID"
echo "A server process exited; stopping. See $DATA/logs/." >&2
stack_stop_ours "$DATA"
exit 1
