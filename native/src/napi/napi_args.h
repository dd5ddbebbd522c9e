/*
 * napi_args.h: JS arguments -> C for the addon's ops (main thread only). Every helper reports a
 * bad argument as -EINVAL with a message in struct op_error, so the op's Promise rejects with it.
 * Absent, undefined and null properties are all "not given".
 */
#ifndef NETLINK_NATIVE_NAPI_ARGS_H
#define NETLINK_NATIVE_NAPI_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <node_api.h>
#include "wire/ct_filter.h"

#define NAPI_OK(expr) ((expr) == napi_ok)

/* An op's failure: errno (negative or positive accepted), optional code (an `E...` name of
 * ours such as EIPVSUNAVAILABLE; the wrapper derives it from errno otherwise) and message. */
struct op_error {
	int errnum;
	char code[32];
	char message[240];
};

void set_error(struct op_error *err, int errnum, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

int arg_type(napi_env env, napi_value v);
/* Property of an object, or NULL when absent/undefined/null. */
napi_value arg_prop(napi_env env, napi_value obj, const char *name);
/* Integer property in [min, max]. Absent: *out = def and 0. Wrong type/range: -EINVAL. */
int arg_int(napi_env env, napi_value obj, const char *name, int64_t min, int64_t max, int64_t def, int64_t *out,
	    struct op_error *err);
int arg_bool(napi_env env, napi_value obj, const char *name, int *out, struct op_error *err);
/* String value into buf (NUL-terminated). -EINVAL when not a string or too long. */
int arg_string_value(napi_env env, napi_value v, char *buf, size_t len, const char *what, struct op_error *err);
/* Optional string property: *present says whether it was given. */
int arg_string(napi_env env, napi_value obj, const char *name, char *buf, size_t len, int *present,
	       struct op_error *err);
/* Array property: its length (0 when absent); -EINVAL when not an array. */
int arg_array(napi_env env, napi_value obj, const char *name, napi_value *arr, uint32_t *len, struct op_error *err);
/* arg_array plus zeroed storage for one item_size record per element (never NULL on success,
 * also for an empty or absent array; the caller frees it). -EINVAL / -ENOMEM with err set. */
int arg_array_storage(napi_env env, napi_value obj, const char *name, size_t item_size, napi_value *arr,
		      uint32_t *len, void **items, struct op_error *err);
napi_value arg_element(napi_env env, napi_value arr, uint32_t i);
int arg_address(napi_env env, napi_value v, struct ct_addr *a, const char *what, struct op_error *err);
/* Array-of-addresses property into a new set (*present = 0 and no set when absent). The caller
 * frees the set, also after an error. */
int arg_address_set(napi_env env, napi_value obj, const char *name, struct ct_addr_set *set, int *present,
		    struct op_error *err);

/* Table-driven integer properties: each row names a JS property, its range and default, and the
 * integer member of a C struct it lands in (1, 2, 4 or 8 bytes, signed or not; a default of -1
 * in an unsigned member is all ones, as a cast would make it). */
struct arg_int_field {
	const char *name;
	int64_t min, max, def;
	size_t offset, size;
};
#define ARG_INT_FIELD(type, member, js_name, lo, hi, dflt)                                          \
	{ js_name, lo, hi, dflt, offsetof(type, member), sizeof(((type *)0)->member) }
#define ARG_INT_FIELDS_COUNT(rows) (sizeof(rows) / sizeof((rows)[0]))
int arg_int_fields(napi_env env, napi_value obj, const struct arg_int_field *rows, size_t n, void *base,
		   struct op_error *err);

#endif
