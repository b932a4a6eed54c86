#!/usr/bin/env bash
# stack.sh: render nginx's configuration and start or stop nginx + knowhub for
# one data directory. Sourced by run.sh (processes stay its children) or run
# as a command by the tests:
#   scripts/stack.sh start DATA HOST PORT   start both in the background, wait until ready
#   scripts/stack.sh stop DATA              stop both by their PIDs
set -u

STACK_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KNOWHUB_BIN=${KNOWHUB_BIN:-$STACK_ROOT/build/knowhub}

stack_port_taken() { # HOST PORT
    (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
}

stack_render() { # DATA HOST PORT
    local data=$1 host=$2 port=$3 user_line="" rate=${KNOWHUB_RATE_LIMIT:-20r/s} exempt=1
    if ! [[ $rate =~ ^[0-9]+r/[sm]$ ]]; then
        echo "stack: KNOWHUB_RATE_LIMIT must look like 20r/s or 600r/m (got '$rate')" >&2
        return 1
    fi
    [ "${KNOWHUB_RATE_LIMIT_LOOPBACK:-0}" = 1 ] && exempt=0
    mkdir -p "$data/nginx/tmp" "$data/logs" "$data/run"
    if [ "$(id -u)" = 0 ]; then
        # Workers run as the owner of the data directory, so they can reach the socket.
        user_line="user $(stat -c %U "$data") $(stat -c %G "$data");"
    fi
    # nginx.conf, and the http-level and server-level parts it includes (the
    # Debian site includes the same two parts, rendered by CMake).
    for part in knowhub:nginx knowhub_http:knowhub_http knowhub_server:knowhub_server; do
        sed -e "s|@USER_LINE@|$user_line|" \
            -e "s|@WORKERS@|${KNOWHUB_NGINX_WORKERS:-2}|" \
            -e "s|@DATA@|$data|g" -e "s|@HOST@|$host|g" -e "s|@PORT@|$port|g" \
            -e "s|@WEB@|$STACK_ROOT/web|g" -e "s|@I18N@|$STACK_ROOT/i18n|g" \
            -e "s|@NGINX@|$STACK_ROOT/nginx|g" -e "s|@RATE@|$rate|g" \
            -e "s|@SOCKET@|$data/run/knowhub.sock|g" \
            -e "s|@BURST@|${KNOWHUB_RATE_BURST:-40}|g" -e "s|@LOOPBACK_EXEMPT@|$exempt|g" \
            "$STACK_ROOT/nginx/${part%%:*}.conf.in" > "$data/nginx/${part#*:}.conf" || return 1
    done
}

# Wait until a condition command succeeds (50 ms steps), or give up.
stack_wait() { # SECONDS CMD...
    local tries=$(( $1 * 20 )); shift
    while [ "$tries" -gt 0 ]; do
        "$@" && return 0
        sleep 0.05
        tries=$(( tries - 1 ))
    done
    return 1
}

# Start knowhub then nginx in the background; PIDs in STACK_KNOWHUB_PID, STACK_NGINX_PID
# and in DATA/run/*.pid. Returns non-zero with a message when something fails.
stack_start() { # DATA HOST PORT
    local data=$1 host=$2 port=$3
    if stack_port_taken "$host" "$port"; then
        echo "stack: $host:$port is already in use (set KNOWHUB_PORT to another port)" >&2
        return 1
    fi
    # The database, its WAL, the tokens and the logs are for the owner only
    # (nginx's workers run as that owner, see stack_render); files made by
    # an older start under umask 022 are tightened too.
    umask 077
    mkdir -p "$data"
    data=$(cd "$data" && pwd)
    chmod -R go-rwx "$data" || return 1
    stack_render "$data" "$host" "$port" || return 1
    KNOWHUB_DATA=$data KNOWHUB_SOCKET= "$KNOWHUB_BIN" serve 2>>"$data/logs/knowhub.log" &
    STACK_KNOWHUB_PID=$!
    echo "$STACK_KNOWHUB_PID" > "$data/run/knowhub.pid"
    if ! stack_wait 10 test -S "$data/run/knowhub.sock"; then
        echo "stack: knowhub did not start; see $data/logs/knowhub.log:" >&2
        tail -5 "$data/logs/knowhub.log" >&2
        return 1
    fi
    nginx -p "$data/nginx" -c "$data/nginx/nginx.conf" -e stderr 2>>"$data/logs/nginx-error.log" &
    STACK_NGINX_PID=$!
    echo "$STACK_NGINX_PID" > "$data/run/nginx-main.pid"
    if ! stack_wait 10 stack_port_taken "$host" "$port"; then
        echo "stack: nginx did not start; see $data/logs/nginx-error.log:" >&2
        tail -5 "$data/logs/nginx-error.log" >&2
        kill "$STACK_KNOWHUB_PID" 2>/dev/null
        return 1
    fi
}

# True once PID has exited: gone, or a zombie not yet reaped by its parent (the
# servers are orphans, and an init that reaps late must not delay the stop).
stack_gone() { # PID
    local stat
    [ -d /proc/self ] || { ! kill -0 "$1" 2>/dev/null; return; }
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
    stat=${stat##*) }
    [ "${stat%% *}" = Z ]
}

stack_stop() { # DATA
    local data=$1 pid
    for f in nginx-main knowhub; do
        pid=$(cat "$data/run/$f.pid" 2>/dev/null) || continue
        kill -TERM "$pid" 2>/dev/null
        stack_wait 10 stack_gone "$pid" || kill -KILL "$pid" 2>/dev/null
        rm -f "$data/run/$f.pid"
    done
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    case "${1:-}" in
    start) [ $# = 4 ] || { echo "usage: $0 start DATA HOST PORT" >&2; exit 2; }
           stack_start "$2" "$3" "$4" ;;
    stop)  [ $# = 2 ] || { echo "usage: $0 stop DATA" >&2; exit 2; }
           stack_stop "$2" ;;
    *)     echo "usage: $0 start DATA HOST PORT | stop DATA" >&2; exit 2 ;;
    esac
fi
