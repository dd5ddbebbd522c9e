/*
 * ct_parse.h: one ctnetlink conntrack message (IPCTNL_MSG_CT_NEW, as a dump sends it) parsed
 * into a flat struct. Bounds-checked; a malformed message is -EBADMSG, never a crash.
 */
#ifndef NETLINK_NATIVE_CT_PARSE_H
#define NETLINK_NATIVE_CT_PARSE_H

#include <stdint.h>
#include <linux/netlink.h>
#include "wire/ct_filter.h"

struct ct_tuple {
	struct ct_addr src;
	struct ct_addr dst;
	uint8_t proto;
	uint8_t has_ports;
	uint8_t has_icmp;
	uint8_t has_zone;       /* CTA_TUPLE_ZONE: a zone that applies to one direction only */
	uint16_t src_port;
	uint16_t dst_port;
	uint16_t icmp_id;
	uint8_t icmp_type;
	uint8_t icmp_code;
	uint16_t zone;
};

struct ct_entry {
	uint8_t family;         /* 4 or 6 */
	uint8_t has_state;
	uint8_t state;          /* TCP/SCTP/DCCP state number from CTA_PROTOINFO */
	uint8_t has_id;
	struct ct_tuple orig;
	struct ct_tuple reply;
	uint32_t status;
	uint32_t timeout;
	uint32_t mark;
	uint32_t id;
	uint16_t zone;          /* CTA_ZONE, else the original tuple's zone, else the reply's, else 0 */
	uint8_t zone_dir;       /* where `zone` applies: CT_ZONE_DIR_ORIG | CT_ZONE_DIR_REPLY (0 for zone 0) */
	/* The raw CTA_TUPLE_ORIG attribute, echoed unchanged in a delete. Points into the receive
	 * buffer: valid only while the message is. NULL in copies kept after the dump. */
	const struct nlattr *orig_attr;
};

/*
 * Conntrack zones (include/net/netfilter/nf_conntrack_zones.h): an entry has ONE zone, an id
 * with a direction mask (NF_CT_ZONE_DIR_ORIG, _REPL, or both: NF_CT_DEFAULT_ZONE_DIR).
 * ctnetlink_dump_zone_id() sends it as CTA_ZONE when it covers both directions and as
 * CTA_TUPLE_ZONE inside the one tuple it covers otherwise. A lookup by the original tuple
 * (delete, get) matches nf_ct_zone_id(ct, ORIGINAL): the id when the zone covers the original
 * direction, else 0 — so a reply-only zone is looked up in zone 0 (ct_entry_orig_zone).
 */
#define CT_ZONE_DIR_ORIG 1
#define CT_ZONE_DIR_REPLY 2

static inline uint16_t ct_entry_orig_zone(const struct ct_entry *e)
{
	return (e->zone_dir & CT_ZONE_DIR_ORIG) ? e->zone : 0;
}

static inline uint16_t ct_entry_reply_zone(const struct ct_entry *e)
{
	return (e->zone_dir & CT_ZONE_DIR_REPLY) ? e->zone : 0;
}

int ct_parse_entry(const struct nlmsghdr *h, struct ct_entry *e);
/* Only the status bits and, of the reply tuple, the source address, protocol and ports (what
 * the stale scan's filter reads): the attributes are walked once, nothing else is parsed.
 * Much cheaper than ct_parse_entry. Returns 0 or -EBADMSG / -EAFNOSUPPORT. */
int ct_parse_status_reply(const struct nlmsghdr *h, uint32_t *status, struct ct_tuple *reply);

/* Does the entry pass the filter (protocol, zone, and any of the selected addresses)? */
int ct_entry_matches(const struct ct_entry *e, const struct ct_filter *f);

#endif
