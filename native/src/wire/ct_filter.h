/*
 * ct_filter.h: what a conntrack call selects, matched in userspace (C) during one dump pass.
 * Addresses live in an open-addressing hash set (IPv4 and IPv6 together); protocols in a
 * 256-bit set. Plain C, no N-API types.
 */
#ifndef NETLINK_NATIVE_CT_FILTER_H
#define NETLINK_NATIVE_CT_FILTER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* One address: family (4 or 6) and 16 bytes (IPv4 in the first 4, rest zero). */
struct ct_addr {
	uint8_t family;
	uint8_t bytes[16];
};

/*
 * The hash of an address (its family and 4 or 16 bytes) with `extra` (the key's other fields,
 * packed into 64 bits), for the address and target sets: the two 64-bit words of the address
 * combined, then the splitmix64 finalizer. A dump looks up every entry once or twice, so this
 * is on the per-entry path: a few multiplies where a byte-wise FNV-1a took one per byte.
 */
static inline uint64_t ct_hash_addr(const struct ct_addr *a, uint64_t extra)
{
	uint64_t lo = 0, hi = 0, h;

	if (a->family == 4) {
		uint32_t v;
		memcpy(&v, a->bytes, 4);
		lo = v;
	} else {
		memcpy(&lo, a->bytes, 8);
		memcpy(&hi, a->bytes + 8, 8);
	}
	h = lo + hi * 0x9e3779b97f4a7c15ULL + (extra ^ ((uint64_t)a->family << 56)) * 0xc2b2ae3d27d4eb4fULL;
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

/*
 * Storage of an open-addressing table (linear probing) for at least `min_slots` slots of
 * `slot_size` bytes: a power-of-two capacity, zeroed slots and "used" bytes (used may be NULL
 * for a table that marks empty slots itself, as with key 0). Returns 0, -EINVAL
 * (absurd size) or -ENOMEM (then nothing is allocated). Shared by the address and target sets.
 */
int ct_table_alloc(size_t min_slots, size_t slot_size, void **slots, uint8_t **used, size_t *mask);

struct ct_addr_set {
	struct ct_addr *slots;
	uint8_t *used;
	size_t mask;    /* capacity - 1 (capacity is a power of two) */
	size_t count;
};

int ct_addr_set_init(struct ct_addr_set *set, size_t expected);
void ct_addr_set_free(struct ct_addr_set *set);
int ct_addr_set_add(struct ct_addr_set *set, const struct ct_addr *a);
int ct_addr_set_has(const struct ct_addr_set *set, const struct ct_addr *a);
/* The slot index of a in the set (stable until the set is freed), or -1. */
long ct_addr_set_slot(const struct ct_addr_set *set, const struct ct_addr *a);
/* Parses "10.0.0.1" or "fd00::1" into a; returns 0 or -EINVAL. */
int ct_addr_parse(const char *text, struct ct_addr *a);

/* Which address of an entry is compared with the set. */
enum {
	CT_MATCH_ORIG_SRC = 1 << 0,
	CT_MATCH_ORIG_DST = 1 << 1,
	CT_MATCH_REPLY_SRC = 1 << 2,
	CT_MATCH_REPLY_DST = 1 << 3,
};

struct ct_filter {
	int has_addresses;          /* 0: every entry passes the address test (list only) */
	struct ct_addr_set addrs;
	unsigned match;             /* CT_MATCH_* bits */
	int has_protocols;
	uint8_t protocols[32];      /* bitmap by IP protocol number */
	int zone;                   /* -1: any zone */
};

void ct_filter_init(struct ct_filter *f);
void ct_filter_free(struct ct_filter *f);
static inline void ct_filter_add_protocol(struct ct_filter *f, uint8_t p)
{
	f->has_protocols = 1;
	f->protocols[p >> 3] |= (uint8_t)(1u << (p & 7));
}
static inline int ct_filter_has_protocol(const struct ct_filter *f, uint8_t p)
{
	return !f->has_protocols || (f->protocols[p >> 3] & (1u << (p & 7)));
}

#endif
