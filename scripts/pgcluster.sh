#!/usr/bin/env bash
# pgcluster.sh: a throwaway PostgreSQL cluster for the tests (never for data
# you keep: fsync is off). Superuser "knowhub", trust authentication, a unix
# socket in DIR/sock and no TCP port at all.
#   scripts/pgcluster.sh start DIR   initdb into DIR/data, start it, wait until it accepts
#   scripts/pgcluster.sh stop DIR    stop it (fast) and remove DIR
#   scripts/pgcluster.sh crash DIR   stop it -m immediate (a crash), keep DIR
#   scripts/pgcluster.sh resume DIR  start it again on DIR/data (crash recovery)
# Then: psql -h DIR/sock -U knowhub postgres, or
#   KNOWHUB_DATABASE_URL='postgresql:///DB?host=DIR/sock&user=knowhub'.
# As root the server runs as user postgres (DIR is handed to it); otherwise as
# the current user. Prints nothing but errors. PGCLUSTER_OPTS adds server
# options to start and resume (they win): a test that crashes the server and
# counts what survived needs '-c synchronous_commit=on', since with it off a
# commit is answered before its WAL is written, and stop -m immediate loses
# the last ones (fsync=off only matters when the machine itself goes down). PGBIN overrides the binaries'
# directory (default: the newest /usr/lib/postgresql/*/bin, else $PATH).
set -u

pg_bin() {
    local d
    if [ -n "${PGBIN:-}" ]; then
        echo "$PGBIN"
        return
    fi
    for d in $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V -r); do
        [ -x "$d/pg_ctl" ] && { echo "$d"; return; }
    done
    d=$(command -v pg_ctl 2>/dev/null) && { dirname "$d"; return; }
    echo "pgcluster: no PostgreSQL server found (install postgresql, or set PGBIN)" >&2
    return 1
}

# Run a command as the cluster's owner.
as_owner() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

pg_start() { # DIR
    local dir=$1 bin log
    bin=$(pg_bin) || return 1
    mkdir -p "$dir" || return 1
    dir=$(cd "$dir" && pwd)
    if [ -e "$dir/data" ]; then
        echo "pgcluster: $dir/data exists already (stop it first)" >&2
        return 1
    fi
    mkdir -p "$dir/sock"
    if [ "$(id -u)" = 0 ]; then
        id postgres >/dev/null 2>&1 || { echo "pgcluster: there is no user postgres" >&2; return 1; }
        chown postgres: "$dir" "$dir/sock"
        # postgres must reach DIR: mktemp -d makes it 0700, and the parents
        # (/tmp) are world-searchable.
        chmod 0755 "$dir"
    fi
    # Clients (the tests, knowhub) connect as any local user: the socket
    # directory is open to all; trust authentication, so never on a shared host.
    chmod 0777 "$dir/sock"
    log=$dir/initdb.log
    if ! as_owner "$bin/initdb" -D "$dir/data" -U knowhub --auth=trust -N -E UTF8 \
        --locale=C.UTF-8 >"$log" 2>&1 &&
        ! as_owner "$bin/initdb" -D "$dir/data" -U knowhub --auth=trust -N -E UTF8 \
            --locale=C >"$log" 2>&1; then
        echo "pgcluster: initdb failed:" >&2
        tail -20 "$log" >&2
        return 1
    fi
    pg_run "$dir" "$bin"
}

# Start the server of DIR/data (made by start) and wait until it accepts connections.
pg_run() { # DIR BIN
    local dir=$1 bin=$2
    # pg_ctl -w waits until the server accepts connections (its default timeout: 60 s).
    if ! as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -s \
        -o "-c listen_addresses='' -c unix_socket_directories='$dir/sock' -c fsync=off \
-c synchronous_commit=off -c full_page_writes=off -c max_connections=200 ${PGCLUSTER_OPTS:-}" start >/dev/null; then
        echo "pgcluster: the server did not start; $dir/server.log:" >&2
        tail -20 "$dir/server.log" >&2
        return 1
    fi
}

# A crash, for the tests that lose the database: stop -m immediate (every
# backend killed at once, no checkpoint; the next start recovers).
pg_crash() { # DIR
    local dir=$1 bin
    bin=$(pg_bin) || return 1
    as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w -s stop >/dev/null
}

# Start a cluster again on its data (after stop -m immediate: crash recovery).
pg_resume() { # DIR
    local dir=$1 bin
    bin=$(pg_bin) || return 1
    dir=$(cd "$dir" && pwd)
    pg_run "$dir" "$bin"
}

pg_stop() { # DIR
    local dir=$1 bin pid
    [ -d "$dir" ] || return 0
    bin=$(pg_bin) || bin=
    if [ -f "$dir/data/postmaster.pid" ]; then
        pid=$(head -1 "$dir/data/postmaster.pid")
        if [ -z "$bin" ] || ! as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w -s stop >/dev/null 2>&1; then
            # pg_ctl failed (or is gone): the postmaster by its PID.
            if [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; then
                for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
                kill -KILL "$pid" 2>/dev/null
            fi
        fi
    fi
    rm -rf "$dir"
}

case "${1:-}" in
start) [ $# = 2 ] || { echo "usage: $0 start DIR" >&2; exit 2; }
       pg_start "$2" ;;
stop)  [ $# = 2 ] || { echo "usage: $0 stop DIR" >&2; exit 2; }
       pg_stop "$2" ;;
crash) [ $# = 2 ] || { echo "usage: $0 crash DIR" >&2; exit 2; }
       pg_crash "$2" ;;
resume) [ $# = 2 ] || { echo "usage: $0 resume DIR" >&2; exit 2; }
       pg_resume "$2" ;;
*)     echo "usage: $0 start DIR | stop DIR | crash DIR | resume DIR" >&2; exit 2 ;;
esac
