/*
 * ct_tuple_delete.c: exact-tuple conntrack deletes (see ct_tuple_delete.h).
 *
 * Kernel facts (net/netfilter/nf_conntrack_netlink.c, ctnetlink_del_conntrack):
 * - Without CTA_TUPLE_ORIG and CTA_TUPLE_REPLY the request FLUSHES the table: every message
 *   built here carries CTA_TUPLE_ORIG, and an item that cannot make a complete one is never sent.
 * - The lookup (nf_conntrack_find_get) matches the zone id of the entry's ORIGINAL direction:
 *   CTA_ZONE carries it, always sent (also 0). A reply-only zone is therefore 0 here; an
 *   original-only zone is its id. Never CTA_ZONE != 0 together with CTA_TUPLE_ZONE:
 *   ctnetlink_parse_tuple_zone() answers EINVAL.
 * - ENOENT also comes for a wrong zone, so it is only "already gone" after a GET agrees.
 * - CTA_ID, when sent, must equal nf_ct_get_id() or the answer is ENOENT.
 * - ctnetlink_parse_tuple_proto: TCP/UDP/SCTP/UDPLITE/DCCP (and GRE keys) need both ports;
 *   ICMP/ICMPv6 need id, type and code; other protocols carry only the protocol number.
 */
#include "ops/ct_tuple_delete.h"
#include "ops/ct_tuple_get.h"
#include "wire/ctnetlink.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>


static int needs_ports(uint8_t p)
{
	return p == IPPROTO_TCP || p == IPPROTO_UDP || p == IPPROTO_SCTP || p == IPPROTO_UDPLITE ||
	       p == IPPROTO_DCCP;
}

int ct_tuple_delete_check(const struct ct_tuple_delete *d)
{
	const struct ct_tuple *t = &d->orig;

	if (d->family != 4 && d->family != 6)
		return -EINVAL;
	if (t->src.family != d->family || t->dst.family != d->family)
		return -EINVAL;
	if (needs_ports(t->proto) && !t->has_ports)
		return -EINVAL;
	if ((t->proto == IPPROTO_ICMP && d->family != 4) || (t->proto == IPPROTO_ICMPV6 && d->family != 6))
		return -EINVAL;
	if ((t->proto == IPPROTO_ICMP || t->proto == IPPROTO_ICMPV6) && !t->has_icmp)
		return -EINVAL;
	return 0;
}

static void put_orig_tuple(struct nl_buf *b, const struct ct_tuple_delete *d)
{
	const struct ct_tuple *t = &d->orig;
	size_t tuple = nl_nest_begin(b, CTA_TUPLE_ORIG);
	size_t ip = nl_nest_begin(b, CTA_TUPLE_IP);
	size_t pr;

	if (d->family == 4) {
		nl_attr_put(b, CTA_IP_V4_SRC, t->src.bytes, 4);
		nl_attr_put(b, CTA_IP_V4_DST, t->dst.bytes, 4);
	} else {
		nl_attr_put(b, CTA_IP_V6_SRC, t->src.bytes, 16);
		nl_attr_put(b, CTA_IP_V6_DST, t->dst.bytes, 16);
	}
	nl_nest_end(b, ip);
	pr = nl_nest_begin(b, CTA_TUPLE_PROTO);
	nl_attr_put_u8(b, CTA_PROTO_NUM, t->proto);
	if (t->proto == IPPROTO_ICMP) {
		nl_attr_put_be16(b, CTA_PROTO_ICMP_ID, t->icmp_id);
		nl_attr_put_u8(b, CTA_PROTO_ICMP_TYPE, t->icmp_type);
		nl_attr_put_u8(b, CTA_PROTO_ICMP_CODE, t->icmp_code);
	} else if (t->proto == IPPROTO_ICMPV6) {
		nl_attr_put_be16(b, CTA_PROTO_ICMPV6_ID, t->icmp_id);
		nl_attr_put_u8(b, CTA_PROTO_ICMPV6_TYPE, t->icmp_type);
		nl_attr_put_u8(b, CTA_PROTO_ICMPV6_CODE, t->icmp_code);
	} else if (t->has_ports) {
		nl_attr_put_be16(b, CTA_PROTO_SRC_PORT, t->src_port);
		nl_attr_put_be16(b, CTA_PROTO_DST_PORT, t->dst_port);
	}
	nl_nest_end(b, pr);
	nl_nest_end(b, tuple);
}

