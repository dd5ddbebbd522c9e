/*
 * conntrack.c: ctnetlink dump, filtered delete, statistics and (test support) bulk insert.
 *
 * Kernel facts this file depends on (net/netfilter/nf_conntrack_netlink.c, 6.1 .. 6.18):
 * - We never send CTA_FILTER. ctnetlink_filter_match_tuple() compares IPv6 addresses with
 *   `!ipv6_addr_cmp(...)` where it means a mismatch, so an IPv6 address filter selects every
 *   entry EXCEPT that address; and a filtered IPCTNL_MSG_CT_DELETE (flush) only exists from
 *   6.12 and reports no count. Instead one unfiltered dump (AF_UNSPEC: both families) is
 *   matched here against a hash set of addresses, protocols and the zone.
 * - ctnetlink_del_conntrack() looks the entry up by the zone id of its ORIGINAL direction
 *   (CTA_ZONE, or a CTA_TUPLE_ZONE in the original tuple; both together, non-zero, are
 *   EINVAL): see ct_parse.h for directional zones and add_delete() for what is echoed. An
 *   ENOENT is re-checked by GET before it counts as already gone (a wrong zone also says ENOENT). It also compares CTA_ID with nf_ct_get_id() and answers ENOENT on mismatch,
 *   so a new entry that reuses the tuple (IP reuse by a live pod) is never deleted.
 * - ctnetlink_del_conntrack() FLUSHES THE TABLE when the request carries neither
 *   CTA_TUPLE_ORIG nor CTA_TUPLE_REPLY (ctnetlink_flush_conntrack). A delete is therefore only
 *   ever built from an entry whose original tuple we hold (see add_delete()).
 * - ctnetlink_dump_table() resumes each dump chunk after the last entry that did not fit, by
 *   reference/id, and restarts that bucket if it is gone: deleting entries we have already
 *   received while the dump is paused loses nothing (at worst an entry is seen twice).
 * - Dump chunks are sized from the reader's buffer (netlink_recvmsg caps max_recvmsg_len at
 *   32 KiB); a smaller buffer truncates them. nl_recv() peeks sizes and never truncates.
 */
#include "ops/conntrack.h"
#include "ops/ct_tuple_delete.h"
#include "wire/ctnetlink.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netfilter/nf_conntrack_common.h>

#define CT_DUMP_MAX_RESTARTS 3
#define CT_INSERT_BATCH 512

int ct_conn_open(struct ct_conn *c, const struct ct_conn_options *o)
{
	int err;

	memset(c, 0, sizeof(*c));
	c->dump.fd = c->req.fd = -1;
	err = nl_open(&c->dump, NETLINK_NETFILTER, 0, o ? o->recv_buffer : 0);
	if (err < 0)
		return err;
	c->dump.no_peek = o ? o->no_peek : 0;
	err = nl_open(&c->req, NETLINK_NETFILTER, o && o->req_rcvbuf ? o->req_rcvbuf : CT_DEFAULT_REQ_RCVBUF, 0);
	if (err < 0) {
		nl_close(&c->dump);
		return err;
	}
	c->delete_batch = o && o->delete_batch ? o->delete_batch : CT_DEFAULT_DELETE_BATCH;
	return 0;
}

void ct_conn_close(struct ct_conn *c)
{
	nl_close(&c->dump);
	nl_close(&c->req);
}

static void put_nfgen(struct nl_buf *b, uint8_t family, uint16_t res_id)
{
	struct nfgenmsg g = { .nfgen_family = family, .version = NFNETLINK_V0, .res_id = htons(res_id) };
	nl_put(b, &g, sizeof(g));
}

/* ------------------------------------------------------------------ dump */

/* Reads what is left of a dump without blocking. netlink_recvmsg() fills the next chunk
 * synchronously (netlink_dump) before returning, so EAGAIN means the dump is over. */
