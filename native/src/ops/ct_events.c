/* ct_events.c: conntrack event subscription + flow index (see ct_events.h). */
#include "ops/ct_events.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include "ops/clock_ms.h"
#include "ops/ct_bpf.h"
#include "ops/ct_tuple_delete.h"
#include "ops/ct_tuple_get.h"
#include "wire/netns.h"
#include "wire/ctnetlink.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif
#define GET_CHUNK 64

struct ct_events {
	struct nl_sock sock;
	int stop_fd;
	pthread_t thread;
	int thread_started;
	pthread_mutex_t lock;
	/* --- under lock --- */
	struct ct_index idx;
	struct ct_addr_set watched;
	int stale;
	int syncing;
	uint8_t gen;
	uint64_t overrun_seq;
	int bpf;                 /* 1: both families filtered in the kernel */
	uint64_t bpf_insns;
	uint64_t events, filtered_out, overruns, resyncs, deleted_by_index, already_gone, verify_passes,
		verify_deleted, gets;
};

static int concerns(const struct ct_addr_set *set, const struct ct_entry *e)
{
	return ct_addr_set_has(set, &e->orig.dst) || ct_addr_set_has(set, &e->reply.src);
}

/* Copies what an event/dump/GET says about an entry into its record (key fields are equal). */
static void refresh(struct ct_events *ev, struct ct_flow *rec, const struct ct_flow *f)
{
	uint8_t state = rec->state, had_state = rec->flags & CT_FLOW_HAS_STATE;

	ct_index_update(&ev->idx, rec, f);
	if (!(f->flags & CT_FLOW_HAS_STATE) && had_state) {
		/* updates without IPCT_PROTOINFO carry no state: keep the last one */
		rec->state = state;
		rec->flags |= CT_FLOW_HAS_STATE;
	}
}

static void put_flow(struct ct_events *ev, const struct ct_flow *f)
{
	if (!ct_index_insert(&ev->idx, f))
		ev->stale = 1; /* full: a flow we cannot hold makes every answer untrustworthy */
}

/* ------------------------------------------------------------------ reader thread */

static void apply_event(struct ct_events *ev, const struct nlmsghdr *h)
{
	struct ct_entry e;
	struct ct_flow f;
	struct ct_flow *rec;
	int destroy = h->nlmsg_type == CT_TYPE(IPCTNL_MSG_CT_DELETE);

	if (h->nlmsg_type != CT_TYPE(IPCTNL_MSG_CT_NEW) && !destroy)
		return;
	ev->events++;
	if (ct_parse_entry(h, &e) < 0 || !concerns(&ev->watched, &e)) {
		ev->filtered_out++;
		return;
	}
	ct_flow_from_entry(&f, &e);
	f.updated_ms = (uint64_t)now_ms();
	f.gen = ev->gen;
	rec = ct_index_find(&ev->idx, &f);
	if (destroy) {
		if (ev->syncing) {
			f.flags |= CT_FLOW_TOMB;
			if (rec)
				refresh(ev, rec, &f);
			else
				(void)ct_index_insert(&ev->idx, &f); /* full: the sweep after the pass still runs */
		} else if (rec) {
			ct_index_remove(&ev->idx, rec);
		}
		return;
	}
	if (rec)
		refresh(ev, rec, &f);
	else
		put_flow(ev, &f);
}

static void *reader(void *p)
{
	struct ct_events *ev = p;
	struct pollfd fds[2] = { { .fd = ev->sock.fd, .events = POLLIN }, { .fd = ev->stop_fd, .events = POLLIN } };

	for (;;) {
		if (poll(fds, 2, -1) < 0 && errno != EINTR)
			break;
		if (fds[1].revents)
			break;
		for (int k = 0; k < 256; k++) {
			struct nl_msg_iter it;
			const struct nlmsghdr *h;
			ssize_t n = nl_recv(&ev->sock, MSG_DONTWAIT);

			if (n == -EAGAIN || n == -EWOULDBLOCK)
				break;
			if (n == -ENOBUFS) {
				pthread_mutex_lock(&ev->lock);
				ev->overruns++;
				ev->overrun_seq++;
				ev->stale = 1;
				pthread_mutex_unlock(&ev->lock);
				continue;
			}
			if (n < 0)
				break; /* EMSGSIZE cannot happen (peeked sizes); anything else: poll again */
			pthread_mutex_lock(&ev->lock);
			nl_msg_iter_init(&it, ev->sock.buf, (size_t)n);
			while ((h = nl_msg_next(&it)) != NULL)
				apply_event(ev, h);
			pthread_mutex_unlock(&ev->lock);
		}
	}
	return NULL;
}

