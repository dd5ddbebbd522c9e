/* ct_scan_napi.c: the addon's stale-scan op (N-API glue over ct_scan.h). */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "addon_op.h"
#include "ct_scan.h"
#include "napi_values.h"

/* --- ct_scan: { ownedTargets?: [{ address, protocol?, port? }], statusAny?, limit? }
 * -> { records (as ct_list), scanned, statusSkipped, owned, bufferGrowths, restarts, unparsed, ms, userMs, sysMs }
 * One dump pass that keeps only entries with a statusAny bit whose reply source no owned
 * target covers (C side: ct_scan.c). protocol absent = every protocol, port absent = every port. */
struct ct_scan_op {
	struct ct_target_set owned;
	uint32_t status_any;
	size_t limit;
	struct ct_scan_result r;
	struct op_clock clock;
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
	struct op_clock t0 = op_clock_now();
	int rc = ct_scan(&h->ct, s->status_any, &s->owned, s->limit, &s->r);
	s->clock = op_clock_since(t0);
	return rc;
}

static napi_value ct_scan_result(napi_env env, void *state)
{
	struct ct_scan_op *s = state;
	napi_value o = new_object(env);

	put_value(env, o, "records", entry_records_value(env, &s->r.candidates));
	put_num(env, o, "scanned", (double)s->r.scanned);
	put_num(env, o, "statusSkipped", (double)s->r.status_skipped);
	put_num(env, o, "owned", (double)s->r.owned);
	put_u32(env, o, "bufferGrowths", s->r.diag.buffer_growths);
	put_num(env, o, "restarts", (double)s->r.diag.restarts);
	put_num(env, o, "unparsed", (double)s->r.diag.unparsed);
	put_clock(env, o, &s->clock);
	return o;
}

static void ct_scan_release(void *state)
{
	struct ct_scan_op *s = state;
	ct_target_set_free(&s->owned);
	ct_scan_result_free(&s->r);
}

static const struct op_def ROWS[] = {
	OP(ct_scan, "ct_scan", struct ct_scan_op),
};
const struct op_table ct_scan_op_table = OP_TABLE(ROWS);
