/* ct_parse.c: parsing of ctnetlink conntrack messages (see ct_parse.h). */
#include "wire/ct_parse.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include "wire/netlink.h"

static int parse_ip(const struct nlattr *nest, struct ct_tuple *t)
{
	const struct nlattr *tb[CTA_IP_MAX + 1];

	if (nl_attr_parse(nl_attr_data(nest), nl_attr_len(nest), tb, CTA_IP_MAX) < 0)
		return -EBADMSG;
	if (tb[CTA_IP_V4_SRC] && tb[CTA_IP_V4_DST] && nl_attr_len(tb[CTA_IP_V4_SRC]) >= 4 &&
	    nl_attr_len(tb[CTA_IP_V4_DST]) >= 4) {
		t->src.family = t->dst.family = 4;
		memcpy(t->src.bytes, nl_attr_data(tb[CTA_IP_V4_SRC]), 4);
		memcpy(t->dst.bytes, nl_attr_data(tb[CTA_IP_V4_DST]), 4);
		return 0;
	}
	if (tb[CTA_IP_V6_SRC] && tb[CTA_IP_V6_DST] && nl_attr_len(tb[CTA_IP_V6_SRC]) >= 16 &&
	    nl_attr_len(tb[CTA_IP_V6_DST]) >= 16) {
		t->src.family = t->dst.family = 6;
		memcpy(t->src.bytes, nl_attr_data(tb[CTA_IP_V6_SRC]), 16);
		memcpy(t->dst.bytes, nl_attr_data(tb[CTA_IP_V6_DST]), 16);
		return 0;
	}
	return -EBADMSG;
}

static int parse_proto(const struct nlattr *nest, struct ct_tuple *t)
{
	const struct nlattr *tb[CTA_PROTO_MAX + 1];

	if (nl_attr_parse(nl_attr_data(nest), nl_attr_len(nest), tb, CTA_PROTO_MAX) < 0)
		return -EBADMSG;
	if (nl_attr_get_u8(tb[CTA_PROTO_NUM], &t->proto) < 0)
		return -EBADMSG;
	if (tb[CTA_PROTO_SRC_PORT] && tb[CTA_PROTO_DST_PORT]) {
		if (nl_attr_get_be16(tb[CTA_PROTO_SRC_PORT], &t->src_port) < 0 ||
		    nl_attr_get_be16(tb[CTA_PROTO_DST_PORT], &t->dst_port) < 0)
			return -EBADMSG;
		t->has_ports = 1;
	}
	if (tb[CTA_PROTO_ICMP_TYPE] || tb[CTA_PROTO_ICMPV6_TYPE]) {
		int v6 = tb[CTA_PROTO_ICMPV6_TYPE] != NULL;
		if (nl_attr_get_u8(tb[v6 ? CTA_PROTO_ICMPV6_TYPE : CTA_PROTO_ICMP_TYPE], &t->icmp_type) < 0)
			return -EBADMSG;
		(void)nl_attr_get_u8(tb[v6 ? CTA_PROTO_ICMPV6_CODE : CTA_PROTO_ICMP_CODE], &t->icmp_code);
		(void)nl_attr_get_be16(tb[v6 ? CTA_PROTO_ICMPV6_ID : CTA_PROTO_ICMP_ID], &t->icmp_id);
		t->has_icmp = 1;
	}
	return 0;
}

static int parse_tuple(const struct nlattr *nest, struct ct_tuple *t)
{
	const struct nlattr *tb[CTA_TUPLE_MAX + 1];

	memset(t, 0, sizeof(*t));
	if (nl_attr_parse(nl_attr_data(nest), nl_attr_len(nest), tb, CTA_TUPLE_MAX) < 0)
		return -EBADMSG;
	if (!tb[CTA_TUPLE_IP] || !tb[CTA_TUPLE_PROTO])
		return -EBADMSG;
	if (parse_ip(tb[CTA_TUPLE_IP], t) < 0 || parse_proto(tb[CTA_TUPLE_PROTO], t) < 0)
		return -EBADMSG;
	if (tb[CTA_TUPLE_ZONE] && nl_attr_get_be16(tb[CTA_TUPLE_ZONE], &t->zone) == 0)
		t->has_zone = 1;
	return 0;
}

