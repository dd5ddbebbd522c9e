/*
 * ct_events.h: the conntrack event subscription and its flow index (issue #8).
 *
 * One NETLINK_NETFILTER socket joined to NFNLGRP_CONNTRACK_NEW/UPDATE/DESTROY, with a classic
 * BPF filter (ct_bpf.h) for the watched addresses, read by a thread of its own (poll + a stop
 * eventfd): NEW/UPDATE insert or refresh a flow in the index (ct_index.h), DESTROY removes it.
 * An entry concerns the watched set when its ORIGINAL DESTINATION or REPLY SOURCE is in it.
 *
 * Everything else runs on the caller's thread (the addon's worker) with the handle's ordinary
 * conntrack sockets (struct ct_conn): filtered dump passes (resync, newly watched addresses,
 * verify), exact-tuple GETs (ct_tuple_get.h) and DELETEs (ct_tuple_delete.h). A mutex guards the index, the
 * watched set and the counters; nothing holds it across a syscall but setsockopt.
 *
 * Kernel fact: with net.netfilter.nf_conntrack_events=2 (the default) an entry created while
 * no listener existed gets no event cache, so it NEVER produces update or destroy events.
 * Entries learned from a dump are therefore flagged (CT_FLOW_NOEV) and re-checked by an exact
 * GET whenever their flows are asked for, TCP included, until an event proves otherwise.
 *
 * Staleness: ENOBUFS on the event socket (the kernel dropped events) marks the index stale
 * until a full resync pass completes without a new overrun. While a dump pass runs, DESTROY
 * events leave tombstones so the pass cannot re-add an entry that is already gone, and
 * records an event refreshed during the pass are not overwritten by the pass's older copy.
 */
#ifndef NETLINK_NATIVE_CT_EVENTS_H
#define NETLINK_NATIVE_CT_EVENTS_H

#include <stdint.h>
#include "ops/conntrack.h"
#include "ops/ct_index.h"

struct ct_events;

/* Default SO_RCVBUF of the event socket. */
#define CT_EVENTS_DEFAULT_RCVBUF (8 << 20)

/* Opens the socket (inside /var/run/netns/<netns> when netns is not NULL), attaches a filter
 * that accepts nothing, joins the groups and starts the reader thread. */
int ct_events_open(struct ct_events **out, const char *netns, int rcvbuf, uint32_t max_flows);
/* Stops the thread, closes the socket, frees everything. NULL is fine. */
void ct_events_close(struct ct_events *ev);

/* Replaces the watched set (takes ownership of *next): swaps the BPF filter, drops flows of
 * addresses no longer watched, then one filtered dump pass for the newly added addresses. */
int ct_events_set_watched(struct ct_events *ev, struct ct_conn *c, struct ct_addr_set *next);

/* The flows of addrs; non-TCP flows (and TCP ones whose timeout ran out or that were learned
 * from a dump, see CT_FLOW_NOEV in ct_index.h) refreshed by GET. */
int ct_events_flows(struct ct_events *ev, struct ct_conn *c, const struct ct_addr_set *addrs,
		    struct ct_entry_list *out, int *fresh, uint64_t *refreshed);

/* Deletes the indexed flows of addrs by exact tuple (ct_delete_tuples, counted in out); *fresh
 * says whether the index was trustworthy for them (else the caller runs ct_events_verify). */
int ct_events_delete(struct ct_events *ev, struct ct_conn *c, const struct ct_addr_set *addrs,
		     int *fresh, struct ct_delete_result *out);

/* One dump pass deleting every entry of f's addresses that is still there (what the index missed). */
int ct_events_verify(struct ct_events *ev, struct ct_conn *c, const struct ct_filter *f, struct ct_delete_result *out);

/* One filtered dump pass over every watched address; clears stale when no event was lost meanwhile. */
int ct_events_resync(struct ct_events *ev, struct ct_conn *c);

struct ct_events_stats {
	uint64_t watched, flows, events, filtered_out, overruns, resyncs, deleted_by_index, already_gone,
		verify_passes, verify_deleted, gets, dropped, index_bytes, bytes_per_flow, max_flows, bpf_insns;
	int stale, syncing, bpf;
};
void ct_events_get_stats(struct ct_events *ev, struct ct_events_stats *out);

#endif
