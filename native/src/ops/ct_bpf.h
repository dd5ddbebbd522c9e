/*
 * ct_bpf.h: the classic BPF socket filter of the conntrack event subscription. The kernel runs
 * it on every ctnetlink event before queuing it on our socket; it accepts an event only when
 * the ORIGINAL DESTINATION or the REPLY SOURCE address is in the watched set (IPv4 or IPv6).
 *
 * Technique (as libnetfilter_conntrack's bsf.c does it): the SKF_AD_NLATTR ancillary load finds
 * an attribute by type after offset A (X = type), SKF_AD_NLATTR_NEST inside the nest at A, so
 * the program walks CTA_TUPLE_ORIG|REPLY -> CTA_TUPLE_IP -> CTA_IP_V4_DST|V6_DST|... and then
 * compares the address words (loaded big-endian = host order of the network value).
 *
 * Classic BPF allows BPF_MAXINSNS (4096) instructions: about 1 per IPv4 address and 8 per IPv6
 * address, twice (two directions). A family whose addresses do not fit is accepted whole and
 * checked in C instead (ct_bpf_program.family_unfiltered says which).
 */
#ifndef NETLINK_NATIVE_CT_BPF_H
#define NETLINK_NATIVE_CT_BPF_H

#include <stddef.h>
#include <linux/filter.h>
#include "wire/ct_filter.h"

struct ct_bpf_program {
	struct sock_filter *insns;
	size_t len;
	int v4_unfiltered;   /* every IPv4 event accepted (set too large) */
	int v6_unfiltered;
};

/* Builds the program for the addresses in set (any mix of families). 0 or -ENOMEM. */
int ct_bpf_build(const struct ct_addr_set *set, struct ct_bpf_program *out);
void ct_bpf_free(struct ct_bpf_program *p);

#endif
