/*
 * addon.c: the ONLY file that knows N-API. Everything netlink lives in plain C files
 * (netlink.c, conntrack.c, ipvs.c ...) that take C structs and return 0 or -errno.
 *
 * JS surface (wrapped by native/lib/index.ts; nobody else calls it):
 *   open({ netns?, recvBufferBytes?, noPeek?, ackRcvbufBytes?, deleteBatch? }) -> handle
 *   call(handle, opName, args) -> Promise<result>       (rejects with an Error carrying
 *                                                         .errno (positive), .code, .op)
 *   close(handle)                                        (later calls reject with EBADF)
 *   ops() -> string[]                                    (the op names below)
 *
 * How an op runs. Each op is a row of OPS[] with four functions:
 *   parse    main thread: JS args -> the op's C state (calloc'ed, state_size bytes)
 *   execute  worker thread (napi_async_work): no N-API calls, only plain C on the handle
 *   result   main thread: C state -> JS value (the Promise resolves with it)
 *   release  frees whatever parse/execute allocated inside the state (the state itself is
 *            freed by the glue); always called, also after errors
 * Calls on one handle are serialized: a per-handle FIFO; the next call's async work is queued
 * only when the previous one completed, so two workers never share a socket.
 *
 * Adding IPVS ops (the IPVS helper): write ipvs_* parse/execute/result/release functions in
 * the section "IPVS ops" near the end of this file (execute calls functions from ipvs.h with
 * &h->genl, and may cache the resolved family id in h->ipvs_family), add rows to OPS[] under
 * the marker there, and add src/ipvs.c (and src/genl.c if any) to binding.gyp's sources.
 * The helpers in "argument helpers" and "result helpers" do the JS conversions.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <node_api.h>

#include "conntrack.h"
#include "ct_scan.h"
#include "ct_tuple_delete.h"
#include "ct_events.h"
#include "netlink.h"
#include "netns.h"

/* ==================================================================== handle and ops */

struct handle;

/* An op's failure: errno (negative or positive accepted), optional code (an `E...` name of
 * ours such as EIPVSUNAVAILABLE; the wrapper derives it from errno otherwise) and message. */
struct op_error {
	int errnum;
	char code[32];
	char message[240];
};

struct op_def {
	const char *name;
	size_t state_size;
	int (*parse)(napi_env env, napi_value args, void *state, struct op_error *err);
	int (*execute)(struct handle *h, void *state, struct op_error *err);
	napi_value (*result)(napi_env env, void *state);
	void (*release)(void *state);
};

struct call {
	struct call *next;
	struct handle *h;
	const struct op_def *op;
	void *state;
	struct op_error err;
	int rc;
	napi_deferred deferred;
	napi_async_work work;
	napi_ref handle_ref;     /* keeps the handle alive while the call is pending */
};

struct handle {
	struct ct_conn ct;       /* conntrack: dump + request sockets */
	struct nl_sock genl;     /* NETLINK_GENERIC, for IPVS */
	int ipvs_family;         /* IPVS genl family id; 0 = not resolved yet (IPVS helper) */
	struct ct_events *ev;    /* conntrack event subscription (ev_* ops), NULL until ev_open */
	int open;                /* sockets are open */
	int closed;              /* close() was called */
	int busy;                /* an async work is in flight */
	struct call *head, *tail;
};

static void set_error(struct op_error *err, int errnum, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void set_error(struct op_error *err, int errnum, const char *code, const char *fmt, ...)
{
	va_list ap;

	err->errnum = errnum < 0 ? -errnum : errnum;
	snprintf(err->code, sizeof(err->code), "%s", code ? code : "");
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
}

/* ==================================================================== argument helpers */

#define NAPI_OK(expr) ((expr) == napi_ok)

static int arg_type(napi_env env, napi_value v)
{
	napi_valuetype t = napi_undefined;
	if (!v || !NAPI_OK(napi_typeof(env, v, &t)))
		return napi_undefined;
	return (int)t;
}

/* Property of an object, or NULL when absent/undefined/null. */
static napi_value arg_prop(napi_env env, napi_value obj, const char *name)
{
	napi_value v = NULL;
	int t;

	if (arg_type(env, obj) != napi_object)
		return NULL;
	if (!NAPI_OK(napi_get_named_property(env, obj, name, &v)))
		return NULL;
	t = arg_type(env, v);
	return (t == napi_undefined || t == napi_null) ? NULL : v;
}

/* Integer property in [min, max]. Absent: *out = def and 0. Wrong type/range: -EINVAL. */
static int arg_int(napi_env env, napi_value obj, const char *name, int64_t min, int64_t max, int64_t def,
		   int64_t *out, struct op_error *err)
{
	napi_value v = arg_prop(env, obj, name);
	double d;

	*out = def;
	if (!v)
		return 0;
	if (arg_type(env, v) != napi_number || !NAPI_OK(napi_get_value_double(env, v, &d)) || d != (double)(int64_t)d ||
	    d < (double)min || d > (double)max) {
		set_error(err, EINVAL, NULL, "%s must be an integer in %lld..%lld", name, (long long)min, (long long)max);
		return -EINVAL;
	}
	*out = (int64_t)d;
	return 0;
}

static int arg_bool(napi_env env, napi_value obj, const char *name, int *out, struct op_error *err)
{
	napi_value v = arg_prop(env, obj, name);
	bool b = false;

	*out = 0;
	if (!v)
		return 0;
	if (arg_type(env, v) != napi_boolean || !NAPI_OK(napi_get_value_bool(env, v, &b))) {
		set_error(err, EINVAL, NULL, "%s must be a boolean", name);
		return -EINVAL;
	}
	*out = b;
	return 0;
}

/* String value into buf (NUL-terminated). -EINVAL when not a string or too long. */
static int arg_string_value(napi_env env, napi_value v, char *buf, size_t len, const char *what, struct op_error *err)
{
	size_t got = 0;

	if (arg_type(env, v) != napi_string || !NAPI_OK(napi_get_value_string_utf8(env, v, buf, len, &got)) ||
	    got + 1 >= len) {
		set_error(err, EINVAL, NULL, "%s must be a string shorter than %zu bytes", what, len - 1);
		return -EINVAL;
	}
	return 0;
}

/* Optional string property: *present says whether it was given. */
static int arg_string(napi_env env, napi_value obj, const char *name, char *buf, size_t len, int *present,
		      struct op_error *err)
{
	napi_value v = arg_prop(env, obj, name);

	buf[0] = '\0';
	*present = v != NULL;
	if (!v)
		return 0;
	return arg_string_value(env, v, buf, len, name, err);
}

/* Array property: its length (0 when absent); -EINVAL when not an array. */
static int arg_array(napi_env env, napi_value obj, const char *name, napi_value *arr, uint32_t *len, struct op_error *err)
{
	napi_value v = arg_prop(env, obj, name);
	bool is = false;

	*arr = NULL;
	*len = 0;
	if (!v)
		return 0;
	if (!NAPI_OK(napi_is_array(env, v, &is)) || !is || !NAPI_OK(napi_get_array_length(env, v, len))) {
		set_error(err, EINVAL, NULL, "%s must be an array", name);
		return -EINVAL;
	}
	*arr = v;
	return 0;
}

static napi_value arg_element(napi_env env, napi_value arr, uint32_t i)
{
	napi_value v = NULL;
	if (!NAPI_OK(napi_get_element(env, arr, i, &v)))
		return NULL;
	return v;
}

static int arg_address(napi_env env, napi_value v, struct ct_addr *a, const char *what, struct op_error *err)
{
	char text[64];

	if (arg_string_value(env, v, text, sizeof(text), what, err) < 0)
		return -EINVAL;
	if (ct_addr_parse(text, a) < 0) {
		set_error(err, EINVAL, NULL, "%s: '%s' is not an IPv4 or IPv6 address", what, text);
		return -EINVAL;
	}
	return 0;
}

/* ==================================================================== result helpers */

static void put_value(napi_env env, napi_value obj, const char *name, napi_value v)
{
	if (v)
		napi_set_named_property(env, obj, name, v);
}

static void put_u32(napi_env env, napi_value obj, const char *name, uint32_t n)
{
	napi_value v;
	if (NAPI_OK(napi_create_uint32(env, n, &v)))
		put_value(env, obj, name, v);
}

static void put_num(napi_env env, napi_value obj, const char *name, double n)
{
	napi_value v;
	if (NAPI_OK(napi_create_double(env, n, &v)))
		put_value(env, obj, name, v);
}

static void put_str(napi_env env, napi_value obj, const char *name, const char *s)
{
	napi_value v;
	if (NAPI_OK(napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &v)))
		put_value(env, obj, name, v);
}

