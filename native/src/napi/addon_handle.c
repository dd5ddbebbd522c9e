/*
 * addon_handle.c: the handle and its FIFO of calls (see addon.c for the JS surface). Calls on
 * one handle are serialized: the next call's async work is queued only when the previous one
 * completed, so two workers never share a socket. open() makes the sockets (inside the named
 * network namespace), close() rejects what is queued and closes them once the call in flight
 * is done (or when the handle is garbage collected).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netlink.h>

#include "napi/addon_handle.h"
#include "wire/netns.h"

struct call {
	struct call *next;
	struct handle *h;
	const struct op_def *op;
	void *state;
	struct op_error err;
	int rc;
	napi_deferred deferred;
	napi_async_work work;
	napi_ref handle_ref;     /* keeps the handle alive while the call is pending */
};

static void handle_close_sockets(struct handle *h)
{
	if (!h->open)
		return;
	ct_events_close(h->ev); /* stops its reader thread first */
	h->ev = NULL;
	ct_conn_close(&h->ct);
	nl_close(&h->genl);
	h->open = 0;
}

static void handle_finalize(napi_env env, void *data, void *hint)
{
	struct handle *h = data;
	handle_close_sockets(h);
	free(h);
}

static napi_value make_error(napi_env env, const char *op, const struct op_error *err)
{
	napi_value msg = NULL, error = NULL, v;
	char text[sizeof(err->message) + 64];
	const char *m = err->message[0] ? err->message : strerror(err->errnum);

	snprintf(text, sizeof(text), "%s", m);
	napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &msg);
	napi_create_error(env, NULL, msg, &error);
	if (NAPI_OK(napi_create_int32(env, err->errnum, &v)))
		napi_set_named_property(env, error, "errno", v);
	if (err->code[0] && NAPI_OK(napi_create_string_utf8(env, err->code, NAPI_AUTO_LENGTH, &v)))
		napi_set_named_property(env, error, "code", v);
	if (NAPI_OK(napi_create_string_utf8(env, op, NAPI_AUTO_LENGTH, &v)))
		napi_set_named_property(env, error, "op", v);
	if (NAPI_OK(napi_create_string_utf8(env, strerror(err->errnum), NAPI_AUTO_LENGTH, &v)))
		napi_set_named_property(env, error, "strerror", v);
	return error;
}

static void start_next(napi_env env, struct handle *h);

static void call_free(napi_env env, struct call *c)
{
	if (c->state && c->op)
		c->op->release(c->state);
	free(c->state);
	if (c->work)
		napi_delete_async_work(env, c->work);
	if (c->handle_ref)
		napi_delete_reference(env, c->handle_ref);
	free(c);
}

static void call_reject(napi_env env, struct call *c)
{
	napi_reject_deferred(env, c->deferred, make_error(env, c->op->name, &c->err));
}

static void work_execute(napi_env env, void *data)
{
	struct call *c = data;
	(void)env; /* no N-API on the worker thread */
	if (!c->h->open) {
		c->rc = -EBADF;
		set_error(&c->err, EBADF, NULL, "the handle is closed");
		return;
	}
	c->rc = c->op->execute(c->h, c->state, &c->err);
	if (c->rc < 0 && !c->err.errnum)
		set_error(&c->err, c->rc, NULL, "%s", strerror(-c->rc));
}

static void work_complete(napi_env env, napi_status status, void *data)
{
	struct call *c = data;
	struct handle *h = c->h;

	if (status == napi_cancelled && c->rc == 0) {
		c->rc = -ECANCELED;
		set_error(&c->err, ECANCELED, NULL, "cancelled");
	}
	if (c->rc < 0) {
		call_reject(env, c);
	} else {
		napi_value v = c->op->result(env, c->state);
		if (!v)
			napi_get_undefined(env, &v);
		napi_resolve_deferred(env, c->deferred, v);
	}
	h->busy = 0;
	call_free(env, c);
	start_next(env, h);
}