static void parse_protoinfo(const struct nlattr *nest, struct ct_entry *e)
{
	const struct nlattr *tb[CTA_PROTOINFO_MAX + 1];
	const struct nlattr *inner[16];

	if (nl_attr_parse(nl_attr_data(nest), nl_attr_len(nest), tb, CTA_PROTOINFO_MAX) < 0)
		return;
	/* CTA_PROTOINFO_{TCP,DCCP,SCTP}_STATE are attribute 1 of their nest in every kernel. */
	for (int kind = CTA_PROTOINFO_TCP; kind <= CTA_PROTOINFO_SCTP; kind++) {
		if (!tb[kind])
			continue;
		if (nl_attr_parse(nl_attr_data(tb[kind]), nl_attr_len(tb[kind]), inner, 15) < 0)
			return;
		if (nl_attr_get_u8(inner[1], &e->state) == 0)
			e->has_state = 1;
		return;
	}
}

int ct_parse_entry(const struct nlmsghdr *h, struct ct_entry *e)
{
	const struct nlattr *tb[CTA_MAX + 1];
	const struct nfgenmsg *g;
	size_t hdr = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg));

	memset(e, 0, sizeof(*e));
	if (h->nlmsg_len < hdr)
		return -EBADMSG;
	g = NLMSG_DATA(h);
	if (g->nfgen_family == AF_INET)
		e->family = 4;
	else if (g->nfgen_family == AF_INET6)
		e->family = 6;
	else
		return -EAFNOSUPPORT;
	if (nl_attr_parse((const uint8_t *)h + hdr, h->nlmsg_len - hdr, tb, CTA_MAX) < 0)
		return -EBADMSG;
	if (!tb[CTA_TUPLE_ORIG] || !tb[CTA_TUPLE_REPLY])
		return -EBADMSG;
	if (parse_tuple(tb[CTA_TUPLE_ORIG], &e->orig) < 0 || parse_tuple(tb[CTA_TUPLE_REPLY], &e->reply) < 0)
		return -EBADMSG;
	e->orig_attr = tb[CTA_TUPLE_ORIG];
	(void)nl_attr_get_be32(tb[CTA_STATUS], &e->status);
	(void)nl_attr_get_be32(tb[CTA_TIMEOUT], &e->timeout);
	(void)nl_attr_get_be32(tb[CTA_MARK], &e->mark);
	if (nl_attr_get_be32(tb[CTA_ID], &e->id) == 0)
		e->has_id = 1;
	/* ctnetlink_dump_zone_id: CTA_ZONE only for a non-default zone that covers both
	 * directions; a one-direction zone comes as CTA_TUPLE_ZONE inside the tuples. */
	if (nl_attr_get_be16(tb[CTA_ZONE], &e->zone) == 0)
		e->zone_dir = CT_ZONE_DIR_ORIG | CT_ZONE_DIR_REPLY;
	else if (e->orig.has_zone) {
		e->zone = e->orig.zone;
		e->zone_dir = CT_ZONE_DIR_ORIG;
	} else if (e->reply.has_zone) {
		e->zone = e->reply.zone;
		e->zone_dir = CT_ZONE_DIR_REPLY;
	} else
		e->zone = 0;
	if (e->zone == 0)
		e->zone_dir = 0;
	if (tb[CTA_PROTOINFO])
		parse_protoinfo(tb[CTA_PROTOINFO], e);
	return 0;
}

/* The reply tuple's source address from its CTA_TUPLE_IP nest. */
static int parse_ip_src(const struct nlattr *nest, struct ct_addr *src)
{
	struct nl_attr_iter it;
	const struct nlattr *a;

	nl_attr_iter_init(&it, nl_attr_data(nest), nl_attr_len(nest));
	while ((a = nl_attr_next(&it)) != NULL) {
		uint16_t type = nl_attr_type(a);
		size_t n = type == CTA_IP_V4_SRC ? 4 : type == CTA_IP_V6_SRC ? 16 : 0;
		if (n == 0)
			continue;
		if (nl_attr_len(a) < n)
			return -EBADMSG;
		src->family = n == 4 ? 4 : 6;
		memcpy(src->bytes, nl_attr_data(a), n);
		return 0;
	}
	return -EBADMSG;
}

