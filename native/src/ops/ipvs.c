/*
 * ipvs.c: IPVS generic netlink operations. See ipvs.h.
 *
 * Kernel behaviour this file depends on (net/netfilter/ipvs/ip_vs_ctl.c):
 * - ip_vs_genl_parse_service: a service is identified by IPVS_SVC_ATTR_AF plus either
 *   IPVS_SVC_ATTR_FWMARK or PROTOCOL+ADDR+PORT; NEW_SERVICE ("full entry") also requires
 *   SCHED_NAME, FLAGS, TIMEOUT and NETMASK, and applies FLAGS as (old & ~mask) | (flags & mask).
 * - ip_vs_genl_parse_dest: memset()s the destination, then for NEW_DEST/SET_DEST ("full
 *   entry") requires FWD_METHOD, WEIGHT, U_THRESH and L_THRESH and takes TUN_TYPE, TUN_PORT,
 *   TUN_FLAGS only when present. __ip_vs_update_dest (called by ip_vs_edit_dest) then copies
 *   every one of those fields into the live destination. So a SET_DEST carrying only a new
 *   weight would fail (EINVAL), and one without the tunnel fields would reset them to zero:
 *   setting a weight is a read-modify-write that resends everything the destination has.
 * - __ip_vs_update_dest keeps dest->last_weight when the new weight is 0 ("keep the
 *   last_weight with latest non-0 weight"): the mh scheduler builds its lookup table from
 *   last_weight, so editing 1 -> 0 keeps the Maglev slots (the server is only "unavailable",
 *   ip_vs_mh.c is_unavailable), while delete + re-add at 0 rebuilds the table without it.
 * - ip_vs_genl_set_cmd: a destination command on a missing service fails with ESRCH;
 *   ip_vs_edit_dest / ip_vs_del_dest fail with ENOENT for a missing destination; an absent
 *   IPVS_DEST_ATTR_ADDR_FAMILY means the service's family.
 * - ip_vs_genl_dump_dests: dumping the destinations of a missing service returns nothing (no
 *   error), hence the GET_SERVICE check first in ipvs_list_dests.
 * - ip_vs_genl_fill_service: IPVS_SVC_ATTR_FLAGS is struct ip_vs_flags {flags, mask}.
 */
#include "ops/ipvs.h"
#include "wire/genl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/genetlink.h>

static int resolve(struct nl_sock *s, uint16_t *family)
{
	int err = genl_resolve_family(s, IPVS_GENL_NAME, family);
	return err == -ENOENT ? -IPVS_EUNAVAILABLE : err;
}

void ipvs_service_list_free(struct ipvs_service_list *l)
{
	free(l->items);
	memset(l, 0, sizeof(*l));
}

void ipvs_dest_list_free(struct ipvs_dest_list *l)
{
	free(l->items);
	memset(l, 0, sizeof(*l));
}

static int valid_af(uint16_t af)
{
	return af == AF_INET || af == AF_INET6;
}

static size_t addr_len(uint16_t af)
{
	return af == AF_INET6 ? 16 : 4;
}

/* ------------------------------------------------------------------ building */

static int put_service_key(struct nl_buf *b, const struct ipvs_service_key *key)
{
	uint8_t addr[16];

	if (!valid_af(key->af))
		return -EAFNOSUPPORT;
	nl_attr_put_u16(b, IPVS_SVC_ATTR_AF, key->af);
	if (key->fwmark) {
		nl_attr_put_u32(b, IPVS_SVC_ATTR_FWMARK, key->fwmark);
		return 0;
	}
	if (key->protocol != IPPROTO_TCP && key->protocol != IPPROTO_UDP && key->protocol != IPPROTO_SCTP)
		return -EPROTONOSUPPORT;
	/* union nf_inet_addr: 16 bytes, an IPv4 address in the first 4 */
	memset(addr, 0, sizeof(addr));
	memcpy(addr, key->addr, addr_len(key->af));
	nl_attr_put_u16(b, IPVS_SVC_ATTR_PROTOCOL, key->protocol);
	nl_attr_put(b, IPVS_SVC_ATTR_ADDR, addr, sizeof(addr));
	nl_attr_put_be16(b, IPVS_SVC_ATTR_PORT, key->port);
	return 0;
}