/* ------------------------------------------------------------------ open / close */

struct open_ctx {
	struct nl_sock *sock;
	int rcvbuf;
};

static int open_socket(void *p)
{
	struct open_ctx *o = p;
	return nl_open(o->sock, NETLINK_NETFILTER, o->rcvbuf, 0);
}

static int attach(struct ct_events *ev, const struct ct_bpf_program *prog)
{
	struct sock_fprog fp = { .len = (unsigned short)prog->len, .filter = prog->insns };
	if (setsockopt(ev->sock.fd, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp)) < 0)
		return -errno;
	return 0;
}

int ct_events_open(struct ct_events **out, const char *netns, int rcvbuf, uint32_t max_flows)
{
	struct ct_events *ev = calloc(1, sizeof(*ev));
	struct open_ctx o;
	struct ct_bpf_program prog;
	static const int groups[] = { NFNLGRP_CONNTRACK_NEW, NFNLGRP_CONNTRACK_UPDATE, NFNLGRP_CONNTRACK_DESTROY };
	uint32_t *heads;
	int err;

	*out = NULL;
	if (!ev)
		return -ENOMEM;
	ev->sock.fd = -1;
	ev->stop_fd = -1;
	pthread_mutex_init(&ev->lock, NULL);
	err = ct_index_init(&ev->idx, max_flows);
	if (!err)
		err = ct_addr_set_init(&ev->watched, 0);
	if (err)
		goto fail;
	heads = calloc(ev->watched.mask + 1, sizeof(*heads));
	if (!heads) {
		err = -ENOMEM;
		goto fail;
	}
	ct_index_set_addrs(&ev->idx, &ev->watched, heads);
	o.sock = &ev->sock;
	o.rcvbuf = rcvbuf > 0 ? rcvbuf : CT_EVENTS_DEFAULT_RCVBUF;
	err = netns ? netns_run(netns, open_socket, &o) : open_socket(&o);
	if (err)
		goto fail;
	/* The filter goes on before the groups are joined: no unfiltered event ever queues. */
	err = ct_bpf_build(&ev->watched, &prog);
	if (err)
		goto fail;
	err = attach(ev, &prog);
	ev->bpf = err == 0;
	ev->bpf_insns = err == 0 ? prog.len : 0;
	ct_bpf_free(&prog);
	if (err)
		goto fail;
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (setsockopt(ev->sock.fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &groups[i], sizeof(groups[i])) < 0) {
			err = -errno;
			goto fail;
		}
	ev->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (ev->stop_fd < 0) {
		err = -errno;
		goto fail;
	}
	err = -pthread_create(&ev->thread, NULL, reader, ev);
	if (err)
		goto fail;
	ev->thread_started = 1;
	*out = ev;
	return 0;
fail:
	ct_events_close(ev);
	return err;
}

void ct_events_close(struct ct_events *ev)
{
	if (!ev)
		return;
	if (ev->thread_started) {
		uint64_t one = 1;
		ssize_t w = write(ev->stop_fd, &one, sizeof(one));
		(void)w;
		pthread_join(ev->thread, NULL);
	}
	if (ev->stop_fd >= 0)
		close(ev->stop_fd);
	nl_close(&ev->sock);
	ct_index_free(&ev->idx);
	ct_addr_set_free(&ev->watched);
	pthread_mutex_destroy(&ev->lock);
	free(ev);
}

/* ------------------------------------------------------------------ dump passes */

struct sync_ctx {
	struct ct_events *ev;
	const struct ct_filter *f;
};

