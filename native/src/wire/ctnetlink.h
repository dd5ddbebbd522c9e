/*
 * ctnetlink.h: the netlink message type of a ctnetlink request or answer. nfnetlink carries
 * its subsystem in the high byte of nlmsg_type and the subsystem's message in the low byte.
 */
#ifndef NETLINK_NATIVE_CTNETLINK_H
#define NETLINK_NATIVE_CTNETLINK_H

#include <stdint.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

/* IPCTNL_MSG_CT_* -> nlmsg_type. */
#define CT_TYPE(msg) ((uint16_t)((NFNL_SUBSYS_CTNETLINK << 8) | (msg)))

#endif