static void drain(struct nl_sock *s)
{
	for (int i = 0; i < 1000000; i++) {
		ssize_t n = nl_recv(s, MSG_DONTWAIT);
		if (n == -EAGAIN || n == -EWOULDBLOCK || n == -EBADF || n == -ETIMEDOUT)
			return;
	}
}

/* One dump pass over the table (both families), calling cb for every parsed entry.
 * Returns 0, -ENOBUFS when the kernel dropped part of the dump (the caller may restart), or
 * another -errno. On any error the rest of the dump is drained so the socket stays usable. */
int ct_dump_pass_msgs(struct ct_conn *c, ct_msg_cb cb, void *ctx, struct ct_dump_diag *diag)
{
	struct nl_buf b;
	uint32_t seq = nl_next_seq(&c->dump);
	uint32_t grown_before = c->dump.grown;
	int err = 0;
	int overrun = 0;
	size_t off;

	nl_buf_init(&b);
	off = nl_msg_begin(&b, CT_TYPE(IPCTNL_MSG_CT_GET), NLM_F_REQUEST | NLM_F_DUMP, seq);
	put_nfgen(&b, AF_UNSPEC, 0);
	nl_msg_end(&b, off);
	err = b.failed ? -ENOMEM : nl_send(&c->dump, b.data, b.len);
	nl_buf_free(&b);
	if (err < 0)
		return err;
	for (;;) {
		struct nl_msg_iter it;
		const struct nlmsghdr *h;
		ssize_t n = nl_recv(&c->dump, 0);

		if (n == -ENOBUFS) {
			overrun = 1; /* entries were dropped; read on to the end, then report */
			continue;
		}
		if (n < 0) {
			err = (int)n;
			goto fail;
		}
		nl_msg_iter_init(&it, c->dump.buf, (size_t)n);
		while ((h = nl_msg_next(&it)) != NULL) {
			if (h->nlmsg_seq != seq || h->nlmsg_pid != c->dump.portid)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				goto done;
			if (h->nlmsg_type == NLMSG_ERROR) {
				int e2 = 0;
				err = nl_msg_error(h, &e2) < 0 ? -EBADMSG : e2;
				if (err == 0)
					goto done;
				goto fail;
			}
			if (h->nlmsg_type != CT_TYPE(IPCTNL_MSG_CT_NEW))
				continue;
			err = cb(h, ctx);
			if (err < 0)
				goto fail;
		}
		if (it.bad) {
			err = -EBADMSG;
			goto fail;
		}
	}
done:
	diag->buffer_growths += c->dump.grown - grown_before;
	return overrun ? -ENOBUFS : 0;
fail:
	diag->buffer_growths += c->dump.grown - grown_before;
	drain(&c->dump);
	return err;
}

int ct_dump_each(struct ct_conn *c, ct_entry_cb cb, void *ctx, struct ct_dump_diag *diag)
{
	int err;

	for (int attempt = 0;; attempt++) {
		err = ct_dump_pass(c, cb, ctx, diag);
		if (err != -ENOBUFS || attempt >= CT_DUMP_MAX_RESTARTS)
			return err;
		diag->restarts++;
	}
}

struct parsed_cb {
	ct_entry_cb cb;
	void *ctx;
	struct ct_dump_diag *diag;
};

static int parse_then(const struct nlmsghdr *h, void *p)
{
	struct parsed_cb *pc = p;
	struct ct_entry e;

	if (ct_parse_entry(h, &e) < 0) {
		pc->diag->unparsed++;
		return 0;
	}
	return pc->cb(&e, pc->ctx);
}

int ct_dump_pass(struct ct_conn *c, ct_entry_cb cb, void *ctx, struct ct_dump_diag *diag)
{
	struct parsed_cb pc = { .cb = cb, .ctx = ctx, .diag = diag };
	return ct_dump_pass_msgs(c, parse_then, &pc, diag);
}

