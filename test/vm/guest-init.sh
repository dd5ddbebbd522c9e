#!/bin/sh
# conndrain test VM, stage 2: PID 1 on the host root (read-only 9p + tmpfs overlay) after
# switch_root. Mounts the job directory the host shares (writable 9p, at the same path as on
# the host), loads the requested modules, runs the job's command with its environment and
# writes `output` and `exit-code` there. PID 1 never exits and never falls back to a shell:
# it powers the guest off through sysrq, which ends QEMU (-no-reboot).
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
power_off() {
  sync
  echo o > /proc/sysrq-trigger
  while :; do sleep 1; done
}
fail() {
  echo "CONNDRAIN-VM-FAIL stage2: $*"
  power_off
}
mount -t proc proc /proc || fail "mount /proc"
mount -t sysfs sysfs /sys || fail "mount /sys"
# /tmp stays the overlay's (writable, backed by the tmpfs upper layer): a tmpfs mounted over it
# would hide a checkout that lives under the host's /tmp (CI clones anywhere).
mount -t tmpfs -o mode=0755 tmpfs /run || fail "mount /run"
mkdir -p /dev/pts /dev/shm /run/netns
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
job=
for arg in $(cat /proc/cmdline); do
  case "$arg" in
    conndrain.job=*) job="${arg#conndrain.job=}" ;;
  esac
done
[ -n "$job" ] || fail "no conndrain.job= on the kernel command line"
mkdir -p "$job"
mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=512000 cdjob "$job" || fail "mount job directory"
hostname conndrain-vm
ip link set lo up
: > "$job/output"
for module in $(cat "$job/modules"); do
  modprobe "$module" >> "$job/output" 2>&1 || echo "guest-init: modprobe $module failed" >> "$job/output"
done
echo "CONNDRAIN-VM-RUN"
# env.sh exports the job's environment; run.sh changes to its directory and runs the command.
( . "$job/env.sh" && exec /bin/sh "$job/run.sh" ) >> "$job/output" 2>&1 < /dev/null
echo "$?" > "$job/exit-code.tmp" && mv "$job/exit-code.tmp" "$job/exit-code"
echo "CONNDRAIN-VM-DONE"
power_off
