/*
 * ct_tuples_napi.c: the addon's ops on conntrack entries named one by one (N-API glue over
 * conntrack.h's ct_insert and ct_tuple_delete.h):
 *   ct_insert         test and bench support: batched IPCTNL_MSG_CT_NEW from specs
 *   ct_delete_tuples  deletes by exact original tuple + zone (+ id), batched
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "napi/addon_op.h"
#include "ops/ct_tuple_delete.h"
#include "napi/napi_values.h"

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

static const struct arg_int_field INSERT_FIELDS[] = {
	ARG_INT_FIELD(struct ct_insert_spec, proto, "protocol", 0, 255, 6),
	ARG_INT_FIELD(struct ct_insert_spec, count, "count", 0, 100000000, 1),
	ARG_INT_FIELD(struct ct_insert_spec, src_count, "srcCount", 1, 1 << 30, 1),
	ARG_INT_FIELD(struct ct_insert_spec, reply_src_count, "replySrcCount", 1, 1 << 30, 1),
	ARG_INT_FIELD(struct ct_insert_spec, src_port, "srcPort", 0, 65535, 1024),
	ARG_INT_FIELD(struct ct_insert_spec, dst_port, "dstPort", 0, 65535, 80),
	ARG_INT_FIELD(struct ct_insert_spec, state, "state", 0, 255, 0),
	ARG_INT_FIELD(struct ct_insert_spec, zone, "zone", 0, 65535, -1),
	ARG_INT_FIELD(struct ct_insert_spec, zone_dir, "zoneDir", 0, 3, 3),
	ARG_INT_FIELD(struct ct_insert_spec, mark, "mark", 0, 0xffffffffLL, 0),
	ARG_INT_FIELD(struct ct_insert_spec, timeout, "timeout", 1, 0x7fffffffLL, 600),
	ARG_INT_FIELD(struct ct_insert_spec, status, "status", 0, 0xffffffffLL, 0),
	ARG_INT_FIELD(struct ct_insert_spec, dnat, "dnat", 0, 1, 0),
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
	if (arg_int_fields(env, v, INSERT_FIELDS, ARG_INT_FIELDS_COUNT(INSERT_FIELDS), s, err) < 0)
		return -EINVAL;
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
	void *specs;
	int rc = arg_array_storage(env, args, "entries", sizeof(*s->specs), &arr, &n, &specs, err);

	s->specs = specs;
	if (rc < 0)
		return rc;
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
	put_batch_diag(env, o, &s->r.batch);
	put_num(env, o, "ms", s->ms);
	return o;
}

static void ct_insert_release(void *state)
{
	struct ct_insert_op *s = state;
	free(s->specs);
}

/* --- ct_delete_tuples: { entries: [{ family, protocolNumber, original: { src, dst, srcPort?,
 * dstPort?, icmpId?, icmpType?, icmpCode? }, zone?, recheckZone?, id? }] }
 *   zone: the ORIGINAL direction's zone id (CTA_ZONE); recheckZone: another zone the ENOENT
 *   re-check GETs as well (an entries file that did not say the zone's direction)
 * -> the delete result (napi_values.h; no dump pass, so scanned, matched and the dump's
 *    counters are 0)   (C side: ct_tuple_delete.c) */
struct ct_delete_tuples_op {
	struct ct_tuple_delete *items;
	size_t n;
	struct ct_delete_result r;
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
	if (arg_int(env, v, "recheckZone", 0, 65535, -1, &x, err) < 0)
		goto bad;
	d->alt_zone = (int32_t)x;
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
	void *items;
	int rc = arg_array_storage(env, args, "entries", sizeof(*s->items), &arr, &n, &items, err);

	s->items = items;
	if (rc < 0)
		return rc;
	if (!arr) {
		set_error(err, EINVAL, NULL, "entries is required");
		return -EINVAL;
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
	return delete_result_value(env, &s->r, s->ms);
}

static void ct_delete_tuples_release(void *state)
{
	struct ct_delete_tuples_op *s = state;
	free(s->items);
}

static const struct op_def ROWS[] = {
	OP(ct_insert, "ct_insert", struct ct_insert_op), /* test and bench support */
	OP(ct_delete_tuples, "ct_delete_tuples", struct ct_delete_tuples_op),
};
const struct op_table ct_tuples_op_table = OP_TABLE(ROWS);