static int count_cb(const struct nlmsghdr *h, void *p)
{
	(void)h;
	(*(uint64_t *)p)++;
	return 0;
}

int ct_dump_count(struct ct_conn *c, uint64_t *scanned, struct ct_dump_diag *diag)
{
	int err;

	for (int attempt = 0;; attempt++) {
		*scanned = 0;
		err = ct_dump_pass_msgs(c, count_cb, scanned, diag);
		if (err != -ENOBUFS || attempt >= CT_DUMP_MAX_RESTARTS)
			break;
		diag->restarts++;
	}
	return err;
}

/* ------------------------------------------------------------------ list */

struct list_ctx {
	const struct ct_filter *f;
	size_t limit;
	struct ct_entry_list *out;
	uint64_t scanned;
};

void ct_entry_list_free(struct ct_entry_list *l)
{
	free(l->items);
	memset(l, 0, sizeof(*l));
}

struct ct_entry *ct_entry_list_next_slot(struct ct_entry_list *l)
{
	if (l->count == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct ct_entry *items = realloc(l->items, cap * sizeof(*items));

		if (!items)
			return NULL;
		l->items = items;
		l->cap = cap;
	}
	return &l->items[l->count];
}

static int list_cb(const struct ct_entry *e, void *p)
{
	struct list_ctx *ctx = p;
	struct ct_entry_list *l = ctx->out;

	ctx->scanned++;
	if (l->count >= ctx->limit || !ct_entry_matches(e, ctx->f))
		return 0;
	struct ct_entry *slot = ct_entry_list_next_slot(l);
	if (!slot)
		return -ENOMEM;
	*slot = *e;
	slot->orig_attr = NULL; /* points into the receive buffer */
	l->count++;
	return 0;
}

int ct_list(struct ct_conn *c, const struct ct_filter *f, size_t limit, struct ct_entry_list *out,
	    uint64_t *scanned, struct ct_dump_diag *diag)
{
	struct list_ctx ctx = { .f = f, .limit = limit, .out = out, .scanned = 0 };
	int err;

	memset(out, 0, sizeof(*out));
	for (int attempt = 0;; attempt++) {
		ctx.scanned = 0;
		out->count = 0;
		err = ct_dump_pass(c, list_cb, &ctx, diag);
		if (err != -ENOBUFS || attempt >= CT_DUMP_MAX_RESTARTS)
			break;
		diag->restarts++;
	}
	*scanned = ctx.scanned;
	if (err < 0)
		ct_entry_list_free(out);
	return err;
}

/* ------------------------------------------------------------------ delete */

struct delete_ctx {
	struct ct_conn *c;
	const struct ct_filter *f;
	int dry_run;
	struct nl_batch batch;
	struct ct_delete_result *r;
	struct ct_tuple_delete *sent;  /* batch message -> what it deleted (counts, re-check) */
	size_t sent_cap;
	struct ct_tuple_delete *enoent; /* deletes answered ENOENT, re-checked after the pass */
	uint8_t *enoent_resent;
	size_t n_enoent, enoent_cap;
};

void ct_delete_count(struct ct_delete_result *r, uint8_t proto, int error, int resent)
{
	struct ct_delete_counts *pc = &r->by_proto[proto];

	if (error == 0 || (error == -ENOENT && resent)) {
		r->deleted++;
		pc->deleted++;
	} else if (error == -ENOENT) {
		r->already_gone++;
		pc->already_gone++;
	} else {
		r->failed++;
		pc->failed++;
		if (!r->first_error)
			r->first_error = error;
	}
}

