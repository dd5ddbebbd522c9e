/* ct_records.c: the entry record encoder (layout in ct_records.h). */
#include "napi/ct_records.h"

#include <string.h>

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static void put_tuple(uint8_t *p, const struct ct_tuple *t)
{
	memcpy(p, t->src.bytes, 16);
	memcpy(p + 16, t->dst.bytes, 16);
	put16(p + 32, t->has_ports ? t->src_port : 0);
	put16(p + 34, t->has_ports ? t->dst_port : 0);
	put16(p + 36, t->has_icmp ? t->icmp_id : 0);
	p[38] = t->has_icmp ? t->icmp_type : 0;
	p[39] = t->has_icmp ? t->icmp_code : 0;
}

void ct_record_encode(const struct ct_entry *e, uint8_t *out)
{
	memset(out, 0, CT_RECORD_SIZE);
	out[0] = e->family;
	out[1] = e->orig.proto;
	out[2] = e->has_state;
	out[3] = e->state;
	out[4] = e->has_id;
	out[5] = (uint8_t)((e->orig.has_ports ? 1 : 0) | (e->orig.has_icmp ? 2 : 0) | (e->reply.has_ports ? 4 : 0) |
			   (e->reply.has_icmp ? 8 : 0) | ((e->zone_dir & CT_ZONE_DIR_ORIG) ? 16 : 0) |
			   ((e->zone_dir & CT_ZONE_DIR_REPLY) ? 32 : 0));
	put16(out + 6, e->zone);
	put32(out + 8, e->status);
	put32(out + 12, e->timeout);
	put32(out + 16, e->mark);
	put32(out + 20, e->id);
	put_tuple(out + 24, &e->orig);
	put_tuple(out + 24 + CT_RECORD_TUPLE_SIZE, &e->reply);
}