/* Nested IPVS_CMD_ATTR_SERVICE holding the key (and, when full, everything NEW_SERVICE needs). */
static int put_service(struct nl_buf *b, const struct ipvs_service_key *key, const struct ipvs_service *full)
{
	size_t nest = nl_nest_begin(b, IPVS_CMD_ATTR_SERVICE);
	int err = put_service_key(b, key);

	if (err < 0)
		return err;
	if (full) {
		/* HASHED is the kernel's own bookkeeping (ip_vs_svc_hash refuses a service that
		 * already carries it): never send it. */
		struct ip_vs_flags flags = { .flags = full->flags & ~(uint32_t)IP_VS_SVC_F_HASHED, .mask = ~0U };
		if (full->scheduler[0] == '\0')
			return -EINVAL;
		nl_attr_put_str(b, IPVS_SVC_ATTR_SCHED_NAME, full->scheduler);
		nl_attr_put(b, IPVS_SVC_ATTR_FLAGS, &flags, sizeof(flags));
		nl_attr_put_u32(b, IPVS_SVC_ATTR_TIMEOUT, full->timeout);
		nl_attr_put_u32(b, IPVS_SVC_ATTR_NETMASK, full->netmask);
		if (full->pe_name[0] != '\0')
			nl_attr_put_str(b, IPVS_SVC_ATTR_PE_NAME, full->pe_name);
	}
	nl_nest_end(b, nest);
	return 0;
}

/* Nested IPVS_CMD_ATTR_DEST: the key, and with full != 0 every field ip_vs_genl_parse_dest reads. */
static int put_dest(struct nl_buf *b, const struct ipvs_dest *d, uint16_t svc_af, int full)
{
	uint16_t af = d->af ? d->af : svc_af;
	uint8_t addr[16];
	size_t nest;

	if (!valid_af(af))
		return -EAFNOSUPPORT;
	memset(addr, 0, sizeof(addr));
	memcpy(addr, d->addr, addr_len(af));
	nest = nl_nest_begin(b, IPVS_CMD_ATTR_DEST);
	nl_attr_put(b, IPVS_DEST_ATTR_ADDR, addr, sizeof(addr));
	nl_attr_put_be16(b, IPVS_DEST_ATTR_PORT, d->port);
	nl_attr_put_u16(b, IPVS_DEST_ATTR_ADDR_FAMILY, af);
	if (full) {
		if ((d->fwd & ~(uint32_t)IP_VS_CONN_F_FWD_MASK) != 0 || d->weight > INT32_MAX)
			return -EINVAL;
		nl_attr_put_u32(b, IPVS_DEST_ATTR_FWD_METHOD, d->fwd);
		nl_attr_put_u32(b, IPVS_DEST_ATTR_WEIGHT, d->weight);
		nl_attr_put_u32(b, IPVS_DEST_ATTR_U_THRESH, d->u_thresh);
		nl_attr_put_u32(b, IPVS_DEST_ATTR_L_THRESH, d->l_thresh);
		nl_attr_put_u8(b, IPVS_DEST_ATTR_TUN_TYPE, d->tun_type);
		nl_attr_put_be16(b, IPVS_DEST_ATTR_TUN_PORT, d->tun_port);
		nl_attr_put_u16(b, IPVS_DEST_ATTR_TUN_FLAGS, d->tun_flags);
	}
	nl_nest_end(b, nest);
	return 0;
}

/* ------------------------------------------------------------------ parsing */

static int parse_addr(const struct nlattr *a, uint16_t af, uint8_t out[16])
{
	size_t need = addr_len(af);

	if (!a || nl_attr_len(a) < need)
		return -EBADMSG;
	memset(out, 0, 16);
	memcpy(out, nl_attr_data(a), need);
	return 0;
}

static void copy_str(char *dst, size_t cap, const struct nlattr *a)
{
	size_t len;

	dst[0] = '\0';
	if (!a)
		return;
	len = strnlen(nl_attr_data(a), nl_attr_len(a));
	if (len >= cap)
		len = cap - 1;
	memcpy(dst, nl_attr_data(a), len);
	dst[len] = '\0';
}

