#!/usr/bin/env bash
# Builds (or reuses) the base image the image tests pass as BASE/RUNTIME to images/*.Dockerfile,
# because no container registry is reachable here: a minimal Debian 12 made by mmdebstrap from
# the Debian mirror, plus THIS machine's Node (binary, headers, npm) copied to /usr/local, the
# layout of the node:*-bookworm-slim images, and /nodejs/bin/node, the path of distroless.
# Debian 12's own nodejs package is 18.x, below package.json's engines (>=20.9), so the host's
# Node (the one the rest of the tests run on) is copied instead. The machine's CA bundle goes
# in too, with a global npmrc pointing npm at it: `npm ci` in the build stage then trusts what
# this machine's npm trusts (an egress proxy's CA, where there is one). The real base trusts
# only Debian's CAs.
# Prints the image name. Cached: in buildah's storage under a tag keyed by the package list,
# the Node version and this script, and as a tarball under $CONNDRAIN_IMAGE_CACHE
# (default /var/tmp/conndrain-images) so a wiped image store rebuilds without the mirror.
set -euo pipefail
PACKAGES=ca-certificates,libstdc++6
SUITE=bookworm
MIRROR=${CONNDRAIN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE=${CONNDRAIN_IMAGE_CACHE:-/var/tmp/conndrain-images}
node_bin=$(command -v node)
node_bin=$(readlink -f "$node_bin")
node_prefix=$(dirname "$(dirname "$node_bin")")
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
headers="$node_prefix/include/node"
[ -f "$headers/node_api.h" ] || { echo "offline-base: no Node headers at $headers" >&2; exit 1; }
ca_bundle=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
key=$( { echo "$PACKAGES $SUITE"; "$node_bin" --version; cat "$0" "$ca_bundle"; } | sha256sum | cut -c1-16)
image="localhost/conndrain-offline-base:$key"
if buildah inspect --type image "$image" >/dev/null 2>&1; then echo "$image"; exit 0; fi
mkdir -p "$CACHE"
tarball="$CACHE/base-$key.tar"
if [ ! -f "$tarball" ]; then
  mmdebstrap --quiet --variant=minbase --include="$PACKAGES" \
    --customize-hook="mkdir -p \"\$1/usr/local/bin\" \"\$1/usr/local/lib/node_modules\" \"\$1/usr/local/include\" \"\$1/nodejs/bin\"" \
    --customize-hook="cp -a '$node_bin' \"\$1/usr/local/bin/node\"" \
    --customize-hook="cp -a '$npm_dir' \"\$1/usr/local/lib/node_modules/npm\"" \
    --customize-hook="cp -a '$headers' \"\$1/usr/local/include/node\"" \
    --customize-hook="ln -s ../lib/node_modules/npm/bin/npm-cli.js \"\$1/usr/local/bin/npm\"" \
    --customize-hook="ln -s ../lib/node_modules/npm/bin/npx-cli.js \"\$1/usr/local/bin/npx\"" \
    --customize-hook="ln -s /usr/local/bin/node \"\$1/nodejs/bin/node\"" \
    --customize-hook="cp '$ca_bundle' \"\$1/etc/ssl/certs/ca-certificates.crt\"" \
    --customize-hook="mkdir -p \"\$1/usr/local/etc\" && echo cafile=/etc/ssl/certs/ca-certificates.crt > \"\$1/usr/local/etc/npmrc\"" \
    --customize-hook="rm -rf \"\$1/usr/share/doc\" \"\$1/usr/share/man\" \"\$1/usr/share/locale\"" \
    "$SUITE" "$tarball.tmp.tar" "$MIRROR" >&2
  mv "$tarball.tmp.tar" "$tarball"
fi
ctr=$(buildah from scratch)
trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
buildah add --quiet "$ctr" "$tarball" / >/dev/null
buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd node "$ctr"
buildah commit --quiet "$ctr" "$image" >/dev/null
echo "$image"
