#!/usr/bin/env bash
# offline-base-foreign.sh ARCH: the offline base of offline-base.sh for another architecture
# (Debian name: arm64), for the multi-arch image build (scripts/images) on a machine that can
# reach no container registry. Same layout (Debian 12 minbase, Node at /usr/local, npm, the
# Node headers node-gyp builds against, /nodejs/bin/node), same Node version as this machine's,
# but the Node binary and headers are that architecture's: the npm registry's
# node-linux-<arch> package (the binaries the `node` npm package installs; nodejs.org itself is
# not reachable here), fetched with `npm pack` and cached. npm is JavaScript: this machine's
# copy. mmdebstrap runs the foreign Debian's maintainer scripts through qemu-user-static, so
# binfmt_misc must have the architecture's qemu handler registered (scripts/images/binfmt.ts
# does it, or says why it cannot).
# Prints the image name. Cached like offline-base.sh (buildah storage, then tarball).
set -euo pipefail
ARCH=${1:?usage: offline-base-foreign.sh ARCH (Debian architecture name, e.g. arm64)}
PACKAGES=ca-certificates,libstdc++6
SUITE=bookworm
MIRROR=${CONNDRAIN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE=${CONNDRAIN_IMAGE_CACHE:-/var/tmp/conndrain-images}
case "$ARCH" in
  arm64) node_arch=arm64 ;;
  amd64) node_arch=x64 ;;
  *) echo "offline-base-foreign: no Node package known for Debian architecture $ARCH" >&2; exit 1 ;;
esac
node_version=$(node --version)
node_version=${node_version#v}
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
ca_bundle=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
key=$( { echo "$PACKAGES $SUITE $ARCH $node_version"; cat "$0" "$ca_bundle"; } | sha256sum | cut -c1-16)
image="localhost/conndrain-offline-base:$key-$ARCH"
if buildah inspect --type image "$image" >/dev/null 2>&1; then echo "$image"; exit 0; fi
mkdir -p "$CACHE"
node_tgz="$CACHE/node-linux-$node_arch-$node_version.tgz"
if [ ! -f "$node_tgz" ]; then
  (cd "$CACHE" && npm pack --silent "node-linux-$node_arch@$node_version" >&2)
fi
tarball="$CACHE/base-$key-$ARCH.tar"
if [ ! -f "$tarball" ]; then
  node_tmp=$(mktemp -d)
  tar -xzf "$node_tgz" -C "$node_tmp"
  [ -f "$node_tmp/package/bin/node" ] && [ -f "$node_tmp/package/include/node/node_api.h" ] \
    || { echo "offline-base-foreign: $node_tgz has no bin/node or include/node" >&2; exit 1; }
  mmdebstrap --quiet --variant=minbase --architectures="$ARCH" --include="$PACKAGES" \
    --customize-hook="mkdir -p \"\$1/usr/local/bin\" \"\$1/usr/local/lib/node_modules\" \"\$1/usr/local/include\" \"\$1/nodejs/bin\"" \
    --customize-hook="cp -a '$node_tmp/package/bin/node' \"\$1/usr/local/bin/node\"" \
    --customize-hook="cp -a '$npm_dir' \"\$1/usr/local/lib/node_modules/npm\"" \
    --customize-hook="cp -a '$node_tmp/package/include/node' \"\$1/usr/local/include/node\"" \
    --customize-hook="ln -s ../lib/node_modules/npm/bin/npm-cli.js \"\$1/usr/local/bin/npm\"" \
    --customize-hook="ln -s ../lib/node_modules/npm/bin/npx-cli.js \"\$1/usr/local/bin/npx\"" \
    --customize-hook="ln -s /usr/local/bin/node \"\$1/nodejs/bin/node\"" \
    --customize-hook="cp '$ca_bundle' \"\$1/etc/ssl/certs/ca-certificates.crt\"" \
    --customize-hook="mkdir -p \"\$1/usr/local/etc\" && echo cafile=/etc/ssl/certs/ca-certificates.crt > \"\$1/usr/local/etc/npmrc\"" \
    --customize-hook="rm -rf \"\$1/usr/share/doc\" \"\$1/usr/share/man\" \"\$1/usr/share/locale\"" \
    "$SUITE" "$tarball.tmp.tar" "$MIRROR" >&2
  rm -rf "$node_tmp"
  mv "$tarball.tmp.tar" "$tarball"
fi
ctr=$(buildah from --arch "$ARCH" scratch)
trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
buildah add --quiet "$ctr" "$tarball" / >/dev/null
buildah config --arch "$ARCH" --os linux --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd node "$ctr"
buildah commit --quiet "$ctr" "$image" >/dev/null
echo "$image"
