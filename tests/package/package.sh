#!/usr/bin/env bash
# package.sh: build the Debian package and inspect it: its files and modes,
# its control fields and maintainer scripts (run against stub commands, so
# nothing on this machine changes), the systemd unit (systemd-analyze verify),
# the nginx site (nginx -t inside a Debian-like nginx.conf), and a live run of
# the packaged binary behind nginx with the packaged site, from `dpkg-deb -x`
# in a temporary directory. Prints one line per check and ends with
# "package: N passed, N failed"; exits non-zero on any failure.
#   tests/package/package.sh [BUILD_DIR]   (default build; configured already)
#   KNOWHUB_KEEP_TEST_DATA=1 ...           keep the temporary directory
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
T=$(mktemp -d /tmp/knowhub-package.XXXXXX)
passed=0
failed=0
KNOWHUB_PID=
NGINX_PID=

cleanup() {
    [ -n "$NGINX_PID" ] && kill -TERM "$NGINX_PID" 2>/dev/null && wait "$NGINX_PID" 2>/dev/null
    [ -n "$KNOWHUB_PID" ] && kill -TERM "$KNOWHUB_PID" 2>/dev/null && wait "$KNOWHUB_PID" 2>/dev/null
    if [ "${KNOWHUB_KEEP_TEST_DATA:-0}" = 1 ]; then
        echo "kept: $T"
    else
        rm -rf "$T"
    fi
}
trap cleanup EXIT

