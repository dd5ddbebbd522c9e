/*
 * ct_scan.h: the stale-entry scan's dump pass, filtered in C so JavaScript only builds
 * objects for candidates: entries whose status has one of `status_any` bits (IPS_DST_NAT for
 * the stale scan) and whose reply source (the DNAT target) no owned target covers. Owned
 * targets follow EndpointSlice semantics: an address on every protocol and port, a protocol on
 * every port of an address, or one protocol/address/port; an entry without ports is owned as
 * soon as any target has its address. Plain C; returns 0 or -errno, never asserts on input.
 */
#ifndef NETLINK_NATIVE_CT_SCAN_H
#define NETLINK_NATIVE_CT_SCAN_H

#include <stddef.h>
#include <stdint.h>
#include "ops/conntrack.h"

enum ct_target_kind {
	CT_TARGET_ADDRESS_ANY = 0,   /* every protocol and port of the address */
	CT_TARGET_PROTO_ANY_PORT = 1,/* every port of proto at the address */
	CT_TARGET_EXACT = 2,         /* proto + port at the address */
	CT_TARGET_ADDRESS_SEEN = 3,  /* some target has the address (added automatically) */
};

struct ct_target {
	struct ct_addr addr;
	uint8_t kind;
	uint8_t proto;
	uint16_t port;
	uint8_t has;   /* ADDRESS_SEEN only: 1 << kind for every kind present at the address (not part of the key) */
};

struct ct_target_set {
	/* IPv6 targets: full records (linear probing) */
	struct ct_target *slots;
	uint8_t *used;
	size_t mask;
	size_t count;
	/* IPv4 targets: one 64-bit key per slot (ct_scan.c v4_key), 0 = empty. Every dumped entry
	 * is looked up here, between chunks of the kernel's dump that evict our cache lines, so
	 * the table is kept small (8 bytes a slot) and the common hit takes one probe. */
	uint64_t *v4;
	size_t v4_mask;
	size_t v4_count;
};

int ct_target_set_init(struct ct_target_set *set, size_t expected);
void ct_target_set_free(struct ct_target_set *set);
/* Adds a target (and its CT_TARGET_ADDRESS_SEEN key). kind must be 0..2. */
int ct_target_set_add(struct ct_target_set *set, const struct ct_target *t);
/* Is (address, proto, port) owned? has_port = 0 for entries without ports. */
int ct_target_set_owns(const struct ct_target_set *set, const struct ct_addr *a, uint8_t proto, int has_port,
		       uint16_t port);

/* Where candidates go while the pass finds them (optional): each time `batch` candidates are
 * kept, flush gets them with the pass number (0, then 1.. after each restart: candidates of an
 * earlier pass are superseded) and the list is emptied. A flush error stops the pass. The
 * candidates found after the last flush stay in the result. */
struct ct_scan_sink {
	size_t batch;
	int (*flush)(void *ctx, const struct ct_entry_list *candidates, uint32_t pass);
	void *ctx;
};

struct ct_scan_result {
	struct ct_entry_list candidates; /* those not handed to the sink */
	uint64_t scanned;
	uint64_t status_skipped;   /* entries without any status_any bit */
	uint64_t owned;            /* entries whose reply source an owned target covers */
	uint64_t kept;             /* candidates of the final pass, flushed or in the list */
	uint32_t pass;             /* the final pass's number (= restarts) */
	uint32_t flushes;          /* sink flushes in the final pass */
	struct ct_dump_diag diag;
};

/* One dump pass (restarted on overrun like ct_list); keeps at most limit candidates. sink may
 * be NULL (every candidate stays in out->candidates). */
int ct_scan(struct ct_conn *c, uint32_t status_any, const struct ct_target_set *owned, size_t limit,
	    const struct ct_scan_sink *sink, struct ct_scan_result *out);
void ct_scan_result_free(struct ct_scan_result *r);

#endif
