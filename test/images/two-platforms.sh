#!/usr/bin/env bash
# two-platforms.sh: the manual two-platform run of docs/dev/images.md, as root.
# Starts Debian's docker-registry on loopback (plain HTTP), runs `npm run images` for
# linux/amd64 and linux/arm64 (arm64 through qemu-user-static) on the offline bases with
# --push, then pulls both manifest lists back with skopeo: `skopeo inspect --raw` must list
# both platforms, `skopeo copy --override-arch ARCH` stores each platform's image locally, and
# `conndrain --version` runs in each (arm64 under qemu-user, with buildah run --isolation
# chroot, the way the image tests run images here). Prints each step's wall time.
# Too slow for the image suite (the emulated builds take tens of minutes on 2 cores); the
# test suite's own registry test covers this machine's platform.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
PLATFORMS=${PLATFORMS:-linux/amd64,linux/arm64}
work=$(mktemp -d /var/tmp/cd-two-platforms-XXXXXX)
registry_pid=
containers=()
tags=()
cleanup() {
  for c in "${containers[@]}"; do buildah rm "$c" >/dev/null 2>&1 || true; done
  for t in "${tags[@]}"; do buildah rmi "$t" >/dev/null 2>&1 || true; done
  if [ -n "$registry_pid" ]; then kill "$registry_pid" 2>/dev/null || true; wait "$registry_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
stamp() { echo "two-platforms: $(date -u +%H:%M:%S) [${SECONDS}s] $*" >&2; }

port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
registry="127.0.0.1:$port"
cat >"$work/registry.yml" <<EOF
version: 0.1
log: { level: warn }
storage: { filesystem: { rootdirectory: $work/data }, delete: { enabled: true } }
http: { addr: $registry }
EOF
docker-registry serve "$work/registry.yml" >"$work/registry.log" 2>&1 &
registry_pid=$!
for _ in $(seq 150); do
  curl -fs "http://$registry/v2/" >/dev/null 2>&1 && break
  sleep 0.2
done
curl -fs "http://$registry/v2/" >/dev/null || { cat "$work/registry.log" >&2; exit 1; }
stamp "registry on $registry"

stamp "npm run images -- --registry $registry --push --offline-base --tls-verify=false --platforms $PLATFORMS --strict"
(cd "$REPO" && npm run images --silent -- --registry "$registry" --push --offline-base --tls-verify=false \
  --platforms "$PLATFORMS" --strict --out "$work/images.json")
stamp "npm run images done"
cat "$work/images.json" >&2

version=$(node -p "require('$REPO/package.json').version")
for name in agent webhook; do
  repo="$registry/conndrain-$name"
  raw=$(skopeo inspect --raw --tls-verify=false "docker://$repo:$version")
  echo "$raw" >&2
  for platform in ${PLATFORMS//,/ }; do
    grep -q "\"architecture\":\"${platform#linux/}\"" <<<"${raw//[[:space:]]/}" \
      || { echo "two-platforms: $repo:$version lists no $platform" >&2; exit 1; }
  done
  skopeo copy --quiet --all --src-tls-verify=false "docker://$repo:$version" "oci:$work/$name:pulled"
  for platform in ${PLATFORMS//,/ }; do
    arch=${platform#linux/}
    tag="localhost/conndrain-two-platforms-$name:$arch"
    skopeo copy --quiet --override-arch "$arch" "oci:$work/$name:pulled" "containers-storage:$tag"
    tags+=("$tag")
    image_arch=$(buildah inspect --type image --format '{{.OCIv1.Architecture}}' "$tag")
    c=$(buildah from --quiet "$tag")
    containers+=("$c")
    entrypoint=$(buildah inspect --format '{{range .OCIv1.Config.Entrypoint}}{{.}} {{end}}' "$c")
    # shellcheck disable=SC2086 # the entrypoint's words
    out=$(buildah run --isolation chroot "$c" -- $entrypoint --version)
    node_path=$(buildah run --isolation chroot "$c" -- ${entrypoint%% *} -p 'process.execPath + " " + process.arch')
    stamp "$name $platform (image architecture $image_arch): conndrain --version -> $out; node -> $node_path"
    [ "$out" = "$version" ] || { echo "two-platforms: $name $platform printed $out, not $version" >&2; exit 1; }
  done
done
stamp "both images, both platforms: pushed, pulled back and run"
