#!/usr/bin/env bash
# deps.sh: make sure the Debian packages KnowHub needs are installed.
# Sourced by run.sh and test.sh:  deps_ensure [extra packages...]
# As root it installs what is missing with apt-get; otherwise it prints the
# apt-get line to run and fails.
set -u

# nginx: the front end; curl and jq: what the examples of README.md and docs/ use
# (test.sh's docs stage runs them).
DEPS_BUILD="build-essential cmake pkg-config libfcgi-dev libjson-c-dev libsqlite3-dev \
libcurl4-openssl-dev libyaml-dev libsodium-dev libcmark-dev libarchive-dev libpq-dev libstemmer-dev nginx curl jq"
# For the tests only: promtool (package prometheus, about 50 s to install on
# Debian 12) checks GET /metrics in tests/http/metrics.test.mjs, which skips
# that one check when it is missing. postgresql: the HTTP suite's second pass
# (test.sh) on throwaway clusters (scripts/pgcluster.sh); its system cluster
# is neither used nor started by the tests. python3-yaml: PyYAML reads the
# front matter of the interop exports in tests/http/interop.test.mjs (a YAML
# reader that is not knowhub's own).
DEPS_TEST="prometheus postgresql python3-yaml"

deps_missing() { # PACKAGES...
    local p missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
            missing+=("$p")
    done
    echo "${missing[@]:-}"
}

deps_ensure() { # [EXTRA PACKAGES...]
    # shellcheck disable=SC2086
    local missing
    missing=$(deps_missing $DEPS_BUILD "$@")
    [ -z "$missing" ] && return 0
    if [ "$(id -u)" != 0 ]; then
        echo "Missing packages: $missing" >&2
        echo "Install them with:  sudo apt-get install -y $missing" >&2
        return 1
    fi
    echo "Installing: $missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    local policy=""
    # postgresql's postinst starts the system cluster with invoke-rc.d and
    # fails the install when that fails; in a container without systemd (and
    # without a policy-rc.d) a temporary policy-rc.d forbids the start. The
    # tests never use that cluster.
    if [[ " $missing " == *" postgresql"* ]] && [ ! -d /run/systemd/system ] &&
        [ ! -e /usr/sbin/policy-rc.d ]; then
        policy=/usr/sbin/policy-rc.d
        printf '#!/bin/sh\n# temporary, from knowhub scripts/deps.sh\nexit 101\n' > "$policy"
        chmod 755 "$policy"
    fi
    local rc=0
    # shellcheck disable=SC2086
    if ! apt-get install -y -qq $missing >/dev/null 2>&1; then
        apt-get update -qq >/dev/null 2>&1 || true
        # shellcheck disable=SC2086
        apt-get install -y -qq $missing >/dev/null || {
            echo "apt-get could not install: $missing" >&2
            rc=1
        }
    fi
    [ -n "$policy" ] && rm -f "$policy"
    return $rc
}
