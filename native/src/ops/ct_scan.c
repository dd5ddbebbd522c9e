/* ct_scan.c: the stale scan's filtered dump pass (see ct_scan.h). */
#include "ops/ct_scan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CT_SCAN_MAX_RESTARTS 3

static uint64_t hash_target(const struct ct_target *t)
{
	return ct_hash_addr(&t->addr, (uint64_t)t->kind << 32 | (uint64_t)t->proto << 16 | t->port);
}

static int same_target(const struct ct_target *x, const struct ct_target *y)
{
	return x->addr.family == y->addr.family && x->kind == y->kind && x->proto == y->proto && x->port == y->port &&
	       memcmp(x->addr.bytes, y->addr.bytes, 16) == 0;
}

int ct_target_set_init(struct ct_target_set *set, size_t expected)
{
	void *slots = NULL;
	int err;

	memset(set, 0, sizeof(*set));
	/* every target may bring its ADDRESS_SEEN key: room for twice as many, load <= 1/2 */
	err = ct_table_alloc(expected * 4 + 1, sizeof(*set->slots), &slots, &set->used, &set->mask);
	set->slots = slots;
	if (err < 0)
		return err;
	slots = NULL;
	err = ct_table_alloc(expected * 4 + 1, sizeof(*set->v4), &slots, NULL, &set->v4_mask); /* empty = key 0 */
	set->v4 = slots;
	if (err < 0)
		ct_target_set_free(set);
	return err;
}

void ct_target_set_free(struct ct_target_set *set)
{
	free(set->slots);
	free(set->used);
	free(set->v4);
	memset(set, 0, sizeof(*set));
}

/* An IPv4 target as one word: a marker bit (so no key is 0), kind, protocol, port, address. */
static uint64_t v4_key(const uint8_t *addr, uint8_t kind, uint8_t proto, uint16_t port)
{
	uint32_t a;
	memcpy(&a, addr, 4);
	return (uint64_t)1 << 63 | (uint64_t)kind << 56 | (uint64_t)proto << 48 | (uint64_t)port << 32 | a;
}

static size_t v4_slot(uint64_t key)
{
	key = (key ^ (key >> 30)) * 0xbf58476d1ce4e5b9ULL;
	key = (key ^ (key >> 27)) * 0x94d049bb133111ebULL;
	return (size_t)(key ^ (key >> 31));
}

static int v4_has(const struct ct_target_set *set, uint64_t key)
{
	for (size_t i = v4_slot(key) & set->v4_mask;; i = (i + 1) & set->v4_mask) {
		if (set->v4[i] == key)
			return 1;
		if (set->v4[i] == 0)
			return 0; /* at most half full: an empty slot always ends the walk */
	}
}

static int v4_insert(struct ct_target_set *set, uint64_t key)
{
	for (size_t i = v4_slot(key) & set->v4_mask;; i = (i + 1) & set->v4_mask) {
		if (set->v4[i] == key)
			return 0;
		if (set->v4[i] == 0) {
			if ((set->v4_count + 1) * 2 > set->v4_mask + 1)
				return -ENOSPC; /* sized by init; never above half full */
			set->v4[i] = key;
			set->v4_count++;
			return 0;
		}
	}
}

/* The ownership rule (ct_scan.h) on the IPv4 table: the exact target first (the common hit). */
static int v4_owns(const struct ct_target_set *set, const uint8_t *addr, uint8_t proto, int has_port, uint16_t port)
{
	if (has_port && v4_has(set, v4_key(addr, CT_TARGET_EXACT, proto, port)))
		return 1;
	if (!v4_has(set, v4_key(addr, CT_TARGET_ADDRESS_SEEN, 0, 0)))
		return 0; /* no target at this address */
	if (!has_port)
		return 1; /* no port to compare: an endpoint has the address */
	return v4_has(set, v4_key(addr, CT_TARGET_ADDRESS_ANY, 0, 0)) ||
	       v4_has(set, v4_key(addr, CT_TARGET_PROTO_ANY_PORT, proto, 0));
}

static const struct ct_target *find(const struct ct_target_set *set, const struct ct_target *t)
{
	if (!set->used)
		return NULL;
	for (size_t i = hash_target(t) & set->mask, n = 0; n <= set->mask; i = (i + 1) & set->mask, n++) {
		if (!set->used[i])
			return NULL;
		if (same_target(&set->slots[i], t))
			return &set->slots[i];
	}
	return NULL;
}

static int has(const struct ct_target_set *set, const struct ct_target *t)
{
	return find(set, t) != NULL;
}

/* Inserts t (or finds it) and ORs `flags` into the stored record's `has`. */
static int insert(struct ct_target_set *set, const struct ct_target *t, uint8_t flags)
{
	if (!set->used)
		return -EINVAL;
	for (size_t i = hash_target(t) & set->mask;; i = (i + 1) & set->mask) {
		if (!set->used[i]) {
			if ((set->count + 1) * 2 > set->mask + 1)
				return -ENOSPC; /* sized by init; never above half full */
			set->used[i] = 1;
			set->slots[i] = *t;
			set->slots[i].has = flags;
			set->count++;
			return 0;
		}
		if (same_target(&set->slots[i], t)) {
			set->slots[i].has |= flags;
			return 0;
		}
	}
}