static void delete_ack(size_t index, int error, int resent, void *p)
{
	struct delete_ctx *ctx = p;
	const struct ct_tuple_delete *d = index < ctx->sent_cap ? &ctx->sent[index] : NULL;

	if (error == -ENOENT && d) {
		/* Gone, or not found in the zone we named: a GET decides after the pass. */
		if (ctx->n_enoent >= ctx->enoent_cap) {
			size_t cap = ctx->enoent_cap ? ctx->enoent_cap * 2 : 64;
			struct ct_tuple_delete *e = realloc(ctx->enoent, cap * sizeof(*e));
			uint8_t *rs = e ? realloc(ctx->enoent_resent, cap) : NULL;
			if (e)
				ctx->enoent = e;
			if (!e || !rs) {
				ct_delete_count(ctx->r, d->orig.proto, -ENOMEM, 0);
				return;
			}
			ctx->enoent_resent = rs;
			ctx->enoent_cap = cap;
		}
		ctx->enoent_resent[ctx->n_enoent] = (uint8_t)resent;
		ctx->enoent[ctx->n_enoent++] = *d;
		return;
	}
	ct_delete_count(ctx->r, d ? d->orig.proto : 0, error, resent);
}

/* The re-check of every ENOENT answer (ct_recheck_gone): gone = already gone, else failed. */
static int settle_enoent(struct delete_ctx *ctx)
{
	struct ct_delete_result *r = ctx->r;
	int *state;
	int err;

	if (ctx->n_enoent == 0)
		return 0;
	state = malloc(ctx->n_enoent * sizeof(*state));
	if (!state)
		return -ENOMEM;
	err = ct_recheck_gone(ctx->c, ctx->enoent, ctx->n_enoent, state);
	ct_delete_count_rechecked(r, ctx->enoent, ctx->enoent_resent, state, ctx->n_enoent, err);
	ctx->n_enoent = 0;
	free(state);
	return 0;
}

static int flush_deletes(struct delete_ctx *ctx)
{
	if (ctx->batch.count == 0)
		return 0;
	return nl_batch_flush(&ctx->c->req, &ctx->batch, ctx->c->delete_batch, delete_ack, ctx, &ctx->r->batch);
}

