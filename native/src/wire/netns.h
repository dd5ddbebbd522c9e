/*
 * netns.h: run a function with the calling thread inside a named network namespace
 * (/var/run/netns/<name>, as `ip netns add` creates them) and always switch back.
 * Sockets keep the namespace they were created in, so a handle's sockets are created here
 * once and then used from any thread.
 */
#ifndef NETLINK_NATIVE_NETNS_H
#define NETLINK_NATIVE_NETNS_H

#define NETNS_RUN_DIR "/var/run/netns"

/* Returns fn's result, or -errno when entering failed. If switching back fails the thread is
 * left in the wrong namespace: that is reported as -ENOTRECOVERABLE (fn's result is lost). */
int netns_run(const char *name, int (*fn)(void *ctx), void *ctx);

/* Name check: no '/', not "." or "..", 1..255 bytes. Returns 0 or -EINVAL. */
int netns_check_name(const char *name);

#endif
