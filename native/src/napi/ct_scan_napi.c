/* ct_scan_napi.c: the addon's stale-scan op (N-API glue over ct_scan.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "napi/addon_op.h"
#include "napi/ct_records.h"
#include "ops/ct_scan.h"
#include "napi/napi_values.h"

/* --- ct_scan: { ownedTargets?: [{ address | ipv4, protocol?, port? }], statusAny?, limit?,
 *               onBatch?: (records, pass) => void, batchSize? }
 * -> { records (as ct_list), scanned, statusSkipped, owned, pass, batches, bufferGrowths, restarts,
 *      unparsed, ms, userMs, sysMs }
 * One dump pass that keeps only entries with a statusAny bit whose reply source no owned
 * target covers (C side: ct_scan.c). protocol absent = every protocol, port absent = every port.
 * `ipv4` (an Int32Array or Uint32Array, a.b.c.d as the number a<<24|b<<16|c<<8|d) stands for
 * many IPv4 addresses with one protocol and port: a cluster's targets with no string or object
 * per address.
 * With onBatch, every batchSize candidates go to JavaScript while the pass goes on (a
 * threadsafe function: the main thread works on them while the kernel dumps the rest); records
 * holds the rest. `batches` is how many onBatch calls the final pass made, `pass` its number:
 * calls of an earlier pass (restarted on overrun) are superseded. Some calls may arrive after
 * the promise settles. */
#define CT_SCAN_DEFAULT_BATCH 1024

struct scan_batch {
	uint8_t *records;
	size_t len;
	uint32_t pass;
};

struct ct_scan_op {
	struct ct_target_set owned;
	uint32_t status_any;
	size_t limit;
	napi_threadsafe_function on_batch; /* NULL without onBatch */
	struct ct_scan_sink sink;
	struct ct_scan_result r;
	struct op_clock clock;
};

/* Main thread: a batch's records to onBatch(records, pass). Never leaves an exception pending. */
static void call_on_batch(napi_env env, napi_value js_cb, void *context, void *data)
{
	struct scan_batch *b = data;
	napi_value args[2], buf, undefined, ignored;
	void *bytes = NULL;

	(void)context;
	if (env && js_cb && NAPI_OK(napi_create_arraybuffer(env, b->len, &bytes, &buf)) &&
	    NAPI_OK(napi_create_uint32(env, b->pass, &args[1])) && NAPI_OK(napi_get_undefined(env, &undefined))) {
		memcpy(bytes, b->records, b->len);
		args[0] = buf;
		if (!NAPI_OK(napi_call_function(env, undefined, js_cb, 2, args, &ignored))) {
			bool pending = false;
			napi_value exception;
			if (NAPI_OK(napi_is_exception_pending(env, &pending)) && pending)
				napi_get_and_clear_last_exception(env, &exception);
		}
	}
	free(b->records);
	free(b);
}

/* Worker thread: copies the candidates into records and queues them for the main thread. */
static int flush_batch(void *ctx, const struct ct_entry_list *candidates, uint32_t pass)
{
	struct ct_scan_op *s = ctx;
	struct scan_batch *b = calloc(1, sizeof(*b));

	if (!b || !(b->records = malloc(candidates->count * CT_RECORD_SIZE))) {
		free(b);
		return -ENOMEM;
	}
	for (size_t i = 0; i < candidates->count; i++)
		ct_record_encode(&candidates->items[i], b->records + i * CT_RECORD_SIZE);
	b->len = candidates->count * CT_RECORD_SIZE;
	b->pass = pass;
	if (napi_call_threadsafe_function(s->on_batch, b, napi_tsfn_nonblocking) != napi_ok) {
		free(b->records);
		free(b);
		return -EPIPE; /* the main thread is going away */
	}
	return 0;
}

static int parse_on_batch(napi_env env, napi_value args, struct ct_scan_op *s, struct op_error *err)
{
	napi_value fn = arg_prop(env, args, "onBatch"), name;
	int64_t batch;

	if (!fn || arg_type(env, fn) == napi_undefined)
		return 0;
	if (arg_type(env, fn) != napi_function) {
		set_error(err, EINVAL, NULL, "onBatch must be a function");
		return -EINVAL;
	}
	if (arg_int(env, args, "batchSize", 1, 1 << 20, CT_SCAN_DEFAULT_BATCH, &batch, err) < 0)
		return -EINVAL;
	if (!NAPI_OK(napi_create_string_utf8(env, "ct_scan batch", NAPI_AUTO_LENGTH, &name)) ||
	    !NAPI_OK(napi_create_threadsafe_function(env, fn, NULL, name, 0, 1, NULL, NULL, NULL, call_on_batch,
						     &s->on_batch))) {
		set_error(err, ENOMEM, NULL, "could not make the onBatch function callable from the scan");
		return -ENOMEM;
	}
	s->sink.batch = (size_t)batch;
	s->sink.flush = flush_batch;
	s->sink.ctx = s;
	return 0;
}