static napi_value new_object(napi_env env)
{
	napi_value o = NULL;
	napi_create_object(env, &o);
	return o;
}

static void put_address(napi_env env, napi_value obj, const char *name, const struct ct_addr *a)
{
	char text[INET6_ADDRSTRLEN];
	if (inet_ntop(a->family == 6 ? AF_INET6 : AF_INET, a->bytes, text, sizeof(text)))
		put_str(env, obj, name, text);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ==================================================================== conntrack ops */

/* Filter arguments shared by ct_list and ct_delete:
 *   { addresses?: string[], match?: ('origSrc'|'origDst'|'replySrc'|'replyDst')[],
 *     protocols?: number[], zone?: number } */
static int parse_ct_filter(napi_env env, napi_value args, struct ct_filter *f, int require_addresses,
			   struct op_error *err)
{
	static const struct { const char *name; unsigned bit; } modes[] = {
		{ "origSrc", CT_MATCH_ORIG_SRC }, { "origDst", CT_MATCH_ORIG_DST },
		{ "replySrc", CT_MATCH_REPLY_SRC }, { "replyDst", CT_MATCH_REPLY_DST },
	};
	napi_value arr;
	uint32_t n;
	int64_t zone;

	ct_filter_init(f);
	if (arg_array(env, args, "addresses", &arr, &n, err) < 0)
		return -EINVAL;
	if (arr) {
		f->has_addresses = 1;
		if (ct_addr_set_init(&f->addrs, n) < 0) {
			set_error(err, ENOMEM, NULL, "out of memory for %u addresses", n);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < n; i++) {
			struct ct_addr a;
			if (arg_address(env, arg_element(env, arr, i), &a, "addresses[]", err) < 0)
				return -EINVAL;
			if (ct_addr_set_add(&f->addrs, &a) < 0) {
				set_error(err, ENOMEM, NULL, "address set full");
				return -ENOMEM;
			}
		}
	} else if (require_addresses) {
		set_error(err, EINVAL, NULL, "addresses is required");
		return -EINVAL;
	}
	if (arg_array(env, args, "match", &arr, &n, err) < 0)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		char name[16];
		unsigned bit = 0;
		if (arg_string_value(env, arg_element(env, arr, i), name, sizeof(name), "match[]", err) < 0)
			return -EINVAL;
		for (size_t k = 0; k < sizeof(modes) / sizeof(modes[0]); k++)
			if (strcmp(name, modes[k].name) == 0)
				bit = modes[k].bit;
		if (!bit) {
			set_error(err, EINVAL, NULL, "match: unknown mode '%s'", name);
			return -EINVAL;
		}
		f->match |= bit;
	}
	if (f->has_addresses && !f->match) {
		set_error(err, EINVAL, NULL, "match must name at least one of origSrc, origDst, replySrc, replyDst");
		return -EINVAL;
	}
	if (arg_array(env, args, "protocols", &arr, &n, err) < 0)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		napi_value v = arg_element(env, arr, i);
		uint32_t p = 256;
		if (arg_type(env, v) != napi_number || !NAPI_OK(napi_get_value_uint32(env, v, &p)) || p > 255) {
			set_error(err, EINVAL, NULL, "protocols[] must be IP protocol numbers 0..255");
			return -EINVAL;
		}
		ct_filter_add_protocol(f, (uint8_t)p);
	}
	if (arg_int(env, args, "zone", 0, 65535, -1, &zone, err) < 0)
		return -EINVAL;
	f->zone = (int)zone;
	return 0;
}

/* --- ct_stats: {} -> { count, max, perCpu: [...] } */
struct ct_stats_op { struct ct_stats stats; };

static int ct_stats_parse(napi_env env, napi_value args, void *state, struct op_error *err)
{
	return 0;
}

static int ct_stats_execute(struct handle *h, void *state, struct op_error *err)
{
	struct ct_stats_op *s = state;
	return ct_get_stats(&h->ct, &s->stats);
}

static napi_value ct_stats_result(napi_env env, void *state)
{
	struct ct_stats_op *s = state;
	napi_value o = new_object(env), arr = NULL;

	put_u32(env, o, "count", s->stats.count);
	put_u32(env, o, "max", s->stats.max);
	napi_create_array_with_length(env, s->stats.ncpus, &arr);
	for (size_t i = 0; arr && i < s->stats.ncpus; i++) {
		const struct ct_cpu_stats *c = &s->stats.cpus[i];
		napi_value e = new_object(env);
		put_u32(env, e, "cpu", c->cpu);
		put_u32(env, e, "found", c->found);
		put_u32(env, e, "invalid", c->invalid);
		put_u32(env, e, "insert", c->insert);
		put_u32(env, e, "insertFailed", c->insert_failed);
		put_u32(env, e, "drop", c->drop);
		put_u32(env, e, "earlyDrop", c->early_drop);
		put_u32(env, e, "error", c->error);
		put_u32(env, e, "searchRestart", c->search_restart);
		put_u32(env, e, "clashResolve", c->clash_resolve);
		put_u32(env, e, "chainTooLong", c->chain_toolong);
		napi_set_element(env, arr, (uint32_t)i, e);
	}
	put_value(env, o, "perCpu", arr);
	return o;
}

static void ct_stats_release(void *state)
{
	struct ct_stats_op *s = state;
	ct_stats_free(&s->stats);
}

/* --- ct_list: filter + { limit? } -> { entries: [...], scanned, bufferGrowths, restarts, ms } */
struct ct_list_op {
	struct ct_filter filter;
	size_t limit;
	struct ct_entry_list list;
	uint64_t scanned;
	struct ct_dump_diag diag;
	double ms;
};

static int ct_list_parse(napi_env env, napi_value args, void *state, struct op_error *err)
{
	struct ct_list_op *s = state;
	int64_t limit;

	if (parse_ct_filter(env, args, &s->filter, 0, err) < 0)
		return -EINVAL;
	if (arg_int(env, args, "limit", 0, (int64_t)1 << 40, -1, &limit, err) < 0)
		return -EINVAL;
	s->limit = limit < 0 ? SIZE_MAX : (size_t)limit;
	return 0;
}

static int ct_list_execute(struct handle *h, void *state, struct op_error *err)
{
	struct ct_list_op *s = state;
	double t0 = now_ms();
	int rc = ct_list(&h->ct, &s->filter, s->limit, &s->list, &s->scanned, &s->diag);
	s->ms = now_ms() - t0;
	return rc;
}

static napi_value tuple_value(napi_env env, const struct ct_tuple *t)
{
	napi_value o = new_object(env);
	put_address(env, o, "src", &t->src);
	put_address(env, o, "dst", &t->dst);
	if (t->has_ports) {
		put_u32(env, o, "srcPort", t->src_port);
		put_u32(env, o, "dstPort", t->dst_port);
	}
	if (t->has_icmp) {
		put_u32(env, o, "icmpId", t->icmp_id);
		put_u32(env, o, "icmpType", t->icmp_type);
		put_u32(env, o, "icmpCode", t->icmp_code);
	}
	return o;
}