/* Remembers what the next batch message deletes (for the counts and the ENOENT re-check). */
static int note_sent(struct delete_ctx *ctx, const struct ct_entry *e)
{
	size_t i = ctx->batch.count;
	struct ct_tuple_delete *d;

	if (i >= ctx->sent_cap) {
		size_t cap = ctx->sent_cap ? ctx->sent_cap * 2 : 256;
		struct ct_tuple_delete *p;
		while (cap <= i)
			cap *= 2;
		p = realloc(ctx->sent, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		ctx->sent = p;
		ctx->sent_cap = cap;
	}
	d = &ctx->sent[i];
	memset(d, 0, sizeof(*d));
	d->family = e->family;
	d->orig = e->orig;
	d->zone = ct_entry_orig_zone(e);
	d->alt_zone = -1;
	d->has_id = e->has_id;
	d->id = e->id;
	return 0;
}

/* Builds IPCTNL_MSG_CT_DELETE for one entry: its original tuple exactly as the kernel sent it
 * (with its CTA_TUPLE_ZONE when the zone covers only the original direction), CTA_ZONE with
 * the id of a zone that covers both directions (else 0: a tuple zone and a non-zero CTA_ZONE
 * together are EINVAL, and a reply-only zone is looked up in zone 0; see ct_parse.h) and CTA_ID. */
static int add_delete(struct delete_ctx *ctx, const struct ct_entry *e)
{
	struct nl_batch *b = &ctx->batch;
	size_t off;
	uint16_t zone = e->zone_dir == (CT_ZONE_DIR_ORIG | CT_ZONE_DIR_REPLY) ? e->zone : 0;

	/* Never without the tuple: ctnetlink_del_conntrack() would flush the whole table. */
	if (!e->orig_attr || e->orig_attr->nla_len <= NLA_HDRLEN)
		return -EINVAL;
	off = nl_batch_msg_begin(b, CT_TYPE(IPCTNL_MSG_CT_DELETE), 0);
	put_nfgen(&b->msgs, e->family == 6 ? AF_INET6 : AF_INET, 0);
	nl_put(&b->msgs, e->orig_attr, e->orig_attr->nla_len);
	nl_attr_put_be16(&b->msgs, CTA_ZONE, zone);
	if (e->has_id)
		nl_attr_put_be32(&b->msgs, CTA_ID, e->id);
	return nl_batch_msg_end(b, off);
}

static int delete_cb(const struct ct_entry *e, void *p)
{
	struct delete_ctx *ctx = p;
	int err;

	ctx->r->scanned++;
	if (!ct_entry_matches(e, ctx->f))
		return 0;
	ctx->r->matched++;
	if (ctx->dry_run)
		return 0;
	err = note_sent(ctx, e);
	if (err < 0)
		return err;
	err = add_delete(ctx, e);
	if (err < 0)
		return err;
	/* The dump socket waits (it is pulled by recvmsg) while the batch goes out on the other. */
	if (ctx->batch.count >= ctx->c->delete_batch)
		return flush_deletes(ctx);
	return 0;
}

int ct_delete(struct ct_conn *c, const struct ct_filter *f, int dry_run, struct ct_delete_result *out)
{
	struct delete_ctx ctx = { .c = c, .f = f, .dry_run = dry_run, .r = out };
	int err, flush_err;

	memset(out, 0, sizeof(*out));
	nl_batch_init(&ctx.batch);
	for (int attempt = 0;; attempt++) {
		err = ct_dump_pass(c, delete_cb, &ctx, &out->dump);
		flush_err = flush_deletes(&ctx);
		if (err == 0)
			err = flush_err;
		if (err != -ENOBUFS || attempt >= CT_DUMP_MAX_RESTARTS)
			break;
		/* Part of the dump was dropped: walk again. Deleted entries will not come back;
		 * count as matched only what was acted on plus what the new pass matches. */
		out->dump.restarts++;
		out->scanned = 0;
		out->matched = dry_run ? 0 : out->deleted + out->already_gone + out->failed + ctx.n_enoent;
	}
	flush_err = settle_enoent(&ctx);
	if (err == 0)
		err = flush_err;
	nl_batch_free(&ctx.batch);
	free(ctx.sent);
	free(ctx.enoent);
	free(ctx.enoent_resent);
	return err;
}

/* ------------------------------------------------------------------ stats */

static int stats_global_cb(const struct nlmsghdr *h, void *p)
{
	struct ct_stats *s = p;
	const struct nlattr *tb[CTA_STATS_GLOBAL_MAX + 1];
	size_t hdr = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg));

	if (h->nlmsg_len < hdr)
		return -EBADMSG;
	if (nl_attr_parse((const uint8_t *)h + hdr, h->nlmsg_len - hdr, tb, CTA_STATS_GLOBAL_MAX) < 0)
		return -EBADMSG;
	(void)nl_attr_get_be32(tb[CTA_STATS_GLOBAL_ENTRIES], &s->count);
	(void)nl_attr_get_be32(tb[CTA_STATS_GLOBAL_MAX_ENTRIES], &s->max);
	return 0;
}