static int sync_cb(const struct ct_entry *e, void *p)
{
	struct sync_ctx *s = p;
	struct ct_events *ev = s->ev;
	struct ct_flow f, *rec;

	if (!ct_entry_matches(e, s->f))
		return 0;
	ct_flow_from_entry(&f, e);
	f.updated_ms = (uint64_t)now_ms();
	pthread_mutex_lock(&ev->lock);
	f.gen = ev->gen;
	rec = ct_index_find(&ev->idx, &f);
	/* an entry an event already told us about has an event cache: keep trusting its events */
	f.flags |= rec && !(rec->flags & CT_FLOW_TOMB) ? (rec->flags & CT_FLOW_NOEV) : CT_FLOW_NOEV;
	if (!rec)
		put_flow(ev, &f);
	else if (rec->flags & CT_FLOW_TOMB) {
		/* destroyed during the pass; a different id is a new entry on the same tuple */
		if ((rec->flags & CT_FLOW_HAS_ID) && (f.flags & CT_FLOW_HAS_ID) && rec->id != f.id)
			refresh(ev, rec, &f);
	} else if (rec->gen != ev->gen) {
		refresh(ev, rec, &f);
	}
	pthread_mutex_unlock(&ev->lock);
	return 0;
}

/* Ends a pass: drops tombstones and, after a full pass, every flow the pass did not confirm. */
static void sweep(struct ct_events *ev, int full)
{
	for (uint32_t i = 0; i < ev->idx.used_hi; i++) {
		struct ct_flow *r = &ev->idx.flows[i];
		if ((r->flags & CT_FLOW_USED) && ((r->flags & CT_FLOW_TOMB) || (full && r->gen != ev->gen)))
			ct_index_remove(&ev->idx, r);
	}
	ev->syncing = 0;
}

/* One dump pass for the addresses of `set` (sync_cb merges), with the index in syncing mode. */
static int sync_pass(struct ct_events *ev, struct ct_conn *c, const struct ct_addr_set *set, int full)
{
	struct ct_filter f;
	struct ct_dump_diag diag = { 0 };
	struct sync_ctx s = { .ev = ev, .f = &f };
	uint64_t seq0, dropped0;
	int err;

	ct_filter_init(&f);
	f.has_addresses = 1;
	f.match = CT_MATCH_ORIG_DST | CT_MATCH_REPLY_SRC;
	f.addrs = *set; /* borrowed: not freed here */
	pthread_mutex_lock(&ev->lock);
	ev->syncing = 1;
	ev->gen++;
	seq0 = ev->overrun_seq;
	dropped0 = ev->idx.dropped;
	pthread_mutex_unlock(&ev->lock);

	err = ct_dump_each(c, sync_cb, &s, &diag);

	pthread_mutex_lock(&ev->lock);
	sweep(ev, full && err == 0);
	if (err < 0)
		ev->stale = 1;
	else if (full && ev->overrun_seq == seq0 && ev->idx.dropped == dropped0)
		ev->stale = 0;
	if (full && err == 0)
		ev->resyncs++;
	pthread_mutex_unlock(&ev->lock);
	return err;
}

int ct_events_resync(struct ct_events *ev, struct ct_conn *c)
{
	struct ct_addr_set copy;
	int err;

	/* The set only changes on this (the worker) thread, but the reader reads it: pass a copy. */
	pthread_mutex_lock(&ev->lock);
	err = ct_addr_set_init(&copy, ev->watched.count);
	for (size_t i = 0; !err && i <= ev->watched.mask; i++)
		if (ev->watched.used[i])
			err = ct_addr_set_add(&copy, &ev->watched.slots[i]);
	pthread_mutex_unlock(&ev->lock);
	if (!err)
		err = sync_pass(ev, c, &copy, 1);
	ct_addr_set_free(&copy);
	return err;
}