struct ack_ctx {
	struct ct_delete_result *r;
	const struct ct_tuple_delete *items;
	const size_t *index;   /* batch message -> item */
	size_t *enoent;        /* items answered ENOENT, to re-check */
	uint8_t *resent;       /* ...and whether on a resend */
	size_t n_enoent;
};

void ct_delete_count_rechecked(struct ct_delete_result *r, const struct ct_tuple_delete *items,
			       const uint8_t *resent, const int *state, size_t n, int err)
{
	r->rechecked += n;
	for (size_t k = 0; k < n; k++) {
		uint8_t proto = items[k].orig.proto;
		if (err == 0 && state[k] == 0) {
			ct_delete_count(r, proto, resent[k] ? 0 : -ENOENT, resent[k]);
		} else {
			if (state[k] == 1)
				r->still_present++;
			/* EEXIST: the kernel said ENOENT, yet the entry is there (e.g. a wrong zone). */
			ct_delete_count(r, proto, err < 0 ? err : state[k] < 0 ? state[k] : -EEXIST, 0);
		}
	}
}

static void tuple_ack(size_t msg, int error, int resent, void *p)
{
	struct ack_ctx *ctx = p;
	size_t i = ctx->index[msg];

	if (error == -ENOENT) {
		ctx->resent[ctx->n_enoent] = (uint8_t)resent;
		ctx->enoent[ctx->n_enoent++] = i;
		return;
	}
	ct_delete_count(ctx->r, ctx->items[i].orig.proto, error, resent);
}

/* ------------------------------------------------------------------ re-check */

struct recheck_ctx {
	const struct ct_tuple_delete *items;
	const size_t *item_of;  /* flow -> item */
	int *state;
};

static void recheck_cb(size_t flow, int error, const struct ct_entry *e, void *p)
{
	struct recheck_ctx *ctx = p;
	size_t i = ctx->item_of[flow];
	const struct ct_tuple_delete *d = &ctx->items[i];

	if (ctx->state[i] == 1)
		return;
	if (error == 0) {
		/* Found: ours unless the kernel's id says it is a newer entry on the same tuple. */
		if (!(d->has_id && e->has_id && e->id != d->id))
			ctx->state[i] = 1;
	} else if (error != -ENOENT && ctx->state[i] == 0) {
		ctx->state[i] = error;
	}
}

static void flow_of(const struct ct_tuple_delete *d, uint16_t zone, struct ct_flow *f)
{
	const struct ct_tuple *t = &d->orig;

	memset(f, 0, sizeof(*f));
	memcpy(f->osrc, t->src.bytes, 16);
	memcpy(f->odst, t->dst.bytes, 16);
	f->family = d->family;
	f->proto = t->proto;
	f->zone = zone;
	if (t->proto == IPPROTO_ICMP || t->proto == IPPROTO_ICMPV6) {
		f->flags = CT_FLOW_HAS_ICMP;
		f->osport = t->icmp_id;
		f->odport = (uint16_t)((t->icmp_type << 8) | t->icmp_code);
	} else if (t->has_ports) {
		f->flags = CT_FLOW_HAS_PORTS;
		f->osport = t->src_port;
		f->odport = t->dst_port;
	}
}

