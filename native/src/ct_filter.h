/*
 * ct_filter.h: what a conntrack call selects, matched in userspace (C) during one dump pass.
 * Addresses live in an open-addressing hash set (IPv4 and IPv6 together); protocols in a
 * 256-bit set. Plain C, no N-API types.
 */
#ifndef NETLINK_NATIVE_CT_FILTER_H
#define NETLINK_NATIVE_CT_FILTER_H

#include <stddef.h>
#include <stdint.h>

/* One address: family (4 or 6) and 16 bytes (IPv4 in the first 4, rest zero). */
struct ct_addr {
	uint8_t family;
	uint8_t bytes[16];
};

/* FNV-1a steps shared by the address and target sets' hashes (then ct_hash_finish). */
#define CT_FNV_OFFSET 1469598103934665603ULL
static inline uint64_t ct_fnv_byte(uint64_t h, uint8_t b)
{
	return (h ^ b) * 1099511628211ULL;
}
/* Family, then the address's 4 or 16 bytes. */
static inline uint64_t ct_fnv_addr(uint64_t h, const struct ct_addr *a)
{
	size_t n = a->family == 4 ? 4 : 16;
	h = ct_fnv_byte(h, a->family);
	for (size_t i = 0; i < n; i++)
		h = ct_fnv_byte(h, a->bytes[i]);
	return h;
}
static inline uint64_t ct_hash_finish(uint64_t h)
{
	return h ^ (h >> 29);
}

/*
 * Storage of an open-addressing table (linear probing) for at least `min_slots` slots of
 * `slot_size` bytes: a power-of-two capacity, zeroed slots and "used" bytes. Returns 0, -EINVAL
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
