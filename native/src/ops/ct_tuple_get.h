/*
 * ct_tuple_get.h: conntrack GET by EXACT original tuple (+ zone), many per sendmsg: the entry
 * as the kernel has it now (current timeout, state, status), for indexed flows (ct_index.h).
 * Exact-tuple DELETE lives in ct_tuple_delete.h.
 */
#ifndef NETLINK_NATIVE_CT_TUPLE_GET_H
#define NETLINK_NATIVE_CT_TUPLE_GET_H

#include <stddef.h>
#include "ops/conntrack.h"
#include "ops/ct_index.h"

/* Answer for flows[i]: error 0 and the entry, or -ENOENT (gone) or another -errno. */
typedef void (*ct_get_cb)(size_t i, int error, const struct ct_entry *e, void *ctx);

/* GETs every flow (chunks of `chunk` per sendmsg on the request socket). Returns 0 or -errno
 * when sending failed; lost answers (receive overrun) are asked again one at a time. */
int ct_get_flows(struct nl_sock *s, const struct ct_flow *flows, size_t n, size_t chunk, ct_get_cb cb, void *ctx,
		 uint64_t *sent);

#endif
