/*
 * ct_tuple_delete.c: exact-tuple conntrack deletes (see ct_tuple_delete.h).
 *
 * Kernel facts (net/netfilter/nf_conntrack_netlink.c, ctnetlink_del_conntrack):
 * - Without CTA_TUPLE_ORIG and CTA_TUPLE_REPLY the request FLUSHES the table: every message
 *   built here carries CTA_TUPLE_ORIG, and an item that cannot make a complete one is never sent.
 * - The lookup uses the zone from CTA_ZONE: always sent (also 0).
 * - CTA_ID, when sent, must equal nf_ct_get_id() or the answer is ENOENT.
 * - ctnetlink_parse_tuple_proto: TCP/UDP/SCTP/UDPLITE/DCCP (and GRE keys) need both ports;
 *   ICMP/ICMPv6 need id, type and code; other protocols carry only the protocol number.
 */
#include "ct_tuple_delete.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#define CT_TYPE(msg) ((uint16_t)((NFNL_SUBSYS_CTNETLINK << 8) | (msg)))

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
	struct ct_tuple_delete_result *r;
	const struct ct_tuple_delete *items;
	const size_t *index;   /* batch message -> item */
};

static void count(struct ct_tuple_delete_result *r, uint8_t proto, int error, int resent)
{
	struct ct_tuple_delete_counts *p = &r->by_proto[proto];

	if (error == 0 || (error == -ENOENT && resent)) {
		/* ENOENT on a resend after a lost ACK: our first delete took it. */
		r->deleted++;
		p->deleted++;
	} else if (error == -ENOENT) {
		r->already_gone++;
		p->already_gone++;
	} else {
		r->failed++;
		p->failed++;
		if (!r->first_error)
			r->first_error = error;
	}
}

static void tuple_ack(size_t msg, int error, int resent, void *p)
{
	struct ack_ctx *ctx = p;
	count(ctx->r, ctx->items[ctx->index[msg]].orig.proto, error, resent);
}

int ct_delete_tuples(struct ct_conn *c, const struct ct_tuple_delete *items, size_t n,
		     struct ct_tuple_delete_result *out)
{
	size_t chunk = c->delete_batch ? c->delete_batch : CT_DEFAULT_DELETE_BATCH;
	size_t index[CT_DEFAULT_DELETE_BATCH * 4];
	size_t per_flush = chunk < sizeof(index) / sizeof(index[0]) ? chunk : sizeof(index) / sizeof(index[0]);
	struct ack_ctx ctx = { .r = out, .items = items, .index = index };
	struct nl_batch b;
	int err = 0;

	memset(out, 0, sizeof(*out));
	nl_batch_init(&b);
	for (size_t i = 0; i < n && !err;) {
		size_t k = 0;
		for (; i < n && k < per_flush; i++) {
			size_t off;
			if (ct_tuple_delete_check(&items[i]) < 0) {
				count(out, items[i].orig.proto, -EINVAL, 0);
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
	return err;
}
