/*
 * ct_records.h: conntrack entries as fixed-size little-endian records, the form the addon
 * hands entries to JavaScript in (one ArrayBuffer per result; native/lib/conntrack-records.ts
 * decodes it). One N-API property set costs about what decoding a whole record costs in
 * JavaScript, so a 10,000-entry result went from ~250,000 N-API calls to one buffer copy.
 *
 * Layout (CT_RECORD_SIZE bytes, offsets in bytes):
 *   0 family (4|6)   1 IP protocol   2 has_state   3 state   4 has_id   5 tuple flags (below)
 *   6 zone (u16)     8 status (u32)  12 timeout (u32)  16 mark (u32)  20 id (u32)
 *   24 original tuple, 64 reply tuple, each CT_RECORD_TUPLE_SIZE bytes:
 *      +0 src (16 bytes, IPv4 in the first 4)  +16 dst  +32 src port (u16)  +34 dst port (u16)
 *      +36 ICMP id (u16)  +38 ICMP type  +39 ICMP code
 * Tuple flags: bit 0 original has ports, bit 1 original has ICMP, bit 2 reply has ports,
 * bit 3 reply has ICMP, bit 4 the zone covers the original direction, bit 5 the reply
 * direction (both: a CTA_ZONE zone; one: a CTA_TUPLE_ZONE zone; none: zone 0).
 */
#ifndef NETLINK_NATIVE_CT_RECORDS_H
#define NETLINK_NATIVE_CT_RECORDS_H

#include <stdint.h>
#include "wire/ct_parse.h"

#define CT_RECORD_SIZE 104
#define CT_RECORD_TUPLE_SIZE 40

void ct_record_encode(const struct ct_entry *e, uint8_t *out);

#endif