static void start_next(napi_env env, struct handle *h)
{
	while (!h->busy && h->head) {
		struct call *c = h->head;
		napi_value name;

		h->head = c->next;
		if (!h->head)
			h->tail = NULL;
		if (NAPI_OK(napi_create_string_utf8(env, c->op->name, NAPI_AUTO_LENGTH, &name)) &&
		    NAPI_OK(napi_create_async_work(env, NULL, name, work_execute, work_complete, c, &c->work)) &&
		    NAPI_OK(napi_queue_async_work(env, c->work))) {
			h->busy = 1;
			return;
		}
		set_error(&c->err, EAGAIN, NULL, "could not queue the work");
		call_reject(env, c);
		call_free(env, c);
	}
	if (!h->busy && h->closed)
		handle_close_sockets(h);
}

static napi_value throw_errno(napi_env env, const char *op, int errnum, const char *message)
{
	struct op_error err;
	set_error(&err, errnum, NULL, "%s", message);
	napi_throw(env, make_error(env, op, &err));
	return NULL;
}

static struct handle *get_handle(napi_env env, napi_value v)
{
	void *data = NULL;
	if (arg_type(env, v) != napi_external || !NAPI_OK(napi_get_value_external(env, v, &data)))
		return NULL;
	return data;
}

/* open(options?) -> handle */
struct open_ctx {
	struct handle *h;
	struct ct_conn_options ct;
};

static int open_sockets(void *p)
{
	struct open_ctx *o = p;
	int err = ct_conn_open(&o->h->ct, &o->ct);
	if (err < 0)
		return err;
	err = nl_open(&o->h->genl, NETLINK_GENERIC, 0, 0);
	if (err < 0) {
		ct_conn_close(&o->h->ct);
		return err;
	}
	return 0;
}

napi_value js_open(napi_env env, napi_callback_info info)
{
	size_t argc = 1;
	napi_value argv[1] = { NULL }, result = NULL;
	struct open_ctx o;
	struct op_error err = { 0 };
	char netns[256];
	int has_netns = 0, rc;
	int64_t x;

	memset(&o, 0, sizeof(o));
	napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
	if (arg_string(env, argv[0], "netns", netns, sizeof(netns), &has_netns, &err) < 0)
		return throw_errno(env, "open", EINVAL, err.message);
	if (has_netns && netns_check_name(netns) < 0)
		return throw_errno(env, "open", EINVAL, "netns must be a plain name (no '/')");
	/* Test support knobs: tiny buffers to exercise MSG_TRUNC and ACK overruns. */
	if (arg_int(env, argv[0], "recvBufferBytes", 64, 1 << 26, 0, &x, &err) < 0)
		return throw_errno(env, "open", EINVAL, err.message);
	o.ct.recv_buffer = (size_t)x;
	if (arg_bool(env, argv[0], "noPeek", &o.ct.no_peek, &err) < 0)
		return throw_errno(env, "open", EINVAL, err.message);
	if (arg_int(env, argv[0], "ackRcvbufBytes", 1, 1 << 28, 0, &x, &err) < 0)
		return throw_errno(env, "open", EINVAL, err.message);
	o.ct.req_rcvbuf = (int)x;
	if (arg_int(env, argv[0], "deleteBatch", 1, 1 << 16, 0, &x, &err) < 0)
		return throw_errno(env, "open", EINVAL, err.message);
	o.ct.delete_batch = (size_t)x;

	o.h = calloc(1, sizeof(*o.h));
	if (!o.h)
		return throw_errno(env, "open", ENOMEM, "out of memory");
	/* Sockets are created on this (the calling) thread, inside the namespace when one is
	 * named; netns_run always switches back, also on error. */
	rc = has_netns ? netns_run(netns, open_sockets, &o) : open_sockets(&o);
	if (rc < 0) {
		char msg[768];
		if (rc == -ENOTRECOVERABLE)
			snprintf(msg, sizeof(msg), "could not return from network namespace '%s'", netns);
		else if (has_netns && (rc == -ENOENT))
			snprintf(msg, sizeof(msg), "network namespace '%s' does not exist (%s/%s)", netns, NETNS_RUN_DIR, netns);
		else
			snprintf(msg, sizeof(msg), "%s%s%s", strerror(-rc), has_netns ? " in network namespace " : "",
				 has_netns ? netns : "");
		free(o.h);
		return throw_errno(env, "open", -rc, msg);
	}
	o.h->open = 1;
	if (!NAPI_OK(napi_create_external(env, o.h, handle_finalize, NULL, &result))) {
		handle_close_sockets(o.h);
		free(o.h);
		return throw_errno(env, "open", ENOMEM, "could not create the handle");
	}
	return result;
}