int ct_recheck_gone(struct ct_conn *c, const struct ct_tuple_delete *items, size_t n, int *state)
{
	struct ct_flow *flows = malloc((n ? n : 1) * 2 * sizeof(*flows));
	size_t *item_of = malloc((n ? n : 1) * 2 * sizeof(*item_of));
	struct recheck_ctx ctx = { .items = items, .item_of = item_of, .state = state };
	size_t m = 0;
	uint64_t sent = 0;
	int err;

	if (!flows || !item_of) {
		free(flows);
		free(item_of);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		state[i] = 0;
		flow_of(&items[i], items[i].zone, &flows[m]);
		item_of[m++] = i;
		if (items[i].alt_zone >= 0 && (uint16_t)items[i].alt_zone != items[i].zone) {
			flow_of(&items[i], (uint16_t)items[i].alt_zone, &flows[m]);
			item_of[m++] = i;
		}
	}
	err = ct_get_flows(&c->req, flows, m, 64, recheck_cb, &ctx, &sent);
	free(flows);
	free(item_of);
	return err;
}

/* Counts the re-checked ENOENT answers: gone = already gone (deleted, on a resend), else failed. */
static int settle_enoent(struct ct_conn *c, struct ack_ctx *ctx)
{
	struct ct_tuple_delete *again;
	int *state;
	int err;

	if (ctx->n_enoent == 0)
		return 0;
	again = malloc(ctx->n_enoent * sizeof(*again));
	state = malloc(ctx->n_enoent * sizeof(*state));
	if (!again || !state) {
		free(again);
		free(state);
		return -ENOMEM;
	}
	for (size_t k = 0; k < ctx->n_enoent; k++)
		again[k] = ctx->items[ctx->enoent[k]];
	err = ct_recheck_gone(c, again, ctx->n_enoent, state);
	ct_delete_count_rechecked(ctx->r, again, ctx->resent, state, ctx->n_enoent, err);
	ctx->n_enoent = 0;
	free(again);
	free(state);
	return 0;
}

int ct_delete_tuples(struct ct_conn *c, const struct ct_tuple_delete *items, size_t n,
		     struct ct_delete_result *out)
{
	size_t chunk = c->delete_batch ? c->delete_batch : CT_DEFAULT_DELETE_BATCH;
	size_t index[CT_DEFAULT_DELETE_BATCH * 4];
	size_t per_flush = chunk < sizeof(index) / sizeof(index[0]) ? chunk : sizeof(index) / sizeof(index[0]);
	struct ack_ctx ctx = { .r = out, .items = items, .index = index };
	struct nl_batch b;
	int err = 0, settle_err;

	memset(out, 0, sizeof(*out));
	ctx.enoent = malloc((n ? n : 1) * sizeof(*ctx.enoent));
	ctx.resent = malloc(n ? n : 1);
	if (!ctx.enoent || !ctx.resent) {
		free(ctx.enoent);
		free(ctx.resent);
		return -ENOMEM;
	}
	nl_batch_init(&b);
	for (size_t i = 0; i < n && !err;) {
		size_t k = 0;
		for (; i < n && k < per_flush; i++) {
			size_t off;
			if (ct_tuple_delete_check(&items[i]) < 0) {
				ct_delete_count(out, items[i].orig.proto, -EINVAL, 0);
				continue;
			}
			off = nl_batch_msg_begin(&b, CT_TYPE(IPCTNL_MSG_CT_DELETE), 0);
			{
				struct nfgenmsg g = { .nfgen_family = items[i].family == 6 ? AF_INET6 : AF_INET,
						      .version = NFNETLINK_V0, .res_id = 0 };
				nl_put(&b.msgs, &g, sizeof(g));
			}
			put_orig_tuple(&b.msgs, &items[i]);
			nl_attr_put_be16(&b.msgs, CTA_ZONE, items[i].zone);
			if (items[i].has_id)
				nl_attr_put_be32(&b.msgs, CTA_ID, items[i].id);
			err = nl_batch_msg_end(&b, off);
			if (err < 0)
				break;
			index[k++] = i;
		}
		if (err < 0)
			break;
		if (b.count > 0)
			err = nl_batch_flush(&c->req, &b, chunk, tuple_ack, &ctx, &out->batch);
	}
	nl_batch_free(&b);
	settle_err = settle_enoent(c, &ctx);
	free(ctx.enoent);
	free(ctx.resent);
	return err ? err : settle_err;
}
