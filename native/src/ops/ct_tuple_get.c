/* ct_tuple_get.c: exact-tuple GET (see ct_tuple_get.h). */
#include "ops/ct_tuple_get.h"
#include "wire/ctnetlink.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#define GET_MAX_ROUNDS 8

static void put_nfgen(struct nl_buf *b, uint8_t family)
{
	struct nfgenmsg g = { .nfgen_family = family, .version = NFNETLINK_V0, .res_id = 0 };
	nl_put(b, &g, sizeof(g));
}

/* CTA_TUPLE_ORIG of an indexed flow, then CTA_ZONE. */
static void put_flow_key(struct nl_buf *b, const struct ct_flow *f)
{
	size_t tuple = nl_nest_begin(b, CTA_TUPLE_ORIG);
	size_t ip = nl_nest_begin(b, CTA_TUPLE_IP);
	size_t pr;
	int v6 = f->family == 6;

	nl_attr_put(b, v6 ? CTA_IP_V6_SRC : CTA_IP_V4_SRC, f->osrc, v6 ? 16 : 4);
	nl_attr_put(b, v6 ? CTA_IP_V6_DST : CTA_IP_V4_DST, f->odst, v6 ? 16 : 4);
	nl_nest_end(b, ip);
	pr = nl_nest_begin(b, CTA_TUPLE_PROTO);
	nl_attr_put_u8(b, CTA_PROTO_NUM, f->proto);
	if (f->flags & CT_FLOW_HAS_PORTS) {
		nl_attr_put_be16(b, CTA_PROTO_SRC_PORT, f->osport);
		nl_attr_put_be16(b, CTA_PROTO_DST_PORT, f->odport);
	} else if (f->flags & CT_FLOW_HAS_ICMP) {
		nl_attr_put_be16(b, v6 ? CTA_PROTO_ICMPV6_ID : CTA_PROTO_ICMP_ID, f->osport);
		nl_attr_put_u8(b, v6 ? CTA_PROTO_ICMPV6_TYPE : CTA_PROTO_ICMP_TYPE, (uint8_t)(f->odport >> 8));
		nl_attr_put_u8(b, v6 ? CTA_PROTO_ICMPV6_CODE : CTA_PROTO_ICMP_CODE, (uint8_t)f->odport);
	}
	nl_nest_end(b, pr);
	nl_nest_end(b, tuple);
	nl_attr_put_be16(b, CTA_ZONE, f->zone);
}

/* ------------------------------------------------------------------ GET */

struct get_round {
	size_t *pending;   /* flow indices of this chunk */
	size_t n;
	uint32_t base;     /* seq of pending[0] */
	uint8_t *answered;
};

static int get_chunk(struct nl_sock *s, const struct ct_flow *flows, struct get_round *r, ct_get_cb cb, void *ctx,
		     uint64_t *sent)
{
	struct nl_buf b;
	int err;

	nl_buf_init(&b);
	r->base = s->seq + 1;
	for (size_t j = 0; j < r->n; j++) {
		const struct ct_flow *f = &flows[r->pending[j]];
		size_t off = nl_msg_begin(&b, CT_TYPE(IPCTNL_MSG_CT_GET), NLM_F_REQUEST, r->base + (uint32_t)j);
		put_nfgen(&b, f->family == 6 ? AF_INET6 : AF_INET);
		put_flow_key(&b, f);
		nl_msg_end(&b, off);
	}
	s->seq += (uint32_t)r->n;
	err = b.failed ? -ENOMEM : nl_send(s, b.data, b.len);
	nl_buf_free(&b);
	if (err < 0)
		return err;
	*sent += r->n;
	/* The kernel answers every request of one sendmsg before sendmsg returns (each GET is
	 * handled synchronously in our context), so whatever is not queued now was dropped. */
	for (;;) {
		struct nl_msg_iter it;
		const struct nlmsghdr *h;
		ssize_t got = nl_recv(s, MSG_DONTWAIT);

		if (got == -ENOBUFS)
			continue;
		if (got == -EAGAIN || got == -EWOULDBLOCK)
			return 0;
		if (got < 0)
			return (int)got;
		nl_msg_iter_init(&it, s->buf, (size_t)got);
		while ((h = nl_msg_next(&it)) != NULL) {
			uint32_t j = h->nlmsg_seq - r->base;
			struct ct_entry e;
			int error = 0;

			if (h->nlmsg_pid != s->portid || j >= r->n || r->answered[j])
				continue;
			if (h->nlmsg_type == NLMSG_ERROR) {
				if (nl_msg_error(h, &error) < 0 || error == 0)
					continue; /* an ACK carries no answer */
				r->answered[j] = 1;
				cb(r->pending[j], error, NULL, ctx);
			} else if (h->nlmsg_type == CT_TYPE(IPCTNL_MSG_CT_NEW) || h->nlmsg_type == CT_TYPE(IPCTNL_MSG_CT_GET)) {
				r->answered[j] = 1;
				if (ct_parse_entry(h, &e) < 0)
					cb(r->pending[j], -EBADMSG, NULL, ctx);
				else
					cb(r->pending[j], 0, &e, ctx);
			}
		}
	}
}

int ct_get_flows(struct nl_sock *s, const struct ct_flow *flows, size_t n, size_t chunk, ct_get_cb cb, void *ctx,
		 uint64_t *sent)
{
	size_t *pending = malloc((n ? n : 1) * sizeof(*pending));
	uint8_t *answered = malloc(chunk ? chunk : 1);
	size_t npending = n;
	int err = 0;

	if (!pending || !answered) {
		free(pending);
		free(answered);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		pending[i] = i;
	for (int round = 0; round < GET_MAX_ROUNDS && npending > 0 && !err; round++) {
		size_t still = 0;
		for (size_t from = 0; from < npending && !err; from += chunk) {
			struct get_round r = { .pending = pending + from, .answered = answered };
			r.n = npending - from < chunk ? npending - from : chunk;
			memset(answered, 0, r.n);
			err = get_chunk(s, flows, &r, cb, ctx, sent);
			for (size_t j = 0; j < r.n; j++)
				if (!answered[j])
					pending[still++] = r.pending[j]; /* lost to an overrun: ask again */
		}
		npending = still;
		chunk = chunk > 1 ? chunk / 2 : 1;
	}
	for (size_t i = 0; i < npending; i++)
		cb(pending[i], err ? err : -ENOBUFS, NULL, ctx);
	free(pending);
	free(answered);
	return err;
}
