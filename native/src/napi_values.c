/* napi_values.c: C results -> JS values (see napi_values.h). */
#include "napi_values.h"

#include <stdio.h>
#include <arpa/inet.h>
#include "napi_args.h"

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

void put_protocol_counts(napi_env env, napi_value by, int proto, uint64_t deleted, uint64_t already_gone,
			 uint64_t failed)
{
	char key[8];
	napi_value e;

	if (!deleted && !already_gone && !failed)
		return;
	e = new_object(env);
	put_num(env, e, "deleted", (double)deleted);
	put_num(env, e, "alreadyGone", (double)already_gone);
	put_num(env, e, "failed", (double)failed);
	snprintf(key, sizeof(key), "%d", proto);
	put_value(env, by, key, e);
}

void put_batch_diag(napi_env env, napi_value obj, const struct nl_batch_diag *d)
{
	put_num(env, obj, "sends", (double)d->sends);
	put_num(env, obj, "ackOverruns", (double)d->overruns);
	put_num(env, obj, "resent", (double)d->resent);
}

napi_value tuple_value(napi_env env, const struct ct_tuple *t)
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

napi_value entries_value(napi_env env, const struct ct_entry_list *list)
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