static int parse_service(const struct nlmsghdr *h, struct ipvs_service *out)
{
	const struct nlattr *top[IPVS_CMD_ATTR_MAX + 1];
	const struct nlattr *tb[IPVS_SVC_ATTR_MAX + 1];
	const void *data;
	size_t len;
	int err = genl_msg_attrs(h, &data, &len);

	if (err < 0)
		return err;
	if (nl_attr_parse(data, len, top, IPVS_CMD_ATTR_MAX) < 0 || !top[IPVS_CMD_ATTR_SERVICE])
		return -EBADMSG;
	if (nl_attr_parse(nl_attr_data(top[IPVS_CMD_ATTR_SERVICE]), nl_attr_len(top[IPVS_CMD_ATTR_SERVICE]), tb,
			  IPVS_SVC_ATTR_MAX) < 0)
		return -EBADMSG;
	memset(out, 0, sizeof(*out));
	if (nl_attr_get_u16(tb[IPVS_SVC_ATTR_AF], &out->key.af) < 0 || !valid_af(out->key.af))
		return -EBADMSG;
	if (tb[IPVS_SVC_ATTR_FWMARK]) {
		if (nl_attr_get_u32(tb[IPVS_SVC_ATTR_FWMARK], &out->key.fwmark) < 0)
			return -EBADMSG;
	}
	if (!out->key.fwmark) {
		if (nl_attr_get_u16(tb[IPVS_SVC_ATTR_PROTOCOL], &out->key.protocol) < 0 ||
		    parse_addr(tb[IPVS_SVC_ATTR_ADDR], out->key.af, out->key.addr) < 0 ||
		    nl_attr_get_be16(tb[IPVS_SVC_ATTR_PORT], &out->key.port) < 0)
			return -EBADMSG;
	}
	copy_str(out->scheduler, sizeof(out->scheduler), tb[IPVS_SVC_ATTR_SCHED_NAME]);
	copy_str(out->pe_name, sizeof(out->pe_name), tb[IPVS_SVC_ATTR_PE_NAME]);
	if (tb[IPVS_SVC_ATTR_FLAGS] && nl_attr_len(tb[IPVS_SVC_ATTR_FLAGS]) >= sizeof(struct ip_vs_flags)) {
		struct ip_vs_flags flags;
		memcpy(&flags, nl_attr_data(tb[IPVS_SVC_ATTR_FLAGS]), sizeof(flags));
		out->flags = flags.flags;
	}
	if (tb[IPVS_SVC_ATTR_TIMEOUT])
		(void)nl_attr_get_u32(tb[IPVS_SVC_ATTR_TIMEOUT], &out->timeout);
	if (tb[IPVS_SVC_ATTR_NETMASK])
		(void)nl_attr_get_u32(tb[IPVS_SVC_ATTR_NETMASK], &out->netmask);
	return 0;
}

