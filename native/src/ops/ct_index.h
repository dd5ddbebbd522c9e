/*
 * ct_index.h: the flow index of the event subscription. A pool of fixed-size records (one per
 * live conntrack entry of a watched address), a chained hash over the original tuple + zone, and
 * per-address lists: every record is linked (intrusive, doubly linked) under its original
 * destination and under its reply source when that address is watched, so the flows of an
 * address are found in O(its flows), not by scanning the pool. The lists are keyed by the slots
 * of the watched address set (ct_filter.h), borrowed: one head per slot, rebuilt (and flows of
 * addresses no longer watched dropped) by ct_index_set_addrs when the set is replaced.
 * Plain C, no locking (ct_events.c holds its mutex around every call), no N-API types.
 *
 * Cost per flow: sizeof(struct ct_flow) (128 bytes on x86-64/arm64, 16 of them the two list
 * links) plus one 4-byte hash bucket = 132 bytes, reported at run time by
 * ct_index_bytes_per_flow(). The pool doubles when full (so up to 2x that in allocated capacity)
 * and never grows past `max` records. Per watched address: 4 bytes of list head per set slot
 * (the set keeps at most half its slots used), so 8-16 bytes an address, counted in
 * ct_index_bytes().
 */
#ifndef NETLINK_NATIVE_CT_INDEX_H
#define NETLINK_NATIVE_CT_INDEX_H

#include <stddef.h>
#include <stdint.h>
#include "wire/ct_parse.h"

enum {
	CT_FLOW_USED = 1 << 0,
	CT_FLOW_HAS_STATE = 1 << 1,
	CT_FLOW_HAS_PORTS = 1 << 2,
	CT_FLOW_HAS_ICMP = 1 << 3,
	CT_FLOW_HAS_ID = 1 << 4,
	/* A destroy seen while a sync dump runs: keeps the dump from re-adding the entry. */
	CT_FLOW_TOMB = 1 << 5,
	/* Learned from a dump and never heard of by an event since: it may have no event cache
	 * (nf_conntrack_events=2 gives none to entries created while nobody listened), so its
	 * updates and its destruction may never be announced. Re-checked by GET. */
	CT_FLOW_NOEV = 1 << 6,
};

/* One indexed flow. Ports hold the ICMP id (src) and type << 8 | code (dst) for ICMP. */
struct ct_flow {
	uint8_t osrc[16], odst[16], rsrc[16], rdst[16];
	uint16_t osport, odport, rsport, rdport;
	uint32_t status, mark, id;
	uint32_t timeout;       /* seconds left when updated_ms was taken */
	uint64_t updated_ms;    /* CLOCK_MONOTONIC ms of the last event / dump / GET for it */
	uint32_t next;          /* hash chain: record index + 1, 0 = end (free list when unused) */
	uint32_t hash;
	/* Address lists, [0] under odst and [1] under rsrc: links CT_LINK(index, role), 0 = none. */
	uint32_t anext[2], aprev[2];
	uint16_t zone;
	uint8_t family, proto, state, flags;
	uint8_t gen;            /* sync generation that last confirmed it */
	uint8_t links;          /* bit r: linked under role r (rsrc is not linked when it equals odst) */
};

/* A list link names a record and the role (0: odst, 1: rsrc) it is linked under. */
#define CT_LINK(i, role) ((((uint32_t)(i) + 1u) << 1) | (uint32_t)(role))
#define CT_LINK_INDEX(l) (((l) >> 1) - 1u)
#define CT_LINK_ROLE(l) ((int)((l) & 1u))

struct ct_index {
	struct ct_flow *flows;
	uint32_t cap;           /* records allocated */
	uint32_t used_hi;       /* records [0, used_hi) have ever been used (scan bound) */
	uint32_t count;         /* live records (tombs included) */
	uint32_t max;
	uint32_t free_head;     /* index + 1 of a free record, 0 = none */
	uint32_t *buckets;
	uint32_t nbuckets;      /* power of two */
	uint64_t dropped;       /* inserts refused because the index was full */
	const struct ct_addr_set *addrs; /* borrowed: the watched set the address lists are keyed by */
	uint32_t *heads;        /* [addrs->mask + 1]: first link of each slot's address, 0 = none */
};

int ct_index_init(struct ct_index *x, uint32_t max);
void ct_index_free(struct ct_index *x);
size_t ct_index_bytes(const struct ct_index *x);
size_t ct_index_bytes_per_flow(void);

void ct_flow_from_entry(struct ct_flow *f, const struct ct_entry *e);
void ct_flow_to_entry(const struct ct_flow *f, struct ct_entry *e);
uint32_t ct_flow_hash(const struct ct_flow *f);
int ct_flow_same_key(const struct ct_flow *a, const struct ct_flow *b);

/* The record with f's key, or NULL. */
struct ct_flow *ct_index_find(struct ct_index *x, const struct ct_flow *f);
/* Inserts a copy of f (key not present). Returns the record, or NULL when full / no memory. */
struct ct_flow *ct_index_insert(struct ct_index *x, const struct ct_flow *f);
void ct_index_remove(struct ct_index *x, struct ct_flow *rec);
/* Overwrites rec with f (same key), moving it between address lists if its addresses changed. */
void ct_index_update(struct ct_index *x, struct ct_flow *rec, const struct ct_flow *f);

/* Keys the address lists by `set` (borrowed; must stay unchanged until the next call) and takes
 * `heads` (calloc'ed, set->mask + 1 entries). Drops every record whose original destination and
 * reply source are both outside the set and relinks the others. O(records). */
void ct_index_set_addrs(struct ct_index *x, const struct ct_addr_set *set, uint32_t *heads);
/* The first link of a's list (0: none, or a is not in the set). Walk with ct_index_link_next. */
uint32_t ct_index_addr_first(const struct ct_index *x, const struct ct_addr *a);
static inline struct ct_flow *ct_index_link_flow(const struct ct_index *x, uint32_t link)
{
	return &x->flows[CT_LINK_INDEX(link)];
}
static inline uint32_t ct_index_link_next(const struct ct_index *x, uint32_t link)
{
	return ct_index_link_flow(x, link)->anext[CT_LINK_ROLE(link)];
}

#endif
