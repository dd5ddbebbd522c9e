/*
 * addon.c: the module: its exports and the list of op tables. N-API lives only in napi/;
 * everything netlink lives in plain C below it (wire/, ops/: see src/README.md) that takes C
 * structs and returns 0 or -errno.
 *
 * JS surface (wrapped by native/lib/index.ts; nobody else calls it):
 *   open({ netns?, recvBufferBytes?, noPeek?, ackRcvbufBytes?, deleteBatch? }) -> handle
 *   call(handle, opName, args) -> Promise<result>       (rejects with an Error carrying
 *                                                         .errno (positive), .code, .op)
 *   close(handle)                                        (later calls reject with EBADF)
 *   ops() -> string[]                                    (the op names below)
 *   listenReusePort(host, port, backlog?) -> fd          (synchronous; a listening TCP socket
 *                                                         with SO_REUSEPORT, for the agent's
 *                                                         zero-gap handover; throws .errno)
 *
 * Files:
 *   addon_op.h        what an op is (parse / execute / result / release), struct handle
 *   addon_handle.c    open/call/close: the handle, its FIFO of calls, the async work
 *   napi_args.c       JS arguments -> C (with a table-driven integer-field parser)
 *   napi_values.c     C results -> JS values
 *   ct_napi.c         ct_stats, ct_list, ct_delete
 *   ct_scan_napi.c    ct_scan (the stale DNAT scan)
 *   ct_tuples_napi.c  ct_insert (test support), ct_delete_tuples
 *   ct_events_napi.c  ev_* ops and evStats (the event index)
 *   ipvs_napi.c       ipvs_* ops
 *   reuseport_napi.c  listenReusePort (plain C in reuseport.c)
 * Adding an op: write its four functions beside its kin, add a row to that file's table (or a
 * new table, listed in TABLES below), and add any new .c file to binding.gyp's sources.
 */
#include <string.h>
#include <node_api.h>

#include "napi/addon_handle.h"
#include "napi/addon_op.h"

static const struct op_table *const TABLES[] = { &ct_op_table, &ct_tuples_op_table, &ev_op_table, &ct_scan_op_table,
						   &ipvs_op_table };
#define NTABLES (sizeof(TABLES) / sizeof(TABLES[0]))

const struct op_def *addon_find_op(const char *name)
{
	for (size_t t = 0; t < NTABLES; t++)
		for (size_t i = 0; i < TABLES[t]->count; i++)
			if (strcmp(TABLES[t]->ops[i].name, name) == 0)
				return &TABLES[t]->ops[i];
	return NULL;
}

size_t addon_op_count(void)
{
	size_t n = 0;
	for (size_t t = 0; t < NTABLES; t++)
		n += TABLES[t]->count;
	return n;
}

const struct op_def *addon_op_at(size_t i)
{
	for (size_t t = 0; t < NTABLES; t++) {
		if (i < TABLES[t]->count)
			return &TABLES[t]->ops[i];
		i -= TABLES[t]->count;
	}
	return NULL;
}

int op_no_args(napi_env env, napi_value args, void *state, struct op_error *err)
{
	return 0;
}

napi_value op_no_result(napi_env env, void *state)
{
	return NULL;
}

static napi_value init(napi_env env, napi_value exports)
{
	napi_property_descriptor props[] = {
		{ "open", NULL, js_open, NULL, NULL, NULL, napi_enumerable, NULL },
		{ "call", NULL, js_call, NULL, NULL, NULL, napi_enumerable, NULL },
		{ "close", NULL, js_close, NULL, NULL, NULL, napi_enumerable, NULL },
		{ "ops", NULL, js_ops, NULL, NULL, NULL, napi_enumerable, NULL },
		{ "evStats", NULL, js_ev_stats, NULL, NULL, NULL, napi_enumerable, NULL },
		{ "listenReusePort", NULL, js_listen_reuse_port, NULL, NULL, NULL, napi_enumerable, NULL },
	};
	napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props);
	return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