/* call(handle, op, args) -> Promise */
napi_value js_call(napi_env env, napi_callback_info info)
{
	size_t argc = 3;
	napi_value argv[3] = { NULL, NULL, NULL }, promise = NULL;
	char name[64];
	struct op_error err = { 0 };
	struct handle *h;
	struct call *c;

	napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
	h = get_handle(env, argv[0]);
	if (!h)
		return throw_errno(env, "call", EINVAL, "first argument must be a handle from open()");
	if (arg_string_value(env, argv[1], name, sizeof(name), "op", &err) < 0)
		return throw_errno(env, "call", EINVAL, err.message);
	c = calloc(1, sizeof(*c));
	if (!c)
		return throw_errno(env, name, ENOMEM, "out of memory");
	c->h = h;
	c->op = addon_find_op(name);
	if (!c->op) {
		free(c);
		return throw_errno(env, name, ENOSYS, "unknown op");
	}
	if (!NAPI_OK(napi_create_promise(env, &c->deferred, &promise))) {
		free(c);
		return throw_errno(env, name, ENOMEM, "could not create a promise");
	}
	c->state = calloc(1, c->op->state_size ? c->op->state_size : 1);
	if (!c->state) {
		set_error(&c->err, ENOMEM, NULL, "out of memory");
	} else if (h->closed) {
		set_error(&c->err, EBADF, NULL, "the handle is closed");
	} else if (c->op->parse(env, argv[2], c->state, &c->err) < 0 || c->err.errnum) {
		if (!c->err.errnum)
			set_error(&c->err, EINVAL, NULL, "invalid arguments");
	} else if (!NAPI_OK(napi_create_reference(env, argv[0], 1, &c->handle_ref))) {
		set_error(&c->err, ENOMEM, NULL, "could not reference the handle");
	} else {
		if (h->tail)
			h->tail->next = c;
		else
			h->head = c;
		h->tail = c;
		start_next(env, h);
		return promise;
	}
	/* parse errors reject the promise, so every failure reaches the caller the same way */
	call_reject(env, c);
	call_free(env, c);
	return promise;
}

/* close(handle): queued calls reject with EBADF; the call in flight finishes first. */
napi_value js_close(napi_env env, napi_callback_info info)
{
	size_t argc = 1;
	napi_value argv[1] = { NULL };
	struct handle *h;

	napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
	h = get_handle(env, argv[0]);
	if (!h)
		return throw_errno(env, "close", EINVAL, "argument must be a handle from open()");
	h->closed = 1;
	while (h->head) {
		struct call *c = h->head;
		h->head = c->next;
		set_error(&c->err, EBADF, NULL, "the handle was closed");
		call_reject(env, c);
		call_free(env, c);
	}
	h->tail = NULL;
	if (!h->busy)
		handle_close_sockets(h);
	return NULL;
}

napi_value js_ops(napi_env env, napi_callback_info info)
{
	napi_value arr = NULL, v;
	size_t n = addon_op_count();

	napi_create_array_with_length(env, n, &arr);
	for (size_t i = 0; i < n; i++)
		if (NAPI_OK(napi_create_string_utf8(env, addon_op_at(i)->name, NAPI_AUTO_LENGTH, &v)))
			napi_set_element(env, arr, (uint32_t)i, v);
	return arr;
}
