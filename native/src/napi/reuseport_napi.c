/*
 * reuseport_napi.c: listenReusePort(host, port, backlog?) -> fd, synchronously (a socket,
 * setsockopt, bind and listen: no blocking call, so no worker thread). Throws an Error with
 * .errno (positive) and .op = "listenReusePort" on failure. The caller owns the descriptor
 * (agent: `server.listen({ fd })`, Node closes it with the server).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <node_api.h>

#include "napi/addon_handle.h"
#include "napi/napi_args.h"
#include "ops/reuseport.h"

static napi_value throw_listen_error(napi_env env, int errnum, const char *message)
{
	napi_value msg = NULL, error = NULL, v;

	napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &msg);
	napi_create_error(env, NULL, msg, &error);
	if (NAPI_OK(napi_create_int32(env, errnum, &v)))
		napi_set_named_property(env, error, "errno", v);
	if (NAPI_OK(napi_create_string_utf8(env, "listenReusePort", NAPI_AUTO_LENGTH, &v)))
		napi_set_named_property(env, error, "op", v);
	napi_throw(env, error);
	return NULL;
}

napi_value js_listen_reuse_port(napi_env env, napi_callback_info info)
{
	size_t argc = 3;
	napi_value argv[3] = { NULL, NULL, NULL }, result = NULL;
	struct op_error err = { 0 };
	char host[64], text[160];
	int32_t port = -1, backlog = 511;
	int fd;

	napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
	if (arg_string_value(env, argv[0], host, sizeof(host), "host", &err) < 0)
		return throw_listen_error(env, EINVAL, err.message);
	if (arg_type(env, argv[1]) != napi_number || !NAPI_OK(napi_get_value_int32(env, argv[1], &port)) || port < 0 ||
	    port > 65535)
		return throw_listen_error(env, EINVAL, "port must be an integer in [0, 65535]");
	if (argc > 2 && arg_type(env, argv[2]) == napi_number &&
	    (!NAPI_OK(napi_get_value_int32(env, argv[2], &backlog)) || backlog < 1))
		return throw_listen_error(env, EINVAL, "backlog must be a positive integer");
	fd = reuseport_listen(host, port, backlog);
	if (fd == -EINVAL) {
		snprintf(text, sizeof(text), "'%s' is not a numeric IPv4 or IPv6 address", host);
		return throw_listen_error(env, EINVAL, text);
	}
	if (fd < 0) {
		snprintf(text, sizeof(text), "listen on %s port %d with SO_REUSEPORT: %s", host, port, strerror(-fd));
		return throw_listen_error(env, -fd, text);
	}
	if (!NAPI_OK(napi_create_int32(env, fd, &result)))
		return throw_listen_error(env, ENOMEM, "could not return the descriptor");
	return result;
}