static int stats_cpu_cb(const struct nlmsghdr *h, void *p)
{
	struct ct_stats *s = p;
	const struct nlattr *tb[CTA_STATS_MAX + 1];
	const struct nfgenmsg *g;
	struct ct_cpu_stats *cpu;
	size_t hdr = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg));

	if (h->nlmsg_len < hdr)
		return -EBADMSG;
	if (nl_attr_parse((const uint8_t *)h + hdr, h->nlmsg_len - hdr, tb, CTA_STATS_MAX) < 0)
		return -EBADMSG;
	cpu = realloc(s->cpus, (s->ncpus + 1) * sizeof(*cpu));
	if (!cpu)
		return -ENOMEM;
	s->cpus = cpu;
	cpu = &s->cpus[s->ncpus++];
	memset(cpu, 0, sizeof(*cpu));
	g = NLMSG_DATA(h);
	cpu->cpu = ntohs(g->res_id); /* ctnetlink_ct_stat_cpu_fill_info puts the CPU in res_id */
	(void)nl_attr_get_be32(tb[CTA_STATS_FOUND], &cpu->found);
	(void)nl_attr_get_be32(tb[CTA_STATS_INVALID], &cpu->invalid);
	(void)nl_attr_get_be32(tb[CTA_STATS_INSERT], &cpu->insert);
	(void)nl_attr_get_be32(tb[CTA_STATS_INSERT_FAILED], &cpu->insert_failed);
	(void)nl_attr_get_be32(tb[CTA_STATS_DROP], &cpu->drop);
	(void)nl_attr_get_be32(tb[CTA_STATS_EARLY_DROP], &cpu->early_drop);
	(void)nl_attr_get_be32(tb[CTA_STATS_ERROR], &cpu->error);
	(void)nl_attr_get_be32(tb[CTA_STATS_SEARCH_RESTART], &cpu->search_restart);
	(void)nl_attr_get_be32(tb[CTA_STATS_CLASH_RESOLVE], &cpu->clash_resolve);
	(void)nl_attr_get_be32(tb[CTA_STATS_CHAIN_TOOLONG], &cpu->chain_toolong);
	return 0;
}

int ct_get_stats(struct ct_conn *c, struct ct_stats *out)
{
	struct nl_buf b;
	uint32_t seq;
	size_t off;
	int err;

	memset(out, 0, sizeof(*out));
	nl_buf_init(&b);
	/* IPCTNL_MSG_CT_GET_STATS (ctnetlink_stat_ct): entries of this netns and nf_conntrack_max. */
	seq = nl_next_seq(&c->req);
	off = nl_msg_begin(&b, CT_TYPE(IPCTNL_MSG_CT_GET_STATS), NLM_F_REQUEST | NLM_F_ACK, seq);
	put_nfgen(&b, AF_UNSPEC, 0);
	nl_msg_end(&b, off);
	err = nl_transact(&c->req, &b, seq, stats_global_cb, out);
	if (err == 0) {
		/* IPCTNL_MSG_CT_GET_STATS_CPU (ctnetlink_ct_stat_cpu_dump): one message per CPU. */
		nl_buf_reset(&b);
		seq = nl_next_seq(&c->dump);
		off = nl_msg_begin(&b, CT_TYPE(IPCTNL_MSG_CT_GET_STATS_CPU), NLM_F_REQUEST | NLM_F_DUMP, seq);
		put_nfgen(&b, AF_UNSPEC, 0);
		nl_msg_end(&b, off);
		err = nl_transact(&c->dump, &b, seq, stats_cpu_cb, out);
	}
	nl_buf_free(&b);
	if (err < 0)
		ct_stats_free(out);
	return err;
}

void ct_stats_free(struct ct_stats *s)
{
	free(s->cpus);
	memset(s, 0, sizeof(*s));
}

/* ------------------------------------------------------------------ insert (test support) */

static void addr_add(struct ct_addr *a, uint32_t n)
{
	size_t at = a->family == 4 ? 0 : 12;
	uint32_t v;

	memcpy(&v, a->bytes + at, 4);
	v = htonl(ntohl(v) + n);
	memcpy(a->bytes + at, &v, 4);
}