static int parse_dest(const struct nlmsghdr *h, uint16_t svc_af, struct ipvs_dest *out)
{
	const struct nlattr *top[IPVS_CMD_ATTR_MAX + 1];
	const struct nlattr *tb[IPVS_DEST_ATTR_MAX + 1];
	const void *data;
	size_t len;
	int err = genl_msg_attrs(h, &data, &len);

	if (err < 0)
		return err;
	if (nl_attr_parse(data, len, top, IPVS_CMD_ATTR_MAX) < 0 || !top[IPVS_CMD_ATTR_DEST])
		return -EBADMSG;
	if (nl_attr_parse(nl_attr_data(top[IPVS_CMD_ATTR_DEST]), nl_attr_len(top[IPVS_CMD_ATTR_DEST]), tb,
			  IPVS_DEST_ATTR_MAX) < 0)
		return -EBADMSG;
	memset(out, 0, sizeof(*out));
	out->af = svc_af; /* kernels before IPVS_DEST_ATTR_ADDR_FAMILY only had same-family dests */
	if (tb[IPVS_DEST_ATTR_ADDR_FAMILY] && (nl_attr_get_u16(tb[IPVS_DEST_ATTR_ADDR_FAMILY], &out->af) < 0 || !valid_af(out->af)))
		return -EBADMSG;
	if (parse_addr(tb[IPVS_DEST_ATTR_ADDR], out->af, out->addr) < 0 ||
	    nl_attr_get_be16(tb[IPVS_DEST_ATTR_PORT], &out->port) < 0 ||
	    nl_attr_get_u32(tb[IPVS_DEST_ATTR_FWD_METHOD], &out->fwd) < 0 ||
	    nl_attr_get_u32(tb[IPVS_DEST_ATTR_WEIGHT], &out->weight) < 0)
		return -EBADMSG;
	out->fwd &= IP_VS_CONN_F_FWD_MASK;
	(void)nl_attr_get_u32(tb[IPVS_DEST_ATTR_U_THRESH], &out->u_thresh);
	(void)nl_attr_get_u32(tb[IPVS_DEST_ATTR_L_THRESH], &out->l_thresh);
	(void)nl_attr_get_u8(tb[IPVS_DEST_ATTR_TUN_TYPE], &out->tun_type);
	(void)nl_attr_get_be16(tb[IPVS_DEST_ATTR_TUN_PORT], &out->tun_port);
	(void)nl_attr_get_u16(tb[IPVS_DEST_ATTR_TUN_FLAGS], &out->tun_flags);
	(void)nl_attr_get_u32(tb[IPVS_DEST_ATTR_ACTIVE_CONNS], &out->active_conns);
	(void)nl_attr_get_u32(tb[IPVS_DEST_ATTR_INACT_CONNS], &out->inactive_conns);
	(void)nl_attr_get_u32(tb[IPVS_DEST_ATTR_PERSIST_CONNS], &out->persistent_conns);
	return 0;
}

/* ------------------------------------------------------------------ requests */

static int grow(void **items, size_t *cap, size_t count, size_t size)
{
	void *bigger;
	size_t want;

	if (count < *cap)
		return 0;
	want = *cap ? *cap * 2 : 16;
	bigger = realloc(*items, want * size);
	if (!bigger)
		return -ENOMEM;
	*items = bigger;
	*cap = want;
	return 0;
}

static int on_service(const struct nlmsghdr *h, void *arg)
{
	struct ipvs_service_list *l = arg;
	int err = grow((void **)&l->items, &l->cap, l->count, sizeof(*l->items));

	if (err < 0)
		return err;
	err = parse_service(h, &l->items[l->count]);
	if (err < 0)
		return err;
	l->count++;
	return 0;
}

struct dest_ctx {
	struct ipvs_dest_list *list;
	uint16_t svc_af;
};

static int on_dest(const struct nlmsghdr *h, void *arg)
{
	struct dest_ctx *ctx = arg;
	struct ipvs_dest_list *l = ctx->list;
	int err = grow((void **)&l->items, &l->cap, l->count, sizeof(*l->items));

	if (err < 0)
		return err;
	err = parse_dest(h, ctx->svc_af, &l->items[l->count]);
	if (err < 0)
		return err;
	l->count++;
	return 0;
}

/* Sends one request built by `build` (a dump when on_msg is given, else a doit with ACK). */
typedef int (*build_fn)(struct nl_buf *b, const void *arg);

static int request(struct nl_sock *s, uint8_t cmd, int dump, build_fn build, const void *arg, nl_msg_cb on_msg,
		   void *ctx)
{
	struct nl_buf b;
	uint16_t family;
	uint32_t seq;
	size_t msg;
	int err = resolve(s, &family);

	if (err < 0)
		return err;
	seq = nl_next_seq(s);
	nl_buf_init(&b);
	msg = genl_msg_begin(&b, family, NLM_F_REQUEST | (dump ? NLM_F_DUMP : NLM_F_ACK), seq, cmd, IPVS_GENL_VERSION);
	err = build ? build(&b, arg) : 0;
	if (err == 0) {
		nl_msg_end(&b, msg);
		err = nl_transact(s, &b, seq, on_msg, ctx);
	}
	nl_buf_free(&b);
	return err;
}

int ipvs_list_services(struct nl_sock *s, struct ipvs_service_list *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	err = request(s, IPVS_CMD_GET_SERVICE, 1, NULL, NULL, on_service, out);
	if (err < 0)
		ipvs_service_list_free(out);
	return err;
}

