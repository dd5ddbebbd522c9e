/* ct_bpf.c: builds the event filter (see ct_bpf.h). */
#include "ops/ct_bpf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#ifndef SKF_AD_NLATTR
#define SKF_AD_NLATTR 12
#endif
#ifndef SKF_AD_NLATTR_NEST
#define SKF_AD_NLATTR_NEST 16
#endif

#define ACCEPT 0xffffffffu
#define REJECT 0u
/* Attributes start after the netlink header and struct nfgenmsg. */
#define ATTRS_OFFSET (NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg)))
/* Compares per local "ret accept" (jump offsets are 8 bits). */
#define V4_PER_CHUNK 200
#define V6_PER_CHUNK 24

struct prog {
	struct sock_filter *insns;
	size_t len, cap;
	int failed;
};

static size_t emit(struct prog *p, uint16_t code, uint8_t jt, uint8_t jf, uint32_t k)
{
	if (p->failed)
		return p->len;
	if (p->len == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;
		struct sock_filter *n = realloc(p->insns, cap * sizeof(*n));
		if (!n) {
			p->failed = 1;
			return p->len;
		}
		p->insns = n;
		p->cap = cap;
	}
	p->insns[p->len] = (struct sock_filter){ .code = code, .jt = jt, .jf = jf, .k = k };
	return p->len++;
}

/* Unconditional jump placeholder; patched by land(). */
static size_t ja(struct prog *p)
{
	return emit(p, BPF_JMP | BPF_JA, 0, 0, 0);
}

static void land(struct prog *p, size_t at)
{
	if (!p->failed)
		p->insns[at].k = (uint32_t)(p->len - at - 1);
}

/* A = offset of attribute `type` inside the nest at offset A (0 when absent). */
static void find_nested(struct prog *p, uint32_t type)
{
	emit(p, BPF_LDX | BPF_IMM, 0, 0, type);
	emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, (uint32_t)(SKF_AD_OFF + SKF_AD_NLATTR_NEST));
}

/* if (A == 0) goto far: returns the JA to patch. */
static size_t if_zero_goto(struct prog *p)
{
	emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
	return ja(p);
}

static uint32_t word(const uint8_t *b, int i)
{
	uint32_t v;
	memcpy(&v, b + 4 * i, 4);
	return ntohl(v);
}

/* X = offset of an address attribute: accept when its value is one of the family's addresses. */
static void compare_v4(struct prog *p, const struct ct_addr *const *a, size_t n)
{
	emit(p, BPF_LD | BPF_W | BPF_IND, 0, 0, NLA_HDRLEN);
	for (size_t start = 0; start < n; start += V4_PER_CHUNK) {
		size_t m = n - start < V4_PER_CHUNK ? n - start : V4_PER_CHUNK;
		for (size_t i = 0; i < m; i++)
			emit(p, BPF_JMP | BPF_JEQ | BPF_K, (uint8_t)(m - i), 0, word(a[start + i]->bytes, 0));
		emit(p, BPF_JMP | BPF_JA, 0, 0, 1);
		emit(p, BPF_RET | BPF_K, 0, 0, ACCEPT);
	}
}

static void compare_v6(struct prog *p, const struct ct_addr *const *a, size_t n)
{
	for (size_t start = 0; start < n; start += V6_PER_CHUNK) {
		size_t m = n - start < V6_PER_CHUNK ? n - start : V6_PER_CHUNK;
		for (size_t i = 0; i < m; i++) {
			const uint8_t *b = a[start + i]->bytes;
			for (int w = 0; w < 4; w++) {
				emit(p, BPF_LD | BPF_W | BPF_IND, 0, 0, NLA_HDRLEN + 4 * w);
				if (w < 3)
					emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, (uint8_t)(6 - 2 * w), word(b, w));
				else
					emit(p, BPF_JMP | BPF_JEQ | BPF_K, (uint8_t)((m - 1 - i) * 8 + 1), 0, word(b, w));
			}
		}
		emit(p, BPF_JMP | BPF_JA, 0, 0, 1);
		emit(p, BPF_RET | BPF_K, 0, 0, ACCEPT);
	}
}