static napi_value entries_value(napi_env env, const struct ct_entry_list *list)
{
	napi_value arr = NULL;

	napi_create_array_with_length(env, list->count, &arr);
	for (size_t i = 0; arr && i < list->count; i++) {
		const struct ct_entry *e = &list->items[i];
		napi_value v = new_object(env);
		put_u32(env, v, "family", e->family);
		put_u32(env, v, "protocolNumber", e->orig.proto);
		put_value(env, v, "original", tuple_value(env, &e->orig));
		put_value(env, v, "reply", tuple_value(env, &e->reply));
		if (e->has_state)
			put_u32(env, v, "state", e->state);
		put_u32(env, v, "timeout", e->timeout);
		put_u32(env, v, "mark", e->mark);
		put_u32(env, v, "zone", e->zone);
		put_u32(env, v, "status", e->status);
		put_u32(env, v, "id", e->id);
		napi_set_element(env, arr, (uint32_t)i, v);
	}
	return arr;
}

static napi_value ct_list_result(napi_env env, void *state)
{
	struct ct_list_op *s = state;
	napi_value o = new_object(env);

	put_value(env, o, "entries", entries_value(env, &s->list));
	put_num(env, o, "scanned", (double)s->scanned);
	put_u32(env, o, "bufferGrowths", s->diag.buffer_growths);
	put_num(env, o, "restarts", (double)s->diag.restarts);
	put_num(env, o, "unparsed", (double)s->diag.unparsed);
	put_num(env, o, "ms", s->ms);
	return o;
}

static void ct_list_release(void *state)
{
	struct ct_list_op *s = state;
	ct_filter_free(&s->filter);
	ct_entry_list_free(&s->list);
}

/* --- ct_delete: filter + { dryRun? } -> counts and diagnostics */
struct ct_delete_op {
	struct ct_filter filter;
	int dry_run;
	struct ct_delete_result r;
	double ms;
};

static int ct_delete_parse(napi_env env, napi_value args, void *state, struct op_error *err)
{
	struct ct_delete_op *s = state;

	if (parse_ct_filter(env, args, &s->filter, 1, err) < 0)
		return -EINVAL;
	return arg_bool(env, args, "dryRun", &s->dry_run, err);
}

static int ct_delete_execute(struct handle *h, void *state, struct op_error *err)
{
	struct ct_delete_op *s = state;
	double t0 = now_ms();
	int rc;

	if (s->filter.addrs.count == 0) {
		s->ms = 0;
		return 0; /* nothing can match: no dump needed */
	}
	rc = ct_delete(&h->ct, &s->filter, s->dry_run, &s->r);
	s->ms = now_ms() - t0;
	return rc;
}

static napi_value ct_delete_result(napi_env env, void *state)
{
	struct ct_delete_op *s = state;
	napi_value o = new_object(env), by = new_object(env);

	put_num(env, o, "scanned", (double)s->r.scanned);
	put_num(env, o, "matched", (double)s->r.matched);
	put_num(env, o, "deleted", (double)s->r.deleted);
	put_num(env, o, "alreadyGone", (double)s->r.already_gone);
	put_num(env, o, "failed", (double)s->r.failed);
	for (int p = 0; p < 256; p++) {
		const struct ct_delete_counts *c = &s->r.by_proto[p];
		char key[8];
		napi_value e;
		if (!c->deleted && !c->already_gone && !c->failed)
			continue;
		e = new_object(env);
		put_num(env, e, "deleted", (double)c->deleted);
		put_num(env, e, "alreadyGone", (double)c->already_gone);
		put_num(env, e, "failed", (double)c->failed);
		snprintf(key, sizeof(key), "%d", p);
		put_value(env, by, key, e);
	}
	put_value(env, o, "byProtocol", by);
	put_num(env, o, "ms", s->ms);
	put_num(env, o, "firstErrno", (double)-s->r.first_error);
	put_num(env, o, "sends", (double)s->r.batch.sends);
	put_num(env, o, "ackOverruns", (double)s->r.batch.overruns);
	put_num(env, o, "resent", (double)s->r.batch.resent);
	put_num(env, o, "dumpRestarts", (double)s->r.dump.restarts);
	put_num(env, o, "bufferGrowths", (double)s->r.dump.buffer_growths);
	put_num(env, o, "unparsed", (double)s->r.dump.unparsed);
	return o;
}

static void ct_delete_release(void *state)
{
	struct ct_delete_op *s = state;
	ct_filter_free(&s->filter);
}

/* --- ct_insert (TEST AND BENCH SUPPORT, not part of the public NetlinkApi):
 * { entries: [{ protocol, origSrc, origDst, replySrc?, srcCount?, replySrcCount?, count?,
 *               srcPort?, dstPort?, replySrcPort?, state?, zone?, mark?, timeout?, status? }] }
 * -> { created, exists, failed, firstErrno, sends, ackOverruns, resent, ms } */
struct ct_insert_op {
	struct ct_insert_spec *specs;
	size_t n;
	struct ct_insert_result r;
	double ms;
};

static int parse_insert_spec(napi_env env, napi_value v, struct ct_insert_spec *s, struct op_error *err)
{
	napi_value p;
	int64_t x;

	memset(s, 0, sizeof(*s));
	if (!(p = arg_prop(env, v, "origSrc")) || arg_address(env, p, &s->orig_src, "origSrc", err) < 0)
		goto missing;
	if (!(p = arg_prop(env, v, "origDst")) || arg_address(env, p, &s->orig_dst, "origDst", err) < 0)
		goto missing;
	if ((p = arg_prop(env, v, "replySrc")) != NULL) {
		if (arg_address(env, p, &s->reply_src, "replySrc", err) < 0)
			return -EINVAL;
	} else {
		s->reply_src = s->orig_dst;
	}
#define INT_FIELD(name, min, max, def, field)                                 \
	if (arg_int(env, v, name, min, max, def, &x, err) < 0)                \
		return -EINVAL;                                               \
	s->field = (__typeof__(s->field))x;
	INT_FIELD("protocol", 0, 255, 6, proto)
	INT_FIELD("count", 0, 100000000, 1, count)
	INT_FIELD("srcCount", 1, 1 << 30, 1, src_count)
	INT_FIELD("replySrcCount", 1, 1 << 30, 1, reply_src_count)
	INT_FIELD("srcPort", 0, 65535, 1024, src_port)
	INT_FIELD("dstPort", 0, 65535, 80, dst_port)
	INT_FIELD("state", 0, 255, 0, state)
	INT_FIELD("zone", 0, 65535, -1, zone)
	INT_FIELD("mark", 0, 0xffffffffLL, 0, mark)
	INT_FIELD("timeout", 1, 0x7fffffffLL, 600, timeout)
	INT_FIELD("status", 0, 0xffffffffLL, 0, status)
	INT_FIELD("dnat", 0, 1, 0, dnat)
#undef INT_FIELD
	if (arg_int(env, v, "replySrcPort", 0, 65535, s->dst_port, &x, err) < 0)
		return -EINVAL;
	s->reply_src_port = (uint16_t)x;
	return 0;
missing:
	if (!err->errnum)
		set_error(err, EINVAL, NULL, "entries[] need origSrc and origDst");
	return -EINVAL;
}