static void put_tuple(struct nl_buf *b, uint16_t type, const struct ct_addr *src, const struct ct_addr *dst,
		      uint8_t proto, int ports, uint16_t sport, uint16_t dport, int zone)
{
	size_t tuple = nl_nest_begin(b, type);
	size_t ip = nl_nest_begin(b, CTA_TUPLE_IP);
	size_t pr;

	if (src->family == 4) {
		nl_attr_put(b, CTA_IP_V4_SRC, src->bytes, 4);
		nl_attr_put(b, CTA_IP_V4_DST, dst->bytes, 4);
	} else {
		nl_attr_put(b, CTA_IP_V6_SRC, src->bytes, 16);
		nl_attr_put(b, CTA_IP_V6_DST, dst->bytes, 16);
	}
	nl_nest_end(b, ip);
	pr = nl_nest_begin(b, CTA_TUPLE_PROTO);
	nl_attr_put_u8(b, CTA_PROTO_NUM, proto);
	if (ports) {
		nl_attr_put_be16(b, CTA_PROTO_SRC_PORT, sport);
		nl_attr_put_be16(b, CTA_PROTO_DST_PORT, dport);
	}
	nl_nest_end(b, pr);
	if (zone >= 0)
		nl_attr_put_be16(b, CTA_TUPLE_ZONE, (uint16_t)zone);
	nl_nest_end(b, tuple);
}

static int proto_has_ports(uint8_t p)
{
	return p == IPPROTO_TCP || p == IPPROTO_UDP || p == IPPROTO_SCTP || p == IPPROTO_UDPLITE || p == IPPROTO_DCCP;
}

static void insert_ack(size_t index, int error, int resent, void *p)
{
	struct ct_insert_result *r = p;
	(void)index;

	if (error == 0)
		r->created++;
	else if (error == -EEXIST)
		(resent ? r->created++ : r->exists++);
	else {
		r->failed++;
		if (!r->first_error)
			r->first_error = error;
	}
}