/* The `ipv4` group of an ownedTargets element: 1 with its words, 0 when it has none. */
static int owned_ipv4(napi_env env, napi_value v, const uint32_t **words, size_t *count, struct op_error *err)
{
	napi_value p = arg_prop(env, v, "ipv4"), buffer;
	napi_typedarray_type type;
	void *data = NULL;
	size_t offset;
	bool is = false;

	*words = NULL;
	*count = 0;
	if (!p)
		return 0;
	if (!NAPI_OK(napi_is_typedarray(env, p, &is)) || !is ||
	    !NAPI_OK(napi_get_typedarray_info(env, p, &type, count, &data, &buffer, &offset)) ||
	    (type != napi_int32_array && type != napi_uint32_array)) {
		set_error(err, EINVAL, NULL, "ownedTargets[].ipv4 must be an Int32Array or Uint32Array");
		return -EINVAL;
	}
	*words = data;
	return 1;
}

static int ct_scan_parse(napi_env env, napi_value args, void *state, struct op_error *err)
{
	struct ct_scan_op *s = state;
	napi_value arr;
	uint32_t n;
	size_t total = 0;
	int64_t x;

	if (arg_array(env, args, "ownedTargets", &arr, &n, err) < 0)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		const uint32_t *words;
		size_t count;
		int group = owned_ipv4(env, arg_element(env, arr, i), &words, &count, err);
		if (group < 0)
			return -EINVAL;
		total += group ? count : 1;
	}
	if (ct_target_set_init(&s->owned, total) < 0) {
		set_error(err, ENOMEM, NULL, "out of memory for %zu targets", total);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		napi_value v = arg_element(env, arr, i);
		const uint32_t *words;
		size_t count;
		struct ct_target t;
		int64_t proto, port;
		int group = owned_ipv4(env, v, &words, &count, err);
		memset(&t, 0, sizeof(t));
		if (group < 0 || arg_int(env, v, "protocol", 0, 255, -1, &proto, err) < 0 ||
		    arg_int(env, v, "port", 0, 65535, -1, &port, err) < 0)
			return -EINVAL;
		t.kind = proto < 0 ? CT_TARGET_ADDRESS_ANY : (port < 0 ? CT_TARGET_PROTO_ANY_PORT : CT_TARGET_EXACT);
		t.proto = proto < 0 ? 0 : (uint8_t)proto;
		t.port = port < 0 ? 0 : (uint16_t)port;
		if (!group) {
			napi_value p = arg_prop(env, v, "address");
			if (!p || arg_address(env, p, &t.addr, "ownedTargets[].address", err) < 0) {
				if (!err->errnum)
					set_error(err, EINVAL, NULL, "ownedTargets[] need an address or ipv4");
				return -EINVAL;
			}
			count = 1;
		}
		for (size_t k = 0; k < count; k++) {
			if (group) {
				uint32_t w = words[k];
				t.addr.family = 4;
				t.addr.bytes[0] = (uint8_t)(w >> 24);
				t.addr.bytes[1] = (uint8_t)(w >> 16);
				t.addr.bytes[2] = (uint8_t)(w >> 8);
				t.addr.bytes[3] = (uint8_t)w;
			}
			if (ct_target_set_add(&s->owned, &t) < 0) {
				set_error(err, EINVAL, NULL, "ownedTargets[%u] could not be added", i);
				return -EINVAL;
			}
		}
	}
	if (arg_int(env, args, "statusAny", 0, 0xffffffffLL, 0, &x, err) < 0)
		return -EINVAL;
	s->status_any = (uint32_t)x;
	if (arg_int(env, args, "limit", 0, (int64_t)1 << 40, -1, &x, err) < 0)
		return -EINVAL;
	s->limit = x < 0 ? SIZE_MAX : (size_t)x;
	return parse_on_batch(env, args, s, err);
}

static int ct_scan_execute(struct handle *h, void *state, struct op_error *err)
{
	struct ct_scan_op *s = state;
	struct op_clock t0 = op_clock_now();
	int rc = ct_scan(&h->ct, s->status_any, &s->owned, s->limit, s->on_batch ? &s->sink : NULL, &s->r);
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
	put_u32(env, o, "pass", s->r.pass);
	put_u32(env, o, "batches", s->r.flushes);
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
	if (s->on_batch) /* queued batches are still delivered */
		napi_release_threadsafe_function(s->on_batch, napi_tsfn_release);
}

static const struct op_def ROWS[] = {
	OP(ct_scan, "ct_scan", struct ct_scan_op),
};
const struct op_table ct_scan_op_table = OP_TABLE(ROWS);
