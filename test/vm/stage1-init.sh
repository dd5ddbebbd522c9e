#!/bin/sh
# conndrain test VM, stage 1 (PID 1 inside the initramfs, busybox only): load the virtio,
# 9p and overlay modules, mount the host root read-only over virtio-9p with a tmpfs overlay on
# top, then switch_root into stage 2 (test/vm/guest-init.sh on the shared root).
# PID 1 must never exit: every failure prints a marker and powers off through sysrq.
export PATH=/bin
fail() {
  echo "CONNDRAIN-VM-FAIL stage1: $*"
  echo o > /proc/sysrq-trigger
  while :; do sleep 1; done
}
mount -t proc proc /proc || fail "mount /proc"
mount -t sysfs sysfs /sys || fail "mount /sys"
mount -t devtmpfs devtmpfs /dev || fail "mount /dev"
for module in $(cat /modules.order); do
  insmod "/modules/$module" || fail "insmod $module"
done
stage2=
for arg in $(cat /proc/cmdline); do
  case "$arg" in
    conndrain.init=*) stage2="${arg#conndrain.init=}" ;;
  esac
done
[ -n "$stage2" ] || fail "no conndrain.init= on the kernel command line"
mkdir -p /lower /rw /newroot
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 hostroot /lower || fail "mount host root over 9p"
mount -t tmpfs -o mode=0755 tmpfs /rw || fail "mount tmpfs"
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot || fail "mount overlay"
[ -f "/newroot$stage2" ] || fail "stage 2 $stage2 not found on the host root"
mount --move /dev /newroot/dev || fail "move /dev"
umount /sys
umount /proc
exec switch_root /newroot /bin/sh "$stage2"
fail "switch_root"