static int build_key(struct nl_buf *b, const void *arg)
{
	return put_service(b, arg, NULL);
}

int ipvs_get_service(struct nl_sock *s, const struct ipvs_service_key *key, struct ipvs_service *out)
{
	struct ipvs_service_list l;
	int err;

	memset(&l, 0, sizeof(l));
	/* A doit GET_SERVICE answers with the service (or ESRCH), then the ACK. */
	err = request(s, IPVS_CMD_GET_SERVICE, 0, build_key, key, on_service, &l);
	if (err == 0 && l.count == 0)
		err = -ESRCH;
	if (err == 0)
		*out = l.items[0];
	ipvs_service_list_free(&l);
	return err;
}

int ipvs_list_dests(struct nl_sock *s, const struct ipvs_service_key *key, struct ipvs_dest_list *out)
{
	struct ipvs_service svc;
	struct dest_ctx ctx = { out, key->af };
	int err;

	memset(out, 0, sizeof(*out));
	err = ipvs_get_service(s, key, &svc);
	if (err < 0)
		return err;
	err = request(s, IPVS_CMD_GET_DEST, 1, build_key, key, on_dest, &ctx);
	if (err < 0)
		ipvs_dest_list_free(out);
	return err;
}

struct dest_req {
	const struct ipvs_service_key *key;
	const struct ipvs_dest *dest;
	int full;
};

static int build_dest(struct nl_buf *b, const void *arg)
{
	const struct dest_req *r = arg;
	int err = put_service(b, r->key, NULL);

	return err < 0 ? err : put_dest(b, r->dest, r->key->af, r->full);
}

static int same_dest(const struct ipvs_dest *a, const struct ipvs_dest *key, uint16_t svc_af)
{
	uint16_t af = key->af ? key->af : svc_af;
	return a->af == af && a->port == key->port && memcmp(a->addr, key->addr, addr_len(af)) == 0;
}

int ipvs_set_dest_weight(struct nl_sock *s, const struct ipvs_service_key *key, const struct ipvs_dest *dest_key,
			 uint32_t weight)
{
	struct ipvs_dest_list l;
	struct ipvs_dest next;
	struct dest_req r = { key, &next, 1 };
	size_t i;
	int err;

	if (weight > INT32_MAX)
		return -ERANGE;
	err = ipvs_list_dests(s, key, &l);
	if (err < 0)
		return err;
	for (i = 0; i < l.count; i++) {
		if (same_dest(&l.items[i], dest_key, key->af))
			break;
	}
	if (i == l.count) {
		ipvs_dest_list_free(&l);
		return -ENOENT;
	}
	next = l.items[i]; /* everything the kernel has, so SET_DEST resets nothing */
	next.weight = weight;
	ipvs_dest_list_free(&l);
	return request(s, IPVS_CMD_SET_DEST, 0, build_dest, &r, NULL, NULL);
}

int ipvs_add_dest(struct nl_sock *s, const struct ipvs_service_key *key, const struct ipvs_dest *dest)
{
	struct dest_req r = { key, dest, 1 };
	return request(s, IPVS_CMD_NEW_DEST, 0, build_dest, &r, NULL, NULL);
}

int ipvs_del_dest(struct nl_sock *s, const struct ipvs_service_key *key, const struct ipvs_dest *dest_key)
{
	struct dest_req r = { key, dest_key, 0 };
	return request(s, IPVS_CMD_DEL_DEST, 0, build_dest, &r, NULL, NULL);
}

static int build_full_service(struct nl_buf *b, const void *arg)
{
	const struct ipvs_service *svc = arg;
	return put_service(b, &svc->key, svc);
}

int ipvs_add_service(struct nl_sock *s, const struct ipvs_service *svc)
{
	return request(s, IPVS_CMD_NEW_SERVICE, 0, build_full_service, svc, NULL, NULL);
}

int ipvs_del_service(struct nl_sock *s, const struct ipvs_service_key *key)
{
	return request(s, IPVS_CMD_DEL_SERVICE, 0, build_key, key, NULL, NULL);
}
