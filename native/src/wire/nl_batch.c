/* nl_batch.c: batched requests with complete ACK accounting (see nl_batch.h). */
#include "wire/nl_batch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* Without progress for this many rounds in a row (each already at one message per send) the
 * remaining messages are reported as failed with ENOBUFS instead of looping forever. */
#define NL_BATCH_MAX_STALLED_ROUNDS 64
/* One sendmsg stays well under the default socket send buffer (netlink_sendmsg refuses
 * messages longer than sk_sndbuf - 32 with EMSGSIZE). */
#define NL_BATCH_MAX_BYTES (96 * 1024)

void nl_batch_init(struct nl_batch *b)
{
	memset(b, 0, sizeof(*b));
	nl_buf_init(&b->msgs);
	nl_buf_init(&b->scratch);
}

void nl_batch_free(struct nl_batch *b)
{
	nl_buf_free(&b->msgs);
	nl_buf_free(&b->scratch);
	free(b->offs);
	free(b->known);
	free(b->pending);
	memset(b, 0, sizeof(*b));
}

void nl_batch_clear(struct nl_batch *b)
{
	nl_buf_reset(&b->msgs);
	b->count = 0;
}

size_t nl_batch_msg_begin(struct nl_batch *b, uint16_t type, uint16_t flags)
{
	return nl_msg_begin(&b->msgs, type, flags | NLM_F_REQUEST | NLM_F_ACK, 0);
}

int nl_batch_msg_end(struct nl_batch *b, size_t off)
{
	nl_msg_end(&b->msgs, off);
	if (b->msgs.failed)
		return -ENOMEM;
	if (b->count == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		size_t *offs = realloc(b->offs, cap * sizeof(*offs));
		uint8_t *known;
		size_t *pending;
		if (!offs)
			return -ENOMEM;
		b->offs = offs;
		known = realloc(b->known, cap);
		if (!known)
			return -ENOMEM;
		b->known = known;
		pending = realloc(b->pending, cap * sizeof(*pending));
		if (!pending)
			return -ENOMEM;
		b->pending = pending;
		b->cap = cap;
	}
	b->offs[b->count++] = off;
	return 0;
}

static const struct nlmsghdr *msg_at(const struct nl_batch *b, size_t i)
{
	return (const struct nlmsghdr *)(b->msgs.data + b->offs[i]);
}

/* Sends up to *n messages pending[from..] in one sendmsg (fewer when they would exceed
 * NL_BATCH_MAX_BYTES; *n is updated) and reads every ACK queued for them. Sets *overrun when
 * the kernel dropped some. */
static int send_chunk(struct nl_sock *s, struct nl_batch *b, size_t from, size_t *count, int resent,
		      nl_batch_ack_cb cb, void *ctx, int *overrun, struct nl_batch_diag *diag)
{
	uint32_t base = s->seq + 1;
	size_t n = *count;
	int err;

	nl_buf_reset(&b->scratch);
	for (size_t j = 0; j < n; j++) {
		const struct nlmsghdr *h = msg_at(b, b->pending[from + j]);
		size_t off = b->scratch.len;
		if (j > 0 && off + NLMSG_ALIGN(h->nlmsg_len) > NL_BATCH_MAX_BYTES) {
			n = *count = j;
			break;
		}
		nl_put(&b->scratch, h, h->nlmsg_len);
		if (b->scratch.failed)
			return -ENOMEM;
		((struct nlmsghdr *)(b->scratch.data + off))->nlmsg_seq = base + (uint32_t)j;
	}
	s->seq += (uint32_t)n;
	err = nl_send(s, b->scratch.data, b->scratch.len);
	diag->sends++;
	if (err < 0)
		return err;
	for (;;) {
		struct nl_msg_iter it;
		const struct nlmsghdr *h;
		ssize_t got = nl_recv(s, MSG_DONTWAIT);

		if (got == -ENOBUFS) {
			*overrun = 1;
			diag->overruns++;
			continue;
		}
		if (got == -EAGAIN || got == -EWOULDBLOCK)
			return 0; /* everything the kernel queued has been read */
		if (got < 0)
			return (int)got;
		nl_msg_iter_init(&it, s->buf, (size_t)got);
		while ((h = nl_msg_next(&it)) != NULL) {
			uint32_t j = h->nlmsg_seq - base;
			int e = 0;
			if (h->nlmsg_type != NLMSG_ERROR || h->nlmsg_pid != s->portid || j >= n)
				continue; /* not an answer to this chunk (an old request's) */
			if (nl_msg_error(h, &e) < 0)
				continue;
			size_t idx = b->pending[from + j];
			if (b->known[idx])
				continue;
			b->known[idx] = 1;
			cb(idx, e, resent, ctx);
		}
	}
}

int nl_batch_flush(struct nl_sock *s, struct nl_batch *b, size_t chunk, nl_batch_ack_cb cb, void *ctx,
		   struct nl_batch_diag *diag)
{
	size_t npending = b->count;
	int resent = 0;
	int stalled = 0;
	int err = 0;

	if (chunk == 0)
		chunk = 1;
	if (b->msgs.failed)
		return -ENOMEM;
	memset(b->known, 0, b->count);
	for (size_t i = 0; i < b->count; i++)
		b->pending[i] = i;
	while (npending > 0 && !err) {
		int overrun = 0;
		size_t before = npending;
		size_t still = 0;

		for (size_t from = 0; from < npending && !err;) {
			size_t n = npending - from < chunk ? npending - from : chunk;
			err = send_chunk(s, b, from, &n, resent, cb, ctx, &overrun, diag);
			from += n;
		}
		for (size_t i = 0; i < npending; i++)
			if (!b->known[b->pending[i]])
				b->pending[still++] = b->pending[i];
		npending = still;
		if (npending == 0 || err)
			break;
		/* Some ACKs were lost (overrun): resend those, in smaller chunks. */
		diag->resent += npending;
		resent = 1;
		if (chunk > 1)
			chunk /= 2;
		stalled = (npending == before && chunk == 1) ? stalled + 1 : 0;
		if (stalled >= NL_BATCH_MAX_STALLED_ROUNDS)
			err = -ENOBUFS;
	}
	for (size_t i = 0; i < npending; i++)
		if (!b->known[b->pending[i]]) {
			b->known[b->pending[i]] = 1;
			cb(b->pending[i], err ? err : -ENOBUFS, resent, ctx);
		}
	nl_batch_clear(b);
	return err;
}