static struct ct_target key(const struct ct_addr *a, uint8_t kind, uint8_t proto, uint16_t port)
{
	struct ct_target t;
	memset(&t, 0, sizeof(t));
	t.addr = *a;
	t.kind = kind;
	t.proto = proto;
	t.port = port;
	return t;
}

int ct_target_set_add(struct ct_target_set *set, const struct ct_target *t)
{
	struct ct_target norm;
	int err;

	if (t->kind > CT_TARGET_EXACT || (t->addr.family != 4 && t->addr.family != 6))
		return -EINVAL;
	norm = key(&t->addr, t->kind, t->kind == CT_TARGET_ADDRESS_ANY ? 0 : t->proto,
		   t->kind == CT_TARGET_EXACT ? t->port : 0);
	if (t->addr.family == 4) {
		if (!set->v4)
			return -EINVAL;
		err = v4_insert(set, v4_key(norm.addr.bytes, norm.kind, norm.proto, norm.port));
		return err < 0 ? err : v4_insert(set, v4_key(norm.addr.bytes, CT_TARGET_ADDRESS_SEEN, 0, 0));
	}
	err = insert(set, &norm, 0);
	if (err < 0)
		return err;
	norm = key(&t->addr, CT_TARGET_ADDRESS_SEEN, 0, 0);
	return insert(set, &norm, (uint8_t)(1u << t->kind));
}

int ct_target_set_owns(const struct ct_target_set *set, const struct ct_addr *a, uint8_t proto, int has_port,
		       uint16_t port)
{
	struct ct_target t;
	const struct ct_target *seen;

	if (a->family == 4)
		return set->v4_count > 0 && v4_owns(set, a->bytes, proto, has_port, port);
	t = key(a, CT_TARGET_ADDRESS_SEEN, 0, 0);
	if (set->count == 0 || (seen = find(set, &t)) == NULL)
		return 0; /* the common miss: one probe */
	if (seen->has & (1u << CT_TARGET_ADDRESS_ANY))
		return 1;
	if (seen->has & (1u << CT_TARGET_PROTO_ANY_PORT)) {
		t = key(a, CT_TARGET_PROTO_ANY_PORT, proto, 0);
		if (has(set, &t))
			return 1;
	}
	if (!has_port)
		return 1; /* no port to compare: an endpoint has the address */
	if (!(seen->has & (1u << CT_TARGET_EXACT)))
		return 0;
	t = key(a, CT_TARGET_EXACT, proto, port);
	return has(set, &t); /* the common hit: two probes */
}

struct scan_ctx {
	uint32_t status_any;
	const struct ct_target_set *owned;
	size_t limit;
	const struct ct_scan_sink *sink;
	struct ct_scan_result *r;
};

/* Reads the status and the reply source only; the full parse (and the copy) is for candidates. */
static int scan_cb(const struct nlmsghdr *h, void *p)
{
	struct scan_ctx *ctx = p;
	struct ct_scan_result *r = ctx->r;
	struct ct_entry_list *l = &r->candidates;
	struct ct_tuple reply;
	uint32_t status;

	r->scanned++;
	if (ct_parse_status_reply(h, &status, &reply) < 0) {
		r->diag.unparsed++;
		return 0;
	}
	if (ctx->status_any && !(status & ctx->status_any)) {
		r->status_skipped++;
		return 0;
	}
	if (ct_target_set_owns(ctx->owned, &reply.src, reply.proto, reply.has_ports, reply.src_port)) {
		r->owned++;
		return 0;
	}
	if (r->kept >= ctx->limit)
		return 0;
	struct ct_entry *slot = ct_entry_list_next_slot(l);
	if (!slot)
		return -ENOMEM;
	if (ct_parse_entry(h, slot) < 0) {
		r->diag.unparsed++;
		return 0;
	}
	slot->orig_attr = NULL; /* points into the receive buffer */
	l->count++;
	r->kept++;
	if (ctx->sink && l->count >= ctx->sink->batch) {
		int err = ctx->sink->flush(ctx->sink->ctx, l, r->pass);
		l->count = 0;
		r->flushes++;
		if (err < 0)
			return err;
	}
	return 0;
}

int ct_scan(struct ct_conn *c, uint32_t status_any, const struct ct_target_set *owned, size_t limit,
	    const struct ct_scan_sink *sink, struct ct_scan_result *out)
{
	struct scan_ctx ctx = { .status_any = status_any, .owned = owned, .limit = limit,
				.sink = sink && sink->flush && sink->batch ? sink : NULL, .r = out };
	int err;

	memset(out, 0, sizeof(*out));
	for (int attempt = 0;; attempt++) {
		out->scanned = out->status_skipped = out->owned = out->kept = 0;
		out->flushes = 0;
		out->pass = (uint32_t)attempt;
		out->candidates.count = 0;
		err = ct_dump_pass_msgs(c, scan_cb, &ctx, &out->diag);
		if (err != -ENOBUFS || attempt >= CT_SCAN_MAX_RESTARTS)
			break;
		out->diag.restarts++;
	}
	if (err < 0)
		ct_scan_result_free(out);
	return err;
}

void ct_scan_result_free(struct ct_scan_result *r)
{
	ct_entry_list_free(&r->candidates);
}
