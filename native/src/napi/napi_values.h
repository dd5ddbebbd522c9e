/*
 * napi_values.h: C results -> JS values for the addon's ops (main thread only). A failed N-API
 * call leaves the property out rather than failing the op.
 */
#ifndef NETLINK_NATIVE_NAPI_VALUES_H
#define NETLINK_NATIVE_NAPI_VALUES_H

#include <stdint.h>
#include <node_api.h>
#include "ops/conntrack.h"

napi_value new_object(napi_env env);
void put_value(napi_env env, napi_value obj, const char *name, napi_value v);
void put_u32(napi_env env, napi_value obj, const char *name, uint32_t n);
void put_num(napi_env env, napi_value obj, const char *name, double n);
void put_str(napi_env env, napi_value obj, const char *name, const char *s);
void put_bool(napi_env env, napi_value obj, const char *name, int b);
void put_address(napi_env env, napi_value obj, const char *name, const struct ct_addr *a);
/* ms, userMs, sysMs of an op_clock (addon_op.h). */
struct op_clock;
void put_clock(napi_env env, napi_value obj, const struct op_clock *c);
/* sends, ackOverruns, resent of a batched request (nl_batch.h). */
void put_batch_diag(napi_env env, napi_value obj, const struct nl_batch_diag *d);

/* The one JS shape of every delete (ct_delete, ct_delete_tuples, ev_delete, ev_verify; read by
 * RawDeleteResult in native/lib/conntrack-convert.ts): { scanned, matched, deleted, alreadyGone,
 * failed, rechecked, stillPresent, byProtocol: { "<protocol number>": { deleted, alreadyGone,
 * failed } } (protocols with an answer only), firstErrno, sends, ackOverruns, resent,
 * dumpRestarts, bufferGrowths, unparsed, ms }. */
napi_value delete_result_value(napi_env env, const struct ct_delete_result *r, double ms);

/* Conntrack entries as one ArrayBuffer of ct_records.h records (native/lib/conntrack-records.ts
 * decodes them); NULL if it could not be allocated. */
napi_value entry_records_value(napi_env env, const struct ct_entry_list *list);

#endif