static int ct_insert_parse(napi_env env, napi_value args, void *state, struct op_error *err)
{
	struct ct_insert_op *s = state;
	napi_value arr;
	uint32_t n;

	if (arg_array(env, args, "entries", &arr, &n, err) < 0)
		return -EINVAL;
	s->specs = calloc(n ? n : 1, sizeof(*s->specs));
	if (!s->specs) {
		set_error(err, ENOMEM, NULL, "out of memory");
		return -ENOMEM;
	}
	s->n = n;
	for (uint32_t i = 0; i < n; i++)
		if (parse_insert_spec(env, arg_element(env, arr, i), &s->specs[i], err) < 0)
			return -EINVAL;
	return 0;
}

static int ct_insert_execute(struct handle *h, void *state, struct op_error *err)
{
	struct ct_insert_op *s = state;
	double t0 = now_ms();
	int rc = ct_insert(&h->ct, s->specs, s->n, &s->r);
	s->ms = now_ms() - t0;
	return rc;
}

static napi_value ct_insert_result(napi_env env, void *state)
{
	struct ct_insert_op *s = state;
	napi_value o = new_object(env);

	put_num(env, o, "created", (double)s->r.created);
	put_num(env, o, "exists", (double)s->r.exists);
	put_num(env, o, "failed", (double)s->r.failed);
	put_num(env, o, "firstErrno", (double)-s->r.first_error);
	put_num(env, o, "sends", (double)s->r.batch.sends);
	put_num(env, o, "ackOverruns", (double)s->r.batch.overruns);
	put_num(env, o, "resent", (double)s->r.batch.resent);
	put_num(env, o, "ms", s->ms);
	return o;
}

static void ct_insert_release(void *state)
{
	struct ct_insert_op *s = state;
	free(s->specs);
}

/* --- ct_delete_tuples: { entries: [{ family, protocolNumber, original: { src, dst, srcPort?,
 * dstPort?, icmpId?, icmpType?, icmpCode? }, zone?, id? }] }
 * -> { deleted, alreadyGone, failed, firstErrno, byProtocol: { "<n>": {deleted, alreadyGone,
 *      failed} }, sends, ackOverruns, resent, ms }   (C side: ct_tuple_delete.c) */
struct ct_delete_tuples_op {
	struct ct_tuple_delete *items;
	size_t n;
	struct ct_tuple_delete_result r;
	double ms;
};

static int parse_delete_tuple(napi_env env, napi_value v, struct ct_tuple_delete *d, struct op_error *err)
{
	napi_value orig = arg_prop(env, v, "original"), p;
	int64_t x;

	memset(d, 0, sizeof(*d));
	if (arg_int(env, v, "family", 4, 6, 0, &x, err) < 0 || (x != 4 && x != 6))
		goto bad;
	d->family = (uint8_t)x;
	if (arg_int(env, v, "protocolNumber", 0, 255, -1, &x, err) < 0 || x < 0)
		goto bad;
	d->orig.proto = (uint8_t)x;
	if (arg_int(env, v, "zone", 0, 65535, 0, &x, err) < 0)
		goto bad;
	d->zone = (uint16_t)x;
	if (arg_int(env, v, "id", 0, 0xffffffffLL, -1, &x, err) < 0)
		goto bad;
	d->has_id = x >= 0;
	d->id = x >= 0 ? (uint32_t)x : 0;
	if (!orig || !(p = arg_prop(env, orig, "src")) || arg_address(env, p, &d->orig.src, "original.src", err) < 0 ||
	    !(p = arg_prop(env, orig, "dst")) || arg_address(env, p, &d->orig.dst, "original.dst", err) < 0)
		goto bad;
	if (arg_prop(env, orig, "srcPort") || arg_prop(env, orig, "dstPort")) {
		if (arg_int(env, orig, "srcPort", 0, 65535, -1, &x, err) < 0 || x < 0)
			goto bad;
		d->orig.src_port = (uint16_t)x;
		if (arg_int(env, orig, "dstPort", 0, 65535, -1, &x, err) < 0 || x < 0)
			goto bad;
		d->orig.dst_port = (uint16_t)x;
		d->orig.has_ports = 1;
	}
	if (arg_prop(env, orig, "icmpType")) {
		if (arg_int(env, orig, "icmpType", 0, 255, 0, &x, err) < 0)
			goto bad;
		d->orig.icmp_type = (uint8_t)x;
		if (arg_int(env, orig, "icmpCode", 0, 255, 0, &x, err) < 0)
			goto bad;
		d->orig.icmp_code = (uint8_t)x;
		if (arg_int(env, orig, "icmpId", 0, 65535, 0, &x, err) < 0)
			goto bad;
		d->orig.icmp_id = (uint16_t)x;
		d->orig.has_icmp = 1;
	}
	if (ct_tuple_delete_check(d) < 0)
		goto bad;
	return 0;
bad:
	if (!err->errnum)
		set_error(err, EINVAL, NULL, "entries[] need family 4|6, protocolNumber and a complete original tuple (ports or ICMP id/type/code where the protocol has them)");
	return -EINVAL;
}

