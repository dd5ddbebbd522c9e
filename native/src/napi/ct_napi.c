/*
 * ct_napi.c: the conntrack table ops of the addon (N-API glue over conntrack.h, ct_scan.h):
 *   ct_stats   {} -> { count, max, perCpu: [...] }
 *   ct_list    filter + { limit?, parse? } -> { records, scanned, bufferGrowths, restarts, unparsed, ms, userMs, sysMs }
 *   ct_delete  filter + { dryRun? } -> the delete result (napi_values.h)
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "napi/addon_op.h"
#include "napi/napi_values.h"

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
	if (arg_address_set(env, args, "addresses", &f->addrs, &f->has_addresses, err) < 0)
		return -EINVAL;
	if (!f->has_addresses && require_addresses) {
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

/* --- ct_list: filter + { limit?, parse? (0: receive and count only, bench support) } -> { records (ArrayBuffer, ct_records.h), scanned, bufferGrowths, restarts, ms, userMs, sysMs } */
struct ct_list_op {
	struct ct_filter filter;
	size_t limit;
	struct ct_entry_list list;
	uint64_t scanned;
	struct ct_dump_diag diag;
	struct op_clock clock;
	int parse; /* 0: bench support, receive and count only (ct_dump_count) */
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
	if (arg_int(env, args, "parse", 0, 1, 1, &limit, err) < 0)
		return -EINVAL;
	s->parse = (int)limit;
	return 0;
}

static int ct_list_execute(struct handle *h, void *state, struct op_error *err)
{
	struct ct_list_op *s = state;
	struct op_clock t0 = op_clock_now();
	int rc = s->parse ? ct_list(&h->ct, &s->filter, s->limit, &s->list, &s->scanned, &s->diag)
			  : ct_dump_count(&h->ct, &s->scanned, &s->diag);
	s->clock = op_clock_since(t0);
	return rc;
}

static napi_value ct_list_result(napi_env env, void *state)
{
	struct ct_list_op *s = state;
	napi_value o = new_object(env);

	put_value(env, o, "records", entry_records_value(env, &s->list));
	put_num(env, o, "scanned", (double)s->scanned);
	put_u32(env, o, "bufferGrowths", s->diag.buffer_growths);
	put_num(env, o, "restarts", (double)s->diag.restarts);
	put_num(env, o, "unparsed", (double)s->diag.unparsed);
	put_clock(env, o, &s->clock);
	return o;
}

static void ct_list_release(void *state)
{
	struct ct_list_op *s = state;
	ct_filter_free(&s->filter);
	ct_entry_list_free(&s->list);
}

/* --- ct_delete: filter + { dryRun? } -> the delete result (napi_values.h) */
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
	return delete_result_value(env, &s->r, s->ms);
}

static void ct_delete_release(void *state)
{
	struct ct_delete_op *s = state;
	ct_filter_free(&s->filter);
}

static const struct op_def ROWS[] = {
	{ "ct_stats", sizeof(struct ct_stats_op), op_no_args, ct_stats_execute, ct_stats_result, ct_stats_release },
	OP(ct_list, "ct_list", struct ct_list_op),
	OP(ct_delete, "ct_delete", struct ct_delete_op),
};
const struct op_table ct_op_table = OP_TABLE(ROWS);
