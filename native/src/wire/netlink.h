/*
 * netlink.h: a small raw-netlink layer shared by conntrack (NETLINK_NETFILTER) and IPVS
 * (NETLINK_GENERIC). Plain C, no N-API types. Every function returns 0 or a negative errno;
 * nothing here asserts or aborts on input from the kernel or the caller.
 */
#ifndef NETLINK_NATIVE_NETLINK_H
#define NETLINK_NATIVE_NETLINK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/netlink.h>

/* User receive buffer. The kernel sizes dump skbs after the largest buffer it has seen
 * (netlink_recvmsg caps nlk->max_recvmsg_len at 32 KiB), and a buffer smaller than the skb
 * loses the rest of it (MSG_TRUNC). We peek the real size first and grow, so nothing is lost;
 * start at 64 KiB so the peek almost never has to grow. */
#define NL_DEFAULT_RECV_BUFFER (64 * 1024)

struct nl_sock {
	int fd;              /* -1 when closed */
	int protocol;        /* NETLINK_NETFILTER, NETLINK_GENERIC, ... */
	uint32_t portid;     /* our address, from getsockname */
	uint32_t seq;        /* last sequence number used */
	uint8_t *buf;        /* receive buffer (grows on demand) */
	size_t buf_len;
	/* statistics, for tests: how often the receive buffer had to grow, overruns seen */
	uint32_t grown;
	uint32_t overruns;
	/* test support: skip the size peek, so a too-small buffer shows MSG_TRUNC (-EMSGSIZE) */
	int no_peek;
};

/* Opens a netlink socket in the current network namespace of the calling thread.
 * rcvbuf > 0 sets SO_RCVBUF (SO_RCVBUFFORCE first, as root may exceed rmem_max);
 * recv_buffer is the initial user buffer (0 = NL_DEFAULT_RECV_BUFFER). */
int nl_open(struct nl_sock *s, int protocol, int rcvbuf, size_t recv_buffer);
void nl_close(struct nl_sock *s);
static inline uint32_t nl_next_seq(struct nl_sock *s) { return ++s->seq; }

/* Sends len bytes (one or many netlink messages) in one sendmsg to the kernel. */
int nl_send(struct nl_sock *s, const void *data, size_t len);

/* Receives one datagram (one skb: one or many messages) into s->buf. Peeks the size first and
 * grows the buffer, so a datagram is never truncated; if the kernel still reports MSG_TRUNC
 * the call fails with -EMSGSIZE instead of silently losing messages.
 * flags may contain MSG_DONTWAIT. Returns the length, or -errno (-ENOBUFS: the socket's
 * receive queue overflowed and messages were dropped by the kernel). */
ssize_t nl_recv(struct nl_sock *s, int flags);

/* --- message building: a growable byte buffer --- */
struct nl_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
	int failed;   /* set on allocation failure; later calls are no-ops */
};

void nl_buf_init(struct nl_buf *b);
void nl_buf_free(struct nl_buf *b);
void nl_buf_reset(struct nl_buf *b);
/* Starts a message; returns its offset in the buffer (headers are addressed by offset because
 * the buffer may move when it grows). */
size_t nl_msg_begin(struct nl_buf *b, uint16_t type, uint16_t flags, uint32_t seq);
void nl_msg_end(struct nl_buf *b, size_t msg_off);
void nl_put(struct nl_buf *b, const void *data, size_t len);       /* raw, padded to 4 */
void nl_attr_put(struct nl_buf *b, uint16_t type, const void *data, size_t len);
void nl_attr_put_u8(struct nl_buf *b, uint16_t type, uint8_t v);
void nl_attr_put_u16(struct nl_buf *b, uint16_t type, uint16_t v);   /* host order */
void nl_attr_put_be16(struct nl_buf *b, uint16_t type, uint16_t v);  /* v in host order, sent big-endian */
void nl_attr_put_u32(struct nl_buf *b, uint16_t type, uint32_t v);
void nl_attr_put_be32(struct nl_buf *b, uint16_t type, uint32_t v);
void nl_attr_put_str(struct nl_buf *b, uint16_t type, const char *s);
size_t nl_nest_begin(struct nl_buf *b, uint16_t type);
void nl_nest_end(struct nl_buf *b, size_t nest_off);

/* --- parsing --- */
/* Iterates the attributes in [data, data+len). Bounds-checked: a malformed attribute ends the
 * walk and nl_attr_next returns NULL with *bad set. */
struct nl_attr_iter {
	const uint8_t *pos;
	const uint8_t *end;
	int bad;
};
/* Inline: a dump walks a dozen attributes per entry, a million entries per pass. */
static inline void nl_attr_iter_init(struct nl_attr_iter *it, const void *data, size_t len)
{
	it->pos = data;
	it->end = (const uint8_t *)data + len;
	it->bad = 0;
}

static inline const struct nlattr *nl_attr_next(struct nl_attr_iter *it)
{
	const struct nlattr *a;
	size_t left = (size_t)(it->end - it->pos);

	if (left < NLA_HDRLEN)
		return NULL;
	a = (const struct nlattr *)it->pos;
	if (a->nla_len < NLA_HDRLEN || a->nla_len > left) {
		it->bad = 1;
		return NULL;
	}
	it->pos += (size_t)NLA_ALIGN(a->nla_len) <= left ? (size_t)NLA_ALIGN(a->nla_len) : left;
	return a;
}
static inline uint16_t nl_attr_type(const struct nlattr *a) { return a->nla_type & NLA_TYPE_MASK; }
static inline const void *nl_attr_data(const struct nlattr *a) { return (const uint8_t *)a + NLA_HDRLEN; }
static inline size_t nl_attr_len(const struct nlattr *a) { return a->nla_len - NLA_HDRLEN; }
/* Fills tb[0..max] with the last attribute of each type (others NULL). Returns 0 or -EBADMSG. */
int nl_attr_parse(const void *data, size_t len, const struct nlattr **tb, uint16_t max);
int nl_attr_get_u8(const struct nlattr *a, uint8_t *out);
int nl_attr_get_u16(const struct nlattr *a, uint16_t *out);
int nl_attr_get_be16(const struct nlattr *a, uint16_t *out);
int nl_attr_get_u32(const struct nlattr *a, uint32_t *out);
int nl_attr_get_be32(const struct nlattr *a, uint32_t *out);
int nl_attr_get_be64(const struct nlattr *a, uint64_t *out);
int nl_attr_get_u64(const struct nlattr *a, uint64_t *out);

/* Walks the messages of one received datagram. */
struct nl_msg_iter {
	const uint8_t *pos;
	size_t left;
	int bad;
};
void nl_msg_iter_init(struct nl_msg_iter *it, const void *data, size_t len);
const struct nlmsghdr *nl_msg_next(struct nl_msg_iter *it);

/* For an NLMSG_ERROR message: the error code (0 = ACK, else negative errno) and the sequence
 * of the request it answers. Returns -EBADMSG when the message is too short. */
int nl_msg_error(const struct nlmsghdr *h, int *error);

/* Generic request/response: sends the message in b (one request with NLM_F_ACK or a dump) and
 * calls on_msg for every reply message with our seq until NLMSG_DONE or the ACK. on_msg returns
 * 0 to go on or a negative errno to stop (the rest of the reply is drained). Returns 0 or -errno
 * (the kernel's error for the request included). */
typedef int (*nl_msg_cb)(const struct nlmsghdr *h, void *ctx);
int nl_transact(struct nl_sock *s, const struct nl_buf *b, uint32_t seq, nl_msg_cb on_msg, void *ctx);

#endif
