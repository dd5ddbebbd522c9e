/*
 * ct_events_napi.c: the N-API side of the conntrack event index (ct_events.h): its ops (one
 * handle field, h->ev; addon_handle.c closes it with the handle) and the synchronous evStats
 * export. Raw shapes (native/lib/conntrack-events-native.ts reads them):
 *   ev_open   { netns?, recvBufferBytes?, maxFlows? } -> undefined    (starts the reader thread)
 *   ev_watch  { addresses: string[] } -> undefined
 *   ev_flows  { addresses } -> { fresh, refreshed, records: ArrayBuffer of ct_records.h records }
 *   ev_delete { addresses } -> the delete result (napi_values.h) + { fresh }
 *   ev_verify { addresses } -> the delete result (a ct_delete matching origDst + replySrc)
 *   ev_resync {} -> undefined
 *   evStats(handle) -> counters (sync; a mutex, no syscall)
 */

#include <errno.h>
#include <string.h>

#include "napi/addon_op.h"
#include "wire/netns.h"
#include "napi/napi_values.h"

static int ev_addresses(napi_env env, napi_value args, struct ct_addr_set *set, struct op_error *err)
{
	int present;

	if (arg_address_set(env, args, "addresses", set, &present, err) < 0)
		return -EINVAL;
	if (!present) {
		set_error(err, EINVAL, NULL, "addresses is required");
		return -EINVAL;
	}
	return 0;
}

static int ev_need(struct handle *h, struct op_error *err)
{
	if (!h->ev) {
		set_error(err, EBADF, NULL, "the event subscription is not open on this handle");
		return -EBADF;
	}
	return 0;
}

struct ev_op {
	char netns[256];
	int has_netns;
	int64_t rcvbuf, max_flows;
	struct ct_addr_set addrs;
	struct ct_filter filter;
	struct ct_entry_list list;
	int fresh;
	uint64_t refreshed;
	struct ct_delete_result del;     /* ev_delete, ev_verify */
	double ms;
};

static int ev_open_parse(napi_env env, napi_value args, void *state, struct op_error *err)
{
	struct ev_op *s = state;

	if (arg_string(env, args, "netns", s->netns, sizeof(s->netns), &s->has_netns, err) < 0)
		return -EINVAL;
	if (s->has_netns && netns_check_name(s->netns) < 0) {
		set_error(err, EINVAL, NULL, "netns must be a plain name (no '/')");
		return -EINVAL;
	}
	if (arg_int(env, args, "recvBufferBytes", 1, 1 << 30, CT_EVENTS_DEFAULT_RCVBUF, &s->rcvbuf, err) < 0)
		return -EINVAL;
	return arg_int(env, args, "maxFlows", 1, 1 << 26, 1 << 20, &s->max_flows, err);
}

static int ev_open_execute(struct handle *h, void *state, struct op_error *err)
{
	struct ev_op *s = state;

	if (h->ev) {
		set_error(err, EBUSY, NULL, "the event subscription is already open on this handle");
		return -EBUSY;
	}
	return ct_events_open(&h->ev, s->has_netns ? s->netns : NULL, (int)s->rcvbuf, (uint32_t)s->max_flows);
}

static int ev_addresses_parse(napi_env env, napi_value args, void *state, struct op_error *err)
{
	struct ev_op *s = state;
	return ev_addresses(env, args, &s->addrs, err);
}

static int ev_watch_execute(struct handle *h, void *state, struct op_error *err)
{
	struct ev_op *s = state;
	if (ev_need(h, err) < 0)
		return -EBADF;
	return ct_events_set_watched(h->ev, &h->ct, &s->addrs); /* takes the set */
}

static int ev_flows_execute(struct handle *h, void *state, struct op_error *err)
{
	struct ev_op *s = state;
	if (ev_need(h, err) < 0)
		return -EBADF;
	return ct_events_flows(h->ev, &h->ct, &s->addrs, &s->list, &s->fresh, &s->refreshed);
}

static int ev_delete_execute(struct handle *h, void *state, struct op_error *err)
{
	struct ev_op *s = state;
	double t0 = now_ms();
	int rc;

	if (ev_need(h, err) < 0)
		return -EBADF;
	rc = ct_events_delete(h->ev, &h->ct, &s->addrs, &s->fresh, &s->del);
	s->ms = now_ms() - t0;
	return rc;
}

