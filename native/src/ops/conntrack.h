/*
 * conntrack.h: ctnetlink (NETLINK_NETFILTER, subsystem CTNETLINK) operations in plain C.
 * Every function returns 0 or a negative errno and never asserts on kernel or caller input.
 */
#ifndef NETLINK_NATIVE_CONNTRACK_H
#define NETLINK_NATIVE_CONNTRACK_H

#include <stddef.h>
#include <stdint.h>
#include "wire/netlink.h"
#include "wire/nl_batch.h"
#include "wire/ct_filter.h"
#include "wire/ct_parse.h"

/* Two sockets: one reads the dump, the other carries deletes (and their ACKs) while the dump
 * is paused. Netlink dumps are pulled by recvmsg, so a paused dump loses nothing. */
struct ct_conn {
	struct nl_sock dump;
	struct nl_sock req;
	size_t delete_batch;    /* deletes per sendmsg (default CT_DEFAULT_DELETE_BATCH) */
};

#define CT_DEFAULT_DELETE_BATCH 256
/* SO_RCVBUF of the request socket: room for a whole batch of ACKs. */
#define CT_DEFAULT_REQ_RCVBUF (1 << 20)

struct ct_conn_options {
	size_t recv_buffer;   /* initial user buffer of the dump socket (0 = default) */
	int no_peek;          /* test support: do not peek datagram sizes (shows MSG_TRUNC) */
	int req_rcvbuf;       /* SO_RCVBUF of the request socket (0 = default; tests use tiny) */
	size_t delete_batch;  /* 0 = default */
};

int ct_conn_open(struct ct_conn *c, const struct ct_conn_options *o);
void ct_conn_close(struct ct_conn *c);

struct ct_cpu_stats {
	uint32_t cpu, found, invalid, insert, insert_failed, drop, early_drop, error, search_restart,
		clash_resolve, chain_toolong;
};
struct ct_stats {
	uint32_t count;
	uint32_t max;
	struct ct_cpu_stats *cpus; /* malloc'ed, ncpus entries */
	size_t ncpus;
};
int ct_get_stats(struct ct_conn *c, struct ct_stats *out);
void ct_stats_free(struct ct_stats *s);

struct ct_dump_diag {
	uint64_t restarts;        /* dump restarted after an overrun (ENOBUFS) */
	uint64_t unparsed;        /* messages that were not valid conntrack entries */
	uint32_t buffer_growths;  /* receive buffer grown to fit a datagram */
};

/* Called for every entry of a dump; return 0 to go on, -errno to stop the pass. */
typedef int (*ct_entry_cb)(const struct ct_entry *e, void *ctx);
/* One unfiltered dump pass (both families) calling cb for each entry; restarted (cb sees
 * entries again) when the kernel dropped part of it (ENOBUFS), at most CT_DUMP_MAX_RESTARTS. */
int ct_dump_each(struct ct_conn *c, ct_entry_cb cb, void *ctx, struct ct_dump_diag *diag);
/* One dump pass without restarts: 0, -ENOBUFS when the kernel dropped part of it (the
 * caller may restart), or -errno. */
int ct_dump_pass(struct ct_conn *c, ct_entry_cb cb, void *ctx, struct ct_dump_diag *diag);
/* The same pass handing over each raw IPCTNL_MSG_CT_NEW message (the caller parses what it needs). */
typedef int (*ct_msg_cb)(const struct nlmsghdr *h, void *ctx);
int ct_dump_pass_msgs(struct ct_conn *c, ct_msg_cb cb, void *ctx, struct ct_dump_diag *diag);
/* BENCH SUPPORT: one pass that only receives and counts the entry messages (nothing parsed):
 * the kernel's part of a dump pass, the floor every pass pays. Restarted like ct_list. */
int ct_dump_count(struct ct_conn *c, uint64_t *scanned, struct ct_dump_diag *diag);

struct ct_entry_list {
	struct ct_entry *items;
	size_t count;
	size_t cap;
};
void ct_entry_list_free(struct ct_entry_list *l);
/* The next free slot of l (doubling its storage when full), or NULL when out of memory. The
 * caller fills it and then counts it (l->count++). */
struct ct_entry *ct_entry_list_next_slot(struct ct_entry_list *l);
/* One dump pass; keeps at most limit matching entries (SIZE_MAX = all). */
int ct_list(struct ct_conn *c, const struct ct_filter *f, size_t limit, struct ct_entry_list *out,
	    uint64_t *scanned, struct ct_dump_diag *diag);

struct ct_delete_counts {
	uint64_t deleted, already_gone, failed;
};

/* What a delete reports, by dump pass (ct_delete) or by exact tuple (ct_delete_tuples, which
 * walks no table: scanned, matched and dump stay 0). */
struct ct_delete_result {
	uint64_t scanned, matched, deleted, already_gone, failed;
	uint64_t rechecked, still_present; /* ENOENT answers re-checked by GET; found again (failed) */
	struct ct_delete_counts by_proto[256]; /* the same counts by IP protocol number */
	int first_error;            /* the first errno of a failed delete (negative), 0 if none */
	struct ct_dump_diag dump;
	struct nl_batch_diag batch;
};
/* Counts one delete's answer: 0 deleted; ENOENT already gone, or deleted when it answers a
 * resend after a lost ACK (our first delete took it); anything else failed. */
void ct_delete_count(struct ct_delete_result *r, uint8_t proto, int error, int resent);
/* One dump pass; matching entries are deleted in batches through the request socket. */
int ct_delete(struct ct_conn *c, const struct ct_filter *f, int dry_run, struct ct_delete_result *out);

/*
 * Test and bench support (not part of the public API): creates entries with IPCTNL_MSG_CT_NEW,
 * many per sendmsg. One spec makes `count` entries: entry i uses
 *   orig src   = orig_src + (i % src_count)      (address arithmetic on the low 32 bits)
 *   orig sport = src_port + (i / src_count) % 60000
 *   orig dst   = orig_dst, dport = dst_port
 *   reply src  = reply_src + (i % reply_src_count), reply sport = reply_src_port
 *   reply dst  = orig src, reply dport = orig sport
 * For protocols without ports (IPIP, GRE...) ports are ignored and (src, dst) must vary.
 */
struct ct_insert_spec {
	struct ct_addr orig_src, orig_dst, reply_src;
	uint32_t src_count, reply_src_count, count;
	uint16_t src_port, dst_port, reply_src_port;
	uint8_t proto;
	uint8_t state;        /* TCP/SCTP state number; 0 = none sent */
	int zone;             /* -1 = default zone */
	int zone_dir;         /* CT_ZONE_DIR_* (ct_parse.h): 3 CTA_ZONE, else CTA_TUPLE_ZONE in that tuple */
	uint32_t mark;
	uint32_t timeout;     /* seconds; required by ctnetlink_create_conntrack */
	uint32_t status;      /* IPS_* bits to set (e.g. ASSURED|SEEN_REPLY) */
	uint8_t dnat;         /* set up a real DNAT binding to reply src:port (CTA_NAT_DST): IPS_DST_NAT */
};
struct ct_insert_result {
	uint64_t created, exists, failed;
	int first_error;
	struct nl_batch_diag batch;
};
int ct_insert(struct ct_conn *c, const struct ct_insert_spec *specs, size_t nspecs, struct ct_insert_result *out);

#endif
