/*
 * addon_op.h: what an op of the addon is (see addon.c for the JS surface). Each op is a row of
 * an op table with four functions:
 *   parse    main thread: JS args -> the op's C state (calloc'ed, state_size bytes)
 *   execute  worker thread (napi_async_work): no N-API calls, only plain C on the handle
 *   result   main thread: C state -> JS value (the Promise resolves with it)
 *   release  frees whatever parse/execute allocated inside the state (the state itself is
 *            freed by the glue); always called, also after errors
 * The tables live beside their glue (ct_napi.c, ct_tuples_napi.c, ct_events_napi.c,
 * ct_scan_napi.c, ipvs_napi.c); addon.c lists the tables, addon_handle.c runs the calls.
 */
#ifndef NETLINK_NATIVE_ADDON_OP_H
#define NETLINK_NATIVE_ADDON_OP_H

#include <stddef.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <node_api.h>
#include "ops/clock_ms.h"
#include "ops/conntrack.h"
#include "ops/ct_events.h"
#include "napi/napi_args.h"
#include "wire/netlink.h"

struct handle;
struct call;

struct op_def {
	const char *name;
	size_t state_size;
	int (*parse)(napi_env env, napi_value args, void *state, struct op_error *err);
	int (*execute)(struct handle *h, void *state, struct op_error *err);
	napi_value (*result)(napi_env env, void *state);
	void (*release)(void *state);
};

struct op_table {
	const struct op_def *ops;
	size_t count;
};
#define OP_TABLE(rows) { rows, sizeof(rows) / sizeof((rows)[0]) }

/* A row whose functions are named <prefix>_parse, _execute, _result and _release. */
#define OP(prefix, js_name, state_type)                                                        \
	{ js_name, sizeof(state_type), prefix##_parse, prefix##_execute, prefix##_result,      \
	  prefix##_release }

struct handle {
	struct ct_conn ct;       /* conntrack: dump + request sockets */
	struct nl_sock genl;     /* NETLINK_GENERIC, for IPVS */
	int ipvs_family;         /* IPVS genl family id; 0 = not resolved yet (IPVS helper) */
	struct ct_events *ev;    /* conntrack event subscription (ev_* ops), NULL until ev_open */
	int open;                /* sockets are open */
	int closed;              /* close() was called */
	int busy;                /* an async work is in flight */
	struct call *head, *tail;
};

extern const struct op_table ct_op_table;        /* ct_napi.c */
extern const struct op_table ct_tuples_op_table; /* ct_tuples_napi.c */
extern const struct op_table ev_op_table;        /* ct_events_napi.c */
extern const struct op_table ct_scan_op_table;   /* ct_scan_napi.c */
extern const struct op_table ipvs_op_table;      /* ipvs_napi.c */

/* The op called `name` in any table, or NULL; the number of ops and the i-th (addon.c). */
const struct op_def *addon_find_op(const char *name);
size_t addon_op_count(void);
const struct op_def *addon_op_at(size_t i);

/* A parse function for ops without arguments. */
int op_no_args(napi_env env, napi_value args, void *state, struct op_error *err);
/* A result function for ops that resolve with undefined. */
napi_value op_no_result(napi_env env, void *state);

/* Wall time and this thread's user and kernel CPU time of an op's execute, in ms: a dump's
 * kernel part (the table walk runs inside our recvmsg) and our own part, told apart. */
struct op_clock {
	double wall, user, sys;
};

static inline double timeval_ms(struct timeval tv)
{
	return (double)tv.tv_sec * 1e3 + (double)tv.tv_usec / 1e3;
}

static inline struct op_clock op_clock_now(void)
{
	struct op_clock c = { now_ms(), 0, 0 };
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru) == 0) {
		c.user = timeval_ms(ru.ru_utime);
		c.sys = timeval_ms(ru.ru_stime);
	}
	return c;
}

static inline struct op_clock op_clock_since(struct op_clock start)
{
	struct op_clock now = op_clock_now();
	return (struct op_clock){ now.wall - start.wall, now.user - start.user, now.sys - start.sys };
}

#endif
