/* napi_args.c: JS arguments -> C (see napi_args.h). */
#include "napi/napi_args.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void set_error(struct op_error *err, int errnum, const char *code, const char *fmt, ...)
{
	va_list ap;

	err->errnum = errnum < 0 ? -errnum : errnum;
	snprintf(err->code, sizeof(err->code), "%s", code ? code : "");
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
}

int arg_type(napi_env env, napi_value v)
{
	napi_valuetype t = napi_undefined;
	if (!v || !NAPI_OK(napi_typeof(env, v, &t)))
		return napi_undefined;
	return (int)t;
}

/* Property of an object, or NULL when absent/undefined/null. */
napi_value arg_prop(napi_env env, napi_value obj, const char *name)
{
	napi_value v = NULL;
	int t;

	if (arg_type(env, obj) != napi_object)
		return NULL;
	if (!NAPI_OK(napi_get_named_property(env, obj, name, &v)))
		return NULL;
	t = arg_type(env, v);
	return (t == napi_undefined || t == napi_null) ? NULL : v;
}

/* Integer property in [min, max]. Absent: *out = def and 0. Wrong type/range: -EINVAL. */
int arg_int(napi_env env, napi_value obj, const char *name, int64_t min, int64_t max, int64_t def,
		   int64_t *out, struct op_error *err)
{
	napi_value v = arg_prop(env, obj, name);
	double d;

	*out = def;
	if (!v)
		return 0;
	if (arg_type(env, v) != napi_number || !NAPI_OK(napi_get_value_double(env, v, &d)) || d != (double)(int64_t)d ||
	    d < (double)min || d > (double)max) {
		set_error(err, EINVAL, NULL, "%s must be an integer in %lld..%lld", name, (long long)min, (long long)max);
		return -EINVAL;
	}
	*out = (int64_t)d;
	return 0;
}

int arg_bool(napi_env env, napi_value obj, const char *name, int *out, struct op_error *err)
{
	napi_value v = arg_prop(env, obj, name);
	bool b = false;

	*out = 0;
	if (!v)
		return 0;
	if (arg_type(env, v) != napi_boolean || !NAPI_OK(napi_get_value_bool(env, v, &b))) {
		set_error(err, EINVAL, NULL, "%s must be a boolean", name);
		return -EINVAL;
	}
	*out = b;
	return 0;
}

/* String value into buf (NUL-terminated). -EINVAL when not a string or too long. */
int arg_string_value(napi_env env, napi_value v, char *buf, size_t len, const char *what, struct op_error *err)
{
	size_t got = 0;

	if (arg_type(env, v) != napi_string || !NAPI_OK(napi_get_value_string_utf8(env, v, buf, len, &got)) ||
	    got + 1 >= len) {
		set_error(err, EINVAL, NULL, "%s must be a string shorter than %zu bytes", what, len - 1);
		return -EINVAL;
	}
	return 0;
}

/* Optional string property: *present says whether it was given. */
int arg_string(napi_env env, napi_value obj, const char *name, char *buf, size_t len, int *present,
		      struct op_error *err)
{
	napi_value v = arg_prop(env, obj, name);

	buf[0] = '\0';
	*present = v != NULL;
	if (!v)
		return 0;
	return arg_string_value(env, v, buf, len, name, err);
}

/* Array property: its length (0 when absent); -EINVAL when not an array. */
int arg_array(napi_env env, napi_value obj, const char *name, napi_value *arr, uint32_t *len, struct op_error *err)
{
	napi_value v = arg_prop(env, obj, name);
	bool is = false;

	*arr = NULL;
	*len = 0;
	if (!v)
		return 0;
	if (!NAPI_OK(napi_is_array(env, v, &is)) || !is || !NAPI_OK(napi_get_array_length(env, v, len))) {
		set_error(err, EINVAL, NULL, "%s must be an array", name);
		return -EINVAL;
	}
	*arr = v;
	return 0;
}

int arg_array_storage(napi_env env, napi_value obj, const char *name, size_t item_size, napi_value *arr,
		      uint32_t *len, void **items, struct op_error *err)
{
	*items = NULL;
	if (arg_array(env, obj, name, arr, len, err) < 0)
		return -EINVAL;
	*items = calloc(*len ? *len : 1, item_size);
	if (!*items) {
		set_error(err, ENOMEM, NULL, "out of memory for %u %s", *len, name);
		return -ENOMEM;
	}
	return 0;
}

napi_value arg_element(napi_env env, napi_value arr, uint32_t i)
{
	napi_value v = NULL;
	if (!NAPI_OK(napi_get_element(env, arr, i, &v)))
		return NULL;
	return v;
}

int arg_address(napi_env env, napi_value v, struct ct_addr *a, const char *what, struct op_error *err)
{
	char text[64];

	if (arg_string_value(env, v, text, sizeof(text), what, err) < 0)
		return -EINVAL;
	if (ct_addr_parse(text, a) < 0) {
		set_error(err, EINVAL, NULL, "%s: '%s' is not an IPv4 or IPv6 address", what, text);
		return -EINVAL;
	}
	return 0;
}

int arg_address_set(napi_env env, napi_value obj, const char *name, struct ct_addr_set *set, int *present,
		    struct op_error *err)
{
	napi_value arr;
	uint32_t n;
	char what[48];

	*present = 0;
	if (arg_array(env, obj, name, &arr, &n, err) < 0)
		return -EINVAL;
	if (!arr)
		return 0;
	*present = 1;
	if (ct_addr_set_init(set, n) < 0) {
		set_error(err, ENOMEM, NULL, "out of memory for %u addresses", n);
		return -ENOMEM;
	}
	snprintf(what, sizeof(what), "%s[]", name);
	for (uint32_t i = 0; i < n; i++) {
		struct ct_addr a;
		if (arg_address(env, arg_element(env, arr, i), &a, what, err) < 0)
			return -EINVAL;
		if (ct_addr_set_add(set, &a) < 0) {
			set_error(err, ENOMEM, NULL, "address set full");
			return -ENOMEM;
		}
	}
	return 0;
}

int arg_int_fields(napi_env env, napi_value obj, const struct arg_int_field *rows, size_t n, void *base,
		   struct op_error *err)
{
	for (size_t i = 0; i < n; i++) {
		const struct arg_int_field *f = &rows[i];
		char *at = (char *)base + f->offset;
		int64_t x;

		if (arg_int(env, obj, f->name, f->min, f->max, f->def, &x, err) < 0)
			return -EINVAL;
		switch (f->size) {
		case 1: { uint8_t v = (uint8_t)x; memcpy(at, &v, 1); break; }
		case 2: { uint16_t v = (uint16_t)x; memcpy(at, &v, 2); break; }
		case 4: { uint32_t v = (uint32_t)x; memcpy(at, &v, 4); break; }
		default: memcpy(at, &x, 8); break;
		}
	}
	return 0;
}
