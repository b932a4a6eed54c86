#!/usr/bin/env bash
# chroot.sh: install the .deb into a throwaway bare Debian 12 (debootstrap
# --variant=minbase, from the machine's own apt source) with apt, so its
# dependencies resolve as on a new server, then run it as knowhub.service
# would (user knowhub, group www-data, umask 077, socket in /run/knowhub)
# behind the packaged nginx site, and fetch the panel, /api/health, an
# authenticated list and /metrics. Needs root and the Debian archive; takes
# about two minutes, so ./test.sh does not run it: run it by hand after
#   cmake --build build --target package
# Prints "chroot: N passed, N failed". KNOWHUB_KEEP_TEST_DATA=1 keeps the root.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DEB=$(ls "$ROOT"/build/knowhub_*_amd64.deb 2>/dev/null | tail -1)
PORT=${CHROOT_PORT:-18499}
passed=0
failed=0
ok() { echo "ok    $1"; passed=$((passed + 1)); }
fail() { echo "FAIL  $1"; shift; printf '      %s\n' "$@"; failed=$((failed + 1)); }

[ "$(id -u)" = 0 ] || { echo "chroot.sh: needs root"; echo "chroot: 0 passed, 1 failed"; exit 1; }
[ -n "$DEB" ] || { echo "chroot.sh: no build/knowhub_*.deb (cmake --build build --target package)"; echo "chroot: 0 passed, 1 failed"; exit 1; }
command -v debootstrap >/dev/null || apt-get install -y -q debootstrap >/dev/null || exit 1
# The archive this machine installs from (never a name written here).
mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" {print $2; exit}' /etc/apt/sources.list 2>/dev/null)

R=$(mktemp -d /tmp/knowhub-chroot.XXXXXX)
chmod 0755 "$R" # its / : the service user and nginx's workers walk through it
cleanup() {
    chroot "$R" bash -c '[ -f /run/nginx.pid ] && nginx -s stop; [ -f /tmp/knowhub.pid ] && kill "$(cat /tmp/knowhub.pid)"' 2>/dev/null
    sleep 1
    umount "$R/proc" 2>/dev/null
    [ -n "${KNOWHUB_KEEP_TEST_DATA:-}" ] || rm -rf "$R"
}
trap cleanup EXIT

start=$(date +%s)
if debootstrap --variant=minbase bookworm "$R" "$mirror" > "$R.debootstrap.log" 2>&1; then
    ok "debootstrap: a bare Debian 12 in $(($(date +%s) - start)) s"
else
    fail "debootstrap" "$(tail -5 "$R.debootstrap.log")"
    echo "chroot: $passed passed, $failed failed"
    exit 1
fi
rm -f "$R.debootstrap.log"
mount -t proc proc "$R/proc"
cp /etc/resolv.conf "$R/etc/resolv.conf"
cp "$DEB" "$R/tmp/knowhub.deb"

start=$(date +%s)
if chroot "$R" bash -c 'export DEBIAN_FRONTEND=noninteractive; apt-get update -q && apt-get install -y -q /tmp/knowhub.deb nginx-light' > "$R/tmp/install.log" 2>&1; then
    ok "apt-get install of the .deb and nginx-light with their dependencies in $(($(date +%s) - start)) s"
else
    fail "apt-get install" "$(tail -10 "$R/tmp/install.log")"
fi

# postinst: the service user and its data directory.
got=$(chroot "$R" bash -c 'id -u knowhub >/dev/null && stat -c "%a %U:%G" /var/lib/knowhub')
[ "$got" = "750 knowhub:knowhub" ] && ok "postinst made user knowhub and /var/lib/knowhub 0750" ||
    fail "postinst" "got '$got'"

cat > "$R/tmp/start.sh" <<EOF
set -e
sed -i 's/listen 127.0.0.1:8080;/listen 127.0.0.1:$PORT;/' /etc/nginx/sites-available/knowhub
ln -sf /etc/nginx/sites-available/knowhub /etc/nginx/sites-enabled/knowhub
rm -f /etc/nginx/sites-enabled/default
mkdir -p /run/knowhub && chown knowhub:www-data /run/knowhub && chmod 0750 /run/knowhub
cd /
setpriv --reuid=knowhub --regid=www-data --init-groups bash -c 'umask 077; set -a; . /etc/default/knowhub; KNOWHUB_DATA=/var/lib/knowhub KNOWHUB_SOCKET=/run/knowhub/knowhub.sock exec /usr/bin/knowhub serve' > /tmp/knowhub.log 2>&1 &
echo \$! > /tmp/knowhub.pid
for i in \$(seq 100); do [ -S /run/knowhub/knowhub.sock ] && break; sleep 0.1; done
nginx -t
nginx
EOF
if chroot "$R" bash /tmp/start.sh > "$R/tmp/start.log" 2>&1; then
    ok "knowhub as the unit runs it, nginx with the packaged site enabled (nginx -t)"
else
    fail "start" "$(tail -5 "$R/tmp/start.log")" "$(tail -5 "$R/tmp/knowhub.log" 2>/dev/null)"
fi
sleep 0.5

base=http://127.0.0.1:$PORT
cmp -s <(curl -s "$base/") "$R/usr/share/knowhub/web/index.html" && ok "GET / is the packaged panel" ||
    fail "GET /" "$(curl -s "$base/" | head -3)"
health=$(curl -s "$base/api/health")
[[ $health == *'"ok":true'* ]] && ok "GET /api/health: $health" || fail "GET /api/health" "$health"
token=$(cat "$R/var/lib/knowhub/admin.token" 2>/dev/null)
list=$(curl -s -H "Authorization: Bearer $token" "$base/api/knowledge?limit=1")
[[ $list == *'"status":"success"'* ]] && ok "an authenticated list with the first start's admin token" ||
    fail "GET /api/knowledge" "$list"
curl -s "$base/metrics" | grep -q '^knowhub_build_info{' && ok "GET /metrics from loopback" ||
    fail "GET /metrics" "$(curl -s "$base/metrics" | head -3)"
modes=$(chroot "$R" stat -c "%a %U:%G" /run/knowhub/knowhub.sock /var/lib/knowhub/knowhub.db 2>&1 | tr '\n' ' ')
[ "$modes" = "660 knowhub:www-data 600 knowhub:www-data " ] && ok "socket 660 for www-data, database 600" ||
    fail "modes" "$modes"

echo "chroot: $passed passed, $failed failed"
[ "$failed" = 0 ]
