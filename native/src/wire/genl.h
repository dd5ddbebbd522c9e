/*
 * genl.h: generic netlink family resolution (CTRL_CMD_GETFAMILY on GENL_ID_CTRL).
 * Plain C, no N-API types; 0 or a negative errno.
 */
#ifndef NETLINK_NATIVE_GENL_H
#define NETLINK_NATIVE_GENL_H

#include <stdint.h>
#include "wire/netlink.h"

/* Looks up the id of the generic netlink family `name` through the socket (NETLINK_GENERIC).
 * -ENOENT when no such family is registered. The kernel's ctrl_getfamily first tries
 * request_module("net-pf-16-proto-16-family-<name>"), an alias ip_vs declares, so a lookup
 * of "IPVS" loads ip_vs when the kernel has it as a module: -ENOENT then means the kernel has
 * no IPVS at all (as on the 6.18 host kernel of these machines) or modules cannot be loaded. */
int genl_resolve_family(struct nl_sock *s, const char *name, uint16_t *family_id);

/* Starts a generic netlink request: nlmsghdr of type family_id, then genlmsghdr{cmd, version}.
 * Returns the message offset for nl_msg_end. */
size_t genl_msg_begin(struct nl_buf *b, uint16_t family_id, uint16_t flags, uint32_t seq, uint8_t cmd, uint8_t version);

/* The attributes of a generic netlink message (after the genlmsghdr); -EBADMSG when too short. */
int genl_msg_attrs(const struct nlmsghdr *h, const void **data, size_t *len);

#endif
