#!/usr/bin/env bash
# stack.sh: render nginx's configuration and start or stop nginx + knowhub for
# one data directory. Sourced by run.sh (processes stay its children) or run
# as a command by the tests:
#   scripts/stack.sh start DATA HOST PORT   start both in the background, wait until ready
#   scripts/stack.sh stop DATA              stop both by their PIDs
# Several knowhub nodes on one database behind one nginx (tests/http/lib/nodes.mjs):
#   scripts/stack.sh knowhub-start DATA     knowhub alone on DATA/run/knowhub.sock
#   scripts/stack.sh knowhub-stop DATA      stop it by its PID
#   scripts/stack.sh nodes-start FRONT HOST PORT SOCKET=NODE_PORT...
#       nginx (its files in FRONT) on HOST:PORT, round robin over the SOCKETs,
#       and on each NODE_PORT the one SOCKET; stop it with: stop FRONT
# N nodes on one PostgreSQL from a source tree, for an operator (docs/operations.md):
#   scripts/stack.sh nodes-start N [DIR [HOST PORT]]
#       N knowhub serve on $KNOWHUB_DATABASE_URL, named PREFIX-1..PREFIX-N
#       (PREFIX: $KNOWHUB_NODE, default "node"), data in DIR/PREFIX-I, nginx
#       in DIR/front: HOST:PORT round robin over all, HOST:PORT+I node I alone
#       (DIR default ./var-nodes, HOST:PORT default $KNOWHUB_HOST:$KNOWHUB_PORT
#       or 127.0.0.1:8080)
#   scripts/stack.sh nodes-stop [DIR]   stop nginx and every node of DIR
set -u

STACK_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KNOWHUB_BIN=${KNOWHUB_BIN:-$STACK_ROOT/build/knowhub}