int ct_events_set_watched(struct ct_events *ev, struct ct_conn *c, struct ct_addr_set *next)
{
	struct ct_bpf_program prog;
	struct ct_addr_set added, old;
	uint32_t *heads;
	int err = ct_bpf_build(next, &prog);

	if (err)
		return err;
	heads = calloc(next->mask + 1, sizeof(*heads));
	err = heads ? ct_addr_set_init(&added, next->count) : -ENOMEM;
	if (err) {
		free(heads);
		ct_bpf_free(&prog);
		return err;
	}
	pthread_mutex_lock(&ev->lock);
	for (size_t i = 0; next->slots && i <= next->mask; i++)
		if (next->used[i] && !ct_addr_set_has(&ev->watched, &next->slots[i]))
			(void)ct_addr_set_add(&added, &next->slots[i]);
	old = ev->watched;
	ev->watched = *next;
	memset(next, 0, sizeof(*next));
	/* SO_ATTACH_FILTER on a live socket swaps the program atomically (RCU). If the kernel
	 * refuses it (optmem_max), fall back to no filter: everything arrives, C checks it. */
	if (attach(ev, &prog) == 0) {
		ev->bpf = !prog.v4_unfiltered && !prog.v6_unfiltered;
		ev->bpf_insns = prog.len;
	} else {
		(void)setsockopt(ev->sock.fd, SOL_SOCKET, SO_DETACH_FILTER, NULL, 0);
		ev->bpf = 0;
		ev->bpf_insns = 0;
	}
	/* drops the flows of addresses no longer watched, relinks the others under the new slots */
	ct_index_set_addrs(&ev->idx, &ev->watched, heads);
	pthread_mutex_unlock(&ev->lock);
	ct_bpf_free(&prog);
	ct_addr_set_free(&old);
	if (added.count > 0)
		err = sync_pass(ev, c, &added, 0);
	ct_addr_set_free(&added);
	return err;
}

/* ------------------------------------------------------------------ flows, delete, verify */

static int all_watched(const struct ct_events *ev, const struct ct_addr_set *addrs)
{
	for (size_t i = 0; addrs->slots && i <= addrs->mask; i++)
		if (addrs->used[i] && !ct_addr_set_has(&ev->watched, &addrs->slots[i]))
			return 0;
	return 1;
}

static int flow_concerns(const struct ct_addr_set *set, const struct ct_flow *f)
{
	struct ct_addr a = { .family = f->family };
	memcpy(a.bytes, f->odst, 16);
	if (ct_addr_set_has(set, &a))
		return 1;
	memcpy(a.bytes, f->rsrc, 16);
	return ct_addr_set_has(set, &a);
}

struct flow_vec {
	struct ct_flow *items;
	size_t count, cap;
};

static int vec_push(struct flow_vec *v, const struct ct_flow *f)
{
	if (v->count == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 64;
		struct ct_flow *bigger = realloc(v->items, cap * sizeof(*bigger));
		if (!bigger)
			return -ENOMEM;
		v->items = bigger;
		v->cap = cap;
	}
	v->items[v->count++] = *f;
	return 0;
}

/* The flows of watched addresses, from their lists: O(flows of addrs). A flow linked under two
 * queried addresses is taken once, under its original destination. */
