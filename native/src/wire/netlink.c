/*
 * netlink.c: raw netlink sockets, message building and bounds-checked parsing.
 * See netlink.h. No N-API types; every error is a negative errno.
 */
#include "wire/netlink.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif
#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

/* A kernel answer never takes this long; the limit keeps a worker thread from hanging forever
 * if something is badly wrong (reported as ETIMEDOUT). */
#define NL_RECV_TIMEOUT_SEC 60

int nl_open(struct nl_sock *s, int protocol, int rcvbuf, size_t recv_buffer)
{
	struct sockaddr_nl addr;
	socklen_t addr_len = sizeof(addr);
	int one = 1;
	struct timeval tv = { .tv_sec = NL_RECV_TIMEOUT_SEC, .tv_usec = 0 };

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->protocol = protocol;
	s->buf_len = recv_buffer ? recv_buffer : NL_DEFAULT_RECV_BUFFER;
	s->buf = malloc(s->buf_len);
	if (!s->buf)
		return -ENOMEM;
	s->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);
	if (s->fd < 0)
		goto fail;
	memset(&addr, 0, sizeof(addr));
	addr.nl_family = AF_NETLINK;
	if (bind(s->fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		goto fail;
	if (getsockname(s->fd, (struct sockaddr *)&addr, &addr_len) < 0)
		goto fail;
	s->portid = addr.nl_pid;
	/* ACKs without a copy of the request: smaller ACKs, more of them fit the receive queue. */
	(void)setsockopt(s->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	(void)setsockopt(s->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (rcvbuf > 0) {
		if (setsockopt(s->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
			(void)setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	}
	s->seq = (uint32_t)time(NULL);
	return 0;
fail:
	{
		int err = -errno;
		nl_close(s);
		return err;
	}
}

void nl_close(struct nl_sock *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	free(s->buf);
	s->buf = NULL;
	s->buf_len = 0;
}

int nl_send(struct nl_sock *s, const void *data, size_t len)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
	struct msghdr msg = {
		.msg_name = &kernel, .msg_namelen = sizeof(kernel),
		.msg_iov = &iov, .msg_iovlen = 1,
	};
	ssize_t n;

	if (s->fd < 0)
		return -EBADF;
	do {
		n = sendmsg(s->fd, &msg, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n != len)
		return -EMSGSIZE;
	return 0;
}

static ssize_t recv_once(struct nl_sock *s, void *buf, size_t len, int flags, int *msg_flags)
{
	struct sockaddr_nl from;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = {
		.msg_name = &from, .msg_namelen = sizeof(from),
		.msg_iov = &iov, .msg_iovlen = 1,
	};
	ssize_t n;

	do {
		n = recvmsg(s->fd, &msg, flags);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		if (errno == EAGAIN && !(flags & MSG_DONTWAIT))
			return -ETIMEDOUT;
		return -errno;
	}
	*msg_flags = msg.msg_flags;
	if (msg.msg_namelen == sizeof(from) && from.nl_pid != 0)
		return -EPROTO; /* not from the kernel */
	return n;
}

ssize_t nl_recv(struct nl_sock *s, int flags)
{
	int msg_flags = 0;
	ssize_t n;

	if (s->fd < 0)
		return -EBADF;
	if (!s->no_peek) {
		/* MSG_PEEK|MSG_TRUNC returns the datagram's real length without consuming it. */
		uint8_t probe;
		n = recv_once(s, &probe, sizeof(probe), MSG_PEEK | MSG_TRUNC | (flags & MSG_DONTWAIT), &msg_flags);
		if (n < 0) {
			if (n == -ENOBUFS)
				s->overruns++;
			return n;
		}
		if ((size_t)n > s->buf_len) {
			size_t want = ((size_t)n + 4095) & ~(size_t)4095;
			uint8_t *bigger = realloc(s->buf, want);
			if (!bigger)
				return -ENOMEM;
			s->buf = bigger;
			s->buf_len = want;
			s->grown++;
		}
	}
	n = recv_once(s, s->buf, s->buf_len, flags & MSG_DONTWAIT, &msg_flags);
	if (n < 0) {
		if (n == -ENOBUFS)
			s->overruns++;
		return n;
	}
	if (msg_flags & MSG_TRUNC)
		return -EMSGSIZE; /* part of the datagram is lost: never pretend otherwise */
	return n;
}

/* ---------------------------------------------------------------- building */

void nl_buf_init(struct nl_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void nl_buf_free(struct nl_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

void nl_buf_reset(struct nl_buf *b)
{
	b->len = 0;
	b->failed = 0;
}

static uint8_t *buf_reserve(struct nl_buf *b, size_t len)
{
	size_t need = b->len + NLMSG_ALIGN(len);
	uint8_t *p;

	if (b->failed)
		return NULL;
	if (need > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < need)
			cap *= 2;
		p = realloc(b->data, cap);
		if (!p) {
			b->failed = 1;
			return NULL;
		}
		b->data = p;
		b->cap = cap;
	}
	p = b->data + b->len;
	memset(p, 0, NLMSG_ALIGN(len));
	b->len = need;
	return p;
}

size_t nl_msg_begin(struct nl_buf *b, uint16_t type, uint16_t flags, uint32_t seq)
{
	size_t off = b->len;
	struct nlmsghdr *h = (struct nlmsghdr *)buf_reserve(b, NLMSG_HDRLEN);

	if (!h)
		return off;
	h->nlmsg_type = type;
	h->nlmsg_flags = flags;
	h->nlmsg_seq = seq;
	h->nlmsg_pid = 0;
	return off;
}

void nl_msg_end(struct nl_buf *b, size_t msg_off)
{
	if (b->failed)
		return;
	((struct nlmsghdr *)(b->data + msg_off))->nlmsg_len = (uint32_t)(b->len - msg_off);
}

void nl_put(struct nl_buf *b, const void *data, size_t len)
{
	uint8_t *p = buf_reserve(b, len);
	if (p && len)
		memcpy(p, data, len);
}

void nl_attr_put(struct nl_buf *b, uint16_t type, const void *data, size_t len)
{
	uint8_t *p = buf_reserve(b, NLA_HDRLEN + len);
	struct nlattr *a = (struct nlattr *)p;

	if (!p)
		return;
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	if (len)
		memcpy(p + NLA_HDRLEN, data, len);
}

void nl_attr_put_u8(struct nl_buf *b, uint16_t type, uint8_t v) { nl_attr_put(b, type, &v, 1); }
void nl_attr_put_u16(struct nl_buf *b, uint16_t type, uint16_t v) { nl_attr_put(b, type, &v, 2); }
void nl_attr_put_be16(struct nl_buf *b, uint16_t type, uint16_t v) { v = htons(v); nl_attr_put(b, type, &v, 2); }
void nl_attr_put_u32(struct nl_buf *b, uint16_t type, uint32_t v) { nl_attr_put(b, type, &v, 4); }
void nl_attr_put_be32(struct nl_buf *b, uint16_t type, uint32_t v) { v = htonl(v); nl_attr_put(b, type, &v, 4); }
void nl_attr_put_str(struct nl_buf *b, uint16_t type, const char *s) { nl_attr_put(b, type, s, strlen(s) + 1); }

size_t nl_nest_begin(struct nl_buf *b, uint16_t type)
{
	size_t off = b->len;
	nl_attr_put(b, type | NLA_F_NESTED, NULL, 0);
	return off;
}

void nl_nest_end(struct nl_buf *b, size_t nest_off)
{
	if (b->failed)
		return;
	((struct nlattr *)(b->data + nest_off))->nla_len = (uint16_t)(b->len - nest_off);
}

/* ---------------------------------------------------------------- parsing */

int nl_attr_parse(const void *data, size_t len, const struct nlattr **tb, uint16_t max)
{
	struct nl_attr_iter it;
	const struct nlattr *a;

	memset(tb, 0, sizeof(*tb) * ((size_t)max + 1));
	nl_attr_iter_init(&it, data, len);
	while ((a = nl_attr_next(&it)) != NULL) {
		uint16_t t = nl_attr_type(a);
		if (t <= max)
			tb[t] = a;
	}
	return it.bad ? -EBADMSG : 0;
}

#define GETTER(name, type, conv)                                   \
	int name(const struct nlattr *a, type *out)                \
	{                                                          \
		type v;                                            \
		if (!a || nl_attr_len(a) < sizeof(type))           \
			return -EBADMSG;                           \
		memcpy(&v, nl_attr_data(a), sizeof(type));         \
		*out = conv(v);                                    \
		return 0;                                          \
	}
#define SAME(v) (v)
static uint64_t be64_to_host(uint64_t v)
{
	return ((uint64_t)ntohl((uint32_t)v) << 32) | ntohl((uint32_t)(v >> 32));
}
GETTER(nl_attr_get_u8, uint8_t, SAME)
GETTER(nl_attr_get_u16, uint16_t, SAME)
GETTER(nl_attr_get_be16, uint16_t, ntohs)
GETTER(nl_attr_get_u32, uint32_t, SAME)
GETTER(nl_attr_get_be32, uint32_t, ntohl)
GETTER(nl_attr_get_u64, uint64_t, SAME)
GETTER(nl_attr_get_be64, uint64_t, be64_to_host)

void nl_msg_iter_init(struct nl_msg_iter *it, const void *data, size_t len)
{
	it->pos = data;
	it->left = len;
	it->bad = 0;
}

const struct nlmsghdr *nl_msg_next(struct nl_msg_iter *it)
{
	const struct nlmsghdr *h;
	size_t step;

	if (it->left < NLMSG_HDRLEN)
		return NULL;
	h = (const struct nlmsghdr *)it->pos;
	if (h->nlmsg_len < NLMSG_HDRLEN || h->nlmsg_len > it->left) {
		it->bad = 1;
		return NULL;
	}
	step = NLMSG_ALIGN(h->nlmsg_len);
	if (step > it->left)
		step = it->left;
	it->pos += step;
	it->left -= step;
	return h;
}

int nl_msg_error(const struct nlmsghdr *h, int *error)
{
	const struct nlmsgerr *e;

	if (h->nlmsg_len < NLMSG_HDRLEN + sizeof(int))
		return -EBADMSG;
	e = (const struct nlmsgerr *)NLMSG_DATA(h);
	*error = e->error > 0 ? -e->error : e->error;
	return 0;
}

int nl_transact(struct nl_sock *s, const struct nl_buf *b, uint32_t seq, nl_msg_cb on_msg, void *ctx)
{
	const struct nlmsghdr *req;
	int cb_err = 0;
	int err;

	if (b->failed)
		return -ENOMEM;
	if (b->len < NLMSG_HDRLEN)
		return -EINVAL;
	req = (const struct nlmsghdr *)b->data;
	/* Without DUMP or ACK a request may produce no answer at all and we would wait forever. */
	if (!(req->nlmsg_flags & (NLM_F_DUMP | NLM_F_ACK)))
		return -EINVAL;
	err = nl_send(s, b->data, b->len);
	if (err < 0)
		return err;
	for (;;) {
		struct nl_msg_iter it;
		const struct nlmsghdr *h;
		ssize_t n = nl_recv(s, 0);

		if (n < 0)
			return (int)n;
		nl_msg_iter_init(&it, s->buf, (size_t)n);
		while ((h = nl_msg_next(&it)) != NULL) {
			if (h->nlmsg_seq != seq || h->nlmsg_pid != s->portid)
				continue; /* left over from an earlier, aborted request */
			if (h->nlmsg_type == NLMSG_DONE)
				return cb_err;
			if (h->nlmsg_type == NLMSG_ERROR) {
				int e = 0;
				if (nl_msg_error(h, &e) < 0)
					return -EBADMSG;
				return e < 0 ? e : cb_err;
			}
			if (h->nlmsg_type == NLMSG_NOOP || h->nlmsg_type == NLMSG_OVERRUN)
				continue;
			if (!cb_err && on_msg) {
				int r = on_msg(h, ctx);
				if (r < 0)
					cb_err = r; /* keep draining so the socket stays clean */
			}
		}
		if (it.bad)
			return -EBADMSG;
	}
}