stack_port_taken() { # HOST PORT
    (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
}

# nginx/knowhub_fastcgi.conf into DEST, passing to the upstream UPSTREAM with
# the proxy key knowhub writes into KEYDIR (its data directory) in place of
# the package's /var/lib/knowhub/: a pattern, so nginx starts without it (an
# older knowhub writes none), and then no request is loopback.
stack_fastcgi() { # DEST UPSTREAM KEYDIR
    sed -e "s|^fastcgi_pass knowhub;|fastcgi_pass $2;|" \
        -e "s|^include /var/lib/knowhub/proxy_key\[\.\]conf;|include $3/proxy_key[.]conf;|" \
        "$STACK_ROOT/nginx/knowhub_fastcgi.conf" > "$1" || return 1
    grep -q "^fastcgi_pass $2;" "$1" && grep -qF "include $3/proxy_key[.]conf;" "$1" || {
        echo "stack: nginx/knowhub_fastcgi.conf lacks 'fastcgi_pass knowhub;' or" \
            "'include /var/lib/knowhub/proxy_key[.]conf;'" >&2
        return 1
    }
}

# Render nginx/TEMPLATE.conf.in into DATA/nginx/OUTPUT.conf for each
# TEMPLATE:OUTPUT given (default: nginx.conf and the two parts it includes);
# @NGINX@ (where knowhub_fastcgi.conf is) is $STACK_NGINX, default DATA/nginx,
# where knowhub_fastcgi.conf is then rendered with DATA's proxy key.
stack_render() { # DATA HOST PORT [TEMPLATE:OUTPUT...]
    local data=$1 host=$2 port=$3 user_line="" rate=${KNOWHUB_RATE_LIMIT:-20r/s} exempt=1 part
    local parts=("${@:4}")
    [ ${#parts[@]} = 0 ] && parts=(knowhub:nginx knowhub_http:knowhub_http knowhub_server:knowhub_server)
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
    for part in "${parts[@]}"; do
        sed -e "s|@USER_LINE@|$user_line|" \
            -e "s|@WORKERS@|${KNOWHUB_NGINX_WORKERS:-2}|" \
            -e "s|@DATA@|$data|g" -e "s|@HOST@|$host|g" -e "s|@PORT@|$port|g" \
            -e "s|@WEB@|$STACK_ROOT/web|g" -e "s|@I18N@|$STACK_ROOT/i18n|g" \
            -e "s|@OPENAPI@|$STACK_ROOT/docs/openapi.yaml|g" \
            -e "s|@NGINX@|${STACK_NGINX:-$data/nginx}|g" -e "s|@RATE@|$rate|g" \
            -e "s|@SOCKET@|$data/run/knowhub.sock|g" \
            -e "s|@BURST@|${KNOWHUB_RATE_BURST:-40}|g" -e "s|@LOOPBACK_EXEMPT@|$exempt|g" \
            "$STACK_ROOT/nginx/${part%%:*}.conf.in" > "$data/nginx/${part#*:}.conf" || return 1
    done
    if [ -z "${STACK_NGINX:-}" ]; then
        stack_fastcgi "$data/nginx/knowhub_fastcgi.conf" knowhub "$data" || return 1
    fi
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
# and in DATA/run/*.pid, the URL in DATA/run/url. Returns non-zero with a
# message when something fails, having stopped what it started (and only that).
stack_start() { # DATA HOST PORT
    local data=$1 host=$2 port=$3
    STACK_KNOWHUB_PID="" STACK_NGINX_PID=""
    if [ -d "$data" ] && stack_running "$(cd "$data" && pwd)" >/dev/null; then
        echo "stack: a knowhub is already running for $data (scripts/stack.sh stop $data stops it)" >&2
        return 1
    fi
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
    stack_knowhub "$data" || { stack_stop_ours "$data"; return 1; }
    nginx -p "$data/nginx" -c "$data/nginx/nginx.conf" -e stderr 2>>"$data/logs/nginx-error.log" &
    STACK_NGINX_PID=$!
    echo "$STACK_NGINX_PID" > "$data/run/nginx-main.pid"
    if ! stack_wait 10 stack_port_taken "$host" "$port"; then
        echo "stack: nginx did not start; see $data/logs/nginx-error.log:" >&2
        tail -5 "$data/logs/nginx-error.log" >&2
        stack_stop_ours "$data"
        return 1
    fi
    echo "http://$host:$port/" > "$data/run/url"
}

# The PIDs "KNOWHUB NGINX" of the stack already serving DATA (its pid files
# name live processes that are knowhub serve and nginx), else non-zero.
stack_running() { # DATA
    local data=$1 k n
    k=$(cat "$data/run/knowhub.pid" 2>/dev/null) && n=$(cat "$data/run/nginx-main.pid" 2>/dev/null) || return 1
    [[ "$k" =~ ^[0-9]+$ && "$n" =~ ^[0-9]+$ ]] || return 1
    stack_gone "$k" || stack_gone "$n" && return 1
    # knowhub serve (whatever the binary's name) started for this DATA
    tr '\0' '\n' < "/proc/$k/cmdline" 2>/dev/null | sed -n 2p | grep -qx serve || return 1
    tr '\0' '\n' < "/proc/$k/environ" 2>/dev/null | grep -qxF "KNOWHUB_DATA=$data" || return 1
    tr '\0' ' ' < "/proc/$n/cmdline" 2>/dev/null | grep -qF "$data/nginx" || return 1
    echo "$k $n"
}

# Start knowhub alone on DATA (its socket DATA/run/knowhub.sock) and wait for
# the socket; PID in STACK_KNOWHUB_PID and DATA/run/knowhub.pid.
stack_knowhub() { # DATA
    local data=$1
    umask 077
    mkdir -p "$data/logs" "$data/run"
    # A socket left by a killed knowhub would pass for the new one's.
    rm -f "$data/run/knowhub.sock"
    # STACK_DETACH=setsid (nodes-start N): knowhub in a session of its own,
    # as nginx's daemon is, so it outlives the shell that started it.
    KNOWHUB_DATA=$data KNOWHUB_SOCKET= ${STACK_DETACH:-} "$KNOWHUB_BIN" serve 2>>"$data/logs/knowhub.log" &
    STACK_KNOWHUB_PID=$!
    echo "$STACK_KNOWHUB_PID" > "$data/run/knowhub.pid"
    if ! stack_wait 10 test -S "$data/run/knowhub.sock"; then
        echo "stack: knowhub did not start; see $data/logs/knowhub.log:" >&2
        tail -5 "$data/logs/knowhub.log" >&2
        return 1
    fi
}

# nginx for several knowhub nodes (one database): FRONT/nginx/ holds
# knowhub_nodes.conf.in rendered as nginx.conf, the shared http part with the
# upstream "knowhub" over every socket (round robin; nginx's default
# fastcgi_next_upstream "error timeout": a request that could not be sent
# goes to the next node, one sent is sent again after an error or a timeout
# unless it is a POST), and per node an upstream knowhub_node_I, its
# copy of knowhub_fastcgi.conf passing to it and of the server part
# including that copy, behind a server on the node's own port.
# Proxy keys: a node started by knowhub-start has its own, in the data
# directory above its socket (DATA/run/knowhub.sock); each node's server
# sends that node's key. The front sends one key to every node: the nodes'
# key when they all hold the same one (copied proxy.key), else none (then no
# request through the front is loopback).
stack_nodes_render() { # FRONT HOST PORT SOCKET=NODE_PORT...
    local front=$1 host=$2 port=$3 i=0 servers="" spec dir keydir shared=""
    shift 3
    for spec in "$@"; do
        keydir=$(dirname "$(dirname "${spec%=*}")")
        if [ -z "$shared" ]; then
            shared=$keydir
        elif ! cmp -s "$shared/proxy.key" "$keydir/proxy.key"; then
            shared=$front # no key there: none is sent
        fi
    done
    STACK_NGINX=$front/nginx stack_render "$front" "$host" "$port" \
        knowhub_nodes:nginx knowhub_http:knowhub_http knowhub_server:knowhub_server || return 1
    stack_fastcgi "$front/nginx/knowhub_fastcgi.conf" knowhub "${shared:-$front}" || return 1
    for spec in "$@"; do
        servers+="    server unix:${spec%=*} max_fails=1 fail_timeout=1s;\\n"
    done
    # The upstream "knowhub": every node instead of the one socket.
    sed -i -e "/^upstream knowhub {/,/^}/ s|^ *server unix:.*;\$|${servers%\\n}|" \
        "$front/nginx/knowhub_http.conf" || return 1
    grep -q "^ *server unix:${1%=*} " "$front/nginx/knowhub_http.conf" || {
        echo "stack: no upstream knowhub in nginx/knowhub_http.conf.in" >&2
        return 1
    }
    : > "$front/nginx/node-servers.conf"
    for spec in "$@"; do
        dir=$front/nginx/node-$i
        mkdir -p "$dir"
        printf '\nupstream knowhub_node_%d {\n    server unix:%s;\n}\n' "$i" "${spec%=*}" \
            >> "$front/nginx/knowhub_http.conf"
        stack_fastcgi "$dir/knowhub_fastcgi.conf" "knowhub_node_$i" \
            "$(dirname "$(dirname "${spec%=*}")")" || return 1
        STACK_NGINX=$dir stack_render "$front" "$host" "$port" \
            "knowhub_server:node-$i/knowhub_server" || return 1
        printf 'server {\n    listen %s:%s;\n    root %s;\n    index index.html;\n    include %s;\n}\n' \
            "$host" "${spec##*=}" "$STACK_ROOT/web" "$dir/knowhub_server.conf" \
            >> "$front/nginx/node-servers.conf"
        i=$((i + 1))
    done
}

# Non-zero, with a message, when one of the PORTs on HOST is in use.
stack_ports_free() { # HOST PORT...
    local host=$1 p
    for p in "${@:2}"; do
        if stack_port_taken "$host" "$p"; then
            echo "stack: $host:$p is already in use" >&2
            return 1
        fi
    done
}

# Render and start the nodes' nginx; wait until the front port and every
# node's port listen. PID in FRONT/run/nginx-main.pid.
stack_nodes_start() { # FRONT HOST PORT SOCKET=NODE_PORT...
    local front=$1 host=$2 port=$3 spec p ports=()
    for p in "$port" "${@:4}"; do ports+=("${p##*=}"); done
    stack_ports_free "$host" "${ports[@]}" || return 1
    umask 077
    mkdir -p "$front"
    front=$(cd "$front" && pwd)
    stack_nodes_render "$front" "$host" "$port" "${@:4}" || return 1
    nginx -p "$front/nginx" -c "$front/nginx/nginx.conf" -e stderr 2>>"$front/logs/nginx-error.log" &
    STACK_NGINX_PID=$!
    echo "$STACK_NGINX_PID" > "$front/run/nginx-main.pid"
    for spec in "$port" "${@:4}"; do
        if ! stack_wait 10 stack_port_taken "$host" "${spec##*=}"; then
            echo "stack: nginx did not start; see $front/logs/nginx-error.log:" >&2
            tail -5 "$front/logs/nginx-error.log" >&2
            return 1
        fi
    done
}

# N nodes (the operator's form): see the head of this file. DIR/nodes lists
# the nodes' directories, for nodes-stop. Stops what it started on a failure.
stack_nodes_up() { # N DIR HOST PORT
    local n=$1 dir=$2 host=$3 port=$4 prefix=${KNOWHUB_NODE:-node} i specs=() node
    if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ] || [ "$n" -gt 64 ]; then
        echo "stack: nodes-start N: N is a number of nodes, 1 to 64 (got '$n')" >&2
        return 1
    fi
    if ! [[ $port =~ ^[0-9]+$ ]] || [ $((port + n)) -gt 65535 ]; then
        echo "stack: nodes-start: PORT must be a number, PORT+N at most 65535 (got '$port')" >&2
        return 1
    fi
    if [ -z "${KNOWHUB_DATABASE_URL:-}" ]; then
        echo "stack: several nodes share one PostgreSQL database: set KNOWHUB_DATABASE_URL" \
            "(docs/operations.md, \"Several nodes from a source tree\")" >&2
        return 1
    fi
    if ! [[ $prefix =~ ^[A-Za-z0-9._:-]{1,58}$ ]]; then
        echo "stack: KNOWHUB_NODE, the nodes' name prefix, must be 1-58 of A-Z a-z 0-9 . _ : - (got '$prefix')" >&2
        return 1
    fi
    # shellcheck disable=SC2046 # numbers only
    stack_ports_free "$host" $(seq "$port" $((port + n))) || return 1
    umask 077
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if [ -s "$dir/nodes" ]; then
        echo "stack: $dir already has nodes (scripts/stack.sh nodes-stop $dir stops them)" >&2
        return 1
    fi
    # One after another: the first makes the schema (or finds it) and, on an
    # empty database, writes the first admin token into its directory.
    for ((i = 1; i <= n; i++)); do
        node=$dir/$prefix-$i
        echo "$node" >> "$dir/nodes"
        if ! KNOWHUB_NODE=$prefix-$i STACK_DETACH=setsid stack_knowhub "$node"; then
            stack_nodes_down "$dir"
            return 1
        fi
        specs+=("$node/run/knowhub.sock=$((port + i))")
    done
    if ! stack_nodes_start "$dir/front" "$host" "$port" "${specs[@]}"; then
        stack_nodes_down "$dir"
        return 1
    fi
    echo "http://$host:$port/" > "$dir/front/run/url"
    echo "knowhub: $n nodes on one PostgreSQL, front http://$host:$port/ (round robin)"
    for ((i = 1; i <= n; i++)); do
        echo "  $prefix-$i: http://$host:$((port + i))/ (this node alone: /metrics, /api/health), data $dir/$prefix-$i"
    done
    [ -s "$dir/$prefix-1/admin.token" ] && echo "  first admin token: $dir/$prefix-1/admin.token"
    echo "  stop: scripts/stack.sh nodes-stop $dir"
}

# Stop nginx and every node that nodes-start started in DIR.
stack_nodes_down() { # DIR
    local dir=$1 node
    [ -d "$dir" ] || return 0
    STACK_ONLY=nginx-main stack_stop "$dir/front"
    rm -f "$dir/front/run/url"
    if [ -f "$dir/nodes" ]; then
        while IFS= read -r node; do
            [ -n "$node" ] && STACK_ONLY=knowhub stack_stop "$node"
        done < "$dir/nodes"
        rm -f "$dir/nodes"
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

# Stop PID: TERM, then KILL after 10 s.
stack_stop_pid() { # PID
    kill -TERM "$1" 2>/dev/null
    stack_wait 10 stack_gone "$1" || kill -KILL "$1" 2>/dev/null
}

# Stop the stack of DATA by its pid files.
stack_stop() { # DATA
    local data=$1 pid f
    for f in ${STACK_ONLY:-nginx-main knowhub}; do
        pid=$(cat "$data/run/$f.pid" 2>/dev/null) || continue
        stack_stop_pid "$pid"
        rm -f "$data/run/$f.pid"
    done
    rm -f "$data/run/url"
}

# Stop what this shell's stack_start started (STACK_NGINX_PID,
# STACK_KNOWHUB_PID), never another's: a pid file is removed only if it
# still names our process.
stack_stop_ours() { # DATA
    local data=$1 pid f
    for f in nginx-main:${STACK_NGINX_PID:-} knowhub:${STACK_KNOWHUB_PID:-}; do
        pid=${f#*:}
        [ -n "$pid" ] || continue
        stack_stop_pid "$pid"
        [ "$(cat "$data/run/${f%%:*}.pid" 2>/dev/null)" = "$pid" ] && rm -f "$data/run/${f%%:*}.pid"
    done
    STACK_NGINX_PID="" STACK_KNOWHUB_PID=""
    [ -f "$data/run/knowhub.pid" ] || rm -f "$data/run/url"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    case "${1:-}" in
    start) [ $# = 4 ] || { echo "usage: $0 start DATA HOST PORT" >&2; exit 2; }
           stack_start "$2" "$3" "$4" ;;
    stop)  [ $# = 2 ] || { echo "usage: $0 stop DATA" >&2; exit 2; }
           stack_stop "$2" ;;
    knowhub-start) [ $# = 2 ] || { echo "usage: $0 knowhub-start DATA" >&2; exit 2; }
           umask 077; mkdir -p "$2" && stack_knowhub "$(cd "$2" && pwd)" ;;
    knowhub-stop) [ $# = 2 ] || { echo "usage: $0 knowhub-stop DATA" >&2; exit 2; }
           STACK_ONLY=knowhub stack_stop "$2" ;;
    nodes-start)
           if [ $# = 2 ] || [ $# = 3 ] || { [ $# = 5 ] && [[ $5 != *=* ]]; }; then
               # nodes-start N [DIR [HOST PORT]]
               [ $# = 4 ] && { echo "usage: $0 nodes-start N [DIR [HOST PORT]]" >&2; exit 2; }
               stack_nodes_up "$2" "${3:-./var-nodes}" "${4:-${KNOWHUB_HOST:-127.0.0.1}}" \
                   "${5:-${KNOWHUB_PORT:-8080}}"
               exit
           fi
           [ $# -ge 5 ] || { echo "usage: $0 nodes-start N [DIR [HOST PORT]] | nodes-start FRONT HOST PORT SOCKET=NODE_PORT..." >&2; exit 2; }
           stack_nodes_start "${@:2}" ;;
    nodes-stop) [ $# -le 2 ] || { echo "usage: $0 nodes-stop [DIR]" >&2; exit 2; }
           stack_nodes_down "${2:-./var-nodes}" ;;
    *)     echo "usage: $0 start DATA HOST PORT | stop DATA | knowhub-start DATA | knowhub-stop DATA | nodes-start N [DIR [HOST PORT]] | nodes-stop [DIR] | nodes-start FRONT HOST PORT SOCKET=NODE_PORT..." >&2; exit 2 ;;
    esac
fi
