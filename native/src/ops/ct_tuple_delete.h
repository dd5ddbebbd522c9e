/*
 * ct_tuple_delete.h: delete conntrack entries by their exact original tuple (+ zone, and the
 * kernel's id when known), batched IPCTNL_MSG_CT_DELETE through nl_batch, no dump pass.
 * Plain C; every input is checked and a bad one is counted as failed (-EINVAL), never asserted.
 */
#ifndef NETLINK_NATIVE_CT_TUPLE_DELETE_H
#define NETLINK_NATIVE_CT_TUPLE_DELETE_H

#include <stddef.h>
#include <stdint.h>
#include "ops/conntrack.h"

/* One entry to delete: family 4/6, orig.proto, orig.src/dst, ports (has_ports) or ICMP
 * id/type/code (has_icmp), zone; id echoed as CTA_ID when has_id (the kernel then answers
 * ENOENT for a newer entry that reuses the tuple, so it is never deleted by mistake). */
struct ct_tuple_delete {
	uint8_t family;
	uint8_t has_id;
	uint16_t zone;          /* sent as CTA_ZONE: the zone id of the ORIGINAL direction (ct_parse.h) */
	int32_t alt_zone;       /* -1, or a second zone the re-check GETs too (direction unknown) */
	uint32_t id;
	struct ct_tuple orig;
};

/* Sends one delete per item (at most c->delete_batch per sendmsg) and counts every answer in
 * out (conntrack.h's delete result; no dump, so scanned, matched and out->dump stay 0):
 * ACK = deleted; ENOENT is re-checked (ct_recheck_gone): gone = already gone (or, on a
 * resend after a lost ACK, deleted by us), still there = failed; anything else, or an item
 * that is not a valid tuple, = failed. Returns 0, or -errno when sending itself failed (the
 * unanswered items are then counted as failed). */
int ct_delete_tuples(struct ct_conn *c, const struct ct_tuple_delete *items, size_t n,
		     struct ct_delete_result *out);

/* Re-checks items whose delete answered ENOENT with a GET by the same original tuple in
 * `zone` (and `alt_zone`): state[i] = 0 gone (ENOENT, or only a newer entry with another id
 * holds the tuple), 1 still present, or -errno when a GET failed otherwise. Returns 0 or -errno. */
int ct_recheck_gone(struct ct_conn *c, const struct ct_tuple_delete *items, size_t n, int *state);

/* Counts the n deletes answered ENOENT after their re-check (ct_recheck_gone's state and
 * return value err): gone = already gone, or deleted when the ENOENT answered a resend
 * (resent[k]); still present or not known = failed. */
void ct_delete_count_rechecked(struct ct_delete_result *r, const struct ct_tuple_delete *items,
			       const uint8_t *resent, const int *state, size_t n, int err);

/* Whether the item is a complete tuple the kernel can look up (0) or not (-EINVAL). */
int ct_tuple_delete_check(const struct ct_tuple_delete *item);

#endif
