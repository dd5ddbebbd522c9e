/* ct_index.c: the flow pool, its tuple hash and its per-address lists (see ct_index.h). */
#include "ops/ct_index.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CT_INDEX_INITIAL 1024

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 16;
	while (p < n && p < (1u << 31))
		p <<= 1;
	return p;
}

int ct_index_init(struct ct_index *x, uint32_t max)
{
	memset(x, 0, sizeof(*x));
	x->max = max ? max : 1;
	if (x->max > (1u << 30))
		x->max = 1u << 30; /* list links are (index + 1) << 1 | role in 32 bits */
	x->cap = x->max < CT_INDEX_INITIAL ? x->max : CT_INDEX_INITIAL;
	x->nbuckets = pow2_at_least(x->cap);
	x->flows = calloc(x->cap, sizeof(*x->flows));
	x->buckets = calloc(x->nbuckets, sizeof(*x->buckets));
	if (!x->flows || !x->buckets) {
		ct_index_free(x);
		return -ENOMEM;
	}
	return 0;
}

void ct_index_free(struct ct_index *x)
{
	free(x->flows);
	free(x->buckets);
	free(x->heads);
	memset(x, 0, sizeof(*x));
}

size_t ct_index_bytes(const struct ct_index *x)
{
	size_t heads = x->heads ? (x->addrs->mask + 1) * sizeof(uint32_t) : 0;
	return (size_t)x->cap * sizeof(struct ct_flow) + (size_t)x->nbuckets * sizeof(uint32_t) + heads;
}

size_t ct_index_bytes_per_flow(void)
{
	return sizeof(struct ct_flow) + sizeof(uint32_t);
}

static void copy_addr(uint8_t out[16], const struct ct_addr *a)
{
	memcpy(out, a->bytes, 16);
}

void ct_flow_from_entry(struct ct_flow *f, const struct ct_entry *e)
{
	memset(f, 0, sizeof(*f));
	f->family = e->family;
	f->proto = e->orig.proto;
	copy_addr(f->osrc, &e->orig.src);
	copy_addr(f->odst, &e->orig.dst);
	copy_addr(f->rsrc, &e->reply.src);
	copy_addr(f->rdst, &e->reply.dst);
	if (e->orig.has_ports) {
		f->flags |= CT_FLOW_HAS_PORTS;
		f->osport = e->orig.src_port;
		f->odport = e->orig.dst_port;
		f->rsport = e->reply.src_port;
		f->rdport = e->reply.dst_port;
	} else if (e->orig.has_icmp) {
		f->flags |= CT_FLOW_HAS_ICMP;
		f->osport = e->orig.icmp_id;
		f->odport = (uint16_t)(e->orig.icmp_type << 8 | e->orig.icmp_code);
		f->rsport = e->reply.icmp_id;
		f->rdport = (uint16_t)(e->reply.icmp_type << 8 | e->reply.icmp_code);
	}
	if (e->has_state) {
		f->flags |= CT_FLOW_HAS_STATE;
		f->state = e->state;
	}
	if (e->has_id) {
		f->flags |= CT_FLOW_HAS_ID;
		f->id = e->id;
	}
	f->status = e->status;
	f->mark = e->mark;
	f->timeout = e->timeout;
	f->zone = ct_entry_orig_zone(e); /* what a GET by the original tuple needs (ct_parse.h) */
	f->hash = ct_flow_hash(f);
}

static void tuple_out(struct ct_tuple *t, uint8_t family, uint8_t proto, uint8_t flags, const uint8_t *src,
		      const uint8_t *dst, uint16_t sport, uint16_t dport)
{
	memset(t, 0, sizeof(*t));
	t->src.family = t->dst.family = family;
	memcpy(t->src.bytes, src, 16);
	memcpy(t->dst.bytes, dst, 16);
	t->proto = proto;
	if (flags & CT_FLOW_HAS_PORTS) {
		t->has_ports = 1;
		t->src_port = sport;
		t->dst_port = dport;
	} else if (flags & CT_FLOW_HAS_ICMP) {
		t->has_icmp = 1;
		t->icmp_id = sport;
		t->icmp_type = (uint8_t)(dport >> 8);
		t->icmp_code = (uint8_t)dport;
	}
}

