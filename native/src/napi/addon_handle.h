/* addon_handle.h: the module's exported functions (addon_handle.c, ct_events_napi.c, reuseport_napi.c). */
#ifndef NETLINK_NATIVE_ADDON_HANDLE_H
#define NETLINK_NATIVE_ADDON_HANDLE_H

#include <node_api.h>
#include "napi/addon_op.h"

/* open(options?) -> handle */
napi_value js_open(napi_env env, napi_callback_info info);
/* call(handle, op, args) -> Promise */
napi_value js_call(napi_env env, napi_callback_info info);
/* close(handle): queued calls reject with EBADF; the call in flight finishes first. */
napi_value js_close(napi_env env, napi_callback_info info);
/* ops() -> every op name */
napi_value js_ops(napi_env env, napi_callback_info info);
/* evStats(handle) -> the event index's counters, synchronously */
napi_value js_ev_stats(napi_env env, napi_callback_info info);
/* listenReusePort(host, port, backlog?) -> a listening TCP descriptor with SO_REUSEPORT, synchronously */
napi_value js_listen_reuse_port(napi_env env, napi_callback_info info);

#endif