static int ev_verify_execute(struct handle *h, void *state, struct op_error *err)
{
	struct ev_op *s = state;
	double t0 = now_ms();
	int rc;

	if (ev_need(h, err) < 0)
		return -EBADF;
	ct_filter_init(&s->filter);
	s->filter.has_addresses = 1;
	s->filter.match = CT_MATCH_ORIG_DST | CT_MATCH_REPLY_SRC;
	s->filter.addrs = s->addrs;
	memset(&s->addrs, 0, sizeof(s->addrs)); /* now owned by the filter */
	rc = s->filter.addrs.count ? ct_events_verify(h->ev, &h->ct, &s->filter, &s->del) : 0;
	s->ms = now_ms() - t0;
	return rc;
}

static int ev_resync_execute(struct handle *h, void *state, struct op_error *err)
{
	if (ev_need(h, err) < 0)
		return -EBADF;
	return ct_events_resync(h->ev, &h->ct);
}

static napi_value ev_flows_result(napi_env env, void *state)
{
	struct ev_op *s = state;
	napi_value o = new_object(env);

	put_value(env, o, "records", entry_records_value(env, &s->list));
	put_bool(env, o, "fresh", s->fresh);
	put_num(env, o, "refreshed", (double)s->refreshed);
	return o;
}

static napi_value ev_delete_result(napi_env env, void *state)
{
	struct ev_op *s = state;
	napi_value o = delete_result_value(env, &s->del, s->ms);

	put_bool(env, o, "fresh", s->fresh);
	return o;
}

static napi_value ev_verify_result(napi_env env, void *state)
{
	struct ev_op *s = state;
	return delete_result_value(env, &s->del, s->ms);
}

static void ev_op_release(void *state)
{
	struct ev_op *s = state;
	ct_addr_set_free(&s->addrs);
	ct_filter_free(&s->filter);
	ct_entry_list_free(&s->list);
}

#define EV_OP(js_name, parse, execute, result)                                                 \
	{ js_name, sizeof(struct ev_op), parse, execute, result, ev_op_release }

static const struct op_def ROWS[] = {
	EV_OP("ev_open", ev_open_parse, ev_open_execute, op_no_result),
	EV_OP("ev_watch", ev_addresses_parse, ev_watch_execute, op_no_result),
	EV_OP("ev_flows", ev_addresses_parse, ev_flows_execute, ev_flows_result),
	EV_OP("ev_delete", ev_addresses_parse, ev_delete_execute, ev_delete_result),
	EV_OP("ev_verify", ev_addresses_parse, ev_verify_execute, ev_verify_result),
	EV_OP("ev_resync", op_no_args, ev_resync_execute, op_no_result),
};
const struct op_table ev_op_table = OP_TABLE(ROWS);

/* evStats(handle) -> counters, synchronously (undefined when the subscription is not open). */
napi_value js_ev_stats(napi_env env, napi_callback_info info)
{
	size_t argc = 1;
	napi_value argv[1] = { NULL }, o;
	void *data = NULL;
	struct handle *h;
	struct ct_events_stats s;

	napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
	if (arg_type(env, argv[0]) != napi_external || !NAPI_OK(napi_get_value_external(env, argv[0], &data)))
		return NULL;
	h = data;
	if (!h->ev || !h->open)
		return NULL;
	ct_events_get_stats(h->ev, &s);
	o = new_object(env);
	put_num(env, o, "watchedAddresses", (double)s.watched);
	put_num(env, o, "flows", (double)s.flows);
	put_num(env, o, "events", (double)s.events);
	put_num(env, o, "eventsFilteredOut", (double)s.filtered_out);
	put_num(env, o, "overruns", (double)s.overruns);
	put_num(env, o, "resyncs", (double)s.resyncs);
	put_num(env, o, "bytesPerFlow", (double)s.bytes_per_flow);
	put_num(env, o, "indexBytes", (double)s.index_bytes);
	put_num(env, o, "maxFlows", (double)s.max_flows);
	put_num(env, o, "flowsDropped", (double)s.dropped);
	put_num(env, o, "filterInstructions", (double)s.bpf_insns);
	put_num(env, o, "deletedByIndex", (double)s.deleted_by_index);
	put_num(env, o, "alreadyGone", (double)s.already_gone);
	put_num(env, o, "verifyPasses", (double)s.verify_passes);
	put_num(env, o, "verifyDeleted", (double)s.verify_deleted);
	put_num(env, o, "gets", (double)s.gets);
	put_num(env, o, "syncing", (double)s.syncing);
	put_bool(env, o, "stale", s.stale);
	put_bool(env, o, "filterBpf", s.bpf);
	return o;
}