void ct_flow_to_entry(const struct ct_flow *f, struct ct_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->family = f->family;
	tuple_out(&e->orig, f->family, f->proto, f->flags, f->osrc, f->odst, f->osport, f->odport);
	tuple_out(&e->reply, f->family, f->proto, f->flags, f->rsrc, f->rdst, f->rsport, f->rdport);
	e->has_state = (f->flags & CT_FLOW_HAS_STATE) != 0;
	e->state = f->state;
	e->has_id = (f->flags & CT_FLOW_HAS_ID) != 0;
	e->id = f->id;
	e->status = f->status;
	e->mark = f->mark;
	e->timeout = f->timeout;
	e->zone = f->zone;
	e->zone_dir = f->zone ? CT_ZONE_DIR_ORIG | CT_ZONE_DIR_REPLY : 0;
}

uint32_t ct_flow_hash(const struct ct_flow *f)
{
	/* FNV-1a over the key: family, protocol, zone, original addresses and ports. */
	uint32_t h = 2166136261u;
	size_t n = f->family == 4 ? 4 : 16;
#define MIX(byte) (h = (h ^ (uint8_t)(byte)) * 16777619u)
	MIX(f->family);
	MIX(f->proto);
	MIX(f->zone);
	MIX(f->zone >> 8);
	for (size_t i = 0; i < n; i++) {
		MIX(f->osrc[i]);
		MIX(f->odst[i]);
	}
	MIX(f->osport);
	MIX(f->osport >> 8);
	MIX(f->odport);
	MIX(f->odport >> 8);
#undef MIX
	return h ^ (h >> 15);
}

int ct_flow_same_key(const struct ct_flow *a, const struct ct_flow *b)
{
	return a->hash == b->hash && a->family == b->family && a->proto == b->proto && a->zone == b->zone &&
	       a->osport == b->osport && a->odport == b->odport && memcmp(a->osrc, b->osrc, 16) == 0 &&
	       memcmp(a->odst, b->odst, 16) == 0;
}

/* ------------------------------------------------------------------ address lists */

static void role_addr(const struct ct_flow *f, int role, struct ct_addr *a)
{
	a->family = f->family;
	memcpy(a->bytes, role ? f->rsrc : f->odst, 16);
}

static uint32_t *link_next(struct ct_index *x, uint32_t l)
{
	return &x->flows[CT_LINK_INDEX(l)].anext[CT_LINK_ROLE(l)];
}

static uint32_t *link_prev(struct ct_index *x, uint32_t l)
{
	return &x->flows[CT_LINK_INDEX(l)].aprev[CT_LINK_ROLE(l)];
}

static void link_role(struct ct_index *x, uint32_t i, int role)
{
	struct ct_flow *r = &x->flows[i];
	struct ct_addr a;
	long slot;
	uint32_t l = CT_LINK(i, role);

	role_addr(r, role, &a);
	slot = ct_addr_set_slot(x->addrs, &a);
	if (slot < 0)
		return;
	r->anext[role] = x->heads[slot];
	r->aprev[role] = 0;
	if (x->heads[slot])
		*link_prev(x, x->heads[slot]) = l;
	x->heads[slot] = l;
	r->links |= (uint8_t)(1u << role);
}

static void link_addrs(struct ct_index *x, uint32_t i)
{
	struct ct_flow *r = &x->flows[i];

	r->links = 0;
	if (!x->heads)
		return;
	link_role(x, i, 0);
	if (memcmp(r->odst, r->rsrc, 16) != 0)
		link_role(x, i, 1);
}

static void unlink_role(struct ct_index *x, struct ct_flow *r, int role)
{
	uint32_t next = r->anext[role], prev = r->aprev[role];

	if (!(r->links & (1u << role)))
		return;
	if (prev) {
		*link_next(x, prev) = next;
	} else {
		struct ct_addr a;
		long slot;
		role_addr(r, role, &a);
		slot = ct_addr_set_slot(x->addrs, &a);
		if (slot >= 0)
			x->heads[slot] = next;
	}
	if (next)
		*link_prev(x, next) = prev;
	r->anext[role] = r->aprev[role] = 0;
	r->links &= (uint8_t)~(1u << role);
}

static void unlink_addrs(struct ct_index *x, struct ct_flow *r)
{
	unlink_role(x, r, 0);
	unlink_role(x, r, 1);
}