static int collect_by_address(struct ct_events *ev, const struct ct_addr_set *addrs, struct flow_vec *v)
{
	for (size_t i = 0; addrs->slots && i <= addrs->mask; i++) {
		if (!addrs->used[i])
			continue;
		for (uint32_t l = ct_index_addr_first(&ev->idx, &addrs->slots[i]); l; l = ct_index_link_next(&ev->idx, l)) {
			const struct ct_flow *r = ct_index_link_flow(&ev->idx, l);
			struct ct_addr o = { .family = r->family };
			if (r->flags & CT_FLOW_TOMB)
				continue;
			memcpy(o.bytes, r->odst, 16);
			if (CT_LINK_ROLE(l) == 1 && (r->links & 1) && ct_addr_set_has(addrs, &o))
				continue;
			if (vec_push(v, r) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

/* Some queried address is not watched: its flows can only be those of watched addresses that
 * also concern it, found by scanning the pool (the answer is not fresh anyway). */
static int collect_by_scan(struct ct_events *ev, const struct ct_addr_set *addrs, struct flow_vec *v)
{
	for (uint32_t i = 0; i < ev->idx.used_hi; i++) {
		const struct ct_flow *r = &ev->idx.flows[i];
		if (!(r->flags & CT_FLOW_USED) || (r->flags & CT_FLOW_TOMB) || !flow_concerns(addrs, r))
			continue;
		if (vec_push(v, r) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Copies the live (non-tomb) records concerning addrs. Caller frees *out. */
static int collect(struct ct_events *ev, const struct ct_addr_set *addrs, struct ct_flow **out, size_t *n, int *fresh)
{
	struct flow_vec v = { 0 };
	int watched, err;

	pthread_mutex_lock(&ev->lock);
	watched = all_watched(ev, addrs);
	*fresh = !ev->stale && !ev->syncing && watched;
	err = watched ? collect_by_address(ev, addrs, &v) : collect_by_scan(ev, addrs, &v);
	pthread_mutex_unlock(&ev->lock);
	if (err) {
		free(v.items);
		return err;
	}
	*out = v.items;
	*n = v.count;
	return 0;
}

/* Removes the record of f from the index when it is still the same entry (same id). */
static void forget(struct ct_events *ev, const struct ct_flow *f)
{
	struct ct_flow *rec;

	pthread_mutex_lock(&ev->lock);
	rec = ct_index_find(&ev->idx, f);
	if (rec && (!(rec->flags & CT_FLOW_HAS_ID) || !(f->flags & CT_FLOW_HAS_ID) || rec->id == f->id))
		ct_index_remove(&ev->idx, rec);
	pthread_mutex_unlock(&ev->lock);
}

struct get_ctx {
	struct ct_events *ev;
	struct ct_flow *flows;    /* the GET subset */
	uint8_t *gone;
	uint64_t refreshed;
};

static void get_cb(size_t i, int error, const struct ct_entry *e, void *p)
{
	struct get_ctx *g = p;
	struct ct_flow f, *rec;

	if (error == -ENOENT) {
		g->gone[i] = 1;
		forget(g->ev, &g->flows[i]);
		return;
	}
	if (error < 0 || !e)
		return;
	ct_flow_from_entry(&f, e);
	f.updated_ms = (uint64_t)now_ms();
	f.flags |= CT_FLOW_USED;
	pthread_mutex_lock(&g->ev->lock);
	f.gen = g->ev->gen;
	rec = ct_index_find(&g->ev->idx, &f);
	f.flags |= g->flows[i].flags & CT_FLOW_NOEV; /* a GET says nothing about events */
	if (rec && !(rec->flags & CT_FLOW_TOMB))
		refresh(g->ev, rec, &f);
	pthread_mutex_unlock(&g->ev->lock);
	g->flows[i] = f;
	g->refreshed++;
}

int ct_events_flows(struct ct_events *ev, struct ct_conn *c, const struct ct_addr_set *addrs,
		    struct ct_entry_list *out, int *fresh, uint64_t *refreshed)
{
	struct ct_flow *flows = NULL, *sub = NULL;
	size_t n = 0, m = 0;
	size_t *map = NULL;
	struct get_ctx g = { .ev = ev };
	uint64_t now = (uint64_t)now_ms(), sent = 0;
	int err;

	memset(out, 0, sizeof(*out));
	*refreshed = 0;
	err = collect(ev, addrs, &flows, &n, fresh);
	if (err)
		return err;
	sub = malloc((n ? n : 1) * sizeof(*sub));
	map = malloc((n ? n : 1) * sizeof(*map));
	g.gone = calloc(n ? n : 1, 1);
	out->items = calloc(n ? n : 1, sizeof(*out->items));
	if (!sub || !map || !g.gone || !out->items) {
		err = -ENOMEM;
		goto done;
	}
	out->cap = n;
	/* UDP/SCTP/other: the remaining timeout says when a packet was last seen, and packets do not
	 * make events; TCP: state changes do, but ask again once its timeout ran out, and always for
	 * entries that may have no event cache (learned from a dump, see CT_FLOW_NOEV). */
	for (size_t i = 0; i < n; i++) {
		uint64_t age_s = (now - flows[i].updated_ms) / 1000u;
		if (flows[i].proto != IPPROTO_TCP || (flows[i].flags & CT_FLOW_NOEV) || age_s >= flows[i].timeout) {
			map[m] = i;
			sub[m++] = flows[i];
		}
	}
	g.flows = sub;
	if (m > 0)
		err = ct_get_flows(&c->req, sub, m, GET_CHUNK, get_cb, &g, &sent);
	pthread_mutex_lock(&ev->lock);
	ev->gets += sent;
	pthread_mutex_unlock(&ev->lock);
	if (err)
		goto done;
	for (size_t k = 0; k < m; k++) {
		flows[map[k]] = sub[k];
		if (g.gone[k])
			flows[map[k]].flags &= (uint8_t)~CT_FLOW_USED;
	}
	now = (uint64_t)now_ms();
	for (size_t i = 0; i < n; i++) {
		struct ct_entry *e = &out->items[out->count];
		uint64_t age_s;
		if (!(flows[i].flags & CT_FLOW_USED))
			continue;
		ct_flow_to_entry(&flows[i], e);
		age_s = (now - flows[i].updated_ms) / 1000u;
		e->timeout = age_s >= e->timeout ? 0 : e->timeout - (uint32_t)age_s;
		out->count++;
	}
	*refreshed = g.refreshed;
done:
	if (err)
		ct_entry_list_free(out);
	free(flows);
	free(sub);
	free(map);
	free(g.gone);
	return err;
}

int ct_events_delete(struct ct_events *ev, struct ct_conn *c, const struct ct_addr_set *addrs,
		     int *fresh, struct ct_delete_result *out)
{
	struct ct_flow *flows = NULL;
	struct ct_tuple_delete *items = NULL;
	size_t n = 0;
	int err;

	memset(out, 0, sizeof(*out));
	err = collect(ev, addrs, &flows, &n, fresh);
	if (err)
		goto done;
	items = calloc(n ? n : 1, sizeof(*items));
	if (!items) {
		err = -ENOMEM;
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		struct ct_entry e;
		ct_flow_to_entry(&flows[i], &e);
		items[i].family = e.family;
		items[i].has_id = e.has_id;
		items[i].id = e.id;
		items[i].zone = e.zone; /* the flow's key: its original-direction zone (ct_index.c) */
		items[i].alt_zone = -1;
		items[i].orig = e.orig;
	}
	err = n ? ct_delete_tuples(c, items, n, out) : 0;
	/* Deleted or already gone: out of the kernel, so out of the index now (their DESTROY events
	 * follow). When some delete failed we cannot tell which: the index keeps them all and the
	 * DESTROY events remove exactly the ones that went. */
	pthread_mutex_lock(&ev->lock);
	for (size_t i = 0; err == 0 && out->failed == 0 && i < n; i++) {
		struct ct_flow *rec = ct_index_find(&ev->idx, &flows[i]);
		if (rec && (!(rec->flags & CT_FLOW_HAS_ID) || rec->id == flows[i].id))
			ct_index_remove(&ev->idx, rec);
	}
	ev->deleted_by_index += out->deleted;
	ev->already_gone += out->already_gone;
	pthread_mutex_unlock(&ev->lock);
done:
	free(flows);
	free(items);
	return err;
}

int ct_events_verify(struct ct_events *ev, struct ct_conn *c, const struct ct_filter *f, struct ct_delete_result *out)
{
	int err = ct_delete(c, f, 0, out);

	pthread_mutex_lock(&ev->lock);
	ev->verify_passes++;
	ev->verify_deleted += out->deleted;
	pthread_mutex_unlock(&ev->lock);
	return err;
}

void ct_events_get_stats(struct ct_events *ev, struct ct_events_stats *s)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_lock(&ev->lock);
	s->watched = ev->watched.count;
	s->flows = ev->idx.count;
	s->events = ev->events;
	s->filtered_out = ev->filtered_out;
	s->overruns = ev->overruns;
	s->resyncs = ev->resyncs;
	s->deleted_by_index = ev->deleted_by_index;
	s->already_gone = ev->already_gone;
	s->verify_passes = ev->verify_passes;
	s->verify_deleted = ev->verify_deleted;
	s->gets = ev->gets;
	s->dropped = ev->idx.dropped;
	s->index_bytes = ct_index_bytes(&ev->idx);
	s->bytes_per_flow = ct_index_bytes_per_flow();
	s->max_flows = ev->idx.max;
	s->bpf_insns = ev->bpf_insns;
	s->stale = ev->stale;
	s->syncing = ev->syncing;
	s->bpf = ev->bpf;
	pthread_mutex_unlock(&ev->lock);
}
