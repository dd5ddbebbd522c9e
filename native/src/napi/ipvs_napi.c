/*
 * ipvs_napi.c: the IPVS ops of the addon (N-API glue over ipvs.h). execute gets the handle: it
 * uses &h->genl (a NETLINK_GENERIC socket opened in the handle's namespace) and h->ipvs_family
 * (0 until resolved; cached there).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "napi/addon_op.h"
#include "ops/ipvs.h"
#include "napi/napi_values.h"

/* Raw JS shapes (native/lib/ipvs-convert.ts builds and reads them; names are checked there):
 *   service key  { family: 4|6, fwmark?: u32, protocol?: u8 (IPPROTO_*), address?: string, port?: u16 }
 *   destination  { address, port, family?: 4|6, fwd?: 0..4, weight?, uThresh?, lThresh?,
 *                  tunType?: 0..2, tunPort?: u16, tunFlags?: u16 }
 *   service spec { service: key, scheduler: string, flags?, timeout?, netmask? }
 *   weight edits { edits: [{ service: key, destination: key, weight }] } (ipvs_set_weights)
 * Results: services [{ family, fwmark, protocol, address, port, scheduler, flags, timeout,
 * netmask }], destinations [{ address, port, family, fwd, weight, uThresh, lThresh, tunType,
 * tunPort, tunFlags, active, inactive, persistent }]; ipvs_set_weights: [errno per edit, 0 = done]. */
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

/* The rest of a full destination (add_destination). */
static const struct arg_int_field DEST_FIELDS[] = {
	ARG_INT_FIELD(struct ipvs_dest, fwd, "fwd", 0, IP_VS_CONN_F_FWD_MASK, IP_VS_CONN_F_MASQ),
	ARG_INT_FIELD(struct ipvs_dest, weight, "weight", 0, INT32_MAX, 1),
	ARG_INT_FIELD(struct ipvs_dest, u_thresh, "uThresh", 0, UINT32_MAX, 0),
	ARG_INT_FIELD(struct ipvs_dest, l_thresh, "lThresh", 0, UINT32_MAX, 0),
	ARG_INT_FIELD(struct ipvs_dest, tun_type, "tunType", 0, 255, 0),
	ARG_INT_FIELD(struct ipvs_dest, tun_port, "tunPort", 0, 65535, 0),
	ARG_INT_FIELD(struct ipvs_dest, tun_flags, "tunFlags", 0, 65535, 0),
};

static const struct arg_int_field SPEC_FIELDS[] = {
	ARG_INT_FIELD(struct ipvs_service, flags, "flags", 0, UINT32_MAX, 0),
	ARG_INT_FIELD(struct ipvs_service, timeout, "timeout", 0, UINT32_MAX, 0),
};

static int ipvs_parse_dest(napi_env env, napi_value obj, int full, struct ipvs_dest *d, struct op_error *err)
{
	int64_t family, port;

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
	return arg_int_fields(env, obj, DEST_FIELDS, ARG_INT_FIELDS_COUNT(DEST_FIELDS), d, err);
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
	if (arg_int_fields(env, args, SPEC_FIELDS, ARG_INT_FIELDS_COUNT(SPEC_FIELDS), &s->svc, err) < 0)
		return -EINVAL;
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

static void ipvs_op_release(void *state)
{
	struct ipvs_op *s = state;
	ipvs_service_list_free(&s->services);
	ipvs_dest_list_free(&s->dests);
}

/* --- ipvs_set_weights: many read-modify-write weight edits in one worker call (the IPVS hold
 * edits up to thousands of servers when a pod starts draining; one call each would pay a
 * thread-pool round trip and a Promise per server). Each edit is ipvs_set_dest_weight; its
 * errno is reported per edit. IPVS unavailable fails the whole call. */
struct weight_edit {
	struct ipvs_service_key key;
	struct ipvs_dest dest;
	uint32_t weight;
	int errnum;
};

struct ipvs_weights_op {
	struct weight_edit *edits;
	uint32_t count;
};

static int ipvs_weights_parse(napi_env env, napi_value args, void *state, struct op_error *err)
{
	struct ipvs_weights_op *s = state;
	napi_value arr;
	uint32_t n;
	void *edits;
	int rc = arg_array_storage(env, args, "edits", sizeof(*s->edits), &arr, &n, &edits, err);

	s->edits = edits;
	if (rc < 0)
		return rc;
	s->count = n;
	for (uint32_t i = 0; i < n; i++) {
		napi_value v = arg_element(env, arr, i);
		struct weight_edit *e = &s->edits[i];
		int64_t w;

		if (arg_type(env, v) != napi_object) {
			set_error(err, EINVAL, NULL, "edits[%u] must be an object", i);
			return -EINVAL;
		}
		if (ipvs_parse_key(env, arg_prop(env, v, "service"), &e->key, err) < 0 ||
		    ipvs_parse_dest(env, arg_prop(env, v, "destination"), 0, &e->dest, err) < 0 ||
		    arg_int(env, v, "weight", 0, INT32_MAX, -1, &w, err) < 0)
			return -EINVAL;
		if (w < 0) {
			set_error(err, EINVAL, NULL, "edits[%u].weight is required", i);
			return -EINVAL;
		}
		e->weight = (uint32_t)w;
	}
	return 0;
}

static int ipvs_weights_execute(struct handle *h, void *state, struct op_error *err)
{
	struct ipvs_weights_op *s = state;

	for (uint32_t i = 0; i < s->count; i++) {
		struct weight_edit *e = &s->edits[i];
		int rc = ipvs_set_dest_weight(&h->genl, &e->key, &e->dest, e->weight);

		if (rc == -IPVS_EUNAVAILABLE)
			return ipvs_done(rc, err);
		e->errnum = rc < 0 ? -rc : 0;
	}
	return 0;
}

static napi_value ipvs_weights_result(napi_env env, void *state)
{
	struct ipvs_weights_op *s = state;
	napi_value arr = NULL;

	napi_create_array_with_length(env, s->count, &arr);
	for (uint32_t i = 0; arr && i < s->count; i++) {
		napi_value n = NULL;
		napi_create_uint32(env, (uint32_t)s->edits[i].errnum, &n);
		napi_set_element(env, arr, i, n);
	}
	return arr;
}

static void ipvs_weights_release(void *state)
{
	struct ipvs_weights_op *s = state;
	free(s->edits);
	s->edits = NULL;
}

#define IPVS_OP(js_name, parse, execute, result)                                               \
	{ js_name, sizeof(struct ipvs_op), parse, execute, result, ipvs_op_release }

static const struct op_def ROWS[] = {
	IPVS_OP("ipvs_list_services", op_no_args, ipvs_list_services_execute, ipvs_list_services_result),
	IPVS_OP("ipvs_list_destinations", ipvs_key_parse, ipvs_list_destinations_execute, ipvs_list_destinations_result),
	IPVS_OP("ipvs_set_weight", ipvs_weight_parse, ipvs_set_weight_execute, op_no_result),
	OP(ipvs_weights, "ipvs_set_weights", struct ipvs_weights_op),
	IPVS_OP("ipvs_add_destination", ipvs_dest_full_parse, ipvs_add_destination_execute, op_no_result),
	IPVS_OP("ipvs_delete_destination", ipvs_dest_key_parse, ipvs_delete_destination_execute, op_no_result),
	IPVS_OP("ipvs_add_service", ipvs_spec_parse, ipvs_add_service_execute, op_no_result),
	IPVS_OP("ipvs_delete_service", ipvs_key_parse, ipvs_delete_service_execute, op_no_result),
};
const struct op_table ipvs_op_table = OP_TABLE(ROWS);
