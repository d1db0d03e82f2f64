#!/usr/bin/env bash
# The servers of the CI matrix beside Debian 12's Redis 7.0 (docs/TEST-SUITE.md, "Servers"): Redis 8.0 and
# Valkey 8.1, built from the upstream tarballs that Debian 13 (trixie) ships in its source packages. Nothing
# prebuilt is downloaded: apt fetches the source (checked against trixie's signed Sources index), `make`
# builds it. Each build is cached under ~/.cache/nestjs-distributed-lock/servers/<server>-<version>/, so a
# machine builds each version once (1.5 to 2.5 minutes each on 2 cores).
#
#   scripts/servers.sh build redis|valkey   builds if needed; prints the folder holding the binaries
#   scripts/servers.sh bin redis|valkey     prints that folder if it is built (exit 1 if not)
#
# The folder holds redis-server and redis-cli (Valkey's build has both names beside valkey-server and
# valkey-cli), so REDIS_SERVER_BIN=<dir>/redis-server REDIS_CLI_BIN=<dir>/redis-cli point the harness at it.
# Sentinels run as `<server> <conf> --sentinel` (test/support/redis-server.ts), which both servers take.
set -euo pipefail

# The versions trixie carries. A point release of trixie that moves to another upstream version changes the
# tarball's name; the build then stops with a message saying so, rather than testing an unnamed version.
declare -A VERSION=([redis]=8.0.2 [valkey]=8.1.1)
declare -A TARBALL=([redis]='redis_8.0.2.orig.tar.gz' [valkey]='valkey_8.1.1+dfsg1.orig.tar.xz')

cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/nestjs-distributed-lock/servers"

usage() {
  echo "usage: $0 build|bin redis|valkey" >&2
  exit 2
}

[ $# -eq 2 ] || usage
action=$1
server=$2
[ -n "${VERSION[$server]:-}" ] || usage
version=${VERSION[$server]}
dir="$cache_root/$server-$version"

built() {
  [ -x "$dir/bin/redis-server" ] && [ -x "$dir/bin/redis-cli" ]
}

case "$action" in
  bin)
    built || {
      echo "$server $version is not built: run $0 build $server" >&2
      exit 1
    }
    echo "$dir/bin"
    exit 0
    ;;
  build) ;;
  *) usage ;;
esac

if built; then
  echo "$dir/bin"
  exit 0
fi

# A deb-src line for trixie, beside the machine's own (binary) suites: only source packages come from it, so
# no installed package changes.
src_list=/etc/apt/sources.list.d/nestjs-distributed-lock-trixie-src.sources
if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ || ! apt-cache showsrc "$server" 2>/dev/null | grep -q "^Version: .*$version"; then
  cat >"$src_list" <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  apt-get update -qq >&2
fi
# The compilers, and libssl-dev for BUILD_TLS=yes (the TLS specs run on every server of the matrix).
missing=()
for pkg in build-essential pkg-config libssl-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# apt hands the download to its unprivileged _apt user, which needs to write here.
chmod 777 "$work"
cd "$work"
# Only the upstream tarball is needed. apt checks it against the signed index; the .dsc and Debian's own
# patches are not used (a plain upstream build), and a mirror that lags on those does not stop the build.
apt-get source --download-only "$server" >&2 || true
if [ ! -f "${TARBALL[$server]}" ]; then
  echo "servers.sh: apt-get source $server brought no ${TARBALL[$server]} (found: $(ls))." >&2
  echo "servers.sh: trixie may have moved to another upstream version; update VERSION and TARBALL." >&2
  exit 1
fi
tar xf "${TARBALL[$server]}"
cd "$server-$version"
start=$(date +%s)
# nice: the machine is shared; -j2 for its two cores. MALLOC and the rest stay upstream's defaults.
nice make -j2 BUILD_TLS=yes >"$work/make.log" 2>&1 || {
  tail -40 "$work/make.log" >&2
  echo "servers.sh: make failed for $server $version" >&2
  exit 1
}
rm -rf "$dir.tmp"
mkdir -p "$dir.tmp/bin"
if [ "$server" = valkey ]; then
  # Valkey's build names its binaries valkey-*; redis-* links (what `make install` would add) let the harness
  # take either server the same way.
  cp src/valkey-server src/valkey-cli "$dir.tmp/bin/"
  ln -s valkey-server "$dir.tmp/bin/redis-server"
  ln -s valkey-cli "$dir.tmp/bin/redis-cli"
else
  cp src/redis-server src/redis-cli "$dir.tmp/bin/"
fi
"$dir.tmp/bin/redis-server" --version >"$dir.tmp/VERSION"
echo "built in $(($(date +%s) - start)) s on $(nproc) cores" >>"$dir.tmp/VERSION"
rm -rf "$dir"
mv "$dir.tmp" "$dir"
cat "$dir/VERSION" >&2
echo "$dir/bin"
