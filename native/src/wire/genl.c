/*
 * genl.c: generic netlink helpers on top of netlink.c. See genl.h.
 */
#include "wire/genl.h"

#include <errno.h>
#include <string.h>
#include <linux/genetlink.h>

size_t genl_msg_begin(struct nl_buf *b, uint16_t family_id, uint16_t flags, uint32_t seq, uint8_t cmd, uint8_t version)
{
	struct genlmsghdr g = { .cmd = cmd, .version = version, .reserved = 0 };
	size_t off = nl_msg_begin(b, family_id, flags, seq);

	nl_put(b, &g, sizeof(g));
	return off;
}

int genl_msg_attrs(const struct nlmsghdr *h, const void **data, size_t *len)
{
	size_t head = NLMSG_HDRLEN + GENL_HDRLEN;

	if (h->nlmsg_len < head)
		return -EBADMSG;
	*data = (const uint8_t *)h + head;
	*len = h->nlmsg_len - head;
	return 0;
}

struct family_ctx {
	uint16_t id;
	int found;
};

static int on_family(const struct nlmsghdr *h, void *arg)
{
	struct family_ctx *ctx = arg;
	const struct nlattr *tb[CTRL_ATTR_MAX + 1];
	const void *data;
	size_t len;
	int err = genl_msg_attrs(h, &data, &len);

	if (err < 0)
		return err;
	if (nl_attr_parse(data, len, tb, CTRL_ATTR_MAX) < 0)
		return -EBADMSG;
	if (nl_attr_get_u16(tb[CTRL_ATTR_FAMILY_ID], &ctx->id) < 0)
		return -EBADMSG;
	ctx->found = 1;
	return 0;
}

int genl_resolve_family(struct nl_sock *s, const char *name, uint16_t *family_id)
{
	struct nl_buf b;
	struct family_ctx ctx = { 0, 0 };
	uint32_t seq = nl_next_seq(s);
	size_t msg;
	int err;

	if (strlen(name) >= GENL_NAMSIZ)
		return -EINVAL;
	nl_buf_init(&b);
	msg = genl_msg_begin(&b, GENL_ID_CTRL, NLM_F_REQUEST | NLM_F_ACK, seq, CTRL_CMD_GETFAMILY, 1);
	nl_attr_put_str(&b, CTRL_ATTR_FAMILY_NAME, name);
	nl_msg_end(&b, msg);
	err = nl_transact(s, &b, seq, on_family, &ctx);
	nl_buf_free(&b);
	if (err < 0)
		return err;
	if (!ctx.found)
		return -ENOENT;
	*family_id = ctx.id;
	return 0;
}
