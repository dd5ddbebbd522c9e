/* napi_values.c: C results -> JS values (see napi_values.h). */
#include "napi/napi_values.h"

#include <stdio.h>
#include <arpa/inet.h>
#include "napi/addon_op.h"
#include "napi/ct_records.h"
#include "napi/napi_args.h"

void put_value(napi_env env, napi_value obj, const char *name, napi_value v)
{
	if (v)
		napi_set_named_property(env, obj, name, v);
}

void put_u32(napi_env env, napi_value obj, const char *name, uint32_t n)
{
	napi_value v;
	if (NAPI_OK(napi_create_uint32(env, n, &v)))
		put_value(env, obj, name, v);
}

void put_num(napi_env env, napi_value obj, const char *name, double n)
{
	napi_value v;
	if (NAPI_OK(napi_create_double(env, n, &v)))
		put_value(env, obj, name, v);
}

void put_str(napi_env env, napi_value obj, const char *name, const char *s)
{
	napi_value v;
	if (NAPI_OK(napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &v)))
		put_value(env, obj, name, v);
}

napi_value new_object(napi_env env)
{
	napi_value o = NULL;
	napi_create_object(env, &o);
	return o;
}

void put_address(napi_env env, napi_value obj, const char *name, const struct ct_addr *a)
{
	char text[INET6_ADDRSTRLEN];
	if (inet_ntop(a->family == 6 ? AF_INET6 : AF_INET, a->bytes, text, sizeof(text)))
		put_str(env, obj, name, text);
}

void put_bool(napi_env env, napi_value obj, const char *name, int b)
{
	napi_value v;
	if (NAPI_OK(napi_get_boolean(env, b != 0, &v)))
		put_value(env, obj, name, v);
}

static void put_protocol_counts(napi_env env, napi_value by, int proto, const struct ct_delete_counts *c)
{
	char key[8];
	napi_value e;

	if (!c->deleted && !c->already_gone && !c->failed)
		return;
	e = new_object(env);
	put_num(env, e, "deleted", (double)c->deleted);
	put_num(env, e, "alreadyGone", (double)c->already_gone);
	put_num(env, e, "failed", (double)c->failed);
	snprintf(key, sizeof(key), "%d", proto);
	put_value(env, by, key, e);
}

void put_batch_diag(napi_env env, napi_value obj, const struct nl_batch_diag *d)
{
	put_num(env, obj, "sends", (double)d->sends);
	put_num(env, obj, "ackOverruns", (double)d->overruns);
	put_num(env, obj, "resent", (double)d->resent);
}

napi_value delete_result_value(napi_env env, const struct ct_delete_result *r, double ms)
{
	napi_value o = new_object(env), by = new_object(env);

	put_num(env, o, "scanned", (double)r->scanned);
	put_num(env, o, "matched", (double)r->matched);
	put_num(env, o, "deleted", (double)r->deleted);
	put_num(env, o, "alreadyGone", (double)r->already_gone);
	put_num(env, o, "failed", (double)r->failed);
	put_num(env, o, "rechecked", (double)r->rechecked);
	put_num(env, o, "stillPresent", (double)r->still_present);
	for (int p = 0; p < 256; p++)
		put_protocol_counts(env, by, p, &r->by_proto[p]);
	put_value(env, o, "byProtocol", by);
	put_num(env, o, "firstErrno", (double)-r->first_error);
	put_batch_diag(env, o, &r->batch);
	put_num(env, o, "dumpRestarts", (double)r->dump.restarts);
	put_num(env, o, "bufferGrowths", (double)r->dump.buffer_growths);
	put_num(env, o, "unparsed", (double)r->dump.unparsed);
	put_num(env, o, "ms", ms);
	return o;
}

napi_value entry_records_value(napi_env env, const struct ct_entry_list *list)
{
	napi_value buf = NULL;
	void *data = NULL;

	if (!NAPI_OK(napi_create_arraybuffer(env, list->count * CT_RECORD_SIZE, &data, &buf)))
		return NULL;
	for (size_t i = 0; i < list->count; i++)
		ct_record_encode(&list->items[i], (uint8_t *)data + i * CT_RECORD_SIZE);
	return buf;
}

void put_clock(napi_env env, napi_value obj, const struct op_clock *c)
{
	put_num(env, obj, "ms", c->wall);
	put_num(env, obj, "userMs", c->user);
	put_num(env, obj, "sysMs", c->sys);
}