uint32_t ct_index_addr_first(const struct ct_index *x, const struct ct_addr *a)
{
	long slot = x->heads ? ct_addr_set_slot(x->addrs, a) : -1;
	return slot < 0 ? 0 : x->heads[slot];
}

void ct_index_set_addrs(struct ct_index *x, const struct ct_addr_set *set, uint32_t *heads)
{
	free(x->heads);
	x->heads = heads;
	x->addrs = set;
	for (uint32_t i = 0; i < x->used_hi; i++)
		x->flows[i].links = 0;
	for (uint32_t i = 0; i < x->used_hi; i++) {
		struct ct_flow *r = &x->flows[i];
		struct ct_addr o, s;
		if (!(r->flags & CT_FLOW_USED))
			continue;
		role_addr(r, 0, &o);
		role_addr(r, 1, &s);
		if (!ct_addr_set_has(set, &o) && !ct_addr_set_has(set, &s))
			ct_index_remove(x, r);
		else
			link_addrs(x, i);
	}
}

/* ------------------------------------------------------------------ tuple hash */

struct ct_flow *ct_index_find(struct ct_index *x, const struct ct_flow *f)
{
	for (uint32_t i = x->buckets[f->hash & (x->nbuckets - 1)]; i; i = x->flows[i - 1].next)
		if (ct_flow_same_key(&x->flows[i - 1], f))
			return &x->flows[i - 1];
	return NULL;
}

static int grow(struct ct_index *x)
{
	uint32_t cap = x->cap * 2 > x->max ? x->max : x->cap * 2;
	uint32_t nb = pow2_at_least(cap);
	struct ct_flow *flows;
	uint32_t *buckets;

	if (cap <= x->cap)
		return -ENOSPC;
	flows = realloc(x->flows, (size_t)cap * sizeof(*flows));
	if (!flows)
		return -ENOMEM;
	memset(flows + x->cap, 0, (size_t)(cap - x->cap) * sizeof(*flows));
	x->flows = flows;
	x->cap = cap;
	if (nb != x->nbuckets) {
		buckets = calloc(nb, sizeof(*buckets));
		if (!buckets)
			return -ENOMEM; /* the old buckets stay valid */
		free(x->buckets);
		x->buckets = buckets;
		x->nbuckets = nb;
		for (uint32_t i = 0; i < x->used_hi; i++) {
			struct ct_flow *r = &x->flows[i];
			if (!(r->flags & CT_FLOW_USED))
				continue;
			r->next = buckets[r->hash & (nb - 1)];
			buckets[r->hash & (nb - 1)] = i + 1;
		}
	}
	return 0;
}

struct ct_flow *ct_index_insert(struct ct_index *x, const struct ct_flow *f)
{
	uint32_t i;
	struct ct_flow *r;
	uint32_t *bucket;

	if (x->free_head) {
		i = x->free_head - 1;
		x->free_head = x->flows[i].next;
	} else {
		if (x->used_hi == x->cap && grow(x) < 0) {
			x->dropped++;
			return NULL;
		}
		i = x->used_hi++;
	}
	r = &x->flows[i];
	*r = *f;
	r->flags |= CT_FLOW_USED;
	bucket = &x->buckets[r->hash & (x->nbuckets - 1)];
	r->next = *bucket;
	*bucket = i + 1;
	link_addrs(x, i);
	x->count++;
	return r;
}

void ct_index_remove(struct ct_index *x, struct ct_flow *rec)
{
	uint32_t i = (uint32_t)(rec - x->flows);
	uint32_t *link = &x->buckets[rec->hash & (x->nbuckets - 1)];

	unlink_addrs(x, rec);
	while (*link && *link != i + 1)
		link = &x->flows[*link - 1].next;
	if (*link)
		*link = rec->next;
	memset(rec, 0, sizeof(*rec));
	rec->next = x->free_head;
	x->free_head = i + 1;
	x->count--;
}

void ct_index_update(struct ct_index *x, struct ct_flow *rec, const struct ct_flow *f)
{
	uint32_t next = rec->next;

	unlink_addrs(x, rec);
	*rec = *f;
	rec->next = next;
	rec->flags |= CT_FLOW_USED;
	link_addrs(x, (uint32_t)(rec - x->flows));
}
