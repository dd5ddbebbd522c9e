/* reuseport.h: a TCP listening socket that other processes may bind too (SO_REUSEPORT). */
#ifndef NETLINK_NATIVE_REUSEPORT_H
#define NETLINK_NATIVE_REUSEPORT_H

/*
 * Creates a TCP socket for the numeric address `host` (IPv4 or IPv6 literal) with
 * SO_REUSEADDR and SO_REUSEPORT, close-on-exec and non-blocking, binds it to `port` (0: any)
 * and listens with `backlog`. Returns the descriptor, or -errno (-EINVAL: not an address).
 * Every process of the same user that binds the same address and port this way joins one
 * reuseport group: the kernel spreads new connections over the group's listeners, and a
 * listener that closes stops receiving new ones while the others go on.
 */
int reuseport_listen(const char *host, int port, int backlog);

#endif
