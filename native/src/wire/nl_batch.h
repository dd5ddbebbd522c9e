/*
 * nl_batch.h: many netlink requests sent per sendmsg, each with NLM_F_ACK, and every answer
 * accounted for. Used for conntrack deletes (and the test-support bulk insert).
 *
 * The kernel processes all messages of one sendmsg synchronously in the sender's context
 * (netlink_unicast_kernel -> nfnetlink_rcv -> netlink_rcv_skb, which acks each message and
 * goes on after an error), so when sendmsg returns every ACK is either queued on our socket or
 * was dropped because the receive queue was full (netlink_overrun: the next recvmsg fails
 * with ENOBUFS). Dropped ACKs are never guessed: the messages whose answer is missing are sent
 * again in smaller chunks, and the caller is told it is a resend (for a delete, ENOENT on a
 * resend means our first delete already took it).
 */
#ifndef NETLINK_NATIVE_NL_BATCH_H
#define NETLINK_NATIVE_NL_BATCH_H

#include <stddef.h>
#include <stdint.h>
#include "wire/netlink.h"

struct nl_batch {
	struct nl_buf msgs;   /* the messages, back to back (seq stamped at send time) */
	size_t *offs;         /* offset of each message in msgs */
	size_t count;
	size_t cap;
	struct nl_buf scratch;
	uint8_t *known;       /* per message: answer seen */
	size_t *pending;      /* indices still without an answer */
};

struct nl_batch_diag {
	uint64_t sends;       /* sendmsg calls */
	uint64_t overruns;    /* ENOBUFS seen while reading ACKs */
	uint64_t resent;      /* messages sent again because their ACK was lost */
};

/* Called once per message with its answer (0 or -errno) and whether it was a resend. */
typedef void (*nl_batch_ack_cb)(size_t index, int error, int resent, void *ctx);

void nl_batch_init(struct nl_batch *b);
void nl_batch_free(struct nl_batch *b);
void nl_batch_clear(struct nl_batch *b);
/* Begin/end one message in the batch; returns the message offset (for nl_msg_end). */
size_t nl_batch_msg_begin(struct nl_batch *b, uint16_t type, uint16_t flags);
int nl_batch_msg_end(struct nl_batch *b, size_t off);
/* Sends everything, at most chunk messages per sendmsg, and reports every answer. Returns 0,
 * or -errno when sending itself failed (answers already reported stay reported; the rest are
 * reported with that error). */
int nl_batch_flush(struct nl_sock *s, struct nl_batch *b, size_t chunk, nl_batch_ack_cb cb, void *ctx,
		   struct nl_batch_diag *diag);

#endif