/* One direction: tuple attribute `tuple`, address attributes v4_attr / v6_attr inside it. */
static void direction(struct prog *p, uint32_t tuple, uint32_t v4_attr, uint32_t v6_attr,
		      const struct ct_addr *const *v4, size_t n4, int all4,
		      const struct ct_addr *const *v6, size_t n6, int all6)
{
	size_t out1, out2, out3, try6, out4;

	emit(p, BPF_LD | BPF_IMM, 0, 0, ATTRS_OFFSET);
	emit(p, BPF_LDX | BPF_IMM, 0, 0, tuple);
	emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, (uint32_t)(SKF_AD_OFF + SKF_AD_NLATTR));
	out1 = if_zero_goto(p);
	find_nested(p, CTA_TUPLE_IP);
	out2 = if_zero_goto(p);
	emit(p, BPF_ST, 0, 0, 0); /* M[0] = offset of CTA_TUPLE_IP */
	find_nested(p, v4_attr);
	try6 = if_zero_goto(p);
	if (all4) {
		emit(p, BPF_RET | BPF_K, 0, 0, ACCEPT);
	} else {
		emit(p, BPF_MISC | BPF_TAX, 0, 0, 0);
		compare_v4(p, v4, n4);
	}
	out3 = ja(p);
	land(p, try6);
	emit(p, BPF_LD | BPF_MEM, 0, 0, 0);
	find_nested(p, v6_attr);
	out4 = if_zero_goto(p);
	if (all6) {
		emit(p, BPF_RET | BPF_K, 0, 0, ACCEPT);
	} else {
		emit(p, BPF_MISC | BPF_TAX, 0, 0, 0);
		compare_v6(p, v6, n6);
	}
	land(p, out1);
	land(p, out2);
	land(p, out3);
	land(p, out4);
}

static int build(struct ct_bpf_program *out, const struct ct_addr *const *v4, size_t n4,
		 const struct ct_addr *const *v6, size_t n6, int all4, int all6)
{
	struct prog p = { 0 };

	direction(&p, CTA_TUPLE_ORIG, CTA_IP_V4_DST, CTA_IP_V6_DST, v4, n4, all4, v6, n6, all6);
	direction(&p, CTA_TUPLE_REPLY, CTA_IP_V4_SRC, CTA_IP_V6_SRC, v4, n4, all4, v6, n6, all6);
	emit(&p, BPF_RET | BPF_K, 0, 0, REJECT);
	if (p.failed) {
		free(p.insns);
		return -ENOMEM;
	}
	out->insns = p.insns;
	out->len = p.len;
	out->v4_unfiltered = all4;
	out->v6_unfiltered = all6;
	return 0;
}

int ct_bpf_build(const struct ct_addr_set *set, struct ct_bpf_program *out)
{
	size_t n = set->slots ? set->mask + 1 : 0, n4 = 0, n6 = 0;
	const struct ct_addr **v4 = calloc(set->count + 1, sizeof(*v4));
	const struct ct_addr **v6 = calloc(set->count + 1, sizeof(*v6));
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	if (!v4 || !v6)
		goto done;
	for (size_t i = 0; i < n; i++) {
		if (!set->used[i])
			continue;
		if (set->slots[i].family == 4)
			v4[n4++] = &set->slots[i];
		else
			v6[n6++] = &set->slots[i];
	}
	/* Too long for classic BPF: give up filtering IPv6 first (8 insns an address), then IPv4. */
	for (int mode = 0; mode < 4; mode++) {
		int all6 = mode == 1 || mode == 3, all4 = mode >= 2;
		if (mode == 1 && n6 == 0)
			continue;
		err = build(out, v4, n4, v6, n6, all4, all6);
		if (err < 0 || out->len <= BPF_MAXINSNS)
			break;
		ct_bpf_free(out);
		err = -E2BIG;
	}
done:
	free(v4);
	free(v6);
	return err;
}

void ct_bpf_free(struct ct_bpf_program *p)
{
	free(p->insns);
	memset(p, 0, sizeof(*p));
}