ok() { echo "ok    $1"; passed=$((passed + 1)); }
fail() { # NAME DETAIL...
    echo "FAIL  $1"
    shift
    [ $# -gt 0 ] && printf '      %s\n' "$@"
    failed=$((failed + 1))
}
finish() {
    echo "package: $passed passed, $failed failed"
    [ "$failed" = 0 ]
    exit
}

# --- the package builds -------------------------------------------------------
rm -f "$BUILD"/knowhub_*.deb
if ! cmake --build "$BUILD" --target package > "$T/package.log" 2>&1; then
    fail "cmake --build --target package" "$(tail -5 "$T/package.log")"
    finish
fi
DEB=$(ls "$BUILD"/knowhub_*.deb 2>/dev/null | head -1)
if [ -z "$DEB" ]; then
    fail "the package target writes knowhub_*.deb" "$(tail -5 "$T/package.log")"
    finish
fi
ok "cmake --build --target package: $(basename "$DEB")"

# --- its files and their modes --------------------------------------------------
# dpkg-deb -c: "MODE OWNER SIZE DATE TIME ./PATH"; keep "MODE OWNER PATH".
dpkg-deb -c "$DEB" | awk '{ p = $6; sub(/^\./, "", p); print $1, $2, p }' > "$T/contents"
expect_file() { # MODE PATH
    if grep -qxF -- "$1 root/root $2" "$T/contents"; then
        return 0
    fi
    missing+=("$1 root/root $2 (found: $(grep -F -- " $2" "$T/contents" | head -1))")
}
missing=()
expect_file -rwxr-xr-x /usr/bin/knowhub
expect_file -rw-r--r-- /lib/systemd/system/knowhub.service
expect_file -rw-r--r-- /etc/nginx/sites-available/knowhub
expect_file -rw-r----- /etc/default/knowhub
expect_file -rw-r--r-- /etc/logrotate.d/knowhub
expect_file -rw-r--r-- /usr/share/knowhub/nginx/knowhub_fastcgi.conf
expect_file -rw-r--r-- /usr/share/knowhub/nginx/knowhub_http.conf
expect_file -rw-r--r-- /usr/share/knowhub/nginx/knowhub_server.conf
expect_file -rw-r--r-- /usr/share/knowhub/openapi.yaml
expect_file -rw-r--r-- /usr/share/doc/knowhub/README.md
expect_file -rw-r--r-- /usr/share/doc/knowhub/operations.md
expect_file -rw-r--r-- /usr/share/doc/knowhub/cli.md
expect_file -rw-r--r-- /usr/share/man/man1/knowhub.1.gz
# Every file of the panel and of its strings, as in the tree.
for f in $(cd "$ROOT" && find web i18n -type f | sort); do
    expect_file -rw-r--r-- "/usr/share/knowhub/$f"
done
for d in /usr/share/knowhub/web /usr/share/knowhub/i18n /usr/share/doc/knowhub /usr/share/man/man1; do
    expect_file drwxr-xr-x "$d/"
done
others=$(awk '$2 != "root/root" || ($1 ~ /^-/ && $1 != "-rw-r--r--" && $1 != "-rwxr-xr-x" &&
              !($1 == "-rw-r-----" && $3 == "/etc/default/knowhub")) ||
              ($1 ~ /^d/ && $1 != "drwxr-xr-x")' "$T/contents")
if [ ${#missing[@]} = 0 ] && [ -z "$others" ]; then
    ok "dpkg-deb -c: binary, panel ($(cd "$ROOT" && find web i18n -type f | wc -l) files), openapi.yaml, unit, site, defaults (0640: keys), logrotate, docs, manual page; all root/root, 0755/0644"
else
    fail "dpkg-deb -c: the expected files with their modes" "${missing[@]}" $others
fi

# --- control fields and maintainer scripts --------------------------------------
field() { dpkg-deb -f "$DEB" "$1"; }
bad=()
depends=$(field Depends)
for lib in libc6 libfcgi0ldbl libjson-c5 libsqlite3-0 libcurl4 libyaml-0-2 libsodium23 \
    libcmark0.30.2 libpq5 libstemmer0d libarchive13 adduser; do
    echo "$depends" | tr ',' '\n' | grep -qE "^ *$lib( |$)" || bad+=("Depends lacks $lib: $depends")
done
# Every library the binary links directly (NEEDED) belongs to a package in Depends.
for name in $(readelf -d "$BUILD/knowhub" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    so=$(ldd "$BUILD/knowhub" | awk -v n="$name" '$1 == n { print $3 }')
    pkg=$(dpkg -S "$(readlink -f "$so")" 2>/dev/null | head -1 | cut -d: -f1)
    [ -z "$pkg" ] && pkg=$(dpkg -S "$so" 2>/dev/null | head -1 | cut -d: -f1)
    if [ -z "$pkg" ]; then
        bad+=("$name: no package owns $so")
    elif ! echo "$depends" | tr ',' '\n' | grep -qE "^ *$pkg( |$)"; then
        bad+=("$name ($pkg) is not in Depends")
    fi
done
[ "$(field Recommends)" = nginx ] || bad+=("Recommends: '$(field Recommends)', not nginx")
version=$("$BUILD/knowhub" version | awk 'NR == 1 { print $2 }')
[ "$(field Version)" = "$version" ] || bad+=("Version $(field Version) but knowhub version says $version")
if [ ${#bad[@]} = 0 ]; then
    ok "dpkg-deb -f: Depends ($depends), Recommends nginx, Version $version"
else
    fail "dpkg-deb -f: control fields" "${bad[@]}"
fi

mkdir -p "$T/control"
dpkg-deb -e "$DEB" "$T/control"
bad=()
for s in postinst prerm postrm; do
    [ -x "$T/control/$s" ] || { bad+=("no executable $s"); continue; }
    sh -n "$T/control/$s" || bad+=("$s: shell syntax")
    cmp -s "$T/control/$s" "$ROOT/packaging/debian/$s" || bad+=("$s differs from packaging/debian/$s")
done
printf '%s\n' /etc/default/knowhub /etc/logrotate.d/knowhub /etc/nginx/sites-available/knowhub |
    cmp -s - <(sort "$T/control/conffiles" 2>/dev/null) || bad+=("conffiles: $(cat "$T/control/conffiles" 2>/dev/null)")
dpkg-deb -I "$DEB" > "$T/info"
grep -qE '^ *[0-9]+ bytes, +[0-9]+ lines +\* +postinst' "$T/info" || bad+=("dpkg-deb -I does not list postinst as executable")
if [ ${#bad[@]} = 0 ]; then
    ok "dpkg-deb -I/-e: postinst, prerm, postrm (executable, sh -n), conffiles"
else
    fail "maintainer scripts" "${bad[@]}"
fi

# The maintainer scripts against stub commands: each logs its arguments to
# $T/calls, so what they would do is checked without changing this machine.
STUBS=$T/stubs
mkdir -p "$STUBS"
for c in adduser deluser delgroup install chown chmod rm systemctl deb-systemd-helper \
    deb-systemd-invoke; do
    printf '#!/bin/sh\necho "%s $*" >> "%s/calls"\nexit 0\n' "$c" "$T" > "$STUBS/$c"
done
# getent: the user knowhub exists when STUB_USER=1.
printf '#!/bin/sh\necho "getent $*" >> "%s/calls"\n[ "${STUB_USER:-0}" = 1 ]\n' "$T" > "$STUBS/getent"
chmod 755 "$STUBS"/*
run_script() { # NAME ARGS... (STUB_USER from the caller)
    : > "$T/calls"
    PATH=$STUBS /bin/sh "$T/control/$1" "${@:2}" >> "$T/script.log" 2>&1 ||
        echo "EXIT $?" >> "$T/calls"
}
bad=()
STUB_USER=0 run_script postinst configure
grep -q '^adduser --system .*knowhub$' "$T/calls" || bad+=("postinst configure: no adduser --system ... knowhub")
if [ ! -d /var/lib/knowhub ]; then
    grep -q '^install -d -m 0750 -o knowhub -g knowhub /var/lib/knowhub$' "$T/calls" ||
        bad+=("postinst configure: /var/lib/knowhub not made 0750 knowhub")
fi
grep -q '^chmod 0750 /var/lib/knowhub$' "$T/calls" || bad+=("postinst: no chmod 0750 /var/lib/knowhub")
grep -q '^deb-systemd-helper enable knowhub.service$' "$T/calls" || bad+=("postinst: the unit is not enabled")
grep -qE '^(rm|EXIT)' "$T/calls" && bad+=("postinst: $(grep -E '^(rm|EXIT)' "$T/calls")")
STUB_USER=1 run_script postinst configure 0.0.9
grep -q '^adduser' "$T/calls" && bad+=("postinst upgrade: adduser although the user exists")
STUB_USER=1 run_script postrm remove
grep -qE '^(rm|deluser|EXIT)' "$T/calls" && bad+=("postrm remove touches data or user: $(grep -E '^(rm|deluser|EXIT)' "$T/calls")")
STUB_USER=1 run_script postrm purge
grep -q '^rm -rf /var/lib/knowhub$' "$T/calls" || bad+=("postrm purge: /var/lib/knowhub not removed")
grep -q '^deluser --system .*knowhub$' "$T/calls" || bad+=("postrm purge: the user not removed")
grep -q '^EXIT' "$T/calls" && bad+=("postrm purge failed")
STUB_USER=1 run_script prerm upgrade 0.1.1
grep -q 'stop' "$T/calls" && bad+=("prerm upgrade stops the service")
if [ ${#bad[@]} = 0 ]; then
    ok "maintainer scripts (stub commands): user + 0750 data dir + enable; remove keeps data; purge removes data and user"
else
    fail "maintainer scripts (stub commands)" "${bad[@]}" "$(tail -3 "$T/script.log")"
fi

# --- unpack ---------------------------------------------------------------------
R=$T/root
dpkg-deb -x "$DEB" "$R"

# --- the manual page --------------------------------------------------------------
# knowhub(1), gzipped: groff renders it without a warning (and does warn about
# a broken page, so the check can fail), man -l shows it, and it describes
# every command the packaged binary's `knowhub help` lists.
MAN=$R/usr/share/man/man1/knowhub.1.gz
bad=()
if ! gzip -t "$MAN" 2>/dev/null; then
    bad+=("no gzipped manual page at /usr/share/man/man1/knowhub.1.gz")
else
    if command -v groff >/dev/null; then
        out=$(zcat "$MAN" | LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z 2>&1)
        [ -z "$out" ] || bad+=("groff -man -ww warns: $(head -3 <<<"$out")")
        out=$(printf '.TH X 1\n.SH NAME\n.BOGUS\n' | groff -man -Tutf8 -ww -z 2>&1)
        [ -n "$out" ] || bad+=("groff -ww says nothing about a broken page: this check would pass anything")
    else
        bad+=("groff is not installed (Debian's groff-base, which man-db needs)")
    fi
    if command -v man >/dev/null; then
        page=$(MANWIDTH=100 LC_ALL=C.UTF-8 man -l "$MAN" 2> "$T/man.err") || bad+=("man -l fails: $(head -3 "$T/man.err")")
        [ -s "$T/man.err" ] && bad+=("man -l warns: $(head -3 "$T/man.err")")
        commands=$("$R/usr/bin/knowhub" help | sed -n 's/^  \([a-z-]*\) .*/\1/p')
        [ "$(wc -w <<<"$commands")" -ge 17 ] || bad+=("knowhub help lists only: $commands")
        for c in $commands; do
            grep -qE "^ {7}$c( |$)" <<<"$page" || bad+=("the manual page does not describe '$c' (knowhub help lists it)")
        done
        grep -q '^EXIT STATUS' <<<"$page" || bad+=("the manual page has no EXIT STATUS")
    fi
fi
if [ ${#bad[@]} = 0 ]; then
    ok "knowhub(1): gzipped, groff -ww clean, man -l renders it, every command of knowhub help described"
else
    fail "the manual page" "${bad[@]}"
fi

# --- the systemd unit -----------------------------------------------------------
# systemd-analyze verify needs the binary to exist: a copy of the unit runs the
# unpacked one. It exits 0 on unknown keys and bad values, only printing them,
# so any output fails; a broken copy shows that it does print.
UNIT=$R/lib/systemd/system/knowhub.service
bad=()
for key in 'Type=simple' 'User=knowhub' 'Restart=on-failure' 'ProtectSystem=strict' \
    'PrivateTmp=yes' 'NoNewPrivileges=yes' 'ProtectHome=yes' 'ReadWritePaths=/var/lib/knowhub' \
    'EnvironmentFile=-/etc/default/knowhub' 'RuntimeDirectory=knowhub' 'ExecStart=/usr/bin/knowhub serve' \
    'Environment=KNOWHUB_SOCKET=/run/knowhub/knowhub.sock' 'Environment=KNOWHUB_DATA=/var/lib/knowhub'; do
    grep -qxF "$key" "$UNIT" || bad+=("the unit lacks $key")
done
mkdir -p "$T/unit"
sed "s|^ExecStart=/usr/bin/knowhub|ExecStart=$R/usr/bin/knowhub|" "$UNIT" > "$T/unit/knowhub.service"
if ! out=$(systemd-analyze verify --man=no "$T/unit/knowhub.service" 2>&1) || [ -n "$out" ]; then
    bad+=("systemd-analyze verify: $out")
fi
sed -e 's|^Restart=on-failure|Restart=sometimes|' "$T/unit/knowhub.service" > "$T/unit/knowhub-broken.service"
out=$(systemd-analyze verify --man=no "$T/unit/knowhub-broken.service" 2>&1)
[ -n "$out" ] || bad+=("systemd-analyze verify says nothing about a broken unit: this check would pass anything")
if [ ${#bad[@]} = 0 ]; then
    ok "systemd-analyze verify knowhub.service: clean (and it does report a broken copy)"
else
    fail "the systemd unit" "${bad[@]}"
fi

# --- the nginx site -------------------------------------------------------------
# A Debian-like nginx.conf (the same http-level directives as Debian's, so a
# duplicate in the site fails) including the packaged site, its paths moved
# into $T and its port onto a free one.
free_port() {
    local p
    while :; do
        p=$((20000 + RANDOM % 20000))
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
    done
}
PORT=$(free_port)
# The packaged site and the parts it includes, with every path under $T or
# the unpacked package, the socket SOCK and the port PORT, into DIR.
adapt_site() { # DIR SOCK PORT
    local dir=$1 f
    mkdir -p "$dir/sites-enabled" "$dir/share"
    for f in "$R/etc/nginx/sites-available/knowhub" "$R"/usr/share/knowhub/nginx/*.conf; do
        sed -e "s|/usr/share/knowhub/nginx/|$dir/share/|g" \
            -e "s|/usr/share/knowhub/|$R/usr/share/knowhub/|g" \
            -e "s|unix:/run/knowhub/knowhub.sock|unix:$2|" \
            -e "s|/var/log/nginx/|$T/nginx/logs/|g" \
            -e "s|listen 127.0.0.1:8080;|listen 127.0.0.1:$3;|" "$f" \
            > "$dir/$([ "${f##*/}" = knowhub ] && echo sites-enabled/knowhub || echo "share/${f##*/}")"
    done
}
mkdir -p "$T/nginx/logs" "$T/nginx/tmp" "$T/run"
adapt_site "$T/nginx" "$T/run/knowhub.sock" "$PORT"
cat > "$T/nginx/nginx.conf" <<EOF
# As Debian's /etc/nginx/nginx.conf, with every path under $T.
master_process off;
daemon off;
pid $T/nginx/nginx.pid;
error_log $T/nginx/logs/error.log;
events { worker_connections 256; }
http {
    sendfile on;
    tcp_nopush on;
    types_hash_max_size 2048;
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    ssl_protocols TLSv1 TLSv1.1 TLSv1.2 TLSv1.3;
    ssl_prefer_server_ciphers on;
    access_log $T/nginx/logs/access.log;
    gzip on;
    client_body_temp_path $T/nginx/tmp/client_body;
    proxy_temp_path $T/nginx/tmp/proxy;
    fastcgi_temp_path $T/nginx/tmp/fastcgi;
    uwsgi_temp_path $T/nginx/tmp/uwsgi;
    scgi_temp_path $T/nginx/tmp/scgi;
    include $T/nginx/conf.d/*.conf;
    include $T/nginx/sites-enabled/*;
}
EOF
mkdir -p "$T/nginx/conf.d"
bad=()
nginx -t -p "$T/nginx" -c "$T/nginx/nginx.conf" -e stderr > "$T/nginx-t.log" 2>&1 ||
    bad+=("nginx -t: $(grep -v 'syntax is ok\|test is successful' "$T/nginx-t.log")")
# The same maps, headers, answers and locations as ./run.sh's nginx: both
# include the parts rendered from nginx/knowhub_{http,server}.conf.in.
for part in knowhub_http knowhub_server; do
    grep -q "^ *include /usr/share/knowhub/nginx/$part.conf;" "$R/etc/nginx/sites-available/knowhub" ||
        bad+=("the site does not include /usr/share/knowhub/nginx/$part.conf")
    grep -q "@[A-Z_]*@" "$R/usr/share/knowhub/nginx/$part.conf" &&
        bad+=("$part.conf keeps a placeholder: $(grep -o '@[A-Z_]*@' "$R/usr/share/knowhub/nginx/$part.conf" | head -1)")
done
grep -qE "^ *(location|error_page|add_header|map|upstream) " "$R/etc/nginx/sites-available/knowhub" &&
    bad+=("the site repeats what the shared parts hold: $(grep -E '^ *(location|error_page|add_header|map|upstream) ' "$R/etc/nginx/sites-available/knowhub" | head -1)")
if [ ${#bad[@]} = 0 ]; then
    ok "nginx -t accepts the site inside a Debian-like nginx.conf; it includes the parts ./run.sh's nginx includes"
else
    fail "the nginx site" "${bad[@]}"
fi

# --- the unpacked package, live ------------------------------------------------
# The packaged binary on a temporary data directory with the socket where the
# site expects it, behind nginx with the packaged site; the panel, its strings
# and the API answer.
BIN=$R/usr/bin/knowhub
DATA=$T/data
(umask 077; mkdir -p "$DATA")
KNOWHUB_DATA=$DATA KNOWHUB_SOCKET=$T/run/knowhub.sock KNOWHUB_THREADS=2 \
    "$BIN" serve 2> "$T/knowhub.log" &
KNOWHUB_PID=$!
for _ in $(seq 100); do [ -S "$T/run/knowhub.sock" ] && break; sleep 0.05; done
nginx -p "$T/nginx" -c "$T/nginx/nginx.conf" -e stderr 2> "$T/nginx.log" &
NGINX_PID=$!
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.05; done
BASE=http://127.0.0.1:$PORT
bad=()
[ -S "$T/run/knowhub.sock" ] || bad+=("no socket at KNOWHUB_SOCKET: $(tail -3 "$T/knowhub.log")")
[ -f "$DATA/admin.token" ] || bad+=("no admin.token after the first start")
curl -sS -o "$T/index.html" -D "$T/index.h" "$BASE/" 2>> "$T/curl.log"
cmp -s "$T/index.html" "$ROOT/web/index.html" || bad+=("GET / is not web/index.html: $(head -c 200 "$T/index.html" 2>/dev/null)")
grep -qi '^content-security-policy:' "$T/index.h" || bad+=("GET /: no Content-Security-Policy")
curl -sS -o "$T/zh.json" "$BASE/i18n/zh/common.json" 2>> "$T/curl.log"
cmp -s "$T/zh.json" "$ROOT/i18n/zh/common.json" || bad+=("GET /i18n/zh/common.json is not i18n/zh/common.json")
type=$(curl -sS -o "$T/openapi.yaml" -w '%{content_type}' "$BASE/api/openapi.yaml" 2>> "$T/curl.log")
{ cmp -s "$T/openapi.yaml" "$ROOT/docs/openapi.yaml" && case $type in application/yaml*) true ;; *) false ;; esac; } ||
    bad+=("GET /api/openapi.yaml is not docs/openapi.yaml as application/yaml (got '$type')")
# The unit's readiness check (ExecStartPost, "$$" unescaped as systemd does) sees the socket.
post=$(sed -n 's/^ExecStartPost=\/bin\/sh -c //p' "$UNIT" | sed -e "s/^'//" -e "s/'$//" -e 's/\$\$/$/g')
{ [ -n "$post" ] && KNOWHUB_SOCKET=$T/run/knowhub.sock timeout 5 /bin/sh -c "$post"; } ||
    bad+=("the unit's ExecStartPost readiness check fails on a live socket: $post")
code=$(curl -sS -o "$T/health.json" -w '%{http_code}' "$BASE/api/health" 2>> "$T/curl.log")
{ [ "$code" = 200 ] && grep -q '"status":"success"' "$T/health.json"; } ||
    bad+=("GET /api/health: $code $(head -c 200 "$T/health.json")")
code=$(printf 'header = "Authorization: Bearer %s"\n' "$(cat "$DATA/admin.token" 2>/dev/null)" |
    curl -sS -K - -o "$T/knowledge.json" -w '%{http_code}' "$BASE/api/knowledge" 2>> "$T/curl.log")
[ "$code" = 200 ] || bad+=("GET /api/knowledge with the admin token: $code $(head -c 200 "$T/knowledge.json")")
code=$(curl -sS -o "$T/mcp.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    --data '{"jsonrpc":"2.0","id":1,"method":"ping"}' "$BASE/mcp" 2>> "$T/curl.log")
[ "$code" = 401 ] || bad+=("POST /mcp without a token: $code, not 401 (is /mcp passed to knowhub?)")
link=$(KNOWHUB_DATA=$DATA KNOWHUB_PORT=$PORT "$BIN" login-link 2>&1)
case $link in "$BASE/#token=kh_"*) ;; *) bad+=("knowhub login-link: $link") ;; esac
token=$(KNOWHUB_DATA=$DATA "$BIN" token create --space default --role agent 2>&1)
case $token in kh_*) ;; *) bad+=("knowhub token create: $token") ;; esac
# The content commands: local mode (the admin token), then remote with the agent's token file.
id=$(echo "Packaged CLI content." | KNOWHUB_DATA=$DATA KNOWHUB_PORT=$PORT "$BIN" add --title "Packaged CLI note" 2>&1)
case $id in knowledge-*) ;; *) bad+=("knowhub add (local mode): $id") ;; esac
(umask 077; printf '%s\n' "$token" > "$T/agent.token")
out=$("$BIN" get "$id" --url "$BASE" --token-file "$T/agent.token" 2>&1)
case $out in "Packaged CLI note"*) ;; *) bad+=("knowhub get --url --token-file: $out") ;; esac
kill -TERM "$NGINX_PID" 2>/dev/null; wait "$NGINX_PID" 2>/dev/null; NGINX_PID=
kill -TERM "$KNOWHUB_PID" 2>/dev/null; wait "$KNOWHUB_PID"; rc=$?; KNOWHUB_PID=
[ "$rc" = 0 ] || bad+=("knowhub serve exited $rc on SIGTERM")
if [ ${#bad[@]} = 0 ]; then
    ok "unpacked package live behind nginx + the packaged site: /, /i18n/, /api/openapi.yaml, /api/health, /api/knowledge, /mcp, login-link, token create, knowhub add (local) and get (--url)"
else
    fail "the unpacked package, live" "${bad[@]}" "$(tail -3 "$T/nginx.log")"
fi

# --- the unit's users and modes, live (as root) ----------------------------------
# What knowhub.service sets up, without systemd: knowhub as an unprivileged
# user (uid 64123 stands for knowhub) with the primary group www-data and umask
# 077, its data directory 0750 user:user as postinst makes it, its socket in a
# runtime directory 0750 user:www-data; nginx's master as root with
# `user www-data`, as Debian runs it. The workers must reach the socket and
# nothing else.
if [ "$(id -u)" = 0 ] && getent group www-data >/dev/null && command -v setpriv >/dev/null; then
    bad=()
    KUID=64123
    chmod 0711 "$T" # traversable, as / and /run are
    PDATA=$T/var-lib-knowhub PRUN=$T/run-knowhub
    install -d -m 0750 -o "$KUID" -g "$KUID" "$PDATA"
    install -d -m 0750 -o "$KUID" -g www-data "$PRUN"
    PPORT=$(free_port)
    mkdir -p "$T/pnginx/conf.d"
    adapt_site "$T/pnginx" "$PRUN/knowhub.sock" "$PPORT"
    sed -e 's/^master_process off;/user www-data www-data;\nworker_processes 1;/' \
        -e "s|$T/nginx/sites-enabled|$T/pnginx/sites-enabled|" -e "s|$T/nginx/nginx.pid|$T/pnginx/nginx.pid|" \
        "$T/nginx/nginx.conf" > "$T/pnginx/nginx.conf"
    (umask 077; exec setpriv --reuid="$KUID" --regid="$(getent group www-data | cut -d: -f3)" --clear-groups \
        env KNOWHUB_DATA="$PDATA" KNOWHUB_SOCKET="$PRUN/knowhub.sock" KNOWHUB_THREADS=2 \
        "$BIN" serve) 2> "$T/pknowhub.log" &
    KNOWHUB_PID=$!
    for _ in $(seq 100); do [ -S "$PRUN/knowhub.sock" ] && break; sleep 0.05; done
    nginx -p "$T/pnginx" -c "$T/pnginx/nginx.conf" -e stderr 2> "$T/pnginx.log" &
    NGINX_PID=$!
    for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PPORT") 2>/dev/null && break; sleep 0.05; done
    sock=$(stat -c '%a %u %G' "$PRUN/knowhub.sock" 2>/dev/null)
    [ "$sock" = "660 $KUID www-data" ] || bad+=("the socket is '$sock', not '660 $KUID www-data': $(tail -2 "$T/pknowhub.log")")
    code=$(curl -sS -o "$T/phealth.json" -w '%{http_code}' "http://127.0.0.1:$PPORT/api/health" 2>> "$T/curl.log")
    [ "$code" = 200 ] || bad+=("GET /api/health through nginx's www-data workers: $code $(grep -m1 -i 'denied\|connect()' "$T/pnginx/logs/knowhub-error.log" 2>/dev/null)")
    code=$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PPORT/" 2>> "$T/curl.log")
    [ "$code" = 200 ] || bad+=("GET / (the panel) as www-data: $code")
    for f in knowhub.db admin.token; do
        m=$(stat -c '%a' "$PDATA/$f" 2>/dev/null)
        [ "$m" = 600 ] || bad+=("$f is '$m', not 600")
    done
    setpriv --reuid=33 --regid=33 --clear-groups cat "$PDATA/knowhub.db" > /dev/null 2>&1 &&
        bad+=("www-data can read the database")
    kill -TERM "$NGINX_PID" 2>/dev/null; wait "$NGINX_PID" 2>/dev/null; NGINX_PID=
    kill -TERM "$KNOWHUB_PID" 2>/dev/null; wait "$KNOWHUB_PID"; rc=$?; KNOWHUB_PID=
    [ "$rc" = 0 ] || bad+=("knowhub (unprivileged) exited $rc on SIGTERM")
    if [ ${#bad[@]} = 0 ]; then
        ok "as the unit runs it: knowhub unprivileged (group www-data, umask 077), nginx workers www-data reach the socket (660) and the panel, not the database (600)"
    else
        fail "the unit's users and modes, live" "${bad[@]}"
    fi
else
    echo "skip  the unit's users and modes, live (needs root, setpriv and the group www-data)"
fi

# --- logrotate --------------------------------------------------------------------
if command -v logrotate >/dev/null; then
    mkdir -p "$T/lr/logs"
    # the files knowhub writes there (fcgi/app/main.c: logs/access.jsonl, logs/audit.jsonl)
    echo '{}' > "$T/lr/logs/access.jsonl"
    echo '{}' > "$T/lr/logs/audit.jsonl"
    sed -e "s|/var/lib/knowhub/|$T/lr/|" -e '/^ *su /d' "$R/etc/logrotate.d/knowhub" > "$T/lr/knowhub.conf"
    if logrotate -d -s "$T/lr/state" "$T/lr/knowhub.conf" > "$T/lr/out" 2>&1 &&
        ! grep -qiE 'error|unknown' "$T/lr/out" && grep -q 'logs/access.jsonl' "$T/lr/out" &&
        grep -q 'logs/audit.jsonl' "$T/lr/out"; then
        ok "logrotate -d accepts /etc/logrotate.d/knowhub, and it rotates access.jsonl and audit.jsonl"
    else
        fail "logrotate -d /etc/logrotate.d/knowhub" "$(grep -iE 'error|unknown' "$T/lr/out" | head -3)"
    fi
else
    fail "logrotate is not installed (scripts/deps.sh: deps_ensure logrotate)"
fi

finish
