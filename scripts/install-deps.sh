#!/usr/bin/env bash
# Installs the Debian packages conndrain's build, tests, lab and demo need (run as root).
#   build-essential python3      node-gyp build of native/ (netlink-native)
#   libmnl-dev libnftables-dev   netlink helpers / nftables transactions from the addon
#   iproute2 nftables iptables conntrack   namespaces, DNAT "services", the conntrack CLI baseline
#   qemu-system-x86 linux-image-amd64 busybox-static   the IPVS test VM (Debian's kernel has ip_vs)
#   ipvsadm socat                 IPVS checks in the guest, traffic in the lab
#   prometheus openssl            promtool check/test rules on the alert rules; test certificates (test/webhook/certs.ts)
#                                 (the package's service is not started: no systemd here, policy-rc.d denies it)
#   buildah podman mmdebstrap     the image tests (test/images): build images/*.Dockerfile, inspect them, and make
#                                 their base offline from the Debian mirror (no container registry is reachable)
#   skopeo docker-registry        `npm run images` (scripts/images): list the pushed manifest lists; the image tests
#                                 push to a distribution registry on loopback and pull back (its service is not started)
#   qemu-user-static binfmt-support arch-test   linux/arm64 images on an amd64 machine: RUN steps through qemu-user
#                                 (binfmt_misc, registered by scripts/images/binfmt.ts); mmdebstrap --architectures=arm64
#   kubectl is expected on the machine for `kubectl kustomize` (the manifests tests skip without it)
set -euo pipefail
PACKAGES=(build-essential python3 libmnl-dev libnftables-dev iproute2 nftables iptables conntrack
  qemu-system-x86 linux-image-amd64 busybox-static ipvsadm socat prometheus openssl buildah podman mmdebstrap
  skopeo docker-registry qemu-user-static binfmt-support arch-test)
if [ "$(id -u)" != 0 ]; then
  echo "install-deps: run as root (apt-get)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}" >/dev/null
echo "install-deps: ${#PACKAGES[@]} packages present"