/* Protocol number and ports from a CTA_TUPLE_PROTO nest (ports only when both are there, as
 * parse_proto has them). */
static int parse_proto_ports(const struct nlattr *nest, struct ct_tuple *t)
{
	struct nl_attr_iter it;
	const struct nlattr *a;
	int has_proto = 0, ports = 0;

	nl_attr_iter_init(&it, nl_attr_data(nest), nl_attr_len(nest));
	while ((a = nl_attr_next(&it)) != NULL) {
		switch (nl_attr_type(a)) {
		case CTA_PROTO_NUM:
			has_proto = nl_attr_get_u8(a, &t->proto) == 0;
			break;
		case CTA_PROTO_SRC_PORT:
			ports |= nl_attr_get_be16(a, &t->src_port) == 0 ? 1 : 0;
			break;
		case CTA_PROTO_DST_PORT:
			ports |= nl_attr_get_be16(a, &t->dst_port) == 0 ? 2 : 0;
			break;
		}
	}
	if (it.bad || !has_proto)
		return -EBADMSG;
	t->has_ports = ports == 3;
	return 0;
}

int ct_parse_status_reply(const struct nlmsghdr *h, uint32_t *status, struct ct_tuple *reply)
{
	const struct nlattr *a, *tb_reply = NULL, *tb_status = NULL, *ip = NULL, *proto = NULL;
	struct nl_attr_iter it;
	const struct nfgenmsg *g;
	size_t hdr = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg));

	*status = 0;
	memset(reply, 0, sizeof(*reply));
	if (h->nlmsg_len < hdr)
		return -EBADMSG;
	g = NLMSG_DATA(h);
	if (g->nfgen_family != AF_INET && g->nfgen_family != AF_INET6)
		return -EAFNOSUPPORT;
	/* ctnetlink_fill_info() puts the tuples first and CTA_STATUS soon after: stop there. */
	nl_attr_iter_init(&it, (const uint8_t *)h + hdr, h->nlmsg_len - hdr);
	while ((!tb_reply || !tb_status) && (a = nl_attr_next(&it)) != NULL) {
		if (nl_attr_type(a) == CTA_TUPLE_REPLY)
			tb_reply = a;
		else if (nl_attr_type(a) == CTA_STATUS)
			tb_status = a;
	}
	if (it.bad || !tb_reply)
		return -EBADMSG;
	nl_attr_iter_init(&it, nl_attr_data(tb_reply), nl_attr_len(tb_reply));
	while ((!ip || !proto) && (a = nl_attr_next(&it)) != NULL) {
		if (nl_attr_type(a) == CTA_TUPLE_IP)
			ip = a;
		else if (nl_attr_type(a) == CTA_TUPLE_PROTO)
			proto = a;
	}
	if (it.bad || !ip || !proto || parse_ip_src(ip, &reply->src) < 0 || parse_proto_ports(proto, reply) < 0)
		return -EBADMSG;
	(void)nl_attr_get_be32(tb_status, status);
	return 0;
}

int ct_entry_matches(const struct ct_entry *e, const struct ct_filter *f)
{
	if (!ct_filter_has_protocol(f, e->orig.proto))
		return 0;
	if (f->zone >= 0 && e->zone != (uint16_t)f->zone)
		return 0;
	if (!f->has_addresses)
		return 1;
	if ((f->match & CT_MATCH_ORIG_SRC) && ct_addr_set_has(&f->addrs, &e->orig.src))
		return 1;
	if ((f->match & CT_MATCH_ORIG_DST) && ct_addr_set_has(&f->addrs, &e->orig.dst))
		return 1;
	if ((f->match & CT_MATCH_REPLY_SRC) && ct_addr_set_has(&f->addrs, &e->reply.src))
		return 1;
	if ((f->match & CT_MATCH_REPLY_DST) && ct_addr_set_has(&f->addrs, &e->reply.dst))
		return 1;
	return 0;
}