static int ct_delete_tuples_parse(napi_env env, napi_value args, void *state, struct op_error *err)
{
	struct ct_delete_tuples_op *s = state;
	napi_value arr;
	uint32_t n;

	if (arg_array(env, args, "entries", &arr, &n, err) < 0)
		return -EINVAL;
	if (!arr) {
		set_error(err, EINVAL, NULL, "entries is required");
		return -EINVAL;
	}
	s->items = calloc(n ? n : 1, sizeof(*s->items));
	if (!s->items) {
		set_error(err, ENOMEM, NULL, "out of memory for %u entries", n);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		if (parse_delete_tuple(env, arg_element(env, arr, i), &s->items[i], err) < 0)
			return -EINVAL;
	s->n = n;
	return 0;
}

static int ct_delete_tuples_execute(struct handle *h, void *state, struct op_error *err)
{
	struct ct_delete_tuples_op *s = state;
	double t0 = now_ms();
	int rc = ct_delete_tuples(&h->ct, s->items, s->n, &s->r);
	s->ms = now_ms() - t0;
	return rc;
}

static napi_value ct_delete_tuples_result(napi_env env, void *state)
{
	struct ct_delete_tuples_op *s = state;
	napi_value o = new_object(env), by = new_object(env);

	put_num(env, o, "deleted", (double)s->r.deleted);
	put_num(env, o, "alreadyGone", (double)s->r.already_gone);
	put_num(env, o, "failed", (double)s->r.failed);
	put_num(env, o, "firstErrno", (double)-s->r.first_error);
	for (int p = 0; p < 256; p++) {
		const struct ct_tuple_delete_counts *c = &s->r.by_proto[p];
		char key[8];
		napi_value e;
		if (!c->deleted && !c->already_gone && !c->failed)
			continue;
		e = new_object(env);
		put_num(env, e, "deleted", (double)c->deleted);
		put_num(env, e, "alreadyGone", (double)c->already_gone);
		put_num(env, e, "failed", (double)c->failed);
		snprintf(key, sizeof(key), "%d", p);
		put_value(env, by, key, e);
	}
	put_value(env, o, "byProtocol", by);
	put_num(env, o, "sends", (double)s->r.batch.sends);
	put_num(env, o, "ackOverruns", (double)s->r.batch.overruns);
	put_num(env, o, "resent", (double)s->r.batch.resent);
	put_num(env, o, "ms", s->ms);
	return o;
}

static void ct_delete_tuples_release(void *state)
{
	struct ct_delete_tuples_op *s = state;
	free(s->items);
}

/* --- ct_scan: { ownedTargets?: [{ address, protocol?, port? }], statusAny?, limit? }
 * -> { entries (as ct_list), scanned, statusSkipped, owned, bufferGrowths, restarts, unparsed, ms }
 * One dump pass that keeps only entries with a statusAny bit whose reply source no owned
 * target covers (C side: ct_scan.c). protocol absent = every protocol, port absent = every port. */
struct ct_scan_op {
	struct ct_target_set owned;
	uint32_t status_any;
	size_t limit;
	struct ct_scan_result r;
	double ms;
};

static int ct_scan_parse(napi_env env, napi_value args, void *state, struct op_error *err)
{
	struct ct_scan_op *s = state;
	napi_value arr;
	uint32_t n;
	int64_t x;

	if (arg_array(env, args, "ownedTargets", &arr, &n, err) < 0)
		return -EINVAL;
	if (ct_target_set_init(&s->owned, n) < 0) {
		set_error(err, ENOMEM, NULL, "out of memory for %u targets", n);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		napi_value v = arg_element(env, arr, i), p = arg_prop(env, v, "address");
		struct ct_target t;
		int64_t proto, port;
		memset(&t, 0, sizeof(t));
		if (!p || arg_address(env, p, &t.addr, "ownedTargets[].address", err) < 0 ||
		    arg_int(env, v, "protocol", 0, 255, -1, &proto, err) < 0 ||
		    arg_int(env, v, "port", 0, 65535, -1, &port, err) < 0) {
			if (!err->errnum)
				set_error(err, EINVAL, NULL, "ownedTargets[] need an address");
			return -EINVAL;
		}
		t.kind = proto < 0 ? CT_TARGET_ADDRESS_ANY : (port < 0 ? CT_TARGET_PROTO_ANY_PORT : CT_TARGET_EXACT);
		t.proto = proto < 0 ? 0 : (uint8_t)proto;
		t.port = port < 0 ? 0 : (uint16_t)port;
		if (ct_target_set_add(&s->owned, &t) < 0) {
			set_error(err, EINVAL, NULL, "ownedTargets[%u] could not be added", i);
			return -EINVAL;
		}
	}
	if (arg_int(env, args, "statusAny", 0, 0xffffffffLL, 0, &x, err) < 0)
		return -EINVAL;
	s->status_any = (uint32_t)x;
	if (arg_int(env, args, "limit", 0, (int64_t)1 << 40, -1, &x, err) < 0)
		return -EINVAL;
	s->limit = x < 0 ? SIZE_MAX : (size_t)x;
	return 0;
}

static int ct_scan_execute(struct handle *h, void *state, struct op_error *err)
{
	struct ct_scan_op *s = state;
	double t0 = now_ms();
	int rc = ct_scan(&h->ct, s->status_any, &s->owned, s->limit, &s->r);
	s->ms = now_ms() - t0;
	return rc;
}

static napi_value ct_scan_result(napi_env env, void *state)
{
	struct ct_scan_op *s = state;
	napi_value o = new_object(env);

	put_value(env, o, "entries", entries_value(env, &s->r.candidates));
	put_num(env, o, "scanned", (double)s->r.scanned);
	put_num(env, o, "statusSkipped", (double)s->r.status_skipped);
	put_num(env, o, "owned", (double)s->r.owned);
	put_u32(env, o, "bufferGrowths", s->r.diag.buffer_growths);
	put_num(env, o, "restarts", (double)s->r.diag.restarts);
	put_num(env, o, "unparsed", (double)s->r.diag.unparsed);
	put_num(env, o, "ms", s->ms);
	return o;
}

static void ct_scan_release(void *state)
{
	struct ct_scan_op *s = state;
	ct_target_set_free(&s->owned);
	ct_scan_result_free(&s->r);
}

/* ==================================================================== event index ops */

#include "ct_events_napi.inc"

/* ==================================================================== IPVS ops
 * (owned by the IPVS helper) Write ipvs_* parse/execute/result/release functions here.
 * execute gets the handle: use &h->genl (a NETLINK_GENERIC socket opened in the handle's
 * namespace) and h->ipvs_family (0 until resolved; cache it there). */

#include "ipvs.h"

/* Raw JS shapes (native/lib/ipvs-convert.ts builds and reads them; names are checked there):
 *   service key  { family: 4|6, fwmark?: u32, protocol?: u8 (IPPROTO_*), address?: string, port?: u16 }
 *   destination  { address, port, family?: 4|6, fwd?: 0..4, weight?, uThresh?, lThresh?,
 *                  tunType?: 0..2, tunPort?: u16, tunFlags?: u16 }
 *   service spec { service: key, scheduler: string, flags?, timeout?, netmask? }
 * Results: services [{ family, fwmark, protocol, address, port, scheduler, flags, timeout,
 * netmask }], destinations [{ address, port, family, fwd, weight, uThresh, lThresh, tunType,
 * tunPort, tunFlags, active, inactive, persistent }]. */
struct ipvs_op {
	struct ipvs_service svc;      /* key for every op; the full spec for add_service */
	struct ipvs_dest dest;
	uint32_t weight;
	struct ipvs_service_list services;
	struct ipvs_dest_list dests;
};

static int ipvs_arg_addr(napi_env env, napi_value obj, int family, uint8_t out[16], const char *what, struct op_error *err)
{
	char text[64];
	napi_value v = arg_prop(env, obj, "address");

	if (!v) {
		set_error(err, EINVAL, NULL, "%s address is required", what);
		return -EINVAL;
	}
	if (arg_string_value(env, v, text, sizeof(text), what, err) < 0)
		return -EINVAL;
	if (inet_pton(family == 6 ? AF_INET6 : AF_INET, text, out) != 1) {
		set_error(err, EINVAL, NULL, "%s address '%s' is not an IPv%d address", what, text, family);
		return -EINVAL;
	}
	return 0;
}

static int ipvs_arg_family(napi_env env, napi_value obj, int64_t def, int64_t *out, const char *what, struct op_error *err)
{
	if (arg_int(env, obj, "family", 0, 6, def, out, err) < 0)
		return -EINVAL;
	if (*out != 4 && *out != 6) {
		set_error(err, EINVAL, NULL, "%s family must be 4 or 6", what);
		return -EINVAL;
	}
	return 0;
}

static int ipvs_parse_key(napi_env env, napi_value obj, struct ipvs_service_key *key, struct op_error *err)
{
	int64_t family, fwmark, protocol, port;

	if (arg_type(env, obj) != napi_object) {
		set_error(err, EINVAL, NULL, "service must be an object");
		return -EINVAL;
	}
	if (ipvs_arg_family(env, obj, 0, &family, "service", err) < 0 ||
	    arg_int(env, obj, "fwmark", 1, UINT32_MAX, 0, &fwmark, err) < 0)
		return -EINVAL;
	key->af = family == 6 ? AF_INET6 : AF_INET;
	key->fwmark = (uint32_t)fwmark;
	if (key->fwmark)
		return 0;
	if (arg_int(env, obj, "protocol", 0, 255, -1, &protocol, err) < 0 ||
	    arg_int(env, obj, "port", 0, 65535, -1, &port, err) < 0)
		return -EINVAL;
	if (protocol < 0 || port < 0) {
		set_error(err, EINVAL, NULL, "service needs fwmark, or protocol, address and port");
		return -EINVAL;
	}
	key->protocol = (uint16_t)protocol;
	key->port = (uint16_t)port;
	return ipvs_arg_addr(env, obj, (int)family, key->addr, "service", err);
}

static int ipvs_parse_dest(napi_env env, napi_value obj, int full, struct ipvs_dest *d, struct op_error *err)
{
	int64_t family, port, v;

	if (arg_type(env, obj) != napi_object) {
		set_error(err, EINVAL, NULL, "destination must be an object");
		return -EINVAL;
	}
	if (ipvs_arg_family(env, obj, 4, &family, "destination", err) < 0 ||
	    arg_int(env, obj, "port", 0, 65535, -1, &port, err) < 0)
		return -EINVAL;
	if (port < 0) {
		set_error(err, EINVAL, NULL, "destination port is required");
		return -EINVAL;
	}
	d->af = family == 6 ? AF_INET6 : AF_INET;
	d->port = (uint16_t)port;
	if (ipvs_arg_addr(env, obj, (int)family, d->addr, "destination", err) < 0)
		return -EINVAL;
	if (!full)
		return 0;
	if (arg_int(env, obj, "fwd", 0, IP_VS_CONN_F_FWD_MASK, IP_VS_CONN_F_MASQ, &v, err) < 0)
		return -EINVAL;
	d->fwd = (uint32_t)v;
	if (arg_int(env, obj, "weight", 0, INT32_MAX, 1, &v, err) < 0)
		return -EINVAL;
	d->weight = (uint32_t)v;
	if (arg_int(env, obj, "uThresh", 0, UINT32_MAX, 0, &v, err) < 0)
		return -EINVAL;
	d->u_thresh = (uint32_t)v;
	if (arg_int(env, obj, "lThresh", 0, UINT32_MAX, 0, &v, err) < 0)
		return -EINVAL;
	d->l_thresh = (uint32_t)v;
	if (arg_int(env, obj, "tunType", 0, 255, 0, &v, err) < 0)
		return -EINVAL;
	d->tun_type = (uint8_t)v;
	if (arg_int(env, obj, "tunPort", 0, 65535, 0, &v, err) < 0)
		return -EINVAL;
	d->tun_port = (uint16_t)v;
	if (arg_int(env, obj, "tunFlags", 0, 65535, 0, &v, err) < 0)
		return -EINVAL;
	d->tun_flags = (uint16_t)v;
	return 0;
}

static int ipvs_none_parse(napi_env env, napi_value args, void *state, struct op_error *err)
{
	return 0;
}

static int ipvs_key_parse(napi_env env, napi_value args, void *state, struct op_error *err)
{
	struct ipvs_op *s = state;
	return ipvs_parse_key(env, arg_prop(env, args, "service"), &s->svc.key, err);
}

static int ipvs_dest_key_parse(napi_env env, napi_value args, void *state, struct op_error *err)
{
	struct ipvs_op *s = state;
	if (ipvs_key_parse(env, args, state, err) < 0)
		return -EINVAL;
	return ipvs_parse_dest(env, arg_prop(env, args, "destination"), 0, &s->dest, err);
}

static int ipvs_dest_full_parse(napi_env env, napi_value args, void *state, struct op_error *err)
{
	struct ipvs_op *s = state;
	if (ipvs_key_parse(env, args, state, err) < 0)
		return -EINVAL;
	return ipvs_parse_dest(env, arg_prop(env, args, "destination"), 1, &s->dest, err);
}

static int ipvs_weight_parse(napi_env env, napi_value args, void *state, struct op_error *err)
{
	struct ipvs_op *s = state;
	int64_t w;

	if (ipvs_dest_key_parse(env, args, state, err) < 0)
		return -EINVAL;
	if (arg_int(env, args, "weight", 0, INT32_MAX, -1, &w, err) < 0)
		return -EINVAL;
	if (w < 0) {
		set_error(err, EINVAL, NULL, "weight is required");
		return -EINVAL;
	}
	s->weight = (uint32_t)w;
	return 0;
}

static int ipvs_spec_parse(napi_env env, napi_value args, void *state, struct op_error *err)
{
	struct ipvs_op *s = state;
	int64_t v;
	int present = 0;

	if (ipvs_key_parse(env, args, state, err) < 0)
		return -EINVAL;
	if (arg_string(env, args, "scheduler", s->svc.scheduler, sizeof(s->svc.scheduler), &present, err) < 0)
		return -EINVAL;
	if (!present || !s->svc.scheduler[0]) {
		set_error(err, EINVAL, NULL, "scheduler is required");
		return -EINVAL;
	}
	if (arg_int(env, args, "flags", 0, UINT32_MAX, 0, &v, err) < 0)
		return -EINVAL;
	s->svc.flags = (uint32_t)v;
	if (arg_int(env, args, "timeout", 0, UINT32_MAX, 0, &v, err) < 0)
		return -EINVAL;
	s->svc.timeout = (uint32_t)v;
	if (arg_int(env, args, "netmask", 0, UINT32_MAX, s->svc.key.af == AF_INET6 ? 128 : UINT32_MAX, &v, err) < 0)
		return -EINVAL;
	s->svc.netmask = (uint32_t)v;
	return 0;
}

/* Our "no IPVS family" code becomes ENOENT with code EIPVSUNAVAILABLE for the wrapper. */
static int ipvs_done(int rc, struct op_error *err)
{
	if (rc == -IPVS_EUNAVAILABLE) {
		set_error(err, ENOENT, "EIPVSUNAVAILABLE", "IPVS is not available (is the ip_vs module loaded?)");
		return -ENOENT;
	}
	return rc;
}

static int ipvs_list_services_execute(struct handle *h, void *state, struct op_error *err)
{
	struct ipvs_op *s = state;
	return ipvs_done(ipvs_list_services(&h->genl, &s->services), err);
}

static int ipvs_list_destinations_execute(struct handle *h, void *state, struct op_error *err)
{
	struct ipvs_op *s = state;
	return ipvs_done(ipvs_list_dests(&h->genl, &s->svc.key, &s->dests), err);
}

static int ipvs_set_weight_execute(struct handle *h, void *state, struct op_error *err)
{
	struct ipvs_op *s = state;
	return ipvs_done(ipvs_set_dest_weight(&h->genl, &s->svc.key, &s->dest, s->weight), err);
}

static int ipvs_add_destination_execute(struct handle *h, void *state, struct op_error *err)
{
	struct ipvs_op *s = state;
	return ipvs_done(ipvs_add_dest(&h->genl, &s->svc.key, &s->dest), err);
}

static int ipvs_delete_destination_execute(struct handle *h, void *state, struct op_error *err)
{
	struct ipvs_op *s = state;
	return ipvs_done(ipvs_del_dest(&h->genl, &s->svc.key, &s->dest), err);
}

static int ipvs_add_service_execute(struct handle *h, void *state, struct op_error *err)
{
	struct ipvs_op *s = state;
	return ipvs_done(ipvs_add_service(&h->genl, &s->svc), err);
}

static int ipvs_delete_service_execute(struct handle *h, void *state, struct op_error *err)
{
	struct ipvs_op *s = state;
	return ipvs_done(ipvs_del_service(&h->genl, &s->svc.key), err);
}

static void ipvs_put_addr(napi_env env, napi_value obj, uint16_t af, const uint8_t *addr)
{
	char text[INET6_ADDRSTRLEN];
	if (inet_ntop(af, addr, text, sizeof(text)))
		put_str(env, obj, "address", text);
}

static napi_value ipvs_list_services_result(napi_env env, void *state)
{
	struct ipvs_op *s = state;
	napi_value arr = NULL;

	napi_create_array_with_length(env, s->services.count, &arr);
	for (size_t i = 0; arr && i < s->services.count; i++) {
		const struct ipvs_service *x = &s->services.items[i];
		napi_value o = new_object(env);
		put_u32(env, o, "family", x->key.af == AF_INET6 ? 6 : 4);
		put_u32(env, o, "fwmark", x->key.fwmark);
		if (!x->key.fwmark) {
			put_u32(env, o, "protocol", x->key.protocol);
			ipvs_put_addr(env, o, x->key.af, x->key.addr);
			put_u32(env, o, "port", x->key.port);
		}
		put_str(env, o, "scheduler", x->scheduler);
		put_u32(env, o, "flags", x->flags);
		put_u32(env, o, "timeout", x->timeout);
		put_u32(env, o, "netmask", x->netmask);
		napi_set_element(env, arr, (uint32_t)i, o);
	}
	return arr;
}

static napi_value ipvs_list_destinations_result(napi_env env, void *state)
{
	struct ipvs_op *s = state;
	napi_value arr = NULL;

	napi_create_array_with_length(env, s->dests.count, &arr);
	for (size_t i = 0; arr && i < s->dests.count; i++) {
		const struct ipvs_dest *d = &s->dests.items[i];
		napi_value o = new_object(env);
		ipvs_put_addr(env, o, d->af, d->addr);
		put_u32(env, o, "port", d->port);
		put_u32(env, o, "family", d->af == AF_INET6 ? 6 : 4);
		put_u32(env, o, "fwd", d->fwd);
		put_u32(env, o, "weight", d->weight);
		put_u32(env, o, "uThresh", d->u_thresh);
		put_u32(env, o, "lThresh", d->l_thresh);
		put_u32(env, o, "tunType", d->tun_type);
		put_u32(env, o, "tunPort", d->tun_port);
		put_u32(env, o, "tunFlags", d->tun_flags);
		put_u32(env, o, "active", d->active_conns);
		put_u32(env, o, "inactive", d->inactive_conns);
		put_u32(env, o, "persistent", d->persistent_conns);
		napi_set_element(env, arr, (uint32_t)i, o);
	}
	return arr;
}

static napi_value ipvs_no_result(napi_env env, void *state)
{
	return NULL;
}

static void ipvs_op_release(void *state)
{
	struct ipvs_op *s = state;
	ipvs_service_list_free(&s->services);
	ipvs_dest_list_free(&s->dests);
}

#define IPVS_OP(js_name, parse, execute, result)                                               \
	{ js_name, sizeof(struct ipvs_op), parse, execute, result, ipvs_op_release }

/* ==================================================================== the op table */

#define OP(prefix, js_name, state_type)                                                        \
	{ js_name, sizeof(state_type), prefix##_parse, prefix##_execute, prefix##_result,      \
	  prefix##_release }

static const struct op_def OPS[] = {
	OP(ct_stats, "ct_stats", struct ct_stats_op),
	OP(ct_list, "ct_list", struct ct_list_op),
	OP(ct_delete, "ct_delete", struct ct_delete_op),
	OP(ct_insert, "ct_insert", struct ct_insert_op), /* test and bench support */
	OP(ct_delete_tuples, "ct_delete_tuples", struct ct_delete_tuples_op),
	EV_OPS
	OP(ct_scan, "ct_scan", struct ct_scan_op),
	/* ---- IPVS ops: add rows here, e.g. OP(ipvs_list_services, "ipvs_list_services", ...) ---- */
	IPVS_OP("ipvs_list_services", ipvs_none_parse, ipvs_list_services_execute, ipvs_list_services_result),
	IPVS_OP("ipvs_list_destinations", ipvs_key_parse, ipvs_list_destinations_execute, ipvs_list_destinations_result),
	IPVS_OP("ipvs_set_weight", ipvs_weight_parse, ipvs_set_weight_execute, ipvs_no_result),
	IPVS_OP("ipvs_add_destination", ipvs_dest_full_parse, ipvs_add_destination_execute, ipvs_no_result),
	IPVS_OP("ipvs_delete_destination", ipvs_dest_key_parse, ipvs_delete_destination_execute, ipvs_no_result),
	IPVS_OP("ipvs_add_service", ipvs_spec_parse, ipvs_add_service_execute, ipvs_no_result),
	IPVS_OP("ipvs_delete_service", ipvs_key_parse, ipvs_delete_service_execute, ipvs_no_result),
};

static const struct op_def *find_op(const char *name)
{
	for (size_t i = 0; i < sizeof(OPS) / sizeof(OPS[0]); i++)
		if (strcmp(OPS[i].name, name) == 0)
			return &OPS[i];
	return NULL;
}

/* ==================================================================== machinery */

static void handle_close_sockets(struct handle *h)
{
	if (!h->open)
		return;
	ct_events_close(h->ev); /* stops its reader thread first */
	h->ev = NULL;
	ct_conn_close(&h->ct);
	nl_close(&h->genl);
	h->open = 0;
}

static void handle_finalize(napi_env env, void *data, void *hint)
{
	struct handle *h = data;
	handle_close_sockets(h);
	free(h);
}

static napi_value make_error(napi_env env, const char *op, const struct op_error *err)
{
	napi_value msg = NULL, error = NULL, v;
	char text[sizeof(err->message) + 64];
	const char *m = err->message[0] ? err->message : strerror(err->errnum);

	snprintf(text, sizeof(text), "%s", m);
	napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &msg);
	napi_create_error(env, NULL, msg, &error);
	if (NAPI_OK(napi_create_int32(env, err->errnum, &v)))
		napi_set_named_property(env, error, "errno", v);
	if (err->code[0] && NAPI_OK(napi_create_string_utf8(env, err->code, NAPI_AUTO_LENGTH, &v)))
		napi_set_named_property(env, error, "code", v);
	if (NAPI_OK(napi_create_string_utf8(env, op, NAPI_AUTO_LENGTH, &v)))
		napi_set_named_property(env, error, "op", v);
	if (NAPI_OK(napi_create_string_utf8(env, strerror(err->errnum), NAPI_AUTO_LENGTH, &v)))
		napi_set_named_property(env, error, "strerror", v);
	return error;
}

static void start_next(napi_env env, struct handle *h);

static void call_free(napi_env env, struct call *c)
{
	if (c->state && c->op)
		c->op->release(c->state);
	free(c->state);
	if (c->work)
		napi_delete_async_work(env, c->work);
	if (c->handle_ref)
		napi_delete_reference(env, c->handle_ref);
	free(c);
}

static void call_reject(napi_env env, struct call *c)
{
	napi_reject_deferred(env, c->deferred, make_error(env, c->op->name, &c->err));
}

static void work_execute(napi_env env, void *data)
{
	struct call *c = data;
	(void)env; /* no N-API on the worker thread */
	if (!c->h->open) {
		c->rc = -EBADF;
		set_error(&c->err, EBADF, NULL, "the handle is closed");
		return;
	}
	c->rc = c->op->execute(c->h, c->state, &c->err);
	if (c->rc < 0 && !c->err.errnum)
		set_error(&c->err, c->rc, NULL, "%s", strerror(-c->rc));
}

static void work_complete(napi_env env, napi_status status, void *data)
{
	struct call *c = data;
	struct handle *h = c->h;

	if (status == napi_cancelled && c->rc == 0) {
		c->rc = -ECANCELED;
		set_error(&c->err, ECANCELED, NULL, "cancelled");
	}
	if (c->rc < 0) {
		call_reject(env, c);
	} else {
		napi_value v = c->op->result(env, c->state);
		if (!v)
			napi_get_undefined(env, &v);
		napi_resolve_deferred(env, c->deferred, v);
	}
	h->busy = 0;
	call_free(env, c);
	start_next(env, h);
}

static void start_next(napi_env env, struct handle *h)
{
	while (!h->busy && h->head) {
		struct call *c = h->head;
		napi_value name;

		h->head = c->next;
		if (!h->head)
			h->tail = NULL;
		if (NAPI_OK(napi_create_string_utf8(env, c->op->name, NAPI_AUTO_LENGTH, &name)) &&
		    NAPI_OK(napi_create_async_work(env, NULL, name, work_execute, work_complete, c, &c->work)) &&
		    NAPI_OK(napi_queue_async_work(env, c->work))) {
			h->busy = 1;
			return;
		}
		set_error(&c->err, EAGAIN, NULL, "could not queue the work");
		call_reject(env, c);
		call_free(env, c);
	}
	if (!h->busy && h->closed)
		handle_close_sockets(h);
}

static napi_value throw_errno(napi_env env, const char *op, int errnum, const char *message)
{
	struct op_error err;
	set_error(&err, errnum, NULL, "%s", message);
	napi_throw(env, make_error(env, op, &err));
	return NULL;
}

static struct handle *get_handle(napi_env env, napi_value v)
{
	void *data = NULL;
	if (arg_type(env, v) != napi_external || !NAPI_OK(napi_get_value_external(env, v, &data)))
		return NULL;
	return data;
}

/* open(options?) -> handle */
struct open_ctx {
	struct handle *h;
	struct ct_conn_options ct;
};

static int open_sockets(void *p)
{
	struct open_ctx *o = p;
	int err = ct_conn_open(&o->h->ct, &o->ct);
	if (err < 0)
		return err;
	err = nl_open(&o->h->genl, NETLINK_GENERIC, 0, 0);
	if (err < 0) {
		ct_conn_close(&o->h->ct);
		return err;
	}
	return 0;
}

static napi_value js_open(napi_env env, napi_callback_info info)
{
	size_t argc = 1;
	napi_value argv[1] = { NULL }, result = NULL;
	struct open_ctx o;
	struct op_error err = { 0 };
	char netns[256];
	int has_netns = 0, rc;
	int64_t x;

	memset(&o, 0, sizeof(o));
	napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
	if (arg_string(env, argv[0], "netns", netns, sizeof(netns), &has_netns, &err) < 0)
		return throw_errno(env, "open", EINVAL, err.message);
	if (has_netns && netns_check_name(netns) < 0)
		return throw_errno(env, "open", EINVAL, "netns must be a plain name (no '/')");
	/* Test support knobs: tiny buffers to exercise MSG_TRUNC and ACK overruns. */
	if (arg_int(env, argv[0], "recvBufferBytes", 64, 1 << 26, 0, &x, &err) < 0)
		return throw_errno(env, "open", EINVAL, err.message);
	o.ct.recv_buffer = (size_t)x;
	if (arg_bool(env, argv[0], "noPeek", &o.ct.no_peek, &err) < 0)
		return throw_errno(env, "open", EINVAL, err.message);
	if (arg_int(env, argv[0], "ackRcvbufBytes", 1, 1 << 28, 0, &x, &err) < 0)
		return throw_errno(env, "open", EINVAL, err.message);
	o.ct.req_rcvbuf = (int)x;
	if (arg_int(env, argv[0], "deleteBatch", 1, 1 << 16, 0, &x, &err) < 0)
		return throw_errno(env, "open", EINVAL, err.message);
	o.ct.delete_batch = (size_t)x;

	o.h = calloc(1, sizeof(*o.h));
	if (!o.h)
		return throw_errno(env, "open", ENOMEM, "out of memory");
	/* Sockets are created on this (the calling) thread, inside the namespace when one is
	 * named; netns_run always switches back, also on error. */
	rc = has_netns ? netns_run(netns, open_sockets, &o) : open_sockets(&o);
	if (rc < 0) {
		char msg[512];
		if (rc == -ENOTRECOVERABLE)
			snprintf(msg, sizeof(msg), "could not return from network namespace '%s'", netns);
		else if (has_netns && (rc == -ENOENT))
			snprintf(msg, sizeof(msg), "network namespace '%s' does not exist (%s/%s)", netns, NETNS_RUN_DIR, netns);
		else
			snprintf(msg, sizeof(msg), "%s%s%s", strerror(-rc), has_netns ? " in network namespace " : "",
				 has_netns ? netns : "");
		free(o.h);
		return throw_errno(env, "open", -rc, msg);
	}
	o.h->open = 1;
	if (!NAPI_OK(napi_create_external(env, o.h, handle_finalize, NULL, &result))) {
		handle_close_sockets(o.h);
		free(o.h);
		return throw_errno(env, "open", ENOMEM, "could not create the handle");
	}
	return result;
}

/* call(handle, op, args) -> Promise */
static napi_value js_call(napi_env env, napi_callback_info info)
{
	size_t argc = 3;
	napi_value argv[3] = { NULL, NULL, NULL }, promise = NULL;
	char name[64];
	struct op_error err = { 0 };
	struct handle *h;
	struct call *c;

	napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
	h = get_handle(env, argv[0]);
	if (!h)
		return throw_errno(env, "call", EINVAL, "first argument must be a handle from open()");
	if (arg_string_value(env, argv[1], name, sizeof(name), "op", &err) < 0)
		return throw_errno(env, "call", EINVAL, err.message);
	c = calloc(1, sizeof(*c));
	if (!c)
		return throw_errno(env, name, ENOMEM, "out of memory");
	c->h = h;
	c->op = find_op(name);
	if (!c->op) {
		free(c);
		return throw_errno(env, name, ENOSYS, "unknown op");
	}
	if (!NAPI_OK(napi_create_promise(env, &c->deferred, &promise))) {
		free(c);
		return throw_errno(env, name, ENOMEM, "could not create a promise");
	}
	c->state = calloc(1, c->op->state_size ? c->op->state_size : 1);
	if (!c->state) {
		set_error(&c->err, ENOMEM, NULL, "out of memory");
	} else if (h->closed) {
		set_error(&c->err, EBADF, NULL, "the handle is closed");
	} else if (c->op->parse(env, argv[2], c->state, &c->err) < 0 || c->err.errnum) {
		if (!c->err.errnum)
			set_error(&c->err, EINVAL, NULL, "invalid arguments");
	} else if (!NAPI_OK(napi_create_reference(env, argv[0], 1, &c->handle_ref))) {
		set_error(&c->err, ENOMEM, NULL, "could not reference the handle");
	} else {
		if (h->tail)
			h->tail->next = c;
		else
			h->head = c;
		h->tail = c;
		start_next(env, h);
		return promise;
	}
	/* parse errors reject the promise, so every failure reaches the caller the same way */
	call_reject(env, c);
	call_free(env, c);
	return promise;
}

/* close(handle): queued calls reject with EBADF; the call in flight finishes first. */
static napi_value js_close(napi_env env, napi_callback_info info)
{
	size_t argc = 1;
	napi_value argv[1] = { NULL };
	struct handle *h;

	napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
	h = get_handle(env, argv[0]);
	if (!h)
		return throw_errno(env, "close", EINVAL, "argument must be a handle from open()");
	h->closed = 1;
	while (h->head) {
		struct call *c = h->head;
		h->head = c->next;
		set_error(&c->err, EBADF, NULL, "the handle was closed");
		call_reject(env, c);
		call_free(env, c);
	}
	h->tail = NULL;
	if (!h->busy)
		handle_close_sockets(h);
	return NULL;
}

static napi_value js_ops(napi_env env, napi_callback_info info)
{
	napi_value arr = NULL, v;
	size_t n = sizeof(OPS) / sizeof(OPS[0]);

	napi_create_array_with_length(env, n, &arr);
	for (size_t i = 0; i < n; i++)
		if (NAPI_OK(napi_create_string_utf8(env, OPS[i].name, NAPI_AUTO_LENGTH, &v)))
			napi_set_element(env, arr, (uint32_t)i, v);
	return arr;
}

static napi_value init(napi_env env, napi_value exports)
{
	napi_property_descriptor props[] = {
		{ "open", NULL, js_open, NULL, NULL, NULL, napi_enumerable, NULL },
		{ "call", NULL, js_call, NULL, NULL, NULL, napi_enumerable, NULL },
		{ "close", NULL, js_close, NULL, NULL, NULL, napi_enumerable, NULL },
		{ "ops", NULL, js_ops, NULL, NULL, NULL, napi_enumerable, NULL },
		{ "evStats", NULL, js_ev_stats, NULL, NULL, NULL, napi_enumerable, NULL },
	};
	napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props);
	return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