static int add_insert(struct nl_batch *b, const struct ct_insert_spec *s, uint32_t i)
{
	struct ct_addr osrc = s->orig_src, rsrc = s->reply_src;
	uint32_t src_count = s->src_count ? s->src_count : 1;
	uint32_t rcount = s->reply_src_count ? s->reply_src_count : 1;
	int ports = proto_has_ports(s->proto);
	uint16_t sport = (uint16_t)(s->src_port + (i / src_count) % 60000);
	size_t off;

	addr_add(&osrc, i % src_count);
	addr_add(&rsrc, i % rcount);
	off = nl_batch_msg_begin(b, CT_TYPE(IPCTNL_MSG_CT_NEW), NLM_F_CREATE | NLM_F_EXCL);
	put_nfgen(&b->msgs, s->orig_src.family == 6 ? AF_INET6 : AF_INET, 0);
	/* A one-direction zone is a CTA_TUPLE_ZONE in that tuple (ctnetlink_parse_tuple_zone). */
	int both = s->zone_dir == (CT_ZONE_DIR_ORIG | CT_ZONE_DIR_REPLY);
	int ozone = s->zone >= 0 && s->zone_dir == CT_ZONE_DIR_ORIG ? s->zone : -1;
	int rzone = s->zone >= 0 && s->zone_dir == CT_ZONE_DIR_REPLY ? s->zone : -1;

	put_tuple(&b->msgs, CTA_TUPLE_ORIG, &osrc, &s->orig_dst, s->proto, ports, sport, s->dst_port, ozone);
	/* With dnat the reply starts as the plain inverse; nf_nat_setup_info() then rewrites it to
	 * the target and sets IPS_DST_NAT (a reply given already translated leaves nothing to do). */
	if (s->dnat)
		put_tuple(&b->msgs, CTA_TUPLE_REPLY, &s->orig_dst, &osrc, s->proto, ports, s->dst_port, sport, rzone);
	else
		put_tuple(&b->msgs, CTA_TUPLE_REPLY, &rsrc, &osrc, s->proto, ports, s->reply_src_port, sport, rzone);
	nl_attr_put_be32(&b->msgs, CTA_TIMEOUT, s->timeout ? s->timeout : 600);
	/* The entry is already confirmed when ctnetlink_change_status() applies CTA_STATUS, and
	 * that function answers EBUSY when IPS_CONFIRMED would change: keep it set. */
	if (s->status)
		nl_attr_put_be32(&b->msgs, CTA_STATUS, s->status | IPS_CONFIRMED);
	if (s->dnat) {
		/* ctnetlink_setup_nat -> nf_nat_setup_info: a real DNAT binding (IPS_DST_NAT), the
		 * reply tuple recomputed from the range (one address, one port). */
		size_t nat = nl_nest_begin(&b->msgs, CTA_NAT_DST);
		int v4 = rsrc.family == 4;
		nl_attr_put(&b->msgs, v4 ? CTA_NAT_V4_MINIP : CTA_NAT_V6_MINIP, rsrc.bytes, v4 ? 4 : 16);
		nl_attr_put(&b->msgs, v4 ? CTA_NAT_V4_MAXIP : CTA_NAT_V6_MAXIP, rsrc.bytes, v4 ? 4 : 16);
		if (ports) {
			size_t pn = nl_nest_begin(&b->msgs, CTA_NAT_PROTO);
			nl_attr_put_be16(&b->msgs, CTA_PROTONAT_PORT_MIN, s->reply_src_port);
			nl_attr_put_be16(&b->msgs, CTA_PROTONAT_PORT_MAX, s->reply_src_port);
			nl_nest_end(&b->msgs, pn);
		}
		nl_nest_end(&b->msgs, nat);
	}
	if (s->mark)
		nl_attr_put_be32(&b->msgs, CTA_MARK, s->mark);
	if (s->zone >= 0 && both)
		nl_attr_put_be16(&b->msgs, CTA_ZONE, (uint16_t)s->zone);
	if (s->state && (s->proto == IPPROTO_TCP || s->proto == IPPROTO_SCTP)) {
		size_t pi = nl_nest_begin(&b->msgs, CTA_PROTOINFO);
		if (s->proto == IPPROTO_TCP) {
			size_t t = nl_nest_begin(&b->msgs, CTA_PROTOINFO_TCP);
			nl_attr_put_u8(&b->msgs, CTA_PROTOINFO_TCP_STATE, s->state);
			nl_nest_end(&b->msgs, t);
		} else {
			/* nlattr_to_sctp() wants the state and both verification tags. */
			size_t t = nl_nest_begin(&b->msgs, CTA_PROTOINFO_SCTP);
			nl_attr_put_u8(&b->msgs, CTA_PROTOINFO_SCTP_STATE, s->state);
			nl_attr_put_be32(&b->msgs, CTA_PROTOINFO_SCTP_VTAG_ORIGINAL, 0x1000 + i);
			nl_attr_put_be32(&b->msgs, CTA_PROTOINFO_SCTP_VTAG_REPLY, 0x2000 + i);
			nl_nest_end(&b->msgs, t);
		}
		nl_nest_end(&b->msgs, pi);
	}
	return nl_batch_msg_end(b, off);
}

int ct_insert(struct ct_conn *c, const struct ct_insert_spec *specs, size_t nspecs, struct ct_insert_result *out)
{
	struct nl_batch b;
	int err = 0;

	memset(out, 0, sizeof(*out));
	nl_batch_init(&b);
	for (size_t k = 0; k < nspecs && !err; k++) {
		const struct ct_insert_spec *s = &specs[k];
		if (s->orig_src.family != s->orig_dst.family || s->orig_src.family != s->reply_src.family) {
			err = -EINVAL;
			break;
		}
		for (uint32_t i = 0; i < s->count && !err; i++) {
			err = add_insert(&b, s, i);
			if (!err && b.count >= CT_INSERT_BATCH)
				err = nl_batch_flush(&c->req, &b, CT_INSERT_BATCH, insert_ack, out, &out->batch);
		}
	}
	if (!err)
		err = nl_batch_flush(&c->req, &b, CT_INSERT_BATCH, insert_ack, out, &out->batch);
	nl_batch_free(&b);
	return err;
}
